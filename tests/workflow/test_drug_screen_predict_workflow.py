"""drug_screen_predict on the tiny screen: the library imputed on every
target cell line, checked against the generator's hidden model (the truth of
every unmeasured pair is known), the intervals' held-out coverage against
their level, and a user library (invalid SMILES listed; a screen compound
under a new id gets the screen compound's own prediction) ranked against a
GMT query."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
import yaml

from biokernels.io.gctx import read_gctx
from biokernels.metrics import per_sample_r2
from biokernels.synth.depmap import response_model
from conftest import REPO, run_snakemake

TINY_DS = REPO / ".test/config/drug_screen_tiny.yaml"


def _config(workdir, name, **predict):
    cfg = yaml.safe_load(TINY_DS.read_text())
    cfg["drug_screen"]["predict"] = {"query": None, **predict}    # config.yaml's demo query off unless given
    path = workdir / f"{name}.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


@pytest.mark.slow
def test_drug_screen_predict_imputes_the_hidden_model_with_calibrated_intervals(workdir):
    level = 0.9
    run_snakemake(["--cores", "2", "drug_screen_predict", "--configfile",
                   str(_config(workdir, "default_library", interval_level=level))], workdir, timeout=1200)
    base = workdir / "results/drug_screen/tiny/morgan/predict"
    summary = pd.read_csv(base / "summary.tsv", sep="\t")
    assert json.loads((base / "source_check.json").read_text())["same"]
    assert not (base / "ranked.tsv").exists()                # no query configured
    truth = response_model(workdir / "resources/drug_screen/tiny/raw/truth")
    pert = pd.read_csv(workdir / "resources/drug_screen/tiny/raw/pert_info.txt", sep="\t").set_index("pert_id")
    folds = pd.read_csv(workdir / "results/drug_screen/tiny/split/folds.tsv", sep="\t", index_col=0)
    measured = set(zip(folds["pert_id"], folds["cell_id"]))
    for k in (1, 2, 3):
        gct = read_gctx(base / f"target{k}/profiles.gctx")
        meta = gct.col_meta
        cell = meta["cell_id"].iloc[0]
        # every compound with features that the line did not measure, once
        assert not set(zip(meta["pert_id"], meta["cell_id"])) & measured
        assert meta["pert_id"].is_unique and {"half_width_seen", "half_width_unseen"} <= set(gct.row_meta.columns)
        pairs = pd.DataFrame({"cell_id": meta["cell_id"].to_numpy(),
                              "smiles": pert.loc[meta["pert_id"], "canonical_smiles"].to_numpy()})
        Y = truth.mean_expression(pairs, list(gct.data.index))
        r2 = per_sample_r2(gct.data.T.to_numpy(), Y)
        for stratum, row in summary[summary["cell_id"] == cell].set_index("stratum").iterrows():
            m = (meta["stratum"] == stratum).to_numpy()
            if not m.any():
                continue
            # imputation of truly unmeasured pairs is as good as the cross-validation measured: the
            # truth here is noise-free, which can only raise R2; 0.05 allows the library compounds to
            # be a harder draw than the CV folds (the hidden model's R2 spread between folds)
            assert r2[m].mean() >= row["cv_mean_r2"] - 0.05, (cell, stratum, r2[m].mean(), row["cv_mean_r2"])
    # coverage pooled over cell lines and strata: at or above nominal within 2 binomial SEs over the
    # held-out pairs (the genes of a pair are correlated, so pairs, not values, are the trials)
    n = summary["n_check"].sum()
    pooled = float((summary["check_coverage"] * summary["n_check"]).sum() / n)
    assert pooled >= level - 2 * math.sqrt(level * (1 - level) / n), (pooled, n)


@pytest.mark.slow
def test_drug_screen_predict_on_a_user_library_ranked_by_a_gmt_query(workdir):
    # a first run on the screen's own compounds, to compare with
    run_snakemake(["--cores", "2", "drug_screen_predict", "--configfile",
                   str(_config(workdir, "default_library"))], workdir, timeout=1200)
    base = workdir / "results/drug_screen/tiny/morgan/predict"
    own = {k: read_gctx(base / f"target{k}/profiles.gctx") for k in (1, 2, 3)}
    pert = pd.read_csv(workdir / "resources/drug_screen/tiny/raw/pert_info.txt", sep="\t").set_index("pert_id")
    folds = pd.read_csv(workdir / "results/drug_screen/tiny/split/folds.tsv", sep="\t", index_col=0)
    in_source = set(folds.loc[folds["role"] == "source", "pert_id"])
    # a compound of target 1's library that no source cell line measured (stratum unseen either way)
    meta1 = own[1].col_meta
    x = meta1.loc[(meta1["stratum"] == "unseen") & ~meta1["pert_id"].isin(in_source), "pert_id"].iloc[0]
    library = pd.DataFrame({"id": ["USER-1", "USER-2", "USER-BAD"],
                            "smiles": [pert.loc[x, "canonical_smiles"], "CC(=O)OC1=CC=CC=C1C(O)=O", "C1CC(("]})
    library.to_csv(workdir / "library.tsv", sep="\t", index=False)
    genes = pd.read_csv(workdir / "results/drug_screen/tiny/preprocessed/genes.tsv", sep="\t", dtype=str)
    (workdir / "up.gmt").write_text("UP\tdemo\t" + "\t".join(genes["symbol"][:8]) + "\n")
    query = {"name": "q1", "up": "up.gmt", "down": list(genes["gene_id"][8:16])}
    run_snakemake(["--cores", "2", "drug_screen_predict", "--configfile",
                   str(_config(workdir, "user_library", library_path="library.tsv", query=query))], workdir, timeout=1200)
    invalid = pd.read_csv(base / "library/invalid_smiles.tsv", sep="\t")
    assert list(invalid["id"]) == ["USER-BAD"]
    mine = read_gctx(base / "target1/profiles.gctx")
    assert set(mine.col_meta["pert_id"]) == {"USER-1", "USER-2"}
    cell = meta1["cell_id"].iloc[0]
    # the same structure under a new id: the same model and the same inputs, so the same profile
    # (to float32 rounding of the stored GCTX)
    np.testing.assert_allclose(mine.data[f"USER-1:{cell}"].to_numpy(), own[1].data[f"{x}:{cell}"].to_numpy(),
                               rtol=1e-6, atol=1e-5)
    ranked = pd.read_csv(base / "ranked.tsv", sep="\t")
    assert len(ranked) == 2 * 3 and ranked["wtcs"].is_monotonic_decreasing and ranked["wtcs"].between(-1, 1).all()
    assert list(ranked["rank"]) == list(range(1, 7)) and set(ranked["query"]) == {"q1"}
    q = json.loads((base / "query.json").read_text())
    assert q["n_up"] == 8 and q["n_down"] == 8
