"""Linear-setting theory of projection and translation (transfer learning).

Source: Radhakrishnan, Ruiz Luyten, Prasad & Uhler, "Transfer learning with
kernel methods", Nat. Commun. (2023), section "Theoretical analysis of
projection and translation in the linear setting": Definition 4 (risk, Eq. 5),
the minimum-norm estimator (Eq. 6), Theorem 1 (projection, Eq. 7),
Corollary 1 a-d (its d -> infinity limit) and Theorem 2 (translation, Eq. 8).

Setting
-------
Inputs ``x ~ N(0, I_d)`` (isotropic), source model ``omega_s`` of shape
``(c_s, d)``, target model ``omega_t`` of shape ``(c_t, d)``, noiseless labels
``y = omega x``. ``X_s`` is ``d x n_s`` and ``X_t`` is ``d x n_t``, independent.

* source fit          ``w_s = y_s X_s^+ = omega_s P_s``  (``P_s`` projects on
  the column space of ``X_s``),
* projected predictor ``w_p w_s`` with ``w_p = y_t (w_s X_t)^+``,
* translated predictor ``w_s + (y_t - w_s X_t) X_t^+``,
* baseline            ``w_b = y_t X_t^+ = omega_t P_t``.

For isotropic test inputs the risk of Eq. 5 is exactly
``R(w) = E ||omega_t - w||_F^2`` (expectation over the training data).

What is true and what is not (see ``docs/theory_notes.md``)
-------------------------------------------------------------
* **Theorem 2 (Eq. 8) is exact** for ``n_s, n_t <= d`` (derivation in
  :func:`translated_risk_params`); we extend it to ``n > d`` by clipping
  ``n/d`` at 1. The text's claim that translation beats the baseline when the
  angle between ``omega_s`` and ``omega_t`` is below ``pi/4`` is only a
  sufficient condition: the sharp threshold is ``pi/3``.
* **Theorem 1 (Eq. 7) is not the risk of ``w_p w_s``.** Eq. 7 is, exactly,
  the expectation of ``||omega_t||^2 - 2 tr(omega_t P_t M omega_t^T) +
  tr(omega_t P_t M P_t omega_t^T)`` with ``M = P_s omega_s^+ omega_s P_s``,
  i.e. what one gets by (i) using the reverse-order law
  ``(w_s X_t)^+ w_s = X_t^+ w_s^+ w_s`` and ``(omega_s P_s)^+ = P_s omega_s^+``
  (both false in general) and (ii) treating ``M`` as idempotent
  (:func:`simulate_paper_surrogate` reproduces Eq. 7 to Monte-Carlo accuracy).
  The true risk (:func:`projected_risk_params`, ``form="exact"``) differs by
  tens of standard errors; e.g. with ``n_s = d``, ``eps = 0`` and
  ``n_t >= c_s`` the true risk is 0 (``w_p`` recovers the map exactly) while
  Eq. 7 is positive, and it diverges at ``n_t ~ min(c_s, n_s)`` (a
  double-descent pole) which Eq. 7 does not show.
* Corollary 1 is the correct ``d -> infinity`` limit *of Eq. 7* (so it
  inherits Eq. 7's error); its item (a) condition should read
  ``eps < (1 - C) ||omega_t||_F^2`` (squared norm).

All functions are pure; Monte-Carlo functions take a
``numpy.random.Generator``. Plot functions build a
:class:`matplotlib.figure.Figure` directly (no pyplot state; saving uses Agg).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from numbers import Integral, Real
from typing import NamedTuple

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

__all__ = [
    "SimResult",
    "theorem1_constants",
    "theorem1_risk",
    "epsilon",
    "projected_regime",
    "projected_risk_params",
    "projected_risk",
    "baseline_risk_params",
    "baseline_risk",
    "translated_risk_params",
    "translated_risk",
    "corollary1_risk",
    "corollary1c_risk",
    "corollary1d_risk",
    "corollary1a_dR_dS",
    "corollary1a_condition",
    "corollary1a_monotone",
    "corollary1b_dR_dC",
    "corollary1b_decreasing_in_C",
    "projected_risk_limit_exact",
    "translation_angle_threshold",
    "simulate_risk",
    "simulate_paper_surrogate",
    "make_task_pair",
    "projection_vs_nt",
    "projection_vs_cs",
    "translation_vs_ns",
    "translation_vs_angle",
    "theory_vs_simulation_grid",
    "plot_projection_vs_nt",
    "plot_projection_vs_cs",
    "plot_translation_vs_ns",
    "plot_translation_vs_angle",
    "plot_theory_vs_simulation_grid",
    "TABLE_COLUMNS",
]

#: Columns of every table returned by the ``*_vs_*`` and grid functions.
TABLE_COLUMNS = [
    "method", "regime", "d", "c_s", "c_t", "n_s", "n_t", "norm_t2", "eps",
    "angle", "dist2", "theory", "theory_paper", "sim_mean", "sim_se", "n_rep",
    "rel_err", "z", "rel_err_paper", "z_paper",
]

_METHODS = ("projection", "translation", "baseline")


# ----------------------------------------------------------------------------
# validation helpers
# ----------------------------------------------------------------------------

def _check_int(name: str, value, lo: int = 0, hi: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if value < lo or (hi is not None and value > hi):
        rng_txt = f"[{lo}, {hi}]" if hi is not None else f">= {lo}"
        raise ValueError(f"{name} must be in {rng_txt}, got {value}")
    return value


def _check_real(name: str, value, lo: float | None = None, hi: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise ValueError(f"{name} must be in [{lo}, {hi}], got {value}")
    return value


def _check_eps(eps: float, norm_t2: float) -> float:
    eps = _check_real("eps", eps, lo=0.0)
    tol = 1e-9 * max(1.0, norm_t2)
    if eps > norm_t2 + tol:
        raise ValueError(
            f"eps must satisfy 0 <= eps <= ||omega_t||_F^2 = {norm_t2}, got {eps} "
            "(eps is the squared norm of a projection of omega_t)")
    return min(eps, norm_t2)


def _check_matrix(name: str, a) -> np.ndarray:
    a = np.asarray(a, dtype=float)
    if a.ndim != 2 or a.shape[0] < 1 or a.shape[1] < 1:
        raise ValueError(f"{name} must be a non-empty 2-D array (classes, d), got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} contains non-finite values")
    return a


def _check_pair(omega_s, omega_t) -> tuple[np.ndarray, np.ndarray]:
    ws = _check_matrix("omega_s", omega_s)
    wt = _check_matrix("omega_t", omega_t)
    if ws.shape[1] != wt.shape[1]:
        raise ValueError(
            f"omega_s and omega_t must have the same input dimension d (axis 1); "
            f"got omega_s {ws.shape} and omega_t {wt.shape}")
    return ws, wt


def _check_rng(rng) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng


def _source_spectrum(omega_s: np.ndarray, rtol: float = 1e-8) -> tuple[int, np.ndarray, bool]:
    """Rank, row-space basis (d x k) and 'all nonzero singular values equal'."""
    _, s, vt = np.linalg.svd(omega_s, full_matrices=False)
    if s.size == 0 or s[0] == 0.0:
        return 0, np.zeros((omega_s.shape[1], 0)), True
    k = int(np.sum(s > max(omega_s.shape) * np.finfo(float).eps * s[0]))
    equal = bool(s[k - 1] >= s[0] * (1.0 - rtol))
    return k, vt[:k].T, equal


# ----------------------------------------------------------------------------
# Theorem 1 (as printed) and the true projected risk
# ----------------------------------------------------------------------------

def theorem1_constants(d: int, n_s: int, n_t: int, c_s: int) -> tuple[float, float, float, float]:
    """Constants ``C1, C2, K1, K2`` of Theorem 1 (Eq. 7), as printed.

    Parameters
    ----------
    d : int
        Input dimension, ``d >= 2`` (the constants divide by ``d - 1``).
    n_s, n_t : int
        Numbers of source and target samples, ``0 <= n <= d`` (the theorem is
        stated for the over-parameterised regime).
    c_s : int
        Number of source classes (rows of ``omega_s``), ``1 <= c_s <= d``.

    Returns
    -------
    (C1, C2, K1, K2) : tuple of float
        ``C1 = n_s c_s (d - n_s) / (d (d-1)(d+2))``,
        ``C2 = n_s (d (n_s+1) - 2) / (d (d-1)(d+2))``,
        ``K1 = 1 - n_t (d - c_s) / ((d-1)(d+2))``,
        ``K2 = n_t/d + n_t (d - n_t) / ((d-1)(d+2))``.

    Raises
    ------
    ValueError
        If an argument is not an integer or is out of range.

    Notes
    -----
    ``C1`` and ``C2`` are the second moments of a uniformly random rank-``n_s``
    projection ``P_s``: for symmetric ``A``,
    ``E[P_s A P_s] = C2 A + (C1/c_s) tr(A) I``; with ``A = omega_s^+ omega_s``
    (trace ``c_s``) this is ``C2 A + C1 I``. ``K1, K2`` come from the same
    moments of ``P_t`` (``K2 = 2 n_t/d - C2(n_t)``). These identities are
    correct; the error of Eq. 7 lies in how they are combined (see
    :func:`theorem1_risk`).

    Source: paper, Theorem 1.
    """
    d = _check_int("d", d, lo=2)
    n_s = _check_int("n_s", n_s, lo=0, hi=d)
    n_t = _check_int("n_t", n_t, lo=0, hi=d)
    c_s = _check_int("c_s", c_s, lo=1, hi=d)
    den = d * (d - 1) * (d + 2)
    c1 = n_s * c_s * (d - n_s) / den
    c2 = n_s * (d * (n_s + 1) - 2) / den
    k1 = 1.0 - n_t * (d - c_s) / ((d - 1) * (d + 2))
    k2 = n_t / d + n_t * (d - n_t) / ((d - 1) * (d + 2))
    return c1, c2, k1, k2


def theorem1_risk(d: int, c_s: int, n_s: int, n_t: int, norm_t2: float, eps: float) -> float:
    """Right-hand side of Eq. 7 (Theorem 1) from scalar summaries, as printed.

    ``[(C1 + C2 K1)(1 - n_t/d) + (1 - C1 - C2)] ||omega_t||^2 + C2 K2 eps``.

    Parameters
    ----------
    d, c_s, n_s, n_t : int
        See :func:`theorem1_constants` (``0 <= n_s, n_t <= d``,
        ``1 <= c_s <= d``).
    norm_t2 : float
        ``||omega_t||_F^2 >= 0``.
    eps : float
        ``||omega_t (I - omega_s^+ omega_s)||_F^2``, ``0 <= eps <= norm_t2``.

    Returns
    -------
    float
        The value of Eq. 7 (units of ``||omega_t||_F^2``, squared label units).

    Raises
    ------
    ValueError
        On out-of-range arguments.

    Notes
    -----
    **This is not the risk of the projected predictor.** It equals exactly
    ``E[N - 2 tr(w_t P_t M w_t^T) + tr(w_t P_t M P_t w_t^T)]`` with
    ``M = P_s omega_s^+ omega_s P_s`` (see :func:`simulate_paper_surrogate`
    and the module docstring). Use :func:`projected_risk_params` with
    ``form="exact"`` for the true risk. Source: paper, Theorem 1, Eq. 7.
    """
    norm_t2 = _check_real("norm_t2", norm_t2, lo=0.0)
    eps = _check_eps(eps, norm_t2)
    c1, c2, k1, k2 = theorem1_constants(d, n_s, n_t, c_s)
    return ((c1 + c2 * k1) * (1.0 - n_t / d) + (1.0 - c1 - c2)) * norm_t2 + c2 * k2 * eps


def epsilon(omega_s, omega_t) -> float:
    """Task dissimilarity ``eps = ||omega_t (I - omega_s^+ omega_s)||_F^2``.

    Parameters
    ----------
    omega_s : array_like, shape (c_s, d)
    omega_t : array_like, shape (c_t, d)

    Returns
    -------
    float
        Squared Frobenius norm of the part of ``omega_t``'s rows outside the
        row space of ``omega_s``; ``0 <= eps <= ||omega_t||_F^2``, and
        ``eps = 0`` iff ``omega_t = omega_p omega_s`` for some ``omega_p``.

    Raises
    ------
    ValueError
        If the arrays are not 2-D, not finite, or their ``d`` differ.

    Source: paper, Theorem 1 (definition below Eq. 7).
    """
    ws, wt = _check_pair(omega_s, omega_t)
    _, basis, _ = _source_spectrum(ws)
    inside = wt @ basis
    return float(max(np.sum(wt * wt) - np.sum(inside * inside), 0.0))


def projected_regime(d: int, c_s: int, n_s: int, n_t: int) -> str:
    """Which closed form of the true projected risk applies.

    Let ``m = min(n_s, d)`` and ``r = min(c_s, m)`` (the rank of
    ``w_s = omega_s P_s`` when ``omega_s`` has rank ``c_s``).

    Returns
    -------
    str
        ``"trivial"`` if ``r == 0`` or ``n_t == 0`` (the predictor is 0);
        ``"A"`` if ``n_t >= r`` (the second stage is an ordinary least-squares
        fit on ``r`` features; risk depends on ``omega_s`` only through its
        row space); otherwise (``n_t < r``, minimum-norm interpolation whose
        risk depends on the singular values of ``omega_s``) ``"B1"`` if
        ``n_s >= d``, ``"B2"`` if ``c_s == d``, else ``"B3"`` (no closed
        form known).

    Raises
    ------
    ValueError
        On negative or non-integer arguments, ``d < 1`` or ``c_s > d``.

    Source: this module's derivation of the true risk of the paper's
    Theorem 1 predictor (see :func:`projected_risk_params`).
    """
    d = _check_int("d", d, lo=1)
    c_s = _check_int("c_s", c_s, lo=0, hi=d)
    n_s = _check_int("n_s", n_s, lo=0)
    n_t = _check_int("n_t", n_t, lo=0)
    m = min(n_s, d)
    r = min(c_s, m)
    if r == 0 or n_t == 0:
        return "trivial"
    if n_t >= r:
        return "A"
    if m == d:
        return "B1"
    if c_s == d:
        return "B2"
    return "B3"


def projected_risk_params(d: int, c_s: int, n_s: int, n_t: int, norm_t2: float, eps: float,
                          form: str = "exact", equal_singular_values: bool = True) -> float:
    """Risk of the projected predictor ``w_p w_s`` from scalar summaries.

    Parameters
    ----------
    d : int
        Input dimension (``>= 2`` for ``form="paper"``).
    c_s : int
        Number of source classes; for ``form="exact"`` it must be the rank of
        ``omega_s`` (full row rank), ``1 <= c_s <= d``.
    n_s, n_t : int
        Source / target sample sizes (``>= 0``; any size for ``"exact"``,
        ``<= d`` for ``"paper"``).
    norm_t2 : float
        ``||omega_t||_F^2``.
    eps : float
        :func:`epsilon` of the pair, ``0 <= eps <= norm_t2``.
    form : {"exact", "paper"}
        ``"paper"``: Eq. 7 as printed (:func:`theorem1_risk`). ``"exact"``:
        the true expected risk for Gaussian isotropic data, derived below.
    equal_singular_values : bool
        Whether all nonzero singular values of ``omega_s`` are equal (e.g.
        orthonormal rows). Only matters in regimes B1/B2.

    Returns
    -------
    float
        Expected risk ``E ||omega_t - w_p w_s||_F^2``; ``inf`` where the
        expectation diverges; ``nan`` where no closed form exists (regime B3,
        or B1/B2 with unequal singular values).

    Raises
    ------
    ValueError
        On out-of-range arguments or an unknown ``form``.

    Notes
    -----
    Derivation of ``form="exact"`` (``m = min(n_s, d)``, ``r = min(c_s, m)``,
    ``N = norm_t2``; regimes as in :func:`projected_regime`):

    * trivial (``r = 0`` or ``n_t = 0``): predictor 0, risk ``N``.
    * A (``n_t >= r``): ``w_s X_t = B V^T X_t`` with ``V`` (``d x r``) an
      orthonormal basis of the row space of ``omega_s P_s`` and ``B`` of full
      column rank, so ``w_p w_s = omega_t X_t (V^T X_t)^+ V^T``: ordinary
      least squares of ``y = omega_t x`` on ``r`` Gaussian features with
      independent "noise" of variance ``e_V = ||omega_t (I - V V^T)||^2``.
      Hence ``E[risk | V] = e_V (1 + E tr((W W^T)^{-1})) =
      e_V (n_t - 1)/(n_t - r - 1)`` (inverse Wishart; infinite for
      ``n_t in {r, r+1}`` unless ``e_V = 0``). With ``Pi`` the projection on
      ``P_s rowspace(omega_s)``: ``E[Pi] = (m/d) Q + beta (I - Q)``,
      ``beta = c_s (d - m)/(d (d - c_s))`` (trace and rotation invariance;
      ``E tr(Q Pi) = E tr(U^T P_s U) = c_s m/d``), so
      ``E e_V = (1 - m/d)(N - eps) + (1 - beta) eps`` if ``c_s < m`` and
      ``(1 - m/d) N`` if ``c_s >= m`` (then ``Pi = P_s``).
    * B1 (``n_t < c_s``, ``n_s >= d``), equal singular values:
      ``w_p w_s = omega_t X_t (Q X_t)^+`` (min-norm interpolation on the
      ``c_s``-dimensional row space): ``(1 - n_t/c_s)(N - eps) +
      eps (1 + n_t/(c_s - n_t - 1))``.
    * B2 (``n_t < n_s < d``, ``c_s = d``), equal singular values: same with
      the random ``P_s``: ``(1 - n_t/m)(m/d) N + (1 - m/d) N (m - 1)/(m - n_t - 1)``.
    * B3: depends on the principal angles between ``range(P_s)`` and the row
      space of ``omega_s``; returns ``nan`` (use :func:`simulate_risk`).

    Source: paper, Theorem 1 (Eq. 7) for ``"paper"``; this module's
    derivation, checked against :func:`simulate_risk`, for ``"exact"``.
    """
    if form == "paper":
        return theorem1_risk(d, c_s, n_s, n_t, norm_t2, eps)
    if form != "exact":
        raise ValueError(f"form must be 'exact' or 'paper', got {form!r}")
    d = _check_int("d", d, lo=1)
    c_s = _check_int("c_s", c_s, lo=1, hi=d)
    n_s = _check_int("n_s", n_s, lo=0)
    n_t = _check_int("n_t", n_t, lo=0)
    big_n = _check_real("norm_t2", norm_t2, lo=0.0)
    eps = _check_eps(eps, big_n)
    tiny = 1e-12 * max(big_n, 1e-300)
    m = min(n_s, d)
    r = min(c_s, m)
    regime = projected_regime(d, c_s, n_s, n_t)
    if regime == "trivial":
        return big_n
    if regime == "A":
        if c_s >= m:
            e = (1.0 - m / d) * big_n
        else:
            beta = c_s * (d - m) / (d * (d - c_s))
            e = (1.0 - m / d) * (big_n - eps) + (1.0 - beta) * eps
        if e <= tiny:
            return 0.0
        if n_t <= r + 1:
            return math.inf
        return e * (n_t - 1) / (n_t - r - 1)
    if not equal_singular_values or regime == "B3":
        return math.nan
    if regime == "B1":
        if eps <= tiny:
            return (1.0 - n_t / c_s) * big_n
        if n_t >= c_s - 1:
            return math.inf
        return (1.0 - n_t / c_s) * (big_n - eps) + eps * (1.0 + n_t / (c_s - n_t - 1))
    # B2: c_s == d, n_t < m < d
    if big_n <= 0.0:
        return 0.0
    if n_t >= m - 1:
        return math.inf
    return (1.0 - n_t / m) * (m / d) * big_n + (1.0 - m / d) * big_n * (m - 1) / (m - n_t - 1)


def projected_risk(omega_s, omega_t, n_s: int, n_t: int, form: str = "exact") -> float:
    """Risk ``R(w_p w_s)`` of the projected predictor (Theorem 1 setting).

    Parameters
    ----------
    omega_s : array_like, shape (c_s, d)
        Source model; ``form="exact"`` uses its rank and whether its nonzero
        singular values are equal (relevant only when ``n_t < rank``).
    omega_t : array_like, shape (c_t, d)
        Target model.
    n_s, n_t : int
        Numbers of source and target samples (``>= 0``; ``<= d`` for
        ``form="paper"``).
    form : {"exact", "paper"}
        ``"exact"`` (default): the true expected risk under Gaussian isotropic
        data (:func:`projected_risk_params`). ``"paper"``: Eq. 7 as printed,
        with ``c_s = omega_s.shape[0]``.

    Returns
    -------
    float
        Expected ``||omega_t - w_p w_s||_F^2``; ``inf`` where it diverges and
        ``nan`` where no closed form exists.

    Raises
    ------
    ValueError
        For bad shapes (not 2-D, mismatched ``d``, non-finite), sample sizes
        out of range, ``c_s > d`` with ``form="paper"``, or an unknown form.

    Notes
    -----
    Discrepancy with the paper: Eq. 7 is not the risk of ``w_p w_s`` (it is
    the risk of a surrogate obtained with the reverse-order law; see the
    module docstring and ``docs/theory_notes.md``). Example: ``n_s = d``,
    ``eps = 0``, ``n_t >= c_s`` gives true risk 0 (``w_p`` solves
    ``omega_p omega_s X_t = y_t`` exactly) but Eq. 7 gives
    ``K1 (1 - n_t/d) ||omega_t||^2 > 0``.

    Source: paper, Theorem 1, Eq. 7; exact form derived here.
    """
    ws, wt = _check_pair(omega_s, omega_t)
    d = ws.shape[1]
    norm_t2 = float(np.sum(wt * wt))
    eps = epsilon(ws, wt)
    if form == "paper":
        return theorem1_risk(d, ws.shape[0], n_s, n_t, norm_t2, eps)
    if form != "exact":
        raise ValueError(f"form must be 'exact' or 'paper', got {form!r}")
    k, _, equal = _source_spectrum(ws)
    if k == 0:
        _check_int("n_s", n_s)
        _check_int("n_t", n_t)
        return norm_t2
    return projected_risk_params(d, k, n_s, n_t, norm_t2, eps, form="exact",
                                 equal_singular_values=equal)


# ----------------------------------------------------------------------------
# baseline and translation (Theorem 2)
# ----------------------------------------------------------------------------

def baseline_risk_params(d: int, n_t: int, norm_t2: float) -> float:
    """Risk of the baseline ``w_b = y_t X_t^+`` from scalars.

    Parameters
    ----------
    d : int
        Input dimension, ``>= 1``.
    n_t : int
        Target samples, ``>= 0``.
    norm_t2 : float
        ``||omega_t||_F^2 >= 0``.

    Returns
    -------
    float
        ``(1 - min(n_t, d)/d) ||omega_t||_F^2``: ``w_b = omega_t P_t`` and
        ``E P_t = (n_t/d) I``; 0 for ``n_t >= d`` (noiseless data are
        interpolated by the exact model).

    Raises
    ------
    ValueError
        On out-of-range arguments.

    Source: paper, text after Corollary 1 ("the risk of the baseline
    predictor is given by (1 - T)||omega_t||^2").
    """
    d = _check_int("d", d, lo=1)
    n_t = _check_int("n_t", n_t, lo=0)
    norm_t2 = _check_real("norm_t2", norm_t2, lo=0.0)
    return (1.0 - min(n_t, d) / d) * norm_t2


def baseline_risk(omega_t, n_t: int) -> float:
    """Risk of the minimum-norm least-squares fit on the target task alone.

    Parameters
    ----------
    omega_t : array_like, shape (c_t, d)
    n_t : int
        Number of target samples, ``>= 0``.

    Returns
    -------
    float
        ``(1 - n_t/d) ||omega_t||_F^2`` for ``n_t <= d`` and 0 for
        ``n_t > d`` (noiseless labels).

    Raises
    ------
    ValueError
        If ``omega_t`` is not a finite 2-D array or ``n_t`` is invalid.

    Source: paper, text after Corollary 1; see :func:`baseline_risk_params`.
    """
    wt = _check_matrix("omega_t", omega_t)
    return baseline_risk_params(wt.shape[1], n_t, float(np.sum(wt * wt)))


def translated_risk_params(d: int, n_s: int, n_t: int, norm_t2: float, dist2: float,
                           form: str = "exact") -> float:
    """Risk of the translated predictor (Theorem 2, Eq. 8) from scalars.

    Parameters
    ----------
    d : int
        Input dimension, ``>= 1``.
    n_s, n_t : int
        Source / target samples, ``>= 0`` (``<= d`` for ``form="paper"``).
    norm_t2 : float
        ``||omega_t||_F^2`` (``> 0`` for ``form="paper"``, which divides by it).
    dist2 : float
        ``||omega_s - omega_t||_F^2 >= 0``.
    form : {"exact", "paper"}
        ``"paper"``: Eq. 8 literally,
        ``[D/N + (1 - n_s/d)(1 - D/N)] R_b``. ``"exact"``: the same identity
        written as ``(1 - T)[(1 - S) N + S D]`` with ``S = min(n_s, d)/d``,
        ``T = min(n_t, d)/d``, valid for all sample sizes and ``N = 0``.

    Returns
    -------
    float
        Expected ``||omega_t - (w_s + w_c)||_F^2``.

    Raises
    ------
    ValueError
        On out-of-range arguments or an unknown form.

    Notes
    -----
    Derivation: ``w_s = omega_s P_s`` and ``w_c = (omega_t - w_s) P_t``, so
    the error is ``(omega_t - omega_s P_s)(I - P_t)``. With ``P_t``
    independent and ``E P = (n/d) I``:
    ``E||.||^2 = (1 - T) E||omega_t - omega_s P_s||^2
    = (1 - T)[N - S(2<omega_s, omega_t> - ||omega_s||^2)]
    = (1 - T)[(1 - S) N + S D]``, which is Eq. 8. Theorem 2 is therefore
    exact (confirmed by :func:`simulate_risk`).

    Source: paper, Theorem 2, Eq. 8.
    """
    d = _check_int("d", d, lo=1)
    norm_t2 = _check_real("norm_t2", norm_t2, lo=0.0)
    dist2 = _check_real("dist2", dist2, lo=0.0)
    if form == "paper":
        n_s = _check_int("n_s", n_s, lo=0, hi=d)
        n_t = _check_int("n_t", n_t, lo=0, hi=d)
        if norm_t2 <= 0.0:
            raise ValueError("Eq. 8 divides by ||omega_t||_F^2; it must be > 0")
        ratio = dist2 / norm_t2
        return (ratio + (1.0 - n_s / d) * (1.0 - ratio)) * (1.0 - n_t / d) * norm_t2
    if form != "exact":
        raise ValueError(f"form must be 'exact' or 'paper', got {form!r}")
    n_s = _check_int("n_s", n_s, lo=0)
    n_t = _check_int("n_t", n_t, lo=0)
    s = min(n_s, d) / d
    t = min(n_t, d) / d
    return (1.0 - t) * ((1.0 - s) * norm_t2 + s * dist2)


def translated_risk(omega_s, omega_t, n_s: int, n_t: int, form: str = "exact") -> float:
    """Risk ``R(w_s + w_c)`` of the translated predictor (Theorem 2).

    Parameters
    ----------
    omega_s, omega_t : array_like, shape (c, d)
        Source and target models; translation needs equal label dimensions.
    n_s, n_t : int
        Source / target samples (``>= 0``; ``<= d`` for ``form="paper"``).
    form : {"exact", "paper"}
        See :func:`translated_risk_params`; the two agree where Eq. 8 is
        defined.

    Returns
    -------
    float
        ``[D/N + (1 - n_s/d)(1 - D/N)] (1 - n_t/d) N`` with
        ``D = ||omega_s - omega_t||_F^2``, ``N = ||omega_t||_F^2``
        (``n/d`` clipped at 1).

    Raises
    ------
    ValueError
        If the shapes differ, arrays are not finite 2-D, or sizes are invalid.

    Notes
    -----
    Eq. 8 is correct. The accompanying text says translation beats the
    baseline when the angle between the flattened ``omega_s`` and
    ``omega_t`` (equal norms) is below ``pi/4``; that is sufficient but not
    sharp: ``D < N`` iff ``cos(angle) > 1/2``, i.e. the threshold is
    ``pi/3`` for every ``n_s > 0`` (:func:`translation_angle_threshold`).

    Source: paper, Theorem 2, Eq. 8.
    """
    ws, wt = _check_pair(omega_s, omega_t)
    if ws.shape != wt.shape:
        raise ValueError(
            f"translation needs omega_s and omega_t of the same shape (c_s = c_t); "
            f"got {ws.shape} and {wt.shape}")
    return translated_risk_params(wt.shape[1], n_s, n_t, float(np.sum(wt * wt)),
                                  float(np.sum((ws - wt) ** 2)), form=form)


def translation_angle_threshold() -> float:
    """Largest angle (radians) for which translation beats the baseline.

    Returns
    -------
    float
        ``pi/3``. For ``||omega_s|| = ||omega_t||`` and angle ``theta``,
        ``D = 2 N (1 - cos theta)`` and, by Eq. 8, ``R_tr < R_b`` iff
        ``D < N`` iff ``theta < pi/3`` (any ``0 < n_s``, ``n_t < d``). The
        paper's text says ``pi/4`` (a sufficient, non-sharp condition).

    Raises
    ------
    Nothing.

    Source: paper, discussion of Theorem 2; derived from Eq. 8.
    """
    return math.pi / 3.0


# ----------------------------------------------------------------------------
# Corollary 1 (d -> infinity limit of Eq. 7) and the true limit
# ----------------------------------------------------------------------------

def _as_out(x):
    x = np.asarray(x, dtype=float)
    return float(x) if x.ndim == 0 else x


def _check_unit(name: str, x) -> np.ndarray:
    a = np.asarray(x, dtype=float)
    if not np.all(np.isfinite(a)) or np.any(a < 0.0) or np.any(a > 1.0):
        raise ValueError(f"{name} must lie in [0, 1] (Eq. 7 needs n <= d and c_s <= d), got {x!r}")
    return a


def _check_norm_eps(norm_t2, eps) -> tuple[np.ndarray, np.ndarray]:
    n = np.asarray(norm_t2, dtype=float)
    e = np.asarray(eps, dtype=float)
    if not np.all(np.isfinite(n)) or np.any(n < 0):
        raise ValueError(f"norm_t2 must be finite and >= 0, got {norm_t2!r}")
    if not np.all(np.isfinite(e)) or np.any(e < 0) or np.any(e > n * (1 + 1e-9) + 1e-12):
        raise ValueError(f"eps must satisfy 0 <= eps <= norm_t2, got eps={eps!r}, norm_t2={norm_t2!r}")
    return n, e


def corollary1_risk(S, T, C, norm_t2, eps):
    """Limit of Eq. 7 as ``d -> infinity`` with ``S = n_s/d``, ``T = n_t/d``, ``C = c_s/d``.

    ``R = N [1 - T C S(1-S) - T S^2 ((1-T)(1-C) + 1)] + eps S^2 T (2 - T)``,
    obtained from ``C1 -> S C (1-S)``, ``C2 -> S^2``, ``K1 -> 1 - T(1-C)``,
    ``K2 -> T(2-T)``.

    Parameters
    ----------
    S, T, C : float or array_like, in [0, 1]
    norm_t2 : float or array_like
        ``||omega_t||_F^2`` (``Theta(1)``).
    eps : float or array_like
        ``0 <= eps <= norm_t2``.

    Returns
    -------
    float or ndarray (broadcast)

    Raises
    ------
    ValueError
        If ``S, T, C`` are outside [0, 1] or ``eps`` outside ``[0, norm_t2]``.

    Notes
    -----
    This is the correct limit of Eq. 7 (Corollary 1 c, d follow from it), but
    Eq. 7 itself is not the projected risk; the true limit is
    :func:`projected_risk_limit_exact`.

    Source: paper, Corollary 1 (limit of Theorem 1).
    """
    S, T, C = _check_unit("S", S), _check_unit("T", T), _check_unit("C", C)
    n, e = _check_norm_eps(norm_t2, eps)
    out = n * (1.0 - T * C * S * (1.0 - S) - T * S**2 * ((1.0 - T) * (1.0 - C) + 1.0)) \
        + e * S**2 * T * (2.0 - T)
    return _as_out(out)


def corollary1c_risk(T, C, norm_t2, eps):
    """Corollary 1c: at ``S = 1``, ``R = (1 - T + T C) R_b + eps T (2 - T)``.

    Parameters
    ----------
    T, C : float or array_like, in [0, 1]
    norm_t2, eps : float or array_like
        ``||omega_t||_F^2`` and ``0 <= eps <= norm_t2``.

    Returns
    -------
    float or ndarray
        With ``R_b = (1 - T) norm_t2`` the baseline risk. Equals
        ``corollary1_risk(1, T, C, ...)``.

    Raises
    ------
    ValueError
        On out-of-range inputs.

    Notes
    -----
    As a statement about the projected predictor it is false: the true
    ``S = 1`` limit is ``eps T/(T - C)`` for ``T > C`` (0 when ``eps = 0``) and
    ``(1 - T/C)(N - eps) + eps C/(C - T)`` for ``T < C`` (orthonormal
    ``omega_s``); see :func:`projected_risk_limit_exact`.

    Source: paper, Corollary 1c.
    """
    T, C = _check_unit("T", T), _check_unit("C", C)
    n, e = _check_norm_eps(norm_t2, eps)
    return _as_out((1.0 - T + T * C) * (1.0 - T) * n + e * T * (2.0 - T))


def corollary1d_risk(T, norm_t2, eps):
    """Corollary 1d: at ``S = 1`` and ``T, C = Theta(delta)``,
    ``R = (1 - 2T) N + 2 T eps + Theta(delta^2)``.

    Parameters
    ----------
    T : float or array_like, in [0, 1]
    norm_t2, eps : float or array_like

    Returns
    -------
    float or ndarray
        The first-order expansion (``C`` drops out at this order).

    Raises
    ------
    ValueError
        On out-of-range inputs.

    Notes
    -----
    Correct expansion of Corollary 1c; inherits its error (the true small-T
    behaviour at ``S = 1`` depends on ``T/C``, not on ``T`` alone).

    Source: paper, Corollary 1d.
    """
    T = _check_unit("T", T)
    n, e = _check_norm_eps(norm_t2, eps)
    return _as_out((1.0 - 2.0 * T) * n + 2.0 * T * e)


def corollary1a_dR_dS(S, T, C, norm_t2, eps):
    """``dR/dS`` of the Corollary 1 limit (:func:`corollary1_risk`).

    ``dR/dS = T [ -N C + 2 S (2 - T)(eps - (1 - C) N) ]`` (linear in ``S``).

    Parameters
    ----------
    S, T, C : float or array_like in [0, 1]
    norm_t2, eps : float or array_like

    Returns
    -------
    float or ndarray

    Raises
    ------
    ValueError
        On out-of-range inputs.

    Source: derivative of the paper's Corollary 1 limit (basis of 1a).
    """
    S, T, C = _check_unit("S", S), _check_unit("T", T), _check_unit("C", C)
    n, e = _check_norm_eps(norm_t2, eps)
    return _as_out(T * (-n * C + 2.0 * S * (2.0 - T) * (e - (1.0 - C) * n)))


def corollary1a_condition(C, norm_t2, eps, as_printed: bool = False):
    """Corollary 1a's sufficient condition for ``R`` decreasing in ``S`` on [0, 1].

    Parameters
    ----------
    C : float or array_like in [0, 1]
    norm_t2, eps : float or array_like
    as_printed : bool
        ``False`` (default): the corrected condition
        ``eps < (1 - C) ||omega_t||_F^2``. ``True``: the printed
        ``eps < (1 - C) ||omega_t||_F`` (compares a squared norm with a norm;
        it coincides with the corrected one only when ``||omega_t||_F = 1``).

    Returns
    -------
    bool or ndarray of bool

    Raises
    ------
    ValueError
        On out-of-range inputs.

    Notes
    -----
    From :func:`corollary1a_dR_dS`: ``dR/dS`` is linear in ``S`` and equals
    ``-T N C <= 0`` at ``S = 0``; if ``eps <= (1-C) N`` both terms are
    ``<= 0``. The printed version admits counterexamples when
    ``||omega_t||_F < 1`` (e.g. ``N = 0.25, C = 0.5, T = 1, eps = 0.22``:
    printed condition holds, ``dR/dS(1) = 0.065 > 0``).

    Source: paper, Corollary 1a (corrected).
    """
    C = _check_unit("C", C)
    n, e = _check_norm_eps(norm_t2, eps)
    rhs = (1.0 - C) * (np.sqrt(n) if as_printed else n)
    out = e < rhs
    return bool(out) if np.ndim(out) == 0 else out


def corollary1a_monotone(T, C, norm_t2, eps):
    """Exact criterion: the Corollary 1 limit is non-increasing in ``S`` on [0, 1].

    Parameters
    ----------
    T, C : float or array_like in [0, 1]
    norm_t2, eps : float or array_like

    Returns
    -------
    bool or ndarray of bool
        ``dR/dS(S=1) <= 0``, i.e. ``eps <= (1 - C) N + C N / (2 (2 - T))``
        (since ``dR/dS`` is linear in ``S`` and ``<= 0`` at ``S = 0``).

    Raises
    ------
    ValueError
        On out-of-range inputs.

    Source: derived from the paper's Corollary 1 limit. (The true risk is
    not monotone in ``S``: it diverges at ``n_s ~ n_t`` when ``c_s > n_t``.)
    """
    val = np.asarray(corollary1a_dR_dS(1.0, T, C, norm_t2, eps))
    out = val <= 1e-15
    return bool(out) if out.ndim == 0 else out


def corollary1b_dR_dC(S, T, norm_t2):
    """``dR/dC`` of the Corollary 1 limit at fixed ``eps``: ``N T S (2S - 1 - S T)``.

    Parameters
    ----------
    S, T : float or array_like in [0, 1]
    norm_t2 : float or array_like, ``>= 0``

    Returns
    -------
    float or ndarray

    Raises
    ------
    ValueError
        On out-of-range inputs.

    Source: derivative of the paper's Corollary 1 limit (basis of 1b).
    """
    S, T = _check_unit("S", S), _check_unit("T", T)
    n, _ = _check_norm_eps(norm_t2, 0.0)
    return _as_out(n * T * S * (2.0 * S - 1.0 - S * T))


def corollary1b_decreasing_in_C(S, T):
    """Corollary 1b predicate: the limit risk decreases in ``C`` iff ``2S - 1 - ST < 0``.

    Parameters
    ----------
    S, T : float or array_like in (0, 1]

    Returns
    -------
    bool or ndarray of bool
        ``2 S - 1 - S T < 0`` (for ``S, T > 0``; the sign of
        :func:`corollary1b_dR_dC`).

    Raises
    ------
    ValueError
        On out-of-range inputs.

    Notes
    -----
    Correct for the limit of Eq. 7. For the true risk (eps fixed) the
    dependence on ``C`` is different: in regime A with ``eps = 0`` the risk
    ``(1 - S) N T/(T - min(C, S))`` never decreases in ``C``.

    Source: paper, Corollary 1b.
    """
    S, T = _check_unit("S", S), _check_unit("T", T)
    out = 2.0 * S - 1.0 - S * T < 0.0
    return bool(out) if np.ndim(out) == 0 else out


def projected_risk_limit_exact(S: float, T: float, C: float, norm_t2: float, eps: float) -> float:
    """True ``d -> infinity`` limit of the projected risk (orthonormal-row ``omega_s``).

    Parameters
    ----------
    S, T : float, ``>= 0``
        ``n_s/d`` and ``n_t/d`` (values above 1 are allowed; ``S`` is clipped
        at 1 because ``P_s = I`` for ``n_s >= d``).
    C : float in [0, 1]
        ``c_s/d``.
    norm_t2, eps : float
        ``N = ||omega_t||_F^2`` and ``0 <= eps <= N``.

    Returns
    -------
    float
        With ``R = min(C, S)``: ``N`` if ``T = 0`` or ``R = 0``; for
        ``T > R`` (regime A) ``e T/(T - R)`` with ``e = (1 - S) N`` if
        ``C >= S`` else ``(1 - S)(N - eps) + (1 - C(1 - S)/(1 - C)) eps``;
        for ``T < R``: ``(1 - T/C)(N - eps) + eps C/(C - T)`` if ``S = 1``
        (B1), ``(S - T) N + (1 - S) N S/(S - T)`` if ``C = 1`` (B2), else
        ``nan`` (B3); ``inf`` at ``T = R`` unless the noise term is 0.

    Raises
    ------
    ValueError
        On out-of-range inputs.

    Source: limit of :func:`projected_risk_params` (``form="exact"``),
    replacing the paper's Corollary 1.
    """
    S = min(_check_real("S", S, lo=0.0), 1.0)
    T = _check_real("T", T, lo=0.0)
    C = _check_real("C", C, lo=0.0, hi=1.0)
    big_n = _check_real("norm_t2", norm_t2, lo=0.0)
    eps = _check_eps(eps, big_n)
    R = min(C, S)
    if T == 0.0 or R == 0.0:
        return big_n
    if T >= R:
        if C >= S:
            e = (1.0 - S) * big_n
        else:
            e = (1.0 - S) * (big_n - eps) + (1.0 - C * (1.0 - S) / (1.0 - C)) * eps
        if e <= 1e-15 * max(big_n, 1e-300):
            return 0.0
        if T == R:
            return math.inf
        return e * T / (T - R)
    if S == 1.0:
        if eps == 0.0:
            return (1.0 - T / C) * big_n
        return (1.0 - T / C) * (big_n - eps) + eps * C / (C - T)
    if C == 1.0:
        return (S - T) * big_n + (1.0 - S) * big_n * S / (S - T)
    return math.nan


# ----------------------------------------------------------------------------
# Monte Carlo
# ----------------------------------------------------------------------------

class SimResult(NamedTuple):
    """Monte-Carlo estimate: ``mean`` risk, its standard error ``se``, ``n_rep``."""

    mean: float
    se: float
    n_rep: int


def _col_basis(X: np.ndarray) -> np.ndarray:
    """Orthonormal basis of the column space of each ``d x n`` matrix (``n <= d``,
    Gaussian hence full column rank a.s.)."""
    return np.linalg.qr(X, mode="reduced")[0]


def _risks_projection(ws, wt, Xs, Xt, k: int) -> np.ndarray:
    """Exact ||omega_t - w_p w_s||_F^2 for a batch of draws.

    ``Xs`` has shape (B, d, n_s) (or None when n_s >= d), ``Xt`` (B, d, n_t).
    Uses w_s = K Vs^T with K = omega_s Vs and the thin SVD K = L diag(sig) R^T
    (rank r); then w_s X_t = L diag(sig) W with W = V^T X_t, V = Vs R, and
    (L diag(sig) W)^+ L diag(sig) = (diag(sig) W)^+ diag(sig) because L has
    orthonormal columns, so w_p w_s = (omega_t X_t)(diag(sig) W)^+ diag(sig) V^T.
    This equals omega_t X_t (w_s X_t)^+ w_s exactly, without forming a
    numerically rank-deficient c_s x n_t matrix.
    """
    B, d, n_t = Xt.shape
    if Xs is None:
        Vs = np.broadcast_to(np.eye(d), (B, d, d))
    else:
        Vs = _col_basis(Xs)
    m = Vs.shape[2]
    r = min(k, m)
    K = np.einsum("cd,bdm->bcm", ws, Vs)
    _, sig, Rt = np.linalg.svd(K, full_matrices=False)
    sig = sig[:, :r]
    V = Vs @ np.swapaxes(Rt[:, :r, :], 1, 2)  # (B, d, r)
    W = np.swapaxes(V, 1, 2) @ Xt  # (B, r, n_t)
    Y = np.einsum("cd,bdn->bcn", wt, Xt)  # (B, c_t, n_t)
    Mp = np.linalg.pinv(sig[:, :, None] * W)  # (B, n_t, r)
    gamma = (Y @ Mp) * sig[:, None, :]  # (B, c_t, r)
    wtV = np.einsum("cd,bdr->bcr", wt, V)
    # ||w_t - G V^T||^2 = ||w_t (I - V V^T)||^2 + ||w_t V - G||^2 (V orthonormal); the
    # first term is formed explicitly (not as a difference of norms) so that an exact
    # recovery gives ~1e-30 rather than rounding noise of order 1e-16.
    outside = wt[None] - wtV @ np.swapaxes(V, 1, 2)
    return np.sum(outside * outside, axis=(1, 2)) + np.sum((wtV - gamma) ** 2, axis=(1, 2))


def _risks_translation(ws, wt, Xs, Xt, b: int, n_s_zero: bool) -> np.ndarray:
    """Exact ||(omega_t - omega_s P_s)(I - P_t)||_F^2 for a batch of ``b`` draws.

    ``Xs`` None means P_s = I (n_s >= d) unless ``n_s_zero`` (then P_s = 0);
    ``Xt`` None means P_t = I (n_t >= d, risk 0); an ``Xt`` with zero columns
    means P_t = 0.
    """
    if n_s_zero:
        D = np.broadcast_to(wt, (b,) + wt.shape)
    elif Xs is None:
        D = np.broadcast_to(wt - ws, (b,) + wt.shape)
    else:
        Vs = _col_basis(Xs)
        D = wt[None] - np.einsum("cd,bdm->bcm", ws, Vs) @ np.swapaxes(Vs, 1, 2)
    if Xt is None:
        return np.zeros(b)
    total = np.sum(D * D, axis=(1, 2))
    if Xt.shape[2] == 0:
        return total
    DV = D @ _col_basis(Xt)
    return np.maximum(total - np.sum(DV * DV, axis=(1, 2)), 0.0)


def _risks_baseline(wt, Xt) -> np.ndarray:
    """Exact ||omega_t (I - P_t)||_F^2 for a batch of draws."""
    Vt = _col_basis(Xt)
    wV = np.einsum("cd,bdn->bcn", wt, Vt)
    return np.maximum(np.sum(wt * wt) - np.sum(wV * wV, axis=(1, 2)), 0.0)


def simulate_risk(omega_s, omega_t, n_s: int, n_t: int, n_rep: int, rng: np.random.Generator,
                  method: str = "projection", chunk: int = 256) -> SimResult:
    """Monte-Carlo risk of the projected, translated or baseline predictor.

    Draws independent ``X_s ~ N(0, I_d)^{n_s}`` and ``X_t ~ N(0, I_d)^{n_t}``
    (columns), noiseless labels ``y = omega X``, fits minimum-norm least
    squares, and computes the risk exactly for isotropic test inputs as
    ``||omega_t - w_hat||_F^2`` (``E_x ||(w* - w)x||^2 = ||w* - w||_F^2``).

    Parameters
    ----------
    omega_s : array_like, shape (c_s, d), or None
        Source model (ignored, may be None, for ``method="baseline"``).
    omega_t : array_like, shape (c_t, d)
        Target model (``c_t = c_s`` for translation).
    n_s, n_t : int
        Sample sizes, ``>= 0`` (any size; ``n >= d`` means ``X X^+ = I``).
    n_rep : int
        Repetitions, ``>= 2``.
    rng : numpy.random.Generator
        Source of randomness (the only one used).
    method : {"projection", "translation", "baseline"}
        ``"projection"``: ``w_p w_s`` with ``w_s = y_s X_s^+``,
        ``w_p = y_t (w_s X_t)^+`` (Theorem 1). ``"translation"``:
        ``w_s + (y_t - w_s X_t) X_t^+`` (Theorem 2). ``"baseline"``:
        ``y_t X_t^+``.
    chunk : int
        Repetitions per vectorised batch (memory ~ chunk * d * max(n) floats;
        lowered automatically so that one batch of draws stays below ~2e7 floats).
        Draws are made per batch (``X_s`` of the batch, then ``X_t``), so the
        result is reproducible for a given ``rng`` state *and* ``chunk``.

    Returns
    -------
    SimResult
        ``(mean, se, n_rep)``: sample mean of the per-draw risks and its
        standard error ``std(ddof=1)/sqrt(n_rep)``.

    Raises
    ------
    ValueError
        For bad shapes, sizes, ``n_rep < 2`` or an unknown method.
    TypeError
        If ``rng`` is not a ``numpy.random.Generator``.

    Notes
    -----
    Exact shortcuts (no approximation): ``X X^+ = V V^T`` with ``V`` the Q
    factor of ``X`` (full column rank a.s. for ``n <= d``); the projection
    second stage is computed in the ``r``-dimensional row space of ``w_s``
    (see ``_risks_projection``), which equals ``y_t (w_s X_t)^+ w_s`` in
    exact arithmetic. Near the poles ``n_t ~ min(c_s, n_s)`` the per-draw
    risk is heavy-tailed (infinite mean or variance), so ``se`` is not
    meaningful there.

    Source: the setting of the paper's Theorems 1 and 2 (Definition 4, Eq. 5-6).
    """
    if method not in _METHODS:
        raise ValueError(f"method must be one of {_METHODS}, got {method!r}")
    rng = _check_rng(rng)
    n_rep = _check_int("n_rep", n_rep, lo=2)
    chunk = _check_int("chunk", chunk, lo=1)
    n_t = _check_int("n_t", n_t, lo=0)
    if method == "baseline":
        wt = _check_matrix("omega_t", omega_t)
        ws = None
        n_s = 0 if n_s is None else _check_int("n_s", n_s, lo=0)
    else:
        ws, wt = _check_pair(omega_s, omega_t)
        n_s = _check_int("n_s", n_s, lo=0)
        if method == "translation" and ws.shape != wt.shape:
            raise ValueError(
                f"translation needs omega_s and omega_t of the same shape; got {ws.shape} and {wt.shape}")
    d = wt.shape[1]
    norm_t2 = float(np.sum(wt * wt))
    k = _source_spectrum(ws)[0] if method == "projection" else 0

    # cap a batch's largest draw at ~2e7 floats (160 MB) whatever ``chunk`` says
    chunk = max(1, min(chunk, int(2e7 // max(1, d * max(n_s if n_s < d else 0, n_t)))))
    risks = np.empty(n_rep)
    done = 0
    while done < n_rep:
        b = min(chunk, n_rep - done)
        # Draw order (X_s then X_t per chunk) is part of the reproducibility contract.
        Xs = rng.standard_normal((b, d, n_s)) if (method != "baseline" and 0 < n_s < d) else None
        if method == "projection":
            # the second stage regresses on w_s X_t, which needs X_t itself for any n_t
            Xt = rng.standard_normal((b, d, n_t)) if n_t > 0 else None
        else:
            Xt = rng.standard_normal((b, d, n_t)) if n_t < d else None
        if method == "baseline":
            out = np.zeros(b) if Xt is None else (
                np.full(b, norm_t2) if n_t == 0 else _risks_baseline(wt, Xt))
        elif method == "translation":
            out = _risks_translation(ws, wt, Xs, Xt, b, n_s_zero=(n_s == 0))
        elif n_s == 0 or n_t == 0 or k == 0:
            out = np.full(b, norm_t2)  # w_s = 0 or w_p = 0: the predictor is 0
        else:
            out = _risks_projection(ws, wt, Xs, Xt, k)
        risks[done:done + b] = out
        done += b
    return SimResult(float(risks.mean()), float(risks.std(ddof=1) / math.sqrt(n_rep)), n_rep)


def simulate_paper_surrogate(omega_s, omega_t, n_s: int, n_t: int, n_rep: int,
                             rng: np.random.Generator) -> SimResult:
    """Monte-Carlo mean of the surrogate whose expectation is exactly Eq. 7.

    Computes ``N - 2 tr(omega_t P_t M omega_t^T) + tr(omega_t P_t M P_t omega_t^T)``
    with ``M = P_s omega_s^+ omega_s P_s`` and random projections ``P_s, P_t``
    of ranks ``n_s, n_t``. This is ``||omega_t - omega_t P_t M||^2`` with
    ``M^2`` replaced by ``M``, i.e. the risk one obtains from the (invalid)
    reverse-order law ``(w_s X_t)^+ w_s = X_t^+ P_s omega_s^+ omega_s P_s``.
    Diagnostic only: it explains where Eq. 7 comes from.

    Parameters
    ----------
    omega_s : array_like, shape (c_s, d)
    omega_t : array_like, shape (c_t, d)
    n_s, n_t : int
        ``0 <= n <= d``.
    n_rep : int, ``>= 2``
    rng : numpy.random.Generator

    Returns
    -------
    SimResult

    Raises
    ------
    ValueError
        On bad shapes or sizes. TypeError if ``rng`` is not a Generator.

    Source: reconstruction of the paper's Theorem 1 (SI Note 2 not available).
    """
    ws, wt = _check_pair(omega_s, omega_t)
    rng = _check_rng(rng)
    d = ws.shape[1]
    n_s = _check_int("n_s", n_s, lo=0, hi=d)
    n_t = _check_int("n_t", n_t, lo=0, hi=d)
    n_rep = _check_int("n_rep", n_rep, lo=2)
    _, U, _ = _source_spectrum(ws)
    norm_t2 = float(np.sum(wt * wt))
    vals = np.empty(n_rep)
    for i in range(n_rep):
        Vs = _col_basis(rng.standard_normal((d, n_s))) if n_s else np.zeros((d, 0))
        Vt = _col_basis(rng.standard_normal((d, n_t))) if n_t else np.zeros((d, 0))
        PsU = Vs @ (Vs.T @ U)  # P_s U, so M = (P_s U)(P_s U)^T
        A = (wt @ Vt) @ (Vt.T @ PsU)  # omega_t P_t P_s U
        Bm = wt @ PsU
        vals[i] = norm_t2 - 2.0 * np.sum(A * Bm) + np.sum(A * A)
    return SimResult(float(vals.mean()), float(vals.std(ddof=1) / math.sqrt(n_rep)), n_rep)


# ----------------------------------------------------------------------------
# planted task pairs
# ----------------------------------------------------------------------------

def make_task_pair(d: int, c_s: int, c_t: int, eps_fraction: float | None = None,
                   angle: float | None = None, rng: np.random.Generator | None = None,
                   *, norm_t2: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Random source/target models with a planted similarity.

    Exactly one of ``eps_fraction`` (projection experiments) and ``angle``
    (translation experiments) must be given.

    Parameters
    ----------
    d : int
        Input dimension, ``>= 1``.
    c_s, c_t : int
        Label dimensions, ``>= 1``.
    eps_fraction : float in [0, 1], optional
        ``omega_s`` gets Haar-random orthonormal rows (``c_s <= d``; the
        exact risk in regimes B1/B2 assumes equal singular values) and
        ``omega_t`` is a Gaussian matrix whose parts inside/outside the row
        space of ``omega_s`` are rescaled so that ``||omega_t||_F^2 = norm_t2``
        and ``epsilon(omega_s, omega_t) = eps_fraction * norm_t2``
        (``eps_fraction > 0`` needs ``c_s < d``).
    angle : float in [0, pi], optional
        Requires ``c_s == c_t``. ``omega_t`` is Gaussian with
        ``||omega_t||_F^2 = norm_t2``; ``omega_s`` has the same norm and makes
        the given angle (radians) with ``omega_t`` as flattened vectors, so
        ``||omega_s - omega_t||_F^2 = 2 norm_t2 (1 - cos angle)``.
    rng : numpy.random.Generator
        Required.
    norm_t2 : float, keyword-only
        ``||omega_t||_F^2 > 0``.

    Returns
    -------
    (omega_s, omega_t) : ndarrays of shape (c_s, d) and (c_t, d)

    Raises
    ------
    ValueError
        If both or neither of ``eps_fraction``/``angle`` are given, on values
        out of range, ``c_s > d`` (projection), ``eps_fraction > 0`` with
        ``c_s = d``, or ``c_s != c_t`` for ``angle``.
    TypeError
        If ``rng`` is not a ``numpy.random.Generator``.

    Source: planted setting for checking the paper's Theorems 1 and 2.
    """
    rng = _check_rng(rng)
    d = _check_int("d", d, lo=1)
    c_s = _check_int("c_s", c_s, lo=1)
    c_t = _check_int("c_t", c_t, lo=1)
    norm_t2 = _check_real("norm_t2", norm_t2, lo=0.0)
    if norm_t2 <= 0.0:
        raise ValueError("norm_t2 must be > 0")
    if (eps_fraction is None) == (angle is None):
        raise ValueError("give exactly one of eps_fraction (projection) or angle (translation)")
    if eps_fraction is not None:
        f = _check_real("eps_fraction", eps_fraction, lo=0.0, hi=1.0)
        if c_s > d:
            raise ValueError(f"c_s must be <= d for orthonormal source rows, got c_s={c_s}, d={d}")
        if f > 0.0 and c_s == d:
            raise ValueError("eps_fraction > 0 needs c_s < d (eps = 0 when omega_s spans R^d)")
        q, _ = np.linalg.qr(rng.standard_normal((d, c_s)))
        omega_s = q.T.copy()
        G = rng.standard_normal((c_t, d))
        inside = (G @ q) @ q.T
        outside = G - inside
        omega_t = np.sqrt((1.0 - f) * norm_t2) * inside / np.linalg.norm(inside)
        if f > 0.0:
            omega_t = omega_t + np.sqrt(f * norm_t2) * outside / np.linalg.norm(outside)
        return omega_s, omega_t
    theta = _check_real("angle", angle, lo=0.0, hi=math.pi)
    if c_s != c_t:
        raise ValueError(f"translation pairs need c_s == c_t, got c_s={c_s}, c_t={c_t}")
    if c_t * d < 2:
        raise ValueError("an angle needs at least two entries (c_t * d >= 2)")
    g = rng.standard_normal(c_t * d)
    g /= np.linalg.norm(g)
    h = rng.standard_normal(c_t * d)
    h -= (h @ g) * g
    h /= np.linalg.norm(h)
    scale = math.sqrt(norm_t2)
    omega_t = (scale * g).reshape(c_t, d)
    omega_s = (scale * (math.cos(theta) * g + math.sin(theta) * h)).reshape(c_s, d)
    return omega_s, omega_t


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


