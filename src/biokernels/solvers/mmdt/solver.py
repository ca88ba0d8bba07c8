"""The LS-MMDT transform step: dual coordinate descent of the L2-loss SVM.

Rodner et al. 2013, Eqs. 6-15, with the cached products of Sect. 3.3 and the
shrinking rule of Hsieh et al. 2008 (liblinear's ``L2R_L2LOSS_SVC_DUAL``).
:func:`solve_transform` keeps ``B`` (low rank, Eqs. 12-15) or ``W``
(explicit, Eqs. 7-10); its loop runs compiled
(:mod:`biokernels.solvers.mmdt_numba`, the default) or as the Python/NumPy
reference here. Update rules, caching, shrinking and the backends:
``docs/mmdt_notes.md``.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import blas
from sklearn.exceptions import ConvergenceWarning

from biokernels.errors import InputError
from biokernels.seeds import make_rng
from biokernels.solvers.mmdt.objective import _check_offset
from biokernels.solvers.mmdt.validation import _check_count, _check_positive, _check_transform_problem, _signs

__all__ = [
    "TransformResult",
    "solve_transform",
    "SOLVERS",
    "BACKENDS",
    "TransformConvergenceWarning",
]

SOLVERS = ("lowrank", "explicit")
BACKENDS = ("numba", "python")


class TransformConvergenceWarning(ConvergenceWarning):
    """A transform step (:func:`solve_transform`) stopped at ``max_iter`` epochs
    before its projected-gradient spread reached ``tol``. A subclass of
    scikit-learn's ``ConvergenceWarning``, so filters on either catch it."""


@dataclass
class TransformResult:
    """Solution of the transform step (:func:`solve_transform`).

    Attributes
    ----------
    alpha : ndarray, shape (m, n)
        Dual variables ``alpha[i, j]`` (Eq. 6).
    beta : ndarray, shape (m, Dt)
        ``B``, rows ``beta_i`` (Eq. 12, with ``t``); ``W = H^T B``.
    W_explicit : ndarray, shape (D, Dt), or None
        The explicit solver's maintained ``W`` (Eq. 7/10); None for ``lowrank``.
    n_iter : int
        Epochs (passes over the active set) run.
    converged : bool
        True if the projected-gradient spread fell below ``tol`` on all
        coordinates before ``max_iter`` epochs.
    pg_spread : float
        ``max PG - min PG`` in the last epoch (the stopping quantity; gradient
        units). Over the coordinates visited in that epoch, each PG taken at
        the iterate of its visit.
    kkt_violation : float
        ``max_l |PG_l(alpha)|`` at the returned ``alpha``, recomputed from
        scratch (:func:`transform_projected_gradient`; gradient units, 0 at
        the optimum). With ``lambda``-strong convexity of ``g``,
        ``||alpha - alpha*||_2 <= sqrt(m n) kkt_violation / lambda``.
    n_visits : int
        Coordinates visited (gradient computed).
    n_updates : int
        Coordinate steps taken (``|PG| > 1e-12``).
    epoch_seconds : list of float
        Wall time of each epoch (s).
    seconds : float
        Total wall time including set-up (s).
    solver : str
        ``"lowrank"`` or ``"explicit"``.
    backend : str
        ``"numba"`` (compiled loop) or ``"python"`` (reference loop).
    """

    alpha: np.ndarray
    beta: np.ndarray
    W_explicit: np.ndarray | None
    n_iter: int
    converged: bool
    pg_spread: float
    n_visits: int
    n_updates: int
    epoch_seconds: list = field(default_factory=list)
    seconds: float = 0.0
    solver: str = "lowrank"
    kkt_violation: float = float("nan")
    backend: str = "python"

    def W(self, H) -> np.ndarray:
        """The transform ``W = H^T B`` (Eq. 11), shape (D, Dt)."""
        return np.asarray(H, dtype=np.float64).T @ self.beta


