"""DepMap viability by projection (biokernels.studies.depmap.protocol, biokernels.synth.depmap,
biokernels.studies.depmap.tables): the generator's planted defects are found and
counted, drugs match by structure, the kernel ridge on a Gram agrees with
scikit-learn, the imputed expression carries the planted signal, and the
S9a law is exact on an exact law."""

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.kernel_ridge import KernelRidge

from biokernels.studies.depmap import protocol as dm
from biokernels.io import depmap as dio
from biokernels.studies.depmap.tables import featurization_table, s9a_table, s9b_table
from biokernels.errors import InputError
from biokernels.metrics import r2_score
from biokernels.synth import drug_screen as ds
from biokernels.synth.depmap import ABSENT_CELL, generate_depmap, response_model
from tolerances import EPS32, EPS64, solve_rtol

SMALL = dict(n_drugs=200, n_cells=12, n_targets=3, n_landmark=100, n_other_genes=10,
             design=dict(target_drugs=(120, 90), source_drugs=(60, 10)))
COLUMNS = {"drug": "broad_id", "smiles": "smiles", "cell": "ccle_name", "value": "viability"}


@pytest.fixture(scope="module")
def screen(tmp_path_factory):
    """A small default screen and a DepMap table generated from its model."""
    base = tmp_path_factory.mktemp("depmap")
    ds.generate_default(base / "raw", seed=3, **SMALL)
    pert_info = pd.read_csv(base / "raw/pert_info.txt", sep="\t", dtype=str, keep_default_na=False)
    params = generate_depmap(base / "raw/truth", pert_info, base / "viability.csv", seed=3, n_cells=4,
                             n_overlap_top=2, n_screen_drugs=80, n_new_drugs=30)
    return base, params, pert_info


def test_rebuilt_model_reproduces_the_screen_truth(screen):
    base = screen[0]
    m = response_model(base / "raw/truth")
    truth_pairs = pd.read_csv(base / "raw/truth/pairs.tsv", sep="\t", dtype=str, keep_default_na=False)
    lm = (base / "raw/truth/landmark_genes.txt").read_text().split()
    pick = truth_pairs.iloc[::29]
    # the truth file is float32 (synth.drug_screen): rounding to eps32/2 relative; EPS32
    # doubles that for the float64 rebuild's own rounding
    np.testing.assert_allclose(m.mean_expression(pick, genes=lm),
                               np.load(base / "raw/truth/mean_expression.npy")[pick.index],
                               rtol=EPS32, atol=1e-12)


def test_generator_is_deterministic_and_viability_follows_the_model(screen, tmp_path):
    base, params, pert_info = screen
    again = generate_depmap(base / "raw/truth", pert_info, tmp_path / "v.csv", seed=3, n_cells=4, n_overlap_top=2,
                            n_screen_drugs=80, n_new_drugs=30)
    assert again == params
    a, b = pd.read_csv(base / "viability.csv"), pd.read_csv(tmp_path / "v.csv")
    pd.testing.assert_frame_equal(a, b)
    # noise-free viability of the clean rows is the model's; the noise sd is 0.1
    clean = a[(a["smiles"].notna()) & ~a["ccle_name"].str.startswith(ABSENT_CELL)].copy()
    clean["cell_id"] = clean["ccle_name"].str.split("_").str[0]
    clean = clean.drop_duplicates(["broad_id", "cell_id"], keep="first")
    resid = clean["viability"].to_numpy() - response_model(base / "raw/truth").viability(clean)
    # the sample sd of N Gaussian draws has standard error sd / sqrt(2N) (N = 400 here:
    # 0.0035); 5 standard errors
    assert abs(resid.std() - 0.1) < 5 * 0.1 / np.sqrt(2 * len(resid))
    top = pd.read_csv(base / "raw/truth/pairs.tsv", sep="\t")["cell_id"].value_counts().index[:2]
    assert params["cells_top_cmap"] == list(top)


