"""Diffusion kernel learning (Sun, Ji & Ye 2008): objectives and solvers.

Checks Theorem 1/2 against the dense matrix form (scipy expm kernels, a
linear solve and slogdet), the analytic derivatives against finite
differences, the fast solver against SLSQP, the KKT conditions, and the
documented behaviour of the unconstrained variants.
"""

import time

import numpy as np
import pytest

from biokernels.kernels.diffusion import (
    combined_spectrum,
    diffusion_betas,
    diffusion_spectra,
    laplacian,
    laplacian_eigh,
    naive_diffusion_kernels,
)
from biokernels.solvers.dkl import (
    FORMULATIONS,
    DiffusionKernelLearning,
    dkl_gradient,
    dkl_hessian,
    dkl_objective,
    kkt_residual,
    target_energy,
)
from tolerances import EPS64, FLOAT64_EXACT, solve_rtol

LAM = 1e-6
# Solver tolerances (docs/diffusion_notes.md, "Solvers"): "fast" reports converged_ when its
# kkt_residual <= tol, or -- on the simplex / orthant -- when it stalled at machine
# precision with kkt_residual <= 1e3 tol; with unconstrained="free" only the former.
TOL = DiffusionKernelLearning().tol            # 1e-10, the default every fit below uses
FAST_KKT = 1e3 * TOL
# SLSQP stops on a relative decrease of f below ftol = tol, which bounds no KKT
# residual; the comparisons use its measured residual. This is the accuracy the
# reference must reach for them to mean anything (measured <= 1e-5 on these instances).
SLSQP_KKT = 1e-4


def planted_instance(n, p, t, seed, density=0.04, step=0.05, train_frac=0.8):
    """Sparse weighted random graph; labels = sign of a diffused random signal
    (planted smoothness), +1/-1 on training nodes and 0 on test nodes (Eq. 13)."""
    rng = np.random.default_rng(seed)
    U = np.triu((rng.random((n, n)) < density) * rng.uniform(0.5, 2.0, (n, n)), 1)
    L = laplacian(U + U.T)
    d, P = laplacian_eigh(L)
    betas = diffusion_betas(p, step)
    S = diffusion_spectra(d, betas)
    Z = rng.standard_normal((n, t))
    F = P @ (np.exp(-d)[:, None] * (P.T @ Z))
    Y = np.where(F > np.median(F, axis=0), 1.0, -1.0)
    train = rng.random(n) < train_frac
    A = Y * train[:, None]
    return {"L": L, "d": d, "P": P, "betas": betas, "S": S, "A": A, "B": P.T @ A}


CASES = [(60, 10, 1, 0), (90, 20, 3, 1), (120, 30, 5, 2), (150, 60, 8, 3)]


@pytest.fixture(scope="module", params=CASES, ids=lambda c: "n%d-p%d-t%d" % c[:3])
def inst(request):
    return planted_instance(*request.param)


@pytest.fixture(scope="module")
def small():
    return planted_instance(60, 10, 3, seed=7)


def task_kkt(est, S, B, log_term=False):
    """kkt_residual of each task's weights, computed here (not the solver's report)."""
    W = np.atleast_2d(est.weights_)
    cons = {"simplex": "simplex", "nonneg": "nonneg", "none": "none"}[est.constraints_]
    targets = [B[:, k] for k in range(B.shape[1])] if W.shape[0] > 1 else [B]
    return np.array([kkt_residual(w, S, b, log_term=log_term, constraints=cons)
                     for w, b in zip(W, targets)])


def spectrum_radius(S, c, w, f, kkt):
    """Per eigen-direction bound on |g_i - g*_i|, g = w S + LAM, for the convex
    objective f = sum_i c_i / g_i (DKL, mDKL; c the target energy). The Bregman
    divergence of c/x and the first-order optimality of g* give f(g) - f* >=
    c_i (g_i - g*_i)^2 / (g_i g*_i^2); the Frank-Wolfe gap gives f(g) - f* <= kkt |f|.
    With g*_i <= g_i + |g_i - g*_i|: |g_i - g*_i| <= g_i s_i / (1 - s_i),
    s_i = sqrt(kkt |f| g_i / c_i) (inf where c_i = 0 or s_i >= 1)."""
    g = w @ S + LAM
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.sqrt(kkt * abs(f) * g / c)
        return np.where(s < 1, g * s / (1 - s), np.inf)


