"""Classic translation-invariant and linear kernels, in torch.

Kernels are functions ``k(X, Z) -> (n, m)`` tensor (DESIGN.md). All accept
numpy arrays or tensors and compute in float64 on the device of ``X`` when it
is a tensor (otherwise on the CPU).
"""

from __future__ import annotations

import numpy as np
import torch

ArrayLike = np.ndarray | torch.Tensor


def as_tensor(A: ArrayLike, device: torch.device | str | None = None) -> torch.Tensor:
    """Return ``A`` as a float64 2-D tensor on ``device``.

    Parameters
    ----------
    A : array-like, shape (n, p) or (n,)
        A 1-D input is taken as one feature column, shape (n, 1).
    device : torch.device or str, optional
        Defaults to ``A``'s device for tensors and the CPU otherwise.

    Raises
    ------
    ValueError
        If ``A`` has more than 2 dimensions or non-finite entries.
    """
    T = torch.as_tensor(A, dtype=torch.float64, device=device)
    if T.ndim == 1:
        T = T[:, None]
    if T.ndim != 2:
        raise ValueError(f"expected a 2-D array (n_samples, n_features), got shape {tuple(T.shape)}")
    if not torch.isfinite(T).all():
        raise ValueError("input holds NaN or infinite values")
    return T


def _pair(X: ArrayLike, Z: ArrayLike | None) -> tuple[torch.Tensor, torch.Tensor]:
    X = as_tensor(X)
    Z = X if Z is None else as_tensor(Z, device=X.device)
    if X.shape[1] != Z.shape[1]:
        raise ValueError(f"X has {X.shape[1]} features but Z has {Z.shape[1]}")
    return X, Z


def laplace_kernel(X: ArrayLike, Z: ArrayLike | None = None, bandwidth: float = 10.0) -> torch.Tensor:
    """Laplace kernel ``k(x, z) = exp(-||x - z||_2 / L)``.

    Note the Euclidean norm: scikit-learn's ``laplacian_kernel`` uses the L1
    norm instead.

    Parameters
    ----------
    X : array-like, shape (n, p)
    Z : array-like, shape (m, p), optional (defaults to X)
    bandwidth : float
        L > 0, in the units of the features. The transfer-learning paper
        (Radhakrishnan et al., Methods "Comparison with multiple kernel
        learning approaches") uses L = 10.

    Returns
    -------
    torch.Tensor, shape (n, m), float64

    Raises
    ------
    ValueError
        If ``bandwidth <= 0`` or the feature counts differ.
    """
    if not bandwidth > 0:
        raise ValueError(f"bandwidth must be > 0, got {bandwidth}")
    X, Z = _pair(X, Z)
    return torch.exp(-torch.cdist(X, Z) / bandwidth)


def gaussian_kernel(X: ArrayLike, Z: ArrayLike | None = None, gamma: float = 1e-3) -> torch.Tensor:
    """Gaussian (RBF) kernel ``k(x, z) = exp(-gamma ||x - z||_2^2)``.

    Parameters
    ----------
    X : array-like, shape (n, p)
    Z : array-like, shape (m, p), optional (defaults to X)
    gamma : float
        gamma > 0, in inverse squared feature units (same convention as
        scikit-learn's ``rbf_kernel``).

    Returns
    -------
    torch.Tensor, shape (n, m), float64

    Raises
    ------
    ValueError
        If ``gamma <= 0`` or the feature counts differ.
    """
    if not gamma > 0:
        raise ValueError(f"gamma must be > 0, got {gamma}")
    X, Z = _pair(X, Z)
    return torch.exp(-gamma * torch.cdist(X, Z).square())


def linear_kernel(X: ArrayLike, Z: ArrayLike | None = None) -> torch.Tensor:
    """Linear kernel ``k(x, z) = x^T z``.

    Parameters
    ----------
    X : array-like, shape (n, p)
    Z : array-like, shape (m, p), optional (defaults to X)

    Returns
    -------
    torch.Tensor, shape (n, m), float64
    """
    X, Z = _pair(X, Z)
    return X @ Z.T
