"""Where the unit tests' numerical tolerances come from.

Each tolerance in tests/unit is one of four kinds; a comment next to it (or at
the head of its group) gives the reason and the numbers behind it.

1. **Float64 rounding** ("same formula two ways"). A closed form against its
   implementation, a vectorised path against a loop, a blocked factorisation
   against LAPACK. A sum or product chain of ``k`` float64 operations on O(1)
   values is accurate to ``~k eps`` relative to the sum of the absolute terms
   (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed. 2002,
   §3.1 and §4.2; ``eps = 2.2e-16``). The constants below give that bound a
   margin for moderate cancellation; a comparison that can lose more (an
   arccos near ±1, a Gram-expanded distance near 0) says so where it is used.
2. **Linear solves** by a backward-stable method (Cholesky, LU): the computed
   solution solves ``(A + E) x = b`` with ``||E|| <~ n eps ||A||`` (Higham
   Thm 10.3/10.4, constant dropped), so ``||x - x*|| / ||x*|| <~ n eps
   cond(A)`` (Higham §7.1): :func:`solve_rtol`. A known perturbation of ``A``
   (the kernel computed another way) or a known residual (CG's, a float32
   solve's) bounds the error exactly: :func:`perturbed_solve_error`,
   :func:`prediction_error_bound`, :func:`cholesky_factor_error`.
3. **Iterative solvers** (SMO, coordinate descent, SLSQP, Clarabel, OSQP,
   LIBSVM, CG): the stopping rule bounds a residual, and strong convexity or
   duality turns the residual into a bound on the solution:
   :func:`box_qp_radius` / :func:`box_radius` / :func:`cd_final_pg_bound`
   (coordinate descent on a box: MMDT, CKA's QP), :func:`komd_radius` and
   friends (SMO and interior points on two simplices: KOMD, EasyMKL, MKLpy),
   ``svm_bounds.py`` (LIBSVM / Clarabel on the SVM dual), the Frank-Wolfe gap
   (test_dkl.py). A test asserts the residual is small (the solver did its job)
   *and* the solutions agree within the bound (they solved the same
   problem), so the bound cannot be vacuous.
4. **Monte Carlo / planted ground truth**: ``k`` standard errors of the
   simulated quantity (computed in the test where it is available), or a
   population value derived from the planted model with the sampling noise
   of the test's sample size.
"""

from __future__ import annotations

import numpy as np

EPS64 = float(np.finfo(np.float64).eps)   # 2.2e-16
EPS32 = float(np.finfo(np.float32).eps)   # 1.2e-7

# Kind 1, float64. Chains of up to ~1e3-1e4 operations: k eps <= 2.2e-12;
# 1e-10 leaves a factor >= 50 for cancellation. Used where a test compares
# two evaluations of the same formula and names no tighter reason.
FLOAT64_EXACT = 1e-10

# Kind 1, float32 (eps 1.2e-7): a kernel of O(100) accumulations in float32
# is accurate to ~100 eps ~ 1e-5 relative; 2e-5 is that with a factor of 2.
FLOAT32_GRAM = 2e-5


def solve_rtol(A: np.ndarray, eps: float = EPS64) -> float:
    """First-order normwise relative error ``n eps cond_2(A)`` of a
    backward-stable solve with the symmetric positive definite ``A`` (kind 2)."""
    w = np.linalg.eigvalsh(np.asarray(A, dtype=np.float64))
    return float(A.shape[0] * eps * w[-1] / w[0])


def perturbed_solve_error(A: np.ndarray, dA: np.ndarray, x: np.ndarray) -> float:
    """Exact bound on ``||x' - x||_2`` where ``A x = b`` and ``(A + dA) x' = b``,
    ``A`` symmetric positive definite: ``x' - x = -(A + dA)^{-1} dA x``, so
    ``||x' - x|| <= ||dA||_2 ||x|| / (lambda_min(A) - ||dA||_2)``. ``x`` may
    have several columns (Frobenius norms)."""
    lam_min = float(np.linalg.eigvalsh(A)[0])
    nrm = float(np.linalg.norm(dA, 2))
    if nrm >= lam_min:
        raise ValueError(f"perturbation {nrm:.3g} >= lambda_min {lam_min:.3g}: no bound")
    return nrm * float(np.linalg.norm(x)) / (lam_min - nrm)


