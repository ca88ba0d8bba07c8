"""SM1: kernel weights by the 1-norm soft-margin SVM criterion, solved as a QCQP.

Lanckriet, Cristianini, Bartlett, El Ghaoui & Jordan, "Learning the kernel
matrix with semidefinite programming", JMLR 5:27-72 (2004), Section 4 (the
QCQP of the case with non-negative kernel weights; derived again below), and
Lanckriet, De Bie, Cristianini, Jordan & Noble, "A statistical framework for
genomic data fusion", Bioinformatics 20:2626-2635 (2004). Sun, Ji & Ye (BMC
Bioinformatics 2008, 9:162) call it SM1 and solve it with MOSEK; here it is a
second-order-cone program in cvxpy (Clarabel by default).

The problem. Given p kernels ``K_i`` on all n proteins (train + test), the
1-norm soft-margin criterion of a kernel ``K`` on the training proteins is

    ω(K) = max_{0 <= α <= C, α'y = 0}  2 α'e - α' G(K) α,   G(K)_jk = K_jk y_j y_k

(Sun et al. Eq. 5; it is twice the LIBSVM dual objective, with the same
maximiser α). SM1 minimises ω over ``K = Σ μ_i K_i`` with ``μ >= 0`` and the
transductive trace constraint ``trace(K) = Σ μ_i r_i = c``, where
``r_i = trace(K_i)`` is the trace of the FULL (train + test) kernel. By
minimax duality this equals the QCQP (Lanckriet et al. 2004)

    max_{α, t}  2 α'e - c t
    s.t.        t >= α' G(K_i[tr, tr]) α / r_i,   i = 1..p,
                α'y = 0,  0 <= α <= C.

With multipliers ``η_i >= 0`` of the quadratic constraints, stationarity in
``t`` gives ``Σ η_i = c`` and the Lagrangian is ``2 α'e - Σ (η_i / r_i) α'G(K_i)α``,
so the optimal weights are ``μ_i = η_i / r_i`` and ``Σ μ_i r_i = c``.

Implementation. ``α'G(K_i)α = ||F_i' (y∘α)||²`` for any factor
``K_i[tr, tr] = F_i F_i'``, so every quadratic constraint is a second-order
cone. Internally each kernel is rescaled to ``(c / r_i) K_i`` and ``τ = c t``,
so the cone multipliers are ``ν_i = η_i / c``: they sum to 1 (well scaled),
and ``μ_i = ν_i c / r_i``. Two input forms:

* :meth:`SM1.fit` takes the p dense training blocks and factors them
  (eigendecomposition, numerically-zero eigenvalues dropped);
* :meth:`SM1.fit_factors` takes factors, optionally with a basis ``U``
  shared by all kernels: ``K_i[tr, tr] = (U F_i)(U F_i)'``, with ``F_i`` a
  vector meaning ``diag(F_i)``. Diffusion kernels ``exp(β_i L) = V e^{β_i Λ} V'``
  share their eigenvectors, so ``U = V[train]`` and ``F_i = exp(β_i λ / 2)``:
  the cones become diagonal and the cost drops from ``O(p n_train r)`` data to
  ``O(n_train m + p m)`` (``m`` = basis size).

With diagonal factors the p quadratic constraints
``τ >= Σ_j S_ij w_j²`` (``w = U'(y∘α)``, ``S_ij = (c / r_i) F_ij² >= 0``)
are written elementwise by default: ``w_j² <= τ f_j`` (m rotated cones of
dimension 3) and ``S f <= 1`` (p linear rows, whose multipliers are
proportional to the ``ν_i``; see ``SM1._diagonal_constraints``). The same
feasible set, but the interior-point KKT system loses the dense block that
p cones of dimension m + 2 make: 3-4x less time per fit on the Ligand-size
network (``benchmarks/bench_sm1.py``). Where Clarabel stalls on it short of
its default tolerances, the fit falls back to the same without column
scales, then to the per-kernel cones.

:func:`sm1_cost` / :func:`sm1_fits` estimate memory and time beforehand so a
workflow can skip SM1 on a network that is too large, with a logged reason.
"""

from __future__ import annotations

import functools
import math
import time
import warnings
from collections.abc import Sequence

import numpy as np

__all__ = ["SM1", "psd_factor", "sm1_cost", "sm1_fits", "default_solver"]

# Clarabel's default duality-gap tolerance (1e-8) leaves α accurate to only ~1e-4
# on ill-conditioned kernels; 1e-10 costs 1-2 more iterations and gives ~1e-6.
# Where the interior-point method stalls short of 1e-10, Clarabel stops with
# "AlmostSolved" if its "reduced" tolerances hold; these are set to Clarabel's
# own defaults (gap 1e-8, feasibility 1e-8, k/t ratio 1e-6), so that such a stop
# meets exactly what a fresh solve at the defaults would, without a second solve.
_TIGHT_GAP = 1e-10
_DEFAULT_GAP = 1e-8
_DEFAULT_OPTS = {"CLARABEL": {"tol_gap_abs": _TIGHT_GAP, "tol_gap_rel": _TIGHT_GAP,
                              "reduced_tol_gap_abs": _DEFAULT_GAP, "reduced_tol_gap_rel": _DEFAULT_GAP,
                              "reduced_tol_feas": 1e-8, "reduced_tol_ktratio": 1e-6}}
