"""Tables and figures of the images study's panels: :data:`PANELS` maps a
panel id to ``(summarize(rows) -> table, plot(rows, table, dataset) -> figure)``,
where ``rows`` are the per-kernel run rows of :mod:`biokernels.studies.images.run`."""

from __future__ import annotations

import numpy as np
import pandas as pd

from biokernels.studies.images.laws import law_rows

__all__ = ["PANELS"]

COLORS = {"laplace": "tab:blue", "ntk": "tab:orange", "cntk": "tab:green"}


def _axes(n: int, title: str, width: float = 4.0):
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, n, figsize=(width * n, 3.6), squeeze=False)
    fig.suptitle(title, fontsize=10)
    return fig, axes[0]


def _fig2a_table(rows: pd.DataFrame) -> pd.DataFrame:
    t = rows.copy()
    t["gain"] = t["projected"] - t["baseline"]
    return t


def _fig2a_plot(rows, table, dataset):
    targets = list(dict.fromkeys(table["target"]))
    fig, axes = _axes(len(targets), f"Fig. 2a analogue ({dataset}): target-only baseline vs projected")
    for ax, tgt in zip(axes, targets):
        t = table[table["target"] == tgt]
        x = np.arange(len(t))
        ax.bar(x - 0.2, t["baseline"], 0.4, color="0.7", label="baseline")
        ax.bar(x + 0.2, t["projected"], 0.4, color=[COLORS.get(k, "tab:red") for k in t["kernel"]],
               label="projected")
        ax.set_xticks(x, t["kernel"])
        r = t.iloc[0]
        ax.set_title(f"{tgt}: {r['set']}, {r['in_source']}/{r['classes']} classes in source", fontsize=9)
        ax.set_ylim(0, 1)
        ax.set_ylabel("test accuracy")
    axes[0].legend(fontsize=8)
    return fig


def _fig2b_table(rows):
    return pd.DataFrame(law_rows(rows, ["kernel", "target"], "projected")
                        + law_rows(rows, ["kernel", "target"], "baseline"))


def _curve_plot(rows, table, group: str, metric: str, title: str):
    groups = list(dict.fromkeys(rows[group]))
    fig, axes = _axes(len(groups), title)
    for ax, g in zip(axes, groups):
        for kernel, r in rows[rows[group] == g].groupby("kernel", sort=False):
            m = r.groupby("n_train")[[metric, "baseline"]].mean()
            law = table[(table[group] == g) & (table["kernel"] == kernel) & (table["metric"] == metric)]
            r2 = f", R² {law['r2'].iloc[0]:.3f}" if len(law) and "r2" in law and pd.notna(law["r2"].iloc[0]) else ""
            c = COLORS.get(kernel, "tab:red")
            ax.plot(m.index, m[metric], "-", color=c, label=f"{kernel} {metric}{r2}")
            ax.plot(m.index, m["baseline"], ":", color=c, label=f"{kernel} baseline")
        ax.set_xscale("log", base=2)
        ax.set_title(str(g), fontsize=9)
        ax.set_xlabel("target training images n_t")
        ax.set_ylabel("test accuracy")
        ax.legend(fontsize=6)
    return fig


def _fig2b_plot(rows, table, dataset):
    return _curve_plot(rows, table, "target", "projected",
                       f"Fig. 2b analogue ({dataset}): projected accuracy vs n_t (mean of seeds; dotted: baseline)")


def _fig2c_table(rows):
    g = rows.groupby(["kernel", "target", "source_classes"], sort=False)
    t = g.agg(n_source=("n_source", "first"), per_class=("per_class", "first"),
              projected_mean=("projected", "mean"), projected_sd=("projected", "std"), seeds=("seed", "size"))
    return t.reset_index()


def _fig2c_plot(rows, table, dataset):
    targets = list(dict.fromkeys(table["target"]))
    n = int(table["n_source"].iloc[0])
    fig, axes = _axes(len(targets), f"Fig. 2c analogue ({dataset}): {n} source images over k classes")
    for ax, tgt in zip(axes, targets):
        for kernel, t in table[table["target"] == tgt].groupby("kernel", sort=False):
            ax.errorbar(t["source_classes"], t["projected_mean"], yerr=t["projected_sd"].fillna(0), marker="o",
                        color=COLORS.get(kernel, "tab:red"), label=kernel, capsize=2)
        ax.set_title(tgt, fontsize=9)
        ax.set_xlabel("source classes k")
        ax.set_ylabel("projected test accuracy")
        ax.legend(fontsize=7)
    return fig


def _fig3a_table(rows):
    t = rows.copy()
    t["translated_margin"] = t["translated"] - t[["baseline", "source"]].max(axis=1)
    t["translated_best"] = t["translated_margin"] > 0
    return t


def _fig3a_plot(rows, table, dataset):
    kernels = list(dict.fromkeys(table["kernel"]))
    fig, axes = _axes(len(kernels), f"Fig. 3a analogue ({dataset}): translation to corrupted images", width=6.0)
    for ax, kernel in zip(axes, kernels):
        t = table[table["kernel"] == kernel]
        x = np.arange(len(t))
        for col, style in (("baseline", "s"), ("source", "v"), ("translated", "o")):
            ax.plot(x, t[col], style, label=col, alpha=0.85)
        ax.set_xticks(x, t["corruption"], rotation=90, fontsize=7)
        ax.set_ylim(0, 1)
        ax.set_title(f"{kernel}: translated best on {int(t['translated_best'].sum())} of {len(t)}", fontsize=9)
        ax.set_ylabel("test accuracy")
        ax.legend(fontsize=7)
    return fig


def _fig3b_table(rows):
    return pd.DataFrame(law_rows(rows, ["kernel", "corruption"], "translated")
                        + law_rows(rows, ["kernel", "corruption"], "baseline"))


def _fig3b_plot(rows, table, dataset):
    r = rows.groupby(["kernel", "n_train"], as_index=False)[["translated", "baseline"]].mean()
    r["target"] = "mean over corruptions"
    t = pd.DataFrame(law_rows(r, ["kernel", "target"], "translated"))
    return _curve_plot(r, t, "target", "translated",
                       f"Fig. 3b analogue ({dataset}): translated accuracy vs n_t (dotted: baseline)")


PANELS = {
    "fig2a": (_fig2a_table, _fig2a_plot),
    "fig2b": (_fig2b_table, _fig2b_plot),
    "fig2c": (_fig2c_table, _fig2c_plot),
    "fig3a": (_fig3a_table, _fig3a_plot),
    "fig3b": (_fig3b_table, _fig3b_plot),
}
