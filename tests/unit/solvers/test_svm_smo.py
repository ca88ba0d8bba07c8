"""The C-SVC dual by warm-started SMO (biokernels.solvers.svm_smo) and the
diffusion split on it, against closed forms, the KKT conditions and LIBSVM.

Tolerances and their reasons:

* the stopping rule: the maximal violating pair's gap ``m(a) - M(a)`` of a
  returned solution is below ``tol`` (recomputed here from ``a`` alone; the
  solver's running gradient drifts from it by rounding only, far below
  ``tol``);
* feasibility: ``0 <= a_i <= C_i`` exactly (the updates clip) and
  ``|y^T a|`` at rounding of the sum, ``<= 1e-12 sum_i C_i``;
* against LIBSVM (scikit-learn's SVC, ``tol = 1e-3``): the issue's
  criteria, decision values within LIBSVM's tolerance, ``max |d - d_libsvm| /
  max(1, max |d_libsvm|) <= 1e-3``, and ROC AUCs within 1e-3. The solver
  runs at ``SMO_TOL = 1e-4``, so its own distance to the exact solution is an
  order below LIBSVM's (checked against a ``tol = 1e-9`` solve) and the
  distance between the two is about LIBSVM's own;
* the 2-example closed form: ``a = min(C, 2 / (K_11 + K_22 - 2 K_12))``,
  decisions +-1 when ``a < C``: equal to a few ulps (one SMO step computes
  exactly that quotient);
* kernel blocks: the rank-k (syrk) train block and the factored decision
  values against the GEMM of the reference arithmetic, within the rounding
  bounds stated at each test.
"""

import numpy as np
import pandas as pd
import pytest
from sklearn.svm import SVC

from biokernels.errors import InputError
from biokernels.kernels.diffusion import diffusion_betas, diffusion_spectra
from biokernels.metrics import roc_auc_columns
from biokernels.solvers.svm_smo import SMOSVC, class_bounds, svc_dual
from biokernels.studies.diffusion.protocol import (SMO_TOL, KernelBlocks, _WarmStarts, convex_start,
                                                   evaluate_split, make_classifier, smo_of)

U = 2.0 ** -53
LIBSVM_TOL = 1e-3


def gamma(m: int) -> float:
    return m * U / (1 - m * U)


def rbf_problem(n=240, t=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n + 80, 6))
    K = np.exp(-0.25 * ((X[:, None] - X[None]) ** 2).sum(-1))
    score = X[:, :t] + 0.7 * rng.normal(size=(n + 80, t))
    Y = (score > np.quantile(score, 0.8, axis=0)).astype(int)
    return K[:n, :n].copy(), K[n:, :n].copy(), Y[:n], Y[n:]


def kkt_gap(K, y01, ub, a):
    """m(a) - M(a) from a alone (Chang & Lin 2011, Eq. 13 ff.)."""
    y = np.where(y01 > 0, 1.0, -1.0)
    G = y * (K @ (y * a)) - 1.0
    up = np.where(y > 0, a < ub, a > 0)
    low = np.where(y > 0, a > 0, a < ub)
    return (-y * G)[up].max() - (-y * G)[low].min()


@pytest.fixture(scope="module")
def rbf():
    return rbf_problem()


# --------------------------------------------------------------------------- the solver


def test_two_examples_closed_form():
    K = np.array([[2.0, 0.5], [0.5, 1.5]])
    y = np.array([[1], [0]])
    a_star = 2.0 / (2.0 + 1.5 - 2 * 0.5)           # 0.8: free for C = 1
    sol = svc_dual(K, y, 1.0, tol=1e-12)
    assert np.allclose(sol.alpha[:, 0], a_star, rtol=4 * U, atol=0)
    d = sol.decision(K)[:, 0]
    assert np.allclose(d, [1.0, -1.0], rtol=0, atol=16 * U)   # both on the margin
    clipped = svc_dual(K, y, 0.5, tol=1e-12)        # a* > C: both at the bound
    assert np.array_equal(clipped.alpha[:, 0], [0.5, 0.5])


