"""NTK of a one-hidden-layer ReLU network with bias: closed form against
finite networks, the indexed Gram, and the bias-free textbook formula."""

import math

import numpy as np
import pytest
import torch

from biokernels.kernels.ntk import (
    B_STD,
    W_STD,
    empirical_ntk,
    ntk_relu,
    ntk_relu_from_gram,
    ntk_relu_indexed,
)
from tolerances import FLOAT32_GRAM


def unit_rows(A):
    return A / np.linalg.norm(A, axis=1, keepdims=True)


@pytest.fixture
def X():
    return unit_rows(np.random.default_rng(0).standard_normal((8, 6)))


@pytest.mark.parametrize("fan_in", [None, 6])
def test_closed_form_is_the_wide_limit_of_finite_networks(X, fan_in):
    # Jacot et al. 2018: the empirical NTK of a width-N network converges to
    # the closed form with O(N^-1/2) fluctuations.
    K = ntk_relu(X, fan_in=fan_in).numpy()
    widths = np.array([256, 4096, 32768])
    err = []
    for w in widths:
        e = [np.linalg.norm(empirical_ntk(X, width=int(w), fan_in=fan_in, seed=s).numpy() - K)
             / np.linalg.norm(K) for s in range(4)]
        err.append(np.mean(e))
    err = np.array(err)
    # Monte Carlo over N hidden units: each unit's term has O(1) relative sd, so the
    # relative error is c / sqrt(N) with c = O(1) (c ~ 1.1-1.5 on these inputs). Widths
    # x16 and x8 apart cut it by ~4 and ~2.8, far beyond the seed-to-seed sd of a
    # 4-seed mean (~15-35 %); the fitted slope has sd ~0.1 around -1/2 (the window is
    # 2-3 sd); 0.03 at N = 32768 (1/sqrt(N) = 0.0055) allows c up to 5.
    assert np.all(np.diff(err) < 0), err
    slope = np.polyfit(np.log(widths), np.log(err), 1)[0]
    assert -0.8 < slope < -0.3, (slope, err)  # ~ -1/2
    assert err[-1] < 0.03, err


def test_empirical_ntk_cross_and_bias_free(X):
    # The cross Gram of two sets matches the closed form too, also with b_std = 0.
    Z = unit_rows(np.random.default_rng(1).standard_normal((5, 6)))
    for b in (0.0, 0.5):
        E = empirical_ntk(X, Z, width=32768, b_std=b, seed=3).numpy()
        K = ntk_relu(X, Z, b_std=b).numpy()
        assert np.linalg.norm(E - K) / np.linalg.norm(K) < 0.03      # c / sqrt(N), as above


def test_bias_free_reduces_to_the_arc_cosine_formula():
    # b_std = 0, w_std = sqrt(2), fan_in = p: the two-layer ReLU NTK for
    # unit-norm inputs is kappa(u) = k1(u) + u k0(u) with
    # k1(u) = [u (pi - arccos u) + sqrt(1 - u^2)] / pi, k0(u) = (pi - arccos u) / pi
    # (Arora et al. 2019; Bietti & Mairal 2019), scaled by 2 ||x|| ||z|| / p
    # for our NTK parameterization with first layer w_std / sqrt(p).
    rng = np.random.default_rng(2)
    p = 7
    X = rng.standard_normal((10, p)) * rng.uniform(0.5, 3, (10, 1))
    Z = rng.standard_normal((6, p))
    nx, nz = np.linalg.norm(X, axis=1), np.linalg.norm(Z, axis=1)
    u = np.clip((X @ Z.T) / np.outer(nx, nz), -1, 1)
    kappa = (u * (np.pi - np.arccos(u)) + np.sqrt(1 - u**2)) / np.pi + u * (np.pi - np.arccos(u)) / np.pi
    expected = 2.0 / p * np.outer(nx, nz) * kappa
    got = ntk_relu(X, Z, w_std=math.sqrt(2), b_std=0.0, fan_in=p).numpy()
    # the same closed form two ways: ~p eps rounding of u, amplified by arccos's
    # condition |u| / sqrt(1 - u^2) arccos(u) (<= ~10 for these |u| < 0.99): ~1e-13
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    # fan_in=None is fan_in=1: the same kernel at sqrt(p) x.
    np.testing.assert_allclose(ntk_relu(X, Z, b_std=0.0).numpy(), p * expected, rtol=1e-12)


