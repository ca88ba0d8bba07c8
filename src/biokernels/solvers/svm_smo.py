"""The C-SVC dual on a precomputed kernel, many tasks on one kernel, solved
by SMO with warm starts.

The problem is LIBSVM's C-SVC (Chang & Lin 2011, Eq. 2; the SVM of Sun, Ji &
Ye 2008) for labels in {-1, +1} and per-example bounds ``C_i``, with decision
function ``f(x) = sum_i y_i a_i K(x_i, x) - rho``. The solver is LIBSVM's:
SMO with the second-order working-set selection of Fan, Chen & Lin (JMLR 6,
2005, WSS 2), the same update, stopping rule (the maximal violating pair's
gap ``< tol``) and ``rho``. Unlike LIBSVM: no shrinking and no kernel cache
(a dense float64 kernel), warm starts from any feasible ``a0``, and many
tasks (label columns) on one kernel in a thread pool. It stops at a
``tol``-optimal point, not at LIBSVM's; the agreement with LIBSVM is checked
in tests/unit/solvers/test_svm_smo.py.

Notes: docs/diffusion_notes.md, section "The SMO solver (solvers/svm_smo)".
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from numba import njit
from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError

from biokernels.errors import InputError

__all__ = ["SVCDual", "svc_dual", "SMOSVC", "class_bounds"]

#: LIBSVM's TAU: the curvature used when ``K_ii + K_jj - 2 K_ij <= 0``.
TAU = 1e-12


@njit(cache=True, nogil=True)
def _argmin_last(v, pen):
    """``(i, min)`` of ``v + pen`` over all t, the last index of ties; (-1,
    inf) when every value is inf. Four independent running minima (no
    chain of dependent compares through the whole array), merged with the
    same tie rule, so the result equals a sequential ``<=`` scan's."""
    n = v.shape[0]
    b0 = b1 = b2 = b3 = np.inf
    i0 = i1 = i2 = i3 = -1
    m = n - n % 4
    for t in range(0, m, 4):
        x0 = v[t] + pen[t]
        x1 = v[t + 1] + pen[t + 1]
        x2 = v[t + 2] + pen[t + 2]
        x3 = v[t + 3] + pen[t + 3]
        if x0 <= b0:
            b0 = x0
            i0 = t
        if x1 <= b1:
            b1 = x1
            i1 = t + 1
        if x2 <= b2:
            b2 = x2
            i2 = t + 2
        if x3 <= b3:
            b3 = x3
            i3 = t + 3
    for t in range(m, n):
        x = v[t] + pen[t]
        if x <= b0:
            b0 = x
            i0 = t
    best, i = b0, i0
    if b1 < best or (b1 == best and i1 > i):
        best, i = b1, i1
    if b2 < best or (b2 == best and i2 > i):
        best, i = b2, i2
    if b3 < best or (b3 == best and i3 > i):
        best, i = b3, i3
    if best == np.inf:
        return -1, best
    return i, best


