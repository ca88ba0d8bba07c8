"""Prediction intervals from held-out absolute residuals (split conformal;
Vovk, Gammerman & Shafer 2005; Lei, G'Sell, Rinaldo, Tibshirani &
Wasserman, JASA 2018, Algorithm 2).

With ``n`` exchangeable calibration residuals ``|y_i - f(x_i)|``, the
interval ``f(x) +- q`` where ``q`` is their ``ceil((n + 1)(1 - alpha))``-th
smallest value covers a new ``y`` with probability at least ``1 - alpha``
(and at most ``1 - alpha + 1 / (n + 1)`` without ties). When the rank
exceeds ``n`` no finite interval has the guarantee and ``q`` is infinite.

The studies take the residuals from cross-validation (out-of-fold
predictions of the same fitting procedure), the "CV+"-like use of Barber,
Candès, Ramdas & Tibshirani (Ann. Stat. 2021); the guarantee above is then
approximate, which is why the prediction rules measure the coverage on
held-out pairs (:func:`interval_coverage`). Notes:
docs/drug_screen_notes.md, section "Predictions for the user's compounds".
"""

from __future__ import annotations

import math

import numpy as np


def conformal_rank(n: int, level: float) -> int:
    """The order statistic ``ceil((n + 1) level)`` (1-based) of ``n``
    calibration residuals for coverage ``level`` (``1 - alpha``).

    Raises
    ------
    ValueError
        ``level`` outside (0, 1) or ``n < 1``.
    """
    if not 0.0 < level < 1.0:
        raise ValueError(f"interval level: expected a number in (0, 1), got {level!r}")
    if n < 1:
        raise ValueError("conformal interval: no calibration residuals")
    return math.ceil((n + 1) * level)


def conformal_half_width(residuals: np.ndarray, level: float) -> np.ndarray:
    """Half-width ``q`` of the split-conformal interval ``f(x) +- q``.

    Parameters
    ----------
    residuals : array (n,) or (n, d)
        Calibration residuals ``y - f(x)`` (their absolute values are used);
        with ``d`` columns (genes), one half-width per column.
    level : float in (0, 1), nominal coverage ``1 - alpha``

    Returns
    -------
    float array () or (d,): the ``ceil((n + 1) level)``-th smallest absolute
    residual per column, ``inf`` where that rank exceeds ``n`` (fewer than
    ``level / (1 - level)`` residuals).

    Raises
    ------
    ValueError
        Bad ``level``, no residuals, or a NaN residual.
    """
    r = np.abs(np.asarray(residuals, dtype=np.float64))
    if np.isnan(r).any():
        raise ValueError("conformal interval: a calibration residual is NaN")
    k = conformal_rank(r.shape[0], level)
    if k > r.shape[0]:
        return np.full(r.shape[1:], np.inf)
    return np.partition(r, k - 1, axis=0)[k - 1]


def interval_coverage(y: np.ndarray, pred: np.ndarray, half_width: np.ndarray) -> float:
    """Fraction of the values of ``y`` inside ``pred +- half_width``
    (all entries pooled; ``half_width`` broadcasts against ``pred``)."""
    y, pred = np.asarray(y, dtype=np.float64), np.asarray(pred, dtype=np.float64)
    return float(np.mean(np.abs(y - pred) <= half_width))
