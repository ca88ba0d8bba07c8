"""Tolerances for comparing two soft-margin SVM solvers, derived from the
problem instead of taken from one machine's run.

The LIBSVM dual of the 1-norm soft-margin SVM on a kernel ``K`` (n x n) is

    D(α) = e'α - ½ α'Gα,   G = diag(y) K diag(y),   0 <= α <= C,  y'α = 0.

Two facts bound how far a solver's α can be from the maximiser α*:

* **Weak duality.** For any intercept b, the primal point
  ``w = Σ α_i y_i φ(x_i)`` with slacks ``ξ_i = max(0, 1 - y_i f_i)`` has
  ``P = ½ α'Gα + C Σ ξ_i >= D* >= D(α)`` (feasible α), so the *duality gap*
  ``gap(α) = P - D(α) = α'Gα + C Σ ξ_i - e'α`` bounds ``D* - D(α)``. It is
  computed from α alone (b minimising the hinge sum: a convex piecewise-linear
  function of b, minimal at one of its breakpoints).
* **Strong concavity.** D has Hessian ``-G``; if ``G`` is positive definite
  with smallest eigenvalue ``μ``, the first-order optimality of α* over the
  feasible (convex) set gives ``D* - D(α) >= ½ μ ||α - α*||²``.

Hence ``||α - α*|| <= sqrt(2 gap(α) / μ)`` for a feasible α. A solver's α
may violate the constraints by its feasibility tolerance; it is projected onto
the feasible set first (exact projection, bisection on the shift of y'α) and
the projection distance is added (triangle inequality). Two solvers then
agree to within the sum of their radii.

Source: Boyd & Vandenberghe, Convex Optimization (2004), §5.2.2 (weak
duality) and §9.1.2 (strong convexity bound); the SVM primal/dual pair as in
Chang & Lin, LIBSVM (2011), Eqs. 1-2.
"""

from __future__ import annotations

import numpy as np


def project_feasible(alpha: np.ndarray, y: np.ndarray, C: float) -> np.ndarray:
    """Euclidean projection of α onto {0 <= α <= C, y'α = 0} (y in {-1, +1}).

    The projection is ``clip(α - t y, 0, C)`` for the t solving ``y'α(t) = 0``
    (KKT of the projection problem); ``y'α(t)`` is non-increasing in t, so
    bisection finds it.
    """
    def resid(t):
        return y @ np.clip(alpha - t * y, 0.0, C)

    lo, hi = -2.0 * C - 1.0, 2.0 * C + 1.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if resid(mid) > 0:
            lo = mid
        else:
            hi = mid
    return np.clip(alpha - 0.5 * (lo + hi) * y, 0.0, C)


def duality_gap(K: np.ndarray, y: np.ndarray, C: float, alpha: np.ndarray) -> float:
    """``min_b P(w(α), b) - D(α)`` for a feasible α (LIBSVM's scale)."""
    g = K @ (alpha * y)                      # f_i - b
    G_quad = float((alpha * y) @ g)          # α'Gα
    breakpoints = y - g                      # b where y_i (g_i + b) = 1
    hinge = np.maximum(0.0, 1.0 - y[None, :] * (g[None, :] + breakpoints[:, None])).sum(axis=1)
    return G_quad + C * float(hinge.min()) - float(alpha.sum())


def alpha_radius(K: np.ndarray, y: np.ndarray, C: float, alpha: np.ndarray) -> float:
    """Upper bound on ``||α - α*||_2`` (see the module docstring).

    Raises
    ------
    ValueError
        If ``K`` is not positive definite (no strong concavity, no bound).
    """
    mu = float(np.linalg.eigvalsh(K).min())  # G = diag(y) K diag(y) has K's spectrum
    if mu <= 0:
        raise ValueError(f"K is not positive definite (smallest eigenvalue {mu:g}): no bound on α")
    p = project_feasible(np.asarray(alpha, float), y, C)
    gap = max(duality_gap(K, y, C, p), 0.0)
    return float(np.linalg.norm(alpha - p) + np.sqrt(2.0 * gap / mu))


def dual_value(K: np.ndarray, y: np.ndarray, alpha: np.ndarray) -> float:
    """``D(α) = e'α - ½ α'Gα`` (LIBSVM's dual objective)."""
    ay = alpha * y
    return float(alpha.sum() - 0.5 * ay @ K @ ay)


# Clarabel's stopping tolerances as SM1 sets them (biokernels.solvers.sm1:
# tol_gap_abs = tol_gap_rel = 1e-10) and its default primal feasibility
# tolerance tol_feas = 1e-8 (Clarabel's documented defaults).
CLARABEL_GAP = 1e-10
CLARABEL_FEAS = 1e-8


def clarabel_dual_slack(D: float) -> float:
    """How far below the optimum ``D*`` (LIBSVM scale) SM1's α may stop.

    SM1's QCQP objective is ``2 D`` at the optimum (Sun et al. Eq. 5 is twice
    LIBSVM's dual). Clarabel stops when its duality gap is below
    ``tol_gap_abs + tol_gap_rel |objective|`` (halved on D's scale) and its
    cone constraints hold to ``tol_feas`` relative to the problem's scale
    (``1 + |D|``), which lets the epigraph variable undercut ``α'Gα`` by at
    most that much.
    """
    return 0.5 * (CLARABEL_GAP + CLARABEL_GAP * 2.0 * abs(D)) + CLARABEL_FEAS * (1.0 + abs(D))


def assert_same_svm_solution(K: np.ndarray, y: np.ndarray, C: float, alpha_qp: np.ndarray,
                             alpha_libsvm: np.ndarray) -> float:
    """Check a QCQP solver's α (SM1) against LIBSVM's on one SVM dual, with
    tolerances derived from the two solvers' stopping rules.

    1. The QCQP's α, projected onto the feasible set, reaches LIBSVM's dual
       value to within Clarabel's slack (:func:`clarabel_dual_slack`). This
       fails when SM1 solved a different problem (another kernel scale, C).
    2. Both α lie within their radii of the unique maximiser α*: LIBSVM's
       by its duality gap, the QCQP's by ``D* - D(α_qp) <= D_lib + gap_lib -
       D(α_qp)``; so they agree to within the sum (returned, an l2 bound).
    """
    mu = float(np.linalg.eigvalsh(K).min())
    assert mu > 0, "the bound needs a positive definite kernel"
    p = project_feasible(np.asarray(alpha_qp, float), y, C)
    d_qp, d_lib = dual_value(K, y, p), dual_value(K, y, alpha_libsvm)
    gap_lib = max(duality_gap(K, y, C, alpha_libsvm), 0.0)
    assert d_lib - d_qp <= clarabel_dual_slack(d_lib), (d_lib, d_qp)
    r_qp = float(np.linalg.norm(alpha_qp - p)) + np.sqrt(2.0 * max(d_lib + gap_lib - d_qp, 0.0) / mu)
    r_lib = np.sqrt(2.0 * gap_lib / mu)
    bound = r_qp + r_lib
    assert np.linalg.norm(alpha_qp - alpha_libsvm) <= bound
    return bound
