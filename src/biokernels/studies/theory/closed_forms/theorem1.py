"""Theorem 1 (projection, Eq. 7) as printed, and the true projected risk.

Radhakrishnan et al. 2023, Theorem 1: the constants and Eq. 7
(:func:`theorem1_risk`, ``form="paper"``), the task dissimilarity
:func:`epsilon`, and the true risk of the projected predictor ``w_p w_s``
derived here (``form="exact"``; regimes in :func:`projected_regime`). Eq. 7
is not that risk; why: ``docs/theory_notes.md``.
"""

from __future__ import annotations

import math

import numpy as np

from .checks import _check_eps, _check_int, _check_pair, _check_real, _source_spectrum

__all__ = [
    "theorem1_constants",
    "theorem1_risk",
    "epsilon",
    "projected_regime",
    "projected_risk_params",
    "projected_risk",
]


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
    and ``docs/theory_notes.md``). Use :func:`projected_risk_params` with
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

    Source: this package's derivation of the true risk of the paper's
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

    Source: paper, Theorem 1 (Eq. 7) for ``"paper"``; this package's
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
    the risk of a surrogate obtained with the reverse-order law; see
    ``docs/theory_notes.md``). Example: ``n_s = d``,
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
