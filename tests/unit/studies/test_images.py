"""The images study (studies/images): predictors against their closed forms,
the scaling law on a planted curve, the tasks' splits, and one end-to-end run
on the bundled digits."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
import yaml

from biokernels.errors import InputError
from biokernels.kernels.classic import laplace_kernel
from biokernels.studies.images.data import load_digits_set, load_sample_patches, resize
from biokernels.studies.images.models import KernelRegressor, make_kernel, one_hot, solve_exact
from biokernels.studies.images.laws import law_rows
from biokernels.studies.images.protocol import TargetKernels, curve_sizes
from biokernels.studies.images.run import run_classes, run_projection, run_translation
from biokernels.studies.images.tasks import source_set, split_train_test, translation_target

from conftest import REPO

CFG = yaml.safe_load((REPO / "config/config.yaml").read_text())["images"]


def _task(seed=0, n_tr=60, n_te=40, p=6, c=3):
    rng = np.random.default_rng(seed)
    y_tr, y_te = rng.integers(0, c, n_tr), rng.integers(0, c, n_te)
    centres = rng.normal(size=(c, p)) * 3
    return {"X_train": centres[y_tr] + rng.normal(size=(n_tr, p)), "y_train": y_tr,
            "X_test": centres[y_te] + rng.normal(size=(n_te, p)), "y_test": y_te, "classes": list(range(c))}


def test_predictors_are_their_closed_forms():
    task = _task()
    k = lambda A, B: laplace_kernel(A, B, bandwidth=3.0)  # noqa: E731
    src = KernelRegressor(k).fit(task["X_train"][:30] + 0.5, one_hot(task["y_train"][:30], range(3)))
    tk = TargetKernels(k, task, src, bandwidth=2.0)
    Xtr, Xte = (torch.as_tensor(task[x]) for x in ("X_train", "X_test"))
    Ytr = one_hot(task["y_train"], range(3))
    S_tr, S_te = src.predict(task["X_train"]), src.predict(task["X_test"])
    acc = lambda P: float(np.mean(P.argmax(1) == task["y_test"]))  # noqa: E731
    # translated: f_s(x) + K(x, X) K^-1 (Y - f_s(X))   (Definition 2, exact)
    corr = k(Xte, Xtr).numpy() @ np.linalg.solve(k(Xtr, Xtr).numpy(), Ytr - S_tr)
    idx = np.arange(len(Ytr))
    base = k(Xte, Xtr).numpy() @ np.linalg.solve(k(Xtr, Xtr).numpy(), Ytr)
    assert tk.baseline_and_translated(idx, 0.0) == (acc(base), acc(S_te + corr))
    # projected: a Laplace kernel regression on the source scores (Definition 1)
    L = lambda A, B: laplace_kernel(A, B, bandwidth=2.0).numpy()  # noqa: E731
    proj = L(S_te, S_tr) @ np.linalg.solve(L(S_tr, S_tr) + 1e-4 * np.eye(len(S_tr)), Ytr)
    assert tk.projected(idx, 1e-4) == acc(proj)
    assert tk.baseline(idx, 0.0) == acc(base)
    assert tk.source() == acc(S_te)


def test_exact_solve_of_a_singular_kernel_is_the_minimum_norm_interpolant():
    X = np.repeat(np.random.default_rng(0).normal(size=(5, 3)), 2, axis=0)  # every row twice
    Y = np.random.default_rng(1).normal(size=(10, 2))
    K = laplace_kernel(X, X, bandwidth=1.0)
    alpha = solve_exact(K, Y, 0.0)
    assert np.allclose(alpha.numpy(), np.linalg.pinv(K.numpy()) @ Y, atol=1e-10)


def test_log2_law_on_a_planted_curve():
    n = np.array(curve_sizes(1000, 50, 10))
    assert len(n) == 50 and n[0] == 10 and n[-1] == 1000
    rows = [{"kernel": "k", "target": "t", "n_train": m, "seed": s, "projected": 0.05 * np.log2(m) + 0.2}
            for m in n for s in range(3)]
    (law,) = law_rows(rows, ["kernel", "target"], "projected")
    assert law["a"] == pytest.approx(0.05) and law["r2"] == pytest.approx(1.0)
    assert law["last_abs_error"] == pytest.approx(0.0, abs=1e-12)


def test_splits_are_stratified_disjoint_and_seeded():
    y = np.repeat(np.arange(4), 25)
    tr, te = split_train_test(y, 0.2, np.random.default_rng(0))
    assert not set(tr) & set(te) and len(te) == 20 and np.array_equal(np.bincount(y[te]), [5] * 4)
    tr2, _ = split_train_test(y, 0.2, np.random.default_rng(0))
    assert np.array_equal(tr, tr2)
    with pytest.raises(InputError, match="cannot be split"):
        split_train_test(np.array([0, 0, 1]), 0.5, np.random.default_rng(0))


def test_image_sets():
    d = load_digits_set()
    assert d.images.shape == (1797, 8, 8) and 0 <= d.images.min() and d.images.max() <= 1
    src = source_set(d, [0, 1, 2], 100, seed=0)
    assert set(src.labels) == {0, 1, 2} and len(src.labels) == 100 and set(src.split) == {"train"}
    p = load_sample_patches((8, 8), 20)
    assert p.images.shape == (160, 8, 8) and len(p.class_names) == 8
    assert resize(d, (28, 28)).images.shape == (1797, 28, 28)
    with pytest.raises(InputError, match="classes"):
        d.select([11])
    t = translation_target(d, "contrast", 5, {"test_fraction": 0.1}, seed=0)
    clean = translation_target(d, "translate", 5, {"test_fraction": 0.1}, seed=0)
    assert np.array_equal(t["y_train"], clean["y_train"])  # one split for every corruption


def test_cntk_kernel_reshapes_rows():
    k = make_kernel("cntk", {"strides": [2, 1]}, (8, 8))
    X = torch.rand(3, 64, dtype=torch.float64)
    assert k(X, X).shape == (3, 3) and torch.allclose(k(X, X), k(X, X.clone()))
    with pytest.raises(InputError, match="unknown kernel"):
        make_kernel("rbf", {}, (8, 8))


def _small_cfg():
    cfg = copy.deepcopy(CFG)
    cfg["kernels"] = {"laplace": {"bandwidth": 10.0}}
    cfg["projection"].update(curve_points=5, seeds=[0])
    cfg["projection"]["targets"]["disjoint"]["per_class"] = 30
    cfg["translation"].update(corruptions=["gaussian_noise", "contrast"], curve_points=4, seeds=[0])
    cfg["classes_vs_examples"].update(class_counts=[2, 4], seeds=[0])
    return cfg


def test_runs_on_the_digits():
    cfg = _small_cfg()
    out = run_projection(cfg, "laplace", seed=0, log=lambda *a: None)
    by = {r["target"]: r for r in out["fig2a"]}
    assert by["overlap"]["in_source"] == 4 and by["partial"]["in_source"] == 1 and by["disjoint"]["in_source"] == 0
    # a source on six digit classes separates four of them almost perfectly
    assert by["overlap"]["projected"] > 0.9
    assert {r["n_train"] for r in out["fig2b"] if r["target"] == "overlap"} >= {10}
    tr = run_translation(cfg, "laplace", seed=0, log=lambda *a: None)
    assert [r["corruption"] for r in tr["fig3a"]] == ["gaussian_noise", "contrast"]
    assert all(0 <= r[m] <= 1 for r in tr["fig3a"] for m in ("baseline", "source", "translated"))
    rows = run_classes(cfg, "laplace", seed=0, log=lambda *a: None)
    assert {(r["source_classes"], r["n_source"]) for r in rows} == {(2, 150), (4, 148)}  # 150 // k each


def test_too_few_images_for_the_fixed_source_budget():
    cfg = _small_cfg()
    cfg["classes_vs_examples"]["total"] = 10_000
    with pytest.raises(InputError, match="total"):
        run_classes(cfg, "laplace", seed=0, log=lambda *a: None)


def test_resize_matrix_is_the_resize():
    from biokernels.studies.images.domains import image_domains, resize_matrix

    rng = np.random.default_rng(0)
    imgs = rng.random((5, 4, 4)).astype(np.float64)
    from biokernels.studies.images.data import ImageSet
    s = ImageSet("x", imgs, np.zeros(5, int), np.full(5, "train"), [])
    direct = resize(s, (8, 8), clip=False).images.reshape(5, -1)
    assert np.allclose(imgs.reshape(5, -1) @ resize_matrix((4, 4), (8, 8)).T, direct, atol=1e-12)
    cfg = {"per_class_source": 20, "max_target": 300, "corruption": "fog", "severity": 5,
           "source_size": [8, 8], "target_size": [4, 4]}
    Xs, ys, Xt, yt, M = image_domains({"name": "digits"}, cfg, seed=0)
    assert Xs.shape == (200, 64) and Xt.shape == (300, 16) and M.shape == (64, 16)
    assert np.bincount(ys).tolist() == [20] * 10