def reduced_hessian_min(w, S, b, constraints):
    """Smallest eigenvalue of the (unit-diagonal scaled) Hessian of the log-term
    objective on the face of w's support (tangent to sum = 1 on the simplex)."""
    sup = w > 0 if constraints != "none" else np.ones(w.size, dtype=bool)
    H = dkl_hessian(w, S, b, log_term=True)[np.ix_(sup, sup)]
    if constraints == "simplex":
        if sup.sum() < 2:
            return np.inf                              # a vertex: no tangent direction
        Z = np.linalg.svd(np.ones((1, sup.sum())))[2][1:].T   # basis of {x: sum x = 0}
        H = Z.T @ H @ Z
    d = np.sqrt(np.abs(np.diag(H)))
    return float(np.linalg.eigvalsh(H / np.outer(d, d)).min())


def dense_objective(alpha, K_tilde, A, lam, log_term):
    """a^T (sum alpha_i K~_i + lam I)^{-1} a summed over tasks [+ t log det], Eq. 12/27."""
    Kx = np.tensordot(alpha, K_tilde, axes=1) + lam * np.eye(A.shape[0])
    val = float(np.sum(A * np.linalg.solve(Kx, A)))
    if log_term:
        sign, logdet = np.linalg.slogdet(Kx)
        assert sign > 0
        val += A.shape[1] * logdet
    return val


# ---------------------------------------------------------------------------
# Theorem 1 / 2: the eigenbasis objective equals the matrix form


@pytest.mark.parametrize("log_term", [False, True])
@pytest.mark.parametrize("lam", [1e-6, 1e-2])
@pytest.mark.parametrize("t", [1, 3])
def test_eigenbasis_objective_equals_dense_matrix_form(small, log_term, lam, t):
    K_tilde = naive_diffusion_kernels(small["L"], small["betas"])
    A = small["A"][:, :t]
    rng = np.random.default_rng(0)
    p = small["betas"].size
    for alpha in (rng.dirichlet(np.ones(p)), 5.0 * rng.random(p), np.eye(p)[3]):
        ours = dkl_objective(alpha, small["S"], small["P"].T @ A, lam=lam, log_term=log_term)
        ref = dense_objective(alpha, K_tilde, A, lam, log_term)
        # the dense side solves with Kx: a quadratic form a'Kx^-1 a is accurate to
        # n eps cond(Kx) relative (tolerances.solve_rtol), slogdet to n (n eps cond)
        # absolute per task; x100 for the dropped constants of those first-order bounds.
        # The eigenbasis side is backward stable in L (eigh), far below that.
        Kx = np.tensordot(alpha, K_tilde, axes=1) + lam * np.eye(A.shape[0])
        tol = 100 * solve_rtol(Kx) * (abs(ref) + A.shape[1] * A.shape[0])
        assert abs(ours - ref) <= tol


def test_multitask_objective_is_sum_of_single_task_quadratics_plus_t_log(small):
    S, B = small["S"], small["B"]
    t = B.shape[1]
    alpha = np.random.default_rng(1).dirichlet(np.ones(S.shape[0]))
    quad = [dkl_objective(alpha, S, B[:, k]) for k in range(t)]
    log1 = dkl_objective(alpha, S, B[:, 0], log_term=True) - quad[0]
    # log1 is a difference of two objectives (~1e3 each, n = 60 terms): cancellation
    # leaves ~n eps |f| / |log1| ~ 1e-13 relative; 1e-6 is loose on that. The two sums
    # below add the same positive terms in another order: ~n eps ~ 1e-14 relative.
    np.testing.assert_allclose(log1, np.log(alpha @ S + LAM).sum(), rtol=1e-6)
    assert dkl_objective(alpha, S, B) == pytest.approx(sum(quad), rel=1e-13)
    assert dkl_objective(alpha, S, B, log_term=True) == pytest.approx(sum(quad) + t * log1,
                                                                      rel=1e-12)


