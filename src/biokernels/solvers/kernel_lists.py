"""Input checks shared by the multiple-kernel-learning solvers.

Every MKL method in :mod:`biokernels.solvers.easymkl` and
:mod:`biokernels.solvers.mkl` takes a *list of precomputed kernels*, as MKLpy
does (DESIGN.md): ``Ks[r]`` of shape ``(n_train, n_train)`` for training and
``(n_test, n_train)`` for prediction. The helpers here turn such lists into
float64 numpy arrays and raise :class:`biokernels.io.networks.InputError` (a
``ValueError`` subclass) with the offending kernel's INDEX and what was expected.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.linalg

from biokernels.io.networks import InputError

__all__ = ["check_kernel_list", "check_test_kernel_list", "check_binary_labels",
           "check_weights", "combine_kernels"]


def _as_2d(K, r: int) -> np.ndarray:
    if hasattr(K, "detach"):                      # torch tensor
        K = K.detach().cpu().numpy()
    try:
        A = np.asarray(K, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"kernel {r}: expected a numeric 2-D array, got {type(K).__name__} ({exc})") from None
    if A.ndim != 2:
        raise InputError(f"kernel {r}: expected a 2-D (n, m) matrix, got shape {A.shape}")
    if not np.isfinite(A).all():
        bad = np.argwhere(~np.isfinite(A))[0]
        raise InputError(f"kernel {r}: expected finite entries, found {A[tuple(bad)]} at row {bad[0]}, "
                         f"column {bad[1]}")
    return A


def _min_eig_below(K: np.ndarray, eps: float) -> float | None:
    """Return λ_min(K) when it is below ``-eps`` (K is then not PSD), else None.

    A Cholesky factorisation of ``K + eps I`` exists iff ``λ_min(K) > -eps``; it
    costs n³/3 flops, several times less than an eigendecomposition, which is
    only done when the factorisation fails, to report the value.
    """
    n = K.shape[0]
    try:
        scipy.linalg.cholesky(K + eps * np.eye(n), lower=True, check_finite=False)
        return None
    except np.linalg.LinAlgError:
        lam_min = float(scipy.linalg.eigvalsh(K, subset_by_index=[0, 0], check_finite=False)[0])
        return lam_min if lam_min < -eps else None


def check_kernel_list(Ks, *, psd_tol: float | None = 1e-8, sym_tol: float = 1e-8,
                      min_kernels: int = 1) -> list[np.ndarray]:
    """Validate a list of training kernels.

    Parameters
    ----------
    Ks : sequence of array-like (numpy, torch tensors), each shape (n, n)
        The P precomputed training kernels.
    psd_tol : float or None
        A kernel whose smallest eigenvalue is ``< -psd_tol * trace(K)`` is
        rejected as not positive semi-definite. ``None`` skips the check (it
        costs one Cholesky factorisation, n³/3 flops, per kernel).
    sym_tol : float
        A kernel with ``max|K - K'| > sym_tol * max(1, max|K|)`` is rejected.
    min_kernels : int
        Fewest kernels accepted.

    Returns
    -------
    list of ndarray, float64, each (n, n)
        New arrays only where a conversion was needed (float64 numpy input is
        passed through without copying).

    Raises
    ------
    InputError
        Not a sequence, fewer than ``min_kernels`` kernels; for kernel ``r``:
        not 2-D, NaN/inf, non-square, a shape different from kernel 0,
        not symmetric, or not PSD. The message names the index ``r``.
    """
    if isinstance(Ks, np.ndarray) and Ks.ndim == 3:
        Ks = list(Ks)
    if not isinstance(Ks, Sequence) and not (hasattr(Ks, "__len__") and hasattr(Ks, "__getitem__")):
        raise InputError(f"expected a list of precomputed kernels, got {type(Ks).__name__}")
    if len(Ks) < min_kernels:
        raise InputError(f"expected at least {min_kernels} kernel(s), got {len(Ks)}")
    out = []
    for r, K in enumerate(Ks):
        A = _as_2d(K, r)
        if A.shape[0] != A.shape[1]:
            raise InputError(f"kernel {r}: expected a square (n_train, n_train) training kernel, "
                             f"got shape {A.shape}")
        if out and A.shape != out[0].shape:
            raise InputError(f"kernel {r}: expected shape {out[0].shape} like kernel 0, got {A.shape}")
        scale = max(1.0, float(np.abs(A).max()))
        asym = float(np.abs(A - A.T).max())
        if asym > sym_tol * scale:
            raise InputError(f"kernel {r}: expected a symmetric matrix, max |K - K'| = {asym:.3g}")
        if psd_tol is not None:
            tr = float(np.trace(A))
            lam_min = _min_eig_below(A, psd_tol * max(abs(tr), np.finfo(float).tiny))
            if lam_min is not None:
                raise InputError(f"kernel {r}: expected a positive semi-definite kernel, smallest "
                                 f"eigenvalue {lam_min:.4g} < -{psd_tol:g} * trace ({tr:.4g})")
        out.append(A)
    return out


def check_test_kernel_list(Ks, n_kernels: int, n_train: int) -> list[np.ndarray]:
    """Validate the kernels between test and training samples.

    Parameters
    ----------
    Ks : sequence of array-like, each shape (n_test, n_train)
    n_kernels : int
        P, the number of kernels seen in ``fit``.
    n_train : int
        Number of training samples seen in ``fit``.

    Returns
    -------
    list of ndarray, float64, each (n_test, n_train)

    Raises
    ------
    InputError
        Wrong number of kernels; for kernel ``r``: not 2-D, NaN/inf, a column
        count other than ``n_train``, a row count different from kernel 0.
    """
    if isinstance(Ks, np.ndarray) and Ks.ndim == 3:
        Ks = list(Ks)
    if not hasattr(Ks, "__len__"):
        raise InputError(f"expected a list of {n_kernels} test kernels, got {type(Ks).__name__}")
    if len(Ks) != n_kernels:
        raise InputError(f"expected {n_kernels} test kernels (one per training kernel), got {len(Ks)}")
    out = []
    for r, K in enumerate(Ks):
        A = _as_2d(K, r)
        if A.shape[1] != n_train:
            raise InputError(f"kernel {r}: expected shape (n_test, {n_train}) (columns = training "
                             f"samples), got {A.shape}")
        if out and A.shape != out[0].shape:
            raise InputError(f"kernel {r}: expected shape {out[0].shape} like kernel 0, got {A.shape}")
        out.append(A)
    return out


def check_binary_labels(y, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Encode binary labels of any type (ints, floats, strings) as ±1.

    Parameters
    ----------
    y : array-like, shape (n,)
    n : int
        Number of training samples (rows of the kernels).

    Returns
    -------
    classes : ndarray, shape (2,)
        ``np.unique(y)``; ``classes[1]`` is encoded +1 and ``classes[0]`` -1
        (the scikit-learn and MKLpy convention).
    y_pm : ndarray of float64, shape (n,)

    Raises
    ------
    InputError
        ``y`` not 1-D, length other than ``n``, missing values, or a number
        of distinct labels other than 2.
    """
    y = np.asarray(y)
    if y.ndim != 1:
        raise InputError(f"labels: expected a 1-D array, got shape {y.shape}")
    if y.shape[0] != n:
        raise InputError(f"labels: expected {n} labels (one per kernel row), got {y.shape[0]}")
    if y.dtype.kind == "f" and np.isnan(y).any():
        raise InputError(f"labels: NaN at position {int(np.flatnonzero(np.isnan(y))[0])}")
    if y.dtype.kind == "O" and any(v is None for v in y):
        raise InputError("labels: None among the labels")
    classes = np.unique(y)
    if classes.size != 2:
        raise InputError(f"labels: expected exactly 2 classes (binary problem), got {classes.size}: "
                         f"{classes[:5].tolist()}")
    y_pm = np.where(y == classes[1], 1.0, -1.0)
    return classes, y_pm


