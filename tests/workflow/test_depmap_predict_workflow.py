"""depmap_predict on the tiny screen: the viability of every (compound,
target cell line) pair the generated table lacks, checked against the
generator's hidden model (the truth of an unmeasured pair is known), and
the intervals' held-out coverage against their level."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
import yaml

from biokernels.metrics import r2_score
from biokernels.synth.depmap import response_model
from conftest import REPO, run_snakemake

TINY_DS = REPO / ".test/config/drug_screen_tiny.yaml"


@pytest.mark.slow
def test_depmap_predict_recovers_the_hidden_viability_of_unmeasured_pairs(workdir):
    cfg = yaml.safe_load(TINY_DS.read_text())
    cfg["depmap"]["predict"] = {"interval_level": 0.8}
    (workdir / "tiny.yaml").write_text(yaml.safe_dump(cfg))
    run_snakemake(["--cores", "2", "depmap_predict", "--configfile", str(workdir / "tiny.yaml")], workdir, timeout=1200)
    base = workdir / "results/depmap/tiny/tiny"
    pred = pd.read_csv(base / "morgan/predict/viability.tsv", sep="\t", index_col=0)
    cal = pd.read_csv(base / "morgan/predict/calibration.tsv", sep="\t").set_index("stratum")
    assert json.loads((base / "morgan/predict/source_check.json").read_text())["same"]
    targets = pd.read_csv(base / "prepared/targets.tsv", sep="\t", index_col=0)
    # every compound x target cell line, measured or predicted, once
    assert not set(pred.index) & set(targets.index)
    assert len(pred) + len(targets) == targets["drug_key"].nunique() * targets["cell_id"].nunique()
    assert (pred["lower"] < pred["viability"]).all() and pred["tanimoto"].between(0, 1).all()
    drugs = pd.read_csv(base / "prepared/drugs.tsv", sep="\t", keep_default_na=False).drop_duplicates(
        "drug_key").set_index("drug_key")
    truth = response_model(workdir / "resources/drug_screen/tiny/raw/truth").viability(
        pd.DataFrame({"cell_id": pred["cell_id"].to_numpy(), "smiles": drugs.loc[pred["drug_key"], "smiles"].to_numpy()}))
    pred["truth"] = truth
    for stratum, rows in pred.groupby("stratum"):
        # as good as the cross-validation measured, against a noise-free truth (which can only raise
        # R2); 0.1 allows a small, harder draw of pairs (tens of pairs here)
        assert r2_score(rows["truth"], rows["viability"]) >= cal.loc[stratum, "cv_r2"] - 0.1, stratum
    # held-out coverage pooled over the strata: at or above nominal within 2 binomial SEs
    n = cal["n_check"].sum()
    pooled = float((cal["check_coverage"] * cal["n_check"]).sum() / n)
    assert pooled >= 0.8 - 2 * math.sqrt(0.8 * 0.2 / n), (pooled, n)
