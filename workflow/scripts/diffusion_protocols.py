"""Snakemake entry: the paper's protocol and its labelled deviations side by
side (mean ROC on split 00, Wilcoxon p-values, stability over the splits)."""

import pandas as pd

from biokernels.logs import rule_logger
from biokernels.stats import protocol_comparison_table, read_roc_tables

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
datasets = smk.params.datasets
rocs = {ds: read_roc_tables([p for p in smk.input.roc if f"/diffusion/{ds}/splits/" in p]) for ds in datasets}
scales = {ds: pd.concat([pd.read_csv(p, sep="\t").assign(split=p.split("/")[-2])
                         for p in smk.input.scale if f"/diffusion/{ds}/splits/" in p]) for ds in datasets}
table = protocol_comparison_table(rocs, smk.params.deviations, scales)
table.to_csv(smk.output[0], sep="\t", index=False, float_format="%.6g")
log.info("protocols:\n%s", table.to_string())
