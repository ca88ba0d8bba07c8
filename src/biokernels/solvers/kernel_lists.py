"""Input checks shared by the multiple-kernel-learning solvers.

Every MKL method in :mod:`biokernels.solvers.easymkl` and
:mod:`biokernels.solvers.mkl` takes a *list of precomputed kernels*, as MKLpy
does (DESIGN.md): ``Ks[r]`` of shape ``(n_train, n_train)`` for training and
``(n_test, n_train)`` for prediction. The helpers here turn such lists into
float64 numpy arrays and raise :class:`biokernels.io.networks.InputError` (a
``ValueError`` subclass) with the offending kernel's INDEX and what was expected.

:func:`check_predict_kernel` is the one check of every predict path on a
precomputed kernel (KOMD, EasyMKL, the PIMKL classifiers, the diffusion
study's SVMs): the kernel must be ``(n_test, n_train)``, and a square,
symmetric kernel of the training size that is not the training kernel is
rejected as the test x test kernel ``K(X_test, X_test)`` passed by mistake
(with ``n_test = n_train`` nothing else would notice; the scores are then
silently wrong). Estimators that do not keep their training kernel keep its
:func:`kernel_sketch` instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.linalg

from biokernels.errors import InputError

__all__ = ["check_kernel_list", "CheckedKernels", "check_test_kernel_list", "check_predict_kernel", "kernel_sketch",
           "KernelSketch", "float_eps", "predict_tolerance", "check_binary_labels", "check_weights", "combine_kernels"]


def _as_2d(K, r: int) -> np.ndarray:
    return _as_2d_scaled(K, r)[0]


def _as_2d_scaled(K, r: int) -> tuple[np.ndarray, float]:
    """K as a float64 2-D numpy array (no copy when it is one) and ``max |K_ij|``;
    InputError naming kernel ``r``: not numeric, not 2-D, NaN or inf."""
    if hasattr(K, "detach"):                      # torch tensor
        K = K.detach().cpu().numpy()
    try:
        A = np.asarray(K, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"kernel {r}: expected a numeric 2-D array, got {type(K).__name__} ({exc})") from None
    if A.ndim != 2:
        raise InputError(f"kernel {r}: expected a 2-D (n, m) matrix, got shape {A.shape}")
    return A, _abs_max(A, r)


def _abs_max(A: np.ndarray, r: int) -> float:
    """``max |A_ij|`` (0 for an empty A); InputError naming kernel ``r`` and the
    first NaN/inf entry. Two reductions without a temporary: the minimum and
    maximum propagate any NaN or inf."""
    if A.size == 0:
        return 0.0
    lo, hi = float(A.min()), float(A.max())
    if not (np.isfinite(lo) and np.isfinite(hi)):
        bad = np.argwhere(~np.isfinite(A))[0]
        raise InputError(f"kernel {r}: expected finite entries, found {A[tuple(bad)]} at row {bad[0]}, "
                         f"column {bad[1]}")
    return max(-lo, hi)


def _max_asymmetry(A: np.ndarray) -> float:
    """``max |A - A'|`` of a finite square float64 A: one compiled pass over
    the upper triangle (:func:`biokernels.solvers.kernel_numba.max_asymmetry`)."""
    from biokernels.solvers.kernel_numba import max_asymmetry

    return float(max_asymmetry(A, 64))


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


class CheckedKernels(list):
    """The float64 training kernels :func:`check_kernel_list` returned, with the
    checks they passed, so that the next estimator handed them (an MKL method
    inside :class:`~biokernels.solvers.mkl.MKLClassifier`, then its learner)
    does not repeat them, and their :func:`kernel_sketch` es, computed once.

    Attributes
    ----------
    psd_tol : float or None
        The PSD tolerance they were checked at (None: not checked).
    sym_tol : float
    """

    def __init__(self, arrays, psd_tol: float | None, sym_tol: float, abs_max):
        super().__init__(arrays)
        self.psd_tol, self.sym_tol = psd_tol, sym_tol
        self._abs_max = list(abs_max)               # max |K_ij| of each, from the check
        self._sketches = None

    def passes(self, psd_tol: float | None, sym_tol: float, min_kernels: int) -> bool:
        """Whether these checks are at least as strict as the ones asked for."""
        psd_ok = psd_tol is None or (self.psd_tol is not None and self.psd_tol <= psd_tol)
        return psd_ok and self.sym_tol <= sym_tol and len(self) >= min_kernels

    def sketches(self) -> list["KernelSketch"]:
        """``[kernel_sketch(K) for K in self]``, computed on the first call.
        The kernels must not be modified after the check."""
        if self._sketches is None:
            self._sketches = [_sketch(K, m, float_eps(K)) for K, m in zip(self, self._abs_max)]
        return self._sketches


def check_kernel_list(Ks, *, psd_tol: float | None = 1e-8, sym_tol: float = 1e-8,
                      min_kernels: int = 1) -> CheckedKernels:
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
    CheckedKernels (a list) of ndarray, float64, each (n, n)
        New arrays only where a conversion was needed (float64 numpy input is
        passed through without copying). A :class:`CheckedKernels` checked at
        least as strictly is returned as it is (no second check).

    Raises
    ------
    InputError
        Not a sequence, fewer than ``min_kernels`` kernels; for kernel ``r``:
        not 2-D, NaN/inf, non-square, a shape different from kernel 0,
        not symmetric, or not PSD. The message names the index ``r``.
    """
    if isinstance(Ks, CheckedKernels) and Ks.passes(psd_tol, sym_tol, min_kernels):
        return Ks
    if isinstance(Ks, np.ndarray) and Ks.ndim == 3:
        Ks = list(Ks)
    if not isinstance(Ks, Sequence) and not (hasattr(Ks, "__len__") and hasattr(Ks, "__getitem__")):
        raise InputError(f"expected a list of precomputed kernels, got {type(Ks).__name__}")
    if len(Ks) < min_kernels:
        raise InputError(f"expected at least {min_kernels} kernel(s), got {len(Ks)}")
    out, abs_maxes = [], []
    for r, K in enumerate(Ks):
        A, abs_max = _as_2d_scaled(K, r)
        if A.shape[0] != A.shape[1]:
            raise InputError(f"kernel {r}: expected a square (n_train, n_train) training kernel, "
                             f"got shape {A.shape}")
        if out and A.shape != out[0].shape:
            raise InputError(f"kernel {r}: expected shape {out[0].shape} like kernel 0, got {A.shape}")
        scale = max(1.0, abs_max)
        asym = _max_asymmetry(A)
        if asym > sym_tol * scale:
            raise InputError(f"kernel {r}: expected a symmetric matrix, max |K - K'| = {asym:.3g}")
        if psd_tol is not None:
            tr = float(np.trace(A))
            lam_min = _min_eig_below(A, psd_tol * max(abs(tr), np.finfo(float).tiny))
            if lam_min is not None:
                raise InputError(f"kernel {r}: expected a positive semi-definite kernel, smallest "
                                 f"eigenvalue {lam_min:.4g} < -{psd_tol:g} * trace ({tr:.4g})")
        out.append(A)
        abs_maxes.append(abs_max)
    return CheckedKernels(out, psd_tol, sym_tol, abs_maxes)