def test_multitask_problem_only_depends_on_target_energy(small):
    """Rotating the task columns (B -> B Q, Q orthogonal) keeps c = rowsum(B^2)."""
    B = small["B"]
    Q, _ = np.linalg.qr(np.random.default_rng(2).standard_normal((3, 3)))
    # rowsums of 3 squares after a 3x3 orthogonal map: a few eps relative
    np.testing.assert_allclose(target_energy(B @ Q), target_energy(B), rtol=1e-12)
    e1 = DiffusionKernelLearning("mDKLKL", solver="fast").fit(small["S"], B)
    e2 = DiffusionKernelLearning("mDKLKL", solver="fast").fit(small["S"], B @ Q)
    # the same problem up to a ~1e-16 relative change of c, solved by the same
    # deterministic steps from the same start: equal up to rounding (1e-8 is far above
    # it); a solver that used B beyond c would differ by O(1)
    np.testing.assert_allclose(e2.weights_, e1.weights_, atol=1e-8)


def test_gradient_and_hessian_match_finite_differences(small):
    S, B = small["S"], small["B"]
    rng = np.random.default_rng(3)
    alpha = rng.dirichlet(np.ones(S.shape[0]))
    n = S.shape[1]
    for lam in (1e-3, 1e-6):
        for log_term in (False, True):
            G = dkl_gradient(alpha, S, B, lam=lam, log_term=log_term)
            H = dkl_hessian(alpha, S, B, lam=lam, log_term=log_term)
            # Central differences: rounding of f (a sum of n terms, error <= n eps times
            # the sum of their magnitudes) over 2h, plus truncation h^2 f''' / 6, which
            # for h = 1e-6 alpha_i is ~(1e-6)^2 of G_i; the same for the Hessian's
            # columns from the gradient. The "scale" is the sum of the terms' magnitudes.
            g, t = alpha @ S + lam, B.shape[1] if log_term else 0
            scale_f = dkl_objective(alpha, S, B, lam) + t * np.abs(np.log(g)).sum()
            scale_G = np.abs(dkl_gradient(alpha, S, B, lam)) + t * (S @ (1 / g))
            for i in (0, 4, 9):
                h = 1e-6 * alpha[i]
                e = np.zeros_like(alpha)
                e[i] = h
                fd = (dkl_objective(alpha + e, S, B, lam, log_term)
                      - dkl_objective(alpha - e, S, B, lam, log_term)) / (2 * h)
                assert abs(G[i] - fd) <= n * EPS64 * scale_f / h + 1e-10 * abs(G[i])
                fd_col = (dkl_gradient(alpha + e, S, B, lam, log_term)
                          - dkl_gradient(alpha - e, S, B, lam, log_term)) / (2 * h)
                assert np.all(np.abs(H[:, i] - fd_col)
                              <= 2 * n * EPS64 * scale_G / h + 1e-10 * np.abs(H[:, i]))
            # H = S diag(w) S^T summed in two orders: n eps relative to max|H| (with the
            # log term w changes sign, so entries may cancel)
            np.testing.assert_allclose(H, H.T, rtol=1e-12, atol=n * EPS64 * np.abs(H).max())


def test_quadratic_term_is_convex_and_log_term_concave(small):
    S, B = small["S"], small["B"]
    rng = np.random.default_rng(4)
    for _ in range(5):
        a, b = rng.dirichlet(np.ones(10), size=2)
        H = dkl_hessian(a, S, B)
        d = np.sqrt(np.diag(H))
        # PSD in exact arithmetic; the unit-diagonal scaling has norm <= p = 10, so
        # rounding (n eps per entry) moves its eigenvalues by <= p n eps ~ 1e-13
        assert np.linalg.eigvalsh(H / np.outer(d, d)).min() > -1e-8
        n, t = S.shape[1], B.shape[1]
        for s in (0.25, 0.5, 0.75):
            m = s * a + (1 - s) * b
            # Jensen up to the rounding of f (n positive terms: n eps ~ 1e-14 relative)
            assert dkl_objective(m, S, B) <= (s * dkl_objective(a, S, B)
                                              + (1 - s) * dkl_objective(b, S, B)) * (1 + 1e-12)
            logt = lambda x: dkl_objective(x, S, B, log_term=True) - dkl_objective(x, S, B)  # noqa: E731
            # logt is a difference of two objectives: each of the three evaluations is
            # exact to n eps (f + t sum |log g|), cancellation included
            slack = 3 * 2 * n * EPS64 * max(dkl_objective(x, S, B) + t * np.abs(np.log(x @ S + LAM)).sum()
                                            for x in (a, b, m))
            assert logt(m) >= s * logt(a) + (1 - s) * logt(b) - slack