@pytest.mark.parametrize("C", [0.1, 1.0, 100.0])
@pytest.mark.parametrize("class_weight", [None, "balanced"])
def test_solution_is_feasible_and_meets_the_stopping_rule(rbf, C, class_weight):
    K, _, Y, _ = rbf
    sol = svc_dual(K, Y, C, class_weight=class_weight, tol=SMO_TOL)
    assert sol.converged.all()
    for k in range(Y.shape[1]):
        ub = class_bounds(Y[:, k], C, class_weight)
        a = sol.alpha[:, k]
        assert (a >= 0).all() and (a <= ub).all()
        assert abs(np.where(Y[:, k] > 0, a, -a).sum()) <= 1e-12 * ub.sum()
        assert kkt_gap(K, Y[:, k], ub, a) < SMO_TOL


@pytest.mark.parametrize("C", [0.1, 1.0, 100.0])
@pytest.mark.parametrize("class_weight", [None, "balanced"])
def test_decisions_and_aucs_agree_with_libsvm(rbf, C, class_weight):
    K, Kte, Y, Yte = rbf
    sol = svc_dual(K, Y, C, class_weight=class_weight, tol=SMO_TOL)
    exact = svc_dual(K, Y, C, class_weight=class_weight, tol=1e-9)
    got, best = sol.decision(Kte), exact.decision(Kte)
    ref = np.column_stack([SVC(kernel="precomputed", C=C, class_weight=class_weight)
                           .fit(K, Y[:, k]).decision_function(Kte) for k in range(Y.shape[1])])
    scale = max(1.0, np.abs(ref).max())
    delta = np.abs(got - ref).max()
    assert delta / scale <= LIBSVM_TOL
    # a (positive, negative) pair can only change order when LIBSVM's two
    # decision values are within 2 delta: the AUCs differ by at most the
    # share of such pairs (on this small test set one pair is ~1e-3)
    aucs = np.abs(roc_auc_columns(Yte, got) - roc_auc_columns(Yte, ref))
    for k in range(Y.shape[1]):
        pos, neg = ref[Yte[:, k] > 0, k], ref[Yte[:, k] == 0, k]
        close = (np.abs(pos[:, None] - neg[None, :]) <= 2 * delta).mean()
        assert aucs[k] <= close + 4 * U
    # an order closer to the exact solution than LIBSVM's tolerance
    assert np.abs(got - best).max() / scale <= LIBSVM_TOL / 10


def test_smosvc_estimator_matches_the_batch(rbf):
    K, Kte, Y, _ = rbf
    m = SMOSVC(C=1.0, tol=SMO_TOL).fit(K, Y[:, 1])
    sol = svc_dual(K, Y, 1.0, tol=SMO_TOL)
    assert np.array_equal(m.alpha_, sol.alpha[:, 1]) and m.intercept_ == -sol.rho[1]
    assert m.converged_ and m.n_iter_ == sol.n_iter[1]
    # a matrix-vector product against one column of a GEMM: two orders of one sum
    bound = 2 * gamma(len(K)) * np.abs(Kte) @ np.abs(m.dual_coef_) + 4 * U * abs(m.intercept_)
    assert (np.abs(m.decision_function(Kte) - sol.decision(Kte)[:, 1]) <= bound).all()


def test_warm_starts_reach_the_same_tolerance_and_threads_change_nothing(rbf):
    K, Kte, Y, _ = rbf
    cold = svc_dual(K, Y, 10.0, tol=SMO_TOL)
    low = svc_dual(K, Y, 1.0, tol=SMO_TOL)
    warm = svc_dual(K, Y, 10.0, alpha0=low.alpha * 10.0, tol=SMO_TOL)   # scaled: feasible at C = 10
    assert warm.converged.all()
    for k in range(Y.shape[1]):
        assert kkt_gap(K, Y[:, k], np.full(len(K), 10.0), warm.alpha[:, k]) < SMO_TOL
    scale = max(1.0, np.abs(cold.decision(Kte)).max())
    assert np.abs(warm.decision(Kte) - cold.decision(Kte)).max() / scale <= LIBSVM_TOL
    threaded = svc_dual(K, Y, 10.0, alpha0=low.alpha * 10.0, tol=SMO_TOL, n_jobs=3)
    assert np.array_equal(threaded.alpha, warm.alpha) and np.array_equal(threaded.rho, warm.rho)


