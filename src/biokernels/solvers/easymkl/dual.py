"""The KOMD dual QP (1) and its SMO solver.

``min (1 - λ) γ' Y K Y γ + λ ||γ||²`` over two simplices (one per class),
solved by SMO with the second-order working-set rule of Fan, Chen & Lin
(2005) and an exact line search, staged with an exact polish on the support
(a primal active-set refinement). The SMO loop runs compiled
(:mod:`biokernels.solvers.easymkl_numba`) or as the Python/NumPy reference
here. Problem, solver and backends: ``docs/easymkl_notes.md``.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import scipy.linalg

from biokernels.errors import InputError
from biokernels.solvers.checks import check_lam

__all__ = ["komd_dual", "BACKENDS"]

#: SMO loop of :func:`komd_dual`: compiled (numba) or the pure-Python reference.
BACKENDS = ("numba", "python")


def _check_backend(backend) -> str:
    if backend not in BACKENDS:
        raise InputError(f"backend: expected one of {BACKENDS}, got {backend!r}")
    return backend


def _solve_on_support(Q: np.ndarray, pos: np.ndarray, S: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Minimiser of (1) restricted to ``S`` without the sign constraints.

    Solves the KKT system ``2 Q_SS γ_S - A' ν = 0, A γ_S = 1`` (A: class
    indicators). Returns (γ_S, ν) or None when a class is missing from S.
    """
    s_pos = pos[S]
    if not s_pos.any() or s_pos.all():
        return None
    m = S.size
    KKT = np.zeros((m + 2, m + 2))
    KKT[:m, :m] = 2.0 * Q[np.ix_(S, S)]
    KKT[:m, m] = -s_pos.astype(float)
    KKT[:m, m + 1] = -(~s_pos).astype(float)
    KKT[m, :m] = s_pos
    KKT[m + 1, :m] = ~s_pos
    rhs = np.zeros(m + 2)
    rhs[m:] = 1.0
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", scipy.linalg.LinAlgWarning)
            sol = scipy.linalg.solve(KKT, rhs, check_finite=False)
    except (np.linalg.LinAlgError, scipy.linalg.LinAlgWarning):
        sol = np.linalg.lstsq(KKT, rhs, rcond=None)[0]
    if not np.isfinite(sol).all():
        return None
    return sol[:m], sol[m:]


def _polish(Q: np.ndarray, pos: np.ndarray, gamma: np.ndarray, eps: float,
            max_rounds: int = 12) -> np.ndarray | None:
    """Primal active-set refinement from the support of ``gamma``.

    Each round solves (1) on the working set exactly; indices with negative
    values leave it, indices whose gradient is below their class multiplier
    (by more than ``eps``) enter it. Returns a feasible point (the caller
    checks optimality) or None.
    """
    S = np.flatnonzero(gamma > 0)
    for _ in range(max_rounds):
        res = _solve_on_support(Q, pos, S)
        if res is None:
            return None
        gS, nu = res
        if gS.min() < -1e-13:
            S = S[gS > 0]
            continue
        out = np.zeros_like(gamma)
        out[S] = np.maximum(gS, 0.0)
        for c in (pos, ~pos):
            out[c] /= out[c].sum()
        g = 2.0 * (Q @ out)
        nu_i = np.where(pos, nu[0], nu[1])
        enter = np.flatnonzero((out == 0) & (g < nu_i - eps))
        if enter.size == 0:
            return out
        S = np.union1d(S, enter)
    return None


def _kkt_violation(g: np.ndarray, gamma: np.ndarray, pos: np.ndarray) -> float:
    """max over classes of (max gradient on the support - min gradient): 0 at the optimum."""
    v = 0.0
    for c in (pos, ~pos):
        gc, sc = g[c], gamma[c] > 0
        v = max(v, float(gc[sc].max() - gc.min()))
    return v


def _smo_python(Q: np.ndarray, diag: np.ndarray, gamma: np.ndarray, g: np.ndarray, classes: list,
                eps_stage: float, tau: float, it: int, max_iter: int) -> int:
    """SMO steps on (1) in place until the KKT spread is ``<= eps_stage`` (the
    reference loop; :func:`biokernels.solvers.easymkl_numba.smo_loop` is the
    same loop compiled). Returns the step count."""
    while it < max_iter:
        best = None
        for idx in classes:
            gc = g[idx]
            up = np.where(gamma[idx] > 0, gc, -np.inf)
            ii = int(np.argmax(up))
            gi = gc[ii]
            if gi - gc.min() <= eps_stage:
                continue
            i = idx[ii]
            b = gi - gc                                    # > 0 where moving mass i -> j helps
            a = np.maximum(diag[i] + diag[idx] - 2.0 * Q[i, idx], tau)
            score = np.where(b > 0, b * b / a, -np.inf)
            jj = int(np.argmax(score))
            if best is None or score[jj] > best[0]:
                best = (score[jj], i, idx[jj], b[jj], a[jj])
        if best is None:
            break
        _, i, j, b, a = best
        t = min(gamma[i], b / (2.0 * a))
        gamma[i] -= t
        gamma[j] += t
        if gamma[i] < 1e-300:
            gamma[i] = 0.0
        g += (2.0 * t) * (Q[j] - Q[i])                    # Q symmetric: rows = columns
        it += 1
    return it


