"""SM1 (Lanckriet et al. 2004 QCQP) against independent checks.

* one kernel: SM1 is the ordinary soft-margin SVM on the kernel scaled to the
  trace constraint, so it must agree with scikit-learn's SVC (LIBSVM);
* the weights are non-negative and meet ``Σ μ_i trace(K_i) = c``;
* the optimal value is ``min_μ ω(Σ μ_i K_i)`` (minimax duality): for p = 2 it
  matches a brute-force search over the weight simplex, each point solved by SVC;
* the shared-basis/diagonal-factor input gives the same fit as dense kernels,
  in both of its forms (elementwise cones, the default, and per-kernel cones),
  and its optimal value is again the brute-force minimum over the weights;
* where Clarabel stalls short of the tight gap, the fit is kept at Clarabel's
  default tolerances without a second solve.
"""

import numpy as np
import pytest
import scipy.linalg as sla
from scipy.optimize import minimize_scalar
from sklearn.svm import SVC

from biokernels.solvers.sm1 import SM1, default_solver, psd_factor, sm1_cost, sm1_fits
from svm_bounds import assert_same_svm_solution

N_ALL, N_TRAIN = 40, 30
TR, TE = np.arange(N_TRAIN), np.arange(N_TRAIN, N_ALL)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(N_ALL, 2))
    y = np.where(X[:, 0] + X[:, 1] + 0.3 * rng.normal(size=N_ALL) > 0, 1.0, -1.0)
    # Two complementary kernels, each seeing one feature; the ridge keeps them well
    # conditioned so the SVM dual (and hence α) is unique and tightly determined.
    K1 = np.outer(X[:, 0], X[:, 0]) + 0.2 * np.eye(N_ALL)
    K2 = np.exp(-0.5 * (X[:, 1][:, None] - X[:, 1][None, :]) ** 2) + 0.2 * np.eye(N_ALL)
    return {"y": y, "K": [K1, K2], "r": np.array([np.trace(K1), np.trace(K2)])}


def svc_alpha(K, y, C):
    """LIBSVM's dual variables α (all training points) and the fitted SVC."""
    svc = SVC(kernel="precomputed", C=C, tol=1e-10).fit(K, y)
    a = np.zeros(y.size)
    a[svc.support_] = np.abs(svc.dual_coef_[0])
    return a, svc


def omega(K, y, C):
    """ω(K) = max 2α'e - α'G(K)α (Sun et al. Eq. 5), evaluated at LIBSVM's maximiser."""
    a, _ = svc_alpha(K, y, C)
    G = (y[:, None] * y[None, :]) * K
    return 2 * a.sum() - a @ G @ a


