"""The PIMKL study end to end on a tiny generated data set: every named
target runs, the tables exist and the planted pathways are significant."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from conftest import REPO, run_snakemake

TINY = REPO / ".test/config/pimkl_tiny.yaml"
TARGETS = ["pimkl_fig3a", "pimkl_fig3b", "pimkl_fig4", "pimkl_fig5", "pimkl_fig6", "pimkl_figS1", "pimkl_figS2",
           "pimkl_figS4", "pimkl_sensitivity"]
FIGS = ["fig3a", "fig3b", "fig4", "fig5", "fig6", "figS1", "figS2", "figS4", "sensitivity"]


@pytest.mark.slow
def test_pimkl_end_to_end_on_a_tiny_study(workdir):
    run_snakemake(["--cores", "2", *TARGETS, "--configfile", str(TINY)], workdir, timeout=1200)
    base = workdir / "results/pimkl/tiny"
    for fig in FIGS:
        assert (base / f"tables/{fig}.tsv").stat().st_size > 0, fig
        assert (base / f"figures/{fig}.png").stat().st_size > 1000, fig
        assert (base / f"figures/{fig}.pdf").is_file(), fig
    truth = json.loads((workdir / "resources/pimkl/tiny/raw/truth/params.json").read_text())
    planted = set(truth["planted_pathways"])
    sig = pd.read_csv(base / "tables/fig3b.tsv", sep="\t")
    for cohort, sub in sig.groupby("cohort"):
        found = set(sub.loc[sub["significant"], "pathway"])
        assert planted <= found, (cohort, found)
    assert planted <= set(sig.loc[sig["reported"], "pathway"])
    a = pd.read_csv(base / "tables/fig3a.tsv", sep="\t").groupby("method")["auc"].mean()
    assert a["pimkl"] > 0.7 and a["pimkl"] >= a["svm_linear"]
    s6 = pd.read_csv(base / "tables/fig6.tsv", sep="\t").groupby("omics")["auc"].mean()
    assert s6["mrna"] > s6["cna"]
    s4 = pd.read_csv(base / "tables/figS4.tsv", sep="\t")
    assert s4["pearson_r_centred"].iloc[0] > 0.5  # trained and transferred signatures agree
    sens = pd.read_csv(base / "tables/sensitivity.tsv", sep="\t")
    assert set(sens["variant"]) >= {"reference", "classifier_svm", "aggregation_mean", "criterion_auc"}
    # a figure rerun does not recompute the cross-validation
    proc = run_snakemake(["-n", "pimkl_fig3a", "--configfile", str(TINY), "--forcerun", "pimkl_figure"], workdir)
    assert "pimkl_s1" not in proc.stdout and "pimkl_figure" in proc.stdout


@pytest.mark.slow
def test_pimkl_signature_and_predict_on_a_tiny_study(workdir):
    run_snakemake(["--cores", "2", "pimkl_signature", "pimkl_predict", "--configfile", str(TINY)], workdir,
                  timeout=1200)
    base = workdir / "results/pimkl/tiny/predict"
    (train,) = [p.name[len("signature_"):] for p in base.glob("signature_*") if p.is_dir()]
    man = json.loads((base / f"signature_{train}/manifest.json").read_text())
    assert man["kind"] == "pimkl_signature" and man["meta"]["cohort"] == train
    assert set(man["meta"]["training_data"]) and len(man["meta"]["config_hash"]) == 64
    summary = pd.read_csv(base / f"{train}_summary.tsv", sep="\t")
    assert train not in set(summary["cohort"]) and len(summary) >= 1
    # the generator plants the same pathways in every cohort: a signature of one ranks the others'
    # labels well above chance (0.5); its cohorts measure overlapping gene subsets, so the
    # coverage is below 1 but above the default floor (0.8), or the job would have stopped
    assert (summary["auc"] > 0.7).all() and summary["coverage"].between(0.8, 1).all(), summary
    assert (summary["measured"] <= summary["signature_genes"]).all()
    weights = pd.read_csv(base / f"{train}_signature_weights.tsv", sep="\t")
    assert abs(weights["weight"].sum() - 1) < 1e-9
    truth = json.loads((workdir / "resources/pimkl/tiny/raw/truth/params.json").read_text())
    top = set(weights.nlargest(len(truth["planted_pathways"]), "weight")["pathway"])
    assert top & set(truth["planted_pathways"]), (top, truth["planted_pathways"])
