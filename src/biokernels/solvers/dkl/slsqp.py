"""The paper's DKL solver (SQP, like MATLAB's fmincon) and the common start.

:func:`scipy.optimize.minimize` with ``method="SLSQP"`` and the analytic
gradient, the objective scaled by its starting value and restarted from its
own solution while it still improves; both solvers start from
``_initial_point`` (best of the uniform weights and the vertices, rescaled for
the unconstrained variants). Details: ``docs/diffusion_notes.md``.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.optimize import minimize, minimize_scalar

from biokernels.solvers.dkl.objective import _TINY, _Objective

__all__: list[str] = []


def _initial_point(obj: _Objective, constraints: str) -> np.ndarray:
    """Common starting point of both solvers.

    The best of the uniform weights ``1/p`` and the p vertices ``e_i`` of the
    simplex (all evaluated in one O(p n) pass); for the unconstrained variants
    then multiplied by the best scalar factor (:func:`_best_scale`).
    """
    p = obj.S.shape[0]
    G = obj.S + obj.lam  # row i: spectrum of K~_i + lam I
    fv = (obj.c / G).sum(axis=1)
    if obj.log_term:
        fv = fv + obj.t * np.log(G).sum(axis=1)
    uniform = np.full(p, 1.0 / p)
    i = int(np.argmin(fv))
    if fv[i] < obj.value(uniform):
        alpha0 = np.zeros(p)
        alpha0[i] = 1.0
    else:
        alpha0 = uniform
    if constraints != "simplex":
        alpha0 = _best_scale(obj, alpha0)
    return alpha0


def _best_scale(obj: _Objective, alpha: np.ndarray) -> np.ndarray:
    """``s* alpha`` with ``s* = argmin_s f(s alpha)`` (1-D search on log s).

    Starting point of both solvers for the unconstrained variants: the
    optimum's scale (about ``||A||_F^2 / t``) is far from ``sum(alpha) = 1``.
    """
    res = minimize_scalar(lambda z: obj.value(np.exp(z) * alpha), bounds=(-30.0, 30.0),
                          method="bounded", options={"xatol": 1e-6})
    z = float(res.x) if obj.value(np.exp(res.x) * alpha) <= obj.value(alpha) else 0.0
    return np.exp(z) * alpha


def _slsqp_run(obj: _Objective, alpha0: np.ndarray, constraints: str, tol: float,
               max_iter: int):
    f0 = obj.value(alpha0)
    scale = max(abs(f0), _TINY)

    def fun(a):
        f, G = obj.value_grad(a)
        if not np.isfinite(f):  # outside g > 0 (only possible for constraints="none")
            return 1e30, np.zeros_like(a)
        return f / scale, G / scale

    p = alpha0.size
    cons: list[dict] = []
    bounds = None
    if constraints in ("simplex", "nonneg"):
        bounds = [(0.0, None)] * p
    if constraints == "simplex":
        cons = [{"type": "eq", "fun": lambda a: np.array([a.sum() - 1.0]),
                 "jac": lambda a: np.ones((1, p))}]
    elif constraints == "none":
        S, lam = obj.S, obj.lam
        cons = [{"type": "ineq", "fun": lambda a: (a @ S + lam) - 1e-3 * lam,
                 "jac": lambda a: S.T}]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        res = minimize(fun, alpha0, jac=True, method="SLSQP", bounds=bounds, constraints=cons,
                       options={"ftol": tol, "maxiter": max_iter})
    alpha = np.asarray(res.x, dtype=np.float64)
    if constraints != "none":
        alpha = np.maximum(alpha, 0.0)
    if constraints == "simplex":
        alpha /= alpha.sum()
    return alpha, obj.value(alpha), int(res.nit), bool(res.success)


def _slsqp(obj: _Objective, alpha0: np.ndarray, constraints: str, tol: float, max_iter: int,
           max_restarts: int = 5):
    """scipy SLSQP with the analytic gradient, restarted from its own solution
    (fresh BFGS matrix, objective rescaled by its current value) while a run
    still lowers ``f`` by more than ``tol`` relatively.

    Returns (alpha, f, total major iterations, success of the last run).
    """
    alpha, f = alpha0, obj.value(alpha0)
    nit_total, ok = 0, False
    for _ in range(1 + max_restarts):
        a_new, f_new, nit, ok = _slsqp_run(obj, alpha, constraints, tol, max_iter - nit_total)
        nit_total += nit
        improved = f_new < f - tol * abs(f)
        if f_new <= f:
            alpha, f = a_new, f_new
        if not improved or nit_total >= max_iter:
            break
    return alpha, f, nit_total, ok
