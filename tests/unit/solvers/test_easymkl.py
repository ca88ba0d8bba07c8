"""KOMD / EasyMKL (biokernels.solvers.easymkl): exact QP, closed forms, planted kernels, MKLpy."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from biokernels.errors import InputError
from biokernels.solvers.easymkl import KOMD, EasyMKL, komd_dual, weighted_kernel_sum
from biokernels.solvers.kernel_lists import combine_kernels, kernel_sketch
from tolerances import (EPS32, EPS64, easymkl_weight_bound, easymkl_weights_shift, komd_decision_bound,
                        komd_kkt_violation, komd_objective, komd_radius, komd_smo_radius)


def _sqdist(A, B):
    return ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1)


def _problem(n=60, seed=0, d=5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    return rng, X, y


def _cvxpy_komd(K, y, lam):
    """Independent solve of (1) with cvxpy/Clarabel at tight tolerances."""
    cp = pytest.importorskip("cvxpy")
    n = len(y)
    Q = (1 - lam) * np.outer(y, y) * K + lam * np.eye(n)
    w, V = np.linalg.eigh(Q)
    F = V * np.sqrt(np.clip(w, 0, None))                       # Q = F F'
    g = cp.Variable(n)
    prob = cp.Problem(cp.Minimize(cp.sum_squares(F.T @ g)),
                      [g >= 0, cp.sum(g[y > 0]) == 1, cp.sum(g[y < 0]) == 1])
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    return g.value, prob.value


@pytest.mark.parametrize("lam", [0.0, 0.05, 0.5])
def test_komd_dual_matches_cvxpy(lam):
    rng, X, y = _problem(n=50)
    K = np.exp(-_sqdist(X, X) / 10)
    gamma, info = komd_dual(K, y, lam)
    g_ref, obj_ref = _cvxpy_komd(K, y, lam)
    pos = y > 0
    Q = (1 - lam) * np.outer(y, y) * K + lam * np.eye(len(y))
    # feasibility: non-negative, sums to 1 per class (float64: a sum of <= 50
    # terms in [0, 1] is exact to 50 eps ~ 1e-14)
    assert gamma.min() >= 0
    assert gamma[y > 0].sum() == pytest.approx(1, abs=1e-12)
    assert gamma[y < 0].sum() == pytest.approx(1, abs=1e-12)
    # SMO's stopping rule (komd_dual: spread <= tol max(1, max diag Q), tol = 1e-9),
    # checked on a KKT violation computed here, not the solver's report
    viol = komd_kkt_violation(Q, pos, gamma)
    assert viol <= 1e-9 * max(1.0, Q.diagonal().max())
    # both minimise the same convex objective: the Frank-Wolfe gap <= 2 viol bounds
    # f(gamma) - f*, and Clarabel's point projected onto the simplices has f >= f*
    _, f_gap = komd_radius(Q, pos, gamma, viol, g_ref)
    assert f_gap <= 2 * viol                       # ours no worse than Clarabel's
    # Clarabel stops at gap <= 1e-12 (1 + |f|), feasibility 1e-12 (set above): 1e-6
    # relative is far above both (a different problem, e.g. another λ, is O(1) off)
    assert info["objective"] == pytest.approx(obj_ref, rel=1e-6)
    if lam > 0:      # strictly convex (λ_min(Q) >= λ): unique minimiser, radius from
        # strong convexity (tests/tolerances.py, komd_radius)
        bound, _ = komd_radius(Q, pos, gamma, viol, g_ref)
        assert np.linalg.norm(gamma - g_ref) <= bound


def test_komd_dual_rank_deficient_hard_margin():
    """λ = 0 with a rank-2 linear kernel and overlapping classes: Q singular, the
    hulls intersect, the minimum (squared distance) is 0."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 2))
    y = np.where(rng.random(40) < 0.5, 1.0, -1.0)
    gamma, info = komd_dual(X @ X.T, y, 0.0)
    # f* = 0, so the Frank-Wolfe bound f(γ) - f* <= 2 viol (tolerances.komd_radius)
    # bounds f itself; viol obeys SMO's stopping rule (tol 1e-9 max(1, max diag Q))
    Q = np.outer(y, y) * (X @ X.T)
    viol = komd_kkt_violation(Q, y > 0, gamma)
    assert viol <= 1e-9 * max(1.0, Q.diagonal().max())
    # f >= 0 in exact arithmetic; γ'Qγ at f ~ 0 rounds by about eps * max|Q| either way
    rounding = 1e-15 * max(1.0, Q.diagonal().max())
    assert -rounding <= info["objective"] <= 2 * viol + rounding
    p = (gamma * y) @ X                      # p+ - p-
    assert np.linalg.norm(p) <= np.sqrt(2 * viol + 1e-15)    # ||p||² = γ'Qγ = f