_FALLBACK_OPTS = {"CLARABEL": {"tol_gap_abs": _DEFAULT_GAP, "tol_gap_rel": _DEFAULT_GAP}}  # defaults
# A solve is accepted only if the value its α attains, 2 Σα - max_i α'G(K_i)α / r_i · c,
# equals the reported optimum to rel 1e-6 (the unit tests' bound on values, two orders
# above the gaps; floor 1e-9 = 10x the absolute gap). Interior-point residuals of 1e-8
# can be large against τ on badly scaled problems (issue #20 review).
_VALUE_RTOL, _VALUE_ATOL = 1e-6, 1e-9


@functools.lru_cache(maxsize=1)
def _clarabel_kkt_opts() -> dict:
    """Clarabel's KKT factorization: faer's supernodal LDL (one thread) when
    this build of Clarabel has it, else its default (QDLDL). The shared basis
    makes a dense block, where faer was 1.3-1.6x faster on the Ligand-size
    network with the same weights to 1e-9 (issue #20); builds without the
    faer feature (some conda packages) reject the setting, so it is tried
    once on a 1-variable problem."""
    try:
        import clarabel
        import scipy.sparse as sp

        settings = clarabel.DefaultSettings()
        settings.verbose = False
        settings.direct_solve_method = "faer"
        settings.max_threads = 1
        clarabel.DefaultSolver(sp.csc_matrix((1, 1)), np.zeros(1), sp.csc_matrix(np.ones((1, 1))),
                               np.ones(1), [clarabel.NonnegativeConeT(1)], settings).solve()
    except Exception:       # noqa: BLE001 - any failure means: keep Clarabel's default
        return {}
    return {"direct_solve_method": "faer", "max_threads": 1}


def _solver_defaults(solver: str, table: dict) -> dict:
    """The options of ``table`` for ``solver``, with the KKT settings of
    :func:`_clarabel_kkt_opts` for Clarabel."""
    opts = dict(table.get(solver.upper(), {}))
    return {**opts, **_clarabel_kkt_opts()} if opts and solver.upper() == "CLARABEL" else opts


def default_solver() -> str:
    """Name of the cvxpy solver SM1 uses when none is given.

    The first installed of Clarabel, ECOS, SCS (all handle second-order cones;
    Clarabel and ECOS are interior-point methods with accurate duals, SCS is
    first-order and less accurate).

    Returns
    -------
    str
        A cvxpy solver name, e.g. ``"CLARABEL"``.

    Raises
    ------
    RuntimeError
        If none of them is installed.
    """
    import cvxpy as cp

    installed = set(cp.installed_solvers())
    for name in ("CLARABEL", "ECOS", "SCS"):
        if name in installed:
            return name
    raise RuntimeError(f"no second-order-cone solver installed (have {sorted(installed)}); "
                       "install clarabel")


def psd_factor(K, rtol: float = 1e-12) -> np.ndarray:
    """Factor a symmetric PSD matrix ``K ≈ F F'`` by its eigendecomposition.

    Eigen-components with eigenvalue ``<= rtol * λ_max`` are dropped, so ``F``
    has as few columns as the numerical rank of ``K``.

    Parameters
    ----------
    K : array, shape (n, n)
        Symmetric positive semi-definite (e.g. a kernel's training block).
    rtol : float
        Relative eigenvalue threshold, in [0, 1).

    Returns
    -------
    F : ndarray of float64, shape (n, r)
        ``F = V_r diag(sqrt(λ_r))``, ``r`` = number of kept eigenvalues
        (at least 1 unless ``K`` is zero, then ``r = 0``).

    Raises
    ------
    ValueError
        If ``K`` is not square, not finite, not symmetric (to 1e-8
        relative), or has an eigenvalue below ``-1e-8 * λ_max`` (not PSD).
    """
    K = np.asarray(K, dtype=np.float64)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"kernel: expected a square (n, n) matrix, got shape {K.shape}")
    if not np.all(np.isfinite(K)):
        raise ValueError("kernel: holds NaN or infinite entries")
    scale = max(np.abs(K).max(), np.finfo(float).tiny) if K.size else 1.0
    if np.abs(K - K.T).max(initial=0.0) > 1e-8 * scale:
        raise ValueError("kernel: not symmetric")
    w, V = np.linalg.eigh((K + K.T) / 2)
    top = w.max(initial=0.0)
    if w.size and w.min() < -1e-8 * max(top, scale):
        raise ValueError(f"kernel: not positive semi-definite (eigenvalue {w.min():.3g}, "
                         f"largest {top:.3g})")
    keep = w > rtol * top if top > 0 else np.zeros(w.size, dtype=bool)
    return V[:, keep] * np.sqrt(w[keep])