def check_weights(weights, n_kernels: int) -> np.ndarray:
    """Validate a kernel-weight vector (non-negative, finite, one per kernel, not all 0).

    Raises
    ------
    InputError
        Wrong length, negative, NaN, or all-zero weights (names the index).
    """
    w = np.asarray(weights, dtype=np.float64).ravel()
    if w.shape[0] != n_kernels:
        raise InputError(f"weights: expected {n_kernels} weights (one per kernel), got {w.shape[0]}")
    for r, v in enumerate(w):
        if not np.isfinite(v) or v < 0:
            raise InputError(f"weights: weight {r} must be finite and >= 0, got {v}")
    if not (w > 0).any():
        raise InputError("weights: all weights are 0")
    return w


def combine_kernels(Ks: Sequence[np.ndarray], weights) -> np.ndarray:
    """Weighted sum ``Σ_r w_r K_r`` of already validated kernels of equal shape.

    Parameters
    ----------
    Ks : sequence of ndarray, each (n, m), float64
    weights : array, shape (P,)

    Returns
    -------
    ndarray, float64, shape (n, m) (a new array; the inputs are not modified)
    """
    out = np.zeros_like(Ks[0], dtype=np.float64)
    for w, K in zip(weights, Ks, strict=True):
        if w != 0:
            out += w * K
    return out