def test_komd_lam1_is_class_centroids():
    """λ = 1: (1) is min ||γ||² over two simplices, minimised by γ_i = 1/n_{y_i};
    then f(x) = mean_+ k(x,.) - mean_- k(x,.) - b, b = ½(mean K++ - mean K--)."""
    rng, X, y = _problem(n=45, seed=1)
    K = np.exp(-_sqdist(X, X) / 10)
    Xt = rng.normal(size=(7, 5))
    Kt = np.exp(-_sqdist(Xt, X) / 10)
    m = KOMD(lam=1.0).fit(K, y)
    pos, neg = y > 0, y < 0
    # closed forms against float64 evaluations: γ = 1/n_c is SMO's exact starting
    # point (gradient spread 0 at λ = 1); the means are sums of <= 45² terms in [0, 1],
    # rounding <= 2e3 eps ~ 5e-13
    np.testing.assert_allclose(m.gamma_, np.where(pos, 1 / pos.sum(), 1 / neg.sum()), atol=1e-12)
    b = 0.5 * (K[np.ix_(pos, pos)].mean() - K[np.ix_(neg, neg)].mean())
    assert m.bias_ == pytest.approx(b, abs=1e-12)
    f = Kt[:, pos].mean(1) - Kt[:, neg].mean(1) - b
    np.testing.assert_allclose(m.decision_function(Kt), f, atol=1e-12)


def test_komd_string_labels_and_predict():
    rng, X, y = _problem(n=40, seed=2)
    K = X @ X.T + 1.0
    lab = np.where(y > 0, "tumour", "normal")
    m1 = KOMD(lam=0.2).fit(K, lab)
    m2 = KOMD(lam=0.2).fit(K, (y > 0).astype(int))
    assert list(m1.classes_) == ["normal", "tumour"]        # sorted; classes_[1] is +1
    # same ±1 labels, same kernel: the same arithmetic (float64 rounding at most)
    np.testing.assert_allclose(m1.decision_function(K), m2.decision_function(K), atol=1e-12)
    pred = m1.predict(K)
    assert set(pred) <= {"normal", "tumour"}
    # a linear rule on the training set; the planted labels sign(x0 + 0.5 z) have
    # Bayes accuracy 1 - atan(0.5)/π = 0.85 for the rule sign(x0)
    assert (pred == lab).mean() > 0.8


def test_easymkl_lam1_closed_form():
    """λ = 1: γ uniform per class, so d_r = ||centroid+ - centroid-||² in kernel r's
    feature space = mean K_r++ + mean K_r-- - 2 mean K_r+-; η_r = d_r / Σ d."""
    rng, X, y = _problem(n=50, seed=4)
    Ks = [X @ X.T, np.exp(-_sqdist(X, X) / 5), np.exp(-_sqdist(X[:, 2:], X[:, 2:]))]
    m = EasyMKL(lam=1.0).fit(Ks, y)
    pos, neg = y > 0, y < 0
    d = np.array([K[np.ix_(pos, pos)].mean() + K[np.ix_(neg, neg)].mean() - 2 * K[np.ix_(pos, neg)].mean()
                  for K in Ks])
    # closed form, float64: sums of <= 2500 terms (rounding ~5e-13 relative);
    # rtol 1e-10 allows the cancellation in d_r (a difference of means)
    np.testing.assert_allclose(m.weights_, d / d.sum(), rtol=1e-10)
    np.testing.assert_allclose(m.gamma_, np.where(pos, 1 / pos.sum(), 1 / neg.sum()), atol=1e-12)


