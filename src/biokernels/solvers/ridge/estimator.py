"""NTK kernel ridge regression, scikit-learn style.

:class:`NTKRidge` computes the one-hidden-layer ReLU NTK
(:mod:`biokernels.kernels.ntk`) of dense features, or takes a precomputed
Gram, and fits and predicts through :func:`~biokernels.solvers.ridge.solve_ridge`
and :func:`~biokernels.solvers.ridge.predict_ridge`.
"""

from __future__ import annotations

import numpy as np
import torch

from biokernels.device import DEVICE_CHOICES, resolve_device
from biokernels.kernels.ntk import B_STD, W_STD, ntk_relu
from biokernels.solvers.ridge.solve import predict_ridge, solve_ridge
from biokernels.solvers.ridge.tensors import ArrayLike

__all__ = ["NTKRidge"]


class NTKRidge:
    """Kernel ridge regression with the one-hidden-layer ReLU NTK (with bias).

    Parameters
    ----------
    lam : float
        Absolute ridge ``lam >= 0`` (scikit-learn's ``alpha``).
    w_std, b_std, fan_in : float
        Kernel parameters of :func:`biokernels.kernels.ntk.ntk_relu`
        (defaults sqrt(2), 1, None).
    solver : {"auto", "cholesky", "cg"}
        ``method`` of :func:`solve_ridge`.
    fit_intercept : bool
        Fit ``Y - mean(Y)`` and add the mean back when predicting
        (``fit_intercept`` of :func:`solve_ridge`).
    device : {"auto", "cpu", "cuda"}
        See :func:`biokernels.device.resolve_device` (``fit``; ``fit_gram``
        computes on the Gram's device).
    dtype : torch.float32 or torch.float64
        Precision of ``fit``'s Gram and solve.
    solver_params : dict, optional
        More keyword arguments of :func:`solve_ridge` (``tol``,
        ``block_size``, ``preconditioner``, ...).

    Attributes
    ----------
    X_fit_ : torch.Tensor, shape (n, p), or None after ``fit_gram``
    dual_coef_ : torch.Tensor, shape (n, c)
    intercept_ : numpy float64 array, shape (c,) or 0-d for a 1-D Y, or
        None without ``fit_intercept``
    solve_info_ : dict, the ``info`` of :func:`solve_ridge`

    Source: kernel ridge regression with the NTK (Radhakrishnan et al. 2023,
    Methods "Details for virtual drug screening"); agrees with
    ``sklearn.kernel_ridge.KernelRidge(kernel="precomputed", alpha=lam)``
    given the same kernel.
    """

    def __init__(self, lam: float = 1.0, w_std: float = W_STD, b_std: float = B_STD,
                 fan_in: float | None = None, solver: str = "auto", device: str = "auto",
                 dtype: torch.dtype = torch.float64, solver_params: dict | None = None,
                 fit_intercept: bool = False):
        self.lam = lam
        self.w_std = w_std
        self.b_std = b_std
        self.fan_in = fan_in
        self.solver = solver
        self.device = device
        self.dtype = dtype
        self.solver_params = solver_params
        self.fit_intercept = fit_intercept

    def _kernel(self, A, B=None) -> torch.Tensor:
        return ntk_relu(A, B, w_std=self.w_std, b_std=self.b_std, fan_in=self.fan_in,
                        device=self.device_, dtype=self.dtype)

    def _solve(self, K, Y, overwrite: bool) -> None:
        self._y_was_1d = np.ndim(Y) == 1
        alpha, info = solve_ridge(K, Y, self.lam, method=self.solver, overwrite=overwrite,
                                  fit_intercept=self.fit_intercept, **(self.solver_params or {}))
        alpha = torch.as_tensor(alpha)
        self.dual_coef_ = alpha[:, None] if alpha.ndim == 1 else alpha
        self.intercept_ = info["intercept"]
        self.solve_info_ = info

    def fit(self, X: ArrayLike, Y: ArrayLike) -> "NTKRidge":
        """Fit on dense features.

        Parameters
        ----------
        X : array-like, shape (n, p)
        Y : array-like, shape (n,) or (n, c)

        Returns
        -------
        self

        Raises
        ------
        ValueError
            From :func:`ntk_relu` or :func:`solve_ridge` (sample counts
            differ, ``lam < 0``, NaN, not positive definite, ...).
        """
        if self.device not in DEVICE_CHOICES and not isinstance(self.device, torch.device):
            raise ValueError(f"device: expected one of {DEVICE_CHOICES}, got {self.device!r}")
        self.device_ = resolve_device(self.device) if isinstance(self.device, str) else self.device
        K = self._kernel(X)
        self.X_fit_ = torch.as_tensor(X, dtype=self.dtype, device=self.device_)
        if self.X_fit_.ndim == 1:
            self.X_fit_ = self.X_fit_[:, None]
        self._solve(K, Y, overwrite=True)
        return self

    def fit_gram(self, K: ArrayLike, Y: ArrayLike, overwrite: bool = False) -> "NTKRidge":
        """Fit on a precomputed kernel matrix (e.g. from
        :func:`biokernels.kernels.ntk.ntk_relu_indexed`).

        Parameters
        ----------
        K : numpy.ndarray or torch.Tensor, shape (n, n)
        Y : array-like, shape (n,) or (n, c)
        overwrite : bool
            Let the Cholesky solver factor K in place (K is destroyed).

        Returns
        -------
        self

        Raises
        ------
        ValueError
            From :func:`solve_ridge`.
        """
        self.X_fit_ = None
        self._solve(K, Y, overwrite=overwrite)
        self.device_ = self.dual_coef_.device
        return self

    def _check_fitted(self) -> None:
        if not hasattr(self, "dual_coef_"):
            raise ValueError("NTKRidge is not fitted; call fit(X, Y) or fit_gram(K, Y) first")

    def _out(self, Kt: torch.Tensor) -> np.ndarray:
        P = predict_ridge(Kt, self.dual_coef_, getattr(self, "intercept_", None))
        return P[:, 0] if self._y_was_1d else P

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Predict ``NTK(X, X_fit_) @ dual_coef_ + intercept_`` (:func:`predict_ridge`).

        Parameters
        ----------
        X : array-like, shape (m, p)

        Returns
        -------
        numpy.ndarray float64, shape (m,) or (m, c) like the Y given to fit.

        Raises
        ------
        ValueError
            Not fitted, or fitted by ``fit_gram`` (use ``predict_gram``).
        """
        self._check_fitted()
        if self.X_fit_ is None:
            raise ValueError("NTKRidge was fitted on a Gram matrix; use predict_gram(K_test_train)")
        return self._out(self._kernel(X, self.X_fit_))

    def predict_gram(self, K_test_train: ArrayLike) -> np.ndarray:
        """Predict ``K_test_train @ dual_coef_ + intercept_`` (:func:`predict_ridge`).

        Parameters
        ----------
        K_test_train : numpy.ndarray or torch.Tensor, shape (m, n)
            Kernel between test and training samples.

        Returns
        -------
        numpy.ndarray float64, shape (m,) or (m, c) like the Y given to fit.

        Raises
        ------
        ValueError
            Not fitted, or ``n`` differs from the training size.
        """
        self._check_fitted()
        Kt = torch.as_tensor(K_test_train)
        n = self.dual_coef_.shape[0]
        if Kt.ndim != 2 or Kt.shape[1] != n:
            raise ValueError(f"K_test_train: expected shape (m, {n}), got {tuple(Kt.shape)}")
        return self._out(Kt)
