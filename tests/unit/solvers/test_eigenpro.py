"""EigenPro 2 (solvers/eigenpro.py) against the exact ridge solve."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from biokernels.kernels.classic import laplace_kernel
from biokernels.solvers.eigenpro import eigenpro_predict, eigenpro_ridge


def _problem(n=500, seed=0):
    rng = np.random.default_rng(seed)
    Xn = rng.normal(size=(n, 5))
    X = torch.tensor(Xn)
    Y = torch.tensor(np.stack([np.sin(Xn[:, 0]), np.cos(Xn[:, 1] * Xn[:, 2])], 1))
    return X, Y, (lambda A, B: laplace_kernel(A, B, bandwidth=2.0))


def test_converges_to_the_exact_ridge_solution():
    X, Y, k = _problem()
    lam = 1.0
    K = k(X, X)
    alpha_star = torch.linalg.solve(K + lam * torch.eye(len(X), dtype=K.dtype), Y)
    fit = eigenpro_ridge(k, X, Y, lam=lam, subsample=300, top_q=30, epochs=60, tol=1e-9, seed=1)
    r = (K @ fit["alpha"] + lam * fit["alpha"] - Y)
    assert torch.linalg.norm(r) <= 1e-6 * torch.linalg.norm(Y)
    # K (K + lam I)^-1 has norm <= 1, so the fitted values differ from the
    # exact ones by at most the residual's norm.
    assert torch.linalg.norm(K @ (fit["alpha"] - alpha_star)) <= torch.linalg.norm(r) * (1 + 1e-9)
    Xn = X[:50] + 0.1
    assert torch.allclose(eigenpro_predict(k, X, fit["alpha"], Xn, block=17), k(Xn, X) @ fit["alpha"])


def test_the_preconditioner_accelerates_gradient_descent():
    # EigenPro's point: flattening the top q eigendirections lets full-batch
    # gradient descent take a step 1/lam_(q+1) instead of 1/lam_1; after the
    # same 20 passes its residual is far lower (the contraction per pass of the
    # slowest direction kept is 1 - lam_n/lam_(q+1) instead of 1 - lam_n/lam_1).
    X, Y, k = _problem(400, seed=2)
    K = k(X, X)
    res = {}
    for q in (0, 80):
        fit = eigenpro_ridge(k, X, Y, lam=0.0, subsample=400, top_q=q, batch=400, epochs=20, seed=0)
        res[q] = float(torch.linalg.norm(K @ fit["alpha"] - Y) / torch.linalg.norm(Y))
        assert fit["batch"] == 400
    assert res[80] < res[0] / 100


def test_large_q_with_a_short_last_batch_stays_stable():
    # The short last batch of an epoch gets its own step m/(beta + (m-1) lam_q+1).
    X, Y, k = _problem(600, seed=3)
    fit = eigenpro_ridge(k, X, Y, lam=0.0, subsample=600, top_q=250, epochs=8, seed=0)
    assert fit["batch"] < len(X) and len(X) % fit["batch"]
    assert fit["history"][-1]["running_residual"] < fit["history"][0]["running_residual"] < 1.0


@pytest.mark.parametrize("kwargs, match", [({"lam": -1}, "lam"), ({"subsample": 1}, "subsample"),
                                           ({"epochs": 0}, "epochs")])
def test_bad_settings_raise(kwargs, match):
    X, Y, k = _problem(20)
    with pytest.raises(ValueError, match=match):
        eigenpro_ridge(k, X, Y, **kwargs)
