"""MMDT / LS-MMDT (Rodner et al. 2013; Hoffman et al. 2013) against independent checks.

* the low-rank (Eqs. 12-15) and explicit (Eqs. 7-10) dual coordinate descent
  solve the same strongly convex dual (lambda > 0), so they must reach the same
  unique alpha, the same W = H^T B and the same dual value; so must shrinking
  on / off;
* on a tiny instance both agree with cvxpy solving the dual QP of Eq. 6 (built
  from the explicit augmented features d_l = vec(h_i x_j^T), Eq. 4) and the
  primal of Eq. 1 (p = 2); primal = -dual at the optimum (strong duality);
* KKT: projected gradient 0, and alpha_l = 2 C xi_l (stationarity of the
  L2-loss SVM Lagrangian in xi);
* the estimator: sklearn get_params / clone, prediction of a class with no
  target examples on a planted two-domain problem, every input error.
"""

import logging
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

from biokernels.errors import InputError
from biokernels.studies.mmdt.protocol import (
    cohort_transfer_curve,
    curve_table,
    report_convergence,
    split_target,
    upsampling_matrix,
)
from biokernels.solvers.mmdt import (
    MMDT,
    TransformConvergenceWarning,
    augment,
    solve_transform,
    transform_dual_objective,
    transform_primal_objective,
    transform_projected_gradient,
)
from tolerances import FLOAT64_EXACT, box_qp_radius, cd_final_pg_bound

TIGHT = dict(tol=1e-9, max_iter=50000)


def instance(seed, m=4, D=8, Dt=5, n=10):
    rng = np.random.default_rng(seed)
    H = rng.normal(size=(m, D)) / np.sqrt(D)
    X = augment(rng.normal(size=(n, Dt - 1)))
    y = rng.integers(0, m, size=n)
    return H, X, y


def signs(y, m):
    T = -np.ones((m, y.size))
    T[y, np.arange(y.size)] = 1.0
    return T


# Tolerances of the solver tests follow from the stopping rule (tests/tolerances.py):
# g is lambda-strongly convex on alpha >= 0 (Qbar = K + lambda I, lambda = 1 / (2C)), so a
# point with projected gradient PG is within ||PG|| / lambda of the unique alpha* and
# g - g* <= ||PG||^2 / (2 lambda) (box_qp_radius); coordinate descent stops with
# max |PG| <= tol rho (cd_final_pg_bound). W = sum_l alpha_l t_l d_l moves by at most
# sigma_max(D) = sqrt(lambda_max(K)) times alpha.

def _qbar(H, X, y, C):
    """Qbar of Eq. 6 (l = i n + j, the C order of alpha)."""
    t = signs(y, H.shape[0]).ravel()
    return np.kron(H @ H.T, X @ X.T) * np.outer(t, t) + np.eye(t.size) / (2.0 * C)


def _radius(res, H, X, y, C, offset=None):
    """Bound on ||res.alpha - alpha*||, after checking the stopping rule on a PG
    computed here (not the solver's report)."""
    PG = transform_projected_gradient(res.alpha, H, X, y, C, offset=offset)
    assert np.abs(PG).max() <= cd_final_pg_bound(_qbar(H, X, y, C), TIGHT["tol"])
    return box_qp_radius(PG, 1.0 / (2.0 * C))


def _sigma_max(H, X, y, C):
    return float(np.sqrt(np.linalg.eigvalsh(_qbar(H, X, y, C)).max() - 1.0 / (2.0 * C)))


