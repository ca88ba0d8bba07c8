"""Snakemake entry: SI Fig. S9a / S9b of the DepMap study (table + figure),
or the featurization comparison table."""

import pandas as pd

from biokernels.studies.depmap.tables import s9a_table, s9b_table
from biokernels.logs import rule_logger
from biokernels.plotting import plot_depmap_genes, plot_depmap_scaling, save_figure

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
fig_id = smk.wildcards.fig
label = smk.params.label
if fig_id == "figS9a":
    table = s9a_table(pd.read_csv(smk.input[0], sep="\t"), first=smk.params.first)
    fig = plot_depmap_scaling(table, f"SI Fig. S9a: viability by projection vs target samples ({label})")
    for (stratum, model), c in table.groupby(["stratum", "model"], sort=False):
        log.info("%s %s: R2 %.3f at n=%d -> %.3f at n=%d; law fit R2 %.3f, last point error %.3f", stratum, model,
                 c["mean"].iloc[0], c["n_train"].iloc[0], c["mean"].iloc[-1], c["n_train"].iloc[-1],
                 c["fit_r2"].iloc[0], c["abs_error_last"].iloc[0])
else:
    table = s9b_table(pd.read_csv(smk.input[0], sep="\t"))
    fig = plot_depmap_genes(table, f"SI Fig. S9b: viability R² vs genes from the source ({label})")
table.to_csv(smk.output.table, sep="\t", index=False)
save_figure(fig, smk.output.pdf, smk.output.png)
log.info("%s: %d rows", fig_id, len(table))