def _as_labels(y) -> np.ndarray:
    y = np.asarray(y, dtype=np.float64)
    if y.ndim != 1:
        raise ValueError(f"y: expected shape (n_train,), got {y.shape}")
    vals = set(np.unique(y).tolist())
    if not vals <= {-1.0, 1.0}:
        raise ValueError(f"y: labels must be -1 or +1, found {sorted(vals)}")
    if len(vals) < 2:
        raise ValueError("y: needs both classes (+1 and -1) among the training proteins")
    return y


def _as_traces(traces, p: int) -> np.ndarray:
    r = np.asarray(traces, dtype=np.float64)
    if r.shape != (p,):
        raise ValueError(f"traces: expected one trace per kernel, shape ({p},), got {r.shape}")
    if not np.all(np.isfinite(r)) or np.any(r <= 0):
        raise ValueError(f"traces: must be finite and > 0, got {r}")
    return r


class SM1:
    """Kernel combination by the 1-norm soft-margin SVM criterion (SM1).

    Learns non-negative weights ``μ`` of p kernels under the transductive
    trace constraint ``Σ μ_i trace(K_i) = c`` together with the SVM on the
    combined kernel, by solving Lanckriet et al.'s QCQP (JMLR 2004, Sec. 4;
    Sun, Ji & Ye 2008, "SM1") as a second-order-cone program in cvxpy. See
    the module docstring for the formulation and how ``μ`` is recovered.

    Parameters
    ----------
    C : float
        Soft-margin parameter, > 0 (the ``C`` of LIBSVM / scikit-learn's
        ``SVC``, in the kernel's units as scaled by the trace constraint).
    trace : float, optional
        The trace constraint ``c`` on the full combined kernel, > 0.
        Default: the mean of the given ``traces``. For trace-normalised
        kernels (Sun et al. Eq. 7, ``trace(K_i) = 1``) this is ``c = 1``,
        i.e. ``Σ μ_i = 1``, the convex-combination convention of Sun et al.
        Note that ``c`` scales the combined kernel and so trades off with ``C``.
    solver : str, optional
        cvxpy solver name; default :func:`default_solver` (Clarabel).
    rank_rtol : float
        Relative eigenvalue threshold below which components of a kernel's
        training block are dropped (see :func:`psd_factor`).
    solver_opts : dict, optional
        Extra keyword arguments for ``cvxpy.Problem.solve``; for Clarabel
        they update the defaults ``tol_gap_abs = tol_gap_rel = 1e-10``. When
        no options are given and Clarabel stalls short of 1e-10, the fit
        meets Clarabel's own defaults (1e-8) and ``gap_tolerance_`` says so;
        if not even those hold, the problem is solved again with the
        defaults.
    form : {"elementwise", "per_kernel"}
        How the p kernel constraints of diagonal factors with a shared
        basis (:meth:`fit_factors`) are written: ``"elementwise"`` (the
        default) as one 3-dimensional cone per basis column and p linear
        rows, ``"per_kernel"`` as one cone of dimension m + 2 per kernel
        (the reference form). The same problem: the optimal values agree to
        the solver's tolerance. Full factors always use per-kernel cones.
        Where an elementwise solve stalls short of Clarabel's default
        tolerances, it is tried without its column scales, then with
        per-kernel cones (``form_`` says which gave the fit).

    Attributes
    ----------
    weights_ : ndarray, shape (p,)
        Kernel weights ``μ >= 0``, ``Σ μ_i r_i = trace_``.
    alpha_ : ndarray, shape (n_train,)
        SVM dual variables, ``0 <= α <= C`` (LIBSVM's, for the combined kernel).
    dual_coef_ : ndarray, shape (n_train,)
        ``y ∘ α`` for all training proteins (scikit-learn's ``dual_coef_``
        holds the same numbers for the support vectors only).
    intercept_ : float
        Bias ``b`` of ``f(x) = Σ_j dual_coef_j K(x, x_j) + b``, from the
        multiplier of ``α'y = 0``.
    objective_ : float
        Optimal value ``min_μ ω(Σ μ_i K_i)`` of the QCQP.
    kernel_multipliers_ : ndarray, shape (p,)
        Normalised multipliers ``ν_i = μ_i r_i / c`` of the cone
        constraints (on the simplex).
    trace_ : float
        The ``c`` used.
    solver_ : str
    status_ : str
        ``"optimal"`` when the solver's tolerances hold (those of
        ``gap_tolerance_`` with the default options) and the value that
        ``alpha_`` attains, ``2 Σα - c max_i α'G(K_i)α / r_i``, equals the
        reported optimum to rel 1e-6 (floor 1e-9); else
        ``"optimal_inaccurate"``, with a RuntimeWarning.
    gap_tolerance_ : float or None
        The relative and absolute duality-gap tolerance met with the
        default options: 1e-10, or Clarabel's default 1e-8 where the
        interior-point method stalled short of 1e-10; None with
        ``solver_opts``, another solver, or an inaccurate solution.
    form_ : str
        The form that gave the solution: ``"elementwise"``;
        ``"elementwise_unscaled"`` (the same without column scales, tried
        where the first stalled short of Clarabel's default tolerances);
        ``"per_kernel"`` (full factors, ``form="per_kernel"``, or where both
        elementwise solves stalled).
    solve_time_ : float
        Wall time of building and solving the problem, seconds.
    n_iter_ : int or None
        Solver iterations.
    """

    def __init__(self, C: float = 1.0, trace: float | None = None, solver: str | None = None,
                 rank_rtol: float = 1e-12, solver_opts: dict | None = None,
                 form: str = "elementwise"):
        self.C = C
        self.form = form
        self.trace = trace
        self.solver = solver
        self.rank_rtol = rank_rtol
        self.solver_opts = solver_opts

    # ------------------------------------------------------------------ fit
    def fit(self, kernels: Sequence, y, traces) -> "SM1":
        """Fit on the training blocks of p kernels.

        Parameters
        ----------
        kernels : sequence of p arrays, each shape (n_train, n_train)
            ``K_i[train, train]``, symmetric PSD, rows/columns in the order
            of ``y``.
        y : array, shape (n_train,)
            Labels in {-1, +1}, both present.
        traces : array, shape (p,)
            ``trace(K_i)`` of the FULL (train + test) kernels, > 0: the
            transductive trace constraint (Lanckriet et al. 2004).

        Returns
        -------
        self

        Raises
        ------
        ValueError
            If there are no kernels, shapes disagree with ``y``, a kernel is
            not symmetric PSD, labels are not ±1 with both classes, a trace
            is not positive or is smaller than its training block's trace
            (so not the full kernel's), or ``C``/``trace`` are not positive.
        RuntimeError
            If the solver fails (status other than optimal / optimal_inaccurate).
        """
        kernels = list(kernels)
        if not kernels:
            raise ValueError("kernels: need at least one kernel")
        y = _as_labels(y)
        for i, K in enumerate(kernels):
            shape = np.shape(K)
            if shape != (y.size, y.size):
                raise ValueError(f"kernels[{i}]: expected the training block, shape "
                                 f"({y.size}, {y.size}) for {y.size} labels, got {shape}")
        factors = [psd_factor(K, self.rank_rtol) for K in kernels]
        return self.fit_factors(factors, y, traces)

    def fit_factors(self, factors: Sequence, y, traces, basis=None) -> "SM1":
        """Fit from factors of the kernels' training blocks.

        ``K_i[train, train] = (U F_i)(U F_i)'`` with ``U = basis`` (identity
        when omitted). A 1-D ``F_i`` means ``diag(F_i)``, e.g. for diffusion
        kernels ``U = V[train]`` (eigenvectors of the Laplacian, rows of the
        training proteins) and ``F_i = exp(β_i λ / 2)``.

        Parameters
        ----------
        factors : sequence of p arrays
            Each shape (m, r_i), or (m,) for a diagonal factor; ``m`` is
            ``n_train`` without a basis, else the basis' column count.
        y : array, shape (n_train,)
            Labels in {-1, +1}, both present.
        traces : array, shape (p,)
            ``trace(K_i)`` of the FULL (train + test) kernels, > 0.
        basis : array, shape (n_train, m), optional
            Shared left factor ``U``.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            As :meth:`fit`, for factors whose shapes do not match ``y`` and
            ``basis``, or non-finite entries.
        RuntimeError
            If the solver fails (an error, or a status other than optimal /
            optimal_inaccurate) in every form it tries.
        """
        import cvxpy as cp

        t_start = time.perf_counter()
        y = _as_labels(y)
        n = y.size
        factors = [np.asarray(F, dtype=np.float64) for F in factors]
        p = len(factors)
        if p == 0:
            raise ValueError("factors: need at least one kernel factor")
        r = _as_traces(traces, p)
        if self.form not in ("elementwise", "per_kernel"):
            raise ValueError(f"form: expected 'elementwise' or 'per_kernel', got {self.form!r}")
        C = float(self.C)
        if not np.isfinite(C) or C <= 0:
            raise ValueError(f"C: expected a finite number > 0, got {self.C}")
        c = float(np.mean(r)) if self.trace is None else float(self.trace)
        if not np.isfinite(c) or c <= 0:
            raise ValueError(f"trace: expected a finite number > 0, got {self.trace}")
        rtol = float(self.rank_rtol)
        if not 0.0 <= rtol < 1.0:
            raise ValueError(f"rank_rtol: expected a number in [0, 1), got {self.rank_rtol}")
        U = None if basis is None else np.asarray(basis, dtype=np.float64)
        if U is not None and (U.ndim != 2 or U.shape[0] != n or U.shape[1] < 1):
            raise ValueError(f"basis: expected shape (n_train, m) with one row per label ({n} "
                             f"labels) and m >= 1 columns, got shape {U.shape}")
        if U is not None and not np.all(np.isfinite(U)):
            raise ValueError("basis: holds NaN or infinite entries")
        m = n if U is None else U.shape[1]
        col_sq = np.ones(m) if U is None else np.sum(U ** 2, axis=0)   # ||U e_j||²
        for i, F in enumerate(factors):
            if F.ndim not in (1, 2) or F.shape[0] != m:
                raise ValueError(f"factors[{i}]: expected shape ({m}, r) or ({m},), got {F.shape}")
            if not np.all(np.isfinite(F)):
                raise ValueError(f"factors[{i}]: holds NaN or infinite entries")
            block_trace = (float(np.sum(col_sq * F ** 2)) if F.ndim == 1 else
                           float(np.sum(F ** 2)) if U is None else float(np.sum((U @ F) ** 2)))
            if block_trace > r[i] * (1 + 1e-8):
                raise ValueError(f"traces[{i}] = {r[i]:.6g} is smaller than the trace of the "
                                 f"training block ({block_trace:.6g}); pass trace(K_i) of the FULL "
                                 "(train + test) kernel")

        form = ("elementwise" if self.form == "elementwise" and all(F.ndim == 1 for F in factors)
                else "per_kernel")
        solver = self.solver or default_solver()
        tight = _solver_defaults(solver, _DEFAULT_OPTS)
        if self.solver_opts or not tight:           # the user's options, or another solver
            plan = [(form, {**tight, **(self.solver_opts or {})}, None)]
        else:
            # The tight gap (reduced tolerances = Clarabel's defaults); where the
            # elementwise form stalls short of those (rounding near a degenerate optimum),
            # its unscaled variant, then the per-kernel cones; last, the per-kernel cones
            # at Clarabel's defaults, whose own "AlmostSolved" (reduced tolerances 5e-5)
            # is reported as inaccurate.
            plan = [(form, tight, _TIGHT_GAP)]
            if form == "elementwise":
                plan += [("elementwise_unscaled", tight, _TIGHT_GAP), ("per_kernel", tight, _TIGHT_GAP)]
            plan.append(("per_kernel", _solver_defaults(solver, _FALLBACK_OPTS), _DEFAULT_GAP))
        for k, (form, opts, gap) in enumerate(plan):
            last = k == len(plan) - 1
            prob, alpha, eq, kernel_cons = self._problem(form, factors, y, U, r, c, C)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)      # cvxpy's "may be inaccurate"
                try:
                    prob.solve(solver=solver, **opts)
                except cp.error.SolverError as err:
                    if last:
                        raise RuntimeError(f"SM1: solver {solver} failed ({err})") from err
                    continue
            if prob.status not in ("optimal", "optimal_inaccurate"):
                if last:
                    raise RuntimeError(f"SM1: solver {solver} returned status {prob.status!r}")
                continue
            attained = self._attained(factors, y, U, r, c, C, alpha.value)
            consistent = abs(prob.value - attained) <= _VALUE_RTOL * abs(prob.value) + _VALUE_ATOL
            accepted = consistent and (prob.status == "optimal" or gap == _TIGHT_GAP)
            if accepted:
                if prob.status != "optimal":
                    gap = _DEFAULT_GAP      # stalled, with the reduced tolerances (the defaults) met
                break
        gap = gap if accepted else None
        status = "optimal" if accepted else "optimal_inaccurate"
        if status == "optimal_inaccurate":
            warnings.warn(f"SM1: solver {solver} reports an inaccurate solution (status "
                          f"{prob.status!r}; optimal value {prob.value:.10g}, value attained by "
                          f"its alpha {attained:.10g})", RuntimeWarning, stacklevel=2)

        nu = np.concatenate([np.asarray(k.dual_value, dtype=np.float64).ravel()
                             for k in kernel_cons])
        nu = np.clip(nu, 0.0, None)
        total = nu.sum()
        nu = nu / total if total > 0 else np.full(p, 1.0 / p)
        a = np.clip(np.asarray(alpha.value, dtype=np.float64), 0.0, C)
        self.kernel_multipliers_ = nu
        self.weights_ = nu * c / r
        self.alpha_ = a
        self.dual_coef_ = y * a
        # Multiplier ν_eq of α'y = 0 (cvxpy's sign convention for this maximisation):
        # stationarity 2 - 2 y_j f_j + ν_eq y_j = 0 on margin vectors gives b = ν_eq / 2.
        self.intercept_ = float(np.asarray(eq.dual_value).ravel()[0]) / 2.0
        self.objective_ = float(prob.value)
        self.trace_ = c
        self.traces_ = r
        self.solver_ = solver
        self.status_ = status
        self.gap_tolerance_ = gap
        self.form_ = form
        self.n_iter_ = getattr(prob.solver_stats, "num_iters", None)
        self.solve_time_ = time.perf_counter() - t_start
        return self

    @staticmethod
    def _attained(factors, y, U, r, c, C, alpha) -> float:
        """The QCQP's objective at ``α`` (clipped to ``[0, C]``):
        ``2 Σ α - c max_i ||F_i' U'(y∘α)||² / r_i``, the SVM criterion the
        returned solution attains, independent of the solver's ``τ``."""
        a = np.clip(np.asarray(alpha, dtype=np.float64), 0.0, C)
        base = y * a if U is None else U.T @ (y * a)
        q = [float(np.sum((F * base) ** 2)) if F.ndim == 1 else float(np.sum((F.T @ base) ** 2))
             for F in factors]
        return float(2 * a.sum() - c * max(qi / ri for qi, ri in zip(q, r)))

    def _problem(self, form, factors, y, U, r, c, C):
        """The cvxpy problem of :meth:`fit_factors` in ``form``, each kernel
        rescaled to ``(c / r_i) K_i`` so the multipliers sum to 1. Returns
        ``(problem, alpha, the equality α'y = 0, the p kernel constraints)``."""
        import cvxpy as cp

        n, m = y.size, (y.size if U is None else U.shape[1])
        alpha = cp.Variable(n, name="alpha")
        tau = cp.Variable(name="tau")
        z = cp.multiply(y, alpha)
        cons = []
        if U is not None:
            w = cp.Variable(m, name="w")
            cons.append(w == U.T @ z)
        base = z if U is None else w
        if form.startswith("elementwise"):
            kernel_cons, cones = self._diagonal_constraints(factors, r, c, base, tau,
                                                            column_scale=form == "elementwise")
            cons += cones
        else:
            kernel_cons = []
            for i, F in enumerate(factors):
                scale = math.sqrt(c / r[i])
                if F.ndim == 1:                   # a diagonal factor, as one cone
                    keep = np.flatnonzero(F ** 2 > self.rank_rtol * np.max(F ** 2, initial=0.0))
                    expr = cp.multiply(scale * F[keep], base[keep]) if keep.size else None
                else:
                    expr = (scale * F).T @ base if F.shape[1] else None
                kernel_cons.append(tau >= 0 if expr is None else cp.sum_squares(expr) <= tau)
        eq = y @ alpha == 0
        prob = cp.Problem(cp.Maximize(2 * cp.sum(alpha) - tau),
                          cons + kernel_cons + [eq, alpha >= 0, alpha <= C])
        return prob, alpha, eq, kernel_cons

    def _diagonal_constraints(self, factors, r, c, base, tau, column_scale=True):
        """The p kernel constraints ``τ >= Σ_j S_ij base_j²``,
        ``S_ij = (c / r_i) F_ij² >= 0``, for diagonal factors, in the
        elementwise form: with column scales ``t_j = max_i S_ij`` (1 when not
        ``column_scale``) and ``x_j = sqrt(t_j) base_j``,

            x_j² <= τ f_j   (m rotated cones of dimension 3, homogeneous),
            Σ_j (S_ij / t_j) f_j <= 1   (p linear rows).

        The same feasible ``(α, τ)`` as ``τ >= Σ_j S_ij base_j²``: given those
        rows and cones, ``Σ_j S_ij base_j² <= τ Σ_j (S_ij / t_j) f_j <= τ``;
        conversely ``f_j = x_j² / τ`` is feasible (``S >= 0``). Row i is
        constraint i divided by ``τ``, so its multiplier is ``τ ν_i``:
        normalised to sum 1 they are the ``ν``. The interior-point KKT system
        then has no dense block of the p cones of dimension m + 2 (3-4x less
        time per fit on the Ligand-size network, issue #20). No constants
        enter the cones: the form ``f_j >= x_j²`` (cvxpy's square, a cone
        with the constant 1) stalled short of 1e-8 on 2 of 4 tasks where
        this one solved all 4. Components with ``F_ij² <= rank_rtol max_j
        F_ij²`` are dropped, as in the cone form.

        Returns ``(rows, cones)``: a list holding the one vector constraint of
        the p rows (its dual value is proportional to ``ν``), and the list of
        the cones."""
        import cvxpy as cp

        S = np.vstack([(c / r[i]) * F ** 2 for i, F in enumerate(factors)])     # (p, m)
        top = S.max(axis=1, keepdims=True)
        S = np.where(S > self.rank_rtol * top, S, 0.0)
        used = np.flatnonzero(S.max(axis=0) > 0)
        if used.size == 0:
            return [tau >= np.zeros(len(factors))], []
        top = S[:, used].max(axis=0) if column_scale else np.ones(used.size)   # S / top in [0, 1]
        x = cp.multiply(np.sqrt(top), base[used])
        f = cp.Variable(used.size, name="f")
        cone = cp.SOC(tau + f, cp.vstack([2 * x, tau - f]), axis=0)     # x_j² <= τ f_j
        return [(S[:, used] / top) @ f <= 1], [cone]

    # -------------------------------------------------------------- predict
    def _check_fitted(self):
        if not hasattr(self, "weights_"):
            raise RuntimeError("SM1: call fit or fit_factors first")

    def combine(self, kernels: Sequence) -> np.ndarray:
        """The learned kernel ``Σ μ_i K_i`` of any p blocks.

        Parameters
        ----------
        kernels : sequence of p arrays, all of one shape (a, b)
            Blocks of the p kernels, e.g. ``K_i[test, train]``.

        Returns
        -------
        ndarray, shape (a, b)

        Raises
        ------
        ValueError
            If the number of kernels is not p or their shapes differ.
        RuntimeError
            If not fitted.
        """
        self._check_fitted()
        kernels = list(kernels)
        if len(kernels) != self.weights_.size:
            raise ValueError(f"kernels: expected {self.weights_.size} kernel blocks, "
                             f"got {len(kernels)}")
        shapes = {np.shape(K) for K in kernels}
        if len(shapes) != 1:
            raise ValueError(f"kernels: blocks of differing shapes {sorted(shapes)}")
        out = np.zeros(next(iter(shapes)))
        for mu, K in zip(self.weights_, kernels):
            if mu > 0:
                out += mu * np.asarray(K, dtype=np.float64)
        return out

    def decision_function(self, kernels: Sequence) -> np.ndarray:
        """SVM decision values ``f(x) = Σ_j dual_coef_j K(x, x_j) + b``.

        Parameters
        ----------
        kernels : sequence of p arrays, each shape (n_test, n_train)
            ``K_i[test, train]``, columns in the training order of ``fit``.

        Returns
        -------
        ndarray, shape (n_test,)
            Signed distances (unnormalised); higher = more likely +1.

        Raises
        ------
        ValueError
            If the count or shapes of the blocks are wrong.
        RuntimeError
            If not fitted.
        """
        K = self.combine(kernels)
        if K.ndim != 2 or K.shape[1] != self.dual_coef_.size:
            raise ValueError(f"kernels: expected blocks of shape (n_test, {self.dual_coef_.size}), "
                             f"got {K.shape}")
        return K @ self.dual_coef_ + self.intercept_

    def predict(self, kernels: Sequence) -> np.ndarray:
        """Predicted labels ``sign(f(x))`` in {-1, +1} (ties to +1).

        Parameters
        ----------
        kernels : sequence of p arrays, each shape (n_test, n_train)

        Returns
        -------
        ndarray of float64, shape (n_test,)
        """
        return np.where(self.decision_function(kernels) >= 0, 1.0, -1.0)


