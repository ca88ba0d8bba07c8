"""Snakemake entry: plot one demo sweep table."""

import pandas as pd

from biokernels.logs import rule_logger
from biokernels.plotting import plot_sweep, save_figure

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
sweep = smk.wildcards.sweep
table = pd.read_csv(smk.input[0], sep="\t")
label = "ridge lam" if sweep == "lam" else "Laplace bandwidth L"
save_figure(plot_sweep(table, sweep, f"Kernel ridge vs {label}"), smk.output.pdf, smk.output.png)
log.info("wrote %s and %s", smk.output.pdf, smk.output.png)