@pytest.mark.parametrize("backend", ["numba", "python"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_lowrank_and_explicit_reach_the_same_solution(seed, backend):
    H, X, y = instance(seed)
    C = 0.5
    lo = solve_transform(H, X, y, C, solver="lowrank", rng=seed, backend=backend, **TIGHT)
    ex = solve_transform(H, X, y, C, solver="explicit", rng=seed, backend=backend, **TIGHT)
    assert lo.converged and ex.converged
    # unique optimum (strongly convex dual): same alpha, W and dual value, to within
    # the radii of the stopping rule (see _radius)
    r = _radius(lo, H, X, y, C) + _radius(ex, H, X, y, C)
    assert np.linalg.norm(lo.alpha - ex.alpha) <= r
    # the maintained W carries the drift of the next check on top of sigma_max r
    assert (np.linalg.norm(lo.W(H) - ex.W_explicit)
            <= _sigma_max(H, X, y, C) * r + 1e-10 * np.sqrt(ex.W_explicit.size))
    # the explicit solver's maintained W equals sum_l alpha_l t_l d_l (Eq. 7): float64
    # drift of ~1e4 in-place rank-1 updates of an O(1) W, <= 3 n_updates eps ~ 1e-11
    np.testing.assert_allclose(ex.W_explicit, H.T @ ((ex.alpha * signs(y, 4)) @ X), atol=1e-10)
    g_lo = transform_dual_objective(lo.alpha, H, X, y, C)
    g_ex = transform_dual_objective(ex.alpha, H, X, y, C)
    # the solvers' share, (||PG_lo||² + ||PG_ex||²) / (2 lambda) ~ 1e-18, is far below
    # the float64 rounding of g (sums of ~1e3 products) that rel = 1e-10 allows
    assert g_lo == pytest.approx(g_ex, rel=FLOAT64_EXACT)
    # same coordinate order from the same seed: same number of epochs
    assert lo.n_iter == ex.n_iter


def test_shrinking_on_and_off_give_the_same_solution():
    H, X, y = instance(3, m=5, n=12)
    on = solve_transform(H, X, y, 1.0, shrinking=True, rng=0, **TIGHT)
    off = solve_transform(H, X, y, 1.0, shrinking=False, rng=0, **TIGHT)
    assert on.converged and off.converged
    r = _radius(on, H, X, y, 1.0) + _radius(off, H, X, y, 1.0)      # see _radius
    assert np.linalg.norm(on.alpha - off.alpha) <= r
    # B = (alpha * T) X: ||dB||_F <= ||X||_2 ||d alpha||, + float64 rounding
    assert np.linalg.norm(on.beta - off.beta) <= np.linalg.norm(X, 2) * r + 1e-12


@pytest.mark.parametrize("backend", ["numba", "python"])
def test_agrees_with_cvxpy_dual_and_primal_qp(backend):
    cp = pytest.importorskip("cvxpy")
    m, D, Dt, n, C = 3, 5, 4, 6, 0.8
    H, X, y = instance(7, m=m, D=D, Dt=Dt, n=n)
    T = signs(y, m)
    lam = 1.0 / (2.0 * C)
    # explicit augmented features d_(i,j) = vec(h_i x_j^T) (Eq. 4), labels t (Eq. 5)
    Dmat = np.array([np.outer(H[i], X[j]).ravel() for i in range(m) for j in range(n)])
    t = np.array([T[i, j] for i in range(m) for j in range(n)])
    # Clarabel with stated tolerances (not the default solver's): gap <= 1e-10 (1 + |obj|),
    # residuals <= 1e-10
    tight = dict(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    a = cp.Variable(m * n, nonneg=True)
    dual = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(Dmat.T @ cp.multiply(t, a))
                                  + 0.5 * lam * cp.sum_squares(a) - cp.sum(a)))
    dual.solve(**tight)
    W = cp.Variable((D, Dt))
    primal = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(W) + C * cp.sum_squares(
        cp.pos(1 - cp.multiply(T, H @ W @ X.T)))))
    primal.solve(**tight)
    a_ref = np.clip(a.value, 0.0, None)               # feasible to tol_feas: clip it
    g_ref = transform_dual_objective(a_ref.reshape(m, n), H, X, y, C)
    for solver in ("lowrank", "explicit"):
        res = solve_transform(H, X, y, C, solver=solver, rng=0, backend=backend, **TIGHT)
        g = transform_dual_objective(res.alpha, H, X, y, C)
        PG = transform_projected_gradient(res.alpha, H, X, y, C)
        g_floor = g - np.sum(PG ** 2) / (2 * lam)        # <= g* (box_qp_radius)
        # cvxpy's value of its own formulation (explicit features, Eq. 4-6) is g* to
        # Clarabel's gap 1e-10 (1 + |g|) plus its feasibility 1e-10 times ||grad g||_1
        # (~1e-9): 1e-8 covers both; another formula for g would be O(1) off
        assert g == pytest.approx(dual.value, rel=1e-8, abs=1e-8)
        # alpha: ours within ||PG|| / lambda of alpha*, Clarabel's (clipped) within
        # sqrt(2 (g(a_ref) - g*) / lambda) (strong convexity) of it
        r = box_qp_radius(PG, lam)
        r_ref = (np.linalg.norm(a.value - a_ref)
                 + np.sqrt(2 * max(g_ref - g_floor + FLOAT64_EXACT * abs(g), 0.0) / lam))
        assert np.linalg.norm(res.alpha.ravel() - a.value) <= r + r_ref
        # strong duality: P(W*) = -g(alpha*). The gap P(W(alpha)) + g(alpha) >= 0 is
        # ~||PG||² (1 + 2C sigma²) sigma² / lambda² ~ 1e-16 here; rel = 1e-10 is the
        # float64 rounding of the two objectives
        P_res = transform_primal_objective(res.W(H), H, X, y, C)
        assert P_res == pytest.approx(-g, rel=FLOAT64_EXACT)
        assert primal.value == pytest.approx(-g, rel=1e-8, abs=1e-8)     # as for dual.value
        # W: P is 1-strongly convex, so ||W - W*||_F <= sqrt(2 (P(W) - P*)) and
        # P(W) - P* <= P(W) + g(alpha) for any alpha >= 0 (weak duality)
        P_ref = transform_primal_objective(W.value, H, X, y, C)
        slack = FLOAT64_EXACT * abs(g)                    # rounding of P + g
        w_bound = np.sqrt(2 * max(P_res + g, 0.0) + slack) + np.sqrt(2 * max(P_ref + g, 0.0) + slack)
        assert np.linalg.norm(res.W(H) - W.value) <= w_bound


