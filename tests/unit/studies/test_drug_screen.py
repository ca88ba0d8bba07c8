"""Virtual drug screening by kernel transfer: split, the indexed source model
against the dense one, and the transfer predictors on planted problems with
known answers (Radhakrishnan et al. 2023, Definitions 1-3)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from biokernels.studies.drug_screen.protocol import (SourceModel, ScreenData, assign_folds, cross_validate_cell,
                                                    fit_predict_target, krr_fit_predict, split_cell_lines, unit_rows)
from biokernels.studies.drug_screen.tables import fig4ab_table, fig4cd_table
from biokernels.errors import InputError
from biokernels.kernels.ntk import ntk_relu, ntk_relu_indexed
from biokernels.metrics import mean_r2
from tolerances import EPS64, perturbed_solve_error, solve_rtol


def _pairs(counts: dict[str, int], n_drugs: int = 40, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = [(f"D{d:03d}", cell) for cell, k in counts.items() for d in rng.choice(n_drugs, k, replace=False)]
    df = pd.DataFrame(rows, columns=["pert_id", "cell_id"])
    df.index = df["pert_id"] + ":" + df["cell_id"]
    return df


def test_split_by_availability_and_folds():
    pairs = _pairs({"A": 30, "B": 25, "C": 5, "D": 4, "E": 3, "F": 2})
    source, target, avail = split_cell_lines(pairs, n_target=2)
    assert target == ["A", "B"] and sorted(source) == ["C", "D", "E", "F"]
    s2, t2, _ = split_cell_lines(pairs, n_target=2, n_cells=4)
    assert t2 == ["A", "B"] and sorted(s2) == ["C", "D"]          # E, F dropped
    assert split_cell_lines(pairs, targets=["C"])[1] == ["C"]
    with pytest.raises(InputError, match="not in the data"):
        split_cell_lines(pairs, targets=["VCAP"])
    folds = assign_folds(pairs, source, target, k=5, seed=1)
    src_drugs = set(pairs.loc[pairs["cell_id"].isin(source), "pert_id"])
    t = folds[folds["role"] == "target"]
    assert (t["stratum"] == np.where(t["pert_id"].isin(src_drugs), "seen", "unseen")).all()
    for (_, _), g in t.groupby(["cell_id", "stratum"]):
        sizes = g["fold"].value_counts()
        assert sizes.max() - sizes.min() <= 1                     # balanced folds
    assert (folds.loc[folds["role"] == "source", "fold"] == -1).all()
    pd.testing.assert_frame_equal(folds, assign_folds(pairs, source, target, k=5, seed=1))


def _screen(seed=0, n_drugs=60, n_cells=6, d=8):
    rng = np.random.default_rng(seed)
    D = unit_rows(rng.random((n_drugs, 16)) + 0.1, "D")
    C = unit_rows(rng.normal(size=(n_cells, 5)), "C")
    di, ci = np.meshgrid(np.arange(n_drugs), np.arange(n_cells), indexing="ij")
    di, ci = di.ravel(), ci.ravel()
    Y = rng.normal(size=(len(di), d)) + 5
    ids = [f"D{a}:C{b}" for a, b in zip(di, ci)]
    role = np.where(ci == 0, "target", "source")
    folds = pd.DataFrame({"pert_id": [f"D{a}" for a in di], "cell_id": [f"C{b}" for b in ci], "role": role,
                          "stratum": np.where(role == "target", "seen", ""), "fold": np.where(role == "target",
                                                                                              di % 5, -1)}, index=ids)
    return ScreenData(Y=Y, drug_idx=di, cell_idx=ci, D=D, C=C, folds=folds, drugs=pd.Index([f"D{i}" for i in range(
        n_drugs)]), cells=pd.Index([f"C{i}" for i in range(n_cells)]), genes=pd.Index([f"g{j}" for j in range(d)]))


def test_indexed_source_model_equals_dense_kernel_ridge():
    data = _screen()
    src = np.flatnonzero(data.folds["role"] == "source")
    tgt = np.flatnonzero(data.folds["role"] == "target")
    m = SourceModel(lam=0.5, dtype=torch.float64, solver="cholesky", block=7).fit(data, src)
    dense = krr_fit_predict(data.features(src), data.Y[src], data.features(tgt), 0.5)
    # float64: the indexed Grams differ from the dense ones by rounding only (dK, dKt,
    # computed here); with the two backward-stable solves that bounds the difference
    # (tolerances.perturbed_solve_error, solve_rtol; cond(K + 0.5 I) ~ 3e3)
    X, Xt = data.features(src), data.features(tgt)
    K, Kt = ntk_relu(X).numpy(), ntk_relu(Xt, X).numpy()
    Gd, Gc = torch.as_tensor(data.D @ data.D.T), torch.as_tensor(data.C @ data.C.T)
    rows = (torch.as_tensor(data.drug_idx[src]), torch.as_tensor(data.cell_idx[src]))
    cols = (torch.as_tensor(data.drug_idx[tgt]), torch.as_tensor(data.cell_idx[tgt]))
    dK = ntk_relu_indexed(Gd, Gc, rows, None, dtype=torch.float64).numpy() - K
    dKt = ntk_relu_indexed(Gd, Gc, cols, rows, dtype=torch.float64).numpy() - Kt
    A = K + 0.5 * np.eye(len(K))
    a = np.linalg.solve(A, data.Y[src] - data.Y[src].mean(axis=0))
    da = perturbed_solve_error(A, dK, a) + 2 * solve_rtol(A) * np.linalg.norm(a)
    bound = (np.linalg.norm(Kt, axis=1) * da + np.linalg.norm(dKt, axis=1) * np.linalg.norm(a))[:, None] \
        + 2 * len(K) * EPS64 * np.abs(Kt) @ np.abs(a)
    assert np.all(np.abs(m.predict(data, tgt) - dense) <= bound)
    m32 = SourceModel(lam=0.5, dtype=torch.float32, solver="cholesky").fit(data, src)
    # float32 (eps32 = 1.2e-7): the rigorous bounds are useless here (n eps32 |Kt||a| ~
    # 0.07 for the products, the a-posteriori solve bound ~2e-3), since |a| ~ 20 with
    # cancelling signs. Rounding errors of random sign (Higham 2002, §2.8) give
    # ~eps32 ||kt_i * a||_2 ~ 1e-5 for the products and ~2e-5 for the Gram's rounding
    # (measured through a float64 solve on the float32 Gram): 1e-3 is ~7x the total.
    np.testing.assert_allclose(m32.predict(data, tgt), dense, atol=1e-3)


def test_intercept_makes_large_ridge_predict_the_training_mean():
    rng = np.random.default_rng(0)
    X, Y = unit_rows(rng.normal(size=(30, 4)), "X"), rng.normal(size=(30, 3)) + 7
    p = krr_fit_predict(X[:20], Y[:20], X[20:], lam=1e12)
    # |k alpha| <= ||k|| ||Y - mean|| / lam ~ 4.5 * 5 / 1e12 ~ 2e-11, plus rounding of the mean
    np.testing.assert_allclose(p, np.broadcast_to(Y[:20].mean(axis=0), p.shape), atol=1e-8)


def test_source_model_intercept_is_the_service_intercept():
    """The source model fits through the ridge service with fit_intercept: its mu_ is
    the float64 mean of the training expression (numpy's mean of the same array, so
    exactly), and a huge ridge predicts it (|k alpha| <= ||k|| ||Y - mean|| / lam)."""
    data = _screen(seed=2)
    src = np.flatnonzero(data.folds["role"] == "source")
    tgt = np.flatnonzero(data.folds["role"] == "target")
    m = SourceModel(lam=1e12, dtype=torch.float64, solver="cholesky").fit(data, src)
    np.testing.assert_array_equal(m.mu_, data.Y[src].mean(axis=0))
    assert m.info_["method"] == "cholesky" and m.info_["intercept"] is m.mu_
    # ||k|| <= sqrt(n) max k ~ sqrt(300) * 3, ||Y - mean|| ~ sqrt(300 * 8): ~3e-9 / 1e12 scale
    np.testing.assert_allclose(m.predict(data, tgt), np.broadcast_to(m.mu_, (len(tgt), 8)), atol=1e-8)


def test_translation_recovers_a_constant_shift():
    """Planted: target = source prediction + a constant per-gene shift. The
    translated predictor must be (near) exact; the baseline cannot be, since
    the drug features carry only part of the signal."""
    rng = np.random.default_rng(3)
    n, d = 80, 6
    fs = rng.normal(size=(n, d)) * 2
    shift = rng.normal(size=d) * 3
    Y = fs + shift
    x = unit_rows(rng.normal(size=(n, 10)), "x")
    feats = {"x": x, "proj": unit_rows(fs, "p"), "proj_x": np.hstack([unit_rows(fs, "p"), x])}
    tr, te = np.arange(60), np.arange(60, n)
    take = lambda f, i: {k: v[i] for k, v in f.items()}  # noqa: E731
    trans = fit_predict_target("translation", take(feats, tr), Y[tr], fs[tr], take(feats, te), fs[te], lam=1e6)
    # the residual Y - f_s is the constant shift: centred, it is 0 up to rounding
    # (eps |shift| per entry), so the kernel part is <= ||k|| n eps |shift| / lam ~ 1e-19
    # and what remains is the rounding of f_s + shift (~eps |Y| ~ 1e-15): 1e-10 is loose
    np.testing.assert_allclose(trans, Y[te], atol=1e-10)
    base = fit_predict_target("baseline", take(feats, tr), Y[tr], fs[tr], take(feats, te), fs[te], lam=1e-3)
    # the baseline sees only x, independent of the planted f_s: its R² is ~0 against
    # the translation's 1
    assert mean_r2(base, Y[te]) < mean_r2(trans, Y[te]) - 0.2
    mean = fit_predict_target("mean", take(feats, tr), Y[tr], fs[tr], take(feats, te), fs[te], lam=0)
    np.testing.assert_allclose(mean, np.broadcast_to(Y[tr].mean(axis=0), mean.shape))
    with pytest.raises(ValueError, match="model"):
        fit_predict_target("eigenpro", take(feats, tr), Y[tr], fs[tr], take(feats, te), fs[te], lam=1)


def test_cross_validation_and_figure_tables():
    data = _screen()
    src = np.flatnonzero(data.folds["role"] == "source")
    tgt = np.flatnonzero(data.folds["role"] == "target")
    # a source model that knows the target exactly up to a shift: translation is exact
    f_s = pd.DataFrame(data.Y[tgt] - 1.5, index=data.folds.index[tgt])
    mu = data.Y[src].mean(axis=0)
    lams = {m: 1e6 for m in ("baseline", "projection", "translation", "projection_translation")}
    metrics, samples = cross_validate_cell(data, f_s, mu, "C0", lams)
    by = metrics.set_index("model")
    # exact up to rounding (the residual is the constant 1.5): 1 - R² ~ (eps |Y|)² / var
    assert by.loc["translation", "r2"] == pytest.approx(1.0, abs=1e-6)
    # exact predictions: both Pearson r's (the paper's uncentred one and the centred one) are 1
    assert by.loc["translation", ["pearson_r_paper", "pearson_r_centred"]].tolist() == pytest.approx([1.0, 1.0])
    assert "pearson_r" not in metrics.columns  # one name, one meaning: no bare pearson_r
    assert by.loc["mean", "cosine"] == 0.0  # centred by the training mean: the mean predictor is the origin
    assert len(samples) == 5 * len(tgt) and set(samples["fold"]) == set(range(5))
    assert (metrics["n"] == len(tgt)).all()
    t = fig4ab_table(pd.concat([metrics, metrics.assign(cell_id="C9")]), "seen")
    assert set(t["n_cells"]) == {2} and (t["sd"] == 0).all()
    sc = pd.DataFrame([{"cell_id": c, "stratum": "seen", "n_train": n, "seed": 0, "fold": 0, "model": "baseline",
                        "r2": 0.1 * np.log2(n) + 0.2 + e, "cosine": 0.5, "pearson_r_paper": 0.99,
                        "pearson_r_centred": 0.9}
                       for c, e in (("A", 0.01), ("B", -0.01)) for n in (10, 20, 40, 80, 160, 320, 640)])
    curve = fig4cd_table(sc, "seen", first=5)
    r2 = curve[curve["metric"] == "r2"]
    assert r2["a"].iloc[0] == pytest.approx(0.1) and r2["fit_r2"].iloc[0] == pytest.approx(1.0)
    assert np.isnan(curve[curve["metric"] == "cosine"]["fit_r2"].iloc[0])  # a flat curve has no R²
