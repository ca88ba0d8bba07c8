"""Synthetic CMAP/L1000 screen (biokernels.synth.drug_screen): GEO layout,
planted defects, agreement with the hidden model, availability design,
learnability of the signal, real-structure input."""

import json

import numpy as np
import pandas as pd
import pytest
from rdkit import Chem, RDLogger
from rdkit.Chem import rdFingerprintGenerator
from scipy.stats import norm
from sklearn.kernel_ridge import KernelRidge
from sklearn.metrics import r2_score
from sklearn.model_selection import KFold

from biokernels.io.gctx import read_gctx
from biokernels.errors import InputError
from biokernels.synth import drug_screen as ds
from tolerances import EPS32

RDLogger.DisableLog("rdApp.*")

SMALL = dict(n_drugs=200, n_cells=12, n_targets=3, n_landmark=100, n_other_genes=10,
             design=dict(target_drugs=(120, 90), source_drugs=(60, 10)))
FILES = ["level3.gctx", "inst_info.txt", "pert_info.txt", "gene_info.txt", "cell_info.txt",
         "truth/pairs.tsv", "truth/mean_expression.npy", "truth/landmark_genes.txt", "truth/controls.tsv",
         "truth/drug_latent.tsv", "truth/cell_latent.tsv", "truth/params.json"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Two runs with seed 0 and one with seed 1 of the small default screen."""
    base = tmp_path_factory.mktemp("screen")
    out = {}
    for name, seed in (("a", 0), ("b", 0), ("c", 1)):
        ds.generate_default(base / name, seed=seed, **SMALL)
        out[name] = base / name
    return out


def _tsv(path):
    return pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)


def _morgan1024(smiles):
    gen = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=1024)
    return np.array([gen.GetFingerprintAsNumPy(Chem.MolFromSmiles(s)) for s in smiles], dtype=float)


def test_approved_drugs_parse_and_have_stable_ids():
    s = ds.approved_drug_smiles()
    assert s.attrs["n_rows"] == 1935 and len(s) == 1935 - s.attrs["n_unparseable"]
    assert s.index[0] == "BRD-SYN00001" and s.index.is_unique and s.name == "smiles"
    assert all(Chem.MolFromSmiles(x) is not None for x in s.iloc[::50])


def test_same_seed_identical_files_other_seed_differs(runs):
    for f in FILES:
        assert (runs["a"] / f).read_bytes() == (runs["b"] / f).read_bytes(), f
    assert (runs["a"] / "level3.gctx").read_bytes() != (runs["c"] / "level3.gctx").read_bytes()
    assert (runs["a"] / "truth/pairs.tsv").read_bytes() != (runs["c"] / "truth/pairs.tsv").read_bytes()
    # no temp files left behind
    assert not [p for p in runs["a"].rglob("*") if p.name.startswith(".")]


def test_geo_layout_and_planted_counts(runs):
    d = runs["a"]
    params = json.loads((d / "truth/params.json").read_text())
    planted = params["planted"]
    inst = _tsv(d / "inst_info.txt")
    assert list(inst.columns) == ds.INST_COLUMNS and inst["inst_id"].is_unique
    pert = _tsv(d / "pert_info.txt")
    assert list(pert.columns) == ds.PERT_COLUMNS
    assert set(inst["pert_type"]) == {"trt_cp", "ctl_vehicle"}
    trt = inst[inst["pert_type"] == "trt_cp"]
    ctl = inst[inst["pert_type"] == "ctl_vehicle"]
    assert (ctl["pert_iname"] == "DMSO").all()
    assert ctl.groupby("cell_id").size().between(4, 8).all()
    assert set(trt["pert_dose_unit"]) == {"µM", "-666"}
    # -666 doses
    missing = trt["pert_dose"].astype(float) == -666
    assert missing.sum() == planted["n_missing_dose_instances"] > 0
    assert (trt.loc[missing, "pert_dose_unit"] == "-666").all()
    # bad compounds: unparseable SMILES in pert_info, instances in inst_info
    bad = pert.loc[[Chem.MolFromSmiles(s) is None for s in pert["canonical_smiles"]], "pert_id"]
    assert len(bad) == planted["n_bad_compounds"] >= 1
    assert set(bad) == {b["pert_id"] for b in planted["bad_compounds"]}
    assert all(p.startswith("BRD-SYN9") for p in bad)
    assert trt["pert_id"].isin(bad).sum() == planted["n_bad_compound_instances"] > 0
    # sentinel genes: raw value exactly 1.0 in every instance of the named cell lines
    gct = read_gctx(d / "level3.gctx")
    X = gct.data.loc[:, inst["inst_id"]].to_numpy()
    ones = X == 1.0
    found = sorted(gct.data.index[ones.any(1)])
    assert found == sorted(planted["sentinel_genes"]) and len(found) == planted["n_sentinel_genes"] >= 1
    assert ones.sum() == planted["n_sentinel_entries"]
    for g, cells in planted["sentinel_genes"].items():
        cols = inst["cell_id"].isin(cells).to_numpy()
        row = ones[gct.data.index.get_loc(g)]
        assert row[cols].all() and not row[~cols].any()
    gi = _tsv(d / "gene_info.txt")
    assert list(gi["pr_gene_id"]) == list(gct.data.index) and gi["pr_is_lm"].astype(int).sum() == 100
    assert set(planted["sentinel_genes"]) <= set(gi.loc[gi["pr_is_lm"] == "1", "pr_gene_id"])
    # sizes
    sizes = params["sizes"]
    assert sizes["n_instances"] == len(inst) == X.shape[1]
    assert sizes["n_control_instances"] == len(ctl)
    assert _tsv(d / "cell_info.txt").columns.tolist() == ds.CELL_COLUMNS


def test_log2_expression_agrees_with_truth_within_noise(runs):
    d = runs["a"]
    params = json.loads((d / "truth/params.json").read_text())
    noise = params["noise_sd"]
    inst = _tsv(d / "inst_info.txt")
    pairs = _tsv(d / "truth/pairs.tsv")
    # what the preprocessing keeps: treatments with a dose >= 0 and a valid SMILES
    inst = inst[(inst["pert_type"] == "trt_cp") & (inst["pert_dose"].astype(float) >= 0)
                & inst["pert_id"].isin(pairs["pert_id"])]
    lm = (d / "truth/landmark_genes.txt").read_text().split()
    truth = np.load(d / "truth/mean_expression.npy")
    gct = read_gctx(d / "level3.gctx", rid=lm, cid=list(inst["inst_id"]))
    Y = np.log2(gct.data.to_numpy(dtype=float) + 1.0).T  # instances x genes
    key = (inst["pert_id"] + ":" + inst["cell_id"]).to_numpy()
    codes, uniq = pd.factorize(key)
    sums = np.zeros((len(uniq), len(lm)))
    np.add.at(sums, codes, Y)
    n = np.bincount(codes)
    mean = sums / n[:, None]
    row = pd.Index(pairs["pert_id"] + ":" + pairs["cell_id"]).get_indexer(uniq)
    assert (row >= 0).all()
    assert len(uniq) == (pairs["n_valid_replicates"].astype(int) > 0).sum()
    assert (n == pairs["n_valid_replicates"].astype(int).to_numpy()[row]).all()
    # standardised differences, sentinel entries excluded
    zscore = (mean - truth[row]) / (noise / np.sqrt(n[:, None]))
    mask = np.ones_like(zscore, dtype=bool)
    cells = pairs["cell_id"].to_numpy()[row]
    for g, sc in params["planted"]["sentinel_genes"].items():
        mask[np.isin(cells, sc), lm.index(g)] = False
    zs = zscore[mask]
    # standard normal under the generator's model: 5 standard errors for N draws
    # (N ~ 6e4 here) of the mean (1/sqrt(N)), the sd (1/sqrt(2N)) and the fraction
    # beyond 4 sd (binomial, p4 = 2 Phi(-4) = 6.3e-5)
    N = zs.size
    p4 = 2 * norm.sf(4.0)
    assert abs(zs.mean()) < 5 / np.sqrt(N) and abs(zs.std() - 1) < 5 / np.sqrt(2 * N)
    assert np.mean(np.abs(zs) > 4) < p4 + 5 * np.sqrt(p4 / N)


def test_targets_have_most_pairs_and_both_seen_and_unseen_drugs(runs):
    pairs = _tsv(runs["a"] / "truth/pairs.tsv")
    per_cell = pairs.groupby("cell_id").size().sort_values(ascending=False)
    targets = set(pairs.loc[pairs["is_target"] == "1", "cell_id"])
    assert targets == set(per_cell.index[:3])
    source_drugs = set(pairs.loc[pairs["is_target"] == "0", "pert_id"])
    seen = pairs.loc[pairs["is_target"] == "1", "pert_id"].isin(source_drugs)
    # both strata present with room: the design puts ~30-45 % of target pairs on unseen
    # drugs (test_default_design_sizes); 0.1 only guards against an empty stratum
    assert seen.mean() > 0.1 and (~seen).mean() > 0.1


def test_default_design_sizes():
    des = ds.default_design(800, 70, 5, seed=3)
    per_cell = des.groupby("cell").size()
    targets = des.attrs["target_cells"]
    assert sorted(per_cell.sort_values().index[-5:]) == targets
    assert per_cell[targets].between(300, 600).all()
    src = per_cell.drop(targets)
    assert src.min() <= 15 and 150 <= src.max() <= 260 and 4000 <= src.sum() <= 5000
    assert des["drug"].nunique() == 800  # every drug measured
    seen = des.loc[des["is_target"], "drug"].isin(set(des.loc[~des["is_target"], "drug"]))
    assert 0.3 <= (~seen).mean() <= 0.45
    pd.testing.assert_frame_equal(des, ds.default_design(800, 70, 5, seed=3))
    with pytest.raises(ValueError, match="too few"):
        ds.default_design(300, 70, 5, seed=0)


@pytest.fixture(scope="module")
def model():
    gi = ds.synthetic_gene_info(200, 0, seed=0)
    controls, _ = ds.synthetic_cell_controls(10, gi["pr_gene_id"], seed=0)
    return ds.DrugResponseModel(controls, seed=0)


def test_signal_is_learnable_from_morgan_fingerprints(model):
    smiles = ds.approved_drug_smiles().iloc[:400].tolist()
    pairs = pd.DataFrame({"cell_id": model.cell_ids[0], "smiles": smiles})
    rng = np.random.default_rng(0)
    Y = model.mean_response(pairs) + rng.normal(0, model.noise_sd / np.sqrt(2.5), (400, len(model.genes)))
    F = _morgan1024(smiles)

    def cv_r2(X):
        pred = np.zeros_like(Y)
        for tr, te in KFold(5, shuffle=True, random_state=0).split(X):
            mu = Y[tr].mean(0)
            pred[te] = KernelRidge(alpha=10.0, kernel="linear").fit(X[tr], Y[tr] - mu).predict(X[te]) + mu
        return r2_score(Y, pred, multioutput="variance_weighted")

    r2, r2_shuffled = cv_r2(F), cv_r2(F[rng.permutation(len(F))])
    # the noise ceiling of this model is var(signal) / var(total) ~ 0.88 (noise sd
    # 0.25 / sqrt(2.5)); a linear kernel on 1024 bits recovers part of it. Shuffled, the
    # features carry no signal: cross-validated R² is <= 0 in expectation (the fit only
    # adds variance), 0.02 allows for a small positive draw
    assert r2 > 0.2, r2
    assert r2_shuffled < 0.02, r2_shuffled


def test_cell_lines_modulate_the_response(model):
    smiles = ds.approved_drug_smiles().iloc[:50].tolist()
    R = [model.mean_response(pd.DataFrame({"cell_id": c, "smiles": smiles})) for c in model.cell_ids[:4]]
    corr = [np.corrcoef(R[a][i], R[b][i])[0, 1] for a in range(4) for b in range(a + 1, 4) for i in range(50)]
    med = np.median(corr)
    # the model's cell modulation: responses share the drug effect (corr > 0.3) but are
    # not copies (< 0.95); wide bounds on a median of 300 correlations (sd ~0.1 each)
    assert 0.3 < med < 0.95, med
    assert np.mean(np.abs(np.concatenate(R))) > 0.2  # typical |change| in log2 units


def test_model_rebuilds_from_truth_and_viability(runs):
    d = runs["a"]
    params = json.loads((d / "truth/params.json").read_text())
    controls = pd.read_csv(d / "truth/controls.tsv", sep="\t", index_col="cell_id")
    controls.columns = controls.columns.astype(str)
    m = ds.DrugResponseModel(controls, params["model"]["seed"], noise_sd=params["noise_sd"])
    pairs = _tsv(d / "truth/pairs.tsv").iloc[::37]
    lm = (d / "truth/landmark_genes.txt").read_text().split()
    truth = np.load(d / "truth/mean_expression.npy")[pairs.index]
    # the truth is stored in float32: rounding to eps32/2 relative (x2 for the float64
    # rebuild's own rounding)
    np.testing.assert_allclose(m.mean_expression(pairs, genes=lm), truth, rtol=EPS32, atol=1e-12)
    z = _tsv(d / "truth/drug_latent.tsv").set_index("pert_id")
    zcols = [c for c in z.columns if c.startswith("z_")]
    # the latent is written as decimal text: repr round-trips float64 exactly (1e-12: safety)
    np.testing.assert_allclose(m.drug_latent(z["smiles"].iloc[:5]), z[zcols].iloc[:5].astype(float), atol=1e-12)
    v = m.viability(pairs)
    assert np.all(np.abs(v) < 1) and v.std() > 0.1
    np.testing.assert_array_equal(m.viability(pairs, 0.1, seed=4), m.viability(pairs, 0.1, seed=4))
    assert not np.array_equal(m.viability(pairs, 0.1, seed=4), m.viability(pairs, 0.1, seed=5))


def _real_like():
    gene_ids = [str(g) for g in (5720, 466, 6009, 2101, 8318, 7416, 10007, 23, 1845, 3065)]
    rng = np.random.default_rng(0)
    controls = pd.DataFrame(rng.uniform(3, 12, (4, 10)), index=["A375", "MCF7", "PC3", "HT29"], columns=gene_ids)
    smiles = ds.approved_drug_smiles().iloc[100:130].tolist()
    rows = [(c, s) for c, n in zip(controls.index, (25, 12, 8, 6)) for s in smiles[:n]]
    return pd.DataFrame(rows, columns=["cell_id", "smiles"]), controls


def test_generate_from_structure_real_like(tmp_path):
    pairs, controls = _real_like()
    p = ds.generate_from_structure(tmp_path / "out", 5, pairs, controls, n_targets=1, controls_per_cell=4)
    assert p["target_cells"] == ["A375"] and p["sizes"]["n_pairs"] == len(pairs)
    truth = _tsv(tmp_path / "out/truth/pairs.tsv")
    assert len(truth) == len(pairs) and (truth["n_replicates"] == "1").all()
    pert = _tsv(tmp_path / "out/pert_info.txt").set_index("pert_id")
    assert pert.loc["BRD-SYN00001", "canonical_smiles"] == pairs["smiles"][0]
    assert set(_tsv(tmp_path / "out/inst_info.txt")["cell_id"]) == set(controls.index)
    assert np.load(tmp_path / "out/truth/mean_expression.npy").shape == (len(pairs), 10)


@pytest.mark.parametrize("case, match", [
    ("unknown_cell", r"pairs.cell_id: 2 cell line\(s\) without a control profile.*\['K562', 'VCAP'\]"),
    ("empty", r"pairs: no \(cell_id, smiles\) rows"),
    ("nan_controls", r"controls: 1 NaN/inf value\(s\) in cell line\(s\) \['MCF7'\]"),
    ("bad_smiles", r"smiles: 1 SMILES RDKit cannot parse, e.g. \['C1CC\(N'\]"),
    ("duplicate", r"pairs: 1 duplicated \(cell_id, smiles\)"),
])
def test_generate_from_structure_rejects_bad_input(tmp_path, case, match):
    pairs, controls = _real_like()
    if case == "unknown_cell":
        pairs = pd.concat([pairs, pd.DataFrame({"cell_id": ["VCAP", "K562"], "smiles": ["CCO", "CCO"]})])
    elif case == "empty":
        pairs = pairs.iloc[:0]
    elif case == "nan_controls":
        controls.iloc[1, 3] = np.nan
    elif case == "bad_smiles":
        pairs = pd.concat([pairs, pd.DataFrame({"cell_id": ["PC3"], "smiles": ["C1CC(N"]})])
    elif case == "duplicate":
        pairs = pd.concat([pairs, pairs.iloc[:1]])
    out = tmp_path / "out"
    with pytest.raises(InputError, match=match):
        ds.generate_from_structure(out, 0, pairs, controls, n_targets=1)
    assert not out.exists() or not any(out.rglob("*"))  # nothing written
