"""The baseline and Theorem 2 (translation, Eq. 8).

Radhakrishnan et al. 2023: the risk of the target-only minimum-norm fit, the
risk of the translated predictor ``w_s + w_c`` (Eq. 8, exact; extended to
``n > d`` by clipping ``n/d`` at 1) and the sharp angle threshold ``pi/3``
below which translation beats the baseline (the paper says ``pi/4``).
Derivations: ``docs/theory_notes.md``.
"""

from __future__ import annotations

import math

import numpy as np

from .checks import _check_int, _check_matrix, _check_pair, _check_real

__all__ = [
    "baseline_risk_params",
    "baseline_risk",
    "translated_risk_params",
    "translated_risk",
    "translation_angle_threshold",
]


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
