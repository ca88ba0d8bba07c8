"""Corollary 1 (the ``d -> infinity`` limit of Eq. 7) and the true limit.

Radhakrishnan et al. 2023, Corollary 1 a-d as printed (the correct limit of
Eq. 7, so it inherits Eq. 7's error; item (a) corrected to the squared norm,
the printed form kept as ``as_printed=True``), the derivatives behind items
(a) and (b), and :func:`projected_risk_limit_exact`, the limit of the true
projected risk. Derivations: ``docs/theory_notes.md``.
"""

from __future__ import annotations

import math

import numpy as np

from .checks import _check_eps, _check_real

__all__ = [
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
