"""Snakemake entry: one PIMKL figure (table + PDF + PNG)."""

import pandas as pd

from biokernels.studies.pimkl import figures as pf
from biokernels.logs import rule_logger
from biokernels.studies.pimkl.protocol import read_weights
from biokernels.plotting import save_figure

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
fig_id = smk.wildcards.fig
ds = smk.params.dataset
sig = smk.params.significance
inputs = list(smk.input)


def read(paths):
    return pd.concat([pd.read_csv(p, sep="\t") for p in paths], ignore_index=True)


if fig_id in ("fig3a", "figS1"):
    table = pf.table_fig3a(read(inputs))
    if fig_id == "fig3a":
        fig = pf.plot_fig3a(table, f"Fig. 3a: AUC over all cohorts ({ds})")
    else:
        fig = pf.plot_figS1(table, f"Fig. S1: AUC per cohort ({ds})")
    log.info("mean of per-repeat AUCs: %s", table.groupby("method")["auc"].mean().round(3).to_dict())
elif fig_id == "fig3b":
    table = pf.table_fig3b(read_weights(inputs), sig["alpha"], sig["min_cohorts"])
    fig = pf.plot_fig3b(table, f"Fig. 3b: significant pathways (BH alpha {sig['alpha']:g}; "
                               f"* = in >= {sig['min_cohorts']} cohorts) ({ds})", sig["min_cohorts"])
    log.info("significant per cohort: %s", table[table["significant"]].groupby("cohort")["pathway"].apply(list).to_dict())
elif fig_id == "fig4":
    table = pf.table_fig4(read_weights(inputs))
    fig = pf.plot_fig4(table, f"Fig. 4: signature correlation ({ds})", sig["correlation_alpha"])
elif fig_id == "figS2":
    by = {}
    for c in smk.params.collections:
        by[c] = read([p for p in inputs if f"/s1/{c}/" in p])
    table = pf.table_figS2(by)
    fig = pf.plot_figS2(table, f"Fig. S2: PIMKL AUC per gene-set collection ({ds})")
    log.info("median AUC: %s", table.groupby(["collection", "cohort"])["auc"].median().round(3).to_dict())
elif fig_id == "fig5":
    table = pf.table_fig5(read(inputs[:-1]), pd.read_csv(inputs[-1], sep="\t"))
    fig = pf.plot_fig5(table, f"Fig. 5: {smk.params.large}, trained vs transferred weights ({ds})")
elif fig_id == "fig6":
    table = pf.table_fig6(pd.read_csv(inputs[0], sep="\t"))
    fig = pf.plot_fig6(table, f"Fig. 6: {smk.params.large}, CNA / mRNA / both ({ds})")
    log.info("mean AUC: %s", table.groupby("omics")["auc"].mean().round(3).to_dict())
elif fig_id == "figS4":
    tr = pd.read_csv(inputs[1], sep="\t").set_index("pathway")["weight"]
    table = pf.table_figS4(pd.read_csv(inputs[0], sep="\t"), tr)
    fig = pf.plot_figS4(table, f"Fig. S4: trained vs transferred signature ({ds})")
else:
    table = read(inputs)
    fig = pf.plot_sensitivity(table, f"Sensitivity of PIMKL to modelling choices ({ds})")
table.to_csv(smk.output.table, sep="\t", index=False)
save_figure(fig, smk.output.pdf, smk.output.png)
log.info("%s: %d rows", fig_id, len(table))
