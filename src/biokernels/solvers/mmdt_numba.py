"""Compiled (numba) dual coordinate descent of the LS-MMDT transform step.

The same algorithm as the pure-Python/NumPy reference loop of
:func:`biokernels.solvers.mmdt.solve_transform` (``backend="python"``):
Rodner et al. 2013, Eqs. 6-15, with the cached products and the shrinking
rule of Hsieh et al. 2008 (liblinear's ``L2R_L2LOSS_SVC_DUAL``). Only the
inner loops are compiled; set-up, checks and the final exact KKT measure stay
in ``solve_transform``. The coordinate order differs: numba's own Mersenne
Twister, seeded with ``seed``, shuffles where the reference uses a numpy
``Generator``, so the two backends reach the same optimum up to the stopping
tolerance, not the same iterates. Same ``seed`` -> same order for
``lowrank`` and ``explicit``.

Notes: docs/mmdt_notes.md, section "The compiled loop (solvers/mmdt_numba)".
"""

from __future__ import annotations

import time

import numpy as np
from numba import njit, objmode

__all__ = ["transform_cd"]


@njit(cache=True)
def transform_cd(alpha, B, W, H, R, Xt, T, off, QD, xsq, lam, tol, max_iter, shrinking, explicit,
                 seed, epoch_seconds):
    """Run the transform-step coordinate descent in place; numba-compiled.

    Parameters
    ----------
    alpha : float64 array, shape (m, n), C-contiguous
        Dual variables, updated in place (start values in).
    B : float64 array, shape (m, Dt)
        ``B = (alpha * T) Xt`` (Eq. 12) consistent with ``alpha`` on entry;
        updated in place by Eq. 15 (low-rank). Untouched when ``explicit``.
    W : float64 array, shape (D, Dt)
        ``W = H^T B`` on entry; updated in place by Eq. 10 when ``explicit``
        (pass an empty ``(0, 0)`` array otherwise).
    H : float64 array, shape (m, D)
    R : float64 array, shape (m, m)
        ``H H^T``.
    Xt : float64 array, shape (n, Dt)
    T : float64 array, shape (m, n)
        Labels ``t_ij`` in {-1, +1} (Eq. 5).
    off : float64 array, shape (m, n)
        Prior-transform scores ``h_i^T W0 x~_j`` (0 without a prior).
    QD : float64 array, shape (m, n)
        Diagonal ``Qbar_ll = R_ii ||x~_j||^2 + lambda`` (Eq. 14).
    xsq : float64 array, shape (n,)
        ``||x~_j||^2``.
    lam : float
        ``lambda = 1 / (2 C)``.
    tol : float
        Stopping tolerance on the projected-gradient spread (gradient units).
    max_iter : int
        Maximum number of epochs.
    shrinking : bool
    explicit : bool
        Keep ``W`` (Eqs. 7-10) instead of ``B`` (Eqs. 12-15).
    seed : int in [0, 2**32)
        Seeds numba's generator (the coordinate order).
    epoch_seconds : float64 array, shape (>= max_iter,)
        Filled with the wall time of each epoch (s).

    Returns
    -------
    (n_iter, converged, spread, n_visits, n_updates) : (int, bool, float, int, int)
        As in :class:`biokernels.solvers.mmdt.TransformResult`.
    """
    np.random.seed(seed)
    m, n = alpha.shape
    Dt = Xt.shape[1]
    D = H.shape[1]
    active = np.ones((m, n), dtype=np.bool_)
    n_active = m * n
    inf = np.inf
    pg_max_old = inf
    converged = False
    spread = inf
    n_visits = 0
    n_updates = 0
    u = np.empty(m)
    z = np.empty(D)
    idx = np.empty(m, dtype=np.int64)
    it = 0
    while it < max_iter:
        with objmode(t0="float64"):
            t0 = time.perf_counter()
        pg_max_new = -inf
        pg_min_new = inf
        order = np.random.permutation(n)
        for jj in range(n):
            j = order[jj]
            k = 0
            for i in range(m):
                if active[i, j]:
                    idx[k] = i
                    k += 1
            if k == 0:
                continue
            xs = xsq[j]
            if explicit:
                for d in range(D):                    # z = W x~_j
                    s = 0.0
                    for c in range(Dt):
                        s += W[d, c] * Xt[j, c]
                    z[d] = s
            else:
                for i in range(m):                    # u = B x~_j
                    s = 0.0
                    for c in range(Dt):
                        s += B[i, c] * Xt[j, c]
                    u[i] = s
            for q in range(k - 1, 0, -1):             # Fisher-Yates on the active classes
                r = np.random.randint(0, q + 1)
                tmp = idx[q]
                idx[q] = idx[r]
                idx[r] = tmp
            for q in range(k):
                i = idx[q]
                n_visits += 1
                t = T[i, j]
                a = alpha[i, j]
                s = 0.0
                if explicit:
                    for d in range(D):
                        s += H[i, d] * z[d]
                else:
                    for i2 in range(m):
                        s += R[i, i2] * u[i2]
                G = t * (s + off[i, j]) - 1.0 + lam * a          # Eq. 8
                if a == 0.0:
                    if G > pg_max_old:                         # shrink
                        active[i, j] = False
                        n_active -= 1
                        continue
                    PG = G if G < 0.0 else 0.0
                else:
                    PG = G
                if PG > pg_max_new:
                    pg_max_new = PG
                if PG < pg_min_new:
                    pg_min_new = PG
                if abs(PG) > 1e-12:
                    a_new = a - G / QD[i, j]                   # Eq. 9
                    if a_new < 0.0:
                        a_new = 0.0
                    alpha[i, j] = a_new
                    dl = (a_new - a) * t
                    n_updates += 1
                    if explicit:
                        for d in range(D):                     # Eq. 10
                            hd = dl * H[i, d]
                            for c in range(Dt):
                                W[d, c] += hd * Xt[j, c]
                            z[d] += hd * xs
                    else:
                        for c in range(Dt):                    # Eq. 15
                            B[i, c] += dl * Xt[j, c]
                        u[i] += dl * xs
        with objmode(t1="float64"):
            t1 = time.perf_counter()
        epoch_seconds[it] = t1 - t0
        it += 1
        spread = pg_max_new - pg_min_new
        if spread <= tol:
            if n_active == m * n:
                converged = True
                break
            active[:, :] = True
            n_active = m * n
            pg_max_old = inf
            continue
        if shrinking:
            pg_max_old = pg_max_new if pg_max_new > 0 else inf
    return it, converged, spread, n_visits, n_updates
