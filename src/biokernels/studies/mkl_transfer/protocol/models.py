"""The models of the transfer-versus-MKL study: the paper's three base
kernels (Laplace ``exp(-||x - z||₂ / L)``, Gaussian ``exp(-γ ||x - z||²)``,
linear ``c · x'z``) with scales fixed from the source training samples
(:func:`resolve_kernel_spec`: ``gamma="match"`` applies the paper's rule,
γ = 1 / (L · median source distance)), and the translated kernel predictor of
Definition 2 (:func:`translate`: ``f_t = f_s + f_c``, kernel regressions with
a ridge relative to the kernel's mean diagonal, chosen by closed-form
leave-one-out from a grid). Pure numpy/SciPy: these rules run in the core
environment (no torch). docs/mkl_transfer_notes.md gives the reasoning."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.spatial.distance import cdist, pdist

from biokernels.errors import InputError
# the torch-free half of the ridge service: these rules run in the core environment (no torch)
from biokernels.solvers.ridge_core import NotPositiveDefiniteError, absolute_ridge, ridge_scale, solve_ridge_exact

KERNEL_NAMES = ("laplace", "gaussian", "linear")
# Relative ridges (ridge_rel: multiples of mean(diag K)) tried by leave-one-out
# for the translation's regressions.
RIDGE_REL_GRID = (1e-6, 1e-4, 1e-3, 1e-2, 1e-1, 1.0)


@dataclass(frozen=True)
class KernelSpec:
    """Resolved scales of the three base kernels.

    Attributes
    ----------
    bandwidth : float  L of the Laplace kernel ``exp(-||x-z||₂/L)``
    gamma : float      γ of the Gaussian kernel ``exp(-γ||x-z||²)``
    linear_scale : float  c of the linear kernel ``c · x'z``
    """

    bandwidth: float
    gamma: float
    linear_scale: float


def _as_matrix(X, name: str) -> np.ndarray:
    A = np.asarray(X, dtype=np.float64)
    if A.ndim != 2 or A.shape[0] == 0:
        raise InputError(f"{name}: expected a non-empty (n_samples, n_features) matrix, got shape {A.shape}")
    if not np.isfinite(A).all():
        raise InputError(f"{name}: NaN or infinite feature values")
    return A


def resolve_kernel_spec(X_source, bandwidth: float = 10.0, gamma: float | str = "match",
                        linear_scale: float | str = "match", max_samples: int = 2000) -> KernelSpec:
    """Fix the base-kernel scales from the source training samples.

    Parameters
    ----------
    X_source : array (n, p), the source training features
    bandwidth : float > 0, Laplace L (paper: 10)
    gamma : float > 0 or "match"
        "match": γ = 1 / (L · median pairwise distance) (the paper's rule,
        see docs/mkl_transfer_notes.md); the paper's CIFAR number is 0.001.
    linear_scale : float > 0 or "match"
        "match": 1 / mean ||x||²; 1.0 is the raw ``x'z``.
    max_samples : int
        The median distance uses at most this many (the first) samples.

    Returns
    -------
    KernelSpec

    Raises
    ------
    InputError
        Non-positive or unknown settings, a single sample or all-identical
        samples with "match", all-zero features with linear "match".
    """
    X = _as_matrix(X_source, "source features")
    if not float(bandwidth) > 0:
        raise InputError(f"kernels.laplace_bandwidth: expected > 0, got {bandwidth}")
    if gamma == "match":
        if X.shape[0] < 2:
            raise InputError("kernels.gaussian_gamma=match needs at least 2 source samples")
        d_med = float(np.median(pdist(X[:max_samples])))
        if not d_med > 0:
            raise InputError("kernels.gaussian_gamma=match: the median source distance is 0")
        g = 1.0 / (float(bandwidth) * d_med)
    elif isinstance(gamma, str) or not float(gamma) > 0:
        raise InputError(f"kernels.gaussian_gamma: expected a number > 0 or 'match', got {gamma!r}")
    else:
        g = float(gamma)
    if linear_scale == "match":
        m = float(np.mean(np.sum(X * X, axis=1)))
        if not m > 0:
            raise InputError("kernels.linear_scale=match: the source features are all zero")
        c = 1.0 / m
    elif isinstance(linear_scale, str) or not float(linear_scale) > 0:
        raise InputError(f"kernels.linear_scale: expected a number > 0 or 'match', got {linear_scale!r}")
    else:
        c = float(linear_scale)
    return KernelSpec(float(bandwidth), g, c)


def base_kernels(X, Z=None, spec: KernelSpec | None = None) -> list[np.ndarray]:
    """The paper's three base kernels between X and Z (numpy, float64).

    Same formulas as :mod:`biokernels.kernels.classic` (torch), in numpy so
    the workflow's rules run in the core environment.

    Parameters
    ----------
    X : array (n, p); Z : array (m, p), optional (defaults to X)
    spec : KernelSpec, default ``KernelSpec(10, 1e-3, 1)`` (the paper's numbers)

    Returns
    -------
    list of 3 ndarrays (n, m): [Laplace, Gaussian, linear] (``KERNEL_NAMES``).
    With Z omitted the matrices are exactly symmetric with unit diagonals for
    Laplace and Gaussian.

    Raises
    ------
    InputError
        Non-finite features or differing feature counts.
    """
    spec = spec or KernelSpec(10.0, 1e-3, 1.0)
    X = _as_matrix(X, "X")
    same = Z is None
    Z = X if same else _as_matrix(Z, "Z")
    if X.shape[1] != Z.shape[1]:
        raise InputError(f"X has {X.shape[1]} features but Z has {Z.shape[1]}")
    D = cdist(X, Z, "euclidean")
    if same:
        D = 0.5 * (D + D.T)
        np.fill_diagonal(D, 0.0)
    lin = spec.linear_scale * (X @ Z.T)
    if same:
        lin = 0.5 * (lin + lin.T)
    return [np.exp(-D / spec.bandwidth), np.exp(-spec.gamma * D * D), lin]


def krr_coefficients(K, y, ridge_rel: float) -> np.ndarray:
    """Kernel regression coefficients ``α = (K + λ I)⁻¹ y`` with ``λ = ridge_rel · mean(diag K)``.

    Solved by the ridge service's exact solve
    (:func:`biokernels.solvers.ridge_core.solve_ridge_exact`: SciPy's
    Cholesky, float64, no intercept; torch-free, as these rules run in the
    core environment); when ``K + λ I`` is not positive definite (``ridge_rel
    = 0`` on a singular K) the minimum-norm least-squares solution
    (``numpy.linalg.lstsq``) is returned instead.

    Parameters
    ----------
    K : array (n, n), symmetric PSD; y : array (n,) or (n, k), float
    ridge_rel : float >= 0, relative to the mean diagonal
        (:func:`~biokernels.solvers.ridge_core.absolute_ridge`; 0 =
        interpolation, the paper's "exact" kernel regression)

    Returns
    -------
    ndarray, the shape of y

    Raises
    ------
    InputError
        Negative or non-finite ``ridge_rel``, shapes that disagree.
    """
    K = np.asarray(K, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if K.ndim != 2 or K.shape[0] != K.shape[1] or y.shape[0] != K.shape[0]:
        raise InputError(f"krr: expected K (n, n) and y (n,), got {K.shape} and {y.shape}")
    lam = absolute_ridge(K, ridge_rel)
    try:
        return solve_ridge_exact(K, y, lam)[0]
    except NotPositiveDefiniteError:
        return np.linalg.lstsq(K + lam * np.eye(K.shape[0]), y, rcond=None)[0]


def loo_ridge_rel(K, y, grid: Sequence[float]) -> tuple[float, np.ndarray, np.ndarray]:
    """Pick the relative ridge ``ridge_rel`` of :func:`krr_coefficients` by leave-one-out squared error.

    Closed form from one eigendecomposition ``K = U Λ U'``: with
    ``A = K + λ I`` (``λ = ridge_rel · mean(diag K)``,
    :func:`~biokernels.solvers.ridge_core.ridge_scale`), the LOO residuals
    are ``(A⁻¹y)_i / (A⁻¹)_ii`` (Allen 1974; Rifkin & Lippert 2007) and
    ``α = U (Λ + λ)⁻¹ U'y``. Eigenvalues are clipped at ``1e-12 · λ_max`` (a
    0 ridge on a singular K).

    This is a different selection criterion (leave-one-out, not a holdout)
    and a different algorithm (one eigendecomposition for the whole grid,
    not a Cholesky per grid value) from the ridge service's
    :func:`~biokernels.solvers.ridge_core.select_ridge_holdout`; it shares
    the service's relative-to-absolute conversion.

    Parameters
    ----------
    K : (n, n) symmetric PSD; y : (n,) float; grid : non-empty ``ridge_rel``
        values >= 0 (relative to mean(diag K)); ties (LOO errors within a
        relative 1e-12 of the minimum) go to the larger ridge.

    Returns
    -------
    ridge_rel : float, the chosen grid value
    alpha : (n,), the coefficients at that ridge
    loo_mse : (len(grid),), the LOO mean squared error of every grid value

    Raises
    ------
    InputError
        Empty grid, a negative ridge, inconsistent shapes.
    """
    grid = [float(g) for g in grid]
    if not grid or min(grid) < 0:
        raise InputError(f"ridge_rel grid: expected non-negative values, got {grid}")
    K = np.asarray(K, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if K.ndim != 2 or K.shape[0] != K.shape[1] or y.shape != (K.shape[0],):
        raise InputError(f"loo_ridge_rel: expected K (n, n) and y (n,), got {K.shape} and {y.shape}")
    evals, U = np.linalg.eigh(0.5 * (K + K.T))
    evals = np.maximum(evals, 1e-12 * max(float(evals.max()), np.finfo(float).tiny))
    Uy = U.T @ y
    U2 = U * U
    scale = ridge_scale(K)
    mse, alphas = [], []
    for g in grid:
        inv = 1.0 / (evals + g * scale)
        alpha = U @ (inv * Uy)
        mse.append(float(np.mean((alpha / (U2 @ inv)) ** 2)))
        alphas.append(alpha)
    mse = np.array(mse)
    best = max(i for i in range(len(grid)) if mse[i] <= mse.min() * (1 + 1e-12))
    return grid[best], alphas[best], mse


def _fit(K, y, ridge_rel) -> tuple[float, np.ndarray]:
    """(ridge_rel, α): a number is used as is, a sequence is a LOO grid (:func:`loo_ridge_rel`)."""
    if isinstance(ridge_rel, (int, float, np.floating)):
        return float(ridge_rel), krr_coefficients(K, y, float(ridge_rel))
    r, a, _ = loo_ridge_rel(K, y, ridge_rel)
    return r, a


def translate(K_ss, y_s, K_ts, K_tt, y_t, K_qs, K_qt, source_ridge_rel: float | Sequence[float] = 1e-4,
              target_ridge_rel: float | Sequence[float] = 1e-4) -> dict:
    """Translated kernel predictor (Definition 2) with precomputed kernels.

    ``f_s = K(·, X_s) α_s`` with ``α_s = krr(K_ss, y_s)``; ``f_c = K(·, X_t) α_c``
    with ``α_c = krr(K_tt, y_t - f_s(X_t))``; ``f_t = f_s + f_c``.

    Parameters
    ----------
    K_ss : (n_s, n_s) source training kernel; y_s : (n_s,) float source targets
    K_ts : (n_t, n_s) target training vs source training
    K_tt : (n_t, n_t) target training kernel; y_t : (n_t,) float target targets
    K_qs : (n_q, n_s) and K_qt : (n_q, n_t) query vs source / target training
    source_ridge_rel, target_ridge_rel : float >= 0, relative ridges (see
        :func:`krr_coefficients`), or a grid chosen by leave-one-out on the
        source samples / on the target residuals (:func:`loo_ridge_rel`)

    Returns
    -------
    dict: ``source`` = f_s(queries), ``correction`` = f_c(queries),
    ``translation`` = f_s + f_c, each (n_q,); ``source_on_target`` = f_s(X_t)
    (n_t,); ``source_ridge_rel``, ``target_ridge_rel``: the relative ridges used.

    Raises
    ------
    InputError
        Inconsistent kernel shapes, negative ridges.

    Notes
    -----
    A huge ``target_ridge_rel`` gives f_c → 0 (translation = source model);
    ``y_s = 0`` gives f_s = 0 (translation = target-only kernel regression).
    Cost: one n_s³/3 and one n_t³/3 Cholesky (an eigendecomposition each
    with grids); memory: the given kernels.
    """
    K_ts, K_qs, K_qt = (np.asarray(a, dtype=np.float64) for a in (K_ts, K_qs, K_qt))
    r_s, a_s = _fit(K_ss, y_s, source_ridge_rel)
    if K_ts.shape != (np.shape(K_tt)[0], a_s.shape[0]) or K_qs.shape[1] != a_s.shape[0] \
            or K_qt.shape != (K_qs.shape[0], np.shape(K_tt)[0]):
        raise InputError(f"translate: inconsistent kernel shapes K_ts {K_ts.shape}, K_tt {np.shape(K_tt)}, "
                         f"K_qs {K_qs.shape}, K_qt {K_qt.shape} for {a_s.shape[0]} source samples")
    fs_t = K_ts @ a_s
    r_t, a_c = _fit(K_tt, np.asarray(y_t, dtype=np.float64) - fs_t, target_ridge_rel)
    fs_q = K_qs @ a_s
    fc_q = K_qt @ a_c
    return {"source": fs_q, "correction": fc_q, "translation": fs_q + fc_q, "source_on_target": fs_t,
            "source_ridge_rel": r_s, "target_ridge_rel": r_t}