def test_easymkl_planted_informative_kernel():
    """Labels depend only on feature 0. Kernel 0 sees only that feature; kernels 1-3
    see independent noise features. Class centroids (hence hull points) coincide
    in the noise kernels' feature spaces up to sampling error, so d_r is small there."""
    rng = np.random.default_rng(5)
    n = 120
    x0 = rng.normal(size=(n, 1))
    y = np.where(x0[:, 0] > 0, 1, -1)
    Ks = [np.exp(-_sqdist(x0, x0) / 2)]
    for _ in range(3):
        Z = rng.normal(size=(n, 3))
        Ks.append(np.exp(-_sqdist(Z, Z) / 6))
    # Why 0.5: in a noise kernel the two (near-uniform) hull points differ only by
    # sampling error, E d_r ~ (1/60 + 1/60) (1 - E k(z, z')) = 0.033 (1 - 0.47) ~ 0.018
    # (E k = (1 + 4/6)^-1.5 for z - z' ~ N(0, 2I)), while kernel 0 separates the two
    # half-normal classes, d_0 ~ 0.1: w_0 ~ 0.1 / (0.1 + 3 * 0.018) ~ 0.65 > 0.5.
    for lam in (0.1, 0.5):
        w = EasyMKL(lam=lam).fit(Ks, y).weights_
        assert w.sum() == pytest.approx(1.0, abs=1e-12) and w.min() >= 0   # d / sum d: 4 terms
        assert np.argmax(w) == 0 and w[0] > 0.5, w


def test_easymkl_mean_aggregation_equals_rescaled_lambda():
    """'mean' at λ minimises (1-λ)/P γ'YKYγ + λ||γ||², proportional to 'sum' at
    λ' = Pλ/(1-λ+Pλ); same γ, same weights."""
    rng, X, y = _problem(n=40, seed=6)
    Ks = [X @ X.T, np.exp(-_sqdist(X, X) / 5), np.exp(-_sqdist(X, X) / 50)]
    lam, P = 0.2, 3
    a = EasyMKL(lam=lam, kernel_aggregation="mean").fit(Ks, y)
    lam_b = P * lam / (1 - lam + P * lam)
    b = EasyMKL(lam=lam_b, kernel_aggregation="sum").fit(Ks, y)
    # one minimiser γ* (proportional objectives); each SMO solution is within its
    # KKT radius of it (tests/tolerances.py, komd_smo_radius)
    y_pm, Ksum = np.where(y > 0, 1.0, -1.0), sum(Ks)
    YKY, n = np.outer(y_pm, y_pm) * Ksum, len(y)
    r = (komd_smo_radius((1 - lam) / P * YKY + lam * np.eye(n), y_pm > 0, a.gamma_)
         + komd_smo_radius((1 - lam_b) * YKY + lam_b * np.eye(n), y_pm > 0, b.gamma_))
    assert np.linalg.norm(a.gamma_ - b.gamma_) <= r
    assert np.all(np.abs(a.weights_ - b.weights_) <= easymkl_weights_shift(Ks, y_pm, a.gamma_, r))
    assert EasyMKL().kernel_aggregation == "sum"


def test_easymkl_predict_uses_komd_on_combined_kernel():
    rng, X, y = _problem(n=50, seed=7)
    Xt = rng.normal(size=(9, 5))
    Ks = [X @ X.T, np.exp(-_sqdist(X, X) / 5)]
    Kt = [Xt @ X.T, np.exp(-_sqdist(Xt, X) / 5)]
    m = EasyMKL(lam=0.3, komd_lam=0.2).fit(Ks, y)
    ref = KOMD(lam=0.2).fit(m.combine(Ks), y)
    # the same solve on the same combined kernel: equal up to float64 rounding
    np.testing.assert_allclose(m.decision_function(Kt), ref.decision_function(m.combine(Kt)), atol=1e-10)
    np.testing.assert_array_equal(m.predict(Kt), ref.predict(m.combine(Kt)))
    assert EasyMKL(lam=0.3).fit(Ks, y).komd_.lam == 0.3       # komd_lam defaults to lam