def test_kkt_conditions_at_the_solution():
    H, X, y = instance(11, m=4, n=9)
    C = 2.0
    res = solve_transform(H, X, y, C, rng=1, **TIGHT)
    PG = transform_projected_gradient(res.alpha, H, X, y, C)
    # stopping rule: spread <= tol = 1e-9 in the last epoch, plus that epoch's steps
    assert np.abs(PG).max() <= cd_final_pg_bound(_qbar(H, X, y, C), TIGHT["tol"])
    assert np.all(res.alpha >= 0)
    # stationarity in xi: alpha = 2 C xi with xi = max(0, 1 - t h^T W x). With
    # grad_l = lambda alpha_l - (1 - margin_l) and 2 C lambda = 1, case by case
    # |alpha_l - 2 C xi_l| <= 2 C |PG_l|; + float64 rounding of the margins
    xi = np.maximum(0.0, 1.0 - signs(y, 4) * (H @ res.W(H) @ X.T))
    assert np.all(np.abs(res.alpha - 2 * C * xi) <= 2 * C * np.abs(PG) + 1e-12)
    # the problem has margin violations, else alpha = 0 would be trivial
    assert res.alpha.max() > 0.1


def test_prior_offset_keeps_duality():
    """With W0 (offset) the returned W - W0 = H^T B solves min 1/2||W-W0||^2 + C sum xi^2."""
    H, X, y = instance(5, m=3, D=6, Dt=6, n=8)
    rng = np.random.default_rng(0)
    W0 = rng.normal(size=(6, 6))
    C = 1.0
    off = H @ W0 @ X.T
    lo = solve_transform(H, X, y, C, rng=0, offset=off, **TIGHT)
    ex = solve_transform(H, X, y, C, solver="explicit", rng=0, offset=off, **TIGHT)
    # _radius also checks each PG against the stopping rule (cd_final_pg_bound)
    r = _radius(lo, H, X, y, C, offset=off) + _radius(ex, H, X, y, C, offset=off)
    assert (np.linalg.norm(lo.W(H) - ex.W_explicit)
            <= _sigma_max(H, X, y, C) * r + 1e-10 * np.sqrt(ex.W_explicit.size))   # + W drift
    g = transform_dual_objective(lo.alpha, H, X, y, C, offset=off)
    p = transform_primal_objective(W0 + lo.W(H), H, X, y, C, W0=W0)
    # duality gap ~||PG||² ~ 1e-18 (see test_agrees_with_cvxpy...): float64 rounding
    assert p == pytest.approx(-g, rel=FLOAT64_EXACT)


def test_warm_start_reaches_the_same_solution():
    H, X, y = instance(9)
    cold = solve_transform(H, X, y, 0.5, rng=0, **TIGHT)
    warm = solve_transform(H, X, y, 0.5, rng=0, alpha0=np.full_like(cold.alpha, 0.3), **TIGHT)
    r = _radius(cold, H, X, y, 0.5) + _radius(warm, H, X, y, 0.5)     # see _radius
    assert np.linalg.norm(cold.alpha - warm.alpha) <= r


# ----------------------------------------------------------------------------- backends, convergence