def test_planted_defects_are_counted_not_lost(screen):
    base, params, pert_info = screen
    v = dio.read_viability(base / "viability.csv", COLUMNS, r"^([^_]+)_")
    assert len(v) == params["n_rows"]
    cp = pert_info.set_index("pert_id")["canonical_smiles"]
    drugs, dcounts = dio.match_drugs(v, cp)
    planted = params["planted"]
    assert dcounts["no_structure"] == planted["no_structure_drugs"]
    assert dcounts["matched_cmap"] == params["n_drugs_screen"]
    assert dcounts["new"] == params["n_drugs_new"]
    pairs = pd.read_csv(base / "raw/truth/pairs.tsv", sep="\t", dtype=str)
    controls = pd.read_csv(base / "raw/truth/controls.tsv", sep="\t", index_col=0, dtype={"cell_id": str})
    targets, dropped, counts = dio.prepare_targets(v, drugs, pairs, controls.index, k=5, seed=0)
    assert counts["no_structure"] == planted["no_structure_rows"]
    assert counts["cell_not_in_cmap"] == planted["absent_cell_rows"]
    assert counts["duplicate_merged"] == planted["duplicated_rows"]
    assert counts["missing_value"] == 0
    # every row is either a target pair, a merged duplicate or dropped with a reason
    assert targets["n_rows"].sum() + (dropped["reason"] != "duplicate_merged").sum() == len(v)
    assert sorted(counts["target_cells"]) == sorted(params["cells"])
    # approved drugs outside the screen are unseen; seen drugs are measured in a source line
    new_keys = set(drugs.loc[drugs["pert_id"] == "", "drug_key"]) - {""}
    assert set(targets.loc[targets["drug_key"].isin(new_keys), "stratum"]) == {"unseen"}
    src_drugs = set(pairs.loc[~pairs["cell_id"].isin(params["cells"]), "pert_id"])
    assert (targets["stratum"] == "seen").sum() == targets["drug_key"].isin(src_drugs).sum()
    sizes = targets.groupby(["stratum", "fold"]).size()
    assert (sizes.groupby(level=0).agg(np.ptp) <= 1).all()  # balanced folds
    # CMAP = the n_cmap most profiled cell lines; the source is CMAP minus the targets
    top6 = pairs["cell_id"].value_counts().index[:6]
    _, _, c6 = dio.prepare_targets(v, drugs, pairs, controls.index, n_cmap=6)
    assert c6["source_cells"] == sorted(set(top6) - set(params["cells"]))
    assert counts["source_cells"] == sorted(set(pairs["cell_id"]) - set(params["cells"]))
    with pytest.raises(InputError, match=r"repeat a \(drug, cell line\) pair, e.g. rows"):
        dio.prepare_targets(v, drugs, pairs, controls.index, duplicates="error")


def test_drop_summary_counts_every_dropped_row_per_cell_line_and_compound(screen):
    """The default of depmap_prepare (depmap.list_dropped_rows false): the
    drops counted per (reason, cell line) and per (reason, compound), each
    summing to the rows dropped for the reason."""
    base, params, pert_info = screen
    v = dio.read_viability(base / "viability.csv", COLUMNS, r"^([^_]+)_")
    drugs, _ = dio.match_drugs(v, pert_info.set_index("pert_id")["canonical_smiles"])
    pairs = pd.read_csv(base / "raw/truth/pairs.tsv", sep="\t", dtype=str)
    controls = pd.read_csv(base / "raw/truth/controls.tsv", sep="\t", index_col=0, dtype={"cell_id": str})
    _, dropped, counts = dio.prepare_targets(v, drugs, pairs, controls.index, k=5, seed=0)
    s = dio.drop_summary(dropped)
    assert list(s.columns) == ["reason", "per", "id", "rows"] and (s["rows"] > 0).all()
    for reason in dio.DROP_REASONS:
        for per in ("cell_line", "compound"):
            assert s.loc[(s["reason"] == reason) & (s["per"] == per), "rows"].sum() == counts[reason], (reason, per)
    planted = params["planted"]
    # the planted absent cell line: all its rows under its one id
    absent = s[(s["reason"] == "cell_not_in_cmap") & (s["per"] == "cell_line")]
    assert absent[["id", "rows"]].values.tolist() == [[ABSENT_CELL, planted["absent_cell_rows"]]]
    # each structure-less drug was written once per DepMap cell line
    nostruct = s[(s["reason"] == "no_structure") & (s["per"] == "compound")]
    assert sorted(nostruct["id"]) == [f"BRD-NOSTRUCT{i:03d}" for i in range(planted["no_structure_drugs"])]
    assert (nostruct["rows"] == len(params["cells"])).all()
    # one line per (reason, id): far fewer than the rows listed
    per_reason = dropped.groupby("reason")
    assert len(s) == per_reason["cell_id"].nunique().sum() + per_reason["drug_id"].nunique().sum() < len(dropped)
    # ordered as DROP_REASONS, cell lines before compounds
    order = [dio.DROP_REASONS.index(r) for r in s["reason"]]
    assert order == sorted(order)


