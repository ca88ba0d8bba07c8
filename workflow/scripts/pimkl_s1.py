"""Snakemake entry: Algorithm S1 of PIMKL on one cohort and gene-set collection."""

import pandas as pd

from biokernels.io.pathways import read_gmt
from biokernels.logs import rule_logger
from biokernels.studies.pimkl.protocol import load_cohort, run_s1

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
cfg = smk.params.cfg
cohort = smk.wildcards.cohort
X, y, counts = load_cohort(smk.params.spec, collapse=cfg["collapse"], name=cohort)
log.info("cohort %s: %s", cohort, {k: v for k, v in counts.items() if k != "cna"})
edges = pd.read_csv(smk.input.edges, sep="\t")
gene_sets = read_gmt(smk.input.gene_sets)
cv = cfg["cv"]
res = run_s1(X, y, edges, gene_sets, cohort=cohort, repeats=cv["repeats"], folds=cv["folds"],
             inner_folds=cv["inner_folds"], easymkl_lams=cv["easymkl_lams"], criterion=cv["criterion"],
             classifier=cfg["classifier"], svm_C=cfg["svm_C"], kernel_aggregation=cfg["kernel_aggregation"],
             baselines=smk.params.baselines, baseline_C_grid=cfg["baseline_C_grid"], seed=smk.params.seed,
             min_genes=cfg["min_genes"])
res.aucs.to_csv(smk.output.aucs, sep="\t", index=False)
res.weights.to_csv(smk.output.weights, sep="\t", index=False)
res.pathways.to_csv(smk.output.pathways, sep="\t", index=False)
log.info("mean AUC per method: %s", res.aucs.groupby("method")["auc"].mean().round(3).to_dict())
