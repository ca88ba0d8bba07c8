"""Snakemake entry: PIMKL Algorithm S1 under each alternative modelling choice, one cohort."""

import pandas as pd

from biokernels.io.pathways import read_gmt
from biokernels.logs import rule_logger
from biokernels.studies.pimkl.protocol import load_cohort, run_sensitivity

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
cfg = smk.params.cfg
sens = cfg["sensitivity"]
cohort = smk.wildcards.cohort


def load(name, collapse):
    X, y, counts = load_cohort(smk.params.spec, collapse=collapse, name=name)
    return X, y, counts["has_probes"]


cv = cfg["cv"]
table = run_sensitivity(load, [cohort], pd.read_csv(smk.input.edges, sep="\t"), read_gmt(smk.input.gene_sets),
                        {"repeats": sens["repeats"], "folds": sens["folds"], "inner_folds": cv["inner_folds"],
                         "easymkl_lams": cv["easymkl_lams"], "svm_C": cfg["svm_C"], "seed": smk.params.seed,
                         "min_genes": cfg["min_genes"]},
                        reference={"classifier": cfg["classifier"], "kernel_aggregation": cfg["kernel_aggregation"],
                                   "criterion": cv["criterion"], "collapse": cfg["collapse"]})
table.to_csv(smk.output[0], sep="\t", index=False)
log.info("\n%s", table.to_string(index=False))
