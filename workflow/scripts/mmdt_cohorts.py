"""Snakemake entry: LS-MMDT across breast-cancer cohorts: the pooled source
cohorts to the large cohort with few labelled target samples per class."""

import json

from biokernels.logs import rule_logger
from biokernels.studies.mmdt.protocol import cohort_domains, cohort_transfer_curve, report_convergence
from biokernels.studies.pimkl.protocol import load_cohort

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
cfg, task = smk.params.cfg, smk.params.cfg["cohorts"]
cohorts = {}
for name in [*smk.params.source_cohorts, smk.params.target_cohort]:
    X, y, counts = load_cohort(smk.params.specs[name], collapse=smk.params.collapse, name=name)
    log.info("cohort %s: %d samples x %d genes, %d positive", name, len(y), X.shape[1], int(y.sum()))
    cohorts[name] = (X, y)
target = cohorts.pop(smk.params.target_cohort)
X, y = target
source = cohorts
Xs, ys, Xt, yt, info = cohort_domains(source, (X, y), standardize=task["standardize"])
log.info("domains: %s", info)
seeds = list(range(smk.params.seed, smk.params.seed + task["seeds"]))
curve = cohort_transfer_curve(Xs, ys, Xt, yt, task["ks"], seeds, C_source=cfg["C_source"], C_target=cfg["C_target"],
                              mmdt_params={k: cfg[k] for k in ("max_alternations", "tol", "max_iter")})
curve.to_csv(smk.output.curve, sep="\t", index=False)
with open(smk.output.info, "w") as f:
    json.dump({**info, "target_cohort": smk.params.target_cohort}, f, indent=1)
log.info("cohorts: %d rows\n%s", len(curve),
         curve.groupby(["method", "k"])["accuracy"].mean().unstack().round(3).to_string())
report_convergence(log, curve, "cohorts")
