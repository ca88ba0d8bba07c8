"""Snakemake entry: draw one figure of the diffusion study from its table."""

import pandas as pd

from biokernels.logs import rule_logger
from biokernels.plotting import plot_diffusion, save_figure

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
table = pd.read_csv(smk.input[0], sep="\t")
fig = plot_diffusion(smk.wildcards.kind, table, smk.wildcards.ds, smk.params.paper_dataset)
save_figure(fig, smk.output.pdf, smk.output.png)
log.info("wrote %s", smk.output.png)
