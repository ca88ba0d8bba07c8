"""PIMKL signature export and inference, and the model files under it."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score
from sklearn.preprocessing import StandardScaler

from biokernels import modelfiles
from biokernels.errors import InputError
from biokernels.io.cohorts import read_cohort
from biokernels.io.networks import read_edge_list
from biokernels.io.pathways import read_gmt
from biokernels.kernels.pathway import induce_pathways, normalize_trace, pathway_kernels
from biokernels.studies.pimkl.predict import fit_signature, load_signature
from biokernels.studies.pimkl.protocol import fit_predict
from biokernels.studies.pimkl.protocol.model import _choose_easymkl_lam, _inner_kernels
from biokernels.studies.pimkl.protocol.s1 import _inner_splits
from biokernels.synth.pimkl import generate_default

LAMS = (0.1, 0.5, 0.9)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    out = tmp_path_factory.mktemp("pimkl_predict")
    generate_default(out, seed=3, n_genes=400, n_sets=10, set_size_range=(15, 60), cohorts={"a": 150, "b": 120},
                     large_size=0, n_planted=3, amplitude=0.6)
    edges, _ = read_edge_list(out / "network.tsv", weight_col="weight")
    gene_sets = read_gmt(out / "gene_sets.gmt")
    cohorts = {c: read_cohort(out / f"cohorts/{c}/expression.tsv", out / f"cohorts/{c}/labels.tsv")[:2]
               for c in ("a", "b")}
    return edges, gene_sets, cohorts


def _protocol_scores(X, y, tr, te, edges, gene_sets, classifier, seed):
    """One outer fold as run_s1 computes it (scaler, kernels, inner grid, fit_predict)."""
    genes = list(X.columns)
    pws, _ = induce_pathways(edges, gene_sets, genes)
    Xv, yv = X.to_numpy(float), np.asarray(y).astype(int)
    sc = StandardScaler().fit(Xv[tr])
    Xtr, Xte = sc.transform(Xv[tr]), sc.transform(Xv[te])
    K_raw = pathway_kernels(Xtr, pws, genes=genes)
    Ktr, f = normalize_trace(K_raw)
    Kte, _ = normalize_trace(pathway_kernels(Xte, pws, X_other=Xtr, genes=genes), f)
    inner = _inner_splits(yv[tr], 3, seed, "a", "fold")
    lam, _ = _choose_easymkl_lam(K_raw, yv[tr], inner, LAMS, "accuracy", classifier, 1.0, "sum",
                                 inner_kernels=_inner_kernels(K_raw, inner))
    s, w = fit_predict(Ktr, Kte, yv[tr], lam, classifier=classifier)
    return s, w, lam


@pytest.mark.parametrize("classifier", ["komd", "svm"])
def test_a_held_out_fold_scored_by_the_signature_equals_the_protocol(data, classifier):
    edges, gene_sets, cohorts = data
    X, y = cohorts["a"]
    rng = np.random.default_rng(0)
    te = np.sort(rng.choice(len(y), 30, replace=False))
    tr = np.setdiff1d(np.arange(len(y)), te)
    expected, w, lam = _protocol_scores(X, y, tr, te, edges, gene_sets, classifier, seed=5)
    sig = fit_signature(X.iloc[tr], np.asarray(y)[tr], edges, gene_sets, easymkl_lams=LAMS, classifier=classifier,
                        seed=5)
    got, cov = sig.decision_function(X.iloc[te])
    assert sig.easymkl_lam == lam and cov["fraction"] == 1.0
    np.testing.assert_allclose(sig.weights, w, rtol=0, atol=1e-12)
    # the same kernels and dual solution; the score is rebuilt from the dual coefficients
    # (a dot product in another order): agreement to rounding of sums of ~n terms of O(1)
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)


def test_saved_signature_scores_another_cohort_the_same(data, tmp_path):
    edges, gene_sets, cohorts = data
    sig = fit_signature(*cohorts["a"], edges, gene_sets, easymkl_lams=LAMS, seed=1)
    sig.save(tmp_path / "model", {"config_hash": "x"})
    back = load_signature(tmp_path / "model")
    Xb, yb = cohorts["b"]
    s0, _ = sig.decision_function(Xb)
    s1, _ = back.decision_function(Xb)
    np.testing.assert_array_equal(s0, s1)
    # the planted pathways separate the classes in cohort b as in a (the generator's design)
    assert roc_auc_score(yb, s1) > 0.7
    man = json.loads((tmp_path / "model/manifest.json").read_text())
    assert man["kind"] == "pimkl_signature" and man["meta"]["config_hash"] == "x"
    assert set(man["files"]) == {"standardization.npz", "classifier.npz", "pathways.npz"}


def test_coverage_floor_and_missing_genes(data):
    edges, gene_sets, cohorts = data
    sig = fit_signature(*cohorts["a"], edges, gene_sets, easymkl_lams=LAMS, seed=1)
    Xb, _ = cohorts["b"]
    sg = sig.signature_genes
    before = sig.coverage(Xb.columns)["missing"]            # the generator's cohorts measure other genes too
    drop = [g for g in sg if g in Xb.columns][: len(sg) // 10]
    s, cov = sig.decision_function(Xb.drop(columns=drop))
    assert cov["measured"] == len(sg) - len(drop) - len(before)
    assert sorted(cov["missing"]) == sorted(drop + before)
    # a missing gene counts as the training mean: standardized 0 (set by hand here)
    Z = Xb.drop(columns=drop).copy()
    for g in drop:
        Z[g] = sig.mean[sig.genes.index(g)]
    np.testing.assert_allclose(s, sig.decision_function(Z)[0], rtol=1e-12, atol=1e-12)
    with pytest.raises(InputError, match=r"cohort 'b': measures .* below the floor min_coverage 80%"):
        sig.decision_function(Xb.drop(columns=[g for g in sg if g in Xb.columns][: len(sg) // 2]), name="b")


def test_model_file_refusals(tmp_path):
    arrays = {"g": {"a": np.arange(4.0), "names": np.array(["x", "y"])}}
    d = modelfiles.save_model(tmp_path / "m", "toy", arrays, {"features": ["x", "y"]})
    got, man = modelfiles.load_model(d, "toy")
    np.testing.assert_array_equal(got["g"]["a"], np.arange(4.0))
    with pytest.raises(InputError, match="a 'toy' model, expected 'other'"):
        modelfiles.load_model(d, "other")
    # an edited array file
    raw = bytearray((d / "g.npz").read_bytes())
    raw[-40] ^= 1
    (d / "g.npz").write_bytes(bytes(raw))
    with pytest.raises(InputError, match="truncated or edited"):
        modelfiles.load_model(d, "toy")
    # a truncated one
    d = modelfiles.save_model(tmp_path / "m", "toy", arrays, {})
    (d / "g.npz").write_bytes((d / "g.npz").read_bytes()[:50])
    with pytest.raises(InputError, match="truncated or edited"):
        modelfiles.load_model(d, "toy")
    # another version
    d = modelfiles.save_model(tmp_path / "m", "toy", arrays, {})
    man = json.loads((d / "manifest.json").read_text())
    (d / "manifest.json").write_text(json.dumps({**man, "biokernels_version": "0.0.0"}))
    with pytest.raises(InputError, match="written by biokernels 0.0.0"):
        modelfiles.load_model(d, "toy")
    # an extra file, a missing file, a broken manifest
    d = modelfiles.save_model(tmp_path / "m", "toy", arrays, {})
    np.savez(d / "extra.npz", a=np.ones(1))
    with pytest.raises(InputError, match=r"\['extra.npz'\] are not in manifest.json"):
        modelfiles.load_model(d, "toy")
    (d / "extra.npz").unlink()
    (d / "g.npz").unlink()
    with pytest.raises(InputError, match="listed in manifest.json but missing"):
        modelfiles.load_model(d, "toy")
    (d / "manifest.json").write_text("{not json")
    with pytest.raises(InputError, match="not valid JSON"):
        modelfiles.load_model(d, "toy")
    with pytest.raises(InputError, match="not a model directory"):
        modelfiles.load_model(tmp_path / "nothing", "toy")


def test_model_files_never_hold_pickles(tmp_path):
    with pytest.raises(ValueError, match="hold Python objects"):
        modelfiles.save_model(tmp_path / "m", "toy", {"g": {"a": np.array([{"x": 1}], dtype=object)}}, {})
    assert not (tmp_path / "m").exists() and not list(tmp_path.iterdir())  # nothing partial left
    # a file that needs a pickle, slipped in under a valid manifest, is refused on load
    d = modelfiles.save_model(tmp_path / "m", "toy", {"g": {"a": np.ones(2)}}, {})
    np.savez(d / "g.npz", a=np.array([pd.Timestamp(0)], dtype=object))
    man = json.loads((d / "manifest.json").read_text())
    man["files"]["g.npz"] = modelfiles.file_sha256(d / "g.npz")
    (d / "manifest.json").write_text(json.dumps(man))
    with pytest.raises(InputError, match="not a readable array file"):
        modelfiles.load_model(d, "toy")