def _rngs(seed: int, n: int) -> list[np.random.Generator]:
    _check_int("seed", seed, lo=0)
    return [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(n)]


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

    One planted pair (:func:`make_task_pair` with ``eps_fraction``) is used
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
        (:func:`projected_risk`), ``theory_paper`` Eq. 7 (nan where
        ``n_t > d``), ``z = (sim_mean - theory)/sim_se``,
        ``rel_err = (sim_mean - theory)/theory`` (and ``*_paper``).

    Raises
    ------
    ValueError
        On invalid parameters (see :func:`make_task_pair`, :func:`simulate_risk`).

    Source: paper, Theorem 1 (Eq. 7) and Fig. 2-style scaling in ``n_t``.
    """
    n_ts = _int_list("n_t_values", n_t_values)
    rngs = _rngs(seed, len(n_ts) + 1)
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
    rngs = _rngs(seed, 2 * len(css))
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
    rngs = _rngs(seed, len(nss) + 1)
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
        puts it at ``pi/3`` (:func:`translation_angle_threshold`).
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
    rngs = _rngs(seed, 2 * len(angs) + 1)
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
    rngs = _rngs(seed, 2 * len(specs))
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
        Output of :func:`projection_vs_nt` (``method == "projection"`` rows
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
        Output of :func:`projection_vs_cs` (constant ``d, n_s, n_t, norm_t2``;
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
        Output of :func:`translation_vs_ns` (constant ``d, n_t, norm_t2, dist2``).

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
        Output of :func:`translation_vs_angle`.

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
        Output of :func:`theory_vs_simulation_grid`.

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