# --------------------------------------------------------------------------- #
# Cost model
# --------------------------------------------------------------------------- #
# Calibrated on this project's 2-core machine with cvxpy 1.9 + Clarabel 0.11:
# interior-point iterations (19-29 measured), effective sparse-LDL rate, bytes of peak
# memory per non-zero of the conic data (cvxpy canonicalisation + Clarabel),
# and the interpreter's baseline.
_ITERATIONS = 30
_FLOPS_PER_SECOND = 3e8
_BYTES_PER_NNZ = 250
_BASE_BYTES = 200 * 2 ** 20
# The elementwise form of diagonal factors with a basis (the diffusion kernels'
# default): its KKT system factors as one dense front of the basis and the
# training examples, (m + n_train)³ / 3 flops per iteration. Measured on this
# machine (faer, 1 thread; planted networks of the default generator, 60 kernels):
# 17-20 iterations and 1.6-1.9 s per fit at m = 753, n_train = 502; 22 and 11.7 s at
# 1500 / 1000; 26 and 521 s at the von Mering size 2617 / 1745, where the front
# (152 MB) leaves the caches. 20 iterations at 1.5e9 flop/s is within 0.7-5x of
# those (an over-estimate at the small sizes).
_ITERATIONS_ELEMENTWISE = 20
_FLOPS_PER_SECOND_ELEMENTWISE = 1.5e9