def test_easymkl_input_errors_name_the_kernel():
    rng, X, y = _problem(n=20, seed=8)
    K = X @ X.T
    with pytest.raises(InputError, match="kernel 1.*shape"):
        EasyMKL().fit([K, K[:10, :10]], y)
    with pytest.raises(InputError, match="kernel 0.*square"):
        EasyMKL().fit([K[:, :10]], y)
    bad = K.copy()
    bad[0, 0] = -1e3
    with pytest.raises(InputError, match="kernel 2.*positive semi-definite"):
        EasyMKL().fit([K, K, bad], y)
    nan = K.copy()
    nan[3, 4] = nan[4, 3] = np.nan
    with pytest.raises(InputError, match="kernel 1.*finite"):
        EasyMKL().fit([K, nan], y)
    with pytest.raises(InputError, match="2 classes"):
        EasyMKL().fit([K], np.ones(20))
    with pytest.raises(InputError, match="expected 20 labels"):
        EasyMKL().fit([K], y[:19])
    with pytest.raises(InputError, match="lam"):
        EasyMKL(lam=1.5).fit([K], y)
    m = EasyMKL().fit([K, K], y)
    with pytest.raises(InputError, match="kernel 1.*columns"):
        m.predict([K[:5], K[:5, :7]])
    assert issubclass(InputError, ValueError)


# ------------------------------------------------------------------ MKLpy
def _mklpy_setup():
    pytest.importorskip("MKLpy")
    torch = pytest.importorskip("torch")
    rng, X, y = _problem(n=70, seed=9)
    Xt = rng.normal(size=(25, 5))
    Ks = [X @ X.T, np.exp(-_sqdist(X, X) / 5), np.exp(-_sqdist(X[:, 1:], X[:, 1:]))]
    Kt = [Xt @ X.T, np.exp(-_sqdist(Xt, X) / 5), np.exp(-_sqdist(Xt[:, 1:], X[:, 1:]))]
    T = lambda L: [torch.tensor(k) for k in L]  # noqa: E731
    return torch, T, X, y.astype(int), Ks, Kt


# MKLpy's EasyMKL weight step: LIBSVM at this tolerance (MKLpy's default, passed
# explicitly because easymkl_weight_bound assumes it)
LIBSVM_TOL = 1e-7


def _mklpy_lam(mu, y):
    """MKLpy's KOMD(lam=μ) puts μ·n₊n₋/n on the identity: (1-μ)YKY + μcI ∝ (1-λ)YKY + λI
    with λ/(1-λ) = μc/(1-μ)."""
    c = (y > 0).sum() * (y < 0).sum() / len(y)
    return mu * c / (1 - mu + mu * c)


def test_komd_matches_mklpy_komd():
    torch, T, X, y, Ks, Kt = _mklpy_setup()
    from MKLpy.algorithms import KOMD as MKomd
    mu = 0.3
    ref = MKomd(lam=mu, kernel="precomputed").fit(Ks[1], y)
    lam = _mklpy_lam(mu, y)
    ours = KOMD(lam=lam).fit(Ks[1], y)
    # Tolerances from the solvers' stopping rules (tests/tolerances.py), not
    # from one machine's run: MKLpy's cvxopt gamma on our (rescaled) problem.
    y_pm = np.where(y > 0, 1.0, -1.0)
    Q = (1 - lam) * np.outer(y_pm, y_pm) * Ks[1] + lam * np.eye(len(y))
    viol = komd_kkt_violation(Q, y_pm > 0, ours.gamma_)
    assert viol <= 1e-9 * max(1.0, Q.diagonal().max())         # SMO's stopping rule
    g_ref = np.asarray(ref.gamma).ravel()
    r, f_gap = komd_radius(Q, y_pm > 0, ours.gamma_, viol, g_ref)
    # same problem: cvxopt's defaults stop at relative gap <= reltol = 1e-6
    # (MKLpy's objective is ours times 1 - μ + μc > 0, so relative gaps agree)
    assert -f_gap <= 1e-6 * komd_objective(Q, ours.gamma_) + 2 * viol
    f_ref = np.asarray(ref.decision_function(Kt[1])).ravel()
    bound = komd_decision_bound(Ks[1], Kt[1], ours.gamma_, Ks[1], Kt[1], g_ref, r)
    assert np.all(np.abs(ours.decision_function(Kt[1]) - f_ref) <= bound)
    sure = np.abs(f_ref) > bound                                 # sign fixed within the bound
    np.testing.assert_array_equal(ours.predict(Kt[1])[sure], ref.predict(Kt[1])[sure])


