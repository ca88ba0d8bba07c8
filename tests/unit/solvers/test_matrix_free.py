"""The matrix-free NTK operator and the solvers on it (issue #19).

References the tests check against:
* the formed Gram of :func:`biokernels.kernels.ntk.ntk_relu_indexed` (the
  exact path of the source model);
* the exact ridge solve of :func:`biokernels.solvers.ridge.solve_ridge`;
* closed forms: Nystrom with every sample as a centre *is* kernel ridge
  (``W = V e^{-1/2}`` gives ``a = V (e + lam)^{-1} V^T y``); the fit change and
  the trace certificate of :mod:`biokernels.solvers.matrix_free`.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

from biokernels.distributed import Comm
from biokernels.kernels.ntk import ntk_relu_indexed
from biokernels.kernels.ntk_operator import PairNTKOperator
from biokernels.solvers.matrix_free import (MIN_CENTRES, choose_solver, cg_ridge, default_centres, exact_bytes,
                                             nystrom_ridge, predict_pairs)
from biokernels.solvers.ridge import solve_ridge

EPS64 = np.finfo(np.float64).eps


def problem(n=300, n_test=80, n_drugs=60, n_cells=9, genes=7, seed=0):
    rng = np.random.default_rng(seed)
    pairs = rng.choice(n_drugs * n_cells, n + n_test, replace=False)
    d, c = pairs // n_cells, pairs % n_cells
    D = (rng.random((n_drugs, 64)) < 0.1).astype(float)
    D[np.arange(n_drugs), rng.integers(0, 64, n_drugs)] = 1.0
    D /= np.linalg.norm(D, axis=1, keepdims=True)
    C = rng.standard_normal((n_cells, 20))
    C /= np.linalg.norm(C, axis=1, keepdims=True)
    W = rng.standard_normal((64, genes))
    Y = C[c] @ rng.standard_normal((20, genes)) + D[d] @ W + 0.1 * rng.standard_normal((n + n_test, genes)) + 3.0
    return {"D": D, "C": C, "train": (d[:n], c[:n]), "test": (d[n:], c[n:]), "Y": Y[:n], "Y_test": Y[n:]}


def dense(p, rows, cols=None):
    Dg, Cg = torch.as_tensor(p["D"] @ p["D"].T), torch.as_tensor(p["C"] @ p["C"].T)
    return ntk_relu_indexed(Dg, Cg, rows, cols, dtype=torch.float64)


def exact_predictions(p, lam):
    K = dense(p, p["train"])
    alpha, info = solve_ridge(K.clone(), p["Y"], lam, method="cholesky", fit_intercept=True)
    Kt = dense(p, p["test"], p["train"])
    return (Kt @ alpha).numpy() + info["intercept"], (K @ alpha).numpy()


def cg_prediction_bound(p, lam, tol, ref):
    """The largest test-prediction error of a CG stopped at relative residual
    tol: alpha's relative error is at most cond(K + lam I) tol, and the
    predictions are K_test alpha; plus float64 rounding of the predictions."""
    K = dense(p, p["train"])
    cond = (float(torch.linalg.matrix_norm(K, 2)) + lam) / lam
    Kt = dense(p, p["test"], p["train"])
    Yc = p["Y"] - p["Y"].mean(0)
    bound = cond * tol * float(torch.linalg.matrix_norm(Kt, 2)) * np.linalg.norm(Yc) / lam
    return bound + 1e3 * EPS64 * np.abs(ref).max()


@pytest.fixture(scope="module")
def p():
    return problem()


# --------------------------------------------------------------------------- operator


@pytest.mark.parametrize("gram_budget", [2**30, 0], ids=["drug Gram cached", "drug GEMM"])
def test_operator_blocks_equal_the_formed_gram(p, gram_budget):
    op = PairNTKOperator(p["D"], p["C"], p["train"], dtype=torch.float64, gram_budget_bytes=gram_budget,
                         block_bytes=3 * 8 * 300 * 17)  # 17 rows per block: many blocks, a ragged last one
    K = dense(p, p["train"])
    # the same formula on the same inner products; (i, j) and (j, i) of a BLAS Gram (and a GEMM of the
    # gathered features) may differ in the last bits, which the NTK passes on scaled by its slope (< 10)
    tol = 64 * EPS64 * float(K.abs().max())
    assert float((op.kernel(None, None) - K).abs().max()) <= tol
    assert float((op.diag() - K.diagonal()).abs().max()) <= tol
    V = torch.as_tensor(np.random.default_rng(1).standard_normal((op.n, 5)))
    ref = K @ V
    assert float((op.matmul(V) - ref).abs().max()) <= 1e3 * EPS64 * float(ref.abs().max()) * op.n ** 0.5
    parts = [op.matmul(V, rows=slice(a, b)) for a, b in ((0, 101), (101, 102), (102, 300))]
    # rows are independent: equal up to the order a threaded BLAS sums a row in (which depends on the block)
    assert float((torch.cat(parts) - op.matmul(V)).abs().max()) <= 8 * EPS64 * float(ref.abs().max()) * op.n ** 0.5
    Kt = dense(p, p["test"], p["train"])
    assert float((op.kernel(None, None, row_pairs=p["test"]) - Kt).abs().max()) <= tol


def test_operator_rejects_bad_input(p):
    with pytest.raises(ValueError, match="out of range"):
        PairNTKOperator(p["D"], p["C"], (np.array([0, 999]), np.array([0, 1])))
    with pytest.raises(ValueError, match="lengths differ"):
        PairNTKOperator(p["D"], p["C"], (np.array([0, 1]), np.array([0])))
    bad = p["D"].copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        PairNTKOperator(bad, p["C"], p["train"])
    with pytest.raises(ValueError, match="float32 or torch.float64"):
        PairNTKOperator(p["D"], p["C"], p["train"], dtype=torch.float16)


# --------------------------------------------------------------------------- Nystrom


def test_nystrom_with_every_sample_as_centre_is_kernel_ridge(p):
    lam = 1.0
    op = PairNTKOperator(p["D"], p["C"], p["train"], dtype=torch.float64)
    fit = nystrom_ridge(op, p["Y"], lam, centres=op.n)
    pred = predict_pairs(op, fit, p["test"])
    ref, _ = exact_predictions(p, lam)
    # closed form equal; rounding of the M x M solve: cond <= (lam_max + lam) / lam, plus the dropped
    # eigen-directions (e < e_max M eps) whose share of a fit is <= e_max M eps / lam
    K = dense(p, p["train"])
    cond = (float(torch.linalg.matrix_norm(K, 2)) + lam) / lam
    scale = np.abs(ref - ref.mean(0)).max()
    assert np.abs(pred - ref).max() <= 100 * op.n * EPS64 * cond * scale
    assert fit["info"]["trace_bound_rel"] <= 1e-8  # tr(K - K~) is rounding only


def test_nystrom_certificate_and_fit_change_hold(p):
    lam, m = 0.5, 120
    op = PairNTKOperator(p["D"], p["C"], p["train"], dtype=torch.float64)
    fit = nystrom_ridge(op, p["Y"], lam, centres=m, seed=3)
    info = fit["info"]
    J = fit["centres"]
    K = dense(p, p["train"])
    KnM = K[:, J]
    fit_nys = (KnM @ fit["coef"]).numpy()
    _, fit_exact = exact_predictions(p, lam)
    Yc = p["Y"] - p["Y"].mean(0)
    # certificate: ||fit_nys - fit_exact||_F <= tr(K - K~) / lam ||Y - mean||_F (module docstring)
    trK_tilde = float(torch.trace(KnM @ torch.linalg.pinv(K[J][:, J], hermitian=True) @ KnM.T))
    assert info["trace_K"] == pytest.approx(float(torch.trace(K)), rel=1e-12)
    assert info["trace_nystrom"] == pytest.approx(trK_tilde, rel=1e-6)
    gap = np.linalg.norm(fit_nys - fit_exact)
    assert 0 < gap <= info["trace_bound"]
    assert info["trace_bound"] == pytest.approx((info["trace_K"] - info["trace_nystrom"]) / lam
                                                * np.linalg.norm(Yc), rel=1e-12)
    # the M/2 -> M change from H equals the one from the explicit fits
    half = nystrom_ridge(op, p["Y"], lam, centres=m // 2, seed=3)
    assert torch.equal(half["centres"], J[:m // 2])  # nested centres
    f_half = (K[:, half["centres"]] @ half["coef"]).numpy()
    direct = np.linalg.norm(fit_nys - f_half) / np.linalg.norm(fit_nys)
    assert info["fit_change"] == pytest.approx(direct, rel=1e-6)
    # the estimated distance to the exact fit: the geometric tail change * r / (1 - r), r the ratio of
    # the last two changes per doubling (M/4 -> M/2 -> M), from the explicit fits
    quarter = nystrom_ridge(op, p["Y"], lam, centres=m // 4, seed=3)
    f_quarter = (K[:, quarter["centres"]] @ quarter["coef"]).numpy()
    r = direct / (np.linalg.norm(f_half - f_quarter) / np.linalg.norm(fit_nys))
    assert r < 1 and info["fit_error_est"] == pytest.approx(direct * r / (1 - r), rel=1e-5)


def test_centre_rule_starts_at_sqrt_n_log_n_and_doubles_until_the_fit_settles(p):
    assert default_centres(54000) == math.ceil(math.sqrt(54000) * math.log(54000)) == 2533
    assert default_centres(250000) == math.ceil(math.sqrt(250000) * math.log(250000))
    assert default_centres(5000) == MIN_CENTRES and default_centres(300) == 300
    op = PairNTKOperator(p["D"], p["C"], p["train"], dtype=torch.float64)
    loose = nystrom_ridge(op, p["Y"], 0.5, centres="auto", tol=1e9, max_centres=50)
    assert [x["centres"] for x in loose["info"]["passes"]] == [300]  # min(n, 1024) = n: one pass, all samples
    # with a cap below n: doubling from the start (here n = 300 < 1024, so the cap rules) stops at the cap
    capped = nystrom_ridge(op, p["Y"], 0.5, centres=37, tol=1e-12)
    assert capped["info"]["centres"] == 37 and len(capped["info"]["passes"]) == 1


def test_nystrom_auto_doubles_on_a_larger_problem():
    q = problem(n=2600, n_test=10, n_drugs=400, n_cells=12, genes=3, seed=5)
    op = PairNTKOperator(q["D"], q["C"], q["train"], dtype=torch.float32)
    fit = nystrom_ridge(op, q["Y"], 1e-3, centres="auto", tol=1e-12, max_centres=2100)
    assert [x["centres"] for x in fit["info"]["passes"]] == [1024, 2048, 2100]
    assert fit["info"]["converged"] is False  # tol unreachable: stopped by the cap, and says so
    done = nystrom_ridge(op, q["Y"], 1e-3, centres="auto", tol=10.0)
    assert [x["centres"] for x in done["info"]["passes"]] == [1024] and done["info"]["converged"]


# --------------------------------------------------------------------------- CG


def test_matrix_free_cg_reaches_the_exact_solution(p):
    lam, tol = 0.5, 1e-10
    op = PairNTKOperator(p["D"], p["C"], p["train"], dtype=torch.float64, block_bytes=3 * 8 * 300 * 50)
    fit = cg_ridge(op, p["Y"], lam, tol=tol, precond_rank=20)
    assert fit["info"]["converged"] and fit["info"]["residual_max"] <= tol
    pred = predict_pairs(op, fit, p["test"])
    ref, _ = exact_predictions(p, lam)
    assert np.abs(pred - ref).max() <= cg_prediction_bound(p, lam, tol, ref)
    plain = cg_ridge(op, p["Y"], lam, tol=1e-6, precond_rank=0)
    precond = cg_ridge(op, p["Y"], lam, tol=1e-6, precond_rank=100)
    assert precond["info"]["iterations"] < plain["info"]["iterations"]


# --------------------------------------------------------------------------- auto, comm


def test_choose_solver_by_the_memory_of_the_exact_gram():
    n, c = 54000, 978
    need = exact_bytes(n, c) / 2**30
    assert exact_bytes(n, c) == n * n * 4 + n * c * 12
    assert choose_solver(n, c, need + 0.01)[0] == "cholesky"
    solver, why = choose_solver(n, c, need - 0.01)
    assert solver == "falkon" and f"{need:.2f} GiB" in why
    with pytest.raises(ValueError, match="memory_budget_gib"):
        choose_solver(n, c, 0)


def test_source_model_auto_picks_and_logs_its_solver(p):
    from biokernels.studies.drug_screen.protocol import ScreenData, SourceModel

    n, nt = len(p["train"][0]), len(p["test"][0])
    data = ScreenData(Y=np.vstack([p["Y"], p["Y_test"]]), drug_idx=np.r_[p["train"][0], p["test"][0]],
                      cell_idx=np.r_[p["train"][1], p["test"][1]], D=p["D"], C=p["C"], folds=None, drugs=None,
                      cells=None, genes=None)
    tr, te = np.arange(n), np.arange(n, n + nt)
    exact = SourceModel(0.5, dtype=torch.float64).fit(data, tr)
    assert exact.solver_ == "cholesky" and "budget" in exact.info_["solver_choice"]
    small = {"memory_budget_gib": exact_bytes(n, 7, 8) / 2**30 * 0.99, "nystrom_centres": n}
    nys = SourceModel(0.5, dtype=torch.float64, settings=small).fit(data, tr)
    assert nys.solver_ == "falkon" and "budget" in nys.info_["solver_choice"] and nys.info_["converged"]
    uniform = SourceModel(0.5, dtype=torch.float64, solver="nystrom", settings=small).fit(data, tr)
    assert uniform.solver_ == "nystrom"
    cg = SourceModel(0.5, dtype=torch.float64, solver="cg_matrix_free", settings={"cg_tol": 1e-10}).fit(data, tr)
    assert cg.solver_ == "cg_matrix_free" and cg.info_["solver_choice"] == "set in the config"
    ref = exact.predict(data, te)
    scale = np.abs(ref - ref.mean(0)).max()
    # float64 throughout: Nystrom (both samplings) with every pair as a centre is kernel ridge (closed form), CG stops at
    # relative residual 1e-10; both errors are that times cond(K + lam I) (< 1e4 here, lam = 0.5), << 1e-6
    for m in (cg, nys, uniform):
        assert np.abs(m.predict(data, te) - ref).max() <= 1e-6 * scale
    with pytest.raises(ValueError, match="unknown key"):
        SourceModel(0.5, settings={"centres": 3})


def test_comm_row_ranges_partition_the_rows():
    class Fake(Comm):
        def __init__(self, rank, world):
            self.rank, self.world_size, self.group, self.active, self.backend = rank, world, None, False, None

    for n in (0, 1, 7, 10):
        for w in (1, 2, 3):
            parts = [Fake(r, w).row_range(n) for r in range(w)]
            assert parts[0].start == 0 and parts[-1].stop == n
            assert all(a.stop == b.start for a, b in zip(parts, parts[1:]))
            assert max(x.stop - x.start for x in parts) - min(x.stop - x.start for x in parts) <= 1
    single = Comm()
    t = torch.arange(6.0).reshape(3, 2)
    assert single.world_size == 1 and single.gather_rows(t, 3) is t


# --------------------------------------------------------------------------- 2 processes (gloo)

SCRIPT = textwrap.dedent('''
    import json, sys
    import numpy as np, torch
    sys.path[:0] = [{tests!r}, {root!r}]
    from test_matrix_free import problem
    from biokernels.distributed import init_from_env
    from biokernels.kernels.ntk_operator import PairNTKOperator
    from biokernels.solvers.falkon import falkon_ridge
    from biokernels.solvers.matrix_free import cg_ridge, nystrom_ridge, predict_pairs
    torch.set_num_threads(1)
    comm, dev = init_from_env("cpu")
    p = problem(n=460, n_test=60, n_drugs=80)
    op = PairNTKOperator(p["D"], p["C"], p["train"], dtype=torch.float64, block_bytes=3 * 8 * 120 * 64)
    nys = nystrom_ridge(op, p["Y"], 0.5, centres=120, comm=comm)
    cg = cg_ridge(op, p["Y"], 0.5, tol=1e-10, precond_rank=50, comm=comm)
    fk = falkon_ridge(op, p["Y"], 0.5, centres=120, sketch=60, comm=comm)
    out = {{"world": comm.world_size, "nystrom": predict_pairs(op, nys, p["test"], comm=comm).tolist(),
           "falkon": predict_pairs(op, fk, p["test"], comm=comm).tolist(),
           "cg": predict_pairs(op, cg, p["test"], comm=comm).tolist(), "cg_iterations": cg["info"]["iterations"]}}
    if comm.rank == 0:
        open(sys.argv[1], "w").write(json.dumps(out))
    comm.close()
''')


def test_two_gloo_processes_give_the_predictions_of_one(tmp_path):
    import os
    from pathlib import Path

    script = tmp_path / "solve.py"
    script.write_text(SCRIPT.format(tests=str(Path(__file__).parent), root=str(Path(__file__).parents[2])))
    res = {}
    for procs in (1, 2):
        out = tmp_path / f"out{procs}.json"
        cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={procs}",
               str(script), str(out)]
        env = {**os.environ, "OMP_NUM_THREADS": "1"}
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
        assert r.returncode == 0, r.stderr[-3000:]
        res[procs] = json.loads(out.read_text())
    assert (res[1]["world"], res[2]["world"]) == (1, 2)
    for method in ("nystrom", "falkon", "cg"):
        a, b = np.array(res[1][method]), np.array(res[2][method])
        scale = np.abs(a - a.mean(0)).max()
        # the same algorithm; only the order of float64 sums over rows changes (H and K_Mn Y summed per
        # process, then all-reduced; CG products by other row blocks), amplified at most by the condition
        # number of the solve (< 1e4 here): far below 1e-9
        assert np.abs(a - b).max() <= 1e-9 * scale, method


def test_centre_cap_of_the_memory_budget_is_the_largest_that_fits():
    from biokernels.solvers.matrix_free import max_centres, nystrom_bytes

    for budget, c in ((3 * 2**30, 978), (2**20, 7), (16 * 2**30, 12328)):
        m = max_centres(budget, c)
        assert nystrom_bytes(m, c, 0) <= budget < nystrom_bytes(m + 1, c, 0)
    assert max_centres(0, 10) == 1