def test_one_class_tasks_and_bad_input(rbf):
    K, _, Y, _ = rbf
    Y = Y.copy()
    Y[:, 2] = 0
    sol = svc_dual(K, Y, 1.0)
    assert np.isnan(sol.rho[2]) and not sol.converged[2] and (sol.alpha[:, 2] == 0).all()
    assert sol.converged[[0, 1, 3]].all()
    with pytest.raises(InputError, match="0/1"):
        svc_dual(K, Y * 2, 1.0)
    with pytest.raises(InputError, match="positive"):
        svc_dual(K, Y, 0.0)
    with pytest.raises(InputError, match=r"\(n, n\)"):
        svc_dual(K[:, :-1], Y, 1.0)
    bad = K.copy()
    bad[3, 4] = np.inf
    with pytest.raises(InputError, match="NaN or infinity"):
        svc_dual(bad, Y, 1.0)
    start = np.zeros(Y.shape)
    start[0, 0] = 0.5                                 # breaks y^T a = 0
    with pytest.raises(InputError, match=r"task column\(s\) \[0\]"):
        svc_dual(K, Y, 1.0, alpha0=start)
    with pytest.raises(InputError, match="two classes"):
        SMOSVC().fit(K, np.zeros(len(K)))


def test_convex_starts_are_feasible(rbf):
    K, _, Y, _ = rbf
    alphas = np.stack([svc_dual(K * s, Y, 1.0).alpha for s in (0.5, 1.0, 2.0)])
    a0 = convex_start(alphas, np.array([0.2, 0.0, 0.5]))
    # a weighted mean of values in [0, C] is in [0, C] up to the rounding of
    # 3 products and 2 sums and the division by the weights' sum: 8 u C
    assert (a0 >= 0).all() and (a0 <= 1.0 * (1 + 8 * U)).all()
    assert np.abs(np.where(Y > 0, a0, -a0).sum(axis=0)).max() <= 1e-12 * len(K)
    assert convex_start(alphas, np.array([0.5, -0.1, 0.6])) is None
    assert convex_start(alphas, np.zeros(3)) is None
    # per-task weights: a task with a negative weight starts cold (zeros)
    warm = _WarmStarts({"per_task": np.array([[0.2, 0.0, 0.5], [0.3, -0.1, 0.1], [1, 1, 1], [0, 0, 1]])})
    for i in range(3):
        warm.add(i, alphas[i])
    st = warm.start("per_task")
    assert (st[:, 1] == 0).all()
    # the same weighted means summed in another order: a few roundings apart (1e-14 relative)
    assert np.allclose(st[:, 0], (0.2 * alphas[0][:, 0] + 0.5 * alphas[2][:, 0]) / 0.7, rtol=1e-14, atol=1e-16)
    assert np.allclose(warm.start(None), alphas.mean(axis=0), rtol=1e-14, atol=1e-16)


def test_solver_setting_selects_the_estimator():
    assert isinstance(smo_of(make_classifier("svm")), SMOSVC)             # the default
    assert smo_of(make_classifier("svm", {"solver": "libsvm"})) is None
    with pytest.raises(InputError, match="smo or libsvm"):
        make_classifier("svm", {"solver": "liblinear"})(1.0)


# --------------------------------------------------------------------------- kernel blocks


@pytest.fixture(scope="module")
def planted(planted_network):
    return planted_network(180, 1000, 5, 11)


