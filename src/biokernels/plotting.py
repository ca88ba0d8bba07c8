"""Figure helpers shared by the studies (matplotlib, Agg backend)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
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