def test_read_viability_errors_name_file_row_and_field(tmp_path):
    p = tmp_path / "v.csv"
    p.write_text("broad_id,smiles,ccle_name,viability\nA,CCO,PC3_PROSTATE,0.5\nB,CCN,MCF7_BREAST,high\n")
    with pytest.raises(InputError, match=r"v.csv: row 2, field 'viability': expected a number, got 'high'"):
        dio.read_viability(p, COLUMNS, r"^([^_]+)_")
    p.write_text("broad_id,smiles,ccle_name,viability\nA,CCO,PC3,0.5\n")
    with pytest.raises(InputError, match=r"row 1, field 'ccle_name': cell name 'PC3' does not match"):
        dio.read_viability(p, COLUMNS, r"^([^_]+)_")
    with pytest.raises(InputError, match=r"column\(s\) \['auc'\] not in the header"):
        dio.read_viability(p, {**COLUMNS, "value": "auc"})
    p.write_text("broad_id,smiles,ccle_name,viability\nA,CCO,PC3_X,NA\n")
    v = dio.read_viability(p, COLUMNS, r"^([^_]+)_")
    assert v["viability"].isna().all() and v["cell_id"].tolist() == ["PC3"]


def test_drugs_match_by_structure_not_by_spelling():
    v = pd.DataFrame({"drug_id": ["d1", "d2", "d3", "d4"], "smiles": ["OCC", "c1ccccc1O", "CCN", ""]})
    cmap = pd.Series({"BRD-2": "CCO", "BRD-1": "C(C)O", "BRD-9": "Oc1ccccc1"})
    drugs, counts = dio.match_drugs(v, cmap)
    assert drugs.loc["d1", "pert_id"] == "BRD-1"  # ethanol, two CMAP ids: the smallest
    assert drugs.loc["d2", "pert_id"] == "BRD-9"  # phenol, aromatic vs Kekulé-free spelling
    assert drugs.loc["d3", "drug_key"].startswith("DM:") and drugs.loc["d4", "drug_key"] == ""
    assert counts == {"drugs": 4, "no_structure": 1, "matched_cmap": 2, "new": 1, "cmap_ids_sharing_structure": 1,
                      "depmap_ids_sharing_structure": 0}
    with pytest.raises(InputError, match="appears with different SMILES"):
        dio.match_drugs(pd.DataFrame({"drug_id": ["x", "x"], "smiles": ["CCO", "CCN"]}), cmap)


def test_krr_on_gram_equals_scikit_learn_with_intercept():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 5))
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=60)
    K = dm.ntk_gram(X / np.linalg.norm(X, axis=1, keepdims=True))
    tr, te = np.arange(45), np.arange(45, 60)
    ours = dm.krr_on_gram(K, y, tr, te, lam=0.5)
    Kn = K.numpy()
    ref = KernelRidge(alpha=0.5, kernel="precomputed").fit(Kn[np.ix_(tr, tr)], y[tr] - y[tr].mean())
    # two backward-stable solves of the same system: ||da|| <= 2 n eps cond ||a||
    # (tolerances.solve_rtol), |Kt da|_i <= ||kt_i|| ||da||, + rounding of the products
    A = Kn[np.ix_(tr, tr)] + 0.5 * np.eye(len(tr))
    Kt = Kn[np.ix_(te, tr)]
    bound = (np.linalg.norm(Kt, axis=1) * 2 * solve_rtol(A) * np.linalg.norm(ref.dual_coef_)
             + 2 * len(tr) * EPS64 * (np.abs(Kt) @ np.abs(ref.dual_coef_) + abs(y[tr].mean())))
    assert np.all(np.abs(ours - (ref.predict(Kt) + y[tr].mean())) <= bound)


def test_select_ridges_scores_every_model_on_one_holdout_split():
    """select_ridges = the ridge service's select_ridge_holdout per model, with the
    same split (holdout_split(n, subset, seed)) for every model and krr_on_gram's
    validation R²; the table repeats that computation, so only run-to-run rounding
    of threaded BLAS separates it from the one written out here (rtol 1e-12)."""
    from biokernels.solvers.ridge import holdout_split

    rng = np.random.default_rng(5)
    X = rng.normal(size=(80, 4))
    y = np.tanh(X[:, 0]) + 0.1 * rng.normal(size=80)
    grams = {"baseline": dm.ntk_gram(rng.normal(size=(80, 4))),
             "projection": dm.ntk_gram(X / np.linalg.norm(X, axis=1, keepdims=True))}
    grid = [0.01, 1.0, 100.0]
    lams, table = dm.select_ridges(grams, y, grid, subset=60, seed=3)
    assert list(table.columns) == ["model", "lam", "r2", "chosen"] and len(table) == 2 * len(grid)
    tr, va = holdout_split(80, 60, 3)
    for m, K in grams.items():
        t = table[table["model"] == m]
        expect = [r2_score(y[va], dm.krr_on_gram(K, y, tr, va, g)) for g in grid]
        np.testing.assert_allclose(t["r2"], expect, rtol=1e-12)
        best = max(grid, key=lambda g: (expect[grid.index(g)], -g))   # highest R², smallest lam on ties
        assert lams[m] == best and t.loc[t["chosen"], "lam"].tolist() == [best]
    with pytest.raises(InputError, match="depmap.ridge.grid"):
        dm.select_ridges(grams, y, [], subset=60, seed=3)


def test_model_inputs_blocks_and_scale():
    targets = pd.DataFrame({"drug_key": ["a", "b", "a"], "cell_id": ["c1", "c1", "c2"]}, index=["p1", "p2", "p3"])
    imputed = pd.DataFrame([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], index=targets.index, columns=["g1", "g2"])
    features = pd.DataFrame([[3.0, 4.0], [0.0, 2.0]], index=["a", "b"])
    controls = pd.DataFrame([[1.0, 0.0], [0.0, 1.0], [2.0, 2.0], [4.0, 2.0]], index=["c1", "c2", "s1", "s2"],
                            columns=["g1", "g2"])
    src = {"source_cells": ["s1", "s2"], "source_mean": [1.0, 2.0], "source_var": [9.0, 16.0],
           "source_response_mean": [0.0, 1.0], "source_response_var": [1.0, 3.0]}
    # hand-computed values of a few float64 operations: numpy's default rtol 1e-7 is
    # far above their rounding (~1e-16)
    X = dm.model_inputs(targets, imputed, features, controls, src, response=False)
    # projection: (f - mean) / sqrt(9 + 16) = (f - mean) / 5, the unit-norm drug row, then the cell block
    np.testing.assert_allclose(X["projection"][1, :4], [2 / 5, 2 / 5, 0.0, 1.0])
    np.testing.assert_allclose(X["baseline"][0, :2], [0.6, 0.8])
    np.testing.assert_allclose(np.linalg.norm(X["baseline"][:, 2:], axis=1), 1.0)
    np.testing.assert_allclose(X["projection"][:, 2:], X["baseline"])  # baseline = projection minus imputed
    Xg = dm.model_inputs(targets, imputed, features, controls, src, response=False, genes=np.array([1]))
    np.testing.assert_allclose(Xg["projection"][:, 0], [0.0, 0.5, 1.0])  # (f_2 - 2) / 4
    # response: imputed minus the cell's control, centred and scaled by the source response: / sqrt(1 + 3) = / 2
    Xr = dm.model_inputs(targets, imputed, features, controls, src, response=True)
    np.testing.assert_allclose(Xr["projection"][:, :2], [[0.0, 0.5], [1.0, 1.5], [2.5, 2.0]])
    with pytest.raises(InputError, match="no control expression"):
        dm.model_inputs(targets, imputed, features, controls.drop("c2"), src)


