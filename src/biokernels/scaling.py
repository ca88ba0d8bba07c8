"""Logarithmic scaling laws ``y = a log2(n) + b`` of transferred kernel
predictors (Radhakrishnan et al. 2023, Methods "Projection scaling laws":
linear regression of a metric on log2 of the number of target samples, its
R², and the error when a fit on the first points predicts the last one)."""

from __future__ import annotations

import numpy as np
from scipy import stats


def fit_log2_law(n, y) -> dict[str, float]:
    """Least-squares fit of ``y = a log2(n) + b``.

    Parameters
    ----------
    n : array, shape (k,)
        Numbers of target samples, all > 0.
    y : array, shape (k,)
        Metric at each n (e.g. mean R² averaged over seeds).

    Returns
    -------
    dict with ``a`` (slope per doubling of n), ``b``, ``r2`` (coefficient of
    determination of the fit) and ``k`` (points used).

    Raises
    ------
    ValueError
        Fewer than 3 points, non-positive n, fewer than 2 distinct n, or
        NaN in y.

    Source: ``scipy.stats.linregress`` on (log2 n, y).
    """
    n = np.asarray(n, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if n.shape != y.shape or n.ndim != 1:
        raise ValueError(f"n and y must be 1-d of equal length, got {n.shape} and {y.shape}")
    if len(n) < 3:
        raise ValueError(f"a log2 law needs at least 3 points, got {len(n)}")
    if (n <= 0).any() or len(np.unique(n)) < 2:
        raise ValueError("n must be positive with at least 2 distinct values")
    if not np.isfinite(y).all():
        raise ValueError("y holds NaN or inf")
    fit = stats.linregress(np.log2(n), y)
    r2 = float(fit.rvalue ** 2) if np.ptp(y) > 0 else float("nan")  # a constant curve has no R²
    return {"a": float(fit.slope), "b": float(fit.intercept), "r2": r2, "k": int(len(n))}


def predict_log2_law(fit: dict[str, float], n) -> np.ndarray:
    """Evaluate a fitted law at ``n``: ``a log2(n) + b``, shape of ``n``."""
    return fit["a"] * np.log2(np.asarray(n, dtype=np.float64)) + fit["b"]


def extrapolation_error(n, y, first: int) -> dict[str, float]:
    """Fit the law on the first ``first`` points (smallest n) and predict the
    last (largest n), as the paper does with the first 5 (Fig. 2b) or first
    10 (SI Fig. S9a) points.

    Returns
    -------
    dict with ``predicted``, ``observed``, ``error`` (predicted - observed),
    ``abs_error`` and the fit's ``a``, ``b``.

    Raises
    ------
    ValueError
        ``first`` < 3 or not smaller than the number of points.
    """
    n = np.asarray(n, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    order = np.argsort(n, kind="stable")
    n, y = n[order], y[order]
    if not 3 <= first < len(n):
        raise ValueError(f"first must be in [3, {len(n) - 1}], got {first}")
    fit = fit_log2_law(n[:first], y[:first])
    pred = float(predict_log2_law(fit, n[-1]))
    return {"predicted": pred, "observed": float(y[-1]), "error": pred - float(y[-1]),
            "abs_error": abs(pred - float(y[-1])), "a": fit["a"], "b": fit["b"]}


def log_spaced_sizes(n_max: int, k: int, n_min: int = 10) -> list[int]:
    """``k`` distinct integer sample sizes from ``n_min`` to ``n_max``,
    evenly spaced in log2 (so the law's points are evenly spread).

    Raises
    ------
    ValueError
        If fewer than ``k`` distinct integers lie in ``[n_min, n_max]``.
    """
    if n_min < 1 or k < 2:
        raise ValueError(f"need n_min >= 1 and k >= 2, got n_min={n_min}, k={k}")
    if n_max - n_min + 1 < k:
        raise ValueError(f"cannot place {k} distinct sizes in [{n_min}, {n_max}]")
    sizes = np.unique(np.round(np.logspace(np.log2(n_min), np.log2(n_max), k, base=2)).astype(int))
    extra = n_min
    while len(sizes) < k:  # rounding merged neighbours at the small end
        sizes = np.unique(np.append(sizes, extra))
        extra += 1
    return [int(s) for s in sizes]
