"""The Falkon-grade Nystrom solver (leverage-score centres, K_MM-Cholesky conditioning).

References the tests check against:
* closed forms: with every sample a centre, Nystrom kernel ridge *is*
  kernel ridge; with the full sketch, the approximate ridge leverage scores
  are the exact ``[K (K + lam I)^{-1}]_ii``;
* a direct dense solve of the Nystrom normal equations
  ``(K_Mn K_nM + lam K_MM) a = K_Mn (Y - mean)`` on the same centres (numpy);
* the fits on the first M/2 and M/4 centres, solved separately;
* the law of the first draw of a weighted sample (binomial standard error).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from biokernels.kernels.ntk_operator import PairNTKOperator
from biokernels.solvers.falkon import (falkon_bytes, falkon_max_centres, falkon_ridge, leverage_order,
                                       ridge_leverage_scores)
from biokernels.solvers.matrix_free import predict_pairs
from test_matrix_free import EPS64, cg_prediction_bound, dense, exact_predictions, problem


@pytest.fixture(scope="module")
def p():
    return problem()


def op64(p, **kw):
    return PairNTKOperator(p["D"], p["C"], p["train"], dtype=torch.float64, **kw)


def test_leverage_scores_with_the_full_sketch_are_the_exact_ridge_leverage_scores(p):
    lam = 0.5
    op = op64(p)
    K = dense(p, p["train"]).numpy()
    exact = np.diag(K @ np.linalg.inv(K + lam * np.eye(op.n)))
    got = ridge_leverage_scores(op, lam, sketch=op.n).numpy()
    # (K_ii - k_i^T (K + lam I)^{-1} k_i) / lam = [K (K + lam I)^{-1}]_ii; both sides condition-bound rounding
    cond = (np.linalg.eigvalsh(K)[-1] + lam) / lam
    assert np.abs(got - exact).max() <= 100 * op.n * EPS64 * cond
    small = ridge_leverage_scores(op, lam, sketch=40, seed=1)
    assert small.shape == (op.n,) and bool((small >= 0).all()) and bool((small <= 1).all())


def test_leverage_order_draws_the_first_centre_in_proportion_to_its_weight():
    w = torch.tensor([1.0, 2.0, 3.0, 4.0, 0.0], dtype=torch.float64)
    firsts = np.array([int(leverage_order(w, seed)[0]) for seed in range(4000)])
    freq = np.bincount(firsts, minlength=5) / firsts.size
    # each frequency within 4 binomial standard errors of w_i / sum(w)
    expect = (w / w.sum()).numpy()
    assert np.all(np.abs(freq - expect) <= 4 * np.sqrt(expect * (1 - expect) / firsts.size) + 1e-12)
    assert all(int(leverage_order(w, s)[-1]) == 4 for s in range(20))  # weight 0 comes last
    assert torch.equal(leverage_order(w, 7), leverage_order(w, 7))  # seeded


def test_every_sample_as_centre_is_kernel_ridge(p):
    lam = 1.0
    op = op64(p)
    fit = falkon_ridge(op, p["Y"], lam, centres=op.n)
    ref, _ = exact_predictions(p, lam)
    pred = predict_pairs(op, fit, p["test"])
    K = dense(p, p["train"])
    cond = (float(torch.linalg.matrix_norm(K, 2)) + lam) / lam
    scale = np.abs(ref - ref.mean(0)).max()
    # K_MM = K: L^{-1} K K L^{-T} + lam I conditions the system to cond <= (lam_max + lam) / lam
    assert np.abs(pred - ref).max() <= 100 * op.n * EPS64 * cond * scale
    assert fit["info"]["jitter"] == 0.0 and fit["info"]["trace_bound_rel"] <= 1e-8
    e = np.linalg.eigvalsh(K.numpy())
    assert fit["info"]["d_eff"] == pytest.approx(float((e / (e + lam)).sum()), rel=1e-8)


@pytest.mark.parametrize("product_dtype", [torch.float64, torch.float32])
def test_coefficients_solve_the_nystrom_normal_equations_and_the_nested_changes_are_exact(p, product_dtype):
    lam, m = 0.5, 120
    op = op64(p, block_bytes=3 * 8 * 120 * 41)  # many blocks: H summed over them
    fit = falkon_ridge(op, p["Y"], lam, centres=m, seed=3, product_dtype=product_dtype)
    J = fit["centres"].numpy()
    K = dense(p, p["train"]).numpy()
    KnM, Kmm = K[:, J], K[np.ix_(J, J)]
    Yc = p["Y"] - p["Y"].mean(0)
    a = np.linalg.solve(KnM.T @ KnM + lam * Kmm, KnM.T @ Yc)
    f_ref = KnM @ a
    f = KnM @ fit["coef"].numpy()
    # float32 block products: each block's sums round at ~ rows * eps32 relative (41 rows per block)
    tol = 1e-8 if product_dtype == torch.float64 else 41 * np.finfo(np.float32).eps * 100
    assert np.linalg.norm(f - f_ref) <= tol * np.linalg.norm(f_ref)
    # nested: the first M/2 and M/4 of the order are the centres of the smaller fits
    fits = {k: falkon_ridge(op, p["Y"], lam, centres=k, seed=3, product_dtype=product_dtype) for k in (m // 2, m // 4)}
    assert all(np.array_equal(fits[k]["centres"].numpy(), J[:k]) for k in fits)
    fk = {k: K[:, J[:k]] @ fits[k]["coef"].numpy() for k in fits}
    change = np.linalg.norm(f - fk[m // 2]) / np.linalg.norm(f)
    before = np.linalg.norm(fk[m // 2] - fk[m // 4]) / np.linalg.norm(f)
    info = fit["info"]
    assert info["fit_change"] == pytest.approx(change, rel=1e-5)
    r = change / before
    assert r < 1 and info["fit_error_est"] == pytest.approx(change * r / (1 - r), rel=1e-4)
    # the trace certificate: tr K~ = tr(K_nM K_MM^{-1} K_Mn)
    assert info["trace_nystrom"] == pytest.approx(float(np.trace(KnM @ np.linalg.solve(Kmm, KnM.T))), rel=1e-6)


def test_auto_starts_at_twice_the_estimated_effective_dimension_and_doubles_to_the_cap():
    q = problem(n=2600, n_test=10, n_drugs=400, n_cells=12, genes=3, seed=5)
    op = PairNTKOperator(q["D"], q["C"], q["train"], dtype=torch.float32)
    lam = 3.0
    d_hat = float(ridge_leverage_scores(op, lam, sketch=512, seed=0).sum())
    fit = falkon_ridge(op, q["Y"], lam, centres="auto", tol=1e-12, max_centres=2100, sketch=512)
    start = max(1024, math.ceil(2 * d_hat))
    ms = [x["centres"] for x in fit["info"]["passes"]]
    assert ms[0] == min(start, 2100) and ms[-1] == 2100 and all(b == min(2 * a, 2100) for a, b in zip(ms, ms[1:]))
    assert fit["info"]["converged"] is False  # tol unreachable: stopped by the cap, and says so
    done = falkon_ridge(op, q["Y"], lam, centres="auto", tol=10.0, sketch=512)
    assert len(done["info"]["passes"]) == 1 and done["info"]["converged"]


def test_memory_cap_is_the_largest_centre_count_that_fits():
    for budget, c in ((3 * 2**30, 978), (6 * 2**30, 978), (2**20, 1)):
        m = falkon_max_centres(budget, c)
        assert falkon_bytes(m, c, 0) <= budget < falkon_bytes(m + 1, c, 0)
    # the figures the docstring, README and docs quote (the line above is the check of the rule)
    assert falkon_max_centres(3 * 2**30, 978) == 13474 and falkon_max_centres(6 * 2**30, 978) == 19346
    assert falkon_max_centres(0, 5) == 1


def test_bad_input_is_refused_with_its_name(p):
    op = op64(p)
    with pytest.raises(ValueError, match="lam must be > 0"):
        falkon_ridge(op, p["Y"], 0.0)
    with pytest.raises(ValueError, match="300 pairs but Y has 299"):
        falkon_ridge(op, p["Y"][:-1], 1.0)
    with pytest.raises(ValueError, match="centres"):
        falkon_ridge(op, p["Y"], 1.0, centres="many")
    with pytest.raises(ValueError, match="sketch"):
        falkon_ridge(op, p["Y"], 1.0, sketch=0)
    with pytest.raises(ValueError, match="product_dtype"):
        falkon_ridge(op, p["Y"], 1.0, product_dtype=torch.float16)
    bad = p["Y"].copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        falkon_ridge(op, bad, 1.0)


def test_exact_by_cg_with_the_falkon_preconditioner_reaches_kernel_ridge_in_few_iterations(p):
    from biokernels.solvers.matrix_free import cg_ridge

    lam, tol = 0.05, 1e-10
    op = op64(p)
    fit = falkon_ridge(op, p["Y"], lam, centres=100, exact="always", cg_tol=tol, cg_max_iter=300)
    info = fit["info"]
    assert info["method"] == "falkon+cg" and info["converged"] and info["residual_max"] <= tol
    assert fit["centres"] is None and fit["coef"].shape == (op.n, p["Y"].shape[1])
    ref, _ = exact_predictions(p, lam)
    assert np.abs(predict_pairs(op, fit, p["test"]) - ref).max() <= cg_prediction_bound(p, lam, tol, ref)
    # K~ <= K: the preconditioned spectrum lies in [1, 1 + ||K - K~|| / lam], against [1, (lam_max + lam) / lam]
    plain = cg_ridge(op, p["Y"], lam, tol=tol, precond_rank=0, max_iter=300)["info"]["iterations"]
    assert info["iterations"] < plain / 2
    unconverged = falkon_ridge(op, p["Y"], lam, centres="auto", tol=1e-12, max_centres=60, exact="unconverged",
                               cg_tol=1e-6)
    assert unconverged["info"]["method"] == "falkon+cg" and unconverged["info"]["nystrom_converged"] is False
    settled = falkon_ridge(op, p["Y"], lam, centres="auto", tol=10.0, exact="unconverged")
    assert settled["info"]["method"] == "falkon" and settled["centres"] is not None


def test_the_blocked_factorizations_and_substitutions_equal_the_one_block_ones(p, monkeypatch):
    import biokernels.solvers.falkon as falkon

    lam = 0.5
    op = op64(p)
    one = falkon_ridge(op, p["Y"], lam, centres=120, seed=3)  # 120 < the default block: one block
    monkeypatch.setattr(falkon, "_NB", 16)                   # 8 blocks: the blocked paths
    many = falkon_ridge(op, p["Y"], lam, centres=120, seed=3)
    # the same system; only the order of float64 sums differs, amplified by cond <= (lam_max + lam) / lam
    K = dense(p, p["train"])
    cond = (float(torch.linalg.matrix_norm(K, 2)) + lam) / lam
    scale = float(one["coef"].abs().max())
    assert float((many["coef"] - one["coef"]).abs().max()) <= 1e3 * EPS64 * cond * scale
    for key in ("d_eff", "fit_change", "fit_error_est", "trace_nystrom"):
        assert many["info"][key] == pytest.approx(one["info"][key], rel=1e-8), key
    full = falkon_ridge(op, p["Y"], lam, centres=op.n)
    ref, _ = exact_predictions(p, lam)
    assert np.abs(predict_pairs(op, full, p["test"]) - ref).max() <= 100 * op.n * EPS64 * cond * np.abs(ref).max()


def test_an_estimate_that_cannot_be_formed_is_not_converged(p):
    fit = falkon_ridge(op64(p), p["Y"], 1.0, centres=3)  # fewer than 4 centres: no M/4 fit
    assert math.isnan(fit["info"]["fit_error_est"]) and fit["info"]["converged"] is False
