"""The virtual screen's predictions: split-conformal half-widths (order
statistics), Tanimoto against RDKit, CMap's connectivity score on a case
worked by hand, and the library predictions on planted screens whose
answers are known."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from biokernels.conformal import conformal_half_width, conformal_rank, interval_coverage
from biokernels.errors import InputError
from biokernels.features.similarity import nearest_compounds, tanimoto_matrix
from biokernels.studies.drug_screen.connectivity import (enrichment_score, query_masks, rank_compounds,
                                                         weighted_connectivity_score)
from biokernels.studies.drug_screen.predict import (compound_table, library_features, predict_cell,
                                                    source_predictions, with_library)
from biokernels.studies.drug_screen.protocol import ScreenData, unit_rows


# --------------------------------------------------------------------------- conformal


def test_half_width_is_the_order_statistic():
    r = np.arange(1.0, 20.0)                   # 19 residuals 1..19
    # rank ceil(20 * 0.9) = 18: the 18th smallest
    assert conformal_rank(19, 0.9) == 18 and conformal_half_width(-r, 0.9) == 18.0
    assert conformal_half_width(r[:8], 0.9) == np.inf      # ceil(9 * 0.9) = 9 > 8 residuals
    cols = np.column_stack([r, 2 * r])
    np.testing.assert_array_equal(conformal_half_width(cols, 0.5), [10.0, 20.0])
    with pytest.raises(ValueError, match="in \\(0, 1\\)"):
        conformal_half_width(r, 1.0)
    with pytest.raises(ValueError, match="NaN"):
        conformal_half_width(np.array([1.0, np.nan]), 0.5)


def test_split_conformal_coverage_is_its_rank_over_n_plus_one():
    # exchangeable continuous residuals: P(cover) = ceil((n+1) l) / (n+1) exactly
    rng = np.random.default_rng(3)
    n, level, trials = 30, 0.8, 4000
    cal = rng.standard_normal((trials, n))
    new = rng.standard_normal(trials)
    q = np.array([conformal_half_width(c, level) for c in cal])
    expected = math.ceil((n + 1) * level) / (n + 1)
    # tolerance: 4 binomial standard errors over the trials
    assert interval_coverage(new, 0.0, q) == pytest.approx(expected, abs=4 * math.sqrt(expected * (1 - expected)
                                                                                      / trials))


# --------------------------------------------------------------------------- Tanimoto


def test_tanimoto_equals_rdkit():
    DataStructs = pytest.importorskip("rdkit.DataStructs")
    rng = np.random.default_rng(0)
    A = (rng.random((7, 64)) < 0.2).astype(int)
    B = (rng.random((9, 64)) < 0.3).astype(int)
    B[0] = A[2]
    B[1] = 0

    def bv(row):
        v = DataStructs.ExplicitBitVect(len(row))
        for j in np.flatnonzero(row):
            v.SetBit(int(j))
        return v

    ref = np.array([DataStructs.BulkTanimotoSimilarity(bv(a), [bv(b) for b in B]) for a in A])
    np.testing.assert_allclose(tanimoto_matrix(A, B), ref, rtol=0, atol=1e-12)
    near = nearest_compounds(pd.DataFrame(A, index=[f"q{i}" for i in range(7)]),
                             pd.DataFrame(B, index=[f"r{i}" for i in range(9)]), block=3)
    assert near.loc["q2", "nearest_id"] == "r0" and near.loc["q2", "tanimoto"] == 1.0
    np.testing.assert_allclose(near["tanimoto"], ref.max(axis=1))
    with pytest.raises(InputError, match="0 or 1"):
        tanimoto_matrix(A * 2, B)


# --------------------------------------------------------------------------- connectivity


def test_connectivity_score_on_a_case_worked_by_hand():
    sig = np.array([3.0, 2.0, 1.0, -1.0, -2.0, -3.0])
    up = np.array([1, 0, 1, 0, 0, 0], bool)
    down = np.array([0, 0, 0, 0, 1, 1], bool)
    # up: hits weigh 3/4 and 1/4, misses 1/4: running sum .75 .5 .75 .5 .25 0 -> ES_up = .75
    assert enrichment_score(sig, up) == pytest.approx(0.75)
    # down: four misses (-1/4 each) to -1, then hits 2/5 and 3/5 back to 0 -> ES_down = -1
    assert enrichment_score(sig, down) == pytest.approx(-1.0)
    assert weighted_connectivity_score(sig, up, down) == pytest.approx((0.75 + 1.0) / 2)
    # the reversed signature is the query's opposite
    assert weighted_connectivity_score(-sig, up, down) == pytest.approx(-0.875)
    # same sign of ES_up and ES_down: no connectivity
    assert weighted_connectivity_score(sig, up, np.array([1, 0, 0, 0, 0, 0], bool)) == 0.0
    genes = pd.DataFrame({"gene_id": ["1", "2", "3", "4", "5", "6"], "symbol": list("ABCDEF")})
    u, d, counts = query_masks(genes, ["A", "3", "ZZZ"], ["5", "F"], "q")
    np.testing.assert_array_equal(u, up) and np.testing.assert_array_equal(d, down)
    assert counts["unmatched_up"] == ["ZZZ"]
    ranked = rank_compounds(pd.DataFrame({"p": sig, "m": -sig}, index=genes["gene_id"]), u, d, profile=sig)
    assert list(ranked.index) == ["p", "m"] and ranked["cosine"].tolist() == pytest.approx([1.0, -1.0])
    with pytest.raises(InputError, match="none of the query's genes"):
        query_masks(genes, ["X"], [], "drug_screen.predict.query")
    with pytest.raises(InputError, match="both the up and the down"):
        query_masks(genes, ["A"], ["1"], "q")


# --------------------------------------------------------------------------- library predictions


def _planted(seed=0, n_drugs=60, n_cells=6, d=40, measured=200):
    """Cells C1-C5 are the source (drugs D0-D29 only), C0 the target with
    ``measured`` of its pairs measured; the true expression of every pair
    is known (``truth``)."""
    rng = np.random.default_rng(seed)
    D = unit_rows(rng.random((n_drugs, 16)) + 0.1, "D")
    C = unit_rows(rng.normal(size=(n_cells, 5)), "C")
    truth = pd.DataFrame(rng.normal(size=(n_drugs * n_cells, d)) + 5,
                         index=[f"D{a}:C{b}" for a in range(n_drugs) for b in range(n_cells)],
                         columns=[f"g{j}" for j in range(d)])
    src = [(a, b) for a in range(30) for b in range(1, n_cells)]
    tgt = [(a, 0) for a in rng.permutation(n_drugs)[: min(measured, n_drugs)]]
    pairs = src + tgt
    ids = [f"D{a}:C{b}" for a, b in pairs]
    role = ["source"] * len(src) + ["target"] * len(tgt)
    stratum = [""] * len(src) + ["seen" if a < 30 else "unseen" for a, _ in tgt]
    fold = [-1] * len(src) + [i % 5 for i in range(len(tgt))]
    folds = pd.DataFrame({"pert_id": [f"D{a}" for a, _ in pairs], "cell_id": [f"C{b}" for _, b in pairs],
                          "role": role, "stratum": stratum, "fold": fold}, index=ids)
    data = ScreenData(Y=truth.loc[ids].to_numpy(), drug_idx=np.array([a for a, _ in pairs]),
                      cell_idx=np.array([b for _, b in pairs]), D=D, C=C, folds=folds,
                      drugs=pd.Index([f"D{i}" for i in range(n_drugs)]), cells=pd.Index([f"C{i}" for i in range(n_cells)]),
                      genes=truth.columns)
    return data, truth, pd.DataFrame(D, index=data.drugs)


class _Oracle:
    """A 'fitted source model' that knows the truth up to a shift (and noise)."""

    def __init__(self, truth, shift=1.5, noise=0.0, seed=1):
        self.truth, self.shift, self.noise, self.rng = truth, shift, noise, np.random.default_rng(seed)

    def predict(self, data, idx):
        Y = self.truth.loc[data.folds.index[idx]].to_numpy() - self.shift
        return Y + self.noise * self.rng.standard_normal(Y.shape)


def test_library_pairs_are_the_unmeasured_ones():
    data, truth, feats = _planted(measured=40)
    ext, added = with_library(data, feats, ["C0"])
    lib = ext.folds.iloc[added]
    assert len(lib) == 60 - 40 and (lib["role"] == "library").all()
    measured = set(data.folds.loc[data.folds["cell_id"] == "C0", "pert_id"])
    assert not set(lib["pert_id"]) & measured
    assert (lib["stratum"] == np.where(lib["pert_id"].str[1:].astype(int) < 30, "seen", "unseen")).all()
    np.testing.assert_array_equal(ext.D[: len(data.drugs)], data.D)          # the screen's rows unchanged
    assert np.isnan(ext.Y[added]).all()
    new = pd.DataFrame(np.eye(16)[:2], index=["N1", "D3"], columns=feats.columns)
    with pytest.raises(InputError, match="another structure"):
        library_features(feats, new, "drug_screen.predict.library")


def test_translation_with_an_exact_source_predicts_the_truth():
    data, truth, feats = _planted(measured=40)
    ext, added = with_library(data, feats, ["C0"])
    f_s = source_predictions(ext, _Oracle(truth), ["C0"])
    # translation with a huge ridge adds the mean residual, 1.5: exact on every pair
    pred = predict_cell(ext, f_s, "C0", "translation", 1e8, 0.9)
    np.testing.assert_allclose(pred.predicted.to_numpy(), truth.loc[pred.predicted.index].to_numpy(), atol=1e-6)
    assert (pred.half_width.to_numpy() < 1e-6).all()
    assert (pred.calibration["check_coverage"] == 1.0).all()
    near = nearest_compounds((feats > 0.5).astype(int), (feats.loc[pred.pairs["pert_id"][:1]] > 0.5).astype(int))
    t = compound_table(pred, near)
    assert list(t.columns) == ["pair_id", "pert_id", "cell_id", "stratum", "nearest_id", "tanimoto",
                               "median_half_width"]


def test_intervals_cover_at_their_level_on_held_out_pairs():
    # source = truth - 1.5 + iid noise; translation at a huge ridge leaves residual noise - mean: the
    # out-of-fold residuals are exchangeable with the held-out fold's
    data, truth, feats = _planted(n_drugs=300, d=50, measured=300)
    data.folds.loc[data.folds["role"] == "target", "stratum"] = "seen"
    ext, _ = with_library(data, feats, ["C0"])
    f_s = source_predictions(ext, _Oracle(truth, noise=0.3), ["C0"])
    level = 0.9
    pred = predict_cell(ext, f_s, "C0", "translation", 1e8, level)
    row = pred.calibration.set_index("stratum").loc["seen"]
    n_cal, n_check = 240, int(row["n_check"])
    expected = math.ceil((n_cal + 1) * level) / (n_cal + 1)
    # tolerance: 4 SD of the held-out fraction (binomial over n_check x 50 values, plus the per-gene
    # calibration's own spread, sqrt(l (1 - l) / n_cal) averaged over 50 genes)
    sd = math.sqrt(level * (1 - level) / (n_check * 50) + level * (1 - level) / n_cal / 50)
    assert row["check_coverage"] == pytest.approx(expected, abs=4 * sd)
    # the half-width is the noise's 0.9 quantile of |N(0, 0.3^2)|: 1.645 x 0.3, within sampling error
    assert np.median(pred.half_width["seen"]) == pytest.approx(1.645 * 0.3, rel=0.15)


def test_a_hidden_fold_predicted_as_a_library_equals_the_protocols_prediction():
    # one path: fold 4 of C0 removed from the screen is imputed by predict_cell from the other folds, the
    # very fits the protocol's 5-fold CV makes for that fold, stratum by stratum
    from biokernels.metrics import per_sample_r2
    from biokernels.studies.drug_screen.protocol import cross_validate_cell, source_mean

    data, truth, feats = _planted(n_drugs=120, d=30, measured=120)
    f_all = source_predictions(data, _Oracle(truth, noise=0.4), ["C0"])
    lams = {"projection_translation": 0.1}
    _, samples = cross_validate_cell(data, f_all, source_mean(data), "C0", lams, models=("projection_translation",))
    hidden = (data.folds["cell_id"] == "C0").to_numpy() & (data.folds["fold"] == 4).to_numpy()
    keep = np.flatnonzero(~hidden)
    screen = ScreenData(Y=data.Y[keep], drug_idx=data.drug_idx[keep], cell_idx=data.cell_idx[keep], D=data.D,
                        C=data.C, folds=data.folds.iloc[keep], drugs=data.drugs, cells=data.cells, genes=data.genes)
    ext, added = with_library(screen, feats, ["C0"])
    ids = data.folds.index[hidden]
    assert set(ext.folds.index[added]) == set(ids)
    pred = predict_cell(ext, f_all.loc[ext.folds.index[ext.folds["cell_id"] == "C0"]], "C0",
                        "projection_translation", 0.1, 0.9)
    got = pd.Series(per_sample_r2(pred.predicted.loc[ids].to_numpy(), truth.loc[ids].to_numpy()), index=ids)
    want = samples.set_index("pair_id").loc[ids, "r2"]
    # the same float64 fits on the same pairs: equal to rounding
    np.testing.assert_allclose(got.to_numpy(), want.to_numpy(), rtol=0, atol=1e-9)


def test_bad_library_and_query_files_name_the_file_and_row(tmp_path):
    from biokernels.studies.drug_screen.connectivity import query_profile, query_sets
    from biokernels.io.compounds import read_library

    p = tmp_path / "lib.tsv"
    p.write_text("id\tsmiles\nA\tCCO\nB\tCCN\nA\tCCC\n")
    with pytest.raises(InputError, match=r"lib.tsv\): id 'A' appears in data rows \[1, 3\]"):
        read_library(p)
    p.write_text("name\tsmiles\nA\tCCO\n")
    with pytest.raises(InputError, match="expected columns id and smiles, missing \\['id'\\]"):
        read_library(p)
    p.write_text("id\tsmiles\nA\tCCO\nB\t \n")
    with pytest.raises(InputError, match="empty smiles in data row\\(s\\) \\[2\\]"):
        read_library(p)
    p.write_text("id\tsmiles\nA\tCCO\nB\tCCN\n")
    assert read_library(p).to_dict() == {"A": "CCO", "B": "CCN"}

    gmt = tmp_path / "q.gmt"
    gmt.write_text("S1\td\tA\tB\nS2\td\tC\n")
    with pytest.raises(InputError, match="holds 2 gene sets; expected exactly one"):
        query_sets({"up": str(gmt)}, "drug_screen.predict.query")
    gmt.write_text("S1\td\tA\tB\n")
    assert query_sets({"up": str(gmt), "down": ["C"]}) == (["A", "B"], ["C"])
    with pytest.raises(InputError, match="give the genes of `up`, of `down`, or both"):
        query_sets({"name": "x"})

    genes = pd.DataFrame({"gene_id": ["1", "2", "3"], "symbol": ["A", "B", "C"]})
    prof = tmp_path / "p.tsv"
    prof.write_text("gene\tvalue\nA\t1.5\n3\tx\n")
    with pytest.raises(InputError, match="data row 2: value 'x' is not a finite number"):
        query_profile(prof, genes)
    prof.write_text("gene\tvalue\nA\t1.5\n3\t-2\nZZ\t4\n")
    values, counts = query_profile(prof, genes)
    np.testing.assert_array_equal(values, [1.5, 0.0, -2.0])
    assert counts == {"n_matched": 2, "n_unmatched": 1, "n_missing": 1}


def test_depmap_unmeasured_pairs_and_interval_coverage_on_a_planted_response():
    import torch  # noqa: F401  (the projection model's Grams)

    from biokernels.studies.depmap.predict import predict_viability, unmeasured_pairs
    from biokernels.studies.depmap.projection import ProjectionData

    rng = np.random.default_rng(5)
    drugs, cells = [f"D{i}" for i in range(150)], ["A", "B", "C"]
    rows = [(d, c) for d in drugs for c in cells if rng.random() < 0.85]
    t = pd.DataFrame({"drug_key": [d for d, _ in rows], "cell_id": [c for _, c in rows]},
                     index=[f"{d}:{c}" for d, c in rows])
    t["stratum"] = np.where(t["drug_key"].str[1:].astype(int) < 100, "seen", "unseen")
    t["fold"] = rng.integers(0, 5, len(t))
    new = unmeasured_pairs(t)
    assert len(new) + len(t) == 450 and not set(new.index) & set(t.index)
    assert (new["stratum"] == np.where(new["drug_key"].str[1:].astype(int) < 100, "seen", "unseen")).all()
    # viability = a smooth function of the drug features + N(0, 0.1^2): no interval that covers 90 %
    # can be narrower than the noise's own 0.9 quantile of |N(0, 0.1^2)|, 1.645 x 0.1
    feats = pd.DataFrame(rng.random((150, 8)), index=drugs)
    controls = pd.DataFrame(rng.normal(size=(3, 4)), index=cells, columns=[f"g{j}" for j in range(4)])
    allp = pd.concat([t, new])
    signal = np.sin(3 * feats.loc[allp["drug_key"]].to_numpy()[:, 0]) + feats.loc[allp["drug_key"]].to_numpy()[:, 1]
    t["viability"] = signal[: len(t)] + 0.1 * rng.standard_normal(len(t))
    imputed = pd.DataFrame(rng.normal(size=(len(allp), 4)), index=allp.index, columns=controls.columns)
    source = {"source_cells": cells, **{f"{k}_{s}": [0.0] * 4 if s == "mean" else [1.0] * 4
                                         for k in ("source", "source_response") for s in ("mean", "var")}}
    data = ProjectionData(t, imputed, controls, feats, source)
    cfg = {"projection_input": "response", "kernel": {}}
    pred, cal = predict_viability(data, new, "baseline", 0.01, 0.9, cfg)
    assert list(pred.index) == list(new.index) and (pred["upper"] - pred["lower"] > 0).all()
    for _, r in cal.iterrows():
        # 4 binomial SDs of the held-out fold's coverage around the nominal level
        assert abs(r["check_coverage"] - 0.9) <= 4 * math.sqrt(0.09 / r["n_check"]), r.to_dict()
        assert r["half_width"] >= 1.645 * 0.1 * 0.8, r.to_dict()     # 0.8: sampling error of a quantile
