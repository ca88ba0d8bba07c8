"""Snakemake entry: LS-MMDT learning curve on the two-domain digits task
(accuracy vs labelled target examples per class, held-out classes)."""

from biokernels.logs import rule_logger
from biokernels.studies.mmdt.protocol import digits_learning_curve, report_convergence

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
cfg, task = smk.params.cfg, smk.params.cfg["digits"]
seeds = list(range(smk.params.seed, smk.params.seed + task["seeds"]))
curve = digits_learning_curve(task["ks"], seeds, heldout_classes=task["heldout_classes"], noise=task["noise"],
                              C_source=cfg["C_source"], C_target=cfg["C_target"],
                              mmdt_params={k: cfg[k] for k in ("max_alternations", "tol", "max_iter")})
curve.to_csv(smk.output[0], sep="\t", index=False)
log.info("digits: %d rows\n%s", len(curve),
         curve.groupby(["method", "k"])["accuracy"].mean().unstack().round(3).to_string())
report_convergence(log, curve, "digits")
