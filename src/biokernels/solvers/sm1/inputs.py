"""Inputs of SM1: the factor ``K = F F'`` of a kernel's training block
(:func:`psd_factor`) and the checks of labels and traces.
"""

from __future__ import annotations

import numpy as np

__all__ = ["psd_factor"]


def psd_factor(K, rtol: float = 1e-12) -> np.ndarray:
    """Factor a symmetric PSD matrix ``K ≈ F F'`` by its eigendecomposition.

    Eigen-components with eigenvalue ``<= rtol * λ_max`` are dropped, so ``F``
    has as few columns as the numerical rank of ``K``.

    Parameters
    ----------
    K : array, shape (n, n)
        Symmetric positive semi-definite (e.g. a kernel's training block).
    rtol : float
        Relative eigenvalue threshold, in [0, 1).

    Returns
    -------
    F : ndarray of float64, shape (n, r)
        ``F = V_r diag(sqrt(λ_r))``, ``r`` = number of kept eigenvalues
        (at least 1 unless ``K`` is zero, then ``r = 0``).

    Raises
    ------
    ValueError
        If ``K`` is not square, not finite, not symmetric (to 1e-8
        relative), or has an eigenvalue below ``-1e-8 * λ_max`` (not PSD).
    """
    K = np.asarray(K, dtype=np.float64)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"kernel: expected a square (n, n) matrix, got shape {K.shape}")
    if not np.all(np.isfinite(K)):
        raise ValueError("kernel: holds NaN or infinite entries")
    scale = max(np.abs(K).max(), np.finfo(float).tiny) if K.size else 1.0
    if np.abs(K - K.T).max(initial=0.0) > 1e-8 * scale:
        raise ValueError("kernel: not symmetric")
    w, V = np.linalg.eigh((K + K.T) / 2)
    top = w.max(initial=0.0)
    if w.size and w.min() < -1e-8 * max(top, scale):
        raise ValueError(f"kernel: not positive semi-definite (eigenvalue {w.min():.3g}, "
                         f"largest {top:.3g})")
    keep = w > rtol * top if top > 0 else np.zeros(w.size, dtype=bool)
    return V[:, keep] * np.sqrt(w[keep])


def _as_labels(y) -> np.ndarray:
    y = np.asarray(y, dtype=np.float64)
    if y.ndim != 1:
        raise ValueError(f"y: expected shape (n_train,), got {y.shape}")
    vals = set(np.unique(y).tolist())
    if not vals <= {-1.0, 1.0}:
        raise ValueError(f"y: labels must be -1 or +1, found {sorted(vals)}")
    if len(vals) < 2:
        raise ValueError("y: needs both classes (+1 and -1) among the training proteins")
    return y


def _as_traces(traces, p: int) -> np.ndarray:
    r = np.asarray(traces, dtype=np.float64)
    if r.shape != (p,):
        raise ValueError(f"traces: expected one trace per kernel, shape ({p},), got {r.shape}")
    if not np.all(np.isfinite(r)) or np.any(r <= 0):
        raise ValueError(f"traces: must be finite and > 0, got {r}")
    return r
