"""Transfer vs MKL (SI Fig. S7): translation, kernels, runner shapes, task builders, bad input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from biokernels.io.networks import InputError
from biokernels.mkl_transfer import (KERNEL_NAMES, METHODS, KernelSpec, base_kernels, digit_tasks,
                                     krr_coefficients, loo_ridge, resolve_kernel_spec, run_transfer, summarize,
                                     translate, viability_tasks)


def _kernel(A, B, L=3.0):
    return base_kernels(A, B, KernelSpec(L, 0.01, 1.0))[0]


def _planted(rng, n, w, shift=0.0, noise=0.0, d=10):
    X = rng.normal(size=(n, d)) + shift
    y = np.sign(X @ w + noise * rng.normal(size=n))
    y[y == 0] = 1
    return X, y


def test_base_kernels_match_the_torch_kernels_and_shapes():
    pytest.importorskip("torch")
    from biokernels.kernels.classic import gaussian_kernel, laplace_kernel, linear_kernel

    rng = np.random.default_rng(0)
    X, Z = rng.uniform(0, 16, (7, 64)), rng.uniform(0, 16, (4, 64))
    Ks = base_kernels(X, Z, KernelSpec(10.0, 1e-3, 1.0))
    assert [K.shape for K in Ks] == [(7, 4)] * 3
    np.testing.assert_allclose(Ks[0], laplace_kernel(X, Z, 10.0).numpy(), rtol=1e-10)
    np.testing.assert_allclose(Ks[1], gaussian_kernel(X, Z, 1e-3).numpy(), rtol=1e-10)
    np.testing.assert_allclose(Ks[2], linear_kernel(X, Z).numpy(), rtol=1e-10)
    Kxx = base_kernels(X)
    for K in Kxx:
        np.testing.assert_array_equal(K, K.T)
    np.testing.assert_array_equal(np.diag(Kxx[0]), 1.0)


def test_matched_gamma_equals_laplace_at_the_median_distance():
    rng = np.random.default_rng(1)
    X = rng.uniform(0, 16, (50, 64))
    spec = resolve_kernel_spec(X, 10.0, "match", "match")
    from scipy.spatial.distance import pdist
    d = np.median(pdist(X))
    assert np.isclose(np.exp(-spec.gamma * d * d), np.exp(-d / 10.0))
    assert np.isclose(np.mean(np.diag(base_kernels(X, spec=spec)[2])), 1.0)
    assert resolve_kernel_spec(X, 10.0, 1e-3, 1.0) == KernelSpec(10.0, 1e-3, 1.0)
    with pytest.raises(InputError, match="gaussian_gamma"):
        resolve_kernel_spec(X, 10.0, -1.0, 1.0)
    with pytest.raises(InputError, match="laplace_bandwidth"):
        resolve_kernel_spec(X, 0.0)


def test_translation_is_the_source_model_when_the_correction_is_zero():
    rng = np.random.default_rng(2)
    w = rng.normal(size=10)
    Xs, ys = _planted(rng, 60, w)
    Xt, yt = _planted(rng, 20, w, shift=0.5)
    Xq, _ = _planted(rng, 15, w, shift=0.5)
    out = translate(_kernel(Xs, Xs), ys, _kernel(Xt, Xs), _kernel(Xt, Xt), yt, _kernel(Xq, Xs), _kernel(Xq, Xt),
                    source_ridge=1e-3, target_ridge=1e12)
    fs = _kernel(Xq, Xs) @ krr_coefficients(_kernel(Xs, Xs), ys, 1e-3)
    np.testing.assert_allclose(out["source"], fs)
    np.testing.assert_allclose(out["translation"], fs, atol=1e-9)
    assert np.abs(out["correction"]).max() < 1e-9


def test_translation_is_the_target_model_when_the_source_model_is_zero():
    rng = np.random.default_rng(3)
    w = rng.normal(size=10)
    Xs, _ = _planted(rng, 40, w)
    Xt, yt = _planted(rng, 25, w)
    Xq, _ = _planted(rng, 15, w)
    out = translate(_kernel(Xs, Xs), np.zeros(40), _kernel(Xt, Xs), _kernel(Xt, Xt), yt, _kernel(Xq, Xs),
                    _kernel(Xq, Xt), source_ridge=1e-3, target_ridge=1e-2)
    target_only = _kernel(Xq, Xt) @ krr_coefficients(_kernel(Xt, Xt), yt, 1e-2)
    np.testing.assert_allclose(out["source"], 0.0)
    np.testing.assert_allclose(out["translation"], target_only, rtol=1e-10, atol=1e-12)


def test_loo_ridge_matches_explicit_leave_one_out():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(30, 5))
    y = X[:, 0] + 0.3 * rng.normal(size=30)
    K = _kernel(X, X)
    grid = [1e-4, 1e-2, 1.0]
    r, a, mse = loo_ridge(K, y, grid)
    scale = np.mean(np.diag(K))
    for g, m in zip(grid, mse, strict=True):
        errs = []
        for i in range(30):
            keep = np.arange(30) != i
            Kk = K[np.ix_(keep, keep)]
            alpha = np.linalg.solve(Kk + g * scale * np.eye(29), y[keep])   # same absolute ridge
            errs.append(y[i] - K[i, keep] @ alpha)
        assert np.isclose(m, np.mean(np.square(errs)), rtol=1e-6)
    assert r == grid[int(np.argmin(mse))]
    np.testing.assert_allclose(a, krr_coefficients(K, y, r), rtol=1e-6, atol=1e-9)


def test_translation_beats_the_target_only_model_at_small_n_on_a_shared_decision_function():
    rng = np.random.default_rng(5)
    w = rng.normal(size=10)
    wins, diffs = 0, []
    for _ in range(5):
        Xs, ys = _planted(rng, 300, w)
        Xt, yt = _planted(rng, 12, w, shift=0.3)
        Xq, yq = _planted(rng, 300, w, shift=0.3)
        Kl = lambda A, B: base_kernels(A, B, KernelSpec(10.0, 1e-3, 1.0))[2]  # noqa: E731
        out = translate(Kl(Xs, Xs), ys, Kl(Xt, Xs), Kl(Xt, Xt), yt, Kl(Xq, Xs), Kl(Xq, Xt), 1e-3, 1e-1)
        tgt = Kl(Xq, Xt) @ krr_coefficients(Kl(Xt, Xt), yt, 1e-1)
        acc_tr = np.mean(np.sign(out["translation"]) == yq)
        acc_t = np.mean(np.sign(tgt) == yq)
        diffs.append(acc_tr - acc_t)
        wins += acc_tr > acc_t
    assert wins == 5 and np.mean(diffs) > 0.02


def _toy_tasks(rng, n_targets=2):
    w = rng.normal(size=6)
    Xs, ys = _planted(rng, 60, w, d=6)
    Xsq, ysq = _planted(rng, 20, w, d=6)
    source = {"X_train": Xs, "y_train": ys, "X_test": Xsq, "y_test": ysq}
    targets = {}
    for k in range(n_targets):
        Xt, yt = _planted(rng, 16, w, shift=0.2 * (k + 1), d=6)
        Xq, yq = _planted(rng, 14, w, shift=0.2 * (k + 1), d=6)
        targets[f"t{k}"] = {"X_train": Xt, "y_train": yt, "X_test": Xq, "y_test": yq}
    return source, targets


def test_run_transfer_shapes_and_tidy_outputs():
    rng = np.random.default_rng(6)
    source, targets = _toy_tasks(rng)
    acc, w = run_transfer(source, targets, seed=7)
    # per method: 2 source rows + 4 models x 2 targets
    assert len(acc) == len(METHODS) * (2 + 4 * 2)
    assert list(acc.columns[:5]) == ["target", "method", "model", "accuracy", "seed"]
    assert set(acc["model"]) == {"baseline", "transfer", "translation", "source"}
    assert acc["accuracy"].between(0, 1).all() and (acc["seed"] == 7).all()
    t0 = acc[acc["target"] == "t0"]
    assert (t0["n_train"] == 16).all() and (t0["n_test"] == 14).all()
    assert len(w) == len(METHODS) * 3 * 3 and set(w["kernel"]) == set(KERNEL_NAMES)
    sums = w[w["method"] != "CKA"].groupby(["target", "method"])["weight"].sum()
    np.testing.assert_allclose(sums, 1.0)
    table = summarize(acc)
    assert "source" not in set(table["target"])
    assert len(table) == len(METHODS) * 2 * 4 and table["translation_best"].dtype == bool
    # transfer with the source weights = an MKLClassifier with those weights (sanity: deterministic)
    acc2, _ = run_transfer(source, targets, seed=7)
    pd.testing.assert_frame_equal(acc, acc2)


def test_single_class_target_is_an_error_naming_the_target():
    rng = np.random.default_rng(8)
    source, targets = _toy_tasks(rng)
    targets["flat"] = dict(targets["t0"], y_train=np.ones(16))
    with pytest.raises(InputError, match="target 'flat'.*2 classes"):
        run_transfer(source, targets, seed=0, methods=["FHeuristic"])


def test_other_bad_inputs():
    rng = np.random.default_rng(9)
    source, targets = _toy_tasks(rng, 1)
    bad = {"wide": dict(targets["t0"], X_train=np.ones((16, 7)))}
    with pytest.raises(InputError, match="target 'wide'.*6 features"):
        run_transfer(source, bad, seed=0)
    other = {"labels": dict(targets["t0"], y_train=np.where(targets["t0"]["y_train"] > 0, 2, 0))}
    with pytest.raises(InputError, match="target 'labels'.*source"):
        run_transfer(source, other, seed=0)
    with pytest.raises(InputError, match="unknown MKL method"):
        run_transfer(source, targets, seed=0, methods=["MKLpy"])
    with pytest.raises(InputError, match="at least one target"):
        run_transfer(source, {}, seed=0)
    with pytest.raises(InputError, match="inconsistent kernel shapes"):
        translate(np.eye(3), np.ones(3), np.ones((2, 4)), np.eye(2), np.ones(2), np.ones((1, 3)), np.ones((1, 2)))


def test_digit_tasks_share_the_split_across_corruptions():
    src, tg, info = digit_tasks(["contrast", "gaussian_noise"], seed=3)
    assert src["X_train"].shape[1] == 64 and set(np.unique(src["y_train"])) == {0, 1}
    a, b = tg["contrast"], tg["gaussian_noise"]
    assert a["X_train"].shape == b["X_train"].shape and 80 <= a["X_train"].shape[0] <= 95
    np.testing.assert_array_equal(a["y_train"], b["y_train"])
    src2, _, _ = digit_tasks(["rotate"], seed=3)
    np.testing.assert_array_equal(src["X_train"], src2["X_train"])
    assert not np.array_equal(a["X_train"], b["X_train"])


def test_viability_tasks_split_drugs_and_label_by_median():
    rng = np.random.default_rng(10)
    drugs = [f"D{i:03d}" for i in range(120)]
    F = pd.DataFrame(rng.integers(0, 2, (120, 32)), index=drugs)
    rows = [{"drug_key": d, "cell_id": c, "viability": float(rng.normal())} for d in drugs for c in ("A", "B", "C")]
    rows = rows[:-5]  # cell C misses a few drugs
    v = pd.DataFrame(rows)
    src, tg, info = viability_tasks(v, F, seed=0, n_target_train=20)
    assert info["source_cell"] == "A" and set(tg) == {"B", "C"}
    assert tg["B"]["X_train"].shape == (20, 32)
    n_src = len(src["y_train"]) + len(src["y_test"])
    assert n_src + len(tg["B"]["y_train"]) + len(tg["B"]["y_test"]) <= 120
    src_rows = {r.tobytes() for r in np.vstack([src["X_train"], src["X_test"]])}
    tgt_rows = {r.tobytes() for r in np.vstack([tg["B"]["X_train"], tg["B"]["X_test"]])}
    assert len(src_rows) == n_src and not src_rows & tgt_rows               # disjoint drugs
    assert 0.3 < np.mean(np.concatenate([src["y_train"], src["y_test"]])) < 0.7
    with pytest.raises(InputError, match="source_cell"):
        viability_tasks(v, F, seed=0, source_cell="Z")
    with pytest.raises(InputError, match="target 'B'.*single class"):
        viability_tasks(v.assign(viability=np.where(v["cell_id"] == "B", 5.0, v["viability"])), F, seed=0,
                        label=0.0, n_target_train=20)