@pytest.mark.parametrize("solver", ["lowrank", "explicit"])
@pytest.mark.parametrize("case", ["plain", "prior", "warm", "no_shrinking"])
def test_numba_and_python_backends_reach_the_same_dual_solution(solver, case):
    """The backends visit coordinates in different orders, so they agree only
    up to the stopping tolerance. Bounds: g is lambda-strongly convex on
    alpha >= 0 (Qbar = K + lambda I, K PSD) and PG is the minimum-norm element
    of the subdifferential of g + indicator(alpha >= 0), so for each solution
    ||alpha - alpha*||_2 <= ||PG||_2 / lambda and
    0 <= g(alpha) - g(alpha*) <= ||PG||_2^2 / (2 lambda) (box_qp_radius). At
    the stop max |PG| <= tol rho (cd_final_pg_bound), hence
    ||PG||_2 <= sqrt(m n) tol rho: the two alphas differ by at most
    2 sqrt(m n) tol rho / lambda, the W's by sigma_max(K)^(1/2) times that."""
    m, n, C, tol = 4, 10, 0.5, 1e-6
    H, X, y = instance(21, m=m, n=n)
    lam = 1.0 / (2.0 * C)
    kw = dict(solver=solver, tol=tol, max_iter=200000)
    if case == "prior":
        kw["offset"] = H @ np.random.default_rng(1).normal(size=(H.shape[1], X.shape[1])) @ X.T
    elif case == "warm":
        kw["alpha0"] = np.full((m, n), 0.4)
    elif case == "no_shrinking":
        kw["shrinking"] = False
    off = kw.get("offset")
    res = {b: solve_transform(H, X, y, C, rng=3, backend=b, **kw) for b in ("numba", "python")}
    pg_tol = cd_final_pg_bound(_qbar(H, X, y, C), tol)
    pg_norm = {}
    for b, r in res.items():
        assert r.converged and r.backend == b
        assert r.pg_spread <= tol
        PG = transform_projected_gradient(r.alpha, H, X, y, C, offset=off)
        # the solver's own KKT report is the same quantity, computed the same way
        assert r.kkt_violation == pytest.approx(np.abs(PG).max(), rel=1e-6, abs=1e-14)
        assert r.kkt_violation <= pg_tol            # the premise of the bound
        pg_norm[b] = np.linalg.norm(PG)
    bound = 2 * np.sqrt(m * n) * pg_tol / lam     # from tol alone
    # from the measured PG (rigorous)
    measured = box_qp_radius(np.array([pg_norm["numba"]]), lam) + box_qp_radius(
        np.array([pg_norm["python"]]), lam)
    assert measured <= bound
    d_alpha = np.linalg.norm(res["numba"].alpha - res["python"].alpha)
    assert d_alpha <= measured
    g = {b: transform_dual_objective(r.alpha, H, X, y, C, offset=off) for b, r in res.items()}
    assert abs(g["numba"] - g["python"]) <= (pg_norm["numba"] ** 2 + pg_norm["python"] ** 2) / (2 * lam)
    # W - W0 = H^T B = sum_l alpha_l t_l d_l: ||dW||_F <= sqrt(lambda_max(K)) ||d alpha||
    dW = np.linalg.norm(res["numba"].W(H) - res["python"].W(H))
    assert dW <= _sigma_max(H, X, y, C) * measured
    if solver == "explicit":                       # the maintained W is W = H^T B (Eq. 7)
        for r in res.values():
            np.testing.assert_allclose(r.W_explicit, r.W(H), atol=1e-10)


def test_numba_backend_same_seed_same_run():
    H, X, y = instance(4)
    a = solve_transform(H, X, y, 1.0, rng=5, tol=1e-6)
    b = solve_transform(H, X, y, 1.0, rng=5, tol=1e-6)
    np.testing.assert_array_equal(a.alpha, b.alpha)
    assert a.n_iter == b.n_iter and a.n_visits == b.n_visits
    assert len(a.epoch_seconds) == a.n_iter and all(t >= 0 for t in a.epoch_seconds)


@pytest.mark.parametrize("backend", ["numba", "python"])
def test_non_convergence_is_reported(backend):
    """Three epochs cannot meet tol = 1e-10 on this problem (the converged run needs more)."""
    H, X, y = instance(11, m=4, n=9)
    full = solve_transform(H, X, y, 2.0, rng=1, tol=1e-10, max_iter=100000, backend=backend)
    assert full.converged and full.n_iter > 3
    with pytest.warns(TransformConvergenceWarning,
                      match=r"W-step 7: solve_transform \(lowrank, backend .*4 x 9 dual coordinates\) "
                            r"did not converge in max_iter=3 epochs: projected-gradient spread .* > "
                            r"tol=1e-10 \(max \|PG\| at the returned alpha .*\)") as rec:
        short = solve_transform(H, X, y, 2.0, rng=1, tol=1e-10, max_iter=3, backend=backend,
                                context="W-step 7")
    assert len(rec) == 1 and issubclass(rec[0].category, ConvergenceWarning)
    assert not short.converged and short.n_iter == 3 and short.pg_spread > 1e-10
    PG = transform_projected_gradient(short.alpha, H, X, y, 2.0)
    assert short.kkt_violation == pytest.approx(np.abs(PG).max(), rel=1e-9)
    assert short.kkt_violation > 1e-10