def test_objective_is_infinite_where_kernel_is_not_positive_definite(small):
    alpha = np.zeros(10)
    alpha[0] = -1.0
    assert dkl_objective(alpha, small["S"], small["B"], log_term=True) == np.inf
    assert np.all(np.isnan(dkl_gradient(alpha, small["S"], small["B"])))
    assert kkt_residual(alpha, small["S"], small["B"], constraints="none") == np.inf


# ---------------------------------------------------------------------------
# convex formulations: fast solver == SLSQP, KKT


@pytest.mark.parametrize("formulation", ["DKL", "mDKL"])
def test_fast_and_slsqp_reach_the_same_optimum(inst, formulation):
    S, B = inst["S"], inst["B"]
    fast = DiffusionKernelLearning(formulation, solver="fast").fit(S, B)
    ref = DiffusionKernelLearning(formulation, solver="slsqp").fit(S, B)
    assert fast.solver_ == "fast" and ref.solver_ == "slsqp"
    assert np.all(fast.converged_) and np.all(ref.converged_)
    f_fast, f_ref = np.atleast_1d(fast.objective_), np.atleast_1d(ref.objective_)
    k_fast, k_ref = task_kkt(fast, S, B), task_kkt(ref, S, B)     # computed here
    assert np.max(k_fast) <= FAST_KKT and np.max(k_ref) < SLSQP_KKT
    # convex, both feasible: f - f* <= kkt |f| (Frank-Wolfe gap) for each solution
    assert np.all(np.abs(f_fast - f_ref) <= k_fast * f_fast + k_ref * f_ref)
    assert np.all(f_fast - f_ref <= k_fast * f_fast)  # never worse than SLSQP
    # weights: not determined along the flat directions of nearly collinear kernels
    # (SLSQP stops earlier there); the kernel g = alpha S + lam is, where c_i > 0
    targets = [B[:, k] for k in range(B.shape[1])] if formulation == "DKL" else [B]
    for w_f, w_r, b, ff, fr, kf, kr in zip(np.atleast_2d(fast.weights_), np.atleast_2d(ref.weights_),
                                           targets, f_fast, f_ref, k_fast, k_ref):
        c = target_energy(b.reshape(b.shape[0], -1))
        bound = spectrum_radius(S, c, w_f, ff, kf) + spectrum_radius(S, c, w_r, fr, kr)
        finite = np.isfinite(bound)
        assert finite.mean() > 0.5                  # the bound covers most directions
        assert np.all(np.abs((w_f - w_r) @ S)[finite] <= bound[finite] + 1e-12)
    W = np.atleast_2d(fast.weights_)
    assert np.all(W >= 0)
    # fast renormalises alpha /= sum(alpha): p = 10-60 terms, rounding ~p eps
    np.testing.assert_allclose(W.sum(axis=1), 1.0, rtol=1e-12)
    # a genuine mixture, not a single kernel (the test would be trivial otherwise);
    # the active-set steps set inactive weights to exactly 0, so 1e-8 only skips rounding
    assert (W > 1e-8).sum(axis=1).max() >= 2


