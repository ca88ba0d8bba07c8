"""CKA / FHeuristic / PWMK / EasyMKL / MKLClassifier (biokernels.solvers.mkl) against their definitions and
MKLpy; the contract all methods share: test_mkl_contract.py."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.model_selection import cross_val_score
from sklearn.svm import SVC

from biokernels.errors import InputError
from biokernels.solvers.mkl import (CKA, PWMK, EasyMKL, FHeuristic, MKLClassifier,
                                    centered_alignment_terms, kernel_alignment)
from tolerances import EPS32, EPS64, box_radius, solve_rtol


def alignment_rtol(M, n):
    """M and a are sums of n^2 products (float64 rounding <= n^2 eps relative, no
    cancellation in the Frobenius products of PSD kernels); v = M^-1 a moves by cond(M)
    times that, and so does v / ||v||; x2 for two independent evaluations, x2 for a."""
    w = np.linalg.eigvalsh(M)
    return 4 * (w[-1] / w[0]) * n ** 2 * EPS64


def _sqdist(A, B):
    return ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1)


def _data(n=80, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0, 1, -1)
    Xt = rng.normal(size=(30, 5))
    Ks = [X @ X.T, np.exp(-_sqdist(X, X) / 5), np.exp(-_sqdist(X[:, 1:], X[:, 1:]))]
    Kt = [Xt @ X.T, np.exp(-_sqdist(Xt, X) / 5), np.exp(-_sqdist(Xt[:, 1:], X[:, 1:]))]
    return X, y, Ks, Kt


def _center(K):
    n = len(K)
    H = np.eye(n) - 1.0 / n
    return H @ K @ H


def test_alignment_terms_definition():
    X, y, Ks, _ = _data(n=30)
    M, a = centered_alignment_terms(Ks, y.astype(float))
    Kc = [_center(K) for K in Ks]
    # the same sums of n^2 = 900 products two ways: n^2 eps ~ 2e-13 relative
    for k in range(3):
        assert a[k] == pytest.approx(np.sum(Kc[k] * np.outer(y, y)), rel=1e-12)
        for l in range(3):
            assert M[k, l] == pytest.approx(np.sum(Kc[k] * Kc[l]), rel=1e-12)


def test_cka_matches_cvxpy_qp_and_is_nonnegative():
    """Here M⁻¹a has a negative entry (MKLpy's answer); the paper's constrained QP
    min_{v>=0} v'Mv - 2v'a (Cortes et al. 2012, Prop. 9) must be solved instead."""
    cp = pytest.importorskip("cvxpy")
    X, y, Ks, _ = _data()
    m = CKA().fit(Ks, y)
    M, a = m.alignment_matrix_, m.target_alignment_
    unconstrained = np.linalg.solve(M, a)
    assert unconstrained.min() < 0                      # the case where the constraint matters
    v = cp.Variable(3)
    L = np.linalg.cholesky(M)
    cp.Problem(cp.Minimize(cp.sum_squares(L.T @ v) - 2 * a @ v), [v >= 0]).solve(
        solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12)
    ref = v.value / np.linalg.norm(v.value)
    # q(v) = v'Mv - 2v'a is 2 lambda_min(M)-strongly convex on v >= 0: Clarabel's point is
    # within its projected-gradient radius of v* (tolerances.box_radius; its inactive
    # entries are interior-point positives ~1e-12, zeroed first), ours is the exact
    # active-set solve (solve_rtol(M) relative); u/||u|| moves by <= 2 ||du|| / ||u||
    mu = 2 * np.linalg.eigvalsh(M)[0]

    def pg(u):
        g = 2 * (M @ u - a)
        return np.where(u > 0, g, np.minimum(g, 0.0))

    r_ref = box_radius(v.value, pg, mu, threshold=1e-9 * np.abs(v.value).max())
    # Clarabel solved this QP: gap 1e-12 puts it within sqrt(2 gap / mu) of v*
    assert r_ref <= np.sqrt(2 * 1e-12 * (1 + abs(a @ v.value)) / mu)
    nv = np.linalg.norm(v.value)
    bound = 2 * (r_ref + solve_rtol(M) * nv) / (nv - r_ref)
    assert np.linalg.norm(m.weights_ - ref) <= bound
    assert m.weights_.min() >= 0 and np.linalg.norm(m.weights_) == pytest.approx(1.0)


def test_cka_maximises_centered_alignment():
    """No random non-negative combination has a larger centred alignment with yy'."""
    X, y, Ks, _ = _data(n=50, seed=1)
    w = CKA().fit(Ks, y).weights_
    yf = y.astype(float)

    def align(mu):
        return kernel_alignment(sum(m * K for m, K in zip(mu, Ks)), yf, centered=True)

    best = align(w)
    rng = np.random.default_rng(0)
    for mu in rng.random((300, 3)):
        assert align(mu) <= best + 1e-12      # rounding of an alignment: n^2 eps ~ 5e-13


def test_cka_duplicate_kernels():
    """Singular M (kernel 0 duplicated): the ridge splits the weight equally and the
    combined kernel is, up to scale, CKA's on the de-duplicated list."""
    X, y, Ks, _ = _data(n=50, seed=2)
    K0, K2 = Ks[0], Ks[2]
    dup = CKA().fit([K0, K0, K2], y).weights_
    single = CKA().fit([K0, K2], y).weights_
    # the minimum-norm solution is symmetric in the two copies; both it and the
    # de-duplicated CKA are exact solves with M of cond ~1e2-1e3 (rounding ~cond n^2
    # eps ~ 1e-9, alignment_rtol): 1e-6 is well above
    assert dup[0] == pytest.approx(dup[1], rel=1e-6)
    c_dup = dup[0] * K0 + dup[1] * K0 + dup[2] * K2
    c_single = single[0] * K0 + single[1] * K2
    np.testing.assert_allclose(c_dup / np.linalg.norm(c_dup), c_single / np.linalg.norm(c_single), atol=1e-6)


def test_cka_ridge_is_relative_and_named_ridge_rel():
    """CKA's ridge is relative (a multiple of the alignment matrix's mean
    diagonal), so its argument is ``ridge_rel`` (``ridge``/``lam`` are absolute
    λs); the default is the one the weights above were checked with, and the
    former learners setting ``cka_ridge`` is refused naming ``cka_ridge_rel``."""
    from biokernels.solvers.mkl import cka_weights, make_mkl

    X, y, Ks, _ = _data(n=50, seed=2)
    np.testing.assert_array_equal(CKA(ridge_rel=1e-12).fit(Ks, y).weights_, CKA().fit(Ks, y).weights_)
    assert CKA(ridge_rel=1e-9).get_params()["ridge_rel"] == 1e-9
    M, a = centered_alignment_terms(Ks, y)
    np.testing.assert_array_equal(cka_weights(M, a, ridge_rel=1e-12), cka_weights(M, a))
    # scale invariance of a relative ridge: M, a -> c M, c a leaves the weights unchanged
    np.testing.assert_allclose(cka_weights(1e6 * M, 1e6 * a, ridge_rel=1e-3), cka_weights(M, a, ridge_rel=1e-3),
                               rtol=1e-9)
    assert make_mkl("CKA", {"cka_ridge_rel": 1e-10}).ridge_rel == 1e-10
    with pytest.raises(InputError, match="cka_ridge_rel"):
        make_mkl("CKA", {"cka_ridge": 1e-10})


def test_fheuristic_definition():
    X, y, Ks, _ = _data(n=40, seed=3)
    m = FHeuristic().fit(Ks, y)
    n = len(y)
    A = np.array([y @ K @ y / (np.linalg.norm(K) * n) for K in Ks])
    # closed form, float64: sums of n^2 = 1600 terms, rounding ~n^2 eps ~ 4e-13 relative
    np.testing.assert_allclose(m.weights_, A / A.sum(), rtol=1e-12)
    mc = FHeuristic(centered=True).fit(Ks, y)
    assert mc.weights_.sum() == pytest.approx(1.0) and mc.weights_.min() >= 0


def test_pwmk_definition_and_delta():
    X, y, Ks, _ = _data(n=60, seed=4)
    acc = np.array([cross_val_score(SVC(C=1000, kernel="precomputed"), K, y, cv=3).mean() for K in Ks])
    # the same cross-validation on the same folds: the same accuracies (ratios of
    # counts), so numpy's default rtol 1e-7 only absorbs rounding of the ratios
    m0 = PWMK().fit(Ks, y)
    np.testing.assert_allclose(m0.accuracies_, acc)
    np.testing.assert_allclose(m0.weights_, acc / acc.sum())
    m1 = PWMK(delta=1.0).fit(Ks, y)
    w = acc - acc.min()
    np.testing.assert_allclose(m1.weights_, w / w.sum())
    assert m1.weights_[np.argmin(acc)] == 0.0
    # equal accuracies with delta = 1: uniform fallback (all kernels identical)
    np.testing.assert_allclose(PWMK(delta=1.0).fit([Ks[0]] * 3, y).weights_, np.full(3, 1 / 3))
    with pytest.raises(InputError, match="delta"):
        PWMK(delta=2).fit(Ks, y)


def test_classifier_fixed_weights_equals_svc_on_combination():
    X, y, Ks, Kt = _data(seed=5)
    w = np.array([0.2, 0.5, 0.3])
    clf = MKLClassifier(weights=w, C=10.0).fit(Ks, y)
    ref = SVC(C=10.0, kernel="precomputed").fit(sum(a * K for a, K in zip(w, Ks)), y)
    Ktc = sum(a * K for a, K in zip(w, Kt))
    # combine_kernels adds w_r K_r in the order sum() does here: the same kernel bits,
    # hence the same LIBSVM run (1e-8 only absorbs rounding; a kernel differing in its
    # last bits could move LIBSVM by its tol = 1e-3 and would need svm_bounds.py instead)
    np.testing.assert_allclose(clf.decision_function(Kt), ref.decision_function(Ktc), atol=1e-8)
    np.testing.assert_array_equal(clf.fit_predict(Ks, y, Kt), ref.predict(Ktc))
    # learned weights, KOMD learner, string labels
    lab = np.where(y > 0, "pos", "neg")
    c2 = MKLClassifier(mkl=EasyMKL(lam=0.2), learner="komd").fit(Ks, lab)
    assert set(c2.predict(Kt)) <= {"pos", "neg"} and c2.weights_.sum() == pytest.approx(1)
    c3 = MKLClassifier(mkl=CKA()).fit(Ks, lab)
    np.testing.assert_allclose(c3.weights_, CKA().fit(Ks, y).weights_)
    with pytest.raises(InputError, match="weights"):
        MKLClassifier(weights=[1.0, -1.0, 0.0]).fit(Ks, y)


@pytest.mark.parametrize("cls", [CKA, FHeuristic, PWMK])
def test_shared_validation(cls):
    X, y, Ks, Kt = _data(n=20, seed=6)
    K = Ks[1]
    with pytest.raises(InputError, match="kernel 1.*shape"):
        cls().fit([K, K[:10, :10]], y)
    with pytest.raises(InputError, match="kernel 0.*square"):
        cls().fit([K[:, :5]], y)
    neg = K - 2 * np.eye(20)
    with pytest.raises(InputError, match="kernel 1.*positive semi-definite"):
        cls().fit([K, neg], y)
    nan = K.copy()
    nan[0, 1] = nan[1, 0] = np.nan
    with pytest.raises(InputError, match="kernel 0.*finite"):
        cls().fit([nan, K], y)
    with pytest.raises(InputError, match="2 classes"):
        cls().fit([K], np.zeros(20))
    with pytest.raises(InputError, match="expected 20 labels"):
        cls().fit([K], y[:-2])
    m = cls().fit([K, Ks[2]], y)
    with pytest.raises(InputError, match="kernel 1.*columns"):
        m.combine([Kt[1], Kt[2][:, :3]])
    with pytest.raises(InputError, match="expected 2 test kernels"):
        m.combine([Kt[1]])


def test_easymkl_adapter_is_easymkl():
    """solvers.mkl.EasyMKL is solvers.easymkl.EasyMKL declared an MKLMethod: the same fit, bit for bit."""
    from biokernels.solvers import easymkl
    from biokernels.solvers.mkl import MKLMethod
    assert issubclass(EasyMKL, easymkl.EasyMKL) and issubclass(EasyMKL, MKLMethod)
    assert EasyMKL.default_learner == "komd" and EasyMKL().get_params() == easymkl.EasyMKL().get_params()
    X, y, Ks, Kt = _data(n=40, seed=9)
    ours, ref = EasyMKL(lam=0.3).fit(Ks, y), easymkl.EasyMKL(lam=0.3).fit(Ks, y)
    np.testing.assert_array_equal(ours.weights_, ref.weights_)
    np.testing.assert_array_equal(ours.decision_function(Kt), ref.decision_function(Kt))
    assert all(type(m) is EasyMKL for m in EasyMKL().fit_path(Ks, y, [0.1, 0.5]))


# ------------------------------------------------------------------ MKLpy
def _mklpy(y):
    pytest.importorskip("MKLpy")
    return pytest.importorskip("torch")


def test_cka_matches_mklpy_when_unconstrained_is_nonnegative():
    X, y, Ks, Kt = _data(seed=7)
    torch = _mklpy(y)
    from MKLpy.algorithms import CKA as MCKA
    Ks2 = [Ks[0], Ks[1]]                        # here M⁻¹a >= 0: the constraint is inactive
    ref = MCKA(learner=SVC(C=1000)).fit([torch.tensor(K) for K in Ks2], torch.tensor(y))
    ours = MKLClassifier(mkl=CKA()).fit(Ks2, y)
    assert ref.solution.weights.numpy().min() >= 0
    # both solve M v = a (MKLpy: M^-1 a; ours: NNLS refined on the full active set)
    M, _ = centered_alignment_terms(Ks2, y.astype(float))
    np.testing.assert_allclose(ours.weights_, ref.solution.weights.numpy(), atol=alignment_rtol(M, len(y)))
    Kt2 = [Kt[0], Kt[1]]
    np.testing.assert_array_equal(ours.predict(Kt2), np.asarray(ref.predict([torch.tensor(K) for K in Kt2])))


def test_cka_differs_from_mklpy_when_constraint_binds():
    X, y, Ks, Kt = _data(seed=0)
    torch = _mklpy(y)
    from MKLpy.algorithms import CKA as MCKA
    ref = MCKA(learner=SVC(C=1000)).fit([torch.tensor(K) for K in Ks], torch.tensor(y))
    w_ref = ref.solution.weights.numpy()
    assert w_ref.min() < 0                      # MKLpy: unconstrained M⁻¹a/||M⁻¹a||
    M, a = centered_alignment_terms(Ks, y.astype(float))
    np.testing.assert_allclose(w_ref, np.linalg.solve(M, a) / np.linalg.norm(np.linalg.solve(M, a)),
                               atol=alignment_rtol(M, len(y)))
    assert CKA().fit(Ks, y).weights_.min() >= 0


@pytest.mark.parametrize("name", ["FHeuristic", "PWMK"])
def test_heuristics_match_mklpy(name):
    X, y, Ks, Kt = _data(seed=8)
    torch = _mklpy(y)
    import MKLpy.algorithms as A
    T = lambda L: [torch.tensor(K) for K in L]  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if name == "FHeuristic":
            ref = A.FHeuristic(learner=SVC(C=1000)).fit(T(Ks), torch.tensor(y))
            mkl = FHeuristic()
        else:
            ref = A.PWMK(delta=0.5, cv=3, learner=SVC(C=1000)).fit(T(Ks), torch.tensor(y))
            mkl = PWMK(delta=0.5, cv=3)
    ours = MKLClassifier(mkl=mkl, C=1000.0).fit(Ks, y)
    # MKLpy's FHeuristic weights are float32: rounding to eps32/2 relative (x2 margin);
    # PWMK's are float64 ratios of the same accuracies
    np.testing.assert_allclose(ours.weights_, ref.solution.weights.numpy().astype(float), rtol=EPS32,
                               atol=1e-15)
    np.testing.assert_array_equal(ours.predict(Kt), np.asarray(ref.predict(T(Kt))))
