"""Snakemake entry: one panel of Fig. 4 (table + figure)."""

import pandas as pd

from biokernels.studies.drug_screen.tables import fig4ab_table, fig4cd_table, fig4ef_table
from biokernels.io.gctx import read_gctx
from biokernels.logs import rule_logger
from biokernels.plotting import plot_screen_bars, plot_screen_pca, plot_screen_scaling, save_figure

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
fig_id = smk.wildcards.fig
ds = smk.params.dataset
if fig_id in ("fig4a", "fig4b"):
    stratum = "seen" if fig_id == "fig4a" else "unseen"
    table = fig4ab_table(pd.concat([pd.read_csv(p, sep="\t") for p in smk.input], ignore_index=True), stratum)
    n_cells = int(table["n_cells"].max())
    fig = plot_screen_bars(table, f"Fig. 4{fig_id[-1]}: {stratum} drugs, {n_cells} target cell "
                                  f"line{'s' if n_cells > 1 else ''} ({ds})")
elif fig_id in ("fig4c", "fig4d"):
    stratum = "seen" if fig_id == "fig4c" else "unseen"
    scaling = pd.concat([pd.read_csv(p, sep="\t") for p in smk.input], ignore_index=True)
    table = fig4cd_table(scaling, stratum, first=smk.params.scaling["first"])
    fig = plot_screen_scaling(table, f"Fig. 4{fig_id[-1]}: scaling with target samples, {stratum} drugs ({ds})")
else:
    expr_path, controls_path, folds_path, *sample_paths = smk.input
    expression = read_gctx(expr_path).data.T
    controls = pd.read_csv(controls_path, sep="\t", index_col=0, dtype={"cell_id": str})
    controls.columns = controls.columns.astype(str)
    samples = pd.concat([pd.read_csv(p, sep="\t") for p in sample_paths], ignore_index=True)
    folds = pd.read_csv(folds_path, sep="\t", index_col=0, dtype={"cell_id": str}, keep_default_na=False)
    samples["cell_id"] = folds.loc[samples["pair_id"], "cell_id"].to_numpy()
    order = list(dict.fromkeys(samples["cell_id"]))  # rank order of the input files
    cells = list(smk.params.pca_cells) or order[:2]
    if fig_id == "fig4f" and len(cells) < 2:
        raise ValueError("Fig. 4f shows a second target cell line, but there is one (drug_screen.pca_cells or "
                         "n_target); ask for drug_screen_fig4e only")
    cell = cells[0] if fig_id == "fig4e" else cells[1]
    if cell not in order:
        raise ValueError(f"drug_screen.pca_cells: {cell!r} is not a target cell line ({order})")
    s = samples[samples["cell_id"] == cell]
    table = fig4ef_table(expression, controls.loc[cell], s, cell)
    fig = plot_screen_pca(table, f"Fig. 4{fig_id[-1]}: {cell}, projection + translation "
                                 f"(PC1 {table['pc1_variance'].iloc[0]:.0%}, "
                                 f"PC2 {table['pc2_variance'].iloc[0]:.0%} of variance)")
    far = table[table["pair_id"] != "control"]
    log.info("%s: Spearman(distance to control, per-sample R2) = %.3f", cell,
             far["distance_to_control"].corr(far["r2"], method="spearman"))
table.to_csv(smk.output.table, sep="\t", index=False)
save_figure(fig, smk.output.pdf, smk.output.png)
log.info("%s: %d rows", fig_id, len(table))