def test_mmdt_records_convergence_per_w_step():
    Xs, ys, Xt, yt, _, _, _ = planted(1)
    with pytest.warns(TransformConvergenceWarning, match=r"MMDT.fit W-step [12] \(of at most 2\)"):
        est = MMDT(max_iter=1, tol=1e-12, max_alternations=2, random_state=0).fit(Xs, ys, Xt, yt)
    assert not est.converged_
    assert est.n_not_converged_ == sum(not r.converged for r in est.transform_results_) >= 1
    np.testing.assert_array_equal(est.n_iter_, [r.n_iter for r in est.transform_results_])
    assert est.n_iter_.shape == est.pg_spread_.shape == est.kkt_violation_.shape == (est.n_alternations_,)
    assert np.all(est.pg_spread_[[not r.converged for r in est.transform_results_]] > 1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TransformConvergenceWarning)
        ok = MMDT(random_state=0).fit(Xs, ys, Xt, yt)   # library defaults converge here
    assert ok.converged_ and ok.n_not_converged_ == 0 and np.all(ok.pg_spread_ <= ok.tol)


def test_curve_counts_non_converged_solves(caplog):
    Xs, ys, Xt, yt, Xte, yte, A = planted(5)
    X_all, y_all = np.vstack([Xt, Xte]), np.concatenate([yt, yte])
    kw = dict(ks=[2], seeds=[0, 1], heldout_classes=[2], source_map=A.T)
    with pytest.warns(TransformConvergenceWarning, match=r"cohort_transfer_curve: \d+ of \d+ MMDT "
                      r"transform solves \(in \d+ of 4 fits\) did not converge within max_iter=1 "
                      r"epochs at tol=1e-12") as rec:
        bad = cohort_transfer_curve(Xs, ys, X_all, y_all, **kw,
                                    mmdt_params={"max_alternations": 2, "max_iter": 1, "tol": 1e-12})
    assert len(rec) == 1                           # the per-solve warnings are collected into one
    mm = bad[bad.method.isin(["MMDT", "MMDT-W0"])]
    # W0 = 0 starts at alpha = 0 with every gradient -1: one epoch cannot meet tol = 1e-12.
    # (MMDT-W0 with the true map as W0 may already satisfy every margin: alpha = 0 is optimal.)
    assert (bad[bad.method == "MMDT"].n_transform_not_converged >= 1).all()
    assert (mm.n_transform_not_converged <= mm.n_transform_solves).all()
    svm = bad[bad.method.isin(["SVM-Source", "SVM-Target"])]
    assert (svm.n_transform_solves == 0).all() and (svm.n_transform_not_converged == 0).all()
    logger = logging.getLogger("test_mmdt_curve")
    with caplog.at_level(logging.INFO, logger="test_mmdt_curve"):
        n_bad = report_convergence(logger, bad, "planted")
    assert n_bad == int(mm.n_transform_not_converged.sum())
    assert f"planted: {n_bad} of {int(mm.n_transform_solves.sum())} MMDT transform solves did not " \
           "converge" in caplog.text
    table = curve_table(bad)                       # sums over seeds, same count
    assert report_convergence(logger, table, "planted") == n_bad
    with warnings.catch_warnings():
        warnings.simplefilter("error", TransformConvergenceWarning)
        good = cohort_transfer_curve(Xs, ys, X_all, y_all, **kw, mmdt_params={"max_alternations": 2})
    assert (good.n_transform_not_converged == 0).all()
    assert (good[good.method == "MMDT"].n_transform_solves >= 1).all()
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="test_mmdt_curve"):
        assert report_convergence(logger, good, "planted") == 0
    assert "all" in caplog.text and "converged" in caplog.text


# ----------------------------------------------------------------------------- estimator