@njit(cache=True, nogil=True)
def _wss2(yG, pl, Ki, Kd, Kii, Gmax):
    """The partner ``j`` of WSS 2 (Fan, Chen & Lin 2005): over I_low
    (``pl`` 0) with ``diff = Gmax + yG_t > 0``, the largest
    ``diff^2 / quad``, ``quad = K_ii + K_tt - 2 K_it`` (TAU when not
    positive), the last of ties; and ``Gmax2 = max_{I_low} yG``. Four
    independent lanes, merged with the same rule. Returns (j, Gmax2); j is
    -1 when no example qualifies."""
    n = yG.shape[0]
    g0 = g1 = g2 = g3 = -np.inf
    n0 = n1 = n2 = n3 = 0.0
    d0 = d1 = d2 = d3 = 1.0
    j0 = j1 = j2 = j3 = -1
    m = n - n % 4
    for t0 in range(0, m, 4):   # the lanes written out (numba does not inline a helper here)
        # lane 0
        t = t0 + 0
        w = yG[t] + pl[t]
        if w > g0:
            g0 = w
        diff = Gmax + w
        if diff > 0:
            quad = Kii + Kd[t] - 2.0 * Ki[t]
            if quad <= 0:
                quad = TAU
            dd = diff * diff
            if dd * d0 >= n0 * quad:
                n0 = dd
                d0 = quad
                j0 = t
        # lane 1
        t = t0 + 1
        w = yG[t] + pl[t]
        if w > g1:
            g1 = w
        diff = Gmax + w
        if diff > 0:
            quad = Kii + Kd[t] - 2.0 * Ki[t]
            if quad <= 0:
                quad = TAU
            dd = diff * diff
            if dd * d1 >= n1 * quad:
                n1 = dd
                d1 = quad
                j1 = t
        # lane 2
        t = t0 + 2
        w = yG[t] + pl[t]
        if w > g2:
            g2 = w
        diff = Gmax + w
        if diff > 0:
            quad = Kii + Kd[t] - 2.0 * Ki[t]
            if quad <= 0:
                quad = TAU
            dd = diff * diff
            if dd * d2 >= n2 * quad:
                n2 = dd
                d2 = quad
                j2 = t
        # lane 3
        t = t0 + 3
        w = yG[t] + pl[t]
        if w > g3:
            g3 = w
        diff = Gmax + w
        if diff > 0:
            quad = Kii + Kd[t] - 2.0 * Ki[t]
            if quad <= 0:
                quad = TAU
            dd = diff * diff
            if dd * d3 >= n3 * quad:
                n3 = dd
                d3 = quad
                j3 = t
    for t in range(m, n):
            w = yG[t] + pl[t]
            if w > g0:
                g0 = w
            diff = Gmax + w
            if diff > 0:
                quad = Kii + Kd[t] - 2.0 * Ki[t]
                if quad <= 0:
                    quad = TAU
                dd = diff * diff
                if dd * d0 >= n0 * quad:
                    n0 = dd
                    d0 = quad
                    j0 = t
    Gmax2 = max(max(g0, g1), max(g2, g3))
    num, den, j = _wss2_merge(n0, d0, j0, n1, d1, j1)
    num, den, j = _wss2_merge(num, den, j, n2, d2, j2)
    num, den, j = _wss2_merge(num, den, j, n3, d3, j3)
    return j, Gmax2


@njit(cache=True, nogil=True)
def _wss2_merge(num, den, j, nk, dk, jk):
    """The better of two lanes' partners (larger ``num / den``, ties: the
    larger index; -1 = none)."""
    if jk < 0:
        return num, den, j
    a = nk * den
    b = num * dk
    if j < 0 or a > b or (a == b and jk > j):
        return nk, dk, jk
    return num, den, j