def test_kkt_residual_small_at_solution_and_bounds_suboptimality(inst):
    S, B = inst["S"], inst["B"]
    fast = DiffusionKernelLearning("mDKL", solver="fast").fit(S, B)
    ref = DiffusionKernelLearning("mDKL", solver="slsqp").fit(S, B)
    # the same formula on the same alpha (default rel 1e-6; abs 1e-12 covers a residual
    # at rounding level, ~n eps)
    assert kkt_residual(fast.weights_, S, B) == pytest.approx(fast.kkt_residual_)
    assert fast.kkt_residual_ <= FAST_KKT
    assert ref.kkt_residual_ < SLSQP_KKT
    rng = np.random.default_rng(5)
    f_star = fast.objective_
    for alpha in rng.dirichlet(np.ones(S.shape[0]), size=5):
        f = dkl_objective(alpha, S, B)
        r = kkt_residual(alpha, S, B)
        assert f >= f_star * (1 - fast.kkt_residual_)      # f_star - f* <= kkt f_star
        # Frank-Wolfe gap >= f - f* >= f - f_star (convexity): the residual certifies
        # optimality; 1e-9 covers the rounding of f and the gap (~n eps)
        assert (f - f_star) / f <= r * (1 + 1e-9)
        # random mixtures are far from optimal (f / f* - 1 = O(1) for a Dirichlet draw):
        # 1e-4 is 1e3 FAST_KKT, so the certificate separates them from the optimum
        assert r > 1e-4
    off = fast.weights_ * 1.01  # sum != 1: |sum - 1| = 0.01 up to rounding
    assert kkt_residual(off, S, B) == pytest.approx(0.01, rel=1e-6)


def test_single_task_formulations_give_one_weight_vector_per_task(inst):
    S, B = inst["S"], inst["B"]
    t, p = B.shape[1], S.shape[0]
    est = DiffusionKernelLearning("DKL").fit(S, B)
    assert est.solver_ == "fast" and est.n_tasks_ == t
    assert est.weights_.shape == (t, p)
    for attr in ("objective_", "n_iter_", "converged_", "kkt_residual_"):
        assert getattr(est, attr).shape == (t,)
    k = t - 1
    alone = DiffusionKernelLearning("DKL").fit(S, B[:, k])
    # the same per-task solve on the same numbers: identical arithmetic (1e-12: rounding)
    np.testing.assert_allclose(alone.weights_[0], est.weights_[k], atol=1e-12)
    # DKL on one task = mDKL with t = 1
    multi = DiffusionKernelLearning("mDKL").fit(S, B[:, [k]])
    assert multi.weights_.shape == (p,)
    np.testing.assert_allclose(multi.weights_, est.weights_[k], atol=1e-12)
    # the joint kernel cannot beat the per-task kernels on the summed quadratic term
    joint = DiffusionKernelLearning("mDKL").fit(S, B)
    # sum_k f_k(w_joint) >= sum_k f_k* >= sum_k est_k (1 - kkt_k) (Frank-Wolfe gap)
    assert joint.objective_ >= np.sum(est.objective_ * (1 - task_kkt(est, S, B)))


def test_fast_mdkl_at_von_mering_size_is_well_under_a_second():
    """n = 2617, p = 60, t = 76 after the eigendecomposition (synthetic spectrum)."""
    rng = np.random.default_rng(6)
    n, t = 2617, 76
    d = np.sort(np.concatenate([np.zeros(20), rng.gamma(2.0, 4.0, n - 20)]))
    S = diffusion_spectra(d, diffusion_betas())
    B = rng.standard_normal((n, t)) * np.exp(-0.3 * d)[:, None] + 0.3 * rng.standard_normal((n, t))
    est = DiffusionKernelLearning("mDKL", solver="fast")
    t0 = time.perf_counter()
    est.fit(S, B)
    elapsed = time.perf_counter() - t0
    assert est.converged_ and est.kkt_residual_ <= FAST_KKT
    assert elapsed < 3.0  # typically ~0.05 s; generous for a loaded 2-core machine


# ---------------------------------------------------------------------------
# formulations with the log term


