"""Kernel ridge and the classic kernels against independent libraries."""

import numpy as np
import pytest
import torch
from scipy.spatial.distance import cdist
from sklearn.kernel_ridge import KernelRidge as SkKernelRidge
from sklearn.metrics.pairwise import rbf_kernel

from biokernels.device import log_device, resolve_device
from biokernels.kernels.classic import gaussian_kernel, laplace_kernel, linear_kernel
from biokernels.solvers.krr import KernelRidge, krr_sweep
from biokernels.synth.demo import planted_regression


@pytest.fixture
def data():
    return planted_regression(60, 30, 3, 0.1, np.random.default_rng(0))


def test_laplace_kernel_is_exp_of_euclidean_distance(data):
    X, Z = data["X_train"], data["X_test"]
    # Definition: exp(-||x - z||_2 / L), distances from scipy.
    expected = np.exp(-cdist(X, Z) / 2.5)
    np.testing.assert_allclose(laplace_kernel(X, Z, bandwidth=2.5).numpy(), expected, atol=1e-12)


def test_gaussian_and_linear_kernels_match_sklearn(data):
    X = data["X_train"]
    np.testing.assert_allclose(gaussian_kernel(X, gamma=0.3).numpy(), rbf_kernel(X, gamma=0.3), atol=1e-12)
    np.testing.assert_allclose(linear_kernel(X).numpy(), X @ X.T, atol=1e-12)


@pytest.mark.parametrize("lam", [1e-3, 1.0])
def test_krr_matches_sklearn_precomputed(data, lam):
    X, y, Xt = data["X_train"], data["y_train"], data["X_test"]
    ours = KernelRidge("laplace", lam=lam, kernel_params={"bandwidth": 2.0}, device="cpu").fit(X, y)
    K = np.exp(-cdist(X, X) / 2.0)
    Kt = np.exp(-cdist(Xt, X) / 2.0)
    # scikit-learn's KernelRidge solves the same system (K + alpha I) c = y;
    # tolerance: cond(K + 1e-3 I) ~ 1e4 amplifies float64 round-off.
    ref = SkKernelRidge(alpha=lam, kernel="precomputed").fit(K, y)
    np.testing.assert_allclose(ours.predict(Xt), ref.predict(Kt), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(ours.dual_coef_.numpy()[:, 0], ref.dual_coef_, rtol=1e-6, atol=1e-7)


def test_krr_multi_output_shape(data):
    Y = np.c_[data["y_train"], -data["y_train"]]
    model = KernelRidge("laplace", lam=0.1, device="cpu").fit(data["X_train"], Y)
    P = model.predict(data["X_test"])
    assert P.shape == (30, 2)
    # Linear in y: the second output is minus the first.
    np.testing.assert_allclose(P[:, 1], -P[:, 0], atol=1e-12)


def test_krr_sweep_recovers_planted_signal(data):
    big = planted_regression(400, 400, 3, 0.3, np.random.default_rng(1))
    table = krr_sweep(big, "lam", [1e-2, 1e2], lam=0.01, bandwidth=2.0, device="cpu")
    # The noise ceiling of test R^2 is var(f) / (var(f) + 0.3^2) ~ 0.93;
    # a well-regularized fit gets most of it, an over-regularized one
    # (lam = 100 >> eigenvalues of K) shrinks towards 0 and loses it.
    assert table.loc[0, "test_r2"] > 0.8
    assert table.loc[1, "test_r2"] < table.loc[0, "test_r2"] - 0.3


def test_bad_inputs_raise_clear_errors(data):
    X, y = data["X_train"], data["y_train"]
    with pytest.raises(ValueError, match="lam must be >= 0"):
        KernelRidge(lam=-1).fit(X, y)
    with pytest.raises(ValueError, match="samples"):
        KernelRidge().fit(X, y[:-1])
    with pytest.raises(ValueError, match="kernel: expected one of"):
        KernelRidge(kernel="polynomial").fit(X, y)
    with pytest.raises(ValueError, match="bandwidth must be > 0"):
        laplace_kernel(X, bandwidth=0)
    with pytest.raises(ValueError, match="NaN"):
        KernelRidge().fit(np.where(X > 1, np.nan, X), y)
    with pytest.raises(ValueError, match="not fitted"):
        KernelRidge().predict(X)
    with pytest.raises(ValueError, match="sweep"):
        krr_sweep(data, "gamma", [1.0], 0.1, 1.0)


def test_resolve_device():
    assert resolve_device("cpu") == torch.device("cpu")
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert resolve_device("auto").type == expected
    with pytest.raises(ValueError, match="expected one of"):
        resolve_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA_VISIBLE_DEVICES"):
            resolve_device("cuda")


def test_log_device_logs_where_the_job_computes(caplog):
    import logging

    with caplog.at_level(logging.INFO, logger="t"):
        assert log_device("cpu", logging.getLogger("t")) == "cpu"
    # The log line the SLURM test reads: device and CUDA_VISIBLE_DEVICES.
    assert "device=cpu" in caplog.text and "CUDA_VISIBLE_DEVICES=" in caplog.text
