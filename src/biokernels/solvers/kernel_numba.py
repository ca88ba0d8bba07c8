"""Compiled (numba) loops over precomputed kernels: the symmetry check and fold slicing.

:func:`max_asymmetry` is the ``max |K - K'|`` of
:func:`biokernels.solvers.kernel_lists.check_kernel_list` in one pass over
the upper triangle, in tiles, with no temporary; :func:`gather` is
``K[np.ix_(rows, cols)]``, the fold kernels of a cross-validation on a
precomputed kernel. Both return exactly what the NumPy expressions return
(a maximum and a copy: no rounding). Measured by benchmarks/bench_mkl.py.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["max_asymmetry", "gather"]


@njit(cache=True)
def max_asymmetry(A, tile):
    """``max |A_ij - A_ji|`` of a finite square float64 array (any layout), over
    ``tile x tile`` tiles of the upper triangle; 0.0 for n < 2. A NaN entry is
    not seen (check finiteness first)."""
    n = A.shape[0]
    m = 0.0
    for i0 in range(0, n, tile):
        i1 = min(i0 + tile, n)
        for j0 in range(i0, n, tile):
            j1 = min(j0 + tile, n)
            for i in range(i0, i1):
                for j in range(max(j0, i + 1), j1):
                    d = abs(A[i, j] - A[j, i])
                    if d > m:
                        m = d
    return m


@njit(cache=True)
def gather(K, rows, cols):
    """``K[np.ix_(rows, cols)]`` as a new C-contiguous float64 array
    (``rows``, ``cols``: int64 index arrays, in range)."""
    out = np.empty((rows.size, cols.size))
    for a in range(rows.size):
        Ka = K[rows[a]]
        for b in range(cols.size):
            out[a, b] = Ka[cols[b]]
    return out