def _is_count(value, least: int) -> bool:
    """Whether ``value`` is an integer (a whole float too) >= ``least``."""
    if isinstance(value, (bool, np.bool_)):
        return False
    if isinstance(value, (int, np.integer)):
        return value >= least
    return (isinstance(value, (float, np.floating)) and math.isfinite(value)
            and float(value).is_integer() and value >= least)


def sm1_cost(n_train: int, n_kernels: int, rank, basis_dim: int | None = None,
             diagonal: bool = False) -> dict:
    """Rough memory and time of one SM1 fit (before building it).

    Model (interior-point method on the cone program of :class:`SM1`):

    * conic data non-zeros: ``Σ_i n_train r_i`` without a basis; with a
      basis of ``m`` columns ``n_train m + Σ_i (r_i if diagonal else m r_i)``;
    * per-iteration factorisation work: each cone row couples to all the
      variables it reads, so ``Σ_i r_i n_train²`` flops without a basis,
      ``m n_train² + Σ_i r_i m²`` with one and full factors, plus
      ``n_train³ / 3`` for the dense α block; time = 30 iterations at 3e8
      flop/s, memory = 200 MiB + 250 bytes per non-zero + the dense α block:
      constants measured with cvxpy 1.9 and Clarabel 0.11 on 2 CPU cores
      (within a factor ~2);
    * diagonal factors with a basis (:class:`SM1`'s default elementwise
      form): one dense front of ``m + n_train``, ``(m + n_train)³ / 3``
      flops per iteration, 20 iterations at 1.5e9 flop/s (measured with
      Clarabel 0.11 and faer on this project's machine: within 0.7-5x from
      the Ligand to the von Mering size; see the constants' comment), memory
      as above with the dense front.

    Parameters
    ----------
    n_train : int
        Number of training proteins.
    n_kernels : int
        Number of kernels p.
    rank : int or sequence of int
        Columns ``r_i`` of each factor (the numerical rank of the training
        block, <= n_train, or the kept spectrum size with a diagonal factor).
    basis_dim : int, optional
        Columns ``m`` of a shared basis (``SM1.fit_factors(basis=...)``).
    diagonal : bool
        Whether the factors are diagonal (with a basis).

    Returns
    -------
    dict
        ``nnz`` (int), ``flops_per_iteration`` (float), ``memory_bytes``
        (int), ``seconds`` (float, estimated wall time).

    Raises
    ------
    ValueError
        If a size is not an integer >= 1, a rank not an integer >= 0, or
        ``rank`` has the wrong length.
    """
    for name, value in (("n_train", n_train), ("n_kernels", n_kernels), ("basis_dim", basis_dim)):
        if value is not None and not _is_count(value, 1):
            raise ValueError(f"sm1_cost: {name} must be an integer >= 1, got {value!r}")
    r_in = np.asarray(rank)
    if r_in.ndim > 1 or not all(_is_count(v, 0) for v in r_in.ravel().tolist()):
        raise ValueError(f"sm1_cost: rank must be an integer >= 0 or one per kernel, got {rank!r}")
    ranks = np.broadcast_to(r_in.astype(np.int64), (int(n_kernels),)) \
        if r_in.ndim == 0 else r_in.astype(np.int64)
    if ranks.size != n_kernels:
        raise ValueError(f"sm1_cost: need n_train, n_kernels >= 1 and {n_kernels} ranks >= 0; got "
                         f"n_train={n_train}, n_kernels={n_kernels}, rank={rank}")
    n = float(n_train)
    if basis_dim is None:
        if diagonal:
            raise ValueError("sm1_cost: diagonal factors need a basis (basis_dim)")
        nnz = float(np.sum(ranks)) * n
        flops = float(np.sum(ranks)) * n * n
    else:
        m = float(basis_dim)
        if m < 1:
            raise ValueError(f"sm1_cost: basis_dim must be >= 1, got {basis_dim}")
        nnz = n * m + (float(np.sum(ranks)) if diagonal else m * float(np.sum(ranks)))
        if diagonal:
            nnz += 6.0 * m + n_kernels * m        # m 3-dim cones and the p linear rows
            flops = (m + n) ** 3 / 3.0
            memory = _BASE_BYTES + _BYTES_PER_NNZ * nnz + 8.0 * (m + n) ** 2
            return {"nnz": int(nnz), "flops_per_iteration": flops, "memory_bytes": int(memory),
                    "seconds": _ITERATIONS_ELEMENTWISE * flops / _FLOPS_PER_SECOND_ELEMENTWISE}
        flops = m * n * n + float(np.sum(ranks)) * m * m
    flops += n ** 3 / 3.0
    memory = _BASE_BYTES + _BYTES_PER_NNZ * nnz + 8.0 * n * n
    return {"nnz": int(nnz), "flops_per_iteration": flops, "memory_bytes": int(memory),
            "seconds": _ITERATIONS * flops / _FLOPS_PER_SECOND}


