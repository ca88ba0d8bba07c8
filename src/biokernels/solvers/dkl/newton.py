"""The "fast" DKL solver: projected Newton with an exact active-set QP.

Each outer iteration minimises the (convexified, ridged) Newton model exactly
over the simplex or the orthant by a primal active-set method (Nocedal &
Wright, Alg. 16.3), then backtracks along the step (Armijo); once the active
set settles, formulations with the log term take the exact-Hessian Newton
step on the face. ``unconstrained="free"`` uses a Levenberg-Marquardt-damped
Newton method on ``g > 0``. Design and behaviour: ``docs/diffusion_notes.md``.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg

from biokernels.solvers.dkl.objective import _kkt_from_grad, _Objective

__all__: list[str] = []


class _LazyHessian:
    """Columns of the ridged model Hessian ``S diag(w) S^T + rel diag(.)``,
    computed on demand (O(p n) per column) and cached.

    The active-set QP only touches the columns of the variables that are or
    become free, usually a handful, so an iteration costs O(p |F| n) instead
    of O(p^2 n).
    """

    def __init__(self, S: np.ndarray, w: np.ndarray, rel: float):
        self.S = S
        self.Sw = S * w
        dg = (S * self.Sw).sum(axis=1)  # diag(H), O(p n)
        self.ridge = rel * np.maximum(dg, 1e-300 + 1e-14 * max(float(dg.max()), 0.0))
        p = S.shape[0]
        self.H = np.empty((p, p))
        self.have = np.zeros(p, dtype=bool)
        self.scale = float(np.abs(dg).max() + self.ridge.max())

    def cols(self, idx: np.ndarray) -> np.ndarray:
        miss = idx[~self.have[idx]]
        if miss.size:
            block = self.S @ self.Sw[miss].T  # (p, |miss|)
            block[miss, np.arange(miss.size)] += self.ridge[miss]
            self.H[:, miss] = block
            self.H[miss, :] = block.T
            self.have[miss] = True
        return self.H[:, idx]


def _face_minimiser(H: _LazyHessian, q: np.ndarray, F: np.ndarray,
                    simplex: bool) -> tuple[np.ndarray, float]:
    """argmin 1/2 x^T H x + q^T x over x_F (x = 0 off F), with sum x_F = 1
    if ``simplex``. Returns (x_F, mu), mu the multiplier of the sum (0 if not).
    ``H`` is positive definite (ridged), so a plain LU solve is accurate."""
    HF = H.cols(F)[F]
    if not simplex:
        return -np.linalg.solve(HF, q[F]), 0.0
    rhs = np.empty((F.size, 2))
    rhs[:, 0] = q[F]
    rhs[:, 1] = 1.0
    vu = np.linalg.solve(HF, rhs)
    v, u = vu[:, 0], vu[:, 1]
    mu = (1.0 + v.sum()) / u.sum()
    return mu * u - v, mu


def _active_set_qp(H: _LazyHessian, q: np.ndarray, x0: np.ndarray, simplex: bool,
                   max_iter: int) -> np.ndarray:
    """Primal active-set method for min 1/2 x^T H x + q^T x, x >= 0 (and
    sum x = 1 if ``simplex``); Nocedal & Wright, Algorithm 16.3.

    ``H`` positive definite, ``x0`` feasible (warm start; its zeros are the
    initial working set). Returns the exact minimiser up to rounding, or the
    last (feasible, no worse) iterate if ``max_iter`` is hit.
    """
    x = x0.copy()
    active = x <= 0.0
    x[active] = 0.0
    if not simplex and active.all():
        active[:] = False
    gscale = H.scale * max(np.abs(x).max(), 1.0) + np.abs(q).max()
    for _ in range(max_iter):
        F = np.flatnonzero(~active)
        if F.size == 0:  # only possible without the sum constraint: x = 0
            x[:] = 0.0
            nu = q.copy()
        else:
            xF, mu = _face_minimiser(H, q, F, simplex)
            if not np.all(xF >= 0.0):
                # move towards the face minimiser until the first bound blocks
                d = xF - x[F]
                neg = d < 0
                ratios = np.full(F.size, np.inf)
                ratios[neg] = x[F][neg] / -d[neg]
                k = int(np.argmin(ratios))
                step = min(1.0, float(ratios[k]))
                x[F] = np.maximum(x[F] + step * d, 0.0)
                x[F[k]] = 0.0
                active[F[k]] = True
                continue
            x[:] = 0.0
            x[F] = xF
            if not active.any():
                return x
            nu = (H.cols(F) @ xF + q) - mu
        nu[~active] = np.inf
        i = int(np.argmin(nu))
        if nu[i] >= -1e-13 * gscale:
            return x
        active[i] = False  # release the most violated bound
    return x


def _ridge(H: np.ndarray, rel: float) -> np.ndarray:
    """H + rel |diag(H)| (Levenberg-Marquardt scaling), diag floored > 0."""
    dg = np.abs(np.diag(H))
    dg = np.maximum(dg, 1e-300 + 1e-14 * dg.max())
    return H + np.diag(rel * dg)


def _newton_step(obj: _Objective, alpha: np.ndarray, G: np.ndarray, constraints: str,
                 qp_iter: int) -> np.ndarray:
    """Minimiser of the (convexified, ridged) Newton model over the feasible set."""
    w = obj.curvature(alpha)
    if obj.log_term:
        w = np.maximum(w, 0.0)
    if not np.any(w > 0):  # no curvature information (e.g. zero targets): no model
        return alpha.copy()
    rel = 1e-10
    while True:
        try:
            H = _LazyHessian(obj.S, w, rel)
            supp = np.flatnonzero(alpha > 0)
            q = G - H.cols(supp) @ alpha[supp]
            return _active_set_qp(H, q, alpha, constraints == "simplex", qp_iter)
        except (np.linalg.LinAlgError, scipy.linalg.LinAlgError):
            rel *= 100.0
            if rel > 1.0:
                raise


def _face_newton(obj: _Objective, alpha: np.ndarray, G: np.ndarray, F: np.ndarray,
                 simplex: bool) -> np.ndarray | None:
    """Exact-Hessian Newton direction on the face {alpha_i = 0 off F} (and
    sum d = 0 if ``simplex``); None if the reduced Hessian is not positive
    definite. Used once the active set has settled, for quadratic convergence
    of the formulations with the (concave) log term."""
    SF = obj.S[F]
    H = (SF * obj.curvature(alpha)) @ SF.T
    dg = np.abs(np.diag(H))
    H = H + np.diag(1e-10 * np.maximum(dg, 1e-300 + 1e-14 * dg.max()))
    try:
        cho = scipy.linalg.cho_factor(H, check_finite=False)
    except (np.linalg.LinAlgError, scipy.linalg.LinAlgError):
        return None
    v = scipy.linalg.cho_solve(cho, G[F], check_finite=False)
    dF = -v
    if simplex:
        u = scipy.linalg.cho_solve(cho, np.ones(F.size), check_finite=False)
        dF = dF + (v.sum() / u.sum()) * u
    d = np.zeros_like(alpha)
    d[F] = dF
    return d if np.all(np.isfinite(d)) else None


def _fast_free(obj: _Objective, alpha0: np.ndarray, tol: float, max_iter: int):
    """Levenberg-Marquardt-damped Newton method on the open domain g > 0.

    Step ``d = -(H + mu |diag(H)|)^{-1} G`` with ``H`` the exact Hessian when
    it is positive definite, else the convexified one (``w -> max(w, 0)``);
    a step is accepted when it stays in ``g > 0`` and satisfies the Armijo
    condition, then ``mu`` is divided by 10, otherwise multiplied by 10 (a
    trust-region mechanism: the spectra are nearly collinear, so plain
    Newton steps are astronomically long in near-null directions).
    Returns (alpha, f, n_iter, converged).
    """
    alpha = alpha0.copy()
    f, G = obj.value_grad(alpha)
    mu = 1e-3
    n_iter = 0
    converged = False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)
        while True:
            if _kkt_from_grad(alpha, f, G, "none") <= tol:
                converged = True
                break
            if n_iter >= max_iter:
                break
            n_iter += 1
            H = obj.hessian(alpha)
            try:
                np.linalg.cholesky(_ridge(H, 1e-10))
            except np.linalg.LinAlgError:
                H = obj.hessian(alpha, convexify=True)
            while mu < 1e20:
                try:
                    d = -scipy.linalg.solve(_ridge(H, mu), G, assume_a="pos", check_finite=False)
                except (np.linalg.LinAlgError, scipy.linalg.LinAlgError):
                    mu *= 10.0
                    continue
                slope = float(G @ d)
                f_new = obj.value(alpha + d) if slope < 0 else np.inf
                if f_new <= f + 1e-4 * slope or (  # decrease below the rounding of f
                        -slope <= 1e-13 * abs(f) and f_new <= f + 1e-15 * abs(f)):
                    mu = max(mu / 10.0, 1e-12)
                    break
                mu *= 10.0
            else:  # no decrease even for tiny steps: stalled at machine precision
                break
            alpha = alpha + d
            f, G = obj.value_grad(alpha)
    return alpha, f, n_iter, converged


def _fast(obj: _Objective, alpha0: np.ndarray, constraints: str, tol: float, max_iter: int):
    """Projected Newton method with an exact QP subproblem; see ``docs/diffusion_notes.md``.

    Returns (alpha, f, n_iter, converged).
    """
    if constraints == "none":
        return _fast_free(obj, alpha0, tol, max_iter)
    alpha = alpha0.copy()
    f, G = obj.value_grad(alpha)
    p = alpha.size
    n_iter = 0
    converged = False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)
        while True:
            kkt = _kkt_from_grad(alpha, f, G, constraints)
            if kkt <= tol:
                converged = True
                break
            if n_iter >= max_iter:
                break
            n_iter += 1
            with np.errstate(all="ignore"):
                x = _newton_step(obj, alpha, G, constraints, qp_iter=10 * p + 50)
            d = x - alpha if np.all(np.isfinite(x)) else np.zeros_like(alpha)
            step = 1.0
            if obj.log_term and np.array_equal(x > 0, alpha > 0):
                # active set settled: exact Newton step on the face (the convex
                # model above drops the log term's negative curvature)
                d2 = _face_newton(obj, alpha, G, np.flatnonzero(alpha > 0),
                                  constraints == "simplex")
                if d2 is not None and float(G @ d2) < 0:
                    neg = d2 < 0
                    d = d2
                    step = min(1.0, float(np.min(alpha[neg] / -d2[neg]))) if neg.any() else 1.0
            slope = float(G @ d)
            if not slope < 0:  # no descent from the model (rounding): gradient-type step
                if constraints == "simplex":
                    d = -alpha.copy()
                    d[int(np.argmin(G))] += 1.0  # Frank-Wolfe vertex
                else:  # projected gradient step on the orthant
                    scale = max(alpha.max(), 1e-300) / max(np.abs(G).max(), 1e-300)
                    d = np.maximum(alpha - G * scale, 0.0) - alpha
                slope = float(G @ d)
                step = 1.0
                if not slope < 0:
                    break
            # the predicted decrease is below the rounding of f: accept a full
            # step that does not increase f beyond rounding (Armijo cannot
            # resolve it, the KKT residual then tells whether it helped)
            tiny = -slope <= 1e-13 * abs(f)
            while True:
                a_new = alpha + step * d
                f_new = obj.value(a_new)  # +inf outside g > 0
                if f_new <= f + 1e-4 * step * slope:
                    break
                if tiny and f_new <= f + 1e-15 * abs(f):
                    break
                step *= 0.5
                if step < 1e-20:
                    a_new = None
                    break
            if a_new is None:  # no decrease at machine precision: stalled
                converged = bool(kkt <= 1e3 * tol)
                break
            a_new = np.maximum(a_new, 0.0)
            if constraints == "simplex":
                a_new /= a_new.sum()
            alpha = a_new
            f, G = obj.value_grad(alpha)
    return alpha, f, n_iter, converged