def test_rank_k_train_block_and_factored_decisions_equal_the_gemm_to_rounding(planted):
    _, d, P, labels, train = planted
    n = P.shape[0]
    tr, te = np.flatnonzero(train), np.flatnonzero(~train)
    blocks = KernelBlocks(P, tr, te, "cpu")
    s = diffusion_spectra(d, diffusion_betas(4, 0.5))[2]
    ref_tr, ref_te = blocks(s)
    got = blocks.train(s)
    assert np.array_equal(got, got.T)
    # each is within gamma_n sum_j |P_aj P_bj| c_j <= gamma_n sqrt(K_aa K_bb) of the exact kernel
    diag = (P ** 2) @ (n * s)
    assert (np.abs(got - ref_tr) <= 2 * gamma(n + 2) * np.sqrt(np.outer(diag[tr], diag[tr]))).all()
    coef = np.random.default_rng(0).normal(size=(len(tr), 3))
    # both orders of the triple product are within gamma_{n + n_train} (|P_te| c |P_tr|^T) |coef| of exact
    bound = 2 * gamma(n + len(tr) + 2) * ((np.abs(P[te]) * (n * s)) @ np.abs(P[tr]).T) @ np.abs(coef)
    assert (np.abs(blocks.decision(s, coef) - ref_te @ coef) <= bound).all()
    # a signed spectrum (not a kernel of a non-negative combination) falls back to the GEMM
    signed = s.copy()
    signed[0] = -signed[0]
    assert np.array_equal(blocks.train(signed), blocks(signed)[0])


# --------------------------------------------------------------------------- one split


@pytest.fixture(scope="module")
def planted_large(planted_network):
    """A larger network: 300 test proteins with 26-40 positives per task, so
    one swapped (positive, negative) pair moves an AUC by ~1e-4 and the
    issue's 1e-3 leaves room for the near-ties two solvers order differently."""
    return planted_network(900, 5000, 3, 12)


def test_split_on_smo_agrees_with_the_libsvm_reference(planted_large):
    A, d, P, labels, train = planted_large
    # one C: the inner CV's choice between near-tied C's may go either way
    # under two solvers, each within tolerance; it is compared below
    args = (P, d, labels, train, diffusion_betas(6, 0.5), 1e-6, [1.0], 3, 0)
    libsvm = make_classifier("svm", {"solver": "libsvm"})
    ref = evaluate_split(*args, adjacency=A, device="cpu", reference=True, classifier=libsvm)
    got = evaluate_split(*args, adjacency=A, device="cpu")
    jobs = evaluate_split(*args, adjacency=A, device="cpu", n_jobs=2)
    pd.testing.assert_frame_equal(got.weights, ref.weights)           # kernel learning untouched
    assert (got.cv["mean_auc"] - ref.cv["mean_auc"]).abs().max() <= 1e-3
    for table, keys in (("roc", ["method", "task"]), ("kernel_roc", ["kernel", "task"])):
        a = getattr(ref, table).set_index(keys)["auc"]
        b = getattr(got, table).set_index(keys)["auc"].reindex(a.index)
        assert a.isna().equals(b.isna())
        assert (a - b).abs().max() <= 1e-3
    # threads run the same fits
    pd.testing.assert_frame_equal(jobs.roc, got.roc)
    pd.testing.assert_frame_equal(jobs.kernel_roc, got.kernel_roc)


def test_inner_cv_on_smo_agrees_with_libsvm(planted_large):
    A, d, P, labels, train = planted_large
    args = (P, d, labels, train, diffusion_betas(4, 0.5), 1e-6, [0.1, 1.0, 10.0], 3, 0)
    ref = evaluate_split(*args, device="cpu", formulations=(), reference=True,
                         classifier=make_classifier("svm", {"solver": "libsvm"}))
    got = evaluate_split(*args, device="cpu", formulations=())
    assert (got.cv["mean_auc"] - ref.cv["mean_auc"]).abs().max() <= 1e-3