def test_log_term_is_negligible_at_paper_lambda(inst):
    """At lam = 1e-6, DKLKL ~ DKL (the paper's remark, Results)."""
    S, B = inst["S"], inst["B"]
    conv = DiffusionKernelLearning("mDKL").fit(S, B)
    kl = DiffusionKernelLearning("mDKLKL", solver="slsqp").fit(S, B)
    quad_kl = dkl_objective(kl.weights_, S, B)
    log_kl = dkl_objective(kl.weights_, S, B, log_term=True) - quad_kl
    log_conv = dkl_objective(conv.weights_, S, B, log_term=True) - conv.objective_
    # (The weights are not compared: along the flat directions of nearly collinear
    # kernels neither problem determines them.) conv minimises the quadratic term to
    # its KKT residual, kl the quadratic + log term, at least as well as conv does
    # there (checked, up to the rounding of f); so quad(kl) - quad(conv) lies in
    # [-kkt f_conv, log(conv) - log(kl)], and "negligible" (the paper) is that the log
    # term's change is < 1e-3 of f.
    rounding = 2 * S.shape[1] * EPS64 * (conv.objective_ + B.shape[1] * np.abs(np.log(
        conv.weights_ @ S + LAM)).sum())
    assert quad_kl + log_kl <= conv.objective_ + log_conv + rounding
    assert quad_kl >= conv.objective_ * (1 - conv.kkt_residual_)
    assert log_conv - log_kl <= 1e-3 * conv.objective_
    assert quad_kl == pytest.approx(conv.objective_, rel=1e-3)        # implied by the three


@pytest.mark.parametrize("formulation", ["DKLKL", "mDKLKL"])
def test_nonconvex_constrained_solvers_reach_the_same_kkt_point(inst, formulation):
    S, B = inst["S"], inst["B"]
    fast = DiffusionKernelLearning(formulation, solver="fast").fit(S, B)
    ref = DiffusionKernelLearning(formulation, solver="slsqp").fit(S, B)
    assert np.all(fast.converged_)
    k_fast, k_ref = task_kkt(fast, S, B, log_term=True), task_kkt(ref, S, B, log_term=True)
    assert np.max(k_fast) <= FAST_KKT and np.max(k_ref) < SLSQP_KKT
    # Nonconvex, but locally convex at the fast solution (reduced Hessian positive
    # definite, checked): near it the Frank-Wolfe gap bounds f - f_local as in the
    # convex case, so the objectives agree to the two measured residuals.
    f_fast, f_ref = np.atleast_1d(fast.objective_), np.atleast_1d(ref.objective_)
    targets = [B[:, k] for k in range(B.shape[1])] if fast.weights_.ndim == 2 else [B]
    assert all(reduced_hessian_min(w, S, b, "simplex") > 0
               for w, b in zip(np.atleast_2d(fast.weights_), targets))
    assert np.all(np.abs(f_fast - f_ref) <= k_fast * np.abs(f_fast) + k_ref * np.abs(f_ref))
    # the solver's reported residual is the same formula on the same alpha; atol covers
    # a residual at rounding level (n eps ~ 1e-14)
    np.testing.assert_allclose(k_fast, np.atleast_1d(fast.kkt_residual_), rtol=1e-9, atol=1e-12)


# ---------------------------------------------------------------------------
# unconstrained variants


@pytest.mark.parametrize("formulation", ["DKLKLu", "mDKLKLu"])
def test_unconstrained_nonneg_drops_the_sum_and_keeps_alpha_nonnegative(inst, formulation):
    S, B = inst["S"], inst["B"]
    est = DiffusionKernelLearning(formulation, solver="fast").fit(S, B)
    assert est.constraints_ == "nonneg" and est.solver_ == "fast"
    assert np.all(est.converged_) and np.max(est.kkt_residual_) <= FAST_KKT
    W = np.atleast_2d(est.weights_)
    assert np.all(W >= 0)
    assert np.all(W.sum(axis=1) > 2.0)  # the scale is free and far from 1
    constrained = DiffusionKernelLearning(formulation[:-1], solver="fast").fit(S, B)
    Wc = np.atleast_2d(constrained.weights_)
    targets = [B[:, [k]] for k in range(B.shape[1])] if W.shape[0] > 1 else [B]
    kkt = np.atleast_1d(est.kkt_residual_)
    for w, wc, b, f, k in zip(W, Wc, targets, np.atleast_1d(est.objective_), kkt):
        G = dkl_gradient(w, S, b, log_term=True)
        # optimal scale: d/ds f(s w) at s = 1 is w^T G = 0; the "nonneg" residual bounds
        # sum_i w_i |G_i| / |f| >= |w^T G| / |f| (+ rounding of the recomputed G)
        assert abs(w @ G) <= (k + FLOAT64_EXACT) * abs(f)
        # the simplex is inside the orthant: never worse than the constrained optimum,
        # nor than any rescaling of it
        assert f <= dkl_objective(wc, S, b, log_term=True)
        for s in (0.5, 10.0, 100.0):
            assert f <= dkl_objective(s * wc, S, b, log_term=True)


