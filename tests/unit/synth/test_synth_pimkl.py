"""Embedded default PIMKL data: determinism, file layout, planted pathways."""

from __future__ import annotations

import json

import numpy as np
import pytest

from biokernels.io.cohorts import read_cohort, read_expression_tsv
from biokernels.io.networks import read_edge_list
from biokernels.io.pathways import read_gmt
from biokernels.kernels.pathway import induce_pathways, normalize_trace, pathway_kernels
from biokernels.synth.pimkl import generate_default, pathway_auc

SMALL = dict(n_genes=600, n_sets=12, set_size_range=(20, 80), cohorts={"c1": 120, "c2": 90},
             large_size=400, n_planted=3)


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    out = tmp_path_factory.mktemp("pimkl")
    return out, generate_default(out, seed=3, **SMALL)


def _files(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_deterministic(small, tmp_path):
    out, _ = small
    generate_default(tmp_path / "again", seed=3, **SMALL)
    assert _files(out) == _files(tmp_path / "again")
    generate_default(tmp_path / "other", seed=4, **SMALL)
    assert _files(out)["network.tsv"] != _files(tmp_path / "other")["network.tsv"]


def test_layout_and_readers(small):
    out, info = small
    truth = json.loads((out / "truth" / "params.json").read_text())
    assert truth["planted_pathways"] == info["planted_pathways"] and len(truth["planted_pathways"]) == 3
    edges, c = read_edge_list(out / "network.tsv", weight_col="weight")
    assert c["self_loops_dropped"] == 0 and c["duplicates_merged"] == 0 and c["edges"] == truth["n_edges"]
    assert edges["weight"].between(0.4, 1.0).all()
    sets = read_gmt(out / "gene_sets.gmt")
    assert len(sets) == 12
    planted_genes = set().union(*(sets[k] for k in truth["planted_pathways"]))
    for k, genes in sets.items():   # planted genes belong to their planted set only
        if k not in truth["planted_pathways"]:
            assert not planted_genes & set(genes)
    for name, n in {"c1": 120, "c2": 90, "multiomics": 400}.items():
        X, y, c = read_cohort(out / "cohorts" / name / "expression.tsv", out / "cohorts" / name / "labels.tsv")
        # prevalence is drawn uniform in [0.30, 0.40] and labels are its top quantile (exact
        # up to ties): 0.25-0.45 is the generator's range with rounding room
        assert c["samples"] == n and 0.25 <= y.mean() <= 0.45
        assert X.shape[1] == truth["cohorts"][name]["genes_measured"]
        assert (X.shape[1] < 600) == (name != "multiomics")   # platforms miss some genes
    cna, _ = read_expression_tsv(out / "cohorts" / "multiomics" / "cna.tsv")
    mrna, _ = read_expression_tsv(out / "cohorts" / "multiomics" / "expression.tsv")
    r = np.mean([np.corrcoef(cna[g], mrna[g])[0, 1] for g in mrna.columns[:100]])
    # planted rho = 0.5; a sample correlation of 400 pairs has sd (1 - rho^2) / sqrt(400)
    # ~ 0.04, the mean of 100 genes ~0.004: the window is wide (it also allows for the
    # measured mRNA's transform)
    assert 0.35 < r < 0.65


def test_planted_pathways_are_predictive(small):
    out, info = small
    edges, _ = read_edge_list(out / "network.tsv", weight_col="weight")
    sets = read_gmt(out / "gene_sets.gmt")
    X, y, _ = read_cohort(out / "cohorts" / "multiomics" / "expression.tsv",
                          out / "cohorts" / "multiomics" / "labels.tsv")
    pws, tab = induce_pathways(edges, sets, X.columns)
    K, _ = normalize_trace(pathway_kernels((X - X.mean()) / X.std(), pws))
    auc = pathway_auc(K, y.to_numpy())
    planted = np.array([p.name in info["planted_pathways"] for p in pws])
    assert planted.sum() == 3
    # null AUC of a pathway without signal on 400 samples (~35 % positive) has sd
    # sqrt((n+ + n- + 1) / (12 n+ n-)) ~ 0.03; the mean of the 9 unplanted ~0.01, so
    # 0.06 is ~6 sd; planted ones carry the label signal (0.65 ~ 5 null sd above 0.5)
    assert auc[planted].min() > 0.65
    assert abs(auc[~planted].mean() - 0.5) < 0.06