@njit(cache=True, nogil=True)
def _smo_task(K, y, ub, alpha, yG, eps, max_iter):
    """SMO on one task, in place; returns (iterations, converged).

    K (n, n) C-contiguous float64 symmetric; y (n,) float64 in {-1, +1};
    ub (n,) the bounds C_i; alpha (n,) a feasible start; yG (n,) the
    gradient of the start times the labels, ``y_t (Q alpha - 1)_t``.

    Each step is LIBSVM's (``select_working_set`` WSS 2, the clipped
    two-variable update), kept in the form that makes its passes simple:
    with ``yG`` instead of ``G`` (``y_t^2 = 1``, so every value is the same
    as LIBSVM's ``y_t G_t``), ``i = argmin_{I_up} yG``, the partner ``j``
    over ``I_low`` with ``diff = -yG_i + yG_t``, and the membership of I_up
    and I_low held as additive 0/inf penalties that change only at ``i``
    and ``j``; the gradient update is a branch-free pass.
    """
    n = y.shape[0]
    Kd = np.empty(n)
    pu = np.empty(n)                       # 0 in I_up, +inf outside
    pl = np.empty(n)                       # 0 in I_low, -inf outside
    for t in range(n):
        Kd[t] = K[t, t]
        up = alpha[t] < ub[t] if y[t] > 0 else alpha[t] > 0
        low = alpha[t] > 0 if y[t] > 0 else alpha[t] < ub[t]
        pu[t] = 0.0 if up else np.inf
        pl[t] = 0.0 if low else -np.inf
    it = 0
    while it < max_iter:
        # i: the maximal violator -y_i G_i over I_up (LIBSVM: the last of ties)
        i, best = _argmin_last(yG, pu)
        if i < 0:
            return it, True                # I_up empty
        Gmax = -best
        # j: second order (Fan, Chen & Lin 2005, WSS 2) over I_low
        Ki = K[i]
        j, Gmax2 = _wss2(yG, pl, Ki, Kd, Kd[i], Gmax)
        if Gmax + Gmax2 < eps or j == -1:
            return it, True
        it += 1
        Kij = Ki[j]
        Ci = ub[i]
        Cj = ub[j]
        Gi = y[i] * yG[i]
        Gj = y[j] * yG[j]
        old_i = alpha[i]
        old_j = alpha[j]
        if y[i] != y[j]:
            quad = Kd[i] + Kd[j] + 2.0 * (y[i] * y[j] * Kij)
            if quad <= 0:
                quad = TAU
            delta = (-Gi - Gj) / quad
            diff = old_i - old_j
            ai = old_i + delta
            aj = old_j + delta
            if diff > 0:
                if aj < 0:
                    aj = 0.0
                    ai = diff
            elif ai < 0:
                ai = 0.0
                aj = -diff
            if diff > Ci - Cj:
                if ai > Ci:
                    ai = Ci
                    aj = Ci - diff
            elif aj > Cj:
                aj = Cj
                ai = Cj + diff
        else:
            quad = Kd[i] + Kd[j] - 2.0 * (y[i] * y[j] * Kij)
            if quad <= 0:
                quad = TAU
            delta = (Gi - Gj) / quad
            s = old_i + old_j
            ai = old_i - delta
            aj = old_j + delta
            if s > Ci:
                if ai > Ci:
                    ai = Ci
                    aj = s - Ci
            elif aj < 0:
                aj = 0.0
                ai = s
            if s > Cj:
                if aj > Cj:
                    aj = Cj
                    ai = s - Cj
            elif ai < 0:
                ai = 0.0
                aj = s
        alpha[i] = ai
        alpha[j] = aj
        for t in (i, j):
            up = alpha[t] < ub[t] if y[t] > 0 else alpha[t] > 0
            low = alpha[t] > 0 if y[t] > 0 else alpha[t] < ub[t]
            pu[t] = 0.0 if up else np.inf
            pl[t] = 0.0 if low else -np.inf
        # y_t G_t += y_t (Q_ti da_i + Q_tj da_j) = K_ti y_i da_i + K_tj y_j da_j
        di = (ai - old_i) * y[i]
        dj = (aj - old_j) * y[j]
        Kj = K[j]
        for t in range(n):
            yG[t] += Ki[t] * di + Kj[t] * dj
    return it, False


@njit(cache=True, nogil=True)
def _rho(y, ub, alpha, G):
    """LIBSVM's ``Solver::calculate_rho``."""
    n = y.shape[0]
    ubound = np.inf
    lbound = -np.inf
    s = 0.0
    nr_free = 0
    for t in range(n):
        yG = y[t] * G[t]
        if alpha[t] >= ub[t]:
            if y[t] < 0:
                ubound = min(ubound, yG)
            else:
                lbound = max(lbound, yG)
        elif alpha[t] <= 0:
            if y[t] > 0:
                ubound = min(ubound, yG)
            else:
                lbound = max(lbound, yG)
        else:
            nr_free += 1
            s += yG
    if nr_free > 0:
        return s / nr_free
    return (ubound + lbound) / 2.0


@dataclass
class SVCDual:
    """Solutions of :func:`svc_dual` for t tasks on n training examples.

    Attributes
    ----------
    alpha : float64 (n, t)
        The dual variables ``a`` (0 in a column of a task without two classes).
    dual_coef : float64 (n, t)
        ``y_i a_i``: the decision values are ``K_test @ dual_coef - rho``.
    rho : float64 (t,)
        NaN for a task without two classes.
    n_iter : int64 (t,)
        SMO steps per task.
    converged : bool (t,)
        False where ``max_iter`` stopped the task first (or it has one class).
    gap : float
        The stopping tolerance ``tol``.
    """

    alpha: np.ndarray
    dual_coef: np.ndarray
    rho: np.ndarray
    n_iter: np.ndarray
    converged: np.ndarray
    gap: float

    def decision(self, K_test: np.ndarray) -> np.ndarray:
        """Decision values (n_test, t) for ``K_test`` (n_test, n): larger = class 1."""
        return K_test @ self.dual_coef - self.rho