def float_eps(K) -> float:
    """Machine epsilon of a kernel's floating dtype (numpy or torch; float64's
    for integer or other input): 2.2e-16 for float64, 1.2e-7 for float32."""
    dtype = getattr(K, "dtype", None)
    if hasattr(K, "detach"):                      # torch.float32 -> "float32"
        dtype = str(dtype).rsplit(".", 1)[-1]
    try:
        dtype = np.dtype(dtype) if dtype is not None else np.asarray(K).dtype
    except (TypeError, ValueError):               # e.g. torch.bfloat16, ragged lists
        dtype = np.dtype(np.float64)
    return float(np.finfo(dtype).eps) if dtype.kind == "f" else float(np.finfo(np.float64).eps)


def predict_tolerance(eps: float, scale: float) -> float:
    """Tolerance of :func:`check_predict_kernel`: ``sqrt(eps) * scale``.

    ``eps`` is the machine epsilon of the kernels' dtype (the larger of the
    predict and training kernel's), ``scale`` the largest ``|K_ij|``. Rounding
    makes a computed ``K(X, X)`` asymmetric, or a recomputed training kernel
    differ, by about ``eps * scale`` times an accumulation length, far below
    ``sqrt(eps) * scale`` (1.5e-8 relative in float64, 3.5e-4 in float32);
    a real test x train kernel differs from its transpose by the size of its
    variation between samples, far above it.
    """
    return float(np.sqrt(eps)) * float(scale)


