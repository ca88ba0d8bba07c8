"""Blocked in-place Cholesky, kernel ridge solves (with and without an
intercept, blocked and unblocked), the holdout selection of the ridge and
NTKRidge against numpy, torch and scikit-learn."""

import numpy as np
import pytest
import torch
from sklearn.kernel_ridge import KernelRidge as SkKernelRidge
from sklearn.linear_model import Ridge as SkRidge
from sklearn.metrics import r2_score

from biokernels.errors import InputError
from biokernels.kernels.ntk import ntk_relu, ntk_relu_indexed
from biokernels.solvers.ridge import (NotPositiveDefiniteError, NTKRidge, absolute_ridge, cholesky_inplace,
                                      holdout_split, predict_ridge, select_ridge_holdout, solve_ridge)
from tolerances import EPS64, cholesky_factor_error, prediction_error_bound, solve_rtol


def direct_solve_bounds(K, lam, alpha, Kt):
    """For two backward-stable solves of (K + lam I) a = Y: ||a1 - a2|| per column
    <= 2 n eps cond ||a|| (tolerances.solve_rtol), and |Kt (a1 - a2)|_i <= ||kt_i||
    times that plus the rounding of the product (n eps |Kt| |a|)."""
    A = K + lam * np.eye(K.shape[0])
    a = np.asarray(alpha).reshape(K.shape[0], -1)
    da = 2 * solve_rtol(A) * np.linalg.norm(a, axis=0)
    dp = (np.linalg.norm(Kt, axis=1)[:, None] * da[None, :]
          + 2 * K.shape[0] * EPS64 * np.abs(Kt) @ np.abs(a))
    return da, dp


def spd(n, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n + 5))
    return (A @ A.T / n + 0.1 * np.eye(n)).astype(dtype)


@pytest.fixture(scope="module")
def ntk_problem():
    # An NTK Gram on unit-norm features with a planted smooth target.
    rng = np.random.default_rng(1)
    X = rng.standard_normal((400, 10))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    Xt = rng.standard_normal((50, 10))
    Xt /= np.linalg.norm(Xt, axis=1, keepdims=True)
    W = rng.standard_normal((10, 3))
    Y = np.tanh(X @ W) + 0.05 * rng.standard_normal((400, 3))
    return X, Y, Xt, ntk_relu(X).numpy(), ntk_relu(Xt, X).numpy()


@pytest.mark.parametrize("n,block", [(1, 4), (37, 8), (100, 33), (257, 64), (300, 512)])
@pytest.mark.parametrize("order", ["C", "F"])
def test_cholesky_inplace_equals_lapack(n, block, order):
    K = np.asarray(spd(n, seed=n), order=order)
    K0 = K.copy()
    ref = np.linalg.cholesky(K)
    out = cholesky_inplace(K, block_size=block)
    assert out is K
    # each factor is within its residual-based bound of the exact one (Higham Thm 10.8;
    # ~n eps cond(K) relative, cond ~ 40 here)
    bound = cholesky_factor_error(K0, K) + cholesky_factor_error(K0, ref)
    assert np.linalg.norm(np.tril(K) - ref) <= bound


def test_cholesky_inplace_torch_float32_and_upper_triangle():
    n, block = 150, 40
    K0 = torch.tensor(spd(n, seed=3))
    K = K0.to(torch.float32).clone()
    cholesky_inplace(K, block_size=block)
    ref = torch.linalg.cholesky(K0)
    # float32: the factor is exact for K0 + E with E its (float64-evaluated) residual,
    # which includes the float32 rounding of K0 (eps32/2 |K0|); Higham Thm 10.8 turns
    # that into a bound on the factor (~cond eps32 ||R||: ~1e-5 here)
    bound = cholesky_factor_error(K0.numpy(), K.numpy()) + cholesky_factor_error(K0.numpy(), ref.numpy())
    assert torch.linalg.norm(torch.tril(K).double() - ref).item() <= bound
    # strictly upper triangle: zero inside the diagonal blocks, untouched elsewhere
    upper = torch.triu(torch.ones(n, n, dtype=torch.bool), 1)
    blocks = torch.zeros(n, n, dtype=torch.bool)
    for k in range(0, n, block):
        blocks[k:k + block, k:k + block] = True
    assert (K[upper & blocks] == 0).all()
    assert torch.equal(K[upper & ~blocks], K0.to(torch.float32)[upper & ~blocks])