def test_unconstrained_nonneg_slsqp_agrees_on_a_small_instance(small):
    S, B = small["S"], small["B"]
    fast = DiffusionKernelLearning("mDKLKLu", solver="fast").fit(S, B)
    ref = DiffusionKernelLearning("mDKLKLu", solver="slsqp").fit(S, B)
    # locally convex at the fast solution (reduced Hessian > 0): the objectives agree
    # to the measured residuals, as in the constrained nonconvex test
    k_fast, k_ref = task_kkt(fast, S, B, log_term=True)[0], task_kkt(ref, S, B, log_term=True)[0]
    assert k_ref < SLSQP_KKT and reduced_hessian_min(fast.weights_, S, B, "nonneg") > 0
    assert fast.objective_ - ref.objective_ <= k_fast * abs(fast.objective_)
    assert abs(ref.objective_ - fast.objective_) <= k_fast * abs(fast.objective_) + k_ref * abs(ref.objective_)
    # The kernel: no bound here (the log term makes f concave in g_i where g_i > c_i / t,
    # most directions), so this is a guard, not a derived tolerance: the measured
    # difference is ~4e3 times below it.
    np.testing.assert_allclose(combined_spectrum(S, ref.weights_),
                               combined_spectrum(S, fast.weights_), rtol=1e-3, atol=1e-6)


@pytest.fixture(scope="module")
def well_conditioned():
    """Three well-separated kernels: S has full row rank with cond ~ 10."""
    out = []
    for seed in (0, 1):
        I = planted_instance(60, 10, 3, seed)
        out.append((diffusion_spectra(I["d"], np.array([-0.1, -0.5, -2.0])), I["B"]))
    return out


@pytest.mark.parametrize("formulation", ["DKLKLu", "mDKLKLu"])
def test_unconstrained_free_is_a_stationary_point_inside_the_domain(well_conditioned,
                                                                     formulation):
    saw_negative = False
    for S, B in well_conditioned:
        fast = DiffusionKernelLearning(formulation, solver="fast", unconstrained="free").fit(S, B)
        ref = DiffusionKernelLearning(formulation, solver="slsqp", unconstrained="free").fit(S, B)
        nonneg = DiffusionKernelLearning(formulation, solver="fast").fit(S, B)
        assert fast.constraints_ == "none"
        # free: converged_ means kkt_residual <= tol (no stalled exit)
        assert np.all(fast.converged_) and np.max(fast.kkt_residual_) <= TOL
        # stationary points of the same objective; locally convex at fast's (checked):
        # the objectives agree to the two measured residuals
        f_fast, f_ref = np.atleast_1d(fast.objective_), np.atleast_1d(ref.objective_)
        k_fast, k_ref = task_kkt(fast, S, B, log_term=True), task_kkt(ref, S, B, log_term=True)
        targets = [B[:, [k]] for k in range(B.shape[1])] if np.ndim(fast.weights_) == 2 else [B]
        assert all(reduced_hessian_min(w, S, b, "none") > 0
                   for w, b in zip(np.atleast_2d(fast.weights_), targets))
        assert np.all(np.abs(f_fast - f_ref) <= k_fast * np.abs(f_fast) + k_ref * np.abs(f_ref))
        W = np.atleast_2d(fast.weights_)
        g = combined_spectrum(S, W) + LAM
        # g > 0 is an implicit barrier: far from the boundary (SLSQP's safeguard
        # g >= 1e-3 lam is inactive), and the gradient vanishes
        assert g.min() > 1e3 * LAM
        targets = [B[:, [k]] for k in range(B.shape[1])] if W.shape[0] > 1 else [B]
        for w, b, k in zip(W, targets, k_fast):
            G = dkl_gradient(w, S, b, log_term=True)
            # the "none" residual is max|G| max(max|w|, 1/p) / |f| (+ rounding of G)
            f = dkl_objective(w, S, b, log_term=True)
            assert np.abs(G).max() * np.abs(w).max() <= (k + FLOAT64_EXACT) * abs(f)
        # a larger feasible set than the orthant: no worse than the orthant's solution,
        # up to fast's own first-order suboptimality (kkt |f|)
        f_nn = np.atleast_1d(nonneg.objective_)
        assert np.all(f_fast - f_nn <= k_fast * np.abs(f_fast))
        saw_negative |= bool((W < 0).any())
    assert saw_negative  # the free reading does produce negative weights