def planted(seed=0, n_per=30, heldout=2):
    """3 Gaussian classes in 4-D (source); target = a fixed 3-D linear view + offset.

    Class ``heldout`` has no target training examples."""
    rng = np.random.default_rng(seed)
    means = 3.0 * np.eye(3, 4)
    ys = np.repeat(np.arange(3), n_per)
    Xs = means[ys] + 0.5 * rng.normal(size=(ys.size, 4))
    A = np.array([[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]])
    yt_all = np.repeat(np.arange(3), n_per)
    Xt_all = (means[yt_all] + 0.5 * rng.normal(size=(yt_all.size, 4))) @ A.T * 0.8 + 0.2
    train = np.concatenate([np.flatnonzero(yt_all == c)[:5] for c in range(3) if c != heldout])
    test = np.setdiff1d(np.arange(yt_all.size), train)
    return Xs, ys, Xt_all[train], yt_all[train], Xt_all[test], yt_all[test], A


def test_sklearn_contract():
    est = MMDT(C_source=0.3, C_target=2.0, solver="explicit", random_state=3)
    params = est.get_params()
    assert params["C_source"] == 0.3 and params["C_target"] == 2.0
    assert params["solver"] == "explicit" and params["random_state"] == 3
    c = clone(est)
    assert c is not est and c.get_params() == params
    c.set_params(C_target=5.0)
    assert c.C_target == 5.0 and est.C_target == 2.0
    Xs, ys, Xt, yt, Xte, yte, _ = planted()
    assert est.fit(Xs, ys, Xt, yt) is est
    np.testing.assert_array_equal(est.classes_, [0, 1, 2])
    assert est.decision_function(Xte).shape == (Xte.shape[0], 3)
    assert est.transform_.shape == (5, 4)          # (D + 1, Dt + 1)
    assert 0.0 <= est.score(Xte, yte) <= 1.0
    # objective of the alternation never increases beyond solver tolerance
    h = np.array(est.objective_history_)
    # each block step is solved only to its tolerance (W: PG spread tol = 1e-4, H:
    # LinearSVC svm_tol = 1e-4), so f may rise by the block's duality gap,
    # O(m n (rho tol)^2 / lambda) ~ 1e-5 here, far below 1e-3 |f|
    assert np.all(np.diff(h) <= 1e-3 * np.abs(h[:-1]))


def test_lowrank_and_explicit_estimators_agree():
    Xs, ys, Xt, yt, Xte, _, _ = planted(1)
    # Both blocks solved tightly (W: tol = 1e-8; H: svm_tol = 1e-10, not LinearSVC's 1e-4,
    # which would let a flipped stopping decision move H by ~1e-4): each block lands
    # within ~rho tol / lambda ~ 1e-7 of its optimum, and two alternations carry that
    # through strongly convex (Lipschitz) block problems; 1e-6 is that with a factor 10.
    kw = dict(tol=1e-8, max_iter=20000, random_state=0, max_alternations=2, svm_tol=1e-10)
    a = MMDT(solver="lowrank", **kw).fit(Xs, ys, Xt, yt)
    b = MMDT(solver="explicit", **kw).fit(Xs, ys, Xt, yt)
    np.testing.assert_allclose(a.transform_, b.transform_, atol=1e-6)
    np.testing.assert_allclose(a.decision_function(Xte), b.decision_function(Xte), atol=1e-6)


def test_new_category_is_predicted():
    """Class 2 has source examples only; target = 0.8 * (first 3 coordinates) + 0.2.

    With the prior W0 = A^T (the known view) the source hyperplane of class 2,
    mapped by W, separates the target class-2 images (class means 3 apart,
    noise 0.5 before scaling): > 90 % of them are predicted as class 2. The
    paper's W0 = 0 version learns W from classes 0 and 1 only, where every
    example is a class-2 negative, so no accuracy is promised; we only check
    it scores all three classes."""
    Xs, ys, Xt, yt, Xte, yte, A = planted(2)
    est = MMDT(transform_prior=A.T, random_state=0).fit(Xs, ys, Xt, yt)
    pred = est.predict(Xte)
    new = yte == 2
    # class means 3 apart with sd 0.5 (1.5 = 3 sd to the midway boundary): Bayes error
    # <= 2 Phi(-3) ~ 0.5 % per class, so 0.9 leaves room for a learned W != A^T
    assert np.mean(pred[new] == 2) > 0.9
    assert np.mean(pred == yte) > 0.9
    plain = MMDT(random_state=0).fit(Xs, ys, Xt, yt)
    assert plain.decision_function(Xte).shape[1] == 3
    assert set(np.unique(plain.predict(Xte))) <= {0, 1, 2}


# ----------------------------------------------------------------------------- input errors

@pytest.fixture(scope="module")
def data():
    Xs, ys, Xt, yt, _, _, _ = planted(4)
    return Xs, ys, Xt, yt


