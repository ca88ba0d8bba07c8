"""Figure helpers shared by the studies (matplotlib, Agg backend)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402


def save_figure(fig: "matplotlib.figure.Figure", *paths: str | Path, dpi: int = 150) -> None:
    """Save ``fig`` to every path (the format follows each suffix, e.g. the
    ``.pdf`` and ``.png`` of a figure target) and close it.

    Raises
    ------
    ValueError
        If no path is given.
    """
    if not paths:
        raise ValueError("save_figure needs at least one output path")
    for p in paths:
        Path(p).parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(p, dpi=dpi, bbox_inches="tight")
    plt.close(fig)


def plot_sweep(table: pd.DataFrame, x: str, title: str) -> "matplotlib.figure.Figure":
    """Train and test R^2 against one hyperparameter (log x axis).

    Parameters
    ----------
    table : DataFrame with columns ``x``, ``train_r2``, ``test_r2``
        (as from :func:`biokernels.solvers.krr.krr_sweep`).
    x : str
        Column for the x axis.
    title : str

    Returns
    -------
    matplotlib.figure.Figure
    """
    missing = {x, "train_r2", "test_r2"} - set(table.columns)
    if missing:
        raise ValueError(f"table lacks columns {sorted(missing)}")
    fig, ax = plt.subplots(figsize=(4.5, 3.2))
    ax.plot(table[x], table["train_r2"], "o-", label="train")
    ax.plot(table[x], table["test_r2"], "s-", label="test")
    best = table.loc[table["test_r2"].idxmax()]
    ax.axvline(best[x], color="grey", ls=":", lw=1)
    ax.set_xscale("log")
    ax.set_xlabel(x)
    ax.set_ylabel("$R^2$")
    ax.set_title(title)
    ax.legend(frameon=False)
    return fig


# ---------------------------------------------------------------------------
# Diffusion-kernel MKL (Sun, Ji & Ye 2008), Figures 1-8 and the sensitivity

_PAPER_FIG = {"ligand": {"roc_threshold": 1, "roc_per_kernel": 2, "best_roc_per_task": 3,
                         "scatter_vs_ubaseline": 4},
              "vonmering": {"roc_threshold": 5, "roc_per_kernel": 6, "best_roc_per_task": 7,
                            "scatter_vs_ubaseline": 8}}


def plot_diffusion(kind: str, table: pd.DataFrame, dataset: str, paper_dataset: str
                   ) -> "matplotlib.figure.Figure":
    """Draw one figure of the diffusion-kernel study from its table.

    Parameters
    ----------
    kind : {"roc_threshold", "roc_per_kernel", "best_roc_per_task",
            "scatter_vs_ubaseline", "sensitivity"}
    table : DataFrame from the matching ``biokernels.studies.diffusion.protocol``
        function (``roc_threshold_table`` etc.)
    dataset, paper_dataset : str
        For the title (e.g. ``vonmering_mips``, ``vonmering``).

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ValueError
        For an unknown ``kind``.
    """
    num = _PAPER_FIG.get(paper_dataset, {}).get(kind)
    what = {"roc_threshold": "tasks above each ROC threshold",
            "roc_per_kernel": "mean ROC of each single diffusion kernel",
            "best_roc_per_task": "best single-kernel ROC per task (uBaseline)",
            "scatter_vs_ubaseline": "learned kernels vs uBaseline, per task",
            "sensitivity": "sensitivity to C, lambda and the beta grid"}.get(kind, kind)
    title = f"{'Fig. %d: ' % num if num else ''}{what} ({dataset})"
    if kind == "roc_threshold":
        from matplotlib.ticker import MaxNLocator

        fig, ax = plt.subplots(figsize=(6.5, 4.4))
        methods = sorted(table["method"].unique())
        colors = plt.get_cmap("tab20")(np.linspace(0, 1, 20))
        for i, m in enumerate(methods):
            g = table[table["method"] == m]
            learned = m in ("mDKL", "DKL", "mDKLKL", "DKLKL", "mDKLKLu", "DKLKLu", "SM1")
            ax.plot(g["threshold"], g["n_tasks"], "-" if learned else "--", color=colors[(2 * i) % 20 + (i >= 10)],
                    label=m, lw=1.6 if learned else 1.2)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("ROC threshold")
        ax.set_ylabel("number of tasks with ROC above")
        ax.legend(fontsize=7, frameon=False, ncol=2, title="identical curves overlap", title_fontsize=7)
    elif kind == "roc_per_kernel":
        fig, ax = plt.subplots(figsize=(5.5, 3.6))
        ax.plot(table["minus_beta"], table["mean_roc"], "o-", ms=3)
        best = table[table["is_rbaseline"]].iloc[0]
        ax.plot(best["minus_beta"], best["mean_roc"], "r*", ms=12, label="rBaseline kernel")
        ax.set_xlabel(r"$-\beta$")
        ax.set_ylabel("mean ROC over tasks")
        ax.legend(frameon=False)
    elif kind == "best_roc_per_task":
        fig, ax = plt.subplots(figsize=(6.5, 3.6))
        ax.bar(np.arange(1, len(table) + 1), table["best_roc"], color="tab:blue")
        ax.set_xlabel("task")
        ax.set_ylabel("best single-kernel ROC (uBaseline)")
        ax.set_ylim(0.4, 1.0)
    elif kind == "scatter_vs_ubaseline":
        methods = list(dict.fromkeys(table["method"]))
        fig, axes = plt.subplots(1, len(methods), figsize=(3.1 * len(methods), 3.2), squeeze=False)
        for ax, m in zip(axes[0], methods):
            g = table[table["method"] == m]
            ax.scatter(g["ubaseline_auc"], g["auc"], s=10)
            lo = float(min(g["ubaseline_auc"].min(), g["auc"].min(), 0.5))
            ax.plot([lo, 1], [lo, 1], "k:", lw=1)
            ax.set_xlabel("uBaseline ROC")
            ax.set_ylabel(f"{m} ROC")
            ax.set_title(f"{int(g['above_diagonal'].sum())}/{len(g)} above", fontsize=9)
    elif kind == "sensitivity":
        params = list(dict.fromkeys(table["parameter"]))
        fig, axes = plt.subplots(1, len(params), figsize=(4 * len(params), 3.4), squeeze=False)
        for ax, prm in zip(axes[0], params):
            g = table[table["parameter"] == prm]
            for m, gm in g.groupby("method"):
                ax.plot(gm["value"], gm["mean_roc"], "o-", label=m)
            if prm in ("C", "lam", "beta_step"):
                ax.set_xscale("log")
            if prm == "C":
                ax.axvline(g["C_chosen"].iloc[0], color="grey", ls=":", lw=1)
            ax.set_xlabel({"C": "SVM C", "lam": r"$\lambda$", "n_kernels": r"kernels ($-\beta_{max}/0.1$)",
                           "beta_step": r"grid step ($\beta_i = -\mathrm{step}\cdot i$)"}[prm])
            ax.set_ylabel("mean ROC")
            ax.legend(frameon=False, fontsize=8)
    else:
        raise ValueError(f"unknown diffusion figure kind {kind!r}")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


SCREEN_LABELS = {"mean": "mean over cell line", "baseline": "NTK baseline (target only)",
                 "projection": "projection", "translation": "translation",
                 "projection_translation": "projection + translation"}
SCREEN_COLORS = {"mean": "0.6", "baseline": "tab:red", "projection": "tab:blue", "translation": "tab:orange",
                 "projection_translation": "tab:green"}
METRIC_LABELS = {"r2": "mean R²", "cosine": "mean cosine (centred)",
                 "pearson_r_paper": "Pearson r as printed in the paper (uncentred)",
                 "pearson_r_centred": "Pearson r, centred (not the paper's)"}


def plot_screen_bars(table: pd.DataFrame, title: str) -> "matplotlib.figure.Figure":
    """Fig. 4a/4b: grouped bars (metric x predictor) with SD error bars, from
    :func:`biokernels.studies.drug_screen.protocol.fig4ab_table`."""
    import matplotlib.pyplot as plt

    metrics = list(dict.fromkeys(table["metric"]))
    models = list(dict.fromkeys(table["model"]))
    if not models:
        raise ValueError("plot_screen_bars: empty table")
    fig, ax = plt.subplots(figsize=(9.5, 3.8))
    width = 0.8 / len(models)
    for j, m in enumerate(models):
        sub = table[table["model"] == m].set_index("metric").reindex(metrics)
        ax.bar(np.arange(len(metrics)) + (j - (len(models) - 1) / 2) * width, sub["mean"], width,
               yerr=sub["sd"], capsize=2, color=SCREEN_COLORS.get(m), label=SCREEN_LABELS.get(m, m))
    ax.set_xticks(np.arange(len(metrics)), [textwrap.fill(METRIC_LABELS.get(k, k), 24) for k in metrics],
                  fontsize=8)
    ax.axhline(0, color="k", lw=0.5)
    ax.set_ylabel("value (mean ± SD over target cell lines)")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    return fig


def _law_curve(ax, c: pd.DataFrame, color, label: str) -> None:
    """One scaling curve: mean ± SD points at ``n_train`` and the fitted
    ``a log2(n) + b`` (dashed), on a log2 x axis."""
    ax.errorbar(c["n_train"], c["mean"], yerr=c["sd"], fmt="o", ms=3, color=color, capsize=2, label=label)
    ax.plot(c["n_train"], c["a"].iloc[0] * np.log2(c["n_train"]) + c["b"].iloc[0], "--", color=color, lw=1)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("target training samples n")


def plot_screen_scaling(table: pd.DataFrame, title: str) -> "matplotlib.figure.Figure":
    """Fig. 4c/4d: each metric against the number of target samples (log2
    axis), points with SD bands and the fitted ``a log2(n) + b`` lines, from
    :func:`biokernels.studies.drug_screen.protocol.fig4cd_table`."""
    import matplotlib.pyplot as plt

    metrics = list(dict.fromkeys(table["metric"]))
    fig, axes = plt.subplots(1, len(metrics), figsize=(4 * len(metrics), 3.6), squeeze=False)
    for ax, metric in zip(axes[0], metrics):
        for m, c in table[table["metric"] == metric].groupby("model", sort=False):
            c = c.sort_values("n_train")
            col = SCREEN_COLORS.get(m)
            r2 = c["fit_r2"].iloc[0]
            _law_curve(ax, c, col, f"{SCREEN_LABELS.get(m, m)} " + (f"(fit R²={r2:.2f})" if np.isfinite(r2)
                                                                     else "(flat)"))
        ax.set_ylabel(textwrap.fill(METRIC_LABELS.get(metric, metric), 30))
        ax.legend(fontsize=6)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def plot_screen_pca(table: pd.DataFrame, title: str) -> "matplotlib.figure.Figure":
    """Fig. 4e/4f: pairs of one cell line on the first two principal
    components of expression, coloured by per-sample R²; the star is the
    control profile. From :func:`biokernels.studies.drug_screen.protocol.fig4ef_table`."""
    import matplotlib.pyplot as plt

    pts = table[table["pair_id"] != "control"]
    ctl = table[table["pair_id"] == "control"]
    # colour range from the data (2nd percentile to max): per-sample R² over
    # genes is close to 1 for every pair, the differences are what matter
    vmin, vmax = float(np.nanquantile(pts["r2"], 0.02)), float(np.nanmax(pts["r2"]))
    fig, ax = plt.subplots(figsize=(5.4, 4.2))
    for stratum, marker in (("seen", "o"), ("unseen", "^")):
        s = pts[pts["stratum"] == stratum]
        sc = ax.scatter(s["pc1"], s["pc2"], c=s["r2"], cmap="viridis", vmin=vmin, vmax=vmax,
                        s=14, marker=marker, edgecolors="none")
        ax.scatter([], [], marker=marker, c="0.5", s=14, label=f"{stratum} drugs")  # legend: shape only
    ax.scatter(ctl["pc1"], ctl["pc2"], marker="*", s=250, c="red", edgecolors="k", label="control")
    fig.colorbar(sc, ax=ax, label=f"per-sample R² (colours {vmin:.3f} to {vmax:.3f})")
    ax.set_xlabel("PC1")
    ax.set_ylabel("PC2")
    ax.legend(fontsize=7)
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig


DEPMAP_LABELS = {"baseline": "NTK baseline [drug | cell]", "projection": "projection [imputed | drug | cell]"}
DEPMAP_COLORS = {"baseline": "tab:red", "projection": "tab:blue"}


def plot_depmap_scaling(table: pd.DataFrame, title: str) -> "matplotlib.figure.Figure":
    """SI Fig. S9a: viability R² against the number of target samples (log2
    axis), one panel per stratum, mean ± SD over folds x seeds, with the
    fitted ``a log2(n) + b`` lines; from
    :func:`biokernels.studies.depmap.tables.s9a_table`."""
    import matplotlib.pyplot as plt

    strata = list(dict.fromkeys(table["stratum"]))
    fig, axes = plt.subplots(1, len(strata), figsize=(4.8 * len(strata), 3.8), squeeze=False)
    for ax, stratum in zip(axes[0], strata):
        for m, c in table[table["stratum"] == stratum].groupby("model", sort=False):
            c = c.sort_values("n_train")
            col = DEPMAP_COLORS.get(m)
            r2, err = c["fit_r2"].iloc[0], c["abs_error_last"].iloc[0]
            fit = f"fit R²={r2:.3f}" if np.isfinite(r2) else "flat"
            if np.isfinite(err):
                fit += f", last pt err {err:.3f}"
            _law_curve(ax, c, col, f"{DEPMAP_LABELS.get(m, m)} ({fit})")
        ax.set_ylabel("viability R²")
        ax.set_title(f"{stratum} drugs", fontsize=9)
        ax.legend(fontsize=6)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def plot_depmap_genes(table: pd.DataFrame, title: str) -> "matplotlib.figure.Figure":
    """SI Fig. S9b: projection R² against the number of genes the source
    predicts (log2 axis), seen and unseen drugs, mean ± SD over folds x
    seeds; from :func:`biokernels.studies.depmap.tables.s9b_table`."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.2, 3.8))
    for stratum, c in table.groupby("stratum", sort=False):
        c = c.sort_values("n_genes")
        ax.errorbar(c["n_genes"], c["mean"], yerr=c["sd"], fmt="o-", ms=3, capsize=2,
                    color="tab:green" if stratum == "seen" else "tab:purple", label=f"{stratum} drugs")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("genes predicted by the source model")
    ax.set_ylabel("viability R² (projection)")
    ax.legend(fontsize=7)
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig


