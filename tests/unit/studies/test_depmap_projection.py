"""The DepMap projection step as library functions
(studies/depmap/projection.py): what the ``depmap_projection`` rule computes
for curve=ridge, scaling (SI Fig. S9a) and genes (S9b), on a planted target
table whose answers are closed forms or the documented composition of the
already-tested protocol functions."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from biokernels.scaling import log_spaced_sizes
from biokernels.studies.depmap import projection as pj
from biokernels.studies.depmap.protocol import log_spaced_counts, ntk_gram, scaling_curve, select_ridges

CFG = {"seeds": 2, "ridge": {"grid": [0.1, 1.0], "subset": 40}, "scaling": {"n_min": 2, "n_points": 3},
       "genes": {"n_points": 3}, "projection_input": "response", "kernel": {}}


def _data(n_seen=40, n_unseen=4, n_genes=6, seed=0) -> pj.ProjectionData:
    """Target pairs on two cell lines; viability a smooth function of the
    imputed response; folds i % 5 within each stratum."""
    rng = np.random.default_rng(seed)
    n = n_seen + n_unseen
    stratum = ["seen"] * n_seen + ["unseen"] * n_unseen
    fold = [i % 5 for i in range(n_seen)] + [i % 5 for i in range(n_unseen)]
    cells = ["T1", "T2"]
    targets = pd.DataFrame({"drug_key": [f"d{i}" for i in range(n)], "cell_id": [cells[i % 2] for i in range(n)],
                            "stratum": stratum, "fold": fold}, index=[f"p{i}" for i in range(n)])
    genes = [f"g{j}" for j in range(n_genes)]
    controls = pd.DataFrame(rng.normal(size=(4, n_genes)), index=["T1", "T2", "S1", "S2"], columns=genes)
    imputed = pd.DataFrame(controls.loc[targets["cell_id"]].to_numpy() + rng.normal(size=(n, n_genes)),
                           index=targets.index, columns=genes)
    targets["viability"] = np.tanh((imputed.to_numpy() - controls.loc[targets["cell_id"]].to_numpy())[:, :2].sum(1))
    features = pd.DataFrame(rng.random((n, 5)) + 0.1, index=targets["drug_key"])
    source = {"source_cells": ["S1", "S2"], "source_mean": [0.0] * n_genes, "source_var": [1.0] * n_genes,
              "source_response_mean": [0.0] * n_genes, "source_response_var": [1.0] * n_genes}
    return pj.ProjectionData(targets, imputed, controls, features, source)


def test_min_training_split_closed_form():
    # folds of sizes 3, 2, 1 out of 6: the training splits hold 3, 4, 5 pairs; the smallest is 3
    assert pj.min_training_split(np.array([0, 0, 0, 1, 1, 2])) == 3
    assert pj.min_training_split(np.array([4, 4, 4])) == 0  # one fold: no split at all


def test_load_projection_data_aligns_rows_genes_and_features(tmp_path):
    from biokernels.io.gctx import GCT, write_gctx

    d = _data(n_seen=6, n_unseen=0)
    d.targets.to_csv(tmp_path / "targets.tsv", sep="\t")
    shuffled = d.imputed.iloc[::-1]  # the gctx holds the pairs in another order
    write_gctx(tmp_path / "imputed.gctx", GCT(data=shuffled.T, row_meta=pd.DataFrame(index=shuffled.columns),
                                              col_meta=pd.DataFrame(index=shuffled.index)))
    # controls with an extra gene in front: only the imputed genes are kept, in their order
    d.controls.assign(extra=1.0)[["extra", *d.controls.columns[::-1]]].to_csv(tmp_path / "controls.tsv", sep="\t")
    d.features.iloc[:3].to_csv(tmp_path / "f1.tsv", sep="\t")
    d.features.iloc[3:].to_csv(tmp_path / "f2.tsv", sep="\t")
    (tmp_path / "summary.json").write_text(json.dumps(d.source))
    got = pj.load_projection_data(tmp_path / "targets.tsv", tmp_path / "imputed.gctx", tmp_path / "controls.tsv",
                                  [tmp_path / "f1.tsv", tmp_path / "f2.tsv"], tmp_path / "summary.json")
    assert list(got.imputed.index) == list(d.targets.index)  # reordered to the targets
    np.testing.assert_allclose(got.imputed.to_numpy(), d.imputed.to_numpy())
    assert list(got.controls.columns) == list(d.imputed.columns)
    np.testing.assert_allclose(got.controls.loc[d.controls.index].to_numpy(), d.controls.to_numpy())
    assert list(got.features.index) == list(d.features.index)  # both tables, str ids
    assert got.source == d.source


def test_ridge_curve_is_select_ridges_on_the_seen_pairs(tmp_path):
    """curve=ridge is select_ridges on the NTK Grams of the seen pairs' inputs
    (recomputed here: run-to-run rounding of threaded float64 BLAS only,
    rtol 1e-10); with fewer than 10 seen pairs it uses every pair."""
    d = _data()
    table = pj.projection_table(d, "ridge", CFG, 3)
    seen = d.targets[d.targets["stratum"] == "seen"]
    X = d.inputs(seen, True)
    _, expect = select_ridges({m: ntk_gram(X[m]) for m in X}, seen["viability"].to_numpy(), CFG["ridge"]["grid"],
                              CFG["ridge"]["subset"], 3)
    pd.testing.assert_frame_equal(table, expect, check_exact=False, rtol=1e-10)
    assert list(table["model"].unique()) == ["baseline", "projection"]
    few = _data(n_seen=6, n_unseen=30)
    X = few.inputs(few.targets, True)
    _, expect = select_ridges({m: ntk_gram(X[m]) for m in X}, few.targets["viability"].to_numpy(),
                              CFG["ridge"]["grid"], CFG["ridge"]["subset"], 3)
    pd.testing.assert_frame_equal(pj.projection_ridges(few, CFG, 3), expect, check_exact=False, rtol=1e-10)
    table.to_csv(tmp_path / "ridge.tsv", sep="\t", index=False)
    lams = pj.chosen_ridges(tmp_path / "ridge.tsv")
    assert set(lams) == {"baseline", "projection"}
    assert all(lams[m] == table.loc[(table["model"] == m) & table["chosen"], "lam"].item() for m in lams)


def test_scaling_and_genes_curves(tmp_path):
    """Planted: 40 seen pairs (5 folds: 32 per training split), 4 unseen (3 per
    split < n_min + n_points = 5: skipped). scaling = scaling_curve on both
    models at 3 sizes from 2 to 32 with seeds 7, 8 (the documented
    composition, rtol 1e-10 as above). genes: 2 seeds x 3 gene counts x 5
    folds rows at n_train 32; with every gene, the NTK (a function of inner
    products and norms, unchanged by permuting the gene columns) equals the
    scaling curve's projection at n = 32 up to the rounding of the permuted
    sums (~1e-15, times the ridge solve's condition <= (n max K + lam) / lam
    ~ 1e3: atol 1e-9)."""
    d = _data()
    lams = {"baseline": 1.0, "projection": 1.0}
    pd.DataFrame({"model": ["baseline", "projection", "projection"], "lam": [1.0, 1.0, 0.1],
                  "r2": [0.0, 0.0, 0.0], "chosen": [True, True, False]}).to_csv(tmp_path / "r.tsv", sep="\t",
                                                                                  index=False)
    s9a = pj.projection_table(d, "scaling", CFG, 7, ridge_tsv=tmp_path / "r.tsv")
    seen = d.targets[d.targets["stratum"] == "seen"]
    X = d.inputs(seen, True)
    sizes = log_spaced_sizes(32, 3, 2)
    expect = scaling_curve({m: ntk_gram(X[m]) for m in ("baseline", "projection")}, seen["viability"].to_numpy(),
                           seen["fold"].to_numpy(), sizes, [7, 8], lams).assign(stratum="seen")
    pd.testing.assert_frame_equal(s9a, expect, check_exact=False, rtol=1e-10)
    assert sizes[-1] == 32 and set(s9a["stratum"]) == {"seen"}
    s9b = pj.projection_table(d, "genes", CFG, 7, ridge_tsv=tmp_path / "r.tsv")
    counts = log_spaced_counts(6, 3)
    assert len(s9b) == 2 * len(counts) * 5 and set(s9b["n_genes"]) == set(counts) and set(s9b["n_train"]) == {32}
    assert list(s9b.columns) == ["n_train", "seed", "fold", "r2", "n_genes", "stratum"]
    full = s9b[s9b["n_genes"] == 6].set_index(["seed", "fold"])["r2"].sort_index()
    ref = s9a[(s9a["model"] == "projection") & (s9a["n_train"] == 32)].set_index(["seed", "fold"])["r2"]
    np.testing.assert_allclose(full.to_numpy(), ref.sort_index().to_numpy(), rtol=0, atol=1e-9)
    # no stratum large enough: an empty table with the columns
    empty = pj.projection_curve(_data(n_seen=4), "scaling", CFG, lams, 7)
    assert empty.empty and list(empty.columns) == pj.EMPTY_COLUMNS


def test_projection_table_rejects_unknown_curves_and_a_missing_ridge_table():
    d = _data(n_seen=6, n_unseen=0)
    with pytest.raises(ValueError, match="curve"):
        pj.projection_table(d, "dose", CFG, 0, ridge_tsv="r.tsv")
    with pytest.raises(ValueError, match="ridge table"):
        pj.projection_table(d, "genes", CFG, 0)


def test_genes_curve_equals_the_direct_computation_per_gene_subset():
    """The genes curve accumulates the Gram over the nested gene subsets; each
    (seed, g) must equal the direct path: model_inputs on the first g genes of
    the seed's order, ntk_gram, scaling_curve. A source mean and variance
    that differ per gene make the per-subset scale matter. Tolerance as above:
    Gram sums in another order (~1e-15) times the ridge solve's condition
    (~1e3): atol 1e-9."""
    from biokernels.studies.depmap.protocol import gene_orders, model_inputs

    d = _data(n_genes=9, seed=3)
    rng = np.random.default_rng(5)
    d.source["source_response_mean"] = rng.normal(0, 0.3, 9).tolist()
    d.source["source_response_var"] = rng.uniform(0.2, 3.0, 9).tolist()
    lams = {"projection": 0.5}
    seen = d.targets[d.targets["stratum"] == "seen"]
    got = pj.genes_rows(d, seen, 32, CFG, [7, 8], lams)
    y, fold = seen["viability"].to_numpy(), seen["fold"].to_numpy()
    for seed, order in gene_orders(9, [7, 8]).items():
        for g in log_spaced_counts(9, CFG["genes"]["n_points"]):
            X = model_inputs(seen, d.imputed.loc[seen.index], d.features, d.controls, d.source, genes=order[:g])
            ref = scaling_curve({"projection": ntk_gram(X["projection"])}, y, fold, [32], [seed], lams)
            sub = got[(got["seed"] == seed) & (got["n_genes"] == g)].sort_values("fold")
            np.testing.assert_allclose(sub["r2"].to_numpy(), ref.sort_values("fold")["r2"].to_numpy(),
                                       rtol=0, atol=1e-9)