@pytest.mark.parametrize("lam", [0.1, 0.5])
def test_easymkl_matches_mklpy(lam):
    torch, T, X, y, Ks, Kt = _mklpy_setup()
    from MKLpy.algorithms import KOMD as MKomd
    from MKLpy.algorithms import EasyMKL as MEasy
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = MEasy(lam=lam, learner=MKomd(lam=0.1), tolerance=LIBSVM_TOL).fit(T(Ks), torch.tensor(y))
        f_ref = np.asarray(ref.decision_function(T(Kt))).ravel()
        p_ref = np.asarray(ref.predict(T(Kt)))
    komd_lam = _mklpy_lam(0.1, y)
    ours = EasyMKL(lam=lam, komd_lam=komd_lam).fit(Ks, y)
    y_pm = np.where(y > 0, 1.0, -1.0)
    pos = y_pm > 0
    # weights: MKLpy's are LIBSVM's (stopping rule and float32 kernel cache, see
    # easymkl_weight_bound: ~1e-4 here, the cache dominating) stored in float32
    # (torch.tensor of Python floats, then w / sum w: rounding of d_r, the sum and the
    # division, <= 2 eps32 relative; 3 eps32 |w| covers them)
    w_ref = ref.solution.weights.numpy().astype(float)
    Q_sum = (1 - lam) * np.outer(y_pm, y_pm) * sum(Ks) + lam * np.eye(len(y))
    g_sum, _ = komd_dual(sum(Ks), y_pm, lam)
    viol_sum = komd_kkt_violation(Q_sum, pos, g_sum)
    w_bound = easymkl_weight_bound(Ks, y_pm, lam, g_sum, viol_sum, LIBSVM_TOL) + 3 * EPS32 * np.abs(w_ref)
    assert np.all(np.abs(ours.weights_ - w_ref) <= w_bound)
    # decision function: ours is KOMD on sum w_r K_r, MKLpy's is cvxopt's KOMD on sum w'_r K_r.
    # ||g - g'|| <= ||g - g*(Q)|| + ||g*(Q) - g*(Q')|| + ||g*(Q') - g'||: the middle term
    # <= ||(Q - Q') g*(Q')|| / lambda_min(Q) (optimality of both for min g'Qg on the same
    # polytope), g*(Q') pinned by our own solve on MKLpy's kernel.
    K, Kc = ours.combine(Ks), sum(w * K for w, K in zip(w_ref, Ks))
    Kt_o, Kt_c = ours.combine(Kt), sum(w * K for w, K in zip(w_ref, Kt))
    Qk = (1 - komd_lam) * np.outer(y_pm, y_pm) * K + komd_lam * np.eye(len(y))
    Qc = (1 - komd_lam) * np.outer(y_pm, y_pm) * Kc + komd_lam * np.eye(len(y))
    g_c, _ = komd_dual(Kc, y_pm, komd_lam)
    viol_c = komd_kkt_violation(Qc, pos, g_c)
    r_c = viol_c * np.sqrt(np.count_nonzero(g_c > 0)) / (2 * np.linalg.eigvalsh(Qc)[0])
    g_ref = np.asarray(ref.learner.gamma).ravel()
    r_ref, f_gap = komd_radius(Qc, pos, g_c, viol_c, g_ref)     # >= ||g*(Q') - g'||
    assert -f_gap <= 1e-6 * komd_objective(Qc, g_c) + 2 * viol_c   # cvxopt's reltol 1e-6
    viol_k = komd_kkt_violation(Qk, pos, ours.komd_.gamma_)
    lam_k = np.linalg.eigvalsh(Qk)[0]
    r_k = viol_k * np.sqrt(np.count_nonzero(ours.komd_.gamma_ > 0)) / (2 * lam_k)
    shift = (np.linalg.norm((Qk - Qc) @ g_c) + np.linalg.norm(Qk - Qc, 2) * r_c) / lam_k
    bound = komd_decision_bound(K, Kt_o, ours.komd_.gamma_, Kc, Kt_c, g_ref, r_k + shift + r_ref)
    assert np.all(np.abs(ours.decision_function(Kt) - f_ref) <= bound)
    sure = np.abs(f_ref) > bound                                 # sign fixed within the bound
    np.testing.assert_array_equal(ours.predict(Kt)[sure], p_ref[sure])