MMDT_COLORS = {"MMDT": "tab:blue", "MMDT-W0": "tab:purple", "SVM-Source": "tab:red", "SVM-Target": "tab:green"}
MMDT_METRICS = {"accuracy": "accuracy, all target test samples",
                "accuracy_heldout_within": "held-out classes (among themselves)"}


def plot_mmdt_curve(table: pd.DataFrame, title: str) -> "matplotlib.figure.Figure":
    """LS-MMDT Figs. 3-6 shape: accuracy against the number of labelled target
    examples per class for each method, mean ± SD over seeds; a second panel
    for the classes without labelled target examples when there are any.
    From :func:`biokernels.studies.mmdt.protocol.curve_table`."""
    import matplotlib.pyplot as plt

    metrics = [m for m in MMDT_METRICS if m in set(table["metric"])]
    fig, axes = plt.subplots(1, len(metrics), figsize=(4.8 * len(metrics), 3.8), squeeze=False)
    for ax, metric in zip(axes[0], metrics):
        for method, c in table[table["metric"] == metric].groupby("method", sort=False):
            # MMDT dashed with squares: it can coincide with SVM-Target (with W0 = 0
            # the transform only couples the target-side SVMs)
            ax.errorbar(c["k"], c["mean"], yerr=c["sd"], fmt="s--" if method == "MMDT" else "o-", ms=3,
                        capsize=2, color=MMDT_COLORS.get(method), label=method, zorder=3 if method == "MMDT" else 2)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("labelled target examples per class")
        ax.set_ylabel("accuracy")
        ax.set_title(MMDT_METRICS[metric], fontsize=9)
        ax.legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig
