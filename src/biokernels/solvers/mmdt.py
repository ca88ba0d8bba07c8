"""LS-MMDT: max-margin domain transforms with an implicit low-rank transform.

Sources
-------
* Rodner, Hoffman, Donahue, Darrell & Saenko, "Towards adapting ImageNet to
  reality: scalable domain adaptation with implicit low-rank transformations"
  (2013), Sect. 3 (Eqs. 2-15) and Sect. 3.3 (shrinking, Fig. 2) -- the
  solver of the transform step, called LS-MMDT there.
* Hoffman, Rodner, Donahue, Saenko & Darrell, "Efficient learning of
  domain-invariant image representations", ICLR 2013 (MMDT) -- the joint
  objective and its alternation, which LS-MMDT uses ("for our experiments, we
  use the MMDT method [9], for which the number of hyperplanes equals the
  number of object categories").
* Hsieh, Chang, Lin, Keerthi & Sundararajan, "A dual coordinate descent
  method for large-scale linear SVM", ICML 2008 (= [10] of the paper; the
  liblinear solver ``L2R_L2LOSS_SVC_DUAL`` with its shrinking rule).

What is implemented
-------------------
Notation: ``m`` classes (= hyperplanes), ``n`` labelled target examples,
``D`` source and ``Dt`` target feature dimension. Both domains are augmented
with a constant 1 (``x~ = [x; 1]``) so the hyperplanes carry a bias and the
transform is affine; below ``D`` and ``Dt`` include that 1. The hyperplanes
are the rows of ``H`` (shape ``(m, D)``; the paper's ``V = [v_1 .. v_m] = H^T``),
the transform ``W`` has shape ``(D, Dt)`` and maps target to source.

MMDT objective (Hoffman et al. 2013, L2 loss, ``p = 2`` in the paper's Eq. 1)::

    f(W, H) = 1/2 ||W||_F^2 + sum_k [ 1/2 ||h_k||^2
              + C_S sum_i max(0, 1 - y_ik h_k^T xs_i)^2
              + C_T sum_j max(0, 1 - y_jk h_k^T W x~_j)^2 ]

with ``y_ik = +1`` if example i is of class k, else -1 (one-vs-rest). It is
minimised by alternation (as in the authors' liblinear-mmdt code):

0. ``H`` with ``W = 0``: the transformed target examples are zero vectors and
   their loss is a constant, so this is the one-vs-rest L2-loss linear SVM on
   the source alone (SVM-Source).
1. ``W`` with ``H`` fixed: Eq. 1, an L2-loss SVM in the augmented features
   ``d_l = vec(h_i x~_j^T)`` (Eq. 4) with labels ``t_l = y_ji`` (Eq. 5), solved
   in the dual (Eq. 6) by coordinate descent, :func:`solve_transform`.
2. ``H`` with ``W`` fixed: one-vs-rest L2-loss SVM on the source examples
   (weight ``C_S``) and the transformed target examples ``W x~_j`` (weight
   ``C_T``), by scikit-learn's ``LinearSVC(loss="squared_hinge", dual=True,
   fit_intercept=False)`` (liblinear's dual coordinate descent, the same
   solver the authors call) with per-sample weights; for two classes the
   second hyperplane is the negative of the first (exact for this problem).

Steps 1-2 repeat until ``f`` decreases by less than ``alternation_tol``
(relative) or ``max_alternations`` W-steps were made; the last step is always a
hyperplane step. Each step minimises ``f`` over one block (to the solvers'
tolerances), so ``f`` does not increase (``objective_history_``). Classes with
source but no target examples get a hyperplane from step 2 like every other
class (their target scores are ``h_k^T W x~``): new-category transfer
(paper, Fig. 6).

The transform step (Eqs. 6-15), ``l = (i, j)``, ``lambda = 1 / (2 C_T)``::

    min_{alpha >= 0} g(alpha) = 1/2 alpha^T Qbar alpha - e^T alpha          (6)
    Qbar_{l,l'} = t_l t_l' d_l^T d_l' + lambda [l = l']
    W = sum_l alpha_l t_l h_i x~_j^T = sum_i h_i beta_i^T = H^T B        (7, 11)
    beta_i = sum_j alpha_(i,j) t_(i,j) x~_j                               (12)
    grad_l g = t_l h_i^T W x~_j + lambda alpha_l - 1
             = t_l sum_i' R_ii' beta_i'^T x~_j + lambda alpha_l - 1     (8, R = H H^T)
    alpha_l <- max(0, alpha_l - grad_l g / (||d_l||^2 + lambda))          (9)
    ||d_l||^2 = ||h_i||^2 ||x~_j||^2 = R_ii ||x~_j||^2                    (14)
    W <- W + dalpha_l t_l h_i x~_j^T     (explicit, 10)
    beta_i <- beta_i + dalpha_l t_l x~_j (low rank, 15)

Reading of the paper's typesetting (all four checked by the tests): Eq. 8's
``y_i`` is ``t_l``; ``delta[i = j]`` in ``Qbar`` means ``l = l'``; Eq. 9's
denominator is ``Qbar_ll = ||d_l||^2 + lambda`` (squared norm, as in Eq. 14 and
[10]); Eqs. 11-12 drop the ``t_l`` that Eqs. 7 and 15 carry (``beta_i`` here
includes it). Eq. 13's mapped hyperplane is ``W^T h_i = sum_i' R_ii' beta_i'``.

Cached products (Sect. 3.3): coordinates are visited grouped by target
example ``j`` (examples in random order each epoch, the ``m`` classes of an
example in random order), as in liblinear-mmdt, which shuffles within
groups. For the current ``j`` the ``m`` products ``u = B x~_j`` are computed
once (``O(m Dt)``) and kept exact after each step by ``u_i += dalpha t
||x~_j||^2``, so a coordinate costs ``O(m)`` for the gradient (``R_i u``) plus
``O(Dt)`` for Eq. 15: per epoch ``O(n m (Dt + m))`` against ``O(n m D Dt)``
for the explicit solver, whose rank-1 update (Eq. 10, BLAS ``dger`` in
place) dominates; the explicit solver caches ``z = W x~_j`` the same way so
its gradient costs ``O(D)``. Both solvers visit the coordinates in the same
order for the same seed, so they take the same steps up to rounding.

Shrinking ([10], liblinear): a coordinate at ``alpha_l = 0`` with gradient
above the previous epoch's largest projected gradient is removed from the
active set; when the projected-gradient spread ``max PG - min PG`` on the
active set falls below ``tol`` the full set is re-activated and checked
again, and the solver stops only when it holds on all coordinates. So
``tol`` bounds the spread of projected gradients (gradient units; KKT:
``PG = 0`` at the optimum). The dual is strongly convex (``lambda > 0``), so
``alpha`` and ``W`` are unique: shrinking on/off and low-rank/explicit reach
the same solution. At the optimum the primal value equals ``-g(alpha)``
(:func:`transform_primal_objective`, :func:`transform_dual_objective`).

Backends: the coordinate loop runs compiled by numba (``backend="numba"``,
:mod:`biokernels.solvers.mmdt_numba`, the default) or as the pure-Python/NumPy
reference (``backend="python"``, about 5 us per coordinate visit). Same
updates and stopping rule; their coordinate orders come from different
generators, so they agree at the optimum up to the stopping tolerance
(strong convexity: ``||alpha - alpha*|| <= ||PG|| / lambda``), not iterate by
iterate. A solve that reaches ``max_iter`` epochs before the spread falls
below ``tol`` returns ``converged=False`` with its final spread and
``max |PG|`` and raises a :class:`TransformConvergenceWarning`; :class:`MMDT`
records them per W-step (``converged_``, ``n_not_converged_``, ``n_iter_``).

Not implemented: the L1-loss variant, the ``||W - I||`` regulariser of the
authors' code (``regularize_identity``), and sparse inputs.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import blas
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import LinearSVC

from biokernels.errors import InputError

__all__ = [
    "MMDT",
    "TransformResult",
    "augment",
    "solve_transform",
    "transform_dual_objective",
    "transform_primal_objective",
    "transform_projected_gradient",
    "ovr_squared_hinge_svm",
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


# --------------------------------------------------------------------------- validation

def _check_matrix(X, name: str, n_features: int | None = None, what: str = "") -> np.ndarray:
    """2-D finite float64 array; ``what`` names the expected columns."""
    try:
        A = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name}: expected a numeric array of shape (n_samples, n_features); "
                         f"could not convert ({exc})") from exc
    if A.ndim != 2:
        raise InputError(f"{name}: expected a 2-D array of shape (n_samples, n_features), "
                         f"got {A.ndim}-D with shape {A.shape}")
    if n_features is not None and A.shape[1] != n_features:
        raise InputError(f"{name}: expected {n_features} features{what}, got {A.shape[1]}")
    if A.shape[1] == 0:
        raise InputError(f"{name}: has 0 features")
    if not np.all(np.isfinite(A)):
        bad = np.argwhere(~np.isfinite(A))[0]
        raise InputError(f"{name}: holds NaN or infinite values (first at row {bad[0]}, "
                         f"column {bad[1]})")
    return A


def _check_labels(y, name: str, n: int, xname: str) -> np.ndarray:
    y = np.asarray(y)
    if y.ndim != 1:
        raise InputError(f"{name}: expected a 1-D array of labels, got shape {y.shape}")
    if y.shape[0] != n:
        raise InputError(f"{name}: has {y.shape[0]} labels but {xname} has {n} rows; "
                         "expected one label per row")
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise InputError(f"{name}: holds NaN or infinite labels")
    return y


def _check_positive(value, name: str) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name}: expected a positive number, got {value!r}") from exc
    if not np.isfinite(v) or v <= 0:
        raise InputError(f"{name}: expected a finite number > 0, got {value!r}")
    return v


def _check_count(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InputError(f"{name}: expected an integer >= 1, got {value!r}")
    return int(value)


def _rng(seed) -> np.random.Generator:
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None or isinstance(seed, (int, np.integer)):
        return np.random.default_rng(seed)
    raise InputError(f"random_state: expected None, an int or a numpy.random.Generator, "
                     f"got {type(seed).__name__}")


def augment(X) -> np.ndarray:
    """Append a constant-1 column: ``x~ = [x; 1]`` (bias / affine transform).

    Parameters
    ----------
    X : array, shape (n, d)

    Returns
    -------
    ndarray of float64, shape (n, d + 1)
    """
    X = np.asarray(X, dtype=np.float64)
    return np.hstack([X, np.ones((X.shape[0], 1))])


def _signs(y_idx: np.ndarray, m: int) -> np.ndarray:
    """``T[i, j] = +1`` if ``y_idx[j] == i`` else -1, shape (m, n) (Eq. 5)."""
    T = -np.ones((m, y_idx.size))
    T[y_idx, np.arange(y_idx.size)] = 1.0
    return T


def _check_transform_problem(H, Xt, y_idx, C):
    H = _check_matrix(H, "H")
    Xt = _check_matrix(Xt, "Xt")
    m = H.shape[0]
    y_idx = np.asarray(y_idx)
    if y_idx.ndim != 1 or y_idx.shape[0] != Xt.shape[0]:
        raise InputError(f"y_idx: expected shape ({Xt.shape[0]},) (one class index per row of "
                         f"Xt), got {y_idx.shape}")
    if y_idx.size and (y_idx.dtype.kind not in "iu" or y_idx.min() < 0 or y_idx.max() >= m):
        raise InputError(f"y_idx: expected integer class indices in [0, {m}) (rows of H)")
    C = _check_positive(C, "C")
    return H, Xt, y_idx.astype(np.intp), C


# --------------------------------------------------------------------------- objectives

def _check_offset(offset, shape) -> np.ndarray:
    if offset is None:
        return np.zeros(shape)
    off = np.asarray(offset, dtype=np.float64)
    if off.shape != shape or not np.all(np.isfinite(off)):
        raise InputError(f"offset: expected finite values of shape {shape}, got {off.shape}")
    return off


def transform_dual_objective(alpha, H, Xt, y_idx, C, offset=None) -> float:
    """Dual objective ``g(alpha)`` of the transform step (Eq. 6), from scratch.

    ``g = 1/2 ||W||_F^2 + lambda/2 ||alpha||^2 - sum(alpha)`` with
    ``W = H^T B`` (Eq. 11), ``B = (alpha * T) Xt`` (Eq. 12),
    ``||W||_F^2 = trace(R B B^T)``, ``R = H H^T``, ``lambda = 1 / (2 C)``.

    Parameters
    ----------
    alpha : array, shape (m, n)
        Dual variables, ``alpha[i, j]`` for hyperplane i and target example j.
    H : array, shape (m, D)
        Source hyperplanes (rows).
    Xt : array, shape (n, Dt)
        Target examples (already augmented if a bias is wanted).
    y_idx : int array, shape (n,)
        Class index (row of ``H``) of each target example.
    C : float
        ``C_T`` (``C~`` of the paper), > 0.
    offset : array, shape (m, n), optional
        Scores ``h_i^T W0 x~_j`` of a prior transform ``W0`` (regulariser
        ``||W - W0||_F^2``); then ``e^T alpha`` becomes
        ``sum_l alpha_l (1 - t_l offset_l)``. Default 0 (the paper's Eq. 6).

    Returns
    -------
    float

    Raises
    ------
    InputError
        On inconsistent shapes, NaN values or ``C <= 0``.
    """
    H, Xt, y_idx, C = _check_transform_problem(H, Xt, y_idx, C)
    alpha = np.asarray(alpha, dtype=np.float64)
    if alpha.shape != (H.shape[0], Xt.shape[0]):
        raise InputError(f"alpha: expected shape {(H.shape[0], Xt.shape[0])}, got {alpha.shape}")
    T = _signs(y_idx, H.shape[0])
    off = _check_offset(offset, alpha.shape)
    B = (alpha * T) @ Xt
    R = H @ H.T
    wsq = float(np.sum(R * (B @ B.T)))
    return (0.5 * wsq + 0.25 / C * float(np.sum(alpha ** 2))
            - float(np.sum(alpha * (1.0 - T * off))))


def transform_primal_objective(W, H, Xt, y_idx, C, W0=None) -> float:
    """Primal objective of the transform step (Eq. 1 with ``p = 2``).

    ``1/2 ||W - W0||_F^2 + C sum_{i,j} max(0, 1 - t_ij h_i^T W x~_j)^2``
    (``W0 = 0``: the paper's Eq. 1). At the optimum it equals ``-g(alpha*)``
    (strong duality).

    Parameters
    ----------
    W : array, shape (D, Dt)
        The whole transform (``W0`` included).
    H : array, shape (m, D)
    Xt : array, shape (n, Dt)
    y_idx : int array, shape (n,)
    C : float, > 0
    W0 : array, shape (D, Dt), optional
        Prior transform (default 0).

    Returns
    -------
    float

    Raises
    ------
    InputError
        On inconsistent shapes, NaN values or ``C <= 0``.
    """
    H, Xt, y_idx, C = _check_transform_problem(H, Xt, y_idx, C)
    W = _check_matrix(W, "W")
    if W.shape != (H.shape[1], Xt.shape[1]):
        raise InputError(f"W: expected shape {(H.shape[1], Xt.shape[1])}, got {W.shape}")
    S = H @ W @ Xt.T
    xi = np.maximum(0.0, 1.0 - _signs(y_idx, H.shape[0]) * S)
    dW = W if W0 is None else W - np.asarray(W0, dtype=np.float64)
    return 0.5 * float(np.sum(dW ** 2)) + C * float(np.sum(xi ** 2))


def transform_projected_gradient(alpha, H, Xt, y_idx, C, offset=None) -> np.ndarray:
    """Projected gradient of ``g`` at ``alpha`` (KKT residual; 0 at the optimum).

    ``PG_l = grad_l g`` if ``alpha_l > 0``, ``min(grad_l g, 0)`` if ``alpha_l = 0``,
    with ``grad_l g = t_l h_i^T W x~_j + lambda alpha_l - 1`` (Eq. 8).

    Parameters
    ----------
    alpha : array, shape (m, n)
    H : array, shape (m, D)
    Xt : array, shape (n, Dt)
    y_idx : int array, shape (n,)
    C : float, > 0
    offset : array, shape (m, n), optional
        Prior-transform scores (see :func:`transform_dual_objective`).

    Returns
    -------
    ndarray, shape (m, n)

    Raises
    ------
    InputError
        On inconsistent shapes, NaN values or ``C <= 0``.
    """
    H, Xt, y_idx, C = _check_transform_problem(H, Xt, y_idx, C)
    alpha = np.asarray(alpha, dtype=np.float64)
    T = _signs(y_idx, H.shape[0])
    off = _check_offset(offset, alpha.shape)
    B = (alpha * T) @ Xt
    G = T * ((H @ H.T) @ (B @ Xt.T) + off) + 0.5 / C * alpha - 1.0
    return np.where(alpha > 0, G, np.minimum(G, 0.0))


# --------------------------------------------------------------------------- transform solver

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
    ``H``; see the module docstring for the update rules, caching and
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
        pure-Python/NumPy reference loop (order from ``rng`` directly; about
        5 us per coordinate visit). Same algorithm and stopping rule; the two
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
    rng = _rng(rng)
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


# --------------------------------------------------------------------------- hyperplanes

def ovr_squared_hinge_svm(X, y_idx, m: int, sample_weight=None, *, tol: float = 1e-4,
                          max_iter: int = 10000, random_state=None) -> np.ndarray:
    """One-vs-rest L2-regularised, L2-loss (squared hinge) linear SVMs, no intercept.

    For each class k: ``min 1/2 ||h_k||^2 + sum_i c_i max(0, 1 - y_ik h_k^T x_i)^2``
    with ``c_i = sample_weight[i]`` (liblinear's per-sample ``C``); add a
    constant column (:func:`augment`) for a bias, which is then regularised
    like liblinear's. Solved by ``sklearn.svm.LinearSVC(loss="squared_hinge",
    dual=True, fit_intercept=False, C=1)``. For ``m = 2`` LinearSVC fits one
    problem; the class-0 hyperplane is its negative (the class-0 problem is
    the same one with flipped labels).

    Parameters
    ----------
    X : array, shape (n, D)
    y_idx : int array, shape (n,)
        Class index in ``[0, m)`` of each row; every class needs a row.
    m : int
        Number of classes, >= 2.
    sample_weight : array, shape (n,), optional
        Per-sample ``C`` (default 1).
    tol, max_iter, random_state
        Passed to LinearSVC.

    Returns
    -------
    ndarray, shape (m, D)
        Hyperplanes as rows.

    Raises
    ------
    InputError
        If a class has no row or ``m < 2``.
    """
    y_idx = np.asarray(y_idx)
    counts = np.bincount(y_idx, minlength=m)
    if m < 2 or np.any(counts[:m] == 0) or counts.size > m:
        raise InputError(f"y_idx: expected every class 0..{m - 1} (m >= 2) present, "
                         f"counts {counts.tolist()}")
    svc = LinearSVC(loss="squared_hinge", dual=True, C=1.0, fit_intercept=False, tol=tol,
                    max_iter=max_iter, random_state=random_state)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        svc.fit(X, y_idx, sample_weight=sample_weight)
    coef = svc.coef_
    if m == 2:
        coef = np.vstack([-coef[0], coef[0]])
    return np.array(coef, dtype=np.float64)


# --------------------------------------------------------------------------- estimator

class MMDT(ClassifierMixin, BaseEstimator):
    """Max-margin domain transform (MMDT) with the LS-MMDT transform solver.

    Learns one-vs-rest hyperplanes ``H`` in the (augmented) source space and
    an affine transform ``W`` of target features into it by alternation (see
    the module docstring for the objective, equations and steps). A target
    example ``x`` is scored ``h_k^T W [x; 1]`` for every class k seen in the
    source, including classes without target training examples. Optionally
    ``W`` is regularised towards a prior map ``W0`` (``transform_prior``).

    Parameters
    ----------
    C_source : float, default 1.0
        ``C_S``, weight of the squared hinge loss of the source examples (> 0).
    C_target : float, default 1.0
        ``C_T`` = ``C~`` of the paper's Eq. 6 (``lambda = 1 / (2 C_T)``): weight
        of the target loss in both steps (> 0).
    solver : {"lowrank", "explicit"}, default "lowrank"
        Transform solver: ``B`` of Eqs. 12-15 or ``W`` of Eqs. 7-10.
    tol : float, default 1e-4
        Transform solver tolerance (projected-gradient spread).
    max_iter : int, default 20000
        Transform solver epochs per W-step (see :func:`solve_transform`).
    shrinking : bool, default True
        Shrinking heuristic of the transform solver.
    backend : {"numba", "python"}, default "numba"
        Transform solver loop: compiled (numba) or the pure-Python reference
        (:func:`solve_transform`).
    max_alternations : int, default 5
        W-steps at most (each followed by a hyperplane step).
    alternation_tol : float, default 1e-3
        Stop when the MMDT objective decreases by less than this fraction.
    warm_start : bool, default True
        Start each W-step from the previous ``alpha`` (``B`` does not depend on
        ``H``, so the warm start is exact).
    svm_tol : float, default 1e-4
        LinearSVC tolerance of the hyperplane steps.
    svm_max_iter : int, default 10000
        LinearSVC iterations of the hyperplane steps.
    transform_prior : None, "identity" or array of shape (D, Dt), default None
        Prior transform ``W0`` of the (unaugmented) features; the regulariser
        becomes ``1/2 ||W - W0||_F^2`` with ``W0`` extended to the bias
        (``W0 [x; 1] = [W0 x; 1]``). None: ``W0 = 0``, the paper's Eq. 1.
        ``"identity"`` (needs ``D == Dt``) is the authors' code's
        ``regularize_identity``; a matrix generalises it to a known naive map
        between different feature spaces. An extension, not in the paper's
        equations: with ``W0 = 0`` the transform only ever enters through
        ``H W`` (rank <= m), so the target classifier is a multi-task SVM
        coupled by ``R = H H^T`` and ignores any feature correspondence.
    random_state : int, numpy.random.Generator or None
        Seeds the coordinate orders (and LinearSVC's, via an int drawn from it).

    Attributes
    ----------
    classes_ : ndarray, shape (m,)
        Class labels (sorted; from the source labels or ``classes``).
    hyperplanes_ : ndarray, shape (m, D + 1)
        Final source hyperplanes ``H`` (bias last).
    source_hyperplanes_ : ndarray, shape (m, D + 1)
        One-vs-rest hyperplanes of the source alone (SVM-Source; step 0 when
        there is no ``transform_prior``).
    beta_ : ndarray, shape (m, Dt + 1)
        ``B`` of the final transform, ``W = W0 + transform_hyperplanes_^T B``.
    prior_ : ndarray, shape (D + 1, Dt + 1)
        The augmented ``W0`` (zeros without ``transform_prior``).
    transform_hyperplanes_ : ndarray, shape (m, D + 1)
        The hyperplanes the final W-step used.
    alpha_ : ndarray, shape (m, n_target)
        Dual variables of the final W-step.
    objective_history_ : list of float
        MMDT objective after step 0 and after each alternation.
    n_alternations_ : int
        W-steps made.
    transform_results_ : list of TransformResult
        Diagnostics of every W-step.
    n_iter_ : ndarray of int, shape (n_alternations_,)
        Epochs of each W-step's coordinate descent.
    converged_ : bool
        True if every W-step met ``tol`` within ``max_iter`` epochs (each one
        that did not also raised a :class:`TransformConvergenceWarning`).
    n_not_converged_ : int
        W-steps that stopped at ``max_iter`` without meeting ``tol``.
    pg_spread_ : ndarray, shape (n_alternations_,)
        Each W-step's final projected-gradient spread (its stopping quantity,
        gradient units; ``<= tol`` where converged).
    kkt_violation_ : ndarray, shape (n_alternations_,)
        ``max |PG|`` of the transform dual at each W-step's returned ``alpha``.
    n_features_in_ : int
        ``Dt`` (target features; ``predict`` takes target examples).
    n_source_features_ : int
        ``D``.
    """

    def __init__(self, C_source: float = 1.0, C_target: float = 1.0, solver: str = "lowrank",
                 tol: float = 1e-4, max_iter: int = 20000, shrinking: bool = True,
                 backend: str = "numba",
                 max_alternations: int = 5, alternation_tol: float = 1e-3,
                 warm_start: bool = True, svm_tol: float = 1e-4, svm_max_iter: int = 10000,
                 transform_prior=None, random_state=None):
        self.C_source = C_source
        self.C_target = C_target
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.shrinking = shrinking
        self.backend = backend
        self.max_alternations = max_alternations
        self.alternation_tol = alternation_tol
        self.warm_start = warm_start
        self.svm_tol = svm_tol
        self.svm_max_iter = svm_max_iter
        self.transform_prior = transform_prior
        self.random_state = random_state

    # ---------------------------------------------------------------- fit
    def fit(self, Xs, ys, Xt, yt, classes=None):
        """Fit hyperplanes and transform on labelled source and target data.

        Parameters
        ----------
        Xs : array, shape (n_source, D)
            Source features (scaled by the caller; no constant column).
        ys : array, shape (n_source,)
            Source labels; at least two classes.
        Xt : array, shape (n_target, Dt)
            Labelled target features, ``n_target >= 1``; ``Dt`` may differ from ``D``.
        yt : array, shape (n_target,)
            Target labels, each among the source classes; classes without
            target examples are allowed (and predicted).
        classes : array-like, optional
            The expected classes; each must have source examples, and ``ys``
            must hold no other label.

        Returns
        -------
        self

        Raises
        ------
        InputError
            On non-2-D or non-finite features, label/row count mismatch,
            fewer than two source classes, a class in ``classes`` without source
            examples, a source label not in ``classes``, target labels not among
            the source classes, no target examples, invalid hyperparameters, or
            a ``transform_prior`` of the wrong shape.
        """
        C_S = _check_positive(self.C_source, "C_source")
        C_T = _check_positive(self.C_target, "C_target")
        if self.solver not in SOLVERS:
            raise InputError(f"solver: expected one of {SOLVERS}, got {self.solver!r}")
        if self.backend not in BACKENDS:
            raise InputError(f"backend: expected one of {BACKENDS}, got {self.backend!r}")
        _check_positive(self.tol, "tol")
        _check_count(self.max_iter, "max_iter")
        max_alt = _check_count(self.max_alternations, "max_alternations")
        alt_tol = _check_positive(self.alternation_tol, "alternation_tol")
        rng = _rng(self.random_state)

        Xs = _check_matrix(Xs, "Xs")
        ys = _check_labels(ys, "ys", Xs.shape[0], "Xs")
        Xt = _check_matrix(Xt, "Xt")
        yt = _check_labels(yt, "yt", Xt.shape[0], "Xt")
        if Xs.shape[0] == 0:
            raise InputError("Xs: no source examples; expected at least one per class")
        if Xt.shape[0] == 0:
            raise InputError("Xt: no target examples; MMDT needs at least one labelled "
                             "target example to learn the transform")
        src_classes = np.unique(ys)
        if classes is None:
            self.classes_ = src_classes
        else:
            cls = np.unique(np.asarray(classes))
            missing = np.setdiff1d(cls, src_classes)
            if missing.size:
                raise InputError(f"ys: classes {missing.tolist()} (listed in classes) have no "
                                 "source examples; every class needs source examples")
            extra = np.setdiff1d(src_classes, cls)
            if extra.size:
                raise InputError(f"ys: labels {extra.tolist()} are not in classes "
                                 f"{cls.tolist()}")
            self.classes_ = cls
        m = self.classes_.size
        if m < 2:
            raise InputError(f"ys: expected at least 2 source classes, got {m} "
                             f"({self.classes_.tolist()})")
        try:
            unknown = np.setdiff1d(np.unique(yt), self.classes_)
        except TypeError as exc:
            raise InputError(f"yt: labels not comparable with the source labels ({exc})") from exc
        if unknown.size:
            raise InputError(f"yt: labels {unknown.tolist()} are not among the source classes "
                             f"{self.classes_.tolist()}; every target class needs source "
                             "examples")
        ys_idx = np.searchsorted(self.classes_, ys)
        yt_idx = np.searchsorted(self.classes_, yt)

        Xs_a = augment(Xs)
        Xt_a = augment(Xt)
        ns, nt = Xs_a.shape[0], Xt_a.shape[0]
        D, Dt = Xs.shape[1], Xt.shape[1]
        self.n_source_features_ = D
        self.n_features_in_ = Dt
        W0 = np.zeros((D + 1, Dt + 1))
        prior = self.transform_prior
        if isinstance(prior, str):
            if prior != "identity":
                raise InputError(f"transform_prior: expected None, 'identity' or a (D, Dt) "
                                 f"array, got {prior!r}")
            if D != Dt:
                raise InputError(f"transform_prior: 'identity' needs equal source and target "
                                 f"dimensions, got D={D} (Xs) and Dt={Dt} (Xt)")
            W0 = np.eye(D + 1)
        elif prior is not None:
            P = _check_matrix(prior, "transform_prior", Dt, " (columns = target features)")
            if P.shape[0] != D:
                raise InputError(f"transform_prior: expected shape ({D}, {Dt}) (source x target "
                                 f"features), got {P.shape}")
            W0[:D, :Dt] = P
            W0[D, Dt] = 1.0
        has_prior = prior is not None
        self.prior_ = W0
        Z0 = Xt_a @ W0.T                          # W0 x~_j, rows (nt, D + 1)

        def svm_seed():
            return int(rng.integers(2**31 - 1))

        weights = np.concatenate([np.full(ns, C_S), np.full(nt, C_T)])
        y_all = np.concatenate([ys_idx, yt_idx])
        # source-only hyperplanes (SVM-Source)
        H = ovr_squared_hinge_svm(Xs_a, ys_idx, m, np.full(ns, C_S), tol=self.svm_tol,
                                  max_iter=self.svm_max_iter, random_state=svm_seed())
        self.source_hyperplanes_ = H.copy()
        # step 0: W = W0. With W0 = 0 the transformed target examples are zero
        # vectors with a constant loss, so step 0 is the source-only SVM above.
        if has_prior:
            H = ovr_squared_hinge_svm(np.vstack([Xs_a, Z0]), y_all, m, weights,
                                      tol=self.svm_tol, max_iter=self.svm_max_iter,
                                      random_state=svm_seed())
        B = np.zeros((m, Xt_a.shape[1]))
        H_W = np.zeros_like(H)                    # W - W0 = H_W^T B = 0
        history = [self._objective(H, H_W, B, Z0, Xs_a, ys_idx, Xt_a, yt_idx, C_S, C_T)]
        results = []
        alpha = None
        for step in range(max_alt):
            offset = (Z0 @ H.T).T if has_prior else None   # h_i^T W0 x~_j, (m, nt)
            res = solve_transform(H, Xt_a, yt_idx, C_T, solver=self.solver, tol=self.tol,
                                  max_iter=self.max_iter, shrinking=self.shrinking, rng=rng,
                                  alpha0=alpha if self.warm_start else None, offset=offset,
                                  backend=self.backend,
                                  context=f"MMDT.fit W-step {step + 1} (of at most {max_alt})")
            results.append(res)
            alpha, B, H_W = res.alpha, res.beta, H
            Z = Z0 + (Xt_a @ B.T) @ H_W           # W x~_j = (W0 + H_W^T B) x~_j, (nt, D + 1)
            H = ovr_squared_hinge_svm(np.vstack([Xs_a, Z]), y_all, m, weights,
                                      tol=self.svm_tol, max_iter=self.svm_max_iter,
                                      random_state=svm_seed())
            history.append(self._objective(H, H_W, B, Z0, Xs_a, ys_idx, Xt_a, yt_idx, C_S, C_T))
            if history[-2] - history[-1] <= alt_tol * abs(history[-2]):
                break
        self.hyperplanes_ = H
        self.transform_hyperplanes_ = H_W
        self.beta_ = B
        self.alpha_ = alpha
        self.objective_history_ = history
        self.n_alternations_ = len(results)
        self.transform_results_ = results
        self.n_iter_ = np.array([r.n_iter for r in results], dtype=int)
        self.pg_spread_ = np.array([r.pg_spread for r in results])
        self.kkt_violation_ = np.array([r.kkt_violation for r in results])
        self.n_not_converged_ = int(sum(not r.converged for r in results))
        self.converged_ = self.n_not_converged_ == 0
        self._M = H_W @ H.T                       # scores = x~ W0^T H^T + (x~ B^T) H_W H^T
        self._P0 = W0.T @ H.T                     # (Dt + 1, m)
        return self

    @staticmethod
    def _objective(H, H_W, B, Z0, Xs_a, ys_idx, Xt_a, yt_idx, C_S, C_T) -> float:
        """MMDT objective f(W, H) with W = W0 + H_W^T B (Z0 = rows W0 x~_j)."""
        m = H.shape[0]
        Ts = _signs(ys_idx, m)
        Tt = _signs(yt_idx, m)
        xs = np.maximum(0.0, 1.0 - Ts * (H @ Xs_a.T))
        st = Z0 @ H.T + (Xt_a @ B.T) @ (H_W @ H.T)   # (nt, m): h_k^T W x~_j
        xt = np.maximum(0.0, 1.0 - Tt * st.T)
        wsq = float(np.sum((H_W @ H_W.T) * (B @ B.T)))
        return (0.5 * wsq + 0.5 * float(np.sum(H ** 2)) + C_S * float(np.sum(xs ** 2))
                + C_T * float(np.sum(xt ** 2)))

    @property
    def transform_(self) -> np.ndarray:
        """The transform ``W = W0 + transform_hyperplanes_^T beta_``, shape (D + 1, Dt + 1)."""
        self._check_fitted()
        return self.prior_ + self.transform_hyperplanes_.T @ self.beta_

    def _check_fitted(self):
        if not hasattr(self, "beta_"):
            from sklearn.exceptions import NotFittedError
            raise NotFittedError("MMDT is not fitted yet; call fit(Xs, ys, Xt, yt) first")

    # ---------------------------------------------------------------- predict
    def map_to_source(self, X) -> np.ndarray:
        """Target examples in the augmented source space, ``W [x; 1]``.

        Parameters
        ----------
        X : array, shape (n, Dt)

        Returns
        -------
        ndarray, shape (n, D + 1)

        Raises
        ------
        InputError
            If ``X`` is not 2-D with ``Dt`` finite columns.
        NotFittedError
            Before ``fit``.
        """
        self._check_fitted()
        X = _check_matrix(X, "X", self.n_features_in_, " (target features seen in fit)")
        Xa = augment(X)
        return Xa @ self.prior_.T + (Xa @ self.beta_.T) @ self.transform_hyperplanes_

    def decision_function(self, X) -> np.ndarray:
        """Class scores ``h_k^T W [x; 1]`` of target examples.

        Parameters
        ----------
        X : array, shape (n, Dt)
            Target features.

        Returns
        -------
        ndarray, shape (n, m)
            Column k is class ``classes_[k]`` (also for m = 2).

        Raises
        ------
        InputError
            If ``X`` is not 2-D with ``Dt`` finite columns.
        NotFittedError
            Before ``fit``.
        """
        self._check_fitted()
        X = _check_matrix(X, "X", self.n_features_in_, " (target features seen in fit)")
        Xa = augment(X)
        return Xa @ self._P0 + (Xa @ self.beta_.T) @ self._M

    def predict(self, X) -> np.ndarray:
        """Predicted class of target examples (arg max of :meth:`decision_function`).

        Parameters
        ----------
        X : array, shape (n, Dt)

        Returns
        -------
        ndarray, shape (n,)
            Labels from ``classes_``.

        Raises
        ------
        InputError
            If ``X`` is not 2-D with ``Dt`` finite columns.
        NotFittedError
            Before ``fit``.
        """
        return self.classes_[np.argmax(self.decision_function(X), axis=1)]

    def predict_source(self, X) -> np.ndarray:
        """Predicted class of source-domain examples with the final hyperplanes.

        Parameters
        ----------
        X : array, shape (n, D)

        Returns
        -------
        ndarray, shape (n,)

        Raises
        ------
        InputError
            If ``X`` is not 2-D with ``D`` finite columns.
        """
        self._check_fitted()
        X = _check_matrix(X, "X", self.n_source_features_, " (source features seen in fit)")
        return self.classes_[np.argmax(augment(X) @ self.hyperplanes_.T, axis=1)]
