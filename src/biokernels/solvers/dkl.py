"""Adaptive diffusion kernel learning with the KL-divergence criterion.

Source: Sun, Ji & Ye, "Adaptive diffusion kernel learning from biological
networks for protein function prediction", BMC Bioinformatics 9:162 (2008),
Methods: Eq. 10-13 (KL criterion and targets), Theorem 1 (Eq. 17-19),
Eq. 26 (convex form), Eq. 27 and Theorem 2 (multi-task), Eq. 34 (convex
multi-task form) and Table 1 (the six formulations).

Setting and notation
--------------------
The graph Laplacian is ``L = P diag(d) P^T``; the normalised diffusion
kernels ``K~_i`` (Eq. 7) share the eigenvectors ``P`` and have eigenvalues
``S[i]`` (``S`` of shape ``(p, n)``, rows summing to 1; see
:func:`biokernels.kernels.diffusion.diffusion_spectra`). For weights
``alpha`` (shape ``(p,)``) the regularised combined kernel
``K_x = sum_i alpha_i K~_i + lam I`` (Eq. 11) has eigenvalues

    g = alpha @ S + lam                                   (shape (n,))

The targets ``A`` (shape ``(n, t)``, Eq. 13: +1 / -1 on training proteins of
the positive / negative class, 0 on test proteins) enter only through
``B = P^T A`` (shape ``(n, t)``). With the per-eigenvector target energy
``c_j = sum_k B[j, k]^2`` the objectives are (Theorem 1, Theorem 2)

    quadratic term  Q(alpha) = sum_k a_k^T K_x^{-1} a_k = sum_j c_j / g_j
    log term        R(alpha) = t log det K_x            = t sum_j log g_j

so every evaluation is O(p n) and the Hessian O(p^2 n), after the O(n^3)
eigendecomposition and the O(n^2 t) projection ``P^T A``, both done once.
(The paper's Eq. 25 writes the sum inside K_x over j = 1..n; i = 1..p is
meant.)

Formulations (Table 1)
----------------------
======== ============ ========= ===================================== ========
name      tasks        log term  feasible set                          convex
======== ============ ========= ===================================== ========
DKL       each alone   no        simplex (sum = 1, alpha >= 0)         yes
DKLKL     each alone   yes       simplex                               no
DKLKLu    each alone   yes       alpha >= 0 (default) or free, g > 0   no
mDKL      all jointly  no        simplex                               yes
mDKLKL    all jointly  yes       simplex                               no
mDKLKLu   all jointly  yes       alpha >= 0 (default) or free, g > 0   no
======== ============ ========= ===================================== ========

Single-task formulations solve one problem per column of ``B`` (``t = 1``
each); multi-task ones one problem with all columns and the log term
multiplied by ``t`` (Eq. 27). The multi-task quadratic term is the sum over
tasks of the single-task ones and only depends on ``c``.

Convexity: ``Q`` is convex (``1/g`` is convex on ``g > 0`` and ``g`` is linear
in ``alpha``); its Hessian is ``S diag(2 c / g^3) S^T``. ``R`` is concave, so
with the log term the problem is not convex (remark after Theorem 1) and
solvers return a KKT point (local minimum). At ``lam = 1e-6`` the log term is
tiny next to ``Q`` on the simplex and DKL ~ DKLKL.

What "unconstrained" means here (DKLKLu, mDKLKLu)
--------------------------------------------------
The paper "removes the constraints" ``sum(alpha) = 1`` and ``alpha >= 0``
without saying more. Write ``f = sum_j h_j(g_j)`` with
``h_j(g) = c_j / g + t log g``. Facts used below: ``h_j`` is minimal at
``g = c_j / t`` (value ``t + t log(c_j / t)``), ``h_j -> +inf`` as
``g -> +inf`` (the log) and, when ``c_j > 0``, as ``g -> 0+`` (``c/g`` beats
the log). Scaling ``alpha`` up sends ``Q -> 0`` and ``R -> +inf``; the optimum
wants ``g_j ~ c_j / t``, so ``sum(alpha)`` ends up near ``||A||_F^2 / t`` (about
the number of training proteins), far from 1: the "normalising effect" of the
constraints the paper reports (Results). Two readings are implemented
(parameter ``unconstrained`` of :class:`DiffusionKernelLearning`):

``"nonneg"`` (default): drop ``sum(alpha) = 1``, keep ``alpha >= 0``. Always
well posed: ``g >= lam > 0`` on the whole feasible set, so
``h_j(g_j) >= t log lam`` and ``f >= t n log lam`` is bounded below; ``f`` is
coercive on the orthant (``S >= 0`` with unit row sums gives
``sum_j g_j = sum_i alpha_i + n lam``, so ``max_j g_j -> inf`` and its log
term blows up as ``alpha -> inf``); a minimiser exists for every target
(even with some ``c_j = 0``), and the learned
kernel is a non-negative combination of kernels (a valid kernel for an SVM).
At a minimiser with ``alpha != 0`` the scale is optimal: ``alpha^T grad f =
0``. This is the reading we recommend and the default.

``"free"``: drop both; ``alpha`` ranges over ``R^p`` but the KL criterion
(Eq. 10) needs ``K_x`` positive definite, i.e. the open polyhedron
``D = {alpha : alpha @ S + lam > 0}``. If every ``c_j > 0`` and ``S`` has
full row rank, ``f`` is coercive on ``D`` (sublevel sets are compact subsets
of the *open* ``D``): a minimiser exists, lies strictly inside ``D`` and has
zero gradient, so ``g > 0`` acts as an implicit barrier, never as an active
constraint. If some ``c_j = 0`` the infimum can be ``-inf``
(``t log g_j -> -inf``); we raise ``ValueError`` for ``c_j <= 1e-300``.
Caveat, and why this is not the default: the paper's 60 spectra
``exp(-0.1 i d)`` are numerically collinear (singular values of ``S`` span
~30 orders of magnitude), so the free minimiser is numerically ill-posed;
solvers return huge cancelling weights of both signs and stop at different
points with different objectives. Use it with few, well-separated kernels.

Without the log term an unconstrained problem has infimum 0, approached as
``alpha -> inf`` and never attained; hence the paper has no "DKLu", nor do we.

Solvers
-------
Both solvers start from the same point: the best (lowest ``f``) of the
uniform weights ``1/p`` and the ``p`` vertices ``e_i`` (one O(p n) pass);
for the unconstrained variants multiplied by the best scalar factor (a 1-D
search), since the optimum's scale is far from 1.

``"slsqp"``: :func:`scipy.optimize.minimize` with ``method="SLSQP"`` and the
analytic gradient, like the paper's MATLAB ``fmincon`` SQP. The objective is
divided by its value at the start so that ``tol`` (SLSQP's ``ftol``) is
relative; SLSQP is restarted from its own solution (fresh quasi-Newton
matrix) while a run still lowers ``f`` by more than ``tol`` relatively (at
most 5 restarts). For ``unconstrained="free"`` the barrier ``g > 0`` is
passed as the ``n`` linear inequalities ``alpha @ S + lam >= 1e-3 lam``
(a safeguard: SLSQP's steps would otherwise leave ``D``).

``"fast"`` (this module's design): a projected Newton (SQP) method with the
exact Hessian ``H = S diag(w) S^T``, ``w = 2 c / g^3 [- t / g^2]``. Each
outer iteration solves the quadratic model
``min_x G^T (x - alpha) + 1/2 (x - alpha)^T H (x - alpha)`` *exactly* over the
feasible set (simplex or orthant) with a primal active-set method
(Nocedal & Wright, Alg. 16.3; warm-started from alpha, O(k^3) per inner step
for k free weights, independent of n), then does an Armijo backtracking line
search along ``x - alpha`` (always feasible: the set is convex). Columns of
``H`` are computed only for weights that are or become free (O(p n) each),
so an iteration costs O(p n |free|) rather than O(p^2 n). It stops when
:func:`kkt_residual` <= ``tol``; on the simplex that is the Frank-Wolfe gap
``G^T alpha - min_i G_i`` relative to ``|f|``, which for the convex
formulations bounds ``(f - f*) / |f|``. ``H`` gets a tiny
Levenberg-Marquardt ridge ``1e-10 |diag(H)|`` (the spectra are nearly
collinear, so ``H`` is numerically singular). For the formulations with the
log term the model uses ``max(w, 0)`` (convex; the log term's curvature is
negative) to find the active set, and once the active set is settled the
step is the exact-Hessian Newton step on that face (when the reduced
Hessian is positive definite), which restores quadratic convergence. At the
paper's sizes it takes about 5-20 iterations. For ``unconstrained="free"``
the step is ``-(H + mu |diag H|)^{-1} G`` with the exact Hessian if it is
positive definite (else the convexified one) and a Levenberg-Marquardt
damping ``mu`` adapted on success / failure (trust-region style); every
accepted step stays in ``g > 0``.

``"auto"``: ``"fast"`` for every formulation. On all test instances and in
the benchmark (``benchmarks/bench_dkl.py``) it reaches the same optimum as
SLSQP for the constrained formulations (objectives within 1e-7, never
worse) with KKT residuals ~1e-12 instead of 1e-10 to 1e-5, and on the unconstrained
variants SLSQP stops early (KKT residual 1e-3 to 1e-1, objective up to ~1%
higher) while ``"fast"`` converges in 10-30 iterations. ``solver="slsqp"``
reproduces the paper's choice of method.

``converged_`` is scipy's ``success`` flag for SLSQP; for ``"fast"`` it means
:func:`kkt_residual` <= ``tol``, or that no further decrease of ``f`` was
possible in floating point with the residual <= ``1e3 tol``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import scipy.linalg
from scipy.optimize import minimize, minimize_scalar
from threadpoolctl import threadpool_limits

__all__ = [
    "FORMULATIONS",
    "Formulation",
    "target_energy",
    "dkl_objective",
    "dkl_gradient",
    "dkl_hessian",
    "kkt_residual",
    "DiffusionKernelLearning",
]

_TINY = 1e-300


@dataclass(frozen=True)
class Formulation:
    """Properties of one of the paper's formulations (Table 1).

    Attributes
    ----------
    name : str
    multitask : bool
        One problem for all tasks (True) or one per task.
    log_term : bool
        Objective includes ``t log det K_x`` (KL criterion) or not.
    constrained : bool
        Weights on the simplex (``sum = 1, alpha >= 0``) or free.
    convex : bool
    source : str
        Equation / theorem of the paper.
    """

    name: str
    multitask: bool
    log_term: bool
    constrained: bool
    convex: bool
    source: str


FORMULATIONS: dict[str, Formulation] = {
    f.name: f
    for f in (
        Formulation("DKL", False, False, True, True, "Eq. 26"),
        Formulation("DKLKL", False, True, True, False, "Theorem 1 (Eq. 17-19)"),
        Formulation("DKLKLu", False, True, False, False, "Theorem 1 without constraints"),
        Formulation("mDKL", True, False, True, True, "Eq. 34"),
        Formulation("mDKLKL", True, True, True, False, "Theorem 2"),
        Formulation("mDKLKLu", True, True, False, False, "Theorem 2 without constraints"),
    )
}


# --------------------------------------------------------------------------
# validation helpers


def _as_S(S) -> np.ndarray:
    S = np.asarray(S, dtype=np.float64)
    if S.ndim != 2 or S.shape[0] < 1 or S.shape[1] < 1:
        raise ValueError(f"S must be a (p, n) array of kernel spectra, got shape {S.shape}")
    if not np.all(np.isfinite(S)):
        raise ValueError("S holds NaN or infinite values")
    if np.any(S < 0):
        raise ValueError(f"S has negative entries (min {S.min():g}); the spectra of "
                         "positive semi-definite kernels are non-negative")
    return S


def _as_B(B, n: int) -> np.ndarray:
    B = np.asarray(B, dtype=np.float64)
    if B.ndim == 1:
        B = B[:, None]
    if B.ndim != 2 or B.shape[1] < 1:
        raise ValueError(f"B must be an (n, t) array (P^T A), got shape {B.shape}")
    if B.shape[0] != n:
        raise ValueError(f"B has {B.shape[0]} rows but S has n = {n} columns; "
                         "B must be P^T A with one row per eigenvector")
    if not np.all(np.isfinite(B)):
        raise ValueError("B holds NaN or infinite values")
    return B


def _check_lam(lam) -> float:
    lam = float(lam)
    if not (lam > 0 and np.isfinite(lam)):
        raise ValueError(f"lam must be a finite number > 0, got {lam}")
    return lam


def _as_alpha(alpha, p: int) -> np.ndarray:
    alpha = np.asarray(alpha, dtype=np.float64)
    if alpha.shape != (p,):
        raise ValueError(f"alpha must have shape ({p},), got {alpha.shape}")
    if not np.all(np.isfinite(alpha)):
        raise ValueError("alpha holds NaN or infinite values")
    return alpha


def target_energy(B) -> np.ndarray:
    """Per-eigenvector target energy ``c_j = sum_k B[j, k]^2``.

    The quadratic term of Theorem 2 is ``sum_j c_j / g_j``, so the multi-task
    problems only depend on ``c``.

    Parameters
    ----------
    B : array-like, shape (n,) or (n, t)
        ``P^T A``, the targets (Eq. 13) in the eigenbasis of ``L``.

    Returns
    -------
    c : numpy.ndarray, shape (n,), non-negative.

    Raises
    ------
    ValueError
        If ``B`` is not 1-D/2-D or holds NaN/inf.
    """
    B = np.asarray(B, dtype=np.float64)
    if B.ndim == 1:
        B = B[:, None]
    if B.ndim != 2:
        raise ValueError(f"B must be (n,) or (n, t), got shape {B.shape}")
    if not np.all(np.isfinite(B)):
        raise ValueError("B holds NaN or infinite values")
    return np.einsum("jk,jk->j", B, B)


# --------------------------------------------------------------------------
# the objective in the eigenbasis


class _Objective:
    """f(alpha) = sum_j c_j / g_j + [t sum_j log g_j],  g = alpha @ S + lam."""

    def __init__(self, S: np.ndarray, c: np.ndarray, t: int, lam: float, log_term: bool):
        self.S = S
        self.c = c
        self.t = float(t)
        self.lam = lam
        self.log_term = log_term

    def g(self, alpha: np.ndarray) -> np.ndarray:
        return alpha @ self.S + self.lam

    def value(self, alpha: np.ndarray) -> float:
        """Objective value, +inf outside the domain g > 0."""
        g = self.g(alpha)
        if not np.all(g > 0):
            return np.inf
        f = float(self.c @ (1.0 / g))
        if self.log_term:
            f += self.t * float(np.log(g).sum())
        return f

    def value_grad(self, alpha: np.ndarray) -> tuple[float, np.ndarray]:
        g = self.g(alpha)
        if not np.all(g > 0):
            return np.inf, np.full(alpha.shape, np.nan)
        ig = 1.0 / g
        q = self.c * ig
        f = float(q.sum())
        v = -q * ig  # d/dg of c/g
        if self.log_term:
            f += self.t * float(np.log(g).sum())
            v = v + self.t * ig
        return f, self.S @ v

    def curvature(self, alpha: np.ndarray) -> np.ndarray:
        """w with H = S diag(w) S^T."""
        g = self.g(alpha)
        ig = 1.0 / g
        w = 2.0 * self.c * ig ** 3
        if self.log_term:
            w = w - self.t * ig ** 2
        return w

    def hessian(self, alpha: np.ndarray, convexify: bool = False) -> np.ndarray:
        w = self.curvature(alpha)
        if convexify:
            w = np.maximum(w, 0.0)
        return (self.S * w) @ self.S.T


def _objective_from(S, B, lam, log_term) -> _Objective:
    S = _as_S(S)
    B = _as_B(B, S.shape[1])
    return _Objective(S, target_energy(B), B.shape[1], _check_lam(lam), bool(log_term))


def dkl_objective(alpha, S, B, lam: float = 1e-6, log_term: bool = False) -> float:
    """Objective of Theorem 1/2 (or Eq. 26/34 without the log term).

    ``f(alpha) = sum_k sum_j B[j, k]^2 / g_j  [+ t sum_j log g_j]`` with
    ``g = alpha @ S + lam``; equal to
    ``sum_k a_k^T K_x^{-1} a_k [+ t log det K_x]`` with
    ``K_x = sum_i alpha_i K~_i + lam I`` (Eq. 12, 27).

    Parameters
    ----------
    alpha : array-like, shape (p,)
        Kernel weights.
    S : array-like, shape (p, n)
        Spectra of the normalised kernels (non-negative).
    B : array-like, shape (n,) or (n, t)
        ``P^T A``; ``t`` columns = tasks (``t = 1`` for a single task).
    lam : float
        Ridge ``lam > 0`` (paper: 1e-6).
    log_term : bool
        Include ``t log det K_x`` (the KL formulations).

    Returns
    -------
    float
        ``+inf`` when some ``g_j <= 0`` (``K_x`` not positive definite).

    Raises
    ------
    ValueError
        On inconsistent shapes, NaN/inf, negative ``S`` or ``lam <= 0``.
    """
    obj = _objective_from(S, B, lam, log_term)
    return obj.value(_as_alpha(alpha, obj.S.shape[0]))


def dkl_gradient(alpha, S, B, lam: float = 1e-6, log_term: bool = False) -> np.ndarray:
    """Gradient of :func:`dkl_objective` with respect to ``alpha``.

    ``df/dalpha_i = sum_j S[i, j] (-c_j / g_j^2 [+ t / g_j])`` with
    ``c_j = sum_k B[j, k]^2``.

    Parameters
    ----------
    alpha, S, B, lam, log_term
        As :func:`dkl_objective`.

    Returns
    -------
    numpy.ndarray, shape (p,)
        NaN entries when some ``g_j <= 0``.

    Raises
    ------
    ValueError
        As :func:`dkl_objective`.
    """
    obj = _objective_from(S, B, lam, log_term)
    return obj.value_grad(_as_alpha(alpha, obj.S.shape[0]))[1]


def dkl_hessian(alpha, S, B, lam: float = 1e-6, log_term: bool = False) -> np.ndarray:
    """Hessian of :func:`dkl_objective`: ``S diag(w) S^T``.

    ``w_j = 2 c_j / g_j^3 [- t / g_j^2]``. Positive semi-definite without the
    log term (convexity of Eq. 26 / 34); indefinite in general with it.

    Parameters
    ----------
    alpha, S, B, lam, log_term
        As :func:`dkl_objective`.

    Returns
    -------
    numpy.ndarray, shape (p, p), symmetric.

    Raises
    ------
    ValueError
        As :func:`dkl_objective`.
    """
    obj = _objective_from(S, B, lam, log_term)
    return obj.hessian(_as_alpha(alpha, obj.S.shape[0]))


_CONSTRAINTS = ("simplex", "nonneg", "none")


def _kkt_from_grad(alpha: np.ndarray, f: float, G: np.ndarray, constraints: str) -> float:
    scale = max(abs(f), _TINY)
    if constraints == "none":
        return float(np.abs(G).max() * max(np.abs(alpha).max(), 1.0 / alpha.size) / scale)
    infeas = float(np.maximum(-alpha, 0.0).max())
    a = np.maximum(alpha, 0.0)
    if constraints == "simplex":
        infeas = max(infeas, abs(float(alpha.sum()) - 1.0))
        mu = float(G.min())  # multiplier of sum(alpha) = 1; makes nu = G - mu >= 0
        comp = float(a @ (G - mu))  # complementarity sum alpha_i nu_i (Frank-Wolfe gap)
        return max(infeas, comp / scale)
    # nonneg orthant: nu = G must be >= 0 and alpha_i G_i = 0
    comp = float(a @ np.abs(G))
    dual = float(np.maximum(-G, 0.0).sum()) * max(float(a.max()), 1.0 / alpha.size)
    return max(infeas, (comp + dual) / scale)


def kkt_residual(alpha, S, B, lam: float = 1e-6, log_term: bool = False,
                 constraints: str = "simplex") -> float:
    """Relative KKT residual of a solution; 0 exactly at a KKT point.

    With ``G`` the gradient (:func:`dkl_gradient`) and ``f`` the objective:

    ``constraints="simplex"`` (``sum(alpha) = 1``, ``alpha >= 0``; DKL,
    DKLKL, mDKL, mDKLKL): the stationarity condition ``G - mu e - nu = 0``
    with ``nu >= 0`` (multipliers of ``alpha >= 0``) and ``mu`` free
    (multiplier of the sum) holds exactly with ``mu = min_i G_i``,
    ``nu = G - mu`` (at a KKT point ``mu`` must equal ``G_i`` on the support
    and be ``<= G_i`` elsewhere, so this choice is the KKT one). What remains
    is primal feasibility and complementary slackness
    ``sum_i alpha_i nu_i = G^T alpha - min_i G_i`` (the Frank-Wolfe gap; for
    the convex formulations an upper bound on ``f(alpha) - f*``). Returned:
    ``max(|sum(alpha) - 1|, max_i(-alpha_i)_+, gap / |f|)``.

    ``constraints="nonneg"`` (``alpha >= 0`` only; the default unconstrained
    variants): ``nu = G`` must be ``>= 0`` and ``alpha_i G_i = 0``. Returned:
    ``max(max_i(-alpha_i)_+, (sum_i alpha_i |G_i| + max_i alpha_i *
    sum_i (-G_i)_+) / |f|)``.

    ``constraints="none"`` (free weights on ``g > 0``): ``G = 0``. Returned:
    ``max_i |G_i| * max(max_i |alpha_i|, 1/p) / |f|`` (relative first-order
    change of ``f`` for a perturbation of the size of the weights).

    Parameters
    ----------
    alpha : array-like, shape (p,)
    S, B, lam, log_term
        As :func:`dkl_objective`.
    constraints : {"simplex", "nonneg", "none"}
        The feasible set of the formulation.

    Returns
    -------
    float
        Non-negative and dimensionless; ``inf`` if ``K_x`` is not positive
        definite at ``alpha``.

    Raises
    ------
    ValueError
        As :func:`dkl_objective`, or an unknown ``constraints``.
    """
    if constraints not in _CONSTRAINTS:
        raise ValueError(f"constraints must be one of {_CONSTRAINTS}, got {constraints!r}")
    obj = _objective_from(S, B, lam, log_term)
    alpha = _as_alpha(alpha, obj.S.shape[0])
    f, G = obj.value_grad(alpha)
    if not np.isfinite(f):
        return np.inf
    return _kkt_from_grad(alpha, f, G, constraints)

# --------------------------------------------------------------------------
# fast solver: projected Newton with an exact active-set QP on the simplex


class _LazyHessian:
    """Columns of the ridged model Hessian ``S diag(w) S^T + rel diag(.)``,
    computed on demand (O(p n) per column) and cached.

    The active-set QP only touches the columns of the variables that are or
    become free, usually a handful, so an iteration costs O(p |F| n) instead
    of O(p^2 n).
    """

    def __init__(self, S: np.ndarray, w: np.ndarray, rel: float):
        self.S = S
        self.Sw = S * w
        dg = (S * self.Sw).sum(axis=1)  # diag(H), O(p n)
        self.ridge = rel * np.maximum(dg, 1e-300 + 1e-14 * max(float(dg.max()), 0.0))
        p = S.shape[0]
        self.H = np.empty((p, p))
        self.have = np.zeros(p, dtype=bool)
        self.scale = float(np.abs(dg).max() + self.ridge.max())

    def cols(self, idx: np.ndarray) -> np.ndarray:
        miss = idx[~self.have[idx]]
        if miss.size:
            block = self.S @ self.Sw[miss].T  # (p, |miss|)
            block[miss, np.arange(miss.size)] += self.ridge[miss]
            self.H[:, miss] = block
            self.H[miss, :] = block.T
            self.have[miss] = True
        return self.H[:, idx]


def _face_minimiser(H: _LazyHessian, q: np.ndarray, F: np.ndarray,
                    simplex: bool) -> tuple[np.ndarray, float]:
    """argmin 1/2 x^T H x + q^T x over x_F (x = 0 off F), with sum x_F = 1
    if ``simplex``. Returns (x_F, mu), mu the multiplier of the sum (0 if not).
    ``H`` is positive definite (ridged), so a plain LU solve is accurate."""
    HF = H.cols(F)[F]
    if not simplex:
        return -np.linalg.solve(HF, q[F]), 0.0
    rhs = np.empty((F.size, 2))
    rhs[:, 0] = q[F]
    rhs[:, 1] = 1.0
    vu = np.linalg.solve(HF, rhs)
    v, u = vu[:, 0], vu[:, 1]
    mu = (1.0 + v.sum()) / u.sum()
    return mu * u - v, mu


def _active_set_qp(H: _LazyHessian, q: np.ndarray, x0: np.ndarray, simplex: bool,
                   max_iter: int) -> np.ndarray:
    """Primal active-set method for min 1/2 x^T H x + q^T x, x >= 0 (and
    sum x = 1 if ``simplex``); Nocedal & Wright, Algorithm 16.3.

    ``H`` positive definite, ``x0`` feasible (warm start; its zeros are the
    initial working set). Returns the exact minimiser up to rounding, or the
    last (feasible, no worse) iterate if ``max_iter`` is hit.
    """
    x = x0.copy()
    active = x <= 0.0
    x[active] = 0.0
    if not simplex and active.all():
        active[:] = False
    gscale = H.scale * max(np.abs(x).max(), 1.0) + np.abs(q).max()
    for _ in range(max_iter):
        F = np.flatnonzero(~active)
        if F.size == 0:  # only possible without the sum constraint: x = 0
            x[:] = 0.0
            nu = q.copy()
        else:
            xF, mu = _face_minimiser(H, q, F, simplex)
            if not np.all(xF >= 0.0):
                # move towards the face minimiser until the first bound blocks
                d = xF - x[F]
                neg = d < 0
                ratios = np.full(F.size, np.inf)
                ratios[neg] = x[F][neg] / -d[neg]
                k = int(np.argmin(ratios))
                step = min(1.0, float(ratios[k]))
                x[F] = np.maximum(x[F] + step * d, 0.0)
                x[F[k]] = 0.0
                active[F[k]] = True
                continue
            x[:] = 0.0
            x[F] = xF
            if not active.any():
                return x
            nu = (H.cols(F) @ xF + q) - mu
        nu[~active] = np.inf
        i = int(np.argmin(nu))
        if nu[i] >= -1e-13 * gscale:
            return x
        active[i] = False  # release the most violated bound
    return x


def _ridge(H: np.ndarray, rel: float) -> np.ndarray:
    """H + rel |diag(H)| (Levenberg-Marquardt scaling), diag floored > 0."""
    dg = np.abs(np.diag(H))
    dg = np.maximum(dg, 1e-300 + 1e-14 * dg.max())
    return H + np.diag(rel * dg)


def _newton_step(obj: _Objective, alpha: np.ndarray, G: np.ndarray, constraints: str,
                 qp_iter: int) -> np.ndarray:
    """Minimiser of the (convexified, ridged) Newton model over the feasible set."""
    w = obj.curvature(alpha)
    if obj.log_term:
        w = np.maximum(w, 0.0)
    if not np.any(w > 0):  # no curvature information (e.g. zero targets): no model
        return alpha.copy()
    rel = 1e-10
    while True:
        try:
            H = _LazyHessian(obj.S, w, rel)
            supp = np.flatnonzero(alpha > 0)
            q = G - H.cols(supp) @ alpha[supp]
            return _active_set_qp(H, q, alpha, constraints == "simplex", qp_iter)
        except (np.linalg.LinAlgError, scipy.linalg.LinAlgError):
            rel *= 100.0
            if rel > 1.0:
                raise


def _face_newton(obj: _Objective, alpha: np.ndarray, G: np.ndarray, F: np.ndarray,
                 simplex: bool) -> np.ndarray | None:
    """Exact-Hessian Newton direction on the face {alpha_i = 0 off F} (and
    sum d = 0 if ``simplex``); None if the reduced Hessian is not positive
    definite. Used once the active set has settled, for quadratic convergence
    of the formulations with the (concave) log term."""
    SF = obj.S[F]
    H = (SF * obj.curvature(alpha)) @ SF.T
    dg = np.abs(np.diag(H))
    H = H + np.diag(1e-10 * np.maximum(dg, 1e-300 + 1e-14 * dg.max()))
    try:
        cho = scipy.linalg.cho_factor(H, check_finite=False)
    except (np.linalg.LinAlgError, scipy.linalg.LinAlgError):
        return None
    v = scipy.linalg.cho_solve(cho, G[F], check_finite=False)
    dF = -v
    if simplex:
        u = scipy.linalg.cho_solve(cho, np.ones(F.size), check_finite=False)
        dF = dF + (v.sum() / u.sum()) * u
    d = np.zeros_like(alpha)
    d[F] = dF
    return d if np.all(np.isfinite(d)) else None


def _fast_free(obj: _Objective, alpha0: np.ndarray, tol: float, max_iter: int):
    """Levenberg-Marquardt-damped Newton method on the open domain g > 0.

    Step ``d = -(H + mu |diag(H)|)^{-1} G`` with ``H`` the exact Hessian when
    it is positive definite, else the convexified one (``w -> max(w, 0)``);
    a step is accepted when it stays in ``g > 0`` and satisfies the Armijo
    condition, then ``mu`` is divided by 10, otherwise multiplied by 10 (a
    trust-region mechanism: the spectra are nearly collinear, so plain
    Newton steps are astronomically long in near-null directions).
    Returns (alpha, f, n_iter, converged).
    """
    alpha = alpha0.copy()
    f, G = obj.value_grad(alpha)
    mu = 1e-3
    n_iter = 0
    converged = False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)
        while True:
            if _kkt_from_grad(alpha, f, G, "none") <= tol:
                converged = True
                break
            if n_iter >= max_iter:
                break
            n_iter += 1
            H = obj.hessian(alpha)
            try:
                np.linalg.cholesky(_ridge(H, 1e-10))
            except np.linalg.LinAlgError:
                H = obj.hessian(alpha, convexify=True)
            while mu < 1e20:
                try:
                    d = -scipy.linalg.solve(_ridge(H, mu), G, assume_a="pos", check_finite=False)
                except (np.linalg.LinAlgError, scipy.linalg.LinAlgError):
                    mu *= 10.0
                    continue
                slope = float(G @ d)
                f_new = obj.value(alpha + d) if slope < 0 else np.inf
                if f_new <= f + 1e-4 * slope or (  # decrease below the rounding of f
                        -slope <= 1e-13 * abs(f) and f_new <= f + 1e-15 * abs(f)):
                    mu = max(mu / 10.0, 1e-12)
                    break
                mu *= 10.0
            else:  # no decrease even for tiny steps: stalled at machine precision
                break
            alpha = alpha + d
            f, G = obj.value_grad(alpha)
    return alpha, f, n_iter, converged


def _fast(obj: _Objective, alpha0: np.ndarray, constraints: str, tol: float, max_iter: int):
    """Projected Newton method with an exact QP subproblem; see the module doc.

    Returns (alpha, f, n_iter, converged).
    """
    if constraints == "none":
        return _fast_free(obj, alpha0, tol, max_iter)
    alpha = alpha0.copy()
    f, G = obj.value_grad(alpha)
    p = alpha.size
    n_iter = 0
    converged = False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)
        while True:
            kkt = _kkt_from_grad(alpha, f, G, constraints)
            if kkt <= tol:
                converged = True
                break
            if n_iter >= max_iter:
                break
            n_iter += 1
            with np.errstate(all="ignore"):
                x = _newton_step(obj, alpha, G, constraints, qp_iter=10 * p + 50)
            d = x - alpha if np.all(np.isfinite(x)) else np.zeros_like(alpha)
            step = 1.0
            if obj.log_term and np.array_equal(x > 0, alpha > 0):
                # active set settled: exact Newton step on the face (the convex
                # model above drops the log term's negative curvature)
                d2 = _face_newton(obj, alpha, G, np.flatnonzero(alpha > 0),
                                  constraints == "simplex")
                if d2 is not None and float(G @ d2) < 0:
                    neg = d2 < 0
                    d = d2
                    step = min(1.0, float(np.min(alpha[neg] / -d2[neg]))) if neg.any() else 1.0
            slope = float(G @ d)
            if not slope < 0:  # no descent from the model (rounding): gradient-type step
                if constraints == "simplex":
                    d = -alpha.copy()
                    d[int(np.argmin(G))] += 1.0  # Frank-Wolfe vertex
                else:  # projected gradient step on the orthant
                    scale = max(alpha.max(), 1e-300) / max(np.abs(G).max(), 1e-300)
                    d = np.maximum(alpha - G * scale, 0.0) - alpha
                slope = float(G @ d)
                step = 1.0
                if not slope < 0:
                    break
            # the predicted decrease is below the rounding of f: accept a full
            # step that does not increase f beyond rounding (Armijo cannot
            # resolve it, the KKT residual then tells whether it helped)
            tiny = -slope <= 1e-13 * abs(f)
            while True:
                a_new = alpha + step * d
                f_new = obj.value(a_new)  # +inf outside g > 0
                if f_new <= f + 1e-4 * step * slope:
                    break
                if tiny and f_new <= f + 1e-15 * abs(f):
                    break
                step *= 0.5
                if step < 1e-20:
                    a_new = None
                    break
            if a_new is None:  # no decrease at machine precision: stalled
                converged = bool(kkt <= 1e3 * tol)
                break
            a_new = np.maximum(a_new, 0.0)
            if constraints == "simplex":
                a_new /= a_new.sum()
            alpha = a_new
            f, G = obj.value_grad(alpha)
    return alpha, f, n_iter, converged


# --------------------------------------------------------------------------
# SLSQP (the paper's fmincon SQP)


def _initial_point(obj: _Objective, constraints: str) -> np.ndarray:
    """Common starting point of both solvers.

    The best of the uniform weights ``1/p`` and the p vertices ``e_i`` of the
    simplex (all evaluated in one O(p n) pass); for the unconstrained variants
    then multiplied by the best scalar factor (:func:`_best_scale`).
    """
    p = obj.S.shape[0]
    G = obj.S + obj.lam  # row i: spectrum of K~_i + lam I
    fv = (obj.c / G).sum(axis=1)
    if obj.log_term:
        fv = fv + obj.t * np.log(G).sum(axis=1)
    uniform = np.full(p, 1.0 / p)
    i = int(np.argmin(fv))
    if fv[i] < obj.value(uniform):
        alpha0 = np.zeros(p)
        alpha0[i] = 1.0
    else:
        alpha0 = uniform
    if constraints != "simplex":
        alpha0 = _best_scale(obj, alpha0)
    return alpha0


def _best_scale(obj: _Objective, alpha: np.ndarray) -> np.ndarray:
    """``s* alpha`` with ``s* = argmin_s f(s alpha)`` (1-D search on log s).

    Starting point of both solvers for the unconstrained variants: the
    optimum's scale (about ``||A||_F^2 / t``) is far from ``sum(alpha) = 1``.
    """
    res = minimize_scalar(lambda z: obj.value(np.exp(z) * alpha), bounds=(-30.0, 30.0),
                          method="bounded", options={"xatol": 1e-6})
    z = float(res.x) if obj.value(np.exp(res.x) * alpha) <= obj.value(alpha) else 0.0
    return np.exp(z) * alpha


def _slsqp_run(obj: _Objective, alpha0: np.ndarray, constraints: str, tol: float,
               max_iter: int):
    f0 = obj.value(alpha0)
    scale = max(abs(f0), _TINY)

    def fun(a):
        f, G = obj.value_grad(a)
        if not np.isfinite(f):  # outside g > 0 (only possible for constraints="none")
            return 1e30, np.zeros_like(a)
        return f / scale, G / scale

    p = alpha0.size
    cons: list[dict] = []
    bounds = None
    if constraints in ("simplex", "nonneg"):
        bounds = [(0.0, None)] * p
    if constraints == "simplex":
        cons = [{"type": "eq", "fun": lambda a: np.array([a.sum() - 1.0]),
                 "jac": lambda a: np.ones((1, p))}]
    elif constraints == "none":
        S, lam = obj.S, obj.lam
        cons = [{"type": "ineq", "fun": lambda a: (a @ S + lam) - 1e-3 * lam,
                 "jac": lambda a: S.T}]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        res = minimize(fun, alpha0, jac=True, method="SLSQP", bounds=bounds, constraints=cons,
                       options={"ftol": tol, "maxiter": max_iter})
    alpha = np.asarray(res.x, dtype=np.float64)
    if constraints != "none":
        alpha = np.maximum(alpha, 0.0)
    if constraints == "simplex":
        alpha /= alpha.sum()
    return alpha, obj.value(alpha), int(res.nit), bool(res.success)


def _slsqp(obj: _Objective, alpha0: np.ndarray, constraints: str, tol: float, max_iter: int,
           max_restarts: int = 5):
    """scipy SLSQP with the analytic gradient, restarted from its own solution
    (fresh BFGS matrix, objective rescaled by its current value) while a run
    still lowers ``f`` by more than ``tol`` relatively.

    Returns (alpha, f, total major iterations, success of the last run).
    """
    alpha, f = alpha0, obj.value(alpha0)
    nit_total, ok = 0, False
    for _ in range(1 + max_restarts):
        a_new, f_new, nit, ok = _slsqp_run(obj, alpha, constraints, tol, max_iter - nit_total)
        nit_total += nit
        improved = f_new < f - tol * abs(f)
        if f_new <= f:
            alpha, f = a_new, f_new
        if not improved or nit_total >= max_iter:
            break
    return alpha, f, nit_total, ok


# --------------------------------------------------------------------------
# estimator


class DiffusionKernelLearning:
    """Learn diffusion-kernel weights by the KL criterion (Sun, Ji & Ye 2008).

    Parameters
    ----------
    formulation : {"DKL", "DKLKL", "DKLKLu", "mDKL", "mDKLKL", "mDKLKLu"}
        Table 1 of the paper (see :data:`FORMULATIONS` and the module
        docstring): DKL = Eq. 26, DKLKL = Theorem 1, DKLKLu = Theorem 1
        without constraints; the ``m`` versions are the multi-task ones
        (Eq. 34, Theorem 2, Theorem 2 without constraints).
    lam : float
        Ridge ``lam > 0`` of ``K_x = sum_i alpha_i K~_i + lam I`` (Eq. 11);
        paper: 1e-6.
    solver : {"auto", "slsqp", "fast"}
        See the module docstring. ``"auto"`` is ``"fast"``; ``"slsqp"`` is the
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
        ``g > 0`` (see the module docstring for why ``"nonneg"`` is the
        default).

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
        See the module docstring (Solvers).
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
        lam = _check_lam(self.lam)
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