def class_bounds(y: np.ndarray, C: float, class_weight: str | None = None) -> np.ndarray:
    """Per-example bounds ``C_i`` (n,) for 0/1 labels ``y`` (n,): ``C`` for
    every example, or with ``class_weight="balanced"`` ``C n / (2 n_c)`` for
    an example of class c (scikit-learn's ``compute_class_weight``, which
    LIBSVM receives as ``weight_label``/``weight``).

    Raises
    ------
    InputError
        ``C`` not positive and finite, or an unknown ``class_weight``.
    """
    if not (np.isfinite(C) and C > 0):
        raise InputError(f"svc_dual: C must be a positive finite number, got {C!r}")
    if class_weight is None:
        return np.full(y.shape[0], float(C))
    if class_weight != "balanced":
        raise InputError(f"svc_dual: class_weight must be None or 'balanced', got {class_weight!r}")
    pos = y > 0
    n, n_pos = y.shape[0], int(pos.sum())
    w_pos = n / (2.0 * n_pos) if n_pos else 1.0
    w_neg = n / (2.0 * (n - n_pos)) if n - n_pos else 1.0
    return np.where(pos, C * w_pos, C * w_neg)


def svc_dual(K: np.ndarray, Y: np.ndarray, C: float, *, class_weight: str | None = None,
             alpha0: np.ndarray | None = None, tol: float = 1e-3, max_iter: int | None = None,
             n_jobs: int = 1) -> SVCDual:
    """Solve the C-SVC dual for every column of ``Y`` on one kernel.

    Parameters
    ----------
    K : array (n, n)
        Training kernel, symmetric (float64; copied only when not
        C-contiguous float64).
    Y : array (n, t)
        0/1 labels per task (1 = positive). A column with one class is
        skipped (``rho`` NaN, ``converged`` False).
    C : float > 0
    class_weight : None or "balanced"
        As scikit-learn's ``SVC`` (:func:`class_bounds`).
    alpha0 : array (n, t), optional
        Warm start: clipped to ``[0, C_i]`` (rounding of a scaled or
        averaged start) and then used as it is; it must satisfy
        ``sum_i y_i a_i = 0`` to within ``1e-9 (1 + sum_i C_i)`` per task.
        None: the zero start (LIBSVM's).
    tol : float > 0
        Stopping gap ``m(a) - M(a) < tol`` (LIBSVM ``-e``; scikit-learn's
        default 1e-3).
    max_iter : int, optional
        SMO steps per task; None: LIBSVM's ``max(10**7, 100 n)``.
    n_jobs : int
        Threads over tasks (the compiled loop releases the GIL); results do
        not depend on it.

    Returns
    -------
    SVCDual

    Raises
    ------
    InputError
        Shapes differ, ``K`` not square or not finite, labels not 0/1, or
        an infeasible warm start.
    """
    K = np.ascontiguousarray(K, dtype=np.float64)
    Y = np.asarray(Y)
    if Y.ndim == 1:
        Y = Y[:, None]
    n = K.shape[0]
    if K.ndim != 2 or K.shape[1] != n or Y.shape[0] != n:
        raise InputError(f"svc_dual: K must be (n, n) and Y (n, t); got K {K.shape}, Y {Y.shape}")
    if not np.isin(Y, (0, 1)).all():
        raise InputError("svc_dual: Y must hold 0/1 labels")
    if not np.isfinite(K).all():
        raise InputError("svc_dual: K contains NaN or infinity")
    if not (tol > 0):
        raise InputError(f"svc_dual: tol must be > 0, got {tol!r}")
    t = Y.shape[1]
    max_iter = int(max(10 ** 7, 100 * n) if max_iter is None else max_iter)
    sign = np.where(Y > 0, 1.0, -1.0)                         # (n, t)
    UB = np.column_stack([class_bounds(Y[:, k], C, class_weight) for k in range(t)]) if t else np.empty((n, 0))
    ok = (Y.min(axis=0) != Y.max(axis=0)) if n else np.zeros(t, bool)
    if alpha0 is None:
        A = np.zeros((n, t))
        G = -np.ones((n, t))
    else:
        A = np.clip(np.asarray(alpha0, dtype=np.float64), 0.0, UB)
        if A.shape != (n, t):
            raise InputError(f"svc_dual: alpha0 must be {(n, t)}, got {A.shape}")
        resid = np.abs((sign * A).sum(axis=0))
        bad = np.flatnonzero(ok & (resid > 1e-9 * (1.0 + UB.sum(axis=0))))
        if bad.size:
            raise InputError(f"svc_dual: the warm start of task column(s) {bad[:5].tolist()} breaks "
                             f"sum_i y_i a_i = 0 (|residual| up to {resid[bad].max():.3g})")
        A[:, ~ok] = 0.0
        G = sign * (K @ (sign * A)) - 1.0                     # Q a - e, all tasks in one GEMM
    # per-task rows, contiguous for the compiled loop
    AT, GT = np.ascontiguousarray(A.T), np.ascontiguousarray(G.T)
    ST, UT = np.ascontiguousarray(sign.T), np.ascontiguousarray(UB.T)
    n_iter = np.zeros(t, dtype=np.int64)
    conv = np.zeros(t, dtype=bool)
    rho = np.full(t, np.nan)

    def one(k):
        yG = ST[k] * GT[k]
        n_iter[k], conv[k] = _smo_task(K, ST[k], UT[k], AT[k], yG, float(tol), max_iter)
        rho[k] = _rho(ST[k], UT[k], AT[k], ST[k] * yG)

    todo = np.flatnonzero(ok).tolist()
    if n_jobs > 1 and len(todo) > 1:
        with ThreadPoolExecutor(max_workers=min(int(n_jobs), len(todo))) as pool:
            list(pool.map(one, todo))
    else:
        for k in todo:
            one(k)
    alpha = AT.T.copy()
    return SVCDual(alpha, sign * alpha, rho, n_iter, conv, float(tol))