@dataclass(frozen=True)
class KernelSketch:
    """O(n) fingerprint of a training kernel, so that an estimator can tell
    whether a predict kernel is its training kernel without keeping it.

    Attributes
    ----------
    diag : ndarray (n,)
        ``diag(K)``.
    product : ndarray (n,)
        ``K @ v`` with ``v`` the fixed +-1 probe of :func:`_probe` (``n``-seeded).
    scale : float
        ``max |K_ij|``.
    eps : float
        Machine epsilon of the training kernel's dtype (:func:`float_eps`).
    """

    diag: np.ndarray
    product: np.ndarray
    scale: float
    eps: float

    @property
    def n(self) -> int:
        return int(self.diag.shape[0])


def _probe(n: int) -> np.ndarray:
    return np.random.default_rng(n).choice(np.array([-1.0, 1.0]), size=n)


def kernel_sketch(K, eps: float | None = None) -> KernelSketch:
    """:class:`KernelSketch` of a square training kernel (one matrix-vector
    product, O(n^2)).

    Parameters
    ----------
    K : array-like (n, n), numpy or torch
    eps : float, optional
        Machine epsilon of the kernel as the user gave it (default
        :func:`float_eps` of ``K``; pass it when ``K`` is a float64 copy of a
        float32 input).

    Raises
    ------
    InputError
        Not 2-D, NaN/inf, or not square.
    """
    A, abs_max = _as_2d_scaled(K, 0)
    if A.shape[0] != A.shape[1]:
        raise InputError(f"training kernel: expected a square (n_train, n_train) matrix, got shape {A.shape}")
    return _sketch(A, abs_max, float_eps(K) if eps is None else float(eps))


def _sketch(A: np.ndarray, abs_max: float, eps: float) -> KernelSketch:
    """:class:`KernelSketch` of a checked square float64 A whose ``max |A_ij|`` is known."""
    return KernelSketch(diag=A.diagonal().copy(), product=A @ _probe(A.shape[0]), scale=abs_max, eps=eps)


def _same_buffer(A: np.ndarray, B: np.ndarray) -> bool:
    return (A.shape == B.shape and A.strides == B.strides
            and A.__array_interface__["data"][0] == B.__array_interface__["data"][0])