def solve_transform(H, Xt, y_idx, C: float, *, solver: str = "lowrank", tol: float = 1e-4,
                    max_iter: int = 20000, shrinking: bool = True, rng=None,
                    alpha0=None, offset=None, backend: str = "numba",
                    context: str = "") -> TransformResult:
    """Transform step of MMDT: dual coordinate descent for the L2-loss SVM (Eqs. 6-15).

    Minimises ``g(alpha)`` of Eq. 6 over ``alpha >= 0`` for fixed hyperplanes
    ``H``; see ``docs/mmdt_notes.md`` for the update rules, caching and
    shrinking. ``solver="lowrank"`` keeps ``B`` (``m x Dt``, Eqs. 12-15);
    ``solver="explicit"`` keeps ``W`` (``D x Dt``, Eqs. 7-10). With the same
    ``rng`` and backend both visit coordinates in the same order.

    Parameters
    ----------
    H : array, shape (m, D)
        Source hyperplanes as rows (``V^T`` in the paper), bias included.
    Xt : array, shape (n, Dt)
        Target examples ``x~_j`` (augment with :func:`augment` for an affine
        transform; the function does not add the 1).
    y_idx : int array, shape (n,)
        Row of ``H`` that is each example's class; ``t_ij = +1`` if
        ``y_idx[j] == i`` else -1 (Eq. 5).
    C : float
        ``C_T`` (``C~``), > 0; ``lambda = 1 / (2 C)``.
    solver : {"lowrank", "explicit"}
    tol : float
        Stopping tolerance on the projected-gradient spread (gradient units), > 0.
    max_iter : int, default 20000
        Maximum number of epochs, >= 1. The default covers every W-step of
        the workflow's default digits and cohort tasks at ``tol = 1e-4``
        (at most about 8000 epochs there; 1000 left 40 % of them short).
    shrinking : bool
        Use the shrinking heuristic of [10].
    rng : numpy.random.Generator, int or None
        Order of the coordinates.
    alpha0 : array, shape (m, n), optional
        Warm start (non-negative); ``B`` / ``W`` are recomputed from it.
    offset : array, shape (m, n), optional
        ``offset[i, j] = h_i^T W0 x~_j`` for a prior transform ``W0``: the
        problem becomes ``min 1/2 ||W - W0||^2 + C sum xi^2`` and the solver
        returns ``W - W0 = H^T B`` (the authors' code does this for
        ``W0 = I``, ``regularize_identity``; not in the paper's equations).
        Default: none (``W0 = 0``).
    backend : {"numba", "python"}, default "numba"
        ``"numba"``: the coordinate loop compiled by numba
        (:mod:`biokernels.solvers.mmdt_numba`; its order comes from numba's
        generator seeded by one integer drawn from ``rng``). ``"python"``: the
        pure-Python/NumPy reference loop (order from ``rng`` directly). Same
        algorithm and stopping rule; the two
        reach the same optimum up to the stopping tolerance, not the same
        iterates.
    context : str
        Prefix of the non-convergence warning naming the caller's solve
        (e.g. ``"MMDT.fit W-step 2/5"``).

    Returns
    -------
    TransformResult
        Including ``converged``, ``pg_spread`` (stopping quantity) and
        ``kkt_violation`` (``max |PG|`` at the returned ``alpha``).

    Warns
    -----
    TransformConvergenceWarning
        When ``max_iter`` epochs end before the spread reaches ``tol``; the
        message names the solve, ``tol``, the reached spread and ``max |PG|``.

    Raises
    ------
    InputError
        On bad shapes, NaN values, class indices outside ``[0, m)``, a
        negative or misshapen ``alpha0``, ``C``/``tol`` <= 0, or an unknown
        solver or backend.
    """
    t_start = time.perf_counter()
    H, Xt, y_idx, C = _check_transform_problem(H, Xt, y_idx, C)
    if solver not in SOLVERS:
        raise InputError(f"solver: expected one of {SOLVERS}, got {solver!r}")
    if backend not in BACKENDS:
        raise InputError(f"backend: expected one of {BACKENDS}, got {backend!r}")
    tol = _check_positive(tol, "tol")
    max_iter = _check_count(max_iter, "max_iter")
    rng = make_rng(rng, name="rng")
    m, D = H.shape
    n, Dt = Xt.shape
    T = _signs(y_idx, m)
    if alpha0 is None:
        alpha = np.zeros((m, n))
    else:
        alpha = np.array(alpha0, dtype=np.float64)
        if alpha.shape != (m, n) or not np.all(np.isfinite(alpha)) or np.any(alpha < 0):
            raise InputError(f"alpha0: expected finite non-negative values of shape {(m, n)}")
    lam = 0.5 / C
    explicit = solver == "explicit"
    off = _check_offset(offset, (m, n))

    B = (alpha * T) @ Xt                          # Eq. 12 (beta_i as rows)
    R = H @ H.T                                   # rho_ii' = h_i^T h_i'
    xsq = np.einsum("ij,ij->i", Xt, Xt)           # ||x~_j||^2
    QD = np.diag(R)[:, None] * xsq[None, :] + lam  # Eq. 14 + lambda: Qbar_ll
    if backend == "numba":
        from biokernels.solvers.mmdt_numba import transform_cd

        W = np.ascontiguousarray(H.T @ B) if explicit else np.zeros((0, 0))
        times = np.empty(max_iter)
        it, converged, spread, n_visits, n_updates = transform_cd(
            alpha, B, W, np.ascontiguousarray(H), R, np.ascontiguousarray(Xt), T,
            np.ascontiguousarray(off), QD, xsq, lam, tol, max_iter, bool(shrinking), explicit,
            int(rng.integers(2**32)), times)
        epoch_seconds = times[:it].tolist()
        W_explicit = W if explicit else None
    else:
        it, converged, spread, n_visits, n_updates, epoch_seconds, W_explicit = _transform_cd_python(
            alpha, B, H, R, Xt, T, off, QD, xsq, lam, tol, max_iter, shrinking, explicit, rng)
    if explicit:
        B = (alpha * T) @ Xt
    # exact KKT residual at the returned alpha (Eq. 8 from scratch)
    G = T * (R @ (B @ Xt.T) + off) + lam * alpha - 1.0
    kkt = float(np.max(np.abs(np.where(alpha > 0, G, np.minimum(G, 0.0))))) if G.size else 0.0
    if not converged:
        where = f"{context}: " if context else ""
        warnings.warn(f"{where}solve_transform ({solver}, backend {backend}, {m} x {n} dual "
                      f"coordinates) did not converge in max_iter={max_iter} epochs: "
                      f"projected-gradient spread {spread:.3g} > tol={tol:g} (max |PG| at the "
                      f"returned alpha {kkt:.3g}); increase max_iter",
                      TransformConvergenceWarning, stacklevel=2)
    return TransformResult(alpha=alpha, beta=B, W_explicit=W_explicit, n_iter=int(it),
                           converged=bool(converged), pg_spread=float(spread),
                           n_visits=int(n_visits), n_updates=int(n_updates),
                           epoch_seconds=epoch_seconds, seconds=time.perf_counter() - t_start,
                           solver=solver, kkt_violation=kkt, backend=backend)


