"""Closed forms of the linear-setting theory of projection and translation.

Source: Radhakrishnan, Ruiz Luyten, Prasad & Uhler, "Transfer learning with
kernel methods", Nat. Commun. (2023), section "Theoretical analysis of
projection and translation in the linear setting": Definition 4 (risk, Eq. 5),
the minimum-norm estimator (Eq. 6), Theorem 1 (projection, Eq. 7),
Corollary 1 a-d (its d -> infinity limit) and Theorem 2 (translation, Eq. 8).

This module holds the paper's formulas as printed (``form="paper"``,
:func:`theorem1_risk`, the ``corollary1*`` functions), the true risks derived
here (``form="exact"``, :func:`projected_risk_limit_exact`) and the input
checks shared by the whole ``biokernels.studies.theory`` package. It is the
bottom layer: it imports nothing from the package (layers, top down:
``figures -> sweeps -> simulation -> closed_forms``).

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
``R(w) = E ||omega_t - w||_F^2`` (expectation over the training data). All
risks returned here are in units of ``||omega_t||_F^2`` (squared label units);
angles are in radians.

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
  (``simulation.simulate_paper_surrogate`` reproduces Eq. 7 to Monte-Carlo
  accuracy). The true risk (:func:`projected_risk_params`, ``form="exact"``)
  differs by tens of standard errors; e.g. with ``n_s = d``, ``eps = 0`` and
  ``n_t >= c_s`` the true risk is 0 (``w_p`` recovers the map exactly) while
  Eq. 7 is positive, and it diverges at ``n_t ~ min(c_s, n_s)`` (a
  double-descent pole) which Eq. 7 does not show.
* Corollary 1 is the correct ``d -> infinity`` limit *of Eq. 7* (so it
  inherits Eq. 7's error); its item (a) condition should read
  ``eps < (1 - C) ||omega_t||_F^2`` (squared norm).

All functions are pure and deterministic (no randomness; the Monte-Carlo
check of every closed form is ``simulation.simulate_risk``).
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np

__all__ = [
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
    "translation_angle_threshold",
    "corollary1_risk",
    "corollary1c_risk",
    "corollary1d_risk",
    "corollary1a_dR_dS",
    "corollary1a_condition",
    "corollary1a_monotone",
    "corollary1b_dR_dC",
    "corollary1b_decreasing_in_C",
    "projected_risk_limit_exact",
]


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
    ``M = P_s omega_s^+ omega_s P_s`` (see :func:`simulation.simulate_paper_surrogate`
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

    Parameters
    ----------
    d : int
        Input dimension, ``>= 1``.
    c_s : int
        Rank of ``omega_s`` (its number of rows when of full row rank),
        ``0 <= c_s <= d``.
    n_s, n_t : int
        Source / target sample sizes, ``>= 0`` (any size).

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
      space of ``omega_s``; returns ``nan`` (use :func:`simulation.simulate_risk`).

    Source: paper, Theorem 1 (Eq. 7) for ``"paper"``; this module's
    derivation, checked against :func:`simulation.simulate_risk`, for ``"exact"``.
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
    exact (confirmed by :func:`simulation.simulate_risk`).

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
