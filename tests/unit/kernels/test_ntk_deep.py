"""The deep NTK and the CNTK (kernels/ntk_deep.py) against three independent
computations: the one-hidden-layer closed form of kernels/ntk.py, the values
of neural-tangents (the library the paper used; tests/oracles), and the
empirical NTK of wide finite networks built here with torch autograd."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from biokernels.kernels.ntk import ntk_relu
from biokernels.kernels.ntk_deep import cntk, ntk_fc, same_padding

HERE = Path(__file__).resolve().parents[2]
REFERENCE = json.loads((HERE / "data" / "neural_tangents_reference.json").read_text())


def _oracle_cases():
    spec = importlib.util.spec_from_file_location("nt_oracle", HERE / "oracles" / "neural_tangents_reference.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return list(mod.cases())


def test_one_hidden_layer_is_the_closed_form_of_ntk_relu():
    X = np.random.default_rng(1).normal(size=(6, 13))
    Z = np.random.default_rng(2).normal(size=(4, 13))
    assert torch.allclose(ntk_fc(X, Z, depth=1), ntk_relu(X, Z, fan_in=13), rtol=1e-12, atol=0)


@pytest.mark.parametrize("i", range(4))
def test_matches_neural_tangents(i):
    # Same closed form in float64 on both sides; the arc-cosine at cos ~ 1 (the
    # diagonal) turns a rounding of eps into an angle of sqrt(2 eps) ~ 1.5e-8
    # per layer, hence 1e-7 relative.
    case, ref = _oracle_cases()[i], REFERENCE["cases"][i]
    assert case["kind"] == ref["kind"]
    if case["kind"] == "ntk_fc":
        flat = lambda A: None if A is None else A.reshape(len(A), -1)  # noqa: E731
        K = ntk_fc(flat(case["X"]), flat(case["Z"]), depth=case["depth"], w_std=case["w_std"], b_std=case["b_std"])
    else:
        K = cntk(case["X"], case["Z"], strides=case["strides"], w_std=case["w_std"], b_std=case["b_std"], block=2)
    ref = np.asarray(ref["K"])
    assert np.abs(K.numpy() - ref).max() <= 1e-7 * np.abs(ref).max()


def _mlp_ntk(X, depth, width, seed, w=math.sqrt(2), b=1.0):
    g = torch.Generator().manual_seed(seed)
    dims = [X.shape[1]] + [width] * depth + [1]
    params = [t for a, c in zip(dims[:-1], dims[1:])
              for t in (torch.randn(a, c, generator=g, dtype=torch.float64),
                        torch.randn(c, generator=g, dtype=torch.float64))]

    def f(ps, x):
        h = x
        for layer in range(len(dims) - 1):
            h = w / math.sqrt(ps[2 * layer].shape[0]) * h @ ps[2 * layer] + b * ps[2 * layer + 1]
            h = torch.relu(h) if layer < len(dims) - 2 else h
        return h[..., 0]
    J = torch.func.jacrev(f)(params, X)
    return sum(j.flatten(1) @ j.flatten(1).T for j in J)


def _cnn_ntk(X, strides, width, seed, w=math.sqrt(2), b=1.0):
    g = torch.Generator().manual_seed(seed)
    X = X[:, None]
    params, c, H, W = [], 1, X.shape[2], X.shape[3]
    for s in strides:
        params += [torch.randn(width, c, 3, 3, generator=g, dtype=torch.float64),
                   torch.randn(width, generator=g, dtype=torch.float64)]
        c, H, W = width, same_padding(H, s)[0], same_padding(W, s)[0]
    params += [torch.randn(c * H * W, 1, generator=g, dtype=torch.float64), torch.randn(1, generator=g, dtype=torch.float64)]

    def f(ps, x):
        h = x
        for layer, s in enumerate(strides):
            _, h0, h1 = same_padding(h.shape[2], s)
            _, w0, w1 = same_padding(h.shape[3], s)
            Wt = ps[2 * layer]
            h = F.conv2d(F.pad(h, (w0, w1, h0, h1)), Wt, stride=s) * (w / math.sqrt(Wt.shape[1] * 9))
            h = torch.relu(h + b * ps[2 * layer + 1][:, None, None])
        return (w / math.sqrt(ps[-2].shape[0]) * h.flatten(1) @ ps[-2] + b * ps[-1])[:, 0]
    J = torch.func.jacrev(f)(params, X)
    return sum(j.flatten(1) @ j.flatten(1).T for j in J)


@pytest.mark.parametrize("kind", ["fc", "conv"])
def test_matches_the_empirical_ntk_of_wide_networks(kind):
    # The empirical NTK of a random network has mean NTK + O(1/width) and
    # fluctuations O(1/sqrt(width)); over R independent networks the mean's
    # standard error is measured. Bound: 4 standard errors of the mean plus a
    # finite-width bias of depth/width relative.
    X = torch.tensor(np.random.default_rng(0).random((4, 8, 8)))
    if kind == "fc":
        depth, width, K = 3, 1024, ntk_fc(X.flatten(1), depth=3)
        E = torch.stack([_mlp_ntk(X.flatten(1), depth, width, s) for s in range(6)])
    else:
        depth, width, K = 3, 128, cntk(X, strides=(2, 2, 1))
        E = torch.stack([_cnn_ntk(X, (2, 2, 1), width, s) for s in range(6)])
    se = E.std(0) / math.sqrt(len(E))
    assert ((E.mean(0) - K).abs() <= 4 * se + depth / width * K.abs()).all()


def test_cntk_blocks_and_symmetry():
    X = torch.tensor(np.random.default_rng(3).random((7, 10, 9)))
    full = cntk(X, X[:], block=7)
    assert torch.allclose(cntk(X, block=3), full, rtol=1e-12, atol=0)
    assert torch.allclose(full, full.T, rtol=1e-12, atol=0)
    assert torch.linalg.eigvalsh(full).min() > 0


@pytest.mark.parametrize("call, match", [
    (lambda: ntk_fc(np.ones((2, 3)), depth=0), "depth"),
    (lambda: ntk_fc(np.ones((2, 3)), np.ones((2, 4))), "features"),
    (lambda: ntk_fc(np.full((2, 3), np.nan)), "NaN"),
    (lambda: cntk(np.ones((2, 5, 5)), strides=()), "strides"),
    (lambda: cntk(np.ones((2, 5, 5)), np.ones((2, 4, 5))), "shape"),
    (lambda: cntk(np.ones((2, 5)), None), "images"),
    (lambda: ntk_fc(np.ones((2, 3)), w_std=0), "w_std"),
])
def test_bad_arguments_raise(call, match):
    with pytest.raises(ValueError, match=match):
        call()