def _transform_cd_python(alpha, B, H, R, Xt, T, off, QD, xsq, lam, tol, max_iter, shrinking,
                         explicit, rng):
    """Reference (pure-Python/NumPy) coordinate loop of :func:`solve_transform`.

    Updates ``alpha`` and (low-rank) ``B`` in place; returns ``(n_iter,
    converged, spread, n_visits, n_updates, epoch_seconds, W_explicit)`` with
    ``W_explicit`` the maintained ``W`` (shape (D, Dt)) for the explicit
    solver, else None.
    """
    m, n = alpha.shape
    if explicit:
        # W^T stored Fortran-ordered so BLAS dger updates it in place (Eq. 10).
        WT = np.asfortranarray((H.T @ B).T)       # (Dt, D)
        ger = blas.dger
    active = np.ones((m, n), dtype=bool)
    n_active = m * n
    inf = np.inf
    pg_max_old = inf
    converged = False
    spread = inf
    n_visits = n_updates = 0
    epoch_seconds = []
    it = 0
    while it < max_iter:
        t_ep = time.perf_counter()
        pg_max_new, pg_min_new = -inf, inf
        for j in rng.permutation(n):
            idx = np.flatnonzero(active[:, j])
            if idx.size == 0:
                continue
            x = Xt[j]
            xs = xsq[j]
            if explicit:
                z = WT.T @ x                      # W x~_j, (D,)
            else:
                u = B @ x                         # beta_i'^T x~_j, (m,)
            for i in rng.permutation(idx):
                n_visits += 1
                t = T[i, j]
                a = alpha[i, j]
                if explicit:
                    G = t * (float(H[i] @ z) + off[i, j]) - 1.0 + lam * a   # Eq. 8
                else:
                    G = t * (float(R[i] @ u) + off[i, j]) - 1.0 + lam * a   # Eq. 8 via R
                if a == 0.0:
                    if G > pg_max_old:            # shrink
                        active[i, j] = False
                        n_active -= 1
                        continue
                    PG = G if G < 0.0 else 0.0
                else:
                    PG = G
                if PG > pg_max_new:
                    pg_max_new = PG
                if PG < pg_min_new:
                    pg_min_new = PG
                if abs(PG) > 1e-12:
                    a_new = a - G / QD[i, j]                          # Eq. 9
                    if a_new < 0.0:
                        a_new = 0.0
                    alpha[i, j] = a_new
                    d = (a_new - a) * t
                    n_updates += 1
                    if explicit:
                        ger(d, x, H[i], a=WT, overwrite_a=1)          # Eq. 10
                        z += (d * xs) * H[i]
                    else:
                        B[i] += d * x                                 # Eq. 15
                        u[i] += d * xs
        it += 1
        epoch_seconds.append(time.perf_counter() - t_ep)
        spread = pg_max_new - pg_min_new
        if spread <= tol:
            if n_active == m * n:
                converged = True
                break
            active[:] = True
            n_active = m * n
            pg_max_old = inf
            continue
        if shrinking:
            pg_max_old = pg_max_new if pg_max_new > 0 else inf
    W_explicit = np.ascontiguousarray(WT.T) if explicit else None
    return it, converged, spread, n_visits, n_updates, epoch_seconds, W_explicit
