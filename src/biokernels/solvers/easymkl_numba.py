"""Compiled (numba) SMO loop of the KOMD dual (1) of :mod:`biokernels.solvers.easymkl`.

The same algorithm and the same floating-point operations, in the same
order, as the pure-Python/NumPy loop of
:func:`biokernels.solvers.easymkl.komd_dual` (``backend="python"``, the
reference): per step, for each class (positive first), the index ``i`` of the
largest gradient on the support (first of ties, as ``np.argmax``), the
second-order partner ``j`` maximising ``b^2 / a`` with ``b = g_i - g_j > 0``,
``a = max(Q_ii + Q_jj - 2 Q_ij, tau)`` (Fan, Chen & Lin 2005), the class with
the larger score, the exact line search ``t = min(gamma_i, b / (2a))`` and the
rank-2 gradient update ``g += 2t (Q_j - Q_i)``. Only this loop is compiled;
the set-up, the staging, the exact polish on the support and the KKT measure
stay in ``komd_dual``.

No ``fastmath``: every sum and product is evaluated as written, so the
compiled loop makes the same choices and returns the same iterate as the
reference loop (bit for bit on the problems of tests/unit/solvers/test_easymkl.py;
the test asserts agreement within the solver's stopping tolerance).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["smo_loop", "weighted_sum"]


@njit(cache=True)
def smo_loop(Q, diag, gamma, g, idx_pos, idx_neg, eps_stage, tau, it, max_iter):
    """Run SMO steps on (1) in place until the KKT spread is ``<= eps_stage``.

    Parameters
    ----------
    Q : float64 array, shape (n, n), C-contiguous
        ``(1 - lam) Y K Y + lam I`` (symmetric).
    diag : float64 array, shape (n,)
        ``diag(Q)``.
    gamma : float64 array, shape (n,)
        Feasible start (non-negative, sums to 1 per class); updated in place.
    g : float64 array, shape (n,)
        Gradient ``2 Q gamma`` consistent with ``gamma``; updated in place.
    idx_pos, idx_neg : int64 arrays
        Indices of the positive and the negative examples (ascending).
    eps_stage : float
        Stop when, in both classes, ``max_{gamma_i > 0} g_i - min g <= eps_stage``.
    tau : float
        Lower bound of the curvature ``a``.
    it : int
        Steps already taken (the count continues across stages).
    max_iter : int
        Step limit (total).

    Returns
    -------
    int
        The step count after this call.
    """
    n = g.shape[0]
    while it < max_iter:
        found = False
        best_score = 0.0
        bi = -1
        bj = -1
        bb = 0.0
        ba = 0.0
        for c in range(2):
            idx = idx_pos if c == 0 else idx_neg
            m = idx.shape[0]
            # i: argmax over the support of g (np.argmax: first of ties; -inf off the support)
            ii = 0
            gi = g[idx[0]] if gamma[idx[0]] > 0 else -np.inf
            gmin = g[idx[0]]
            for k in range(1, m):
                v = g[idx[k]]
                if v < gmin:
                    gmin = v
                u = v if gamma[idx[k]] > 0 else -np.inf
                if u > gi:
                    gi = u
                    ii = k
            if gi - gmin <= eps_stage:
                continue
            i = idx[ii]
            jj = 0
            sj = -np.inf
            b_j = 0.0
            a_j = 0.0
            for k in range(m):
                j = idx[k]
                b = gi - g[j]
                a = diag[i] + diag[j] - 2.0 * Q[i, j]
                if a < tau:
                    a = tau
                s = b * b / a if b > 0 else -np.inf
                if k == 0 or s > sj:
                    sj = s
                    jj = k
                    b_j = b
                    a_j = a
            if not found or sj > best_score:
                found = True
                best_score = sj
                bi = i
                bj = idx[jj]
                bb = b_j
                ba = a_j
        if not found:
            break
        t = min(gamma[bi], bb / (2.0 * ba))
        gamma[bi] -= t
        gamma[bj] += t
        if gamma[bi] < 1e-300:
            gamma[bi] = 0.0
        tt = 2.0 * t
        for k in range(n):
            g[k] += tt * (Q[bj, k] - Q[bi, k])
        it += 1
    return it


@njit(cache=True)
def weighted_sum(K, w, out):
    """``out += Σ_r w_r K_r`` in place, in the order r = 0..P-1 per element,
    skipping ``w_r == 0``: per element the same operations in the same order
    as :func:`biokernels.solvers.kernel_lists.combine_kernels` (``out += w_r *
    K_r`` from zeros), so the same bits, in one pass without temporaries.

    Any memory layout: where the kernel index has the smallest stride (e.g.
    ``K[:, rows[:, None], cols]``, the inner-fold kernels of PIMKL) the sum
    over r is the inner loop, otherwise the outer one; the per-element order
    is r = 0..P-1 either way.

    Parameters
    ----------
    K : float64 array, shape (P, n, m)
    w : float64 array, shape (P,)
    out : float64 array, shape (n, m)
        Zeros on entry for ``combine_kernels``' result.
    """
    P, n, m = K.shape
    s0, s1, s2 = K.strides
    if abs(s0) < abs(s1) and abs(s0) < abs(s2):
        for i in range(n):
            for j in range(m):
                acc = out[i, j]
                for r in range(P):
                    wr = w[r]
                    if wr != 0:
                        acc += wr * K[r, i, j]
                out[i, j] = acc
    else:
        for r in range(P):
            wr = w[r]
            if wr != 0:
                for i in range(n):
                    for j in range(m):
                        out[i, j] += wr * K[r, i, j]
