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
from tolerances import EPS64, perturbed_solve_error, solve_rtol


def expansion_error(X, Z):
    """First-order bound on the error of ||x - z||_2 when it is computed, as
    torch.cdist does for larger inputs, from ||x||^2 + ||z||^2 - 2 x'z: each term is
    exact to ~p eps of its size, so d^2 is off by <= 4 p eps (||x||^2 + ||z||^2) and
    d = sqrt(d^2) by that over 2d (sqrt(.) of it at d = 0: the sqrt(eps) error of
    the Gram expansion)."""
    d2_err = 4 * X.shape[1] * EPS64 * ((X ** 2).sum(1)[:, None] + (Z ** 2).sum(1)[None, :])
    d = cdist(X, Z)
    return np.where(d > np.sqrt(d2_err), d2_err / (2 * np.maximum(d, 1e-300)), np.sqrt(d2_err))


@pytest.fixture
def data():
    return planted_regression(60, 30, 3, 0.1, np.random.default_rng(0))


def test_laplace_kernel_is_exp_of_euclidean_distance(data):
    X, Z = data["X_train"], data["X_test"]
    # Definition: exp(-||x - z||_2 / L), distances from scipy.
    expected = np.exp(-cdist(X, Z) / 2.5)
    # k' = -k / L: the distance's expansion error times k / L (train and test points
    # are apart here, so this is ~1e-14, not sqrt(eps))
    tol = expected * expansion_error(X, Z) / 2.5 + 4 * EPS64 * expected
    assert np.all(np.abs(laplace_kernel(X, Z, bandwidth=2.5).numpy() - expected) <= tol)


def test_gaussian_and_linear_kernels_match_sklearn(data):
    X = data["X_train"]
    # both Gram-expand d^2 (no sqrt): error gamma 4 p eps (||x||^2 + ||z||^2) ~ 1e-14
    np.testing.assert_allclose(gaussian_kernel(X, gamma=0.3).numpy(), rbf_kernel(X, gamma=0.3), atol=1e-12)
    np.testing.assert_allclose(linear_kernel(X).numpy(), X @ X.T, atol=1e-12)   # one matmul, p terms


@pytest.mark.parametrize("lam", [1e-3, 1.0])
def test_krr_matches_sklearn_precomputed(data, lam):
    X, y, Xt = data["X_train"], data["y_train"], data["X_test"]
    ours = KernelRidge("laplace", lam=lam, kernel_params={"bandwidth": 2.0}, device="cpu").fit(X, y)
    K = np.exp(-cdist(X, X) / 2.0)
    Kt = np.exp(-cdist(Xt, X) / 2.0)
    # scikit-learn's KernelRidge solves the same system (K + alpha I) c = y, but on
    # scipy's distances; ours are Gram-expanded (torch.cdist), off by up to sqrt(eps)
    # relative at zero distance: the diagonal of K differs by ~2e-8. That known dK
    # bounds the difference of the solutions exactly (tolerances.perturbed_solve_error;
    # cond(K + lam I) is ~300 at lam = 1e-3), plus the rounding of the two solves.
    ref = SkKernelRidge(alpha=lam, kernel="precomputed").fit(K, y)
    c, c_ref = ours.dual_coef_.numpy()[:, 0], ref.dual_coef_
    A = K + lam * np.eye(len(K))
    dK = laplace_kernel(X, bandwidth=2.0).numpy() - K
    dKt = laplace_kernel(Xt, X, bandwidth=2.0).numpy() - Kt
    err_c = perturbed_solve_error(A, dK, c_ref) + 2 * solve_rtol(A) * np.linalg.norm(c_ref)
    assert np.linalg.norm(c - c_ref) <= err_c
    # f = Kt c: |df_i| <= ||Kt_i|| ||dc|| + ||dKt_i|| ||c||
    bound = (np.linalg.norm(Kt, axis=1) * err_c + np.linalg.norm(dKt, axis=1) * np.linalg.norm(c)
             + 4 * EPS64 * np.abs(Kt) @ np.abs(c))
    assert np.all(np.abs(ours.predict(Xt) - ref.predict(Kt)) <= bound)


def test_krr_multi_output_shape(data):
    Y = np.c_[data["y_train"], -data["y_train"]]
    model = KernelRidge("laplace", lam=0.1, device="cpu").fit(data["X_train"], Y)
    P = model.predict(data["X_test"])
    assert P.shape == (30, 2)
    # Linear in y: the second output is minus the first (the same triangular solves on
    # negated right-hand sides: exact in floating point, atol only for safety)
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
