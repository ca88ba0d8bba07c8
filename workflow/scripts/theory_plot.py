"""Snakemake entry: the figure of one theory-vs-simulation table."""

import pandas as pd

from biokernels.studies.theory import figures
from biokernels.logs import rule_logger
from biokernels.plotting import save_figure

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
table = pd.read_csv(smk.input[0], sep="\t")
fig = getattr(figures, f"plot_{smk.wildcards.tid}")(table)
save_figure(fig, smk.output.pdf, smk.output.png)
log.info("wrote %s", smk.output.png)