# --------------------------------------------------------------------------- compiled paths (issue #20)


def _pd_problem(n=80, seed=3, d=6):
    """An RBF kernel (positive definite: Q = (1-λ)YKY + λI is PD for every λ,
    so the SMO radius of tolerances.komd_smo_radius exists) and test rows."""
    rng, X, y = _problem(n=n + 20, seed=seed, d=d)
    K = np.exp(-_sqdist(X, X) / d)
    return K[:n, :n], K[n:, :n], y[:n]


@pytest.mark.parametrize("lam", [0.0, 0.1, 0.5, 1.0])
def test_komd_numba_backend_matches_python_reference(lam):
    K, Kt, y = _pd_problem()
    pos = y > 0
    Q = (1 - lam) * np.outer(y, y) * K + lam * np.eye(len(y))
    g_n, info_n = komd_dual(K, y, lam, backend="numba")
    g_p, info_p = komd_dual(K, y, lam, backend="python")
    # both stop by komd_dual's rule (spread <= tol max(1, max diag Q), tol 1e-9),
    # checked on KKT violations computed here
    eps = 1e-9 * max(1.0, Q.diagonal().max())
    v_n, v_p = komd_kkt_violation(Q, pos, g_n), komd_kkt_violation(Q, pos, g_p)
    assert v_n <= eps and v_p <= eps
    # each is within its Frank-Wolfe gap (<= 2 viol) of f*, plus the rounding of g'Qg
    # (n-term sums, n eps |Q||g||g|)
    rnd = len(y) * EPS64 * float(np.abs(g_n) @ np.abs(Q) @ np.abs(g_n))
    assert abs(komd_objective(Q, g_n) - komd_objective(Q, g_p)) <= 2 * max(v_n, v_p) + 2 * rnd
    # Q positive definite: each within its strong-convexity radius of the unique minimiser
    radius = komd_smo_radius(Q, pos, g_n) + komd_smo_radius(Q, pos, g_p)
    assert np.linalg.norm(g_n - g_p) <= radius
    f_n = KOMD(lam=lam, backend="numba").fit(K, y).decision_function(Kt)
    f_p = KOMD(lam=lam, backend="python").fit(K, y).decision_function(Kt)
    assert np.all(np.abs(f_n - f_p) <= komd_decision_bound(K, Kt, g_n, K, Kt, g_p, radius))
    # the compiled loop makes the reference's operations in its order: here the same steps
    assert info_n["iterations"] == info_p["iterations"]


def test_komd_unknown_backend():
    K, _, y = _pd_problem(n=20)
    with pytest.raises(InputError, match="backend"):
        komd_dual(K, y, 0.1, backend="fortran")
    with pytest.raises(InputError, match="backend"):
        EasyMKL(backend="fortran").fit([K, K], y)


def test_weighted_kernel_sum_is_combine_kernels_bit_for_bit():
    rng = np.random.default_rng(4)
    big = rng.normal(size=(7, 40, 40))
    rows, cols = np.sort(rng.choice(40, 25, replace=False)), np.sort(rng.choice(40, 30, replace=False))
    w = rng.random(7)
    w[[1, 4]] = 0.0                                   # zero weights are skipped, as combine_kernels does
    stacks = {"C order": np.ascontiguousarray(big[:, :25, :30]),
              "kernel index innermost (PIMKL's inner folds)": big[:, rows[:, None], cols[None, :]] * 1.5,
              "Fortran order": np.asfortranarray(big[:, :25, :30]),
              "sliced view": big[::2, 3:28, 5:35]}
    for name, S in stacks.items():
        ws = w[: S.shape[0]]
        ref = combine_kernels(list(S), ws)
        got = weighted_kernel_sum(S, ws)
        assert np.array_equal(got, ref), name
        assert got.flags.c_contiguous == ref.flags.c_contiguous, name     # the same memory layout
    ref = combine_kernels(list(stacks["C order"]), w)
    assert np.array_equal(weighted_kernel_sum(list(stacks["C order"]), w), ref)   # a list: combine_kernels


