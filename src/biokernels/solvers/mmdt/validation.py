"""Input checks of LS-MMDT and the augmented features it works on.

Shared by :mod:`~biokernels.solvers.mmdt.objective`,
:mod:`~biokernels.solvers.mmdt.solver` and
:mod:`~biokernels.solvers.mmdt.estimator`: matrices, labels, positive numbers
and counts are checked here, every error an ``InputError`` (seeds: by
:func:`biokernels.seeds.make_rng`);
:func:`augment` appends the constant 1 (``x~ = [x; 1]``) and ``_signs`` builds
the one-vs-rest labels ``t_ij`` (Rodner et al. 2013, Eq. 5).
"""

from __future__ import annotations

import numpy as np

from biokernels.errors import InputError

__all__ = ["augment"]


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
