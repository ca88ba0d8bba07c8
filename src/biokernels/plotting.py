"""Figure helpers shared by the studies (matplotlib, Agg backend)."""

from __future__ import annotations

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
    table : DataFrame from the matching ``biokernels.protein_function``
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
            if prm in ("C", "lam"):
                ax.set_xscale("log")
            if prm == "C":
                ax.axvline(g["C_chosen"].iloc[0], color="grey", ls=":", lw=1)
            ax.set_xlabel({"C": "SVM C", "lam": r"$\lambda$", "n_kernels": r"kernels ($-\beta_{max}/0.1$)"}[prm])
            ax.set_ylabel("mean ROC")
            ax.legend(frameon=False, fontsize=8)
    else:
        raise ValueError(f"unknown diffusion figure kind {kind!r}")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig
