"""Snakemake entry: one panel of the images study, table and figure."""

import pandas as pd

from biokernels.logs import rule_logger
from biokernels.plotting import save_figure
from biokernels.studies.images.figures import PANELS

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
rows = pd.concat([pd.read_csv(p, sep="\t") for p in smk.input], ignore_index=True)
summarize, plot = PANELS[smk.wildcards.fig]
table = summarize(rows)
table.to_csv(smk.output.table, sep="\t", index=False)
log.info("%s:\n%s", smk.wildcards.fig, table.to_string(index=False))
save_figure(plot(rows, table, smk.params.dataset), smk.output.pdf, smk.output.png)
