"""Snakemake entry: the numbers behind Figures 1-8 of the diffusion study."""

import pandas as pd

from biokernels import stats as pf
from biokernels.logs import rule_logger

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
kind = smk.wildcards.kind
roc = pf.read_roc_tables(smk.input.roc)
kernel_roc = pd.read_csv(smk.input.kernel_roc, sep="\t")
table = {
    "roc_threshold": lambda: pf.roc_threshold_table(roc),
    "roc_per_kernel": lambda: pf.roc_per_kernel_table(kernel_roc),
    "best_roc_per_task": lambda: pf.best_roc_per_task_table(kernel_roc),
    "scatter_vs_ubaseline": lambda: pf.scatter_table(roc),
}[kind]()
table.to_csv(smk.output[0], sep="\t", index=False, float_format="%.6g")
log.info("wrote %s (%d rows)", smk.output[0], len(table))
