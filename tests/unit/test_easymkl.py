"""KOMD / EasyMKL (biokernels.solvers.easymkl): exact QP, closed forms, planted kernels, MKLpy."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from biokernels.io.networks import InputError
from biokernels.solvers.easymkl import KOMD, EasyMKL, komd_dual


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
    # feasibility: non-negative, sums to 1 per class
    assert gamma.min() >= 0
    assert gamma[y > 0].sum() == pytest.approx(1, abs=1e-12)
    assert gamma[y < 0].sum() == pytest.approx(1, abs=1e-12)
    # both minimise the same convex objective: ours must be no worse than Clarabel's
    assert info["objective"] <= obj_ref * (1 + 1e-7) + 1e-12
    assert info["objective"] == pytest.approx(obj_ref, rel=1e-6)
    if lam > 0:      # strictly convex: unique minimiser
        np.testing.assert_allclose(gamma, g_ref, atol=1e-5)


def test_komd_dual_rank_deficient_hard_margin():
    """λ = 0 with a rank-2 linear kernel and overlapping classes: Q singular, the
    hulls intersect, the minimum (squared distance) is 0."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 2))
    y = np.where(rng.random(40) < 0.5, 1.0, -1.0)
    gamma, info = komd_dual(X @ X.T, y, 0.0)
    assert info["objective"] == pytest.approx(0.0, abs=1e-9)
    p = (gamma * y) @ X                      # p+ - p-
    assert np.linalg.norm(p) < 1e-4


def test_komd_lam1_is_class_centroids():
    """λ = 1: (1) is min ||γ||² over two simplices, minimised by γ_i = 1/n_{y_i};
    then f(x) = mean_+ k(x,.) - mean_- k(x,.) - b, b = ½(mean K++ - mean K--)."""
    rng, X, y = _problem(n=45, seed=1)
    K = np.exp(-_sqdist(X, X) / 10)
    Xt = rng.normal(size=(7, 5))
    Kt = np.exp(-_sqdist(Xt, X) / 10)
    m = KOMD(lam=1.0).fit(K, y)
    pos, neg = y > 0, y < 0
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
    np.testing.assert_allclose(m1.decision_function(K), m2.decision_function(K), atol=1e-12)
    pred = m1.predict(K)
    assert set(pred) <= {"normal", "tumour"}
    assert (pred == lab).mean() > 0.8                         # a linear rule on the training set


def test_easymkl_lam1_closed_form():
    """λ = 1: γ uniform per class, so d_r = ||centroid+ - centroid-||² in kernel r's
    feature space = mean K_r++ + mean K_r-- - 2 mean K_r+-; η_r = d_r / Σ d."""
    rng, X, y = _problem(n=50, seed=4)
    Ks = [X @ X.T, np.exp(-_sqdist(X, X) / 5), np.exp(-_sqdist(X[:, 2:], X[:, 2:]))]
    m = EasyMKL(lam=1.0).fit(Ks, y)
    pos, neg = y > 0, y < 0
    d = np.array([K[np.ix_(pos, pos)].mean() + K[np.ix_(neg, neg)].mean() - 2 * K[np.ix_(pos, neg)].mean()
                  for K in Ks])
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
    for lam in (0.1, 0.5):
        w = EasyMKL(lam=lam).fit(Ks, y).weights_
        assert w.sum() == pytest.approx(1.0, abs=1e-12) and w.min() >= 0
        assert np.argmax(w) == 0 and w[0] > 0.5, w


def test_easymkl_mean_aggregation_equals_rescaled_lambda():
    """'mean' at λ minimises (1-λ)/P γ'YKYγ + λ||γ||², proportional to 'sum' at
    λ' = Pλ/(1-λ+Pλ); same γ, same weights."""
    rng, X, y = _problem(n=40, seed=6)
    Ks = [X @ X.T, np.exp(-_sqdist(X, X) / 5), np.exp(-_sqdist(X, X) / 50)]
    lam, P = 0.2, 3
    a = EasyMKL(lam=lam, kernel_aggregation="mean").fit(Ks, y)
    b = EasyMKL(lam=P * lam / (1 - lam + P * lam), kernel_aggregation="sum").fit(Ks, y)
    np.testing.assert_allclose(a.gamma_, b.gamma_, atol=1e-8)
    np.testing.assert_allclose(a.weights_, b.weights_, atol=1e-8)
    assert EasyMKL().kernel_aggregation == "sum"


def test_easymkl_predict_uses_komd_on_combined_kernel():
    rng, X, y = _problem(n=50, seed=7)
    Xt = rng.normal(size=(9, 5))
    Ks = [X @ X.T, np.exp(-_sqdist(X, X) / 5)]
    Kt = [Xt @ X.T, np.exp(-_sqdist(Xt, X) / 5)]
    m = EasyMKL(lam=0.3, komd_lam=0.2).fit(Ks, y)
    ref = KOMD(lam=0.2).fit(m.combine(Ks), y)
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
    ours = KOMD(lam=_mklpy_lam(mu, y)).fit(Ks[1], y)
    # cvxopt's default tolerances: agreement to ~1e-6 relative
    f_ref = np.asarray(ref.decision_function(Kt[1])).ravel()
    np.testing.assert_allclose(ours.decision_function(Kt[1]), f_ref, atol=1e-5 * np.abs(f_ref).max())
    np.testing.assert_array_equal(ours.predict(Kt[1]), ref.predict(Kt[1]))


@pytest.mark.parametrize("lam", [0.1, 0.5])
def test_easymkl_matches_mklpy(lam):
    torch, T, X, y, Ks, Kt = _mklpy_setup()
    from MKLpy.algorithms import KOMD as MKomd
    from MKLpy.algorithms import EasyMKL as MEasy
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = MEasy(lam=lam, learner=MKomd(lam=0.1)).fit(T(Ks), torch.tensor(y))
        f_ref = np.asarray(ref.decision_function(T(Kt))).ravel()
        p_ref = np.asarray(ref.predict(T(Kt)))
    ours = EasyMKL(lam=lam, komd_lam=_mklpy_lam(0.1, y)).fit(Ks, y)
    # MKLpy returns float32 weights (libsvm solve, torch.tensor of floats)
    np.testing.assert_allclose(ours.weights_, ref.solution.weights.numpy(), atol=2e-6)
    np.testing.assert_allclose(ours.decision_function(Kt), f_ref, atol=1e-4 * np.abs(f_ref).max())
    np.testing.assert_array_equal(ours.predict(Kt), p_ref)