@pytest.mark.parametrize("C", [0.3, 3.0])
@pytest.mark.parametrize("trace", [None, 7.0])
def test_single_kernel_is_the_svm_on_the_trace_scaled_kernel(data, C, trace):
    y, K, r = data["y"], data["K"][1], data["r"][1]
    m = SM1(C=C, trace=trace).fit([K[np.ix_(TR, TR)]], y[TR], [r])
    c = r if trace is None else trace            # default c = mean of the traces
    # One kernel: the trace constraint alone fixes μ = c / r (SM1 normalises its
    # multipliers to sum 1, so this is exact up to rounding).
    np.testing.assert_allclose(m.weights_, [c / r], rtol=1e-10)
    Ks = (c / r) * K
    Ktr, Kte = Ks[np.ix_(TR, TR)], Ks[np.ix_(TE, TR)]
    a, svc = svc_alpha(Ktr, y[TR], C)
    dual = np.zeros(N_TRAIN)
    dual[svc.support_] = svc.dual_coef_[0]
    # Tolerances from the solvers' stopping rules (tests/svm_bounds.py),
    # not from one machine's run: ||α_SM1 - α_LIBSVM||_2 <= r.
    r = assert_same_svm_solution(Ktr, y[TR], C, m.alpha_, a)
    assert np.linalg.norm(m.dual_coef_ - dual) <= r          # dual_coef = y ∘ α
    # Intercept and decision values move by at most ||K row||_2 r for each
    # end of the comparison (b is y_i - (K (y∘α))_i on a free support vector).
    row_tr = np.linalg.norm(Ktr, axis=1).max()
    assert abs(m.intercept_ - svc.intercept_[0]) <= 2 * row_tr * r
    f_m, f_svc = m.decision_function([K[np.ix_(TE, TR)]]), svc.decision_function(Kte)
    f_bound = np.linalg.norm(Kte, axis=1) * r + 2 * row_tr * r
    assert np.all(np.abs(f_m - f_svc) <= f_bound)
    sure = np.abs(f_svc) > f_bound                            # sign fixed within the bound
    np.testing.assert_array_equal(m.predict([K[np.ix_(TE, TR)]])[sure], svc.predict(Kte)[sure])
    # The QCQP's optimal value is ω of that kernel (twice LIBSVM's dual objective).
    # Clarabel's value is within 2 clarabel_dual_slack(D) ~ 1e-8 (1 + |D|) of it
    # (svm_bounds.py), LIBSVM's α within its duality gap (tol 1e-10): rel 1e-6 is loose.
    assert m.objective_ == pytest.approx(omega(Ks[np.ix_(TR, TR)], y[TR], C), rel=1e-6)
    assert m.solver_ == default_solver() and m.status_ == "optimal"


def test_weights_nonnegative_and_meet_the_trace_constraint(data):
    y = data["y"]
    K3 = np.ones((N_ALL, N_ALL)) + 0.1 * np.eye(N_ALL)       # an uninformative kernel
    Ks = data["K"] + [K3]
    r = np.array([np.trace(K) for K in Ks]) * np.array([1.0, 2.0, 1.5])  # any full traces >= blocks
    m = SM1(C=1.0, trace=5.0).fit([K[np.ix_(TR, TR)] for K in Ks], y[TR], r)
    assert np.all(m.weights_ >= 0)
    # exact by construction (weights = ν c / r with ν normalised): rounding only
    assert m.weights_ @ r == pytest.approx(5.0, rel=1e-10)
    assert m.kernel_multipliers_.sum() == pytest.approx(1.0)
    # α is the SVM solution for the learned kernel: SVC on Σ μ_i K_i agrees.
    Kmu = m.combine([K[np.ix_(TR, TR)] for K in Ks])
    a, _ = svc_alpha(Kmu, y[TR], 1.0)
    assert_same_svm_solution(Kmu, y[TR], 1.0, m.alpha_, a)   # tolerances: svm_bounds.py


@pytest.mark.parametrize("C", [0.3, 3.0])
def test_optimal_value_is_the_min_over_weights_of_the_svm_dual(data, C):
    """Brute force for p = 2: K(ν) = c (ν K1/r1 + (1-ν) K2/r2), ν in [0, 1]."""
    y, (K1, K2), r = data["y"], data["K"], data["r"]
    blocks = [K1[np.ix_(TR, TR)], K2[np.ix_(TR, TR)]]
    m = SM1(C=C).fit(blocks, y[TR], r)
    c = m.trace_

    def om(nu):
        return omega(c * (nu * blocks[0] / r[0] + (1 - nu) * blocks[1] / r[1]), y[TR], C)

    grid = np.linspace(0.0, 1.0, 51)
    values = np.array([om(v) for v in grid])
    # Weak duality: the QCQP value is <= ω at every feasible weight, up to the two
    # solvers' slack: Clarabel's ~1e-8 (1 + |D|) (svm_bounds.clarabel_dual_slack) and
    # LIBSVM's α (tol 1e-10) underestimating ω by twice its duality gap: 1e-7 relative
    # covers both ...
    assert m.objective_ <= values.min() * (1 + 1e-7)
    # ... and equals the minimum (ω(ν) is convex; refine the grid minimum).
    k = int(values.argmin())
    best = minimize_scalar(om, bounds=(grid[max(k - 1, 0)], grid[min(k + 1, 50)]),
                           method="bounded", options={"xatol": 1e-7})
    assert m.objective_ == pytest.approx(best.fun, rel=1e-6)
    # The optimum is interior here and the learned weights sit at the minimiser: SM1's
    # ν is ω-optimal to the same rel 1e-6, and near the minimum ω(ν) - ω* ~ ω''/2 (ν - ν*)²,
    # so |ν - ν*| <= sqrt(2e-6 ω* / ω'') (~1e-3 here; ω'' by a central difference)
    assert 0.05 < best.x < 0.95
    assert om(m.kernel_multipliers_[0]) <= best.fun * (1 + 1e-6)
    h = 1e-2
    curv = (om(best.x + h) - 2 * best.fun + om(best.x - h)) / h ** 2
    nu_tol = np.sqrt(2e-6 * best.fun / curv)
    assert m.kernel_multipliers_[0] == pytest.approx(best.x, abs=nu_tol)
    np.testing.assert_allclose(m.weights_, [best.x * c / r[0], (1 - best.x) * c / r[1]],
                               rtol=nu_tol / min(best.x, 1 - best.x))