def _kernel_stack(n=60, P=5, seed=7):
    """P linear kernels on feature groups, one informative; a (P, n, m) stack
    laid out as PIMKL's inner-fold kernels (kernel index innermost)."""
    rng, X, y = _problem(n=n + 15, seed=seed, d=3 * P)
    full = np.stack([X[:, 3 * r:3 * r + 3] @ X[:, 3 * r:3 * r + 3].T for r in range(P)])
    tr, te = np.arange(n), np.arange(n, n + 15)
    Ks, Kt = full[:, tr[:, None], tr[None, :]], full[:, te[:, None], tr[None, :]]
    assert Ks.strides[0] < min(Ks.strides[1:])                 # numpy's layout of this indexing
    return Ks, Kt, y[:n]


def test_easymkl_fit_path_equals_one_fit_per_lambda():
    Ks, Kt, y = _kernel_stack()
    lams = [0.0, 0.3, 1.0]
    for backend in ("numba", "python"):
        path = EasyMKL(kernel_aggregation="sum", backend=backend).fit_path(Ks, y, lams)
        for lam, m in zip(lams, path):
            ref = EasyMKL(lam=lam, backend="python").fit(Ks, y)
            # the same operations in the same order (the λ-independent part done once,
            # compiled sums and the batched product of the same layout): the same bits
            assert np.array_equal(m.weights_, ref.weights_) and np.array_equal(m.gamma_, ref.gamma_)
            assert m.lam == lam and m.komd_.lam == lam
            assert np.array_equal(m.decision_function(Kt), ref.decision_function(Kt))
            for a, b in zip(m.train_sketches_, ref.train_sketches_):
                assert np.array_equal(a.product, b.product) and a.scale == b.scale and a.eps == b.eps
    sk = kernel_sketch(Ks[2])
    assert np.array_equal(path[0].train_sketches_[2].product, sk.product)
    kpath = KOMD().fit_path(Ks[1], y, lams)
    for lam, m in zip(lams, kpath):
        ref = KOMD(lam=lam).fit(Ks[1], y)
        assert np.array_equal(m.gamma_, ref.gamma_) and m.bias_ == ref.bias_


def test_easymkl_fit_path_errors():
    Ks, _, y = _kernel_stack(P=3)
    # labels-blind kernels: every λ fails as fit fails, and the path says so per λ
    zero = np.zeros_like(Ks)
    path = EasyMKL(psd_tol=None).fit_path(zero, y, [0.1, 0.5])
    with pytest.raises(InputError) as err:
        EasyMKL(lam=0.1, psd_tol=None).fit(zero, y)
    assert all(isinstance(e, InputError) and str(e) == str(err.value) for e in path)
    # the PSD check runs once per kernel and still rejects a non-PSD kernel with fit's error
    bad = np.array(Ks)
    bad[1] = bad[1] - 2.0 * np.abs(np.linalg.eigvalsh(bad[1])).max() * np.eye(bad.shape[1])
    with pytest.raises(InputError) as e_fit:
        EasyMKL(lam=0.1).fit(bad, y)
    with pytest.raises(InputError) as e_path:
        EasyMKL().fit_path(bad, y, [0.1, 0.5])
    assert "kernel 1" in str(e_fit.value) and "positive semi-definite" in str(e_fit.value)
    assert str(e_path.value) == str(e_fit.value)
    with pytest.raises(InputError) as e_komd:
        KOMD().fit_path(bad[1], y, [0.1])
    assert "positive semi-definite" in str(e_komd.value)
    with pytest.raises(InputError, match="lam"):
        EasyMKL().fit_path(Ks, y, [0.1, 1.5])