class SMOSVC(BaseEstimator):
    """A scikit-learn C-SVC on a precomputed kernel solved by
    :func:`svc_dual` (one task): ``fit(K, y)`` with 0/1 labels,
    ``decision_function(K_test)`` (larger = class 1; NotFittedError before
    ``fit``); its parameters round-trip through ``get_params`` /
    ``set_params`` / ``clone``. The estimator of
    ``diffusion.classifier_settings.svm.solver: smo``.

    Parameters
    ----------
    C : float > 0
    class_weight : None or "balanced"
    tol : float
        As :func:`svc_dual`.

    Attributes after ``fit``: ``alpha_`` (n,), ``dual_coef_`` (n,),
    ``intercept_`` (``-rho``), ``n_iter_``, ``converged_``.
    """

    def __init__(self, C: float = 1.0, class_weight: str | None = None, tol: float = 1e-3):
        self.C = C
        self.class_weight = class_weight
        self.tol = tol

    def fit(self, K: np.ndarray, y: np.ndarray, alpha0: np.ndarray | None = None) -> SMOSVC:
        """Fit on the (n, n) kernel and 0/1 labels (n,); ``alpha0`` (n,): a warm start.

        Raises
        ------
        InputError
            As :func:`svc_dual`, or ``y`` without two classes.
        """
        y = np.asarray(y).ravel()
        if y.size == 0 or y.min() == y.max():
            raise InputError("SMOSVC.fit: the labels need two classes")
        sol = svc_dual(K, y[:, None], self.C, class_weight=self.class_weight, tol=self.tol,
                       alpha0=None if alpha0 is None else np.asarray(alpha0, dtype=np.float64)[:, None])
        self.alpha_ = sol.alpha[:, 0]
        self.dual_coef_ = sol.dual_coef[:, 0]
        self.intercept_ = -float(sol.rho[0])
        self.n_iter_ = int(sol.n_iter[0])
        self.converged_ = bool(sol.converged[0])
        return self

    def decision_function(self, K_test: np.ndarray) -> np.ndarray:
        """Decision values (n_test,) of the (n_test, n) kernel against the training examples."""
        if not hasattr(self, "dual_coef_"):
            raise NotFittedError("This SMOSVC instance is not fitted yet; call fit(K, y) before decision_function")
        return np.asarray(K_test, dtype=np.float64) @ self.dual_coef_ + self.intercept_
