"""KOMD: the kernel method for the optimisation of the margin distribution.

Aiolli, Da San Martino & Sperduti, ICANN 2008: :class:`KOMD` solves the dual
(1) (:func:`~biokernels.solvers.easymkl.komd_dual`) on a precomputed kernel
and predicts with the perpendicular bisector (2) of the two closest hull
points. Equations and the differences from MKLpy: ``docs/easymkl_notes.md``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from biokernels.solvers.checks import check_lam
from biokernels.solvers.easymkl.dual import _check_backend, komd_dual
from biokernels.solvers.kernel_lists import (check_binary_labels, check_kernel_list, check_predict_kernel, float_eps,
                                             kernel_sketch)

__all__ = ["KOMD"]


class KOMD(ClassifierMixin, BaseEstimator):
    """Kernel method for the Optimization of the Margin Distribution, precomputed kernel.

    Solves (1) of ``docs/easymkl_notes.md`` and predicts with (2).

    Parameters
    ----------
    lam : float, default 0.1
        λ ∈ [0, 1] of (1): 0 = closest hull points (hard margin), 1 = class
        centroids. NOT MKLpy's ``KOMD(lam)`` (see ``docs/easymkl_notes.md``).
    tol : float, default 1e-9
        Relative KKT tolerance of :func:`komd_dual`.
    max_iter : int, optional
        SMO step limit of :func:`komd_dual`.
    psd_tol : float or None, default 1e-8
        Rejects a kernel with ``λ_min < -psd_tol * trace``; None skips the check.
    backend : {"numba", "python"}, default "numba"
        SMO loop of :func:`komd_dual` (compiled, or the reference loop).

    Attributes
    ----------
    classes_ : ndarray, shape (2,)
        Sorted labels; ``classes_[1]`` is the positive class (f >= 0).
    gamma_ : ndarray, shape (n_train,), float64
        γ*; sums to 1 within each class.
    dual_coef_ : ndarray, shape (n_train,)
        ``y_i γ_i`` (±1 labels).
    bias_ : float
        b of (2).
    objective_ : float
        Value of (1) at γ* (the squared distance of the two points when λ = 0).
    solver_info_ : dict
        What :func:`komd_dual` returned.
    train_sketch_ : KernelSketch
        Fingerprint of the training kernel
        (:func:`~biokernels.solvers.kernel_lists.kernel_sketch`), used by
        :meth:`decision_function` to reject a test x test kernel.
    """

    def __init__(self, lam: float = 0.1, tol: float = 1e-9, max_iter: int | None = None,
                 psd_tol: float | None = 1e-8, backend: str = "numba"):
        self.lam = lam
        self.tol = tol
        self.max_iter = max_iter
        self.psd_tol = psd_tol
        self.backend = backend

    def fit(self, K, y):
        """Fit on a precomputed training kernel.

        Parameters
        ----------
        K : array-like, shape (n_train, n_train)
            Symmetric PSD kernel.
        y : array-like, shape (n_train,)
            Two distinct labels of any type (ints, strings, ...).

        Returns
        -------
        self

        Raises
        ------
        InputError
            Non-square, non-symmetric, non-PSD, NaN kernel; labels of the
            wrong length or not exactly 2 classes; lam outside [0, 1].
        """
        eps = float_eps(K)
        K = check_kernel_list([K], psd_tol=self.psd_tol)[0]
        return self._fit_checked(K, y, eps)

    def fit_path(self, K, y, lams: Sequence[float]) -> list[KOMD]:
        """One KOMD per λ in ``lams`` on the same kernel, the checks (symmetry,
        finiteness and, with ``psd_tol``, the PSD factorisation) done once.

        Each model equals ``clone(self).set_params(lam=lam).fit(K, y)`` (same
        arithmetic, so the same numbers).

        Parameters
        ----------
        K : array-like, shape (n_train, n_train)
            Symmetric PSD kernel.
        y : array-like, shape (n_train,)
            Two distinct labels.
        lams : sequence of float in [0, 1]

        Returns
        -------
        list of KOMD, one per λ, in the order of ``lams``

        Raises
        ------
        InputError
            As :meth:`fit` (the kernel and labels once; any λ outside [0, 1]
            before any fit).
        """
        lams = [check_lam(lam, interval="[0, 1]") for lam in lams]
        eps = float_eps(K)
        K = check_kernel_list([K], psd_tol=self.psd_tol)[0]
        return [self._copy(lam)._fit_checked(K, y, eps) for lam in lams]

    def _copy(self, lam: float) -> KOMD:
        """An unfitted copy with ``lam`` (``clone(self).set_params(lam=lam)``
        without scikit-learn's signature inspection)."""
        return type(self)(lam=lam, tol=self.tol, max_iter=self.max_iter, psd_tol=self.psd_tol,
                          backend=self.backend)

    def _fit_checked(self, K: np.ndarray, y, eps: float | None = None):
        _check_backend(self.backend)
        self.classes_, y_pm = check_binary_labels(y, K.shape[0])
        gamma, info = komd_dual(K, y_pm, self.lam, tol=self.tol, max_iter=self.max_iter, backend=self.backend)
        self.gamma_ = gamma
        self.dual_coef_ = y_pm * gamma
        self.bias_ = 0.5 * float(gamma @ (K @ self.dual_coef_))
        self.objective_ = info["objective"]
        self.solver_info_ = info
        self.n_train_ = K.shape[0]
        self.train_sketch_ = kernel_sketch(K, eps)
        return self

    def decision_function(self, K_test):
        """f(x) of (2) for each test sample.

        Parameters
        ----------
        K_test : array-like, shape (n_test, n_train)
            Kernel between test and training samples.

        Returns
        -------
        ndarray, shape (n_test,), float64
            Positive values predict ``classes_[1]``.

        Raises
        ------
        InputError
            Wrong column count, NaN, or a square symmetric (n_train, n_train)
            kernel that is not the training kernel (a test x test kernel;
            :func:`~biokernels.solvers.kernel_lists.check_predict_kernel`).
        """
        K_test = check_predict_kernel(K_test, self.n_train_, self.train_sketch_, name="K_test")
        return K_test @ self.dual_coef_ - self.bias_

    def predict(self, K_test):
        """Labels ``classes_[1]`` where f >= 0, else ``classes_[0]`` (shape (n_test,))."""
        return self.classes_[(self.decision_function(K_test) >= 0).astype(int)]
