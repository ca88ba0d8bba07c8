"""The feature-row kernel operator (kernels/feature_operator.py) behind the
matrix-free solvers: its blocks are the kernel's, and CG and Nyström with
every row as a centre reach the exact ridge solution."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from biokernels.kernels.classic import laplace_kernel
from biokernels.kernels.feature_operator import FeatureKernelOperator
from biokernels.solvers.matrix_free import cg_ridge, nystrom_ridge


def _setup(n=300):
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(n, 5)), rng.normal(size=(n, 3))
    k = lambda A, B: laplace_kernel(A, B, bandwidth=2.0)  # noqa: E731
    return X, Y, k, k(X, X).numpy()


def test_blocks_products_and_diagonal_are_the_kernels():
    X, Y, k, K = _setup()
    op = FeatureKernelOperator(X, k, dtype=torch.float64, block_bytes=64 * 300 * 8)
    assert len(list(op.row_blocks())) == 5
    V = torch.as_tensor(Y)
    assert np.allclose(op.matmul(V).numpy(), K @ Y, rtol=1e-12, atol=1e-12)
    assert np.allclose(op.diag().numpy(), 1.0) and np.allclose(op.kernel([3, 1], slice(0, 4)).numpy(), K[[3, 1], :4])
    assert np.allclose(op.panel([2, 5]).rows(slice(10, 20)).numpy(), K[10:20][:, [2, 5]])


@pytest.mark.parametrize("solver", ["cg", "nystrom_all_centres"])
def test_matrix_free_solvers_reach_the_exact_ridge(solver):
    # both solve (K + lam I) a = Y - mean(Y); Nystrom with M = n centres is the exact problem
    X, Y, k, K = _setup()
    lam = 0.1
    exact = np.linalg.solve(K + lam * np.eye(len(X)), Y - Y.mean(0))
    op = FeatureKernelOperator(X, k, dtype=torch.float64)
    if solver == "cg":
        coef = cg_ridge(op, Y, lam, tol=1e-12, max_iter=1000)["coef"]
        fitted = K @ np.asarray(coef)
    else:
        fit = nystrom_ridge(op, Y, lam, centres=len(X))
        fitted = K[:, np.asarray(fit["centres"])] @ np.asarray(fit["coef"])
    assert np.abs(fitted - K @ exact).max() <= 1e-8 * np.abs(K @ exact).max()


def test_bad_input_raises():
    with pytest.raises(ValueError, match="2-D"):
        FeatureKernelOperator(np.ones(3), lambda A, B: A @ B.T)
    with pytest.raises(ValueError, match="NaN"):
        FeatureKernelOperator(np.full((2, 2), np.nan), lambda A, B: A @ B.T)