def test_projection_on_informative_features_beats_the_baseline():
    """Planted: viability is a smooth function of a 3-d latent that the
    'imputed' block holds exactly and the baseline block holds only through
    a noisy random map."""
    rng = np.random.default_rng(1)
    z = rng.normal(size=(400, 3))
    y = np.tanh(z @ np.array([1.0, -0.7, 0.4]))
    good = z / np.linalg.norm(z, axis=1, keepdims=True)
    bad = z @ rng.normal(size=(3, 40)) + 3.0 * rng.normal(size=(400, 40))
    bad /= np.linalg.norm(bad, axis=1, keepdims=True)
    grams = {"projection": dm.ntk_gram(np.hstack([good, 0.3 * np.linalg.norm(z, axis=1, keepdims=True)])),
             "baseline": dm.ntk_gram(bad)}
    fold = np.arange(400) % 5
    res = dm.scaling_curve(grams, y, fold, [20, 80, 320], [0, 1], lam=0.01)
    assert len(res) == 5 * 2 * 3 * 2
    mean = res.groupby(["model", "n_train"])["r2"].mean()
    # planted: the projection block holds the latent z exactly (R² -> 1 - noise-free, as
    # n grows), the baseline only through 3 signal vs 40 noise directions of sd 3 (~1/4
    # of its variance is signal): a gap of 0.1 in R² is conservative
    assert (mean["projection"] > mean["baseline"] + 0.1).all()
    assert mean["projection"][320] > mean["projection"][20]


def test_s9a_law_is_exact_on_an_exact_law_and_tables():
    n = np.array([10, 20, 40, 80, 160, 320, 640])
    rows = [{"stratum": "seen", "model": m, "n_train": k, "seed": s, "fold": f,
             "r2": (0.05 if m == "projection" else 0.08) * np.log2(k) + (0.3 if m == "projection" else -0.2)}
            for m in ("baseline", "projection") for k in n for s in range(2) for f in range(3)]
    t = s9a_table(pd.DataFrame(rows), first=4)
    proj = t[t["model"] == "projection"]
    # the rows follow a + b log2 n exactly: the least-squares fit of 7 points recovers it
    # up to float64 rounding (~1e-15); default rtol / atol 1e-12 are far above that
    np.testing.assert_allclose(proj["a"], 0.05)
    np.testing.assert_allclose(proj["fit_r2"], 1.0)
    np.testing.assert_allclose(proj["abs_error_last"], 0.0, atol=1e-12)
    assert (proj["n_runs"] == 6).all() and np.allclose(proj["sd"], 0.0, atol=1e-12)
    f = featurization_table({"morgan": t})
    assert f.loc[f["model"] == "projection", "r2_full"].item() == pytest.approx(0.05 * np.log2(640) + 0.3)
    g = s9b_table(pd.DataFrame({"stratum": "seen", "n_genes": [1, 1, 2, 2], "seed": [0, 1, 0, 1], "fold": 0,
                                "r2": [0.1, 0.3, 0.5, 0.5]}))
    assert g["mean"].tolist() == pytest.approx([0.2, 0.5])
    with pytest.raises(InputError, match="no curve"):
        s9a_table(pd.DataFrame(columns=["stratum", "model", "n_train", "r2"]))


def test_generator_params_file(screen):
    base, params, _ = screen
    on_disk = json.loads((base / "depmap_params.json").read_text())
    assert on_disk == params and on_disk["planted"]["absent_cell_line"] == ABSENT_CELL


def test_read_viability_rejects_malformed_files(tmp_path):
    p = tmp_path / "v.csv"
    p.write_text("broad_id,smiles,ccle_name,viability\nA,CCO,PC3_X,0.5,9\n")
    with pytest.raises(InputError, match="one more field than the header"):
        dio.read_viability(p, COLUMNS, r"^([^_]+)_")
    p.write_bytes("broad_id,smiles,ccle_name,viability\nA,CCO,PC3_\xe9,0.5\n".encode("latin-1"))
    with pytest.raises(InputError, match="not UTF-8"):
        dio.read_viability(p, COLUMNS, r"^([^_]+)_")
    with pytest.raises(InputError, match="cell_pattern '\\(': not a regular expression"):
        dio.read_viability(p, COLUMNS, "(")
    with pytest.raises(InputError, match="found a folder"):
        dio.read_viability(tmp_path, COLUMNS, r"^([^_]+)_")