def test_bias_adds_the_offset_formula():
    # With bias: S = w^2 <x,z> + b^2 plays the role of <x,z>; at x = z = 0
    # only the biases act: NTK = b^2 + w^2 b^2 / 2 + w^2 b^2 / 2 (E relu(g)^2 =
    # b^2 / 2, E relu'(g)^2 = 1/2 for g ~ N(0, b^2)).
    w, b = 1.3, 0.7
    K = ntk_relu(np.zeros((1, 3)), w_std=w, b_std=b).item()
    assert K == pytest.approx(b**2 + w**2 * b**2, rel=1e-14)     # a few float64 operations


def test_symmetric_psd_and_exact_diagonal():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((200, 20))
    X[1] = X[0]  # a duplicate row: theta = 0 there
    K = ntk_relu(X)
    assert torch.equal(K, K.T)
    ev = torch.linalg.eigvalsh(K)
    # PSD in exact arithmetic; entries are exact to ~eps except where arccos is taken at
    # u ~ 1 (the duplicate pair: theta carries sqrt(eps) ~ 1.5e-8 error), so the computed
    # lambda_min >= -||E||_2 ~ -1e-8 lambda_max, well inside 1e-5
    assert ev[0] >= -1e-5 * ev[-1]
    # On the diagonal theta = 0: NTK = b^2 + 2 w^2 S / 2 * 2 / 2 = b^2 + w^2 S(x, x).
    # (theta = 0 is exact there, so a few roundings: rtol 1e-14.)
    S = W_STD**2 * (X**2).sum(1) + B_STD**2
    np.testing.assert_allclose(K.diagonal().numpy(), B_STD**2 + W_STD**2 * S, rtol=1e-14)
    np.testing.assert_allclose(K[0, 1].item(), K[0, 0].item(), rtol=1e-14)


def test_from_gram_matches_dense_and_works_in_place():
    rng = np.random.default_rng(4)
    X, Z = torch.tensor(rng.standard_normal((30, 5))), torch.tensor(rng.standard_normal((17, 5)))
    G = X @ Z.T
    ref = ntk_relu(X, Z, b_std=0.3, fan_in=5)
    got = ntk_relu_from_gram(G.clone(), (X**2).sum(1), (Z**2).sum(1), b_std=0.3, fan_in=5, block_rows=7)
    # the same formula on the same Gram (here computed outside): rounding of a few ops
    torch.testing.assert_close(got, ref, rtol=1e-13, atol=1e-13)
    out = ntk_relu_from_gram(G, (X**2).sum(1), (Z**2).sum(1), b_std=0.3, fan_in=5, out=G)
    assert out is G
    torch.testing.assert_close(G, ref, rtol=1e-13, atol=1e-13)


@pytest.fixture
def screen():
    rng = np.random.default_rng(5)
    D = (rng.random((40, 64)) < 0.1).astype(float)  # binary fingerprints
    D[:, 0] = 1.0
    D = unit_rows(D)
    C = unit_rows(rng.standard_normal((6, 12)))
    # 50 distinct (drug, cell) pairs, as samples of a screen are (a repeated
    # pair has theta = 0, where the dense Gram's round-off is amplified to
    # sqrt(eps) by the arc-cosine; the indexed Gram is exact there)
    pairs = rng.permutation(40 * 6)[:50]
    drugs, cells = pairs // 6, pairs % 6
    return D, C, drugs, cells