def test_cholesky_inplace_reads_only_the_lower_triangle():
    K = spd(90, seed=4)
    K0 = K.copy()
    ref = np.linalg.cholesky(K)
    K[np.triu_indices(90, 1)] = np.nan  # garbage above the diagonal
    cholesky_inplace(K, block_size=32)
    bound = cholesky_factor_error(K0, np.tril(K)) + cholesky_factor_error(K0, ref)   # as above
    assert np.linalg.norm(np.tril(K) - ref) <= bound


def test_cholesky_inplace_not_positive_definite_names_the_row():
    K = spd(50, seed=5)
    K[30, 30] = -1.0  # the leading minor of order 31 is not positive
    with pytest.raises(ValueError, match=r"not positive definite.*row 30.*block 1"):
        cholesky_inplace(K, block_size=16)
    with pytest.raises(ValueError, match="square"):
        cholesky_inplace(np.zeros((3, 4)))
    with pytest.raises(ValueError, match="float32 or float64"):
        cholesky_inplace(np.eye(3, dtype=int))
    with pytest.raises(ValueError, match="contiguous"):
        cholesky_inplace(np.eye(6)[::2, ::2])


@pytest.mark.parametrize("lam", [1e-2, 1.0])
def test_solve_ridge_matches_sklearn(ntk_problem, lam):
    X, Y, Xt, K, Kt = ntk_problem
    ref = SkKernelRidge(alpha=lam, kernel="precomputed").fit(K, Y)
    alpha, info = solve_ridge(K, Y, lam, method="cholesky", block_size=64, check_residual=True)
    # backward stable: ||r|| <~ n eps ||A|| ||a|| <= n eps cond(A) ||Y|| (cond ~ 5e3 here)
    A = K + lam * np.eye(len(K))
    assert info["method"] == "cholesky" and info["residual_max"] <= solve_rtol(A)
    # two backward-stable solves of the same system (scikit-learn: scipy's Cholesky)
    da, dp = direct_solve_bounds(K, lam, ref.dual_coef_, Kt)
    assert np.all(np.linalg.norm(alpha - ref.dual_coef_, axis=0) <= da)
    assert np.all(np.abs(Kt @ alpha - ref.predict(Kt)) <= dp)
    # 1-D right-hand side keeps its shape
    a1, _ = solve_ridge(K, Y[:, 0], lam, method="cholesky")
    assert a1.shape == (400,)
    assert np.linalg.norm(a1 - ref.dual_coef_[:, 0]) <= da[0]


