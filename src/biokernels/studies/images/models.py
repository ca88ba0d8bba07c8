"""Kernels and kernel regressors of the images study.

:func:`make_kernel` turns a ``images.kernels`` config entry into a callable
``k(A, B) -> (len(A), len(B))`` tensor on flattened images (rows of h·w
pixels): ``laplace`` (``exp(-||x - z|| / L)``), ``ntk`` (fully connected ReLU,
``depth`` hidden layers) and ``cntk`` (convolutional, ``strides``), as in the
transfer paper's Methods "Model descriptions". :class:`KernelRegressor` fits
one-hot labels by the exact solve (Cholesky, :func:`solve_ridge`) or by
EigenPro (:func:`eigenpro_ridge`), and predicts scores; accuracy is the argmax.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from biokernels.device import resolve_device
from biokernels.errors import InputError
from biokernels.kernels.classic import laplace_kernel
from biokernels.kernels.ntk_deep import cntk, ntk_fc
from biokernels.solvers.eigenpro import eigenpro_predict, eigenpro_ridge
from biokernels.solvers.ridge import NotPositiveDefiniteError, solve_ridge

__all__ = ["KERNELS", "make_kernel", "KernelRegressor", "solve_exact", "one_hot", "accuracy"]

KERNELS = ("laplace", "ntk", "cntk")


def make_kernel(name: str, params: dict, shape: tuple[int, int], device: str = "cpu") -> Callable:
    """The kernel ``name`` with its ``params`` on images of ``shape`` (h, w):
    takes tensors (n, h·w) and (m, h·w), computes on ``device`` (a
    :data:`biokernels.device.DEVICE_CHOICES` name) in ``params["dtype"]``
    (float64 by default, or float32), returns (n, m) float64 on the CPU.
    Raises InputError for an unknown name or dtype."""
    h, w = shape
    dev = resolve_device(device)
    dtype = {"float64": torch.float64, "float32": torch.float32}.get(params.get("dtype", "float64"))
    if dtype is None:
        raise InputError(f"images.kernels.{name}.dtype: expected float32 or float64, got {params.get('dtype')!r}")
    if name == "laplace":
        L = float(params.get("bandwidth", 10.0))
        fn = lambda A, B: laplace_kernel(A, B, bandwidth=L)  # noqa: E731
    elif name == "ntk":
        depth = int(params.get("depth", 5))
        fn = lambda A, B: ntk_fc(A, B, depth=depth)  # noqa: E731
    elif name == "cntk":
        strides = tuple(params.get("strides", (2, 2, 2, 2, 2, 1)))
        block = int(params.get("block", 32))
        fn = lambda A, B: cntk(A.reshape(-1, h, w), None if B is A else B.reshape(-1, h, w),  # noqa: E731
                               strides=strides, block=block)
    else:
        raise InputError(f"images.kernels: unknown kernel {name!r}; expected one of {list(KERNELS)}")

    def k(A, B):
        Ad = torch.as_tensor(A).to(dev, dtype)
        Bd = Ad if B is A else torch.as_tensor(B).to(dev, dtype)
        return fn(Ad, Bd).to(torch.float64).cpu()
    return k


def solve_exact(K: torch.Tensor, Y, ridge: float) -> torch.Tensor:
    """α of ``(K + ridge I) α = Y`` by Cholesky (K is not modified). With
    ridge 0 and a singular K (repeated images, e.g. after a saturating
    corruption), the minimum-norm interpolant ``K⁺ Y``, the ridge's limit as
    λ → 0 (eigenvalues below n·eps·λ_max dropped)."""
    try:
        alpha, _ = solve_ridge(K.clone(), np.asarray(Y, dtype=np.float64), ridge, method="cholesky",
                               overwrite=True)
        return torch.as_tensor(alpha, dtype=K.dtype)
    except NotPositiveDefiniteError:
        if ridge > 0:
            raise
    w, V = torch.linalg.eigh(K)
    keep = w > w.max() * K.shape[0] * torch.finfo(K.dtype).eps
    return V[:, keep] @ ((V[:, keep].T @ torch.as_tensor(np.asarray(Y), dtype=K.dtype)) / w[keep, None])


def one_hot(labels: np.ndarray, classes) -> np.ndarray:
    """(n, len(classes)) float64 one-hot rows of ``labels`` over ``classes``."""
    classes = list(classes)
    idx = {c: i for i, c in enumerate(classes)}
    Y = np.zeros((len(labels), len(classes)))
    Y[np.arange(len(labels)), [idx[int(v)] for v in labels]] = 1.0
    return Y


def accuracy(scores: np.ndarray, labels: np.ndarray, classes) -> float:
    """Share of rows whose argmax column is the row's label."""
    return float(np.mean(np.asarray(list(classes))[np.asarray(scores).argmax(1)] == np.asarray(labels)))


class KernelRegressor:
    """Kernel regression ``f(x) = K(x, X) α``, ``(K + ridge I) α = Y``.

    ``solver``: ``exact`` (Cholesky) or ``eigenpro`` (``eigenpro`` settings:
    subsample, top_q, epochs, stop_accuracy, seed). ``fit`` takes X (n, p)
    and Y (n, c); ``predict`` returns (m, c) float64 numpy.
    """

    def __init__(self, kernel: Callable, ridge: float = 0.0, solver: str = "exact",
                 eigenpro: dict | None = None, log: Callable | None = None):
        if solver not in ("exact", "eigenpro"):
            raise InputError(f"images.solver: expected exact or eigenpro, got {solver!r}")
        self.kernel, self.ridge, self.solver = kernel, float(ridge), solver
        self.eigenpro = dict(eigenpro or {})
        self.log = log
        self.info: dict = {}

    def fit(self, X, Y) -> "KernelRegressor":
        self.X_ = torch.as_tensor(np.asarray(X), dtype=torch.float64)
        Y = np.asarray(Y, dtype=np.float64)
        if self.solver == "exact":
            self.alpha_ = solve_exact(self.kernel(self.X_, self.X_), Y, self.ridge)
            self.info = {"solver": "exact", "n": len(Y)}
        else:
            fit = eigenpro_ridge(self.kernel, self.X_, Y, lam=self.ridge, log=self.log, **self.eigenpro)
            self.alpha_ = fit.pop("alpha")
            self.info = {"solver": "eigenpro", "n": len(Y), **{k: v for k, v in fit.items() if k != "history"},
                         "history": fit["history"]}
        return self

    def predict(self, X) -> np.ndarray:
        if not hasattr(self, "alpha_"):
            raise RuntimeError("KernelRegressor: call fit before predict")
        Xt = torch.as_tensor(np.asarray(X), dtype=torch.float64)
        if Xt.shape[0] == 0:
            return np.zeros((0, self.alpha_.shape[1]))
        return eigenpro_predict(self.kernel, self.X_, self.alpha_, Xt).numpy()