# float64: <x, z> as a sum of the drug and cell Grams vs one dot product over the
# concatenation (~p eps), amplified by arccos's condition (bounded: distinct pairs, see the
# fixture): 1e-12. float32 (FLOAT32_GRAM): ~p = 76 accumulations of eps32 = 1.2e-7: 2e-5.
@pytest.mark.parametrize("dtype,tol", [(torch.float64, 1e-12), (torch.float32, FLOAT32_GRAM)])
def test_indexed_equals_dense_on_concatenated_features(screen, dtype, tol):
    D, C, drugs, cells = screen
    F = np.hstack([D[drugs], C[cells]])
    ref = ntk_relu(F, fan_in=F.shape[1], b_std=0.5).numpy()
    K = ntk_relu_indexed(D @ D.T, C @ C.T, (drugs, cells), block_rows=7, dtype=dtype,
                         fan_in=F.shape[1], b_std=0.5)
    assert K.dtype == dtype and torch.equal(K, K.T)
    # the same index objects as cols take the same symmetric path
    K2 = ntk_relu_indexed(D @ D.T, C @ C.T, (drugs, cells), (drugs, cells), block_rows=7, dtype=dtype,
                          fan_in=F.shape[1], b_std=0.5)
    np.testing.assert_allclose(K2.double().numpy(), K.double().numpy(), rtol=tol, atol=tol * np.abs(ref).max())
    np.testing.assert_allclose(K.double().numpy(), ref, rtol=tol, atol=tol * np.abs(ref).max())
    # cross Gram (test x train) into a preallocated numpy buffer
    rows = (drugs[:13], cells[:13])
    cols = (drugs[20:], cells[20:])
    out = np.full((13, 30), np.nan, dtype=np.float32 if dtype == torch.float32 else np.float64)
    res = ntk_relu_indexed(D @ D.T, C @ C.T, rows, cols, out=out, dtype=dtype, fan_in=F.shape[1], b_std=0.5)
    assert res is out
    np.testing.assert_allclose(out, ref[:13, 20:], rtol=tol, atol=tol * np.abs(ref).max())


def test_indexed_psd_in_float32(screen):
    D, C, drugs, cells = screen
    K = ntk_relu_indexed(D @ D.T, C @ C.T, (drugs, cells)).double()
    ev = torch.linalg.eigvalsh(K)
    # float32 entries, a few eps32 relative: ||E||_2 <= n few eps32 max|K| ~ 1e-7 lambda_max
    # (lambda_max ~ n mean K), far inside 1e-5
    assert ev[0] >= -1e-5 * ev[-1]


def test_bad_inputs_raise_clear_errors(screen):
    D, C, drugs, cells = screen
    with pytest.raises(ValueError, match="w_std"):
        ntk_relu(D, w_std=0.0)
    with pytest.raises(ValueError, match="b_std"):
        ntk_relu(D, b_std=-1.0)
    with pytest.raises(ValueError, match="features"):
        ntk_relu(D, C)
    with pytest.raises(ValueError, match="NaN"):
        ntk_relu(np.full((2, 2), np.nan))
    with pytest.raises(ValueError, match="out of range"):
        ntk_relu_indexed(D @ D.T, C @ C.T, (drugs + 40, cells))
    with pytest.raises(ValueError, match="lengths differ"):
        ntk_relu_indexed(D @ D.T, C @ C.T, (drugs, cells[:3]))
    with pytest.raises(ValueError, match="square"):
        ntk_relu_indexed(D, C @ C.T, (drugs, cells))
    with pytest.raises(ValueError, match="out: expected"):
        ntk_relu_indexed(D @ D.T, C @ C.T, (drugs, cells), out=torch.empty(3, 3))
    with pytest.raises(ValueError, match="int"):
        ntk_relu_indexed(D @ D.T, C @ C.T, (drugs.astype(float), cells))
