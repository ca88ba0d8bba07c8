"""Kernel ridge regression with a named classic kernel (the demo study), in torch (CPU or CUDA).

Solves ``(K + lam I) alpha = y`` through the project's one kernel ridge solve
(:func:`biokernels.solvers.ridge.solve_ridge`, exact, unblocked LAPACK
Cholesky) and predicts ``f(x) = k(x, X) alpha``
(:func:`biokernels.solvers.ridge.predict_ridge`; the paper's source/target
models are this estimator; Radhakrishnan et al., Methods, Eq. 1-2).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import torch

from biokernels.device import resolve_device
from biokernels.kernels.classic import as_tensor, gaussian_kernel, laplace_kernel, linear_kernel
from biokernels.metrics import r2_score
from biokernels.solvers.ridge import check_lam, predict_ridge, solve_ridge

if TYPE_CHECKING:
    import pandas as pd

KERNELS: dict[str, Callable[..., torch.Tensor]] = {
    "laplace": laplace_kernel,
    "gaussian": gaussian_kernel,
    "linear": linear_kernel,
}


class KernelRidge:
    """Kernel ridge regression with a named kernel, scikit-learn style.

    Parameters
    ----------
    kernel : {"laplace", "gaussian", "linear"}
        A kernel of :mod:`biokernels.kernels.classic`.
    lam : float
        Absolute ridge ``lam >= 0`` added to the kernel's diagonal
        (scikit-learn's ``alpha``). ``lam = 0`` is the interpolating solution and needs a
        positive-definite kernel matrix.
    kernel_params : dict, optional
        Keyword arguments of the kernel (``bandwidth`` for Laplace, ``gamma``
        for Gaussian).
    device : {"auto", "cpu", "cuda"}
        See :func:`biokernels.device.resolve_device`.

    Attributes
    ----------
    X_fit_ : torch.Tensor, shape (n, p)
    dual_coef_ : torch.Tensor, shape (n, c)
    solve_info_ : dict, the ``info`` of :func:`biokernels.solvers.ridge.solve_ridge`
    device_ : torch.device

    Source: standard kernel ridge regression; agrees with
    ``sklearn.kernel_ridge.KernelRidge(kernel="precomputed", alpha=lam)``.
    """

    def __init__(self, kernel: str = "laplace", lam: float = 1e-3,
                 kernel_params: dict | None = None, device: str = "auto"):
        self.kernel = kernel
        self.lam = lam
        self.kernel_params = kernel_params
        self.device = device

    def _k(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        if self.kernel not in KERNELS:
            raise ValueError(f"kernel: expected one of {sorted(KERNELS)}, got {self.kernel!r}")
        return KERNELS[self.kernel](A, B, **(self.kernel_params or {}))

    def fit(self, X: np.ndarray, y: np.ndarray) -> "KernelRidge":
        """Fit the dual coefficients.

        Parameters
        ----------
        X : array, shape (n, p)
        y : array, shape (n,) or (n, c)

        Returns
        -------
        self

        Raises
        ------
        ValueError
            If ``lam < 0`` or not finite, the sample counts of X and y
            differ, or (:class:`~biokernels.solvers.ridge.NotPositiveDefiniteError`)
            the regularized kernel matrix is not positive definite.
        """
        check_lam(self.lam)
        self.device_ = resolve_device(self.device)
        X = as_tensor(X, self.device_)
        Y = as_tensor(y, self.device_)
        if X.shape[0] != Y.shape[0]:
            raise ValueError(f"X has {X.shape[0]} samples but y has {Y.shape[0]}")
        self._y_was_1d = np.ndim(y) == 1
        # the Gram is a temporary: factor it in place, unblocked (one potrf + potrs)
        self.dual_coef_, self.solve_info_ = solve_ridge(self._k(X, X), Y, self.lam, method="cholesky",
                                                        overwrite=True, block_size=None)
        self.X_fit_ = X
        return self

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Predict ``k(X, X_fit_) @ dual_coef_``.

        Parameters
        ----------
        X : array, shape (m, p)

        Returns
        -------
        numpy.ndarray, shape (m,) or (m, c) like the ``y`` given to fit.
        """
        if not hasattr(self, "dual_coef_"):
            raise ValueError("KernelRidge is not fitted; call fit(X, y) first")
        P = predict_ridge(self._k(as_tensor(X, self.device_), self.X_fit_), self.dual_coef_)
        return P[:, 0] if self._y_was_1d else P


def krr_sweep(data: dict[str, np.ndarray], sweep: str, values: list[float],
              lam: float, bandwidth: float, device: str = "auto") -> "pd.DataFrame":
    """Train and test Laplace-kernel ridge models along one hyperparameter.

    Parameters
    ----------
    data : dict
        ``X_train`` (n, p), ``y_train`` (n,), ``X_test`` (m, p), ``y_test``
        (m,), as from :func:`biokernels.synth.demo.planted_regression`.
    sweep : {"lam", "bandwidth"}
        Which hyperparameter takes ``values``; the other is held fixed.
    values : list of float
    lam, bandwidth : float
        The fixed values.
    device : {"auto", "cpu", "cuda"}

    Returns
    -------
    pandas.DataFrame with columns ``lam``, ``bandwidth``, ``train_r2``,
    ``test_r2``, ``device``; one row per value.

    Raises
    ------
    ValueError
        For an unknown ``sweep``, or from :class:`KernelRidge`.
    """
    import pandas as pd

    if sweep not in ("lam", "bandwidth"):
        raise ValueError(f"sweep: expected 'lam' or 'bandwidth', got {sweep!r}")
    rows = []
    for v in values:
        lam_v, bw_v = (v, bandwidth) if sweep == "lam" else (lam, v)
        model = KernelRidge("laplace", lam=lam_v, kernel_params={"bandwidth": bw_v},
                            device=device).fit(data["X_train"], data["y_train"])
        rows.append({
            "lam": lam_v, "bandwidth": bw_v,
            "train_r2": r2_score(data["y_train"], model.predict(data["X_train"])),
            "test_r2": r2_score(data["y_test"], model.predict(data["X_test"])),
            "device": str(model.device_),
        })
    return pd.DataFrame(rows)