def komd_dual(K, y_pm, lam: float, *, tol: float = 1e-9, max_iter: int | None = None,
              polish: bool = True, backend: str = "numba") -> tuple[np.ndarray, dict]:
    """Solve the KOMD problem (1) by SMO plus an exact polish on the support.

    Parameters
    ----------
    K : ndarray, shape (n, n), float64
        Symmetric PSD kernel (not checked here; the estimators check).
    y_pm : ndarray, shape (n,)
        Labels in {+1, -1}, both present.
    lam : float
        λ in [0, 1].
    tol : float
        SMO stops when the maximal KKT violation (gradient spread on the
        support, within a class) is ``<= tol * max(1, max diag Q)``.
    max_iter : int, optional
        SMO step limit; default ``max(10_000, 100 n)``.
    polish : bool
        Solve the equality-constrained QP on the final support exactly.
    backend : {"numba", "python"}, default "numba"
        The SMO loop compiled by numba
        (:func:`biokernels.solvers.easymkl_numba.smo_loop`) or the
        pure-Python/NumPy reference loop; the same operations in the same
        order.

    Returns
    -------
    gamma : ndarray, shape (n,), float64
        γ*, non-negative, summing to 1 over each class.
    info : dict
        ``objective`` (value of (1)), ``iterations``, ``kkt_violation``,
        ``polished`` (bool), ``seconds``.

    Raises
    ------
    InputError
        ``lam`` outside [0, 1], a class without examples, or an unknown
        ``backend``.
    """
    t0 = time.perf_counter()
    lam = check_lam(lam, interval="[0, 1]")
    _check_backend(backend)
    K = np.asarray(K, dtype=np.float64)
    y = np.asarray(y_pm, dtype=np.float64)
    n = y.shape[0]
    pos = y > 0
    n_pos, n_neg = int(pos.sum()), int((~pos).sum())
    if n_pos == 0 or n_neg == 0:
        raise InputError(f"KOMD needs both classes, got {n_pos} positive and {n_neg} negative")
    # Q = (1-λ) Y K Y + λ I, built in place.
    Q = np.multiply(K, np.outer(y, y))
    Q *= 1.0 - lam
    Q.flat[:: n + 1] += lam
    diag = Q.diagonal().copy()
    gamma = np.where(pos, 1.0 / n_pos, 1.0 / n_neg)
    g = 2.0 * (Q @ gamma)
    eps = tol * max(1.0, float(diag.max()))
    tau = 1e-12 * max(1.0, float(diag.max()))
    if max_iter is None:
        max_iter = max(10_000, 100 * n)
    classes = [np.flatnonzero(pos), np.flatnonzero(~pos)]
    it = 0
    polished = False
    # Staged: SMO to a loose tolerance, then try the exact polish on the current
    # support; if that is not yet optimal, tighten and continue.
    stages = [s for s in (1e-3, 1e-5, 1e-7) if s > tol] + [tol] if polish else [tol]
    for stage_tol in stages:
        eps_stage = stage_tol * max(1.0, float(diag.max()))
        if backend == "numba":
            from biokernels.solvers.easymkl_numba import smo_loop

            it = smo_loop(Q, diag, gamma, g, classes[0], classes[1], eps_stage, tau, it, max_iter)
        else:
            it = _smo_python(Q, diag, gamma, g, classes, eps_stage, tau, it, max_iter)
        if polish:
            cand = _polish(Q, pos, gamma, eps)
            if cand is not None:
                g_c = 2.0 * (Q @ cand)
                if _kkt_violation(g_c, cand, pos) <= eps:
                    gamma, g, polished = cand, g_c, True
                    break
    viol = _kkt_violation(g, gamma, pos)
    obj = 0.5 * float(gamma @ g)
    return gamma, {"objective": obj, "iterations": it, "kkt_violation": viol, "polished": polished,
                   "seconds": time.perf_counter() - t0}