def box_qp_radius(pg: np.ndarray, mu: float) -> float:
    """Bound on ``||a - a*||_2`` for a feasible ``a >= 0`` of a ``mu``-strongly
    convex ``g`` minimised over ``a >= 0``, from its projected gradient
    ``PG_l = grad_l g`` (``a_l > 0``), ``min(grad_l g, 0)`` (``a_l = 0``).

    Strong convexity and the optimality of ``a*`` (``grad g(a*)'(a - a*) >= 0``)
    give ``mu ||a - a*||^2 <= grad g(a)'(a - a*)``, and coordinate-wise
    ``grad_l g(a) (a_l - a*_l) <= PG_l (a_l - a*_l)`` (at ``a_l = 0`` with
    ``grad_l g >= 0`` the left side is ``<= 0``), so ``mu ||a - a*||^2 <=
    ||PG|| ||a - a*||``. Also ``g(a) - g* <= ||PG|| r - mu r^2 / 2 <= ||PG||^2 /
    (2 mu)`` (strong convexity, ``r = ||a - a*||``).
    """
    return float(np.linalg.norm(pg)) / mu


def project_simplex(v: np.ndarray) -> np.ndarray:
    """Euclidean projection onto ``{x >= 0, sum x = 1}`` (sort-based,
    Held, Wolfe & Crowder 1974 / Duchi et al. 2008)."""
    u = np.sort(v)[::-1]
    css = np.cumsum(u) - 1.0
    k = np.arange(1, v.size + 1)
    rho = np.flatnonzero(u - css / k > 0)[-1]
    return np.maximum(v - css[rho] / (rho + 1), 0.0)


def komd_objective(Q: np.ndarray, g: np.ndarray) -> float:
    return float(g @ Q @ g)


def komd_radius(Q: np.ndarray, pos: np.ndarray, gamma: np.ndarray, kkt_violation: float,
                other: np.ndarray) -> tuple[float, float]:
    """Bound on ``||gamma - other||_2`` for two solutions of the KOMD problem
    ``min f(g) = g'Qg`` over two simplices (one per class), ``Q`` positive definite
    (``lam = lambda_min(Q) > 0``).

    * ``gamma`` (SMO, feasible) stops with the within-class gradient spread on
      its support ``<= viol`` (gradient ``2 Q gamma``). Strong convexity
      (Hessian ``2Q``) and optimality of ``g*`` give ``2 lam ||gamma - g*||^2
      <= grad f(gamma)'(gamma - g*) = sum_c sum_i (grad_i - min_c grad)(gamma_i -
      g*_i) <= viol ||gamma - g*||_1`` over the support S of gamma (off S the
      terms are <= 0), so ``||gamma - g*|| <= viol sqrt(|S|) / (2 lam)``. The
      Frank-Wolfe gap per class is at most ``viol`` (class mass 1), so
      ``f(gamma) - f* <= 2 viol``.
    * ``other`` (e.g. an interior-point solution, feasible only to its
      tolerance) is projected onto the two simplices (distance ``d``); its
      projection ``p`` has ``f(p) - f* <= f(p) - f(gamma) + 2 viol`` and,
      from strong convexity, ``f(p) - f* >= lam ||p - g*||^2``.

    Returns ``(bound, f(gamma) - f(p))`` with ``bound = viol sqrt(|S|) / (2 lam)
    + d + sqrt((f(p) - f(gamma) + 2 viol) / lam)``.
    """
    lam = float(np.linalg.eigvalsh(Q)[0])
    if lam <= 0:
        raise ValueError("Q is not positive definite: no bound on gamma")
    other = np.asarray(other, dtype=np.float64)
    p = np.empty_like(other)
    p[pos] = project_simplex(other[pos])
    p[~pos] = project_simplex(other[~pos])
    f_g, f_p = komd_objective(Q, gamma), komd_objective(Q, p)
    viol = max(kkt_violation, 0.0)
    r_gamma = viol * np.sqrt(np.count_nonzero(gamma > 0)) / (2.0 * lam)
    r_other = float(np.linalg.norm(other - p)) + np.sqrt(max(f_p - f_g + 2.0 * viol, 0.0) / lam)
    return float(r_gamma + r_other), f_g - f_p


def komd_decision_bound(K, Kt, gamma, K2, Kt2, gamma2, radius) -> np.ndarray:
    """Per test row, a bound on ``|f1 - f2|`` for two KOMD decision functions
    ``f = Kt Y gamma - b``, ``b = gamma'YKgamma / 2`` (docs/easymkl_notes.md, Eq. 2), given
    ``||gamma - gamma2|| <= radius``: ``f1 - f2 = Kt Y (gamma - gamma2) + (Kt -
    Kt2) Y gamma2 - (b1 - b2)`` with ``|b1 - b2| <= ||K|| radius (||gamma|| +
    ||gamma2||) / 2 + ||K - K2|| ||gamma2||^2 / 2`` (Cauchy-Schwarz)."""
    g1, g2 = float(np.linalg.norm(gamma)), float(np.linalg.norm(gamma2))
    db = (0.5 * np.linalg.norm(K, 2) * radius * (g1 + g2)
          + 0.5 * np.linalg.norm(np.asarray(K) - np.asarray(K2), 2) * g2 ** 2)
    return (np.linalg.norm(Kt, axis=1) * radius
            + np.linalg.norm(np.asarray(Kt) - np.asarray(Kt2), axis=1) * g2 + db)