@pytest.mark.parametrize("mutate, match", [
    (lambda Xs, ys, Xt, yt: (Xs, ys, Xt, np.where(yt == 0, 7, yt)), r"yt: labels \[7\] are not"),
    (lambda Xs, ys, Xt, yt: (Xs, ys[:-1], Xt, yt), r"ys: has 89 labels but Xs has 90 rows"),
    (lambda Xs, ys, Xt, yt: (Xs, ys, Xt, yt[:-1]), r"yt: has 9 labels but Xt has 10 rows"),
    (lambda Xs, ys, Xt, yt: (np.where(np.arange(Xs.size).reshape(Xs.shape) == 5, np.nan, Xs),
                             ys, Xt, yt), r"Xs: holds NaN .* row 1, column 1"),
    (lambda Xs, ys, Xt, yt: (Xs, ys, np.full_like(Xt, np.inf), yt), r"Xt: holds NaN"),
    (lambda Xs, ys, Xt, yt: (Xs[:, 0], ys, Xt, yt), r"Xs: expected a 2-D array"),
    (lambda Xs, ys, Xt, yt: (Xs, ys, Xt[None], yt), r"Xt: expected a 2-D array"),
    (lambda Xs, ys, Xt, yt: (Xs, np.zeros_like(ys), Xt, np.zeros_like(yt)),
     r"ys: expected at least 2 source classes"),
    (lambda Xs, ys, Xt, yt: (Xs, ys, Xt[:0], yt[:0]), r"Xt: no target examples"),
    (lambda Xs, ys, Xt, yt: (Xs, ys.reshape(-1, 1), Xt, yt), r"ys: expected a 1-D array"),
])
def test_bad_input_raises(data, mutate, match):
    Xs, ys, Xt, yt = mutate(*data)
    with pytest.raises(InputError, match=match):
        MMDT().fit(Xs, ys, Xt, yt)


def test_class_without_source_samples_raises(data):
    Xs, ys, Xt, yt = data
    with pytest.raises(InputError, match=r"ys: classes \[3\] .* have no source examples"):
        MMDT().fit(Xs, ys, Xt, yt, classes=[0, 1, 2, 3])
    with pytest.raises(InputError, match=r"ys: labels \[2\] are not in classes"):
        MMDT().fit(Xs, ys, Xt, yt, classes=[0, 1])


@pytest.mark.parametrize("params, match", [
    ({"C_source": 0.0}, "C_source: expected a finite number > 0"),
    ({"C_target": -1.0}, "C_target: expected a finite number > 0"),
    ({"solver": "dense"}, "solver: expected one of"),
    ({"backend": "cuda"}, r"backend: expected one of \('numba', 'python'\)"),
    ({"max_alternations": 0}, "max_alternations: expected an integer >= 1"),
    ({"transform_prior": "identity"}, "transform_prior: 'identity' needs equal"),
    ({"transform_prior": np.eye(3)}, r"transform_prior: expected shape \(4, 3\)"),
])
def test_bad_hyperparameters_raise(data, params, match):
    with pytest.raises(InputError, match=match):
        MMDT(**params).fit(*data)


def test_predict_wrong_dimension_raises(data):
    est = MMDT(random_state=0).fit(*data)
    with pytest.raises(InputError, match=r"X: expected 3 features \(target features"):
        est.predict(np.zeros((2, 4)))
    with pytest.raises(InputError, match=r"X: holds NaN"):
        est.predict(np.full((2, 3), np.nan))


def test_solver_input_errors():
    H, X, y = instance(0)
    with pytest.raises(InputError, match=r"y_idx: expected integer class indices in \[0, 4\)"):
        solve_transform(H, X, np.full(X.shape[0], 4), 1.0)
    with pytest.raises(InputError, match=r"y_idx: expected shape \(10,\)"):
        solve_transform(H, X, y[:-1], 1.0)
    with pytest.raises(InputError, match="alpha0: expected finite non-negative"):
        solve_transform(H, X, y, 1.0, alpha0=-np.ones((4, 10)))
    with pytest.raises(InputError, match="C: expected a finite number > 0"):
        solve_transform(H, X, y, 0.0)
    with pytest.raises(InputError, match="backend: expected one of"):
        solve_transform(H, X, y, 1.0, backend="c")


# ----------------------------------------------------------------------------- tasks