def check_predict_kernel(K, n_train: int, train=None, *, name: str = "predict kernel") -> np.ndarray:
    """Validate one kernel passed to a predict / decision_function.

    Parameters
    ----------
    K : array-like (n_test, n_train), numpy or torch
        Kernel between the test samples (rows) and the training samples
        (columns, in the training order).
    n_train : int
        Training samples of the fit.
    train : ndarray (n_train, n_train), KernelSketch, or None
        The training kernel itself, or its :func:`kernel_sketch`. None: only
        the shape and the values are checked.
    name : str
        What ``K`` is, for messages (e.g. ``"kernel 2"``).

    Returns
    -------
    ndarray (n_test, n_train), float64 (``K`` itself when it already is one)

    Raises
    ------
    InputError
        ``K`` not 2-D or not finite; a column count other than ``n_train``;
        or ``K`` square ``(n_train, n_train)`` and symmetric within
        :func:`predict_tolerance` but not the training kernel (not the same
        buffer, and not equal within the same tolerance; with a sketch, its
        diagonal and ``K @ v`` differ from the training kernel's): almost
        surely the test x test kernel passed where the test x train kernel
        belongs. A constant matrix is accepted (it scores every sample
        alike whatever it was), and ``n_train < 2`` is not checked.

    Notes
    -----
    Predicting on the training samples with the training kernel (the same
    array, a copy, or a recomputation equal within the tolerance) passes, as
    does a test x train kernel that is square only because ``n_test =
    n_train``: it is not symmetric. Cost: O(n_test n_train); the symmetry
    test (one n x n temporary) only for a square kernel of the training size.
    """
    A = _as_2d_named(K, name)
    if A.shape[1] != n_train:
        raise InputError(f"{name}: expected shape (n_test, n_train) = (n_test, {n_train}) (columns = the "
                         f"{n_train} training samples), got {A.shape}")
    if train is None or A.shape[0] != n_train or n_train < 2:
        return A
    if isinstance(train, KernelSketch):
        if train.n != n_train:
            raise InputError(f"{name}: the training-kernel sketch has {train.n} samples, expected {n_train}")
        eps, scale = max(float_eps(K), train.eps), max(float(np.abs(A).max()), train.scale)
        tol = predict_tolerance(eps, scale)
        if (np.abs(A.diagonal() - train.diag).max() <= tol
                and np.abs(A @ _probe(n_train) - train.product).max() <= tol * n_train):
            return A                                   # |(A - T) v|_i <= n max|A - T| for v = +-1
    else:
        T = train if isinstance(train, np.ndarray) else _as_2d_named(train, "training kernel")
        if T.shape != (n_train, n_train):
            raise InputError(f"training kernel: expected shape ({n_train}, {n_train}), got {T.shape}")
        if _same_buffer(A, T):
            return A
        eps = max(float_eps(K), float_eps(train))
        tol = predict_tolerance(eps, max(float(np.abs(A).max()), float(np.abs(T).max())))
        if np.abs(A - T).max() <= tol:
            return A
    if A.max() - A.min() <= tol:                       # constant: carries no sample information
        return A
    asym = float(np.abs(A - A.T).max())
    if asym <= tol:
        raise InputError(
            f"{name}: got a square, symmetric {A.shape} kernel (max |K - K'| = {asym:.3g} <= "
            f"sqrt(eps) * max|K| = {tol:.3g}) of the training size that is not the training kernel: "
            f"this looks like the test x test kernel K(X_test, X_test); expected the (n_test, n_train) = "
            f"({A.shape[0]}, {n_train}) kernel K(X_test, X_train) between the test samples (rows) and the "
            f"training samples (columns, in the training order). To score the training samples, pass the "
            f"training kernel itself.")
    return A


def _as_2d_named(K, name: str) -> np.ndarray:
    """:func:`_as_2d` with ``name`` instead of ``kernel <r>`` in its messages."""
    try:
        return _as_2d(K, 0)
    except InputError as err:
        raise InputError(str(err).replace("kernel 0", name, 1)) from None


def check_test_kernel_list(Ks, n_kernels: int, n_train: int, train=None) -> list[np.ndarray]:
    """Validate the kernels between test and training samples.

    Parameters
    ----------
    Ks : sequence of array-like, each shape (n_test, n_train)
    n_kernels : int
        P, the number of kernels seen in ``fit``.
    n_train : int
        Number of training samples seen in ``fit``.
    train : sequence of P training kernels or :class:`KernelSketch`, optional
        When given, kernel ``r`` also goes through
        :func:`check_predict_kernel` against ``train[r]`` (the test x test
        kernel mistake).

    Returns
    -------
    list of ndarray, float64, each (n_test, n_train)

    Raises
    ------
    InputError
        Wrong number of kernels; for kernel ``r``: not 2-D, NaN/inf, a column
        count other than ``n_train``, a row count different from kernel 0, or
        (with ``train``) a square symmetric kernel that is not training
        kernel ``r`` (:func:`check_predict_kernel`).
    """
    if isinstance(Ks, np.ndarray) and Ks.ndim == 3:
        Ks = list(Ks)
    if not hasattr(Ks, "__len__"):
        raise InputError(f"expected a list of {n_kernels} test kernels, got {type(Ks).__name__}")
    if len(Ks) != n_kernels:
        raise InputError(f"expected {n_kernels} test kernels (one per training kernel), got {len(Ks)}")
    out = []
    for r, K in enumerate(Ks):
        A = check_predict_kernel(K, n_train, None if train is None else train[r], name=f"kernel {r}")
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
    tmp = None
    for w, K in zip(weights, Ks, strict=True):
        if w == 0:
            continue
        tmp = np.empty_like(out) if tmp is None else tmp   # one buffer: w K, then added (rounding as out += w * K)
        np.multiply(K, w, out=tmp)
        out += tmp
    return out