def komd_kkt_violation(Q: np.ndarray, pos: np.ndarray, gamma: np.ndarray) -> float:
    """Max over the classes of (largest gradient on the support - smallest
    gradient), gradient ``2 Q gamma``: 0 at the optimum (KKT on a simplex);
    computed here, independently of the solver's own report."""
    g = 2.0 * (Q @ gamma)
    return max(float(g[c][gamma[c] > 0].max() - g[c].min()) for c in (pos, ~pos))


def easymkl_weight_bound(Ks, y_pm: np.ndarray, lam: float, gamma: np.ndarray, viol: float,
                         libsvm_tol: float) -> np.ndarray:
    """Bound on ``|w_r - w'_r|`` between EasyMKL weights from our ``gamma`` (SMO
    on the summed kernel, KKT spread ``viol``) and from a LIBSVM hard-margin
    solve of the same problem stopped at ``libsvm_tol`` (MKLpy's EasyMKL:
    ``SVC(C=1e7, tol)``, alpha normalised per class to gamma').

    * LIBSVM stops when ``max_{I_up} -y grad - min_{I_low} -y grad <= tol``; for
      the hard-margin dual that bounds the within-class spread of ``(G alpha)_i``
      on the support by ``tol``. With ``gamma' = alpha / s`` and ``s = 2 / f*``
      (``||w||^2 = sum alpha = 2 s = s^2 f*``) the spread of ``2 Q gamma'`` is
      ``tol f*``, so ``gamma'`` is within ``tol f* sqrt(n) / (2 lambda_min)`` of
      the optimum of the problem LIBSVM solves (:func:`komd_radius`).
    * LIBSVM caches the kernel in float32 (``Qfloat``), so it solves ``Q + E``
      with ``|E_ij| <= eps32/2 |Q_ij|``; the optimum moves by ``<= ||E g*|| /
      lambda_min(Q)`` (optimality of both for ``min g'Qg`` on the same polytope).
    * ``d_r = g'YK_rYg`` moves by ``<= 2 ||YK_rY g|| R + ||K_r|| R^2`` and
      ``w = d / sum d`` by ``(|dd_r| + w_r sum |dd|) / (sum d - sum |dd|)``.
    """
    n = y_pm.shape[0]
    YY = np.outer(y_pm, y_pm)
    Q = (1 - lam) * YY * sum(Ks) + lam * np.eye(n)
    lam_min = float(np.linalg.eigvalsh(Q)[0])
    f = komd_objective(Q, gamma) + 2.0 * viol                         # >= f*
    r_sol = (viol * np.sqrt(np.count_nonzero(gamma > 0)) + libsvm_tol * f * np.sqrt(n)) / (2.0 * lam_min)
    shift = 0.5 * EPS32 * (np.linalg.norm(np.abs(Q) @ np.abs(gamma)) + np.linalg.norm(Q) * r_sol) / lam_min
    return easymkl_weights_shift(Ks, y_pm, gamma, r_sol + shift)


def easymkl_weights_shift(Ks, y_pm: np.ndarray, gamma: np.ndarray, R: float) -> np.ndarray:
    """Bound on ``|w_r(gamma) - w_r(gamma')|`` for EasyMKL's weights ``w = d / sum d``,
    ``d_r = g'YK_rYg`` (docs/easymkl_notes.md, Eq. 3), when ``||gamma - gamma'|| <= R``:
    ``|dd_r| <= 2 ||YK_rY gamma|| R + ||K_r|| R^2``, then
    ``|dw_r| <= (|dd_r| + w_r sum |dd|) / (sum d - sum |dd|)``."""
    YY = np.outer(y_pm, y_pm)
    d = np.array([gamma @ (YY * K) @ gamma for K in Ks])
    dd = np.array([2.0 * np.linalg.norm((YY * K) @ gamma) * R + np.linalg.norm(K, 2) * R ** 2 for K in Ks])
    if dd.sum() >= d.sum():
        raise ValueError("no bound: the perturbation exceeds the total distance")
    return (dd + d / d.sum() * dd.sum()) / (d.sum() - dd.sum())