def test_split_target_is_seeded_and_holds_out_classes():
    y = np.repeat(np.arange(4), 6)
    tr, te = split_target(y, 2, heldout_classes=[3], seed=5)
    tr2, _ = split_target(y, 2, heldout_classes=[3], seed=5)
    np.testing.assert_array_equal(tr, tr2)
    assert np.bincount(y[tr], minlength=4).tolist() == [2, 2, 2, 0]
    assert np.intersect1d(tr, te).size == 0 and tr.size + te.size == y.size
    with pytest.raises(InputError, match="k=6 needs at least 7"):
        split_target(y, 6)
    with pytest.raises(InputError, match=r"heldout_classes: \[9\] not among"):
        split_target(y, 1, heldout_classes=[9])


def test_cohort_curve_columns_and_heldout():
    Xs, ys, Xt, yt, Xte, yte, A = planted(5)
    X_all, y_all = np.vstack([Xt, Xte]), np.concatenate([yt, yte])
    df = cohort_transfer_curve(Xs, ys, X_all, y_all, ks=[2], seeds=[0], heldout_classes=[2],
                               source_map=A.T, mmdt_params={"max_alternations": 1})
    assert set(df.method) == {"MMDT", "MMDT-W0", "SVM-Source", "SVM-Target"}
    st = df.set_index("method")
    assert st.loc["SVM-Target", "accuracy_heldout"] == 0.0   # never predicts class 2
    assert np.isnan(st.loc["SVM-Target", "accuracy_heldout_within"])
    assert (df.n_train_target == 4).all()                     # 2 per seen class


def test_upsampling_matrix():
    U = upsampling_matrix()
    img = np.arange(16.0)
    up = (U @ img).reshape(8, 8)
    assert up[0, 0] == up[1, 1] == 0.0 and up[7, 7] == 15.0 and up[0, 2] == 1.0


def test_cohort_domains_pool_standardize_and_share_genes():
    from biokernels.studies.mmdt.protocol import cohort_domains

    rng = np.random.default_rng(0)
    a = pd.DataFrame(rng.normal(5, 2, (30, 4)), columns=["g1", "g2", "g3", "g4"])
    b = pd.DataFrame(rng.normal(-1, 3, (20, 3)), columns=["g2", "g3", "g4"])
    b["g4"] = 1.0  # constant in one cohort of the pool: kept (the pool varies)
    t = pd.DataFrame(rng.normal(0, 1, (25, 3)), columns=["g4", "g2", "g3"])
    ya, yb, yt = (pd.Series(rng.integers(0, 2, n)) for n in (30, 20, 25))
    Xs, ys, Xt, yt_out, info = cohort_domains({"a": (a, ya), "b": (b, yb)}, (t, yt), standardize="per_domain")
    assert Xs.shape == (50, 3) and Xt.shape == (25, 3) and info["genes"] == 3
    # standardization: the same formula two ways in float64 (default rtol 1e-7 below,
    # and a mean of 50 O(1) values, rounding ~50 eps ~ 1e-14, here)
    np.testing.assert_allclose(Xs.mean(axis=0), 0.0, atol=1e-12)  # standardized on the pool
    np.testing.assert_allclose(Xt.std(axis=0, ddof=1), 1.0)        # and the target on its own
    np.testing.assert_array_equal(ys, np.concatenate([ya, yb]))
    # columns in sorted gene order (g2, g3, g4), whatever each file's order
    np.testing.assert_allclose(Xt[:, 2], ((t["g4"] - t["g4"].mean()) / t["g4"].std()).to_numpy())
    # standardize="source": the target in the pool's units (its shift kept)
    Xs2, _, Xt2, _, _ = cohort_domains({"a": (a, ya), "b": (b, yb)}, (t, yt))
    pool = pd.concat([a[["g2", "g3", "g4"]], b])
    np.testing.assert_allclose(Xs2, Xs)
    np.testing.assert_allclose(Xt2[:, 0], ((t["g2"] - pool["g2"].mean()) / pool["g2"].std()).to_numpy())
    with pytest.raises(InputError, match="gene"):
        cohort_domains({"a": (a[["g1"]], ya)}, (t, yt))


def test_curve_table_means_over_seeds():
    curve = pd.DataFrame({"method": ["MMDT"] * 4, "k": [1, 1, 2, 2], "seed": [0, 1, 0, 1],
                          "accuracy": [0.5, 0.7, 0.8, 0.8], "accuracy_heldout_within": [np.nan] * 4})
    t = curve_table(curve)
    assert set(t["metric"]) == {"accuracy"}  # all-NaN metric left out
    assert t["mean"].tolist() == pytest.approx([0.6, 0.8]) and t["n_seeds"].tolist() == [2, 2]
