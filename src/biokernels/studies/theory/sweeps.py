"""Parameter sweeps: the theory-vs-simulation tables the workflow writes.

Source: Radhakrishnan et al. 2023, "Transfer learning with kernel methods",
Theorem 1 (Eq. 7), Corollary 1b and Theorem 2 (Eq. 8).

Each public function here is the table of one target of
``workflow/rules/theory.smk`` (same name; its keyword arguments are the
``theory.<name>`` entry of the config, the seed the top-level one) and returns
a :class:`pandas.DataFrame` with columns :data:`TABLE_COLUMNS`: for every
setting, the exact risk (``closed_forms``), the paper's formula, and the
Monte-Carlo mean and standard error (``simulation.simulate_risk``). Every row
draws from its own child stream of ``numpy.random.SeedSequence(seed)``, so a
table is a pure function of its arguments. Imports ``simulation`` and
``closed_forms`` (layers, top down:
``figures -> sweeps -> simulation -> closed_forms``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from biokernels.seeds import spawn_rngs

from .closed_forms import (
    _check_int,
    _check_real,
    baseline_risk,
    epsilon,
    projected_regime,
    projected_risk,
    translated_risk,
)
from .simulation import _METHODS, SimResult, make_task_pair, simulate_risk

__all__ = [
    "TABLE_COLUMNS",
    "projection_vs_nt",
    "projection_vs_cs",
    "translation_vs_ns",
    "translation_vs_angle",
    "theory_vs_simulation_grid",
]

#: Columns of every table returned by the ``*_vs_*`` and grid functions, in order:
#: ``method`` ("projection", "translation" or "baseline"); ``regime`` (of
#: ``closed_forms.projected_regime`` for projection, "exact" otherwise); the sizes
#: ``d, c_s, c_t, n_s, n_t`` (``c_s = n_s = 0`` on baseline rows); ``norm_t2`` =
#: ``||omega_t||_F^2``; ``eps`` (projection rows, else nan); ``angle`` in radians and
#: ``dist2`` = ``||omega_s - omega_t||_F^2`` (translation rows, else nan); ``theory``
#: (exact risk; nan where no closed form) and ``theory_paper`` (Eq. 7 / Eq. 8 /
#: baseline as printed; nan outside their domain); ``sim_mean``, ``sim_se``, ``n_rep``
#: (``simulation.simulate_risk``); ``rel_err = (sim_mean - theory)/theory``,
#: ``z = (sim_mean - theory)/sim_se`` and the same against ``theory_paper``. Risks
#: are in squared label units (those of ``norm_t2``).
TABLE_COLUMNS = [
    "method", "regime", "d", "c_s", "c_t", "n_s", "n_t", "norm_t2", "eps",
    "angle", "dist2", "theory", "theory_paper", "sim_mean", "sim_se", "n_rep",
    "rel_err", "z", "rel_err_paper", "z_paper",
]


# ----------------------------------------------------------------------------
# tables
# ----------------------------------------------------------------------------

def _compare(mean: float, se: float, theory: float, scale: float) -> tuple[float, float]:
    """(relative error, z-score) of a simulated mean against a theory value."""
    if theory is None or not math.isfinite(theory):
        return math.nan, math.nan
    diff = mean - theory
    if abs(diff) <= 1e-10 * max(scale, 1e-300):
        z = 0.0
    elif se > 0.0:
        z = diff / se
    else:
        z = math.copysign(math.inf, diff)
    rel = diff / theory if theory != 0.0 else (0.0 if z == 0.0 else math.nan)
    return rel, z


def _row(method, regime, d, c_s, c_t, n_s, n_t, norm_t2, eps, angle, dist2,
         theory, theory_paper, sim: SimResult) -> dict:
    rel, z = _compare(sim.mean, sim.se, theory, norm_t2)
    relp, zp = _compare(sim.mean, sim.se, theory_paper, norm_t2)
    return dict(method=method, regime=regime, d=d, c_s=c_s, c_t=c_t, n_s=n_s, n_t=n_t,
                norm_t2=norm_t2, eps=eps, angle=angle, dist2=dist2, theory=theory,
                theory_paper=theory_paper, sim_mean=sim.mean, sim_se=sim.se, n_rep=sim.n_rep,
                rel_err=rel, z=z, rel_err_paper=relp, z_paper=zp)


def _paper_or_nan(fn, *args) -> float:
    try:
        return float(fn(*args))
    except ValueError:
        return math.nan


def _projection_row(ws, wt, n_s, n_t, n_rep, rng) -> dict:
    d = wt.shape[1]
    c_s = ws.shape[0]
    norm_t2 = float(np.sum(wt * wt))
    eps = epsilon(ws, wt)
    sim = simulate_risk(ws, wt, n_s, n_t, n_rep, rng, method="projection")
    return _row("projection", projected_regime(d, c_s, n_s, n_t), d, c_s, wt.shape[0], n_s, n_t,
                norm_t2, eps, math.nan, math.nan, projected_risk(ws, wt, n_s, n_t),
                _paper_or_nan(projected_risk, ws, wt, n_s, n_t, "paper"), sim)


def _translation_row(ws, wt, n_s, n_t, n_rep, rng, angle) -> dict:
    d = wt.shape[1]
    norm_t2 = float(np.sum(wt * wt))
    dist2 = float(np.sum((ws - wt) ** 2))
    sim = simulate_risk(ws, wt, n_s, n_t, n_rep, rng, method="translation")
    return _row("translation", "exact", d, ws.shape[0], wt.shape[0], n_s, n_t, norm_t2, math.nan,
                angle, dist2, translated_risk(ws, wt, n_s, n_t),
                _paper_or_nan(translated_risk, ws, wt, n_s, n_t, "paper"), sim)


def _baseline_row(wt, n_t, n_rep, rng) -> dict:
    d = wt.shape[1]
    norm_t2 = float(np.sum(wt * wt))
    sim = simulate_risk(None, wt, 0, n_t, n_rep, rng, method="baseline")
    theory = baseline_risk(wt, n_t)
    paper = theory if n_t <= d else math.nan
    return _row("baseline", "exact", d, 0, wt.shape[0], 0, n_t, norm_t2, math.nan, math.nan,
                math.nan, theory, paper, sim)


def _int_list(name: str, values) -> list[int]:
    vals = list(values)
    if not vals:
        raise ValueError(f"{name} must be a non-empty sequence of integers")
    return [_check_int(f"{name}[{i}]", v, lo=0) for i, v in enumerate(vals)]


def _frame(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=TABLE_COLUMNS)


def projection_vs_nt(d: int = 100, c_s: int = 40, n_s: int = 100,
                     n_t_values: Sequence[int] = (5, 10, 20, 30, 50, 60, 80, 100),
                     eps_fraction: float = 0.2, n_rep: int = 500, seed: int = 0,
                     c_t: int = 2, norm_t2: float = 1.0) -> pd.DataFrame:
    """Projected risk against the number of target samples: theory vs simulation.

    One planted pair (:func:`simulation.make_task_pair` with ``eps_fraction``) is used
    for all rows; each row has its own child random stream of ``seed``.

    Parameters
    ----------
    d, c_s, n_s : int
        Dimension, source classes (``<= d``), source samples.
    n_t_values : sequence of int
        Target sample sizes (avoid ``|n_t - min(c_s, n_s)| <= 3``: the risk
        is infinite or heavy-tailed there).
    eps_fraction : float in [0, 1]
        Planted ``eps / ||omega_t||^2``.
    n_rep : int
        Monte-Carlo repetitions per row.
    seed : int
        Seed of the ``numpy.random.SeedSequence``.
    c_t : int
        Target label dimension.
    norm_t2 : float
        ``||omega_t||_F^2``.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`TABLE_COLUMNS`; ``theory`` is the exact risk
        (:func:`closed_forms.projected_risk`), ``theory_paper`` Eq. 7 (nan where
        ``n_t > d``), ``z = (sim_mean - theory)/sim_se``,
        ``rel_err = (sim_mean - theory)/theory`` (and ``*_paper``).

    Raises
    ------
    ValueError
        On invalid parameters (see :func:`simulation.make_task_pair`,
        :func:`simulation.simulate_risk`).

    Source: paper, Theorem 1 (Eq. 7) and Fig. 2-style scaling in ``n_t``.
    """
    n_ts = _int_list("n_t_values", n_t_values)
    rngs = spawn_rngs(seed, len(n_ts) + 1)
    ws, wt = make_task_pair(d, c_s, c_t, eps_fraction=eps_fraction, rng=rngs[0], norm_t2=norm_t2)
    return _frame([_projection_row(ws, wt, _check_int("n_s", n_s), nt, n_rep, g)
                   for nt, g in zip(n_ts, rngs[1:])])


def projection_vs_cs(d: int = 100,
                     c_s_values: Sequence[int] = (2, 5, 10, 15, 20, 25, 30, 40, 60, 80, 95),
                     n_s: int = 30, n_t: int = 60, eps_fraction: float = 0.2, n_rep: int = 500,
                     seed: int = 0, c_t: int = 2, norm_t2: float = 1.0) -> pd.DataFrame:
    """Projected risk against the number of source classes (Corollary 1b).

    For each ``c_s`` a fresh planted pair with the same ``eps_fraction`` and
    ``norm_t2`` is drawn (so ``eps`` is held fixed, as in Corollary 1b).

    Parameters
    ----------
    d : int
    c_s_values : sequence of int
        Source class counts, ``1 <= c_s < d`` (``c_s = d`` only with
        ``eps_fraction = 0``). Rows with ``n_t < min(c_s, n_s) < d`` and
        ``c_s < d`` are regime B3: ``theory`` is nan there.
    n_s, n_t : int
        The defaults (``S = 0.3, T = 0.6``) have ``2S - 1 - ST < 0``, where
        Corollary 1b predicts a risk decreasing in ``c_s``; with
        ``n_t > n_s`` every row is in regime A (exact theory available) and
        the true risk increases with ``c_s`` up to ``c_s = n_s``.
    eps_fraction, n_rep, seed, c_t, norm_t2
        As in :func:`projection_vs_nt`.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`TABLE_COLUMNS`.

    Raises
    ------
    ValueError
        On invalid parameters.

    Source: paper, Theorem 1 and Corollary 1b.
    """
    css = _int_list("c_s_values", c_s_values)
    rngs = spawn_rngs(seed, 2 * len(css))
    rows = []
    for i, cs in enumerate(css):
        ws, wt = make_task_pair(d, cs, c_t, eps_fraction=eps_fraction, rng=rngs[2 * i],
                                norm_t2=norm_t2)
        rows.append(_projection_row(ws, wt, _check_int("n_s", n_s), _check_int("n_t", n_t),
                                    n_rep, rngs[2 * i + 1]))
    return _frame(rows)


def translation_vs_ns(d: int = 100, c: int = 2, n_t: int = 30,
                      n_s_values: Sequence[int] = (0, 10, 25, 50, 75, 100),
                      angle: float = math.pi / 4, n_rep: int = 200, seed: int = 0,
                      norm_t2: float = 1.0) -> pd.DataFrame:
    """Translated risk against the number of source samples (Theorem 2).

    Parameters
    ----------
    d : int
    c : int
        Label dimension of both tasks (``c_s = c_t = c``).
    n_t : int
    n_s_values : sequence of int
    angle : float in [0, pi]
        Planted angle between flattened ``omega_s`` and ``omega_t`` (equal norms).
    n_rep, seed, norm_t2
        As in :func:`projection_vs_nt`.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`TABLE_COLUMNS`; ``theory`` = exact Eq. 8 (clipped
        ``n/d``), ``theory_paper`` = Eq. 8 as printed (nan for ``n > d``).

    Raises
    ------
    ValueError
        On invalid parameters.

    Source: paper, Theorem 2, Eq. 8.
    """
    nss = _int_list("n_s_values", n_s_values)
    rngs = spawn_rngs(seed, len(nss) + 1)
    ws, wt = make_task_pair(d, c, c, angle=angle, rng=rngs[0], norm_t2=norm_t2)
    return _frame([_translation_row(ws, wt, ns, _check_int("n_t", n_t), n_rep, g, float(angle))
                   for ns, g in zip(nss, rngs[1:])])


def translation_vs_angle(d: int = 100, c: int = 2, n_s: int = 100, n_t: int = 30,
                         angles: Sequence[float] = tuple(np.linspace(0.0, math.pi / 2, 7)),
                         n_rep: int = 200, seed: int = 0, norm_t2: float = 1.0) -> pd.DataFrame:
    """Translated and baseline risk against the source-target angle (Theorem 2).

    Parameters
    ----------
    d, c, n_s, n_t : int
    angles : sequence of float in [0, pi]
        Radians. The paper's text puts the break-even at ``pi/4``; Eq. 8
        puts it at ``pi/3`` (:func:`closed_forms.translation_angle_threshold`).
    n_rep, seed, norm_t2
        As in :func:`projection_vs_nt`.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`TABLE_COLUMNS`: one ``translation`` row per angle plus
        one ``baseline`` row (``angle`` nan).

    Raises
    ------
    ValueError
        On invalid parameters.

    Source: paper, Theorem 2 and its discussion.
    """
    angs = [float(_check_real("angle", a, lo=0.0, hi=math.pi)) for a in angles]
    if not angs:
        raise ValueError("angles must be non-empty")
    rngs = spawn_rngs(seed, 2 * len(angs) + 1)
    rows = []
    wt0 = None
    for i, a in enumerate(angs):
        ws, wt = make_task_pair(d, c, c, angle=a, rng=rngs[2 * i], norm_t2=norm_t2)
        wt0 = wt
        rows.append(_translation_row(ws, wt, _check_int("n_s", n_s), _check_int("n_t", n_t),
                                     n_rep, rngs[2 * i + 1], a))
    rows.append(_baseline_row(wt0, _check_int("n_t", n_t), n_rep, rngs[-1]))
    return _frame(rows)


def theory_vs_simulation_grid(d_values: Sequence[int] = (24, 48, 96),
                              n_s_fractions: Sequence[float] = (0.25, 0.75, 1.0),
                              eps_fractions: Sequence[float] = (0.05, 0.5),
                              c_s_fraction: float = 0.5,
                              n_t_fractions: Sequence[float] = (0.1, 0.75),
                              angles: Sequence[float] = (math.pi / 6, math.pi / 2),
                              c_t: int = 2, n_rep: int = 400, seed: int = 0,
                              methods: Sequence[str] = _METHODS,
                              norm_t2: float = 1.0) -> pd.DataFrame:
    """Grid of theory-vs-simulation checks for all three predictors.

    Sizes are ``round(fraction * d)``. Projection rows: every ``d``,
    ``n_s``, ``eps_fraction`` and ``n_t`` (``c_s = round(c_s_fraction d)``).
    Translation rows: every ``d``, ``n_s``, ``angle``, ``n_t`` (``c = c_t``).
    Baseline rows: every ``d``, ``n_t``.

    Parameters
    ----------
    d_values : sequence of int
    n_s_fractions, n_t_fractions : sequence of float, ``>= 0``
        Include 1.0 in ``n_s_fractions`` for the ``n_s = d`` case.
    eps_fractions : sequence of float in [0, 1]
    c_s_fraction : float in (0, 1)
    angles : sequence of float in [0, pi]
    c_t, n_rep, seed, norm_t2
        As in :func:`projection_vs_nt`.
    methods : subset of {"projection", "translation", "baseline"}

    Returns
    -------
    pandas.DataFrame
        Columns :data:`TABLE_COLUMNS`. Rows in regime B3 have ``theory``
        nan (no closed form) but keep ``theory_paper`` and the simulation.

    Raises
    ------
    ValueError
        On invalid parameters or unknown methods.

    Source: paper, Theorems 1 and 2.
    """
    bad = set(methods) - set(_METHODS)
    if bad or not methods:
        raise ValueError(f"methods must be a non-empty subset of {_METHODS}, got {methods!r}")
    ds = _int_list("d_values", d_values)
    cs_frac = _check_real("c_s_fraction", c_s_fraction, lo=0.0, hi=1.0)

    def size(frac, d):
        return int(round(_check_real("fraction", frac, lo=0.0) * d))

    specs = []
    for d in ds:
        if "projection" in methods:
            for nsf in n_s_fractions:
                for f in eps_fractions:
                    for ntf in n_t_fractions:
                        specs.append(("projection", d, size(nsf, d), size(ntf, d), f))
        if "translation" in methods:
            for nsf in n_s_fractions:
                for a in angles:
                    for ntf in n_t_fractions:
                        specs.append(("translation", d, size(nsf, d), size(ntf, d), a))
        if "baseline" in methods:
            for ntf in n_t_fractions:
                specs.append(("baseline", d, 0, size(ntf, d), None))
    rngs = spawn_rngs(seed, 2 * len(specs))
    rows = []
    for i, (meth, d, ns, nt, par) in enumerate(specs):
        g_pair, g_sim = rngs[2 * i], rngs[2 * i + 1]
        if meth == "projection":
            cs = max(1, int(round(cs_frac * d)))
            ws, wt = make_task_pair(d, cs, c_t, eps_fraction=par, rng=g_pair, norm_t2=norm_t2)
            rows.append(_projection_row(ws, wt, ns, nt, n_rep, g_sim))
        elif meth == "translation":
            ws, wt = make_task_pair(d, c_t, c_t, angle=par, rng=g_pair, norm_t2=norm_t2)
            rows.append(_translation_row(ws, wt, ns, nt, n_rep, g_sim, float(par)))
        else:
            _, wt = make_task_pair(d, 1, c_t, eps_fraction=0.0, rng=g_pair, norm_t2=norm_t2)
            rows.append(_baseline_row(wt, nt, n_rep, g_sim))
    return _frame(rows)