def diffusion_setup(seed=1, n=30, n_train=20, betas=(0.1, 0.5, 2.0)):
    rng = np.random.default_rng(seed)
    U = np.triu(rng.random((n, n)) < 0.15, 1)
    A = (U | U.T).astype(float)
    L = np.diag(A.sum(1)) - A
    lam, V = np.linalg.eigh(L)
    # Diffusion kernels exp(-β L) = V diag(exp(-β λ)) V' (Kondor & Lafferty; Sun et al. Eq. 2).
    spectra = [np.exp(-b * lam) for b in betas]
    kernels = [sla.expm(-b * L) for b in betas]
    perm = rng.permutation(n)
    tr, te = perm[:n_train], perm[n_train:]
    y = np.where(V[:, 1] + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    return V, spectra, kernels, tr, te, y


def test_shared_basis_diagonal_factors_match_dense_kernels():
    V, spectra, kernels, tr, te, y = diffusion_setup()
    traces = np.array([s.sum() for s in spectra])            # trace(exp(-βL)) = Σ exp(-βλ)
    # eigh vs scipy's Padé expm: both accurate to ~n eps ||βL|| (~1e-13 relative)
    np.testing.assert_allclose(traces, [np.trace(K) for K in kernels], rtol=1e-10)
    dense = SM1(C=2.0).fit([K[np.ix_(tr, tr)] for K in kernels], y[tr], traces)
    fact = SM1(C=2.0).fit_factors([np.sqrt(s) for s in spectra], y[tr], traces, basis=V[tr])
    per_kernel = SM1(C=2.0, form="per_kernel").fit_factors([np.sqrt(s) for s in spectra], y[tr],
                                                           traces, basis=V[tr])
    general = SM1(C=2.0).fit_factors([psd_factor(K[np.ix_(tr, tr)]) for K in kernels], y[tr],
                                     traces)
    # The same QCQP in three parametrisations, each solved by Clarabel (gap 1e-10, feasibility
    # 1e-8): values agree to ~1e-8 relative (rel 1e-6 is loose). The weights and α are
    # interior-point primal/dual iterates, accurate to ~sqrt(tol_feas) = 1e-4 in the worst
    # case (the central path near a degenerate optimum); decision values inherit that.
    for m in (fact, per_kernel, general):
        assert m.status_ == "optimal" and m.gap_tolerance_ in (1e-10, 1e-8)
        assert m.objective_ == pytest.approx(dense.objective_, rel=1e-6)
        np.testing.assert_allclose(m.weights_ * traces, dense.weights_ * traces, atol=1e-4)
        blocks = [K[np.ix_(te, tr)] for K in kernels]
        np.testing.assert_allclose(m.decision_function(blocks), dense.decision_function(blocks),
                                   atol=1e-4)


@pytest.mark.parametrize("form", ["elementwise", "per_kernel"])
def test_diagonal_form_value_is_the_min_over_weights_of_the_svm_dual(form):
    """Brute force for two diffusion kernels, as for dense kernels above: the
    elementwise rewrite of the cones must not change the problem."""
    V, spectra, kernels, tr, te, y = diffusion_setup(betas=(0.2, 3.0))
    traces = np.array([s.sum() for s in spectra])
    C = 1.0
    m = SM1(C=C, form=form).fit_factors([np.sqrt(s) for s in spectra], y[tr], traces, basis=V[tr])
    c = m.trace_
    blocks = [K[np.ix_(tr, tr)] for K in kernels]

    def om(nu):
        return omega(c * (nu * blocks[0] / traces[0] + (1 - nu) * blocks[1] / traces[1]), y[tr], C)

    grid = np.linspace(0.0, 1.0, 51)
    values = np.array([om(v) for v in grid])
    k = int(values.argmin())
    best = minimize_scalar(om, bounds=(grid[max(k - 1, 0)], grid[min(k + 1, 50)]),
                           method="bounded", options={"xatol": 1e-7})
    best_value = min(best.fun, values.min())
    # the bounds of the dense test: weak duality with both solvers' slack (rel 1e-7),
    # and equality with the minimum to rel 1e-6
    assert m.objective_ <= values.min() * (1 + 1e-7)
    assert m.objective_ == pytest.approx(best_value, rel=1e-6)
    # the learned weights attain it: ω at SM1's ν is the minimum to the same rel 1e-6
    assert om(m.kernel_multipliers_[0]) <= best_value * (1 + 1e-6)
    assert m.kernel_multipliers_.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(m.weights_, m.kernel_multipliers_ * c / traces, rtol=1e-12)


def test_a_stall_short_of_the_tight_gap_keeps_the_defaults_without_a_second_solve(monkeypatch):
    """An unreachable tight gap (1e-16, below float64 rounding of the objective)
    makes Clarabel stall; its reduced tolerances, set to its own defaults,
    hold, so the fit is kept (gap_tolerance_ 1e-8) after one solve."""
    import cvxpy as cp

    import biokernels.solvers.sm1 as sm1_module

    tight = dict(sm1_module._DEFAULT_OPTS["CLARABEL"], tol_gap_abs=1e-16, tol_gap_rel=1e-16)
    monkeypatch.setitem(sm1_module._DEFAULT_OPTS, "CLARABEL", tight)
    calls = []
    solve = cp.Problem.solve

    def counted(self, *args, **kwargs):
        calls.append(kwargs.get("tol_gap_abs"))
        return solve(self, *args, **kwargs)

    monkeypatch.setattr(cp.Problem, "solve", counted)
    V, spectra, kernels, tr, te, y = diffusion_setup()
    traces = np.array([s.sum() for s in spectra])
    m = SM1(C=2.0).fit_factors([np.sqrt(s) for s in spectra], y[tr], traces, basis=V[tr])
    assert calls == [1e-16] and m.form_ == "elementwise"
    assert m.status_ == "optimal" and m.gap_tolerance_ == 1e-8
    ref = SM1(C=2.0).fit_factors([np.sqrt(s) for s in spectra], y[tr], traces, basis=V[tr])
    # both meet at least Clarabel's default gap 1e-8: rel 1e-6 on the value is loose
    assert m.objective_ == pytest.approx(ref.objective_, rel=1e-6)


def test_a_failed_elementwise_solve_is_solved_again_with_per_kernel_cones(monkeypatch):
    """Where the elementwise form fails in both its scalings (here made
    infeasible on purpose: its rows demand f <= -1), the fit comes from the
    per-kernel cones and equals a per-kernel fit."""
    import biokernels.solvers.sm1 as sm1_module

    def infeasible(self, factors, r, c, base, tau, column_scale=True):
        import cvxpy as cp
        f = cp.Variable(len(factors))
        return [f <= -1], [f >= 0]

    V, spectra, kernels, tr, te, y = diffusion_setup()
    traces = np.array([s.sum() for s in spectra])
    args = ([np.sqrt(s) for s in spectra], y[tr], traces)
    ref = SM1(C=2.0, form="per_kernel").fit_factors(*args, basis=V[tr])
    monkeypatch.setattr(sm1_module.SM1, "_diagonal_constraints", infeasible)
    m = SM1(C=2.0).fit_factors(*args, basis=V[tr])
    assert m.form_ == "per_kernel" and ref.form_ == "per_kernel"
    assert m.status_ == "optimal"
    # the same problem, form and options solved twice: identical
    assert m.objective_ == ref.objective_
    np.testing.assert_array_equal(m.weights_, ref.weights_)


def test_an_accepted_fit_attains_its_reported_value():
    """A badly scaled problem (one trace-normalised kernel, C = 0.0047, τ ~ 1e-6):
    a stalled solve of the elementwise form once reported a value 5e-6 above
    what its α attains. The value α attains is the SVM criterion at the fit, so
    an "optimal" fit must attain its reported optimum (rel 1e-6), and agree
    with the per-kernel form and the dense blocks to the same bound."""
    rng = np.random.default_rng(507)
    n = int(rng.integers(20, 61))
    ntr = int(rng.integers(6, n))
    rng.integers(1, 7)
    beta = np.exp(rng.uniform(np.log(0.005), np.log(20), 1))[0]
    pe = rng.uniform(0.05, 0.5)
    r2 = np.random.default_rng(7)
    A = np.triu((r2.random((n, n)) < pe).astype(float), 1)
    A += A.T
    lam, V = np.linalg.eigh(np.diag(A.sum(1)) - A)
    train = np.sort(r2.choice(n, ntr, replace=False))
    y = np.where(r2.random(ntr) < 0.5, 1.0, -1.0)
    rng.random()
    s = np.exp(-beta * lam)
    s /= s.sum()
    C = (10.0 ** rng.uniform(-3, 3, 3))[0]
    fits = [SM1(C).fit_factors([np.sqrt(s)], y, [1.0], basis=V[train]),
            SM1(C, form="per_kernel").fit_factors([np.sqrt(s)], y, [1.0], basis=V[train]),
            SM1(C).fit([(V[train] * s) @ V[train].T], y, [1.0])]
    for m in fits:
        assert m.status_ == "optimal"
        w = V[train].T @ m.dual_coef_
        attained = 2 * m.alpha_.sum() - float(np.sum(s * w ** 2))
        assert m.objective_ == pytest.approx(attained, rel=1e-6, abs=1e-9)
        assert m.objective_ == pytest.approx(fits[1].objective_, rel=1e-6, abs=1e-9)


def test_psd_factor_reconstructs_and_truncates():
    rng = np.random.default_rng(2)
    B = rng.normal(size=(12, 4))
    K = B @ B.T
    F = psd_factor(K)
    assert F.shape == (12, 4)                              # numerical rank kept
    # eigh is backward stable: ||F F' - K|| <~ n eps ||K|| ~ 1e-13 (||K|| ~ 50)
    np.testing.assert_allclose(F @ F.T, K, atol=1e-10)
    with pytest.raises(ValueError, match="positive semi-definite"):
        psd_factor(K - 5 * np.eye(12))
    with pytest.raises(ValueError, match="symmetric"):
        psd_factor(K + np.triu(np.ones((12, 12)), 1))


def test_bad_inputs_raise(data):
    y, K, r = data["y"], data["K"][0], data["r"][0]
    block = K[np.ix_(TR, TR)]
    with pytest.raises(ValueError, match="FULL"):
        SM1().fit([block], y[TR], [0.5 * np.trace(block)])     # a train-block-only trace
    with pytest.raises(ValueError, match="-1 or \\+1"):
        SM1().fit([block], (y[TR] > 0).astype(float), [r])
    with pytest.raises(ValueError, match="both classes"):
        SM1().fit([block], np.ones(N_TRAIN), [r])
    with pytest.raises(ValueError, match="training block"):
        SM1().fit([block[:-1, :-1]], y[TR], [r])
    with pytest.raises(ValueError, match="one trace per kernel"):
        SM1().fit([block], y[TR], [r, r])
    with pytest.raises(ValueError, match="C"):
        SM1(C=0).fit([block], y[TR], [r])
    with pytest.raises(ValueError, match="form"):
        SM1(form="cones").fit([block], y[TR], [r])
    for bad in (1.0, -0.1, np.nan):          # 1 would drop every component: all kernels zero
        with pytest.raises(ValueError, match="rank_rtol"):
            SM1(rank_rtol=bad).fit([block], y[TR], [r])
    F = np.ones(N_TRAIN)
    with pytest.raises(ValueError, match="one row per label"):
        SM1().fit_factors([F], y[TR][:-1], [1e3], basis=np.eye(N_TRAIN))
    with pytest.raises(ValueError, match="NaN or infinite"):
        SM1().fit_factors([F], y[TR], [1e3], basis=np.full((N_TRAIN, N_TRAIN), np.nan))
    with pytest.raises(ValueError, match="m >= 1"):
        SM1().fit_factors([np.ones(0)], y[TR], [1e3], basis=np.ones((N_TRAIN, 0)))
    with pytest.raises(RuntimeError, match="status 'user_limit'"):    # stopped after 1 iteration
        SM1(solver_opts={"max_iter": 1}).fit([block], y[TR], [r])
    with pytest.raises(RuntimeError, match="fit"):
        SM1().decision_function([K[np.ix_(TE, TR)]])
    m = SM1().fit([block], y[TR], [r])
    with pytest.raises(ValueError, match="expected 1 kernel"):
        m.decision_function([K[np.ix_(TE, TR)]] * 2)
    with pytest.raises(ValueError, match="n_test"):
        m.decision_function([K[np.ix_(TE, TE)]])


def test_cost_model_and_budget():
    # Ligand-sized with the diffusion-kernel basis: 500 train, 753-column basis, 60 kernels.
    ok, reason = sm1_fits(500, 60, 753, basis_dim=753, diagonal=True)
    assert ok, reason
    # Dense factors of full rank on von Mering (2617 proteins, ~1300 train): far too big.
    ok, reason = sm1_fits(1300, 60, 1300, max_memory_bytes=8 * 2 ** 30, max_seconds=3600)
    assert not ok and "skipped" in reason and "GiB" in reason
    # One diffusion-basis fit on von Mering (~1300 train) is minutes; 76 tasks are not.
    ok, _ = sm1_fits(1300, 60, 2617, basis_dim=2617, diagonal=True, max_seconds=3600)
    assert ok
    ok, reason = sm1_fits(1300, 60, 2617, basis_dim=2617, diagonal=True, max_seconds=3600,
                          n_fits=76)
    assert not ok and "76 fits" in reason and "time over" in reason
    small = sm1_cost(100, 10, 50)
    big = sm1_cost(200, 10, 50)
    assert big["seconds"] > small["seconds"] and big["memory_bytes"] > small["memory_bytes"]
    assert small["nnz"] == 10 * 50 * 100
    with pytest.raises(ValueError):
        sm1_cost(100, 3, [10, 10])
    for bad in (dict(n_train=2.5), dict(n_kernels=-1), dict(n_train=np.nan), dict(rank=2.7)):
        with pytest.raises(ValueError, match="integer"):
            sm1_cost(**{"n_train": 100, "n_kernels": 3, "rank": 10, **bad})
    for bad in (dict(max_seconds=np.nan), dict(max_memory_bytes=-1.0), dict(n_fits=1.9)):
        with pytest.raises(ValueError):
            sm1_fits(100, 3, 10, **bad)
