"""The SM1 estimator: kernel weights by the 1-norm soft-margin SVM criterion
(Lanckriet et al. 2004; Sun, Ji & Ye 2008 "SM1"), fitted from dense training
blocks (:meth:`SM1.fit`) or factors with a shared basis
(:meth:`SM1.fit_factors`), solved in cvxpy (:mod:`biokernels.solvers.sm1.forms`)
with a plan of fallback forms and options, and used to combine kernels and
score test proteins.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Sequence

import numpy as np

from biokernels.solvers.sm1.forms import QCQPForms
from biokernels.solvers.sm1.inputs import _as_labels, _as_traces, psd_factor
from biokernels.solvers.sm1.options import (_DEFAULT_GAP, _DEFAULT_OPTS, _FALLBACK_OPTS, _TIGHT_GAP, _VALUE_ATOL,
                                            _VALUE_RTOL, _solver_defaults, default_solver)

__all__ = ["SM1"]


class SM1(QCQPForms):
    """Kernel combination by the 1-norm soft-margin SVM criterion (SM1).

    Learns non-negative weights ``μ`` of p kernels under the transductive
    trace constraint ``Σ μ_i trace(K_i) = c`` together with the SVM on the
    combined kernel, by solving Lanckriet et al.'s QCQP (JMLR 2004, Sec. 4;
    Sun, Ji & Ye 2008, "SM1") as a second-order-cone program in cvxpy. See
    :mod:`biokernels.solvers.sm1.forms` for the formulation and how ``μ`` is recovered.

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