def test_solve_ridge_overwrite_factors_in_place(ntk_problem):
    X, Y, Xt, K, Kt = ntk_problem
    Kc = K.copy()
    alpha_copy, _ = solve_ridge(Kc, Y, 0.1, method="cholesky", block_size=64)
    assert np.array_equal(Kc, K)  # overwrite=False leaves K alone
    alpha, _ = solve_ridge(Kc, Y, 0.1, method="cholesky", block_size=64, overwrite=True)
    A = K + 0.1 * np.eye(400)
    bound = cholesky_factor_error(A, np.tril(Kc)) + cholesky_factor_error(A, np.linalg.cholesky(A))
    assert np.linalg.norm(np.tril(Kc) - np.linalg.cholesky(A)) <= bound      # Higham Thm 10.8
    # the same blocked factorisation of the same numbers, in place or on a copy:
    # identical arithmetic (the tolerance only absorbs rounding)
    np.testing.assert_allclose(alpha, alpha_copy, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("preconditioner", ["nystrom", "jacobi", None])
def test_cg_agrees_with_cholesky_float64(ntk_problem, preconditioner):
    X, Y, Xt, K, Kt = ntk_problem
    lam = 0.1
    a_ch, _ = solve_ridge(K, Y, lam, method="cholesky")
    a_cg, info = solve_ridge(K, Y, lam, method="cg", tol=1e-10, max_iter=2000, preconditioner=preconditioner,
                             precond_rank=100, check_residual=True)
    # CG stops on its recursive residual <= tol = 1e-10; the true one drifts from it by
    # <~ iterations eps cond(A) (Greenbaum 1997), ~2e-11 per 100 iterations here
    A = K + lam * np.eye(len(K))
    drift = info["iterations"] * solve_rtol(A) / len(K)
    assert info["converged"] and info["residual_kind"] == "true"
    assert info["residual_max"] <= 1e-10 + drift
    # exact: Kt (a_cg - a*) = -Kt A^-1 r (tolerances.prediction_error_bound), plus the
    # Cholesky solution's own error (direct_solve_bounds, half of it)
    p_ch, p_cg = Kt @ a_ch, Kt @ a_cg
    bound = prediction_error_bound(A, Kt, Y - A @ a_cg) + direct_solve_bounds(K, lam, a_ch, Kt)[1]
    assert np.all(np.abs(p_cg - p_ch) <= bound)


def test_nystrom_preconditioner_cuts_iterations(ntk_problem):
    X, Y, Xt, K, Kt = ntk_problem
    its = {p: solve_ridge(K, Y, 1e-3, method="cg", tol=1e-8, max_iter=3000, preconditioner=p,
                          precond_rank=100)[1]["iterations"] for p in ("nystrom", None)}
    # CG needs ~sqrt(cond) iterations: sqrt(lambda_max / lambda_min) ~ 72 for K + 1e-3 I,
    # ~sqrt(lambda_101 / lam) ~ 26 after a rank-100 Nystrom preconditioner (spectrum of
    # this K); the clustered top of the spectrum makes plain CG slower still
    assert its["nystrom"] < its[None] / 3, its


def test_float32_cholesky_and_cg_close_to_float64(ntk_problem):
    X, Y, Xt, K, Kt = ntk_problem
    lam = 0.1
    a64, _ = solve_ridge(K, Y, lam, method="cholesky")
    p64 = Kt @ a64
    K32 = torch.tensor(K, dtype=torch.float32)
    a_ch, info = solve_ridge(K32, torch.tensor(Y, dtype=torch.float32), lam, method="cholesky", overwrite=True,
                             block_size=64)
    assert isinstance(a_ch, torch.Tensor) and a_ch.dtype == torch.float32 and info["dtype"] == "float32"
    a_cg, info = solve_ridge(torch.tensor(K, dtype=torch.float32), Y, lam, method="cg", tol=1e-5)
    assert info["converged"]
    scale = np.abs(p64).max()
    A = K + lam * np.eye(len(K))
    for a in (a_ch, a_cg):
        a = a.double().numpy()
        # exact: the float64 residual of the float32 solution bounds its prediction
        # error (tolerances.prediction_error_bound), ~1e-4 of the scale here: the
        # residual is ~eps32 ||A|| ||a|| (float32 rounding of K, Cholesky) or ~tol ||Y||
        # (CG, tol = 1e-5), times sqrt(k(x, x) / lambda_min) ~ 4. 1e-3 of the scale is
        # what the test asks of a float32 solve.
        err = np.abs(Kt @ a - p64)
        bound = prediction_error_bound(A, Kt, Y - A @ a) + direct_solve_bounds(K, lam, a64, Kt)[1]
        assert np.all(err <= bound)
        assert err.max() < 1e-3 * scale


def test_auto_switches_on_size(ntk_problem):
    X, Y, Xt, K, Kt = ntk_problem
    assert solve_ridge(K, Y, 0.1)[1]["method"] == "cholesky"
    assert solve_ridge(K, Y, 0.1, exact_max_n=100)[1]["method"] == "cg"


def test_solve_ridge_validation_errors():
    K, Y = spd(20), np.ones((20, 2))
    with pytest.raises(ValueError, match="lam must be >= 0"):
        solve_ridge(K, Y, -1.0)
    with pytest.raises(ValueError, match="lam must be >= 0"):
        solve_ridge(K, Y, float("nan"))
    with pytest.raises(ValueError, match="square"):
        solve_ridge(K[:, :10], Y, 1.0)
    with pytest.raises(ValueError, match="K has 20 rows but Y has 19"):
        solve_ridge(K, Y[:19], 1.0)
    with pytest.raises(ValueError, match=r"Y: expected shape \(n,\) or \(n, c\)"):
        solve_ridge(K, np.ones((20, 2, 2)), 1.0)
    Kn = K.copy()
    Kn[3, 4] = np.inf
    with pytest.raises(ValueError, match="K holds NaN or infinite"):
        solve_ridge(Kn, Y, 1.0)
    Yn = Y.copy()
    Yn[0, 0] = np.nan
    with pytest.raises(ValueError, match="Y holds NaN or infinite"):
        solve_ridge(K, Yn, 1.0)
    with pytest.raises(ValueError, match="method"):
        solve_ridge(K, Y, 1.0, method="lu")
    with pytest.raises(ValueError, match="preconditioner"):
        solve_ridge(K, Y, 1.0, method="cg", preconditioner="ilu")
    # not positive definite even after the ridge: clear error, no crash, on every exact path
    bad = -np.eye(20)
    with pytest.raises(NotPositiveDefiniteError, match=r"not positive definite.*row 0.*lam = 0.5"):
        solve_ridge(bad, Y, 0.5, method="cholesky")
    with pytest.raises(NotPositiveDefiniteError, match=r"not positive definite.*row 0.*lam = 0.5"):
        solve_ridge(torch.tensor(bad), Y, 0.5, method="cholesky", block_size=None)
    with pytest.raises(NotPositiveDefiniteError, match=r"not positive definite.*lam = 0.5"):
        solve_ridge(bad, Y, 0.5, method="cholesky", block_size=None)       # SciPy's path
    with pytest.raises(InputError, match="ridge_rel must be >= 0"):
        absolute_ridge(K, -1e-3)
    with pytest.raises(ValueError, match=r"K_test: expected shape \(m, 20\)"):
        predict_ridge(np.ones((3, 19)), np.ones(20))


@pytest.mark.parametrize("kind", ["numpy", "torch"])
def test_unblocked_exact_solve_agrees_with_the_blocked_one(ntk_problem, kind):
    """block_size=None: one LAPACK potrf + potrs (SciPy's for numpy, torch's for a
    tensor) instead of the blocked in-place factorisation."""
    X, Y, Xt, K, Kt = ntk_problem
    lam = 0.05
    a_blk, _ = solve_ridge(K, Y, lam, method="cholesky", block_size=64)
    Kin = K.copy() if kind == "numpy" else torch.tensor(K)
    a_un, info = solve_ridge(Kin, Y, lam, method="cholesky", block_size=None, check_residual=True)
    assert info.get("backend") == ("scipy" if kind == "numpy" else None)
    a_un = np.asarray(a_un)
    np.testing.assert_array_equal(np.asarray(Kin), K)          # overwrite=False leaves K alone
    # two backward-stable solves of the same system: ||da|| <= 2 n eps cond ||a||
    da = direct_solve_bounds(K, lam, a_blk, Kt)[0]
    assert np.all(np.linalg.norm(a_un - a_blk, axis=0) <= da)
    assert info["residual_kind"] == "true" and info["residual_max"] <= solve_rtol(K + lam * np.eye(len(K)))
    a1, _ = solve_ridge(Kin, Y[:, 1], lam, method="cholesky", block_size=None)
    assert np.asarray(a1).shape == (400,)


def test_intercept_is_the_float64_mean_and_the_same_solve():
    """fit_intercept: Y is centred by its float64 column means before the cast to K's
    dtype, and the solve is the one without intercept on the centred Y."""
    rng = np.random.default_rng(3)
    K32 = torch.tensor(spd(60, seed=3), dtype=torch.float32)
    Y = rng.normal(size=(60, 2)) + 100.0
    a, info = solve_ridge(K32.clone(), Y, 0.3, method="cholesky", fit_intercept=True)
    # numpy's mean on the same array: the same (deterministic, pairwise) summation
    np.testing.assert_array_equal(info["intercept"], Y.mean(axis=0))
    assert info["intercept"].dtype == np.float64
    a_ref, info_ref = solve_ridge(K32.clone(), Y - Y.mean(axis=0), 0.3, method="cholesky")
    assert info_ref["intercept"] is None
    # the same arithmetic on the same float32 numbers (rtol: run-to-run rounding of threaded BLAS only)
    np.testing.assert_allclose(a.numpy(), a_ref.numpy(), rtol=1e-6, atol=0)
    # a 1-D target: a 0-d intercept, added back by predict_ridge
    a1, info1 = solve_ridge(K32.clone(), Y[:, 0], 0.3, fit_intercept=True)
    assert a1.shape == (60,) and info1["intercept"].shape == ()
    p = predict_ridge(K32[:5], a1, info1["intercept"])
    assert p.shape == (5,) and p.dtype == np.float64


def test_kernel_ridge_with_intercept_on_a_linear_kernel_equals_sklearn_ridge():
    """Ridge(fit_intercept=True) = kernel ridge with intercept on the centred linear kernel.

    scikit-learn's Ridge centres X and y, solves the primal
    ``(Xc'Xc + lam I) w = Xc'yc`` and sets ``b = mean(y) - mean(X)'w``. Kernel ridge
    with ``K = Xc Xc'`` fits the centred y by ``(K + lam I) a = yc``; since
    ``w = Xc'a`` (push-through identity) and ``K 1 = 0`` (the optimal unpenalised
    intercept is then exactly mean(y)), its prediction ``(x - mean(X))'Xc'a + mean(y)``
    is Ridge's exactly, in exact arithmetic.
    """
    rng = np.random.default_rng(11)
    n, p, lam = 50, 4, 0.5
    X = rng.normal(size=(n, p)) + np.array([3.0, -2.0, 1.0, 5.0])
    Xt = rng.normal(size=(20, p)) + np.array([3.0, -2.0, 1.0, 5.0])
    w_true = np.array([1.0, -0.5, 2.0, 0.3])
    y = X @ w_true + 7.0 + 0.1 * rng.normal(size=n)
    ref = SkRidge(alpha=lam, fit_intercept=True, solver="cholesky").fit(X, y)
    x_mean = X.mean(axis=0)
    Xc, Xtc = X - x_mean, Xt - x_mean
    K, Kt = Xc @ Xc.T, Xtc @ Xc.T
    alpha, info = solve_ridge(K, y, lam, method="cholesky", fit_intercept=True)
    ours = predict_ridge(Kt, alpha, info["intercept"])
    # Tolerance: two backward-stable solves, ours the dual (n x n), scikit-learn's the
    # primal (p x p); each is accurate to 2 n eps cond(.) relative (tolerances.solve_rtol;
    # the Gram's own rounding, p eps ||Xc||^2, and that of the two centrings of X,
    # ~eps |mean(X)| ||Xc||, are below the solve's backward error n eps ||A||), so
    # |d f_i| <= ||kt_i|| ||da|| + ||xt_i - mean(X)|| ||dw||, plus the rounding of the
    # products and of the intercepts, (n + p) eps each.
    A = K + lam * np.eye(n)
    B = Xc.T @ Xc + lam * np.eye(p)
    da = 2 * solve_rtol(A) * np.linalg.norm(alpha)
    dw = 2 * solve_rtol(B) * np.linalg.norm(ref.coef_)
    rounding = 4 * (n + p) * EPS64 * (np.abs(Kt) @ np.abs(alpha) + (np.abs(Xt) + np.abs(x_mean)) @ np.abs(ref.coef_)
                                      + abs(y.mean()))
    bound = np.linalg.norm(Kt, axis=1) * da + np.linalg.norm(Xtc, axis=1) * dw + rounding
    assert bound.max() < 1e-9                                 # the bound is not vacuous
    assert np.all(np.abs(ours - ref.predict(Xt)) <= bound)
    np.testing.assert_allclose(info["intercept"], y.mean())  # the intercept is mean(y) (numpy's mean)
    # without the intercept the same kernel model misses Ridge by the mean of y (~7)
    no_b, _ = solve_ridge(K, y, lam, method="cholesky")
    assert np.abs(predict_ridge(Kt, no_b) - ref.predict(Xt)).min() > 1e3 * bound.max()
    # NTKRidge-style estimators carry it the same way: fit_intercept on a Gram
    est = NTKRidge(lam=lam, fit_intercept=True).fit_gram(K, y)
    assert np.all(np.abs(est.predict_gram(Kt) - ref.predict(Xt)) <= bound)


def test_holdout_split_follows_its_documented_rule():
    tr, va = holdout_split(50, 30, seed=4)
    pick = np.random.default_rng(4).permutation(50)[:30]     # the rule, written out
    np.testing.assert_array_equal(va, pick[:6])              # round(0.2 * 30) = 6 validation
    np.testing.assert_array_equal(tr, pick[6:])
    tr_all, va_all = holdout_split(10, 1000, seed=0)         # subset larger than n: all of them
    assert sorted(np.r_[tr_all, va_all]) == list(range(10)) and len(va_all) == 2
    assert len(holdout_split(3, 3, seed=0)[1]) == 1         # at least one validation sample
    with pytest.raises(InputError, match="depmap.ridge.subset: a holdout needs at least 2"):
        holdout_split(1, 100, seed=0, name="depmap.ridge.subset")
    with pytest.raises(InputError, match="fraction"):
        holdout_split(10, 10, seed=0, frac=1.0)


def test_select_ridge_holdout_picks_the_planted_best_and_the_smallest_on_ties():
    calls = []

    def planted(scores):
        def fit_score(lam, tr, va):
            calls.append((tr, va))
            return scores[lam]
        return fit_score

    # one optimum by construction
    lam, table = select_ridge_holdout(planted({0.1: 0.2, 1.0: 0.7, 10.0: 0.9, 100.0: 0.4}), 40,
                                      [0.1, 1.0, 10.0, 100.0], subset=30, seed=2)
    assert lam == 10.0
    assert list(table.columns) == ["lam", "r2", "chosen"] and table["chosen"].tolist() == [False, False, True, False]
    # every lam is scored on the one split of holdout_split(n, subset, seed)
    tr, va = holdout_split(40, 30, seed=2)
    assert len(calls) == 4 and all(np.array_equal(t, tr) and np.array_equal(v, va) for t, v in calls)
    # ties go to the smallest lam, whatever the grid order; a NaN score ranks last
    lam, table = select_ridge_holdout(planted({10.0: 0.9, 1.0: 0.9, 0.1: 0.5}), 40, [10.0, 1.0, 0.1],
                                      subset=30, seed=2)
    assert lam == 1.0 and table["lam"].tolist() == [10.0, 1.0, 0.1]
    lam, _ = select_ridge_holdout(planted({0.1: float("nan"), 1.0: -5.0}), 40, [0.1, 1.0], subset=30, seed=2)
    assert lam == 1.0
    lam, table = select_ridge_holdout(planted({3: 0.1}), 40, [3], subset=30, seed=2, score_name="auc")
    assert lam == 3.0 and list(table.columns) == ["lam", "auc", "chosen"]
    with pytest.raises(InputError, match=r"drug_screen.source_ridge.grid: expected at least one"):
        select_ridge_holdout(planted({}), 40, [], subset=30, seed=2, name="drug_screen.source_ridge")
    with pytest.raises(InputError, match=r"drug_screen.source_ridge.grid value must be >= 0"):
        select_ridge_holdout(planted({}), 40, [1.0, -1.0], subset=30, seed=2, name="drug_screen.source_ridge")


def test_select_ridge_holdout_agrees_with_sklearn_kernel_ridge_and_manual_scoring():
    """The helper with the service's solve (intercept) against scikit-learn's KernelRidge
    on the centred targets plus the mean, scored by sklearn's r2_score on the split
    written out by hand."""
    rng = np.random.default_rng(12)
    X = rng.normal(size=(150, 3))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.sin(3 * X[:, 0]) + 0.2 * rng.normal(size=150) + 5.0
    K = ntk_relu(X).numpy()
    grid, subset, seed = [1e-3, 1e-1, 10.0, 1e3], 120, 5

    def fit_score(lam, tr, va):
        a, info = solve_ridge(K[np.ix_(tr, tr)], y[tr], lam, method="cholesky", fit_intercept=True)
        return r2_score(y[va], predict_ridge(K[np.ix_(va, tr)], a, info["intercept"]))

    lam, table = select_ridge_holdout(fit_score, len(y), grid, subset=subset, seed=seed)
    pick = np.random.default_rng(seed).permutation(150)[:120]
    va, tr = pick[:24], pick[24:]
    ref, bounds = [], []
    for g in grid:
        Ktr, Kva, mu = K[np.ix_(tr, tr)], K[np.ix_(va, tr)], y[tr].mean()
        m = SkKernelRidge(alpha=g, kernel="precomputed").fit(Ktr, y[tr] - mu)
        p = m.predict(Kva) + mu
        ref.append(r2_score(y[va], p))
        # two backward-stable solves: |dp_i| <= direct_solve_bounds (+ the mean's rounding);
        # R2 = 1 - SS_res / SS_tot moves by <= (2 ||e|| ||dp|| + ||dp||^2) / SS_tot
        dp = direct_solve_bounds(Ktr, g, m.dual_coef_, Kva)[1][:, 0] + 4 * len(tr) * EPS64 * abs(mu)
        e, ss = y[va] - p, np.sum((y[va] - y[va].mean()) ** 2)
        bounds.append((2 * np.linalg.norm(e) * np.linalg.norm(dp) + np.linalg.norm(dp) ** 2) / ss)
    assert np.all(np.abs(table["r2"].to_numpy() - ref) <= bounds)
    order = np.argsort(ref)[::-1]
    assert ref[order[0]] - ref[order[1]] > 2 * max(bounds)   # the choice is determined by the scores
    assert lam == grid[order[0]] and table.loc[table["chosen"], "lam"].tolist() == [lam]


def test_ntkridge_matches_sklearn_with_the_same_kernel(ntk_problem):
    X, Y, Xt, K, Kt = ntk_problem
    lam = 0.05
    ref = SkKernelRidge(alpha=lam, kernel="precomputed").fit(K, Y)
    model = NTKRidge(lam=lam, device="cpu").fit(X, Y)
    # the same Gram (ntk_relu), two backward-stable solves: direct_solve_bounds
    dp = direct_solve_bounds(K, lam, ref.dual_coef_, Kt)[1]
    assert np.all(np.abs(model.predict(Xt) - ref.predict(Kt)) <= dp)
    assert model.predict(Xt[:, :]).shape == (50, 3)
    # precomputed Gram, and a 1-D target
    g = NTKRidge(lam=lam).fit_gram(K, Y[:, 1])
    p = g.predict_gram(Kt)
    assert p.shape == (50,)
    assert np.all(np.abs(p - ref.predict(Kt)[:, 1]) <= dp[:, 1])
    with pytest.raises(ValueError, match="predict_gram"):
        g.predict(Xt)
    with pytest.raises(ValueError, match="not fitted"):
        NTKRidge().predict(Xt)
    with pytest.raises(ValueError, match=r"expected shape \(m, 400\)"):
        g.predict_gram(Kt[:, :10])


def test_ntkridge_on_an_indexed_gram_matches_sklearn():
    # The drug-screen set-up: samples are (drug, cell) pairs, Gram by index.
    rng = np.random.default_rng(7)
    D = (rng.random((60, 128)) < 0.05).astype(float)
    D[:, 0] = 1.0
    D /= np.linalg.norm(D, axis=1, keepdims=True)
    C = rng.standard_normal((5, 20))
    C /= np.linalg.norm(C, axis=1, keepdims=True)
    pairs = rng.permutation(300)[:250]
    d, c = pairs // 5, pairs % 5
    Y = rng.standard_normal((200, 4))
    tr, te = (d[:200], c[:200]), (d[200:], c[200:])
    K = ntk_relu_indexed(D @ D.T, C @ C.T, tr, dtype=torch.float64)
    Kt = ntk_relu_indexed(D @ D.T, C @ C.T, te, tr, dtype=torch.float64)
    ref = SkKernelRidge(alpha=1.0, kernel="precomputed").fit(K.numpy(), Y).predict(Kt.numpy())
    Kn, Ktn = K.numpy(), Kt.numpy()                      # before fit_gram overwrites K
    a_ref = np.linalg.solve(Kn + np.eye(len(Kn)), Y)
    dp = direct_solve_bounds(Kn, 1.0, a_ref, Ktn)[1]
    got = NTKRidge(lam=1.0).fit_gram(K, Y, overwrite=True).predict_gram(Kt)
    assert np.all(np.abs(got - ref) <= dp)               # two backward-stable solves
