"""Snakemake entry: the summary and Wilcoxon tables and the figure of one
(data set, level) run of the function benchmark."""

import pandas as pd

from biokernels.logs import rule_logger
from biokernels.plotting import save_figure
from biokernels.studies.function_benchmark.tables import plot_benchmark, summary_table, wilcoxon_vs_best_diffusion

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
metrics = pd.read_csv(smk.input.metrics, sep="\t")
summary_table(metrics, smk.params.context).to_csv(smk.output.summary, sep="\t", index=False)
wilcoxon_vs_best_diffusion(metrics).to_csv(smk.output.wilcoxon, sep="\t", index=False)
save_figure(plot_benchmark(metrics, smk.params.title), smk.output.pdf, smk.output.png)
log.info("%d methods, %d trials", metrics["method"].nunique(), metrics["trial"].nunique())
