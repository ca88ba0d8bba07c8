"""Snakemake entry: an LS-MMDT learning-curve figure and its table."""

import pandas as pd

from biokernels.logs import rule_logger
from biokernels.studies.mmdt.protocol import curve_table, report_convergence
from biokernels.plotting import plot_mmdt_curve, save_figure

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
curve = pd.read_csv(smk.input[0], sep="\t")
table = curve_table(curve)
n_bad = report_convergence(log, curve, smk.wildcards.task)
title = smk.params.title
if n_bad:  # say it on the figure too
    title += (f"\n{n_bad} of {int(curve['n_transform_solves'].sum())} transform solves did not "
              "converge (raise mmdt.max_iter)")
fig = plot_mmdt_curve(table, title)
table.to_csv(smk.output.table, sep="\t", index=False)
save_figure(fig, smk.output.pdf, smk.output.png)
log.info("%d rows", len(table))
