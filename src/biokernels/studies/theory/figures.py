"""Figures of the theory-vs-simulation tables (one per ``sweeps`` table).

Source: Radhakrishnan et al. 2023, "Transfer learning with kernel methods",
Theorem 1 (Eq. 7) and Theorem 2 (Eq. 8).

``plot_<name>`` draws the table of ``sweeps.<name>`` (read back from its TSV
or fresh): the exact theory and the paper's formula as curves, the simulated
means with ± 2 standard errors as points. Functions build a
:class:`matplotlib.figure.Figure` directly (no pyplot state; saving, with
Agg, is ``biokernels.plotting.save_figure``'s job). Imports ``sweeps``,
``simulation`` and ``closed_forms`` (layers, top down:
``figures -> sweeps -> simulation -> closed_forms``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from .closed_forms import (
    baseline_risk_params,
    projected_risk_params,
    theorem1_risk,
    translated_risk_params,
)
from .simulation import _METHODS
from .sweeps import TABLE_COLUMNS, _paper_or_nan

__all__ = [
    "plot_projection_vs_nt",
    "plot_projection_vs_cs",
    "plot_translation_vs_ns",
    "plot_translation_vs_angle",
    "plot_theory_vs_simulation_grid",
]


# ----------------------------------------------------------------------------
# plots
# ----------------------------------------------------------------------------

def _require(table: pd.DataFrame, cols: Sequence[str], method: str | None = None) -> pd.DataFrame:
    if not isinstance(table, pd.DataFrame):
        raise ValueError("table must be a pandas DataFrame")
    missing = set(cols) - set(table.columns)
    if missing:
        raise ValueError(f"table lacks columns {sorted(missing)}")
    if method is not None:
        table = table[table["method"] == method]
    if table.empty:
        raise ValueError(f"table has no {method or ''} rows")
    return table


def _const(table: pd.DataFrame, col: str):
    vals = table[col].dropna().to_numpy(dtype=float)
    if vals.size == 0 or not np.allclose(vals, vals[0], rtol=1e-9, atol=1e-12):
        raise ValueError(f"column {col!r} must be constant for this plot, got {np.unique(vals)!r}")
    return float(vals[0])


def _errorbars(ax, x, t: pd.DataFrame, label="simulation (mean ± 2 se)"):
    ax.errorbar(x, t["sim_mean"], yerr=2.0 * t["sim_se"], fmt="o", color="k", ms=4,
                capsize=2, label=label, zorder=3)


def _ylim(ax, t: pd.DataFrame, curves: list[np.ndarray], norm_t2: float):
    vals = [t["sim_mean"].to_numpy(float)] + [np.asarray(c, float) for c in curves]
    finite = np.concatenate([v[np.isfinite(v)] for v in vals])
    top = min(float(np.max(finite)) if finite.size else norm_t2, 3.0 * norm_t2)
    ax.set_ylim(0.0, 1.08 * max(top, 1e-12))


def plot_projection_vs_nt(table: pd.DataFrame) -> Figure:
    """Projected risk vs ``n_t``: exact theory, Eq. 7 and simulation.

    Parameters
    ----------
    table : DataFrame
        Output of :func:`sweeps.projection_vs_nt` (``method == "projection"`` rows
        with constant ``d, c_s, n_s, norm_t2, eps``).

    Returns
    -------
    matplotlib.figure.Figure
        Solid: exact risk at every integer ``n_t`` (gaps at the infinite pole
        ``n_t ~ min(c_s, n_s)``, marked by a dotted line); dashed: Eq. 7;
        dotted grey: baseline; points: simulated means ± 2 se.

    Raises
    ------
    ValueError
        If required columns are missing or parameters vary across rows.

    Source: paper, Theorem 1 (Eq. 7).
    """
    t = _require(table, TABLE_COLUMNS, "projection").sort_values("n_t")
    d, cs, ns = int(_const(t, "d")), int(_const(t, "c_s")), int(_const(t, "n_s"))
    n2, eps = float(_const(t, "norm_t2")), float(np.median(t["eps"]))
    grid = np.arange(0, int(max(t["n_t"].max(), 1)) + 1)
    exact = np.array([projected_risk_params(d, cs, ns, int(n), n2, eps) for n in grid])
    paper = np.array([_paper_or_nan(theorem1_risk, d, cs, ns, int(n), n2, eps) for n in grid])
    base = np.array([baseline_risk_params(d, int(n), n2) for n in grid])
    fig = Figure(figsize=(5.0, 3.6))
    ax = fig.add_subplot()
    ax.plot(grid, np.where(np.isfinite(exact), exact, np.nan), "-", color="C0", label="exact theory")
    ax.plot(grid, paper, "--", color="C3", label="paper Eq. 7")
    ax.plot(grid, base, ":", color="grey", label="baseline $(1-n_t/d)\\|\\omega_t\\|^2$")
    r = min(cs, min(ns, d))
    if 0 < r <= grid[-1]:
        ax.axvline(r, color="C0", ls=":", lw=0.8)
    _errorbars(ax, t["n_t"], t)
    _ylim(ax, t, [exact, paper, base], n2)
    ax.set_xlabel("target samples $n_t$")
    ax.set_ylabel("risk $\\|\\omega_t-\\hat\\omega\\|_F^2$")
    ax.set_title(f"projection: d={d}, $c_s$={cs}, $n_s$={ns}, $\\varepsilon$={eps:.2g}", fontsize=9)
    ax.legend(frameon=False, fontsize=7)
    fig.tight_layout()
    return fig


def plot_projection_vs_cs(table: pd.DataFrame) -> Figure:
    """Projected risk vs ``c_s``: exact theory, Eq. 7 and simulation.

    Parameters
    ----------
    table : DataFrame
        Output of :func:`sweeps.projection_vs_cs` (constant ``d, n_s, n_t, norm_t2``;
        ``eps`` taken as the median over rows, planted constant).

    Returns
    -------
    matplotlib.figure.Figure
        Exact curve at every integer ``c_s`` in range (nan in regime B3, not
        drawn), Eq. 7 dashed, simulated points ± 2 se.

    Raises
    ------
    ValueError
        If required columns are missing or parameters vary across rows.

    Source: paper, Theorem 1 and Corollary 1b.
    """
    t = _require(table, TABLE_COLUMNS, "projection").sort_values("c_s")
    d, ns, nt = int(_const(t, "d")), int(_const(t, "n_s")), int(_const(t, "n_t"))
    n2, eps = float(_const(t, "norm_t2")), float(np.median(t["eps"]))
    grid = np.arange(int(t["c_s"].min()), int(t["c_s"].max()) + 1)
    exact = np.array([projected_risk_params(d, int(c), ns, nt, n2, eps if c < d else 0.0)
                      for c in grid])
    paper = np.array([_paper_or_nan(theorem1_risk, d, int(c), ns, nt, n2, eps if c < d else 0.0)
                      for c in grid])
    fig = Figure(figsize=(5.0, 3.6))
    ax = fig.add_subplot()
    ax.plot(grid, np.where(np.isfinite(exact), exact, np.nan), "-", color="C0", label="exact theory")
    ax.plot(grid, paper, "--", color="C3", label="paper Eq. 7")
    ax.axhline(baseline_risk_params(d, nt, n2), color="grey", ls=":", label="baseline")
    _errorbars(ax, t["c_s"], t)
    _ylim(ax, t, [exact, paper], n2)
    ax.set_xlabel("source classes $c_s$")
    ax.set_ylabel("risk")
    ax.set_title(f"projection: d={d}, $n_s$={ns}, $n_t$={nt}, $\\varepsilon$={eps:.2g}", fontsize=9)
    ax.legend(frameon=False, fontsize=7)
    fig.tight_layout()
    return fig


def plot_translation_vs_ns(table: pd.DataFrame) -> Figure:
    """Translated risk vs ``n_s``: Eq. 8 (exact) and simulation.

    Parameters
    ----------
    table : DataFrame
        Output of :func:`sweeps.translation_vs_ns` (constant ``d, n_t,
        norm_t2, dist2``).

    Returns
    -------
    matplotlib.figure.Figure
        Eq. 8 at every integer ``n_s`` in range, baseline line, simulated
        points ± 2 se.

    Raises
    ------
    ValueError
        If required columns are missing or parameters vary across rows.

    Source: paper, Theorem 2 (Eq. 8).
    """
    t = _require(table, TABLE_COLUMNS, "translation").sort_values("n_s")
    d, nt = int(_const(t, "d")), int(_const(t, "n_t"))
    n2, dist2 = float(_const(t, "norm_t2")), float(np.median(t["dist2"]))
    grid = np.arange(0, int(t["n_s"].max()) + 1)
    theo = np.array([translated_risk_params(d, int(n), nt, n2, dist2) for n in grid])
    fig = Figure(figsize=(5.0, 3.6))
    ax = fig.add_subplot()
    ax.plot(grid, theo, "-", color="C0", label="Theorem 2 (Eq. 8)")
    ax.axhline(baseline_risk_params(d, nt, n2), color="grey", ls=":", label="baseline")
    _errorbars(ax, t["n_s"], t)
    _ylim(ax, t, [theo], n2)
    ax.set_xlabel("source samples $n_s$")
    ax.set_ylabel("risk")
    ax.set_title(f"translation: d={d}, $n_t$={nt}, "
                 f"$\\|\\omega_s-\\omega_t\\|^2$={dist2:.2g}", fontsize=9)
    ax.legend(frameon=False, fontsize=7)
    fig.tight_layout()
    return fig


def plot_translation_vs_angle(table: pd.DataFrame) -> Figure:
    """Translated risk vs angle between ``omega_s`` and ``omega_t`` (equal norms).

    Parameters
    ----------
    table : DataFrame
        Output of :func:`sweeps.translation_vs_angle`.

    Returns
    -------
    matplotlib.figure.Figure
        Eq. 8 with ``D = 2N(1 - cos angle)`` (x in degrees), the baseline,
        simulated points ± 2 se, and vertical lines at 45 deg (the paper's
        text) and 60 deg (the true break-even).

    Raises
    ------
    ValueError
        If required columns are missing or parameters vary across rows.

    Source: paper, Theorem 2 and its discussion.
    """
    t = _require(table, TABLE_COLUMNS, "translation").sort_values("angle")
    d, ns, nt = int(_const(t, "d")), int(_const(t, "n_s")), int(_const(t, "n_t"))
    n2 = float(_const(t, "norm_t2"))
    grid = np.linspace(0.0, float(t["angle"].max()), 200)
    theo = np.array([translated_risk_params(d, ns, nt, n2, 2.0 * n2 * (1.0 - math.cos(a)))
                     for a in grid])
    fig = Figure(figsize=(5.0, 3.6))
    ax = fig.add_subplot()
    ax.plot(np.degrees(grid), theo, "-", color="C0", label="Theorem 2 (Eq. 8)")
    ax.axhline(baseline_risk_params(d, nt, n2), color="grey", ls=":", label="baseline")
    base = table[table["method"] == "baseline"] if "method" in table else table.iloc[0:0]
    if not base.empty:
        ax.errorbar([0.0], base["sim_mean"].iloc[:1], yerr=2 * base["sim_se"].iloc[:1], fmt="s",
                    color="grey", ms=4, capsize=2, label="baseline simulation")
    ax.axvline(45.0, color="C3", ls="--", lw=0.8, label="paper: $\\pi/4$")
    ax.axvline(60.0, color="C2", ls="--", lw=0.8, label="break-even: $\\pi/3$")
    _errorbars(ax, np.degrees(t["angle"]), t)
    _ylim(ax, t, [theo], n2)
    ax.set_xlabel("angle between $\\omega_s$ and $\\omega_t$ (degrees)")
    ax.set_ylabel("risk")
    ax.set_title(f"translation: d={d}, $n_s$={ns}, $n_t$={nt}", fontsize=9)
    ax.legend(frameon=False, fontsize=7)
    fig.tight_layout()
    return fig


def plot_theory_vs_simulation_grid(table: pd.DataFrame) -> Figure:
    """Simulated mean against theory for every grid row (exact and Eq. 7).

    Parameters
    ----------
    table : DataFrame
        Output of :func:`sweeps.theory_vs_simulation_grid`.

    Returns
    -------
    matplotlib.figure.Figure
        Two panels: simulated mean vs exact theory (by method) and vs the
        paper's formula (Eq. 7 / Eq. 8 / baseline), with ± 2 se bars and the
        identity line.

    Raises
    ------
    ValueError
        If required columns are missing.

    Source: paper, Theorems 1 and 2.
    """
    t = _require(table, TABLE_COLUMNS)
    fig = Figure(figsize=(8.0, 3.8))
    axes = fig.subplots(1, 2)
    for ax, col, title in ((axes[0], "theory", "exact theory"),
                           (axes[1], "theory_paper", "paper (Eq. 7 / Eq. 8)")):
        lo, hi = np.inf, -np.inf
        for i, meth in enumerate(_METHODS):
            s = t[(t["method"] == meth) & np.isfinite(t[col])]
            if s.empty:
                continue
            ax.errorbar(s[col], s["sim_mean"], yerr=2 * s["sim_se"], fmt="o", ms=3, capsize=2,
                        color=f"C{i}", label=meth)
            lo = min(lo, s[col].min(), s["sim_mean"].min())
            hi = max(hi, s[col].max(), s["sim_mean"].max())
        if np.isfinite(lo):
            ax.plot([lo, hi], [lo, hi], "-", color="grey", lw=0.8)
        ax.set_xlabel(title)
        ax.set_ylabel("simulated mean risk")
        ax.set_title(f"simulation vs {title}", fontsize=9)
        ax.legend(frameon=False, fontsize=7)
    fig.tight_layout()
    return fig
