"""Snakemake entry: Tables 2-7 of the diffusion study (mean ROC and time,
Wilcoxon p-values, stability over splits)."""

import pandas as pd

from biokernels.logs import rule_logger
from biokernels.stats import mean_roc_table, read_roc_tables, stability_table, wilcoxon_table

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
kind = smk.wildcards.kind
roc = read_roc_tables(smk.input.roc)
if kind == "mean_roc":
    times = pd.concat([pd.read_csv(p, sep="\t") for p in smk.input.times])
    table = mean_roc_table(roc, times)
elif kind == "wilcoxon":
    table = wilcoxon_table(roc)
else:
    table = stability_table(roc)
table.to_csv(smk.output[0], sep="\t", index=False, float_format="%.6g")
log.info("%s:\n%s", kind, table.to_string())
