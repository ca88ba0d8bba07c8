"""The parts of the kernel ridge service that need no torch (numpy, SciPy, pandas).

:mod:`biokernels.solvers.ridge` re-exports everything here; import from this
module only where torch is absent (the core environment,
``workflow/envs/core.yaml``). Kernel ridge (Radhakrishnan et al. 2023, Methods
Eq. 1-2; ``sklearn.kernel_ridge.KernelRidge(kernel="precomputed",
alpha=lam)``) solves ``(K + lam I) alpha = Y`` and predicts
``f(x) = k(x, X) alpha``. ``lam`` / ``ridge`` is the **absolute** λ added to
the diagonal; ``ridge_rel`` is relative, ``lam = ridge_rel · mean(diag K)``
(:func:`absolute_ridge`).

Holds :func:`center_targets`, :func:`solve_ridge_exact` (LAPACK ``potrf`` +
``potrs``), :func:`ridge_scale`, :func:`absolute_ridge`,
:func:`holdout_split` and :func:`select_ridge_holdout`.

Notes: docs/ridge_notes.md, section "Torch-free core (solvers/ridge_core)".
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
import scipy.linalg

from biokernels.errors import InputError
from biokernels.solvers.checks import check_lam

__all__ = ["NotPositiveDefiniteError", "check_lam", "center_targets", "solve_ridge_exact", "ridge_scale",
           "absolute_ridge", "holdout_split", "select_ridge_holdout"]


class NotPositiveDefiniteError(InputError):
    """``K + lam I`` is not positive definite: the Cholesky factorisation
    broke down (the message names the row where it can, and the ``lam``).
    An :class:`~biokernels.errors.InputError`, hence a ValueError."""


def center_targets(Y) -> tuple[np.ndarray, np.ndarray]:
    """Centre the targets of a kernel ridge fit with an intercept.

    Kernel ridge with an (unpenalised) intercept ``b`` minimises
    ``||Y - K alpha - 1 b'||^2 + lam alpha' K alpha``; for a fixed alpha the
    optimal ``b`` is the mean of ``Y - K alpha``. Fitting ``Y - mean(Y)``
    and adding ``mean(Y)`` back (this function, called by ``fit_intercept``
    of :func:`solve_ridge_exact` and :func:`biokernels.solvers.ridge.solve_ridge`)
    is the common convention of the studies: large ridges shrink the
    predictions towards the training mean, not towards 0. It is the exact
    intercept solution for a linear kernel after centring the features
    (scikit-learn's ``Ridge(fit_intercept=True)``), and an approximation
    otherwise (the mean of ``K alpha`` is not removed).

    Parameters
    ----------
    Y : array-like, shape (n,) or (n, c); a CPU torch tensor is accepted
        (``numpy.asarray``).

    Returns
    -------
    Yc : ndarray float64, shape of Y
        ``Y - intercept``, computed in float64.
    intercept : ndarray float64, shape (c,) for a 2-D Y, 0-d for a 1-D Y
        Column means of Y (numpy's pairwise summation, float64).

    Raises
    ------
    InputError
        Y with no rows or more than 2 dimensions.
    """
    Yn = np.asarray(Y, dtype=np.float64)
    if Yn.ndim not in (1, 2) or Yn.shape[0] == 0:
        raise InputError(f"Y: expected shape (n,) or (n, c) with n >= 1, got {Yn.shape}")
    intercept = np.asarray(Yn.mean(axis=0))
    return Yn - intercept, intercept


def solve_ridge_exact(K, Y, lam: float, *, fit_intercept: bool = False, overwrite: bool = False
                      ) -> tuple[np.ndarray, dict]:
    """Solve ``(K + lam I) alpha = Y`` for numpy arrays by SciPy's Cholesky.

    One LAPACK ``potrf`` (``scipy.linalg.cho_factor``, lower) and one
    ``potrs`` (``scipy.linalg.cho_solve``), in K's dtype. Only the lower
    triangle of ``K + lam I`` is read.

    Parameters
    ----------
    K : ndarray, shape (n, n), float32 or float64
        Symmetric positive semi-definite kernel matrix.
    Y : array-like, shape (n,) or (n, c)
        Targets (converted to K's dtype after the optional centring).
    lam : float
        Absolute ridge ``lam >= 0`` (scikit-learn's ``alpha``).
    fit_intercept : bool
        Fit ``Y - mean(Y)`` (:func:`center_targets`); the means are returned
        as ``info["intercept"]``: predict ``K_test @ alpha + intercept``.
    overwrite : bool
        Add ``lam`` to K's diagonal in place (K is modified); otherwise a
        copy of K is made first.

    Returns
    -------
    alpha : ndarray, shape like Y, K's dtype
    info : dict
        ``method`` ("cholesky"), ``backend`` ("scipy"), ``dtype``,
        ``device`` ("cpu"), ``n``, ``n_rhs``, ``lam``, ``iterations`` (0),
        ``converged`` (True), ``intercept`` (ndarray or None),
        ``factor_s``, ``substitution_s``, ``time_s``.

    Raises
    ------
    InputError
        K not a square float32/float64 numpy matrix, Y of the wrong rows or
        dimensions, NaN or inf in K or Y, ``lam`` negative or not finite.
    NotPositiveDefiniteError
        ``K + lam I`` is not positive definite.

    Source: kernel ridge regression (Radhakrishnan et al. 2023, Methods
    Eq. 1-2); LAPACK potrf/potrs via SciPy (library).
    """
    t0 = time.perf_counter()
    lam = check_lam(lam)
    if not isinstance(K, np.ndarray) or K.dtype not in (np.float32, np.float64):
        raise InputError(f"K: expected a float32 or float64 numpy array, got "
                         f"{getattr(K, 'dtype', type(K).__name__)}")
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise InputError(f"K: expected a square 2-D matrix, got shape {K.shape}")
    n = K.shape[0]
    intercept = None
    if fit_intercept:
        Y, intercept = center_targets(Y)
    Yn = np.asarray(Y)
    if Yn.ndim not in (1, 2):
        raise InputError(f"Y: expected shape (n,) or (n, c), got {Yn.shape}")
    if Yn.shape[0] != n:
        raise InputError(f"K has {n} rows but Y has {Yn.shape[0]}")
    Yn = Yn.astype(K.dtype, copy=False)
    if not np.isfinite(Yn).all():
        raise InputError("Y holds NaN or infinite values")
    if not np.isfinite(K).all():
        raise InputError("K holds NaN or infinite values")
    A = K if overwrite and K.flags.writeable else K.copy()
    A.flat[::n + 1] += lam
    t1 = time.perf_counter()
    try:
        cho = scipy.linalg.cho_factor(A, lower=True, check_finite=False)
    except np.linalg.LinAlgError as exc:
        raise NotPositiveDefiniteError(f"matrix is not positive definite ({exc}) after adding lam = {lam} to the "
                                       f"diagonal; increase lam") from None
    t2 = time.perf_counter()
    alpha = scipy.linalg.cho_solve(cho, Yn, check_finite=False)
    t3 = time.perf_counter()
    info = {"method": "cholesky", "backend": "scipy", "dtype": str(K.dtype), "device": "cpu", "n": n,
            "n_rhs": 1 if Yn.ndim == 1 else int(Yn.shape[1]), "lam": lam, "iterations": 0, "converged": True,
            "intercept": intercept, "factor_s": t2 - t1, "substitution_s": t3 - t2, "time_s": t3 - t0}
    return alpha, info


def ridge_scale(K) -> float:
    """Mean diagonal of K, ``mean(diag K)`` (floored at the smallest
    positive float64, so a zero kernel still gives a positive scale): the
    unit of a relative ridge. K : array (n, n)."""
    return max(float(np.mean(np.diag(np.asarray(K)))), np.finfo(float).tiny)


def absolute_ridge(K, ridge_rel: float) -> float:
    """The absolute ridge ``lam = ridge_rel · mean(diag K)`` (:func:`ridge_scale`).

    Parameters
    ----------
    K : array (n, n)
    ridge_rel : float >= 0, relative to the mean diagonal

    Raises
    ------
    InputError
        ``ridge_rel`` negative or not finite.
    """
    return check_lam(ridge_rel, "ridge_rel") * ridge_scale(K)


def holdout_split(n: int, subset: int, seed: int, frac: float = 0.2, *, name: str = "subset"
                  ) -> tuple[np.ndarray, np.ndarray]:
    """A random subset of ``min(n, subset)`` positions, split into training
    and validation positions for ridge selection.

    The subset is the first ``min(n, subset)`` entries of
    ``numpy.random.default_rng(seed).permutation(n)``; its first
    ``max(1, round(frac · size))`` entries are the validation positions,
    the rest the training positions.

    Parameters
    ----------
    n : int, positions available (0 .. n-1)
    subset : int, most positions used
    seed : int
    frac : float in (0, 1), validation share
    name : str, the config field of ``subset`` (error messages)

    Returns
    -------
    (train, validation) : int arrays of positions, disjoint

    Raises
    ------
    InputError
        Fewer than 2 positions to split (``n`` or ``subset`` < 2), or ``frac``
        outside (0, 1).
    """
    if not 0 < frac < 1:
        raise InputError(f"holdout fraction: expected a number in (0, 1), got {frac}")
    if min(int(n), int(subset)) < 2:
        raise InputError(f"{name}: a holdout needs at least 2 samples, got {min(int(n), int(subset))} "
                         f"({n} available, subset {subset})")
    rng = np.random.default_rng(seed)
    pick = rng.permutation(n)[:min(n, subset)]
    n_val = max(1, int(round(frac * len(pick))))
    return pick[n_val:], pick[:n_val]


def select_ridge_holdout(fit_score: Callable[[float, np.ndarray, np.ndarray], float], n: int,
                         grid: Sequence[float], *, subset: int, seed: int, frac: float = 0.2,
                         score_name: str = "r2", name: str = "ridge") -> tuple[float, pd.DataFrame]:
    """Choose the ridge λ on a grid by a holdout: split, score every λ, pick.

    The positions ``0 .. n-1`` are split once by :func:`holdout_split`
    (``subset``, ``seed``, ``frac``); every λ of ``grid`` is scored by
    ``fit_score(lam, train, validation)`` (fit on the training positions,
    score the validation ones; higher is better, e.g. the validation mean
    R²); the chosen λ has the highest score, **the smallest λ on ties** (the
    most regularised model is not preferred: ties arise when the score
    saturates at small λ). A NaN score ranks below every number.

    Parameters
    ----------
    fit_score : callable (lam, train, validation) -> float
        ``lam`` is the grid value as given; ``train``, ``validation`` are
        int position arrays.
    n : int, number of samples
    grid : non-empty sequence of absolute ridges >= 0
    subset, seed, frac : see :func:`holdout_split`
    score_name : str, the score's column in the table
    name : str, the config section (error messages: ``{name}.grid``,
        ``{name}.subset``)

    Returns
    -------
    lam : float, the chosen grid value
    table : DataFrame with columns ``lam`` (float), ``score_name`` (float),
        ``chosen`` (bool: ``lam`` equals the chosen value), one row per grid
        value in grid order.

    Raises
    ------
    InputError
        Empty grid, a negative or non-finite λ, fewer than 2 samples.
    """
    grid = list(grid)
    if not grid:
        raise InputError(f"{name}.grid: expected at least one ridge")
    for lam in grid:
        check_lam(lam, f"{name}.grid value")
    train, val = holdout_split(n, subset, seed, frac, name=f"{name}.subset")
    table = pd.DataFrame([{"lam": float(lam), score_name: float(fit_score(lam, train, val))} for lam in grid])
    best = float(table.sort_values([score_name, "lam"], ascending=[False, True]).iloc[0]["lam"])
    table["chosen"] = table["lam"] == best
    return best, table