def sm1_fits(n_train: int, n_kernels: int, rank, basis_dim: int | None = None,
             diagonal: bool = False, max_memory_bytes: float = 4 * 2 ** 30,
             max_seconds: float = 600.0, n_fits: int = 1) -> tuple[bool, str]:
    """Whether SM1 fits are expected to fit a memory and time budget.

    Parameters
    ----------
    n_train, n_kernels, rank, basis_dim, diagonal
        As :func:`sm1_cost`.
    max_memory_bytes : float
        Memory budget of one fit, bytes (default 4 GiB).
    max_seconds : float
        Time budget of all ``n_fits`` fits together, seconds (default 600).
    n_fits : int
        Number of fits of this size (SM1 is single-task: one per task and
        split), >= 1.

    Returns
    -------
    (ok, reason) : tuple of bool and str
        ``reason`` states the estimate and the budget, fit for a log line.

    Raises
    ------
    ValueError
        As :func:`sm1_cost`, or ``n_fits`` not an integer >= 1, or a budget
        not a finite number > 0.
    """
    if not _is_count(n_fits, 1):
        raise ValueError(f"n_fits: expected an integer >= 1, got {n_fits!r}")
    for name, value in (("max_memory_bytes", max_memory_bytes), ("max_seconds", max_seconds)):
        if not (isinstance(value, (int, float, np.integer, np.floating)) and math.isfinite(value)
                and value > 0):
            raise ValueError(f"sm1_fits: {name} must be a finite number > 0, got {value!r}")
    est = sm1_cost(n_train, n_kernels, rank, basis_dim=basis_dim, diagonal=diagonal)
    total = est["seconds"] * int(n_fits)
    desc = (f"SM1 estimate for n_train={n_train}, p={n_kernels}: {est['nnz']:,} conic non-zeros, "
            f"~{est['memory_bytes'] / 2 ** 30:.2f} GiB, ~{est['seconds']:.0f} s per fit"
            + (f", ~{total:.0f} s for {int(n_fits)} fits" if int(n_fits) > 1 else ""))
    problems = []
    if est["memory_bytes"] > max_memory_bytes:
        problems.append(f"memory over the {max_memory_bytes / 2 ** 30:.2f} GiB budget")
    if total > max_seconds:
        problems.append(f"time over the {max_seconds:.0f} s budget")
    if problems:
        return False, f"{desc}: skipped ({'; '.join(problems)})"
    budget = f"{max_memory_bytes / 2 ** 30:.2f} GiB, {max_seconds:.0f} s"
    return True, f"{desc}: within budget ({budget})"