def komd_smo_radius(Q: np.ndarray, pos: np.ndarray, gamma: np.ndarray) -> float:
    """``||gamma - g*|| <= viol sqrt(|S|) / (2 lambda_min(Q))`` for a feasible
    ``gamma`` with KKT spread ``viol`` on its support S (see :func:`komd_radius`)."""
    viol = komd_kkt_violation(Q, pos, gamma)
    return viol * np.sqrt(np.count_nonzero(gamma > 0)) / (2.0 * float(np.linalg.eigvalsh(Q)[0]))


def box_radius(alpha: np.ndarray, projected_gradient, mu: float, threshold: float = 0.0) -> float:
    """:func:`box_qp_radius` for a point from another solver (e.g. an interior
    point, whose inactive coordinates are tiny positives rather than 0, or a
    slightly negative one): entries ``<= threshold`` are set to 0 (a feasible
    ``a'``), and ``||alpha - alpha*|| <= ||alpha - a'|| + ||PG(a')|| / mu``.
    ``projected_gradient`` maps an array shaped like ``alpha`` to its PG."""
    alpha = np.asarray(alpha, dtype=np.float64)
    a = np.where(alpha > threshold, alpha, 0.0)
    return float(np.linalg.norm(alpha - a)) + box_qp_radius(projected_gradient(a), mu)


def cd_final_pg_bound(Qbar: np.ndarray, tol: float) -> float:
    """Bound on ``max_l |PG_l|`` at the point where dual coordinate descent
    (Hsieh et al. 2008; mmdt.solve_transform) stops: its last epoch visited every
    coordinate with pre-update projected gradients spanning ``<= tol`` around 0
    (a coordinate at ``alpha_l = 0`` with ``grad_l >= 0`` has PG 0). Right after its
    exact step a coordinate's gradient is 0 (``alpha_l > 0``) or ``>= 0``
    (clipped at 0); each later step of that epoch moves ``alpha_l'`` by
    ``|PG_l'| / Qbar_l'l' <= tol / Qbar_l'l'`` and ``grad_l`` by
    ``Qbar_ll' dalpha_l'``. Hence ``|PG_l| <= tol max_l sum_{l' != l}
    |Qbar_ll'| / Qbar_l'l'`` at the end."""
    Q = np.abs(np.asarray(Qbar, dtype=np.float64))
    rho = (Q / np.diag(Q)[None, :]).sum(axis=1) - 1.0
    return float(tol * rho.max())


def cholesky_factor_error(A: np.ndarray, L) -> float:
    """Bound on ``||L - chol(A)||_F`` for a computed lower-triangular factor ``L``
    (any precision) of the symmetric positive definite ``A``, from its residual.

    ``L L' = A + E`` exactly, so ``L`` is the Cholesky factor of ``A + E``; by
    Higham (2002) Thm 10.8 (Sun 1991), ``||dR||_F <= ||R||_2 2^-1/2 k e / (1 - k e)``
    with ``k = cond_2(A)``, ``e = ||E||_F / ||A||_2``, ``||R||_2 = ||A||_2^1/2``. ``E``
    is evaluated in float64; its own rounding, ``<= n eps ||L||_F^2``, is added.
    """
    A = np.asarray(A, dtype=np.float64)
    L = np.tril(np.asarray(L, dtype=np.float64))
    w = np.linalg.eigvalsh(A)
    k = w[-1] / w[0]
    e = (np.linalg.norm(L @ L.T - A) + A.shape[0] * EPS64 * np.linalg.norm(L) ** 2) / w[-1]
    if k * e >= 1:
        raise ValueError("perturbation too large for the bound")
    return float(np.sqrt(w[-1]) * k * e / (np.sqrt(2.0) * (1.0 - k * e)))


def prediction_error_bound(A: np.ndarray, Kt: np.ndarray, r: np.ndarray) -> np.ndarray:
    """Exact bound on ``|Kt (a - a*)|`` (shape (m, c)) for an approximate solution
    ``a`` of ``A a* = Y`` (``A`` symmetric positive definite) with residual
    ``r = Y - A a``: ``Kt (a - a*) = -Kt A^-1 r`` and Cauchy-Schwarz in the
    ``A^-1`` inner product gives ``|.|_ic <= sqrt(kt_i' A^-1 kt_i) sqrt(r_c' A^-1 r_c)``.
    For a kernel ridge predictor ``kt_i' A^-1 kt_i <= k(x_i, x_i)``, so this is far
    tighter than ``||kt_i|| ||r|| / lambda_min``."""
    C = np.linalg.cholesky(np.asarray(A, dtype=np.float64))
    s = np.linalg.norm(np.linalg.solve(C, np.asarray(Kt, dtype=np.float64).T), axis=0)
    rr = np.asarray(r, dtype=np.float64).reshape(A.shape[0], -1)
    t = np.linalg.norm(np.linalg.solve(C, rr), axis=0)
    return s[:, None] * t[None, :]
