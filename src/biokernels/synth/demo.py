"""Embedded default data of the workflow's first small DAG (the ``demo``
study): a planted nonlinear regression task."""

from __future__ import annotations

import numpy as np


def planted_regression(n_train: int, n_test: int, n_features: int, noise: float,
                       rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Draw a regression task ``y = f(x) + noise`` with a known smooth ``f``.

    ``x ~ N(0, I_p)`` and ``f(x) = sin(x_1) + 0.5 x_2^2 - x_1 x_3 / 2``
    (the terms that exist for ``p``; ``p >= 1``), so a Laplace-kernel ridge
    model can learn it and its test R^2 is bounded by
    ``var(f) / (var(f) + noise^2)``.

    Parameters
    ----------
    n_train, n_test : int
        Sample counts (>= 1).
    n_features : int
        p >= 1.
    noise : float
        Standard deviation of the Gaussian label noise (>= 0).
    rng : numpy.random.Generator

    Returns
    -------
    dict with ``X_train`` (n_train, p), ``y_train`` (n_train,), ``X_test``,
    ``y_test``, and ``f_test`` (noise-free test targets).

    Raises
    ------
    ValueError
        On non-positive sizes or negative noise.
    """
    if min(n_train, n_test, n_features) < 1:
        raise ValueError("n_train, n_test and n_features must be >= 1")
    if noise < 0:
        raise ValueError(f"noise must be >= 0, got {noise}")

    def f(X: np.ndarray) -> np.ndarray:
        out = np.sin(X[:, 0])
        if X.shape[1] > 1:
            out = out + 0.5 * X[:, 1] ** 2
        if X.shape[1] > 2:
            out = out - X[:, 0] * X[:, 2] / 2
        return out

    X = rng.standard_normal((n_train + n_test, n_features))
    fx = f(X)
    y = fx + noise * rng.standard_normal(fx.shape)
    return {
        "X_train": X[:n_train], "y_train": y[:n_train],
        "X_test": X[n_train:], "y_test": y[n_train:], "f_test": fx[n_train:],
    }
