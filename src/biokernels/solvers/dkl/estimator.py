"""The DKL estimator: kernel weights for one formulation, by either solver.

:class:`DiffusionKernelLearning` checks the spectra and targets, builds the
objective of the chosen formulation (one problem for all tasks, or one per
task) and solves it by the projected Newton method (``"fast"``, the default)
or SLSQP (the paper's method), recording objective, iterations, convergence
and the KKT residual. Solver choice and tolerances: ``docs/diffusion_notes.md``.
"""

from __future__ import annotations

import numpy as np
from threadpoolctl import threadpool_limits

from biokernels.solvers.checks import check_lam
from biokernels.solvers.dkl.formulations import FORMULATIONS, Formulation
from biokernels.solvers.dkl.newton import _fast
from biokernels.solvers.dkl.objective import _as_B, _as_S, _kkt_from_grad, _Objective, target_energy
from biokernels.solvers.dkl.slsqp import _initial_point, _slsqp

__all__ = ["DiffusionKernelLearning"]


class DiffusionKernelLearning:
    """Learn diffusion-kernel weights by the KL criterion (Sun, Ji & Ye 2008).

    Parameters
    ----------
    formulation : {"DKL", "DKLKL", "DKLKLu", "mDKL", "mDKLKL", "mDKLKLu"}
        Table 1 of the paper (see :data:`FORMULATIONS` and
        ``docs/diffusion_notes.md``): DKL = Eq. 26, DKLKL = Theorem 1, DKLKLu = Theorem 1
        without constraints; the ``m`` versions are the multi-task ones
        (Eq. 34, Theorem 2, Theorem 2 without constraints).
    lam : float
        Ridge ``lam > 0`` of ``K_x = sum_i alpha_i K~_i + lam I`` (Eq. 11);
        paper: 1e-6.
    solver : {"auto", "slsqp", "fast"}
        See ``docs/diffusion_notes.md``. ``"auto"`` is ``"fast"``; ``"slsqp"`` is the
        paper's method (SQP, like MATLAB's fmincon).
    tol : float
        Relative tolerance (> 0). SLSQP: its ``ftol`` on the objective
        divided by its starting value. ``"fast"``: stop when
        :func:`kkt_residual` <= tol.
    max_iter : int
        Iteration limit (per task for the single-task formulations).
    unconstrained : {"nonneg", "free"}
        Meaning of "without constraints" for DKLKLu/mDKLKLu (ignored by the
        others): ``"nonneg"`` drops ``sum(alpha) = 1`` and keeps
        ``alpha >= 0``; ``"free"`` drops both and keeps only the domain
        ``g > 0`` (see ``docs/diffusion_notes.md`` for why ``"nonneg"`` is
        the default).

    Attributes
    ----------
    weights_ : numpy.ndarray
        Shape (p,) for multi-task formulations, (t, p) for single-task ones
        (row k for task column k of ``B``). On the simplex for DKL, DKLKL,
        mDKL, mDKLKL.
    objective_ : float or numpy.ndarray of shape (t,)
        Objective value(s) at ``weights_`` (Theorem 1/2, Eq. 26/34).
    n_iter_ : int or numpy.ndarray of shape (t,)
        Iterations of the solver (SLSQP major iterations / outer Newton
        iterations).
    converged_ : bool or numpy.ndarray of shape (t,)
        See ``docs/diffusion_notes.md`` (Solvers).
    kkt_residual_ : float or numpy.ndarray of shape (t,)
        :func:`kkt_residual` at the solution.
    constraints_ : {"simplex", "nonneg", "none"}
        The feasible set that was used.
    solver_ : str
        The solver actually used.
    n_tasks_ : int
    formulation_ : Formulation

    Examples
    --------
    >>> d, P = laplacian_eigh(laplacian(adjacency))               # doctest: +SKIP
    >>> S = diffusion_spectra(d, diffusion_betas())               # doctest: +SKIP
    >>> est = DiffusionKernelLearning("mDKL").fit(S, P.T @ A)     # doctest: +SKIP
    >>> s = combined_spectrum(S, est.weights_)  # K = P diag(s) P^T  # doctest: +SKIP
    """

    def __init__(self, formulation: str = "mDKL", lam: float = 1e-6, solver: str = "auto",
                 tol: float = 1e-10, max_iter: int = 500, unconstrained: str = "nonneg"):
        self.formulation = formulation
        self.lam = lam
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.unconstrained = unconstrained

    def _resolve(self) -> tuple[Formulation, str, str]:
        if self.formulation not in FORMULATIONS:
            raise ValueError(f"unknown formulation {self.formulation!r}; "
                             f"choose one of {sorted(FORMULATIONS)}")
        form = FORMULATIONS[self.formulation]
        if self.solver not in ("auto", "slsqp", "fast"):
            raise ValueError(f"solver must be 'auto', 'slsqp' or 'fast', got {self.solver!r}")
        if self.unconstrained not in ("nonneg", "free"):
            raise ValueError(f"unconstrained must be 'nonneg' or 'free', got {self.unconstrained!r}")
        solver = "fast" if self.solver == "auto" else self.solver
        if not (isinstance(self.tol, (int, float)) and self.tol > 0):
            raise ValueError(f"tol must be a number > 0, got {self.tol!r}")
        if int(self.max_iter) != self.max_iter or self.max_iter < 1:
            raise ValueError(f"max_iter must be a positive integer, got {self.max_iter!r}")
        if form.constrained:
            constraints = "simplex"
        else:
            constraints = "nonneg" if self.unconstrained == "nonneg" else "none"
        return form, solver, constraints

    def _solve_one(self, obj: _Objective, form: Formulation, solver: str, constraints: str):
        alpha0 = _initial_point(obj, constraints)
        if constraints == "none" and np.any(obj.c <= 1e-300):
            raise ValueError(f"{form.name} with unconstrained='free': a target has zero energy "
                             "on some eigenvector (c_j = 0); the objective is then unbounded "
                             "below (see the module docstring)")
        if solver == "slsqp":
            alpha, f, nit, ok = _slsqp(obj, alpha0, constraints, self.tol, int(self.max_iter))
        else:
            alpha, f, nit, ok = _fast(obj, alpha0, constraints, self.tol, int(self.max_iter))
        _, G = obj.value_grad(alpha)
        kkt = _kkt_from_grad(alpha, f, G, constraints)
        return alpha, f, nit, ok, kkt

    def fit(self, S, B) -> "DiffusionKernelLearning":
        """Solve the formulation for the spectra ``S`` and projected targets ``B``.

        Parameters
        ----------
        S : array-like, shape (p, n)
            Spectra of the normalised kernels
            (:func:`biokernels.kernels.diffusion.diffusion_spectra`);
            non-negative.
        B : array-like, shape (n, t) or (n,)
            ``P^T A`` with ``A`` the targets of Eq. 13 (one column per task:
            +1 / -1 on training proteins, 0 on test proteins). A zero column
            (a task without training labels) is allowed for the
            single-task formulations: DKL keeps its starting weights (the
            objective is constant), DKLKL picks the most concentrated kernel
            (it minimises log det alone), DKLKLu (``"nonneg"``) returns
            ``alpha = 0`` (``K_x = lam I``).

        Returns
        -------
        self

        Raises
        ------
        ValueError
            Unknown formulation, solver or ``unconstrained``; bad
            ``lam``/``tol``/``max_iter``; inconsistent shapes, NaN/inf or
            negative ``S``; for ``unconstrained="free"`` a zero target energy
            ``c_j`` (the objective is then unbounded below).
        """
        form, solver, constraints = self._resolve()
        S = _as_S(S)
        B = _as_B(B, S.shape[1])
        lam = check_lam(self.lam, interval="(0, inf)")
        # Every per-iteration product is small (p x n); multi-threaded BLAS only
        # adds synchronisation cost there (and stalls on a loaded machine).
        with threadpool_limits(limits=1, user_api="blas"):
            self._fit(S, B, lam, form, solver, constraints)
        self.constraints_ = constraints
        self.solver_ = solver
        self.n_tasks_ = B.shape[1]
        self.formulation_ = form
        return self

    def _fit(self, S, B, lam, form, solver, constraints) -> None:
        if form.multitask:
            obj = _Objective(S, target_energy(B), B.shape[1], lam, form.log_term)
            alpha, f, nit, ok, kkt = self._solve_one(obj, form, solver, constraints)
            self.weights_, self.objective_, self.n_iter_ = alpha, f, nit
            self.converged_, self.kkt_residual_ = ok, kkt
        else:
            t = B.shape[1]
            W = np.empty((t, S.shape[0]))
            f = np.empty(t)
            nit = np.empty(t, dtype=np.int64)
            ok = np.empty(t, dtype=bool)
            kkt = np.empty(t)
            for k in range(t):
                obj = _Objective(S, B[:, k] ** 2, 1, lam, form.log_term)
                W[k], f[k], nit[k], ok[k], kkt[k] = self._solve_one(obj, form, solver, constraints)
            self.weights_, self.objective_, self.n_iter_ = W, f, nit
            self.converged_, self.kkt_residual_ = ok, kkt