def test_unconstrained_free_rejects_zero_target_energy(well_conditioned):
    S, B = well_conditioned[0]
    B = B.copy()
    B[5] = 0.0  # c_5 = 0: t log g_5 -> -inf is unopposed
    with pytest.raises(ValueError, match="unbounded below"):
        DiffusionKernelLearning("mDKLKLu", unconstrained="free").fit(S, B)
    est = DiffusionKernelLearning("mDKLKLu", solver="fast").fit(S, B)  # nonneg: fine
    assert est.converged_


def test_a_task_without_targets_is_handled(small):
    """B[:, k] = 0: DKL's objective is constant (start kept), DKLKL minimises
    log det alone (the most concentrated kernel), DKLKLu (nonneg) goes to 0."""
    S, B = small["S"], small["B"].copy()
    B[:, 1] = 0.0
    p = S.shape[0]
    dkl = DiffusionKernelLearning("DKL").fit(S, B)
    # exact answers (the start kept; a vertex; 0 by the active-set steps): the
    # tolerances only absorb rounding
    np.testing.assert_allclose(dkl.weights_[1], np.full(p, 1.0 / p))
    kl = DiffusionKernelLearning("DKLKL").fit(S, B)
    np.testing.assert_allclose(kl.weights_[1], np.eye(p)[-1], atol=1e-12)
    u = DiffusionKernelLearning("DKLKLu").fit(S, B)
    assert np.all(u.converged_) and np.abs(u.weights_[1]).max() < 1e-12
    assert np.all(u.weights_[[0, 2]].sum(axis=1) > 2.0)


# ---------------------------------------------------------------------------
# API and errors


def test_formulation_table_matches_the_paper():
    assert set(FORMULATIONS) == {"DKL", "DKLKL", "DKLKLu", "mDKL", "mDKLKL", "mDKLKLu"}
    for name, f in FORMULATIONS.items():
        assert f.multitask == name.startswith("m")
        assert f.log_term == ("KLKL" in name)
        assert f.constrained == (not name.endswith("u"))
        assert f.convex == (not f.log_term)


def test_auto_solver_choice(small):
    S, B = small["S"], small["B"]
    for name in FORMULATIONS:
        assert DiffusionKernelLearning(name).fit(S, B).solver_ == "fast"


@pytest.mark.parametrize("kwargs, match", [
    ({"formulation": "SM1"}, "unknown formulation"),
    ({"solver": "newton"}, "solver"),
    ({"unconstrained": "box"}, "unconstrained"),
    ({"lam": 0.0}, "lam"),
    ({"lam": -1e-6}, "lam"),
    ({"tol": 0.0}, "tol"),
    ({"max_iter": 0}, "max_iter"),
])
def test_bad_parameters_raise(small, kwargs, match):
    with pytest.raises(ValueError, match=match):
        DiffusionKernelLearning(**kwargs).fit(small["S"], small["B"])


def test_bad_arrays_raise(small):
    S, B = small["S"], small["B"]
    est = DiffusionKernelLearning("mDKL")
    with pytest.raises(ValueError, match="rows"):
        est.fit(S, B[:-1])
    with pytest.raises(ValueError, match="negative"):
        est.fit(-S, B)
    with pytest.raises(ValueError, match=r"\(p, n\)"):
        est.fit(S[0], B)
    with pytest.raises(ValueError, match="NaN"):
        est.fit(S, np.where(B > 0.5, np.nan, B))
    with pytest.raises(ValueError, match="shape"):
        dkl_objective(np.ones(3), S, B)
    with pytest.raises(ValueError, match="constraints"):
        kkt_residual(np.ones(10) / 10, S, B, constraints="box")
    with pytest.raises(ValueError, match="lam"):
        dkl_objective(np.ones(10) / 10, S, B, lam=0.0)
