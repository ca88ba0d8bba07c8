"""The DKL objective in the eigenbasis of the graph Laplacian, and its KKT residual.

Sun, Ji & Ye 2008, Theorems 1-2 (Eq. 26 and 34 without the log term): with
``g = alpha @ S + lam`` and the target energy ``c_j = sum_k B[j, k]^2``,
``f(alpha) = sum_j c_j / g_j [+ t sum_j log g_j]``; value, gradient and
Hessian cost O(p n) / O(p^2 n). Also the input checks shared by the solvers
and the estimator. Notation and derivations: ``docs/diffusion_notes.md``.
"""

from __future__ import annotations

import numpy as np

from biokernels.solvers.checks import check_lam

__all__ = [
    "target_energy",
    "dkl_objective",
    "dkl_gradient",
    "dkl_hessian",
    "kkt_residual",
]

_TINY = 1e-300


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
    return _Objective(S, target_energy(B), B.shape[1], check_lam(lam, interval="(0, inf)"), bool(log_term))


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
