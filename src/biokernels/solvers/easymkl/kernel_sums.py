"""Weighted kernel sums and training-kernel sketches for KOMD and EasyMKL.

:func:`weighted_kernel_sum` is ``Σ_r w_r K_r``, bit for bit
:func:`~biokernels.solvers.kernel_lists.combine_kernels`, compiled for a
float64 ``(P, n, n)`` stack; ``_sketches`` fingerprints validated kernels of
one size with one probe vector.
"""

from __future__ import annotations

import numpy as np

from biokernels.solvers.kernel_lists import KernelSketch, _probe, combine_kernels, kernel_sketch

__all__ = ["weighted_kernel_sum"]


def weighted_kernel_sum(Ks, weights) -> np.ndarray:
    """``Σ_r w_r K_r``, bit for bit
    :func:`~biokernels.solvers.kernel_lists.combine_kernels` (the same
    per-element additions in the same order, zero weights skipped).

    A float64 stack ``(P, n, m)`` (any memory layout) is summed by the
    compiled single-pass loop
    (:func:`biokernels.solvers.easymkl_numba.weighted_sum`); anything else (a
    list of arrays) by ``combine_kernels``. The result has ``combine_kernels``'
    memory layout (``zeros_like`` of the first kernel).

    Parameters
    ----------
    Ks : ndarray (P, n, m) or sequence of P (n, m) float64 arrays
        Already validated kernels (finite, equal shapes).
    weights : array (P,)

    Returns
    -------
    ndarray (n, m), float64, a new array
    """
    w = np.asarray(weights, dtype=np.float64)
    if isinstance(Ks, np.ndarray) and Ks.ndim == 3 and Ks.dtype == np.float64 and w.shape == (Ks.shape[0],):
        from biokernels.solvers.easymkl_numba import weighted_sum

        out = np.zeros_like(Ks[0], dtype=np.float64)
        weighted_sum(Ks, np.ascontiguousarray(w), out)
        return out
    return combine_kernels(Ks, w)


def _sketches(Ks: list[np.ndarray], eps: list[float]) -> list[KernelSketch]:
    """``[kernel_sketch(K, e) for K, e in zip(Ks, eps)]`` for validated
    float64 square kernels of one size, the probe vector drawn once."""
    if not Ks or Ks[0].shape[0] < 1:
        return [kernel_sketch(K, e) for K, e in zip(Ks, eps)]
    v = _probe(Ks[0].shape[0])
    return [KernelSketch(diag=K.diagonal().copy(), product=K @ v, scale=float(np.abs(K).max()), eps=float(e))
            for K, e in zip(Ks, eps)]
