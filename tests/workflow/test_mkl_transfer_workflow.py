"""Transfer vs MKL (SI Fig. S7) end to end on a tiny configuration: both named
targets run, the tables hold every (target, MKL method, model) and accuracies."""

from __future__ import annotations

import pandas as pd
import pytest

from conftest import REPO, run_snakemake

TINY = [str(REPO / ".test/config/drug_screen_tiny.yaml"), str(REPO / ".test/config/mkl_transfer_tiny.yaml")]
METHODS = {"CKA", "EasyMKL", "FHeuristic", "PWMK"}
MODELS = {"baseline", "transfer", "translation", "source"}


def _check(table: pd.DataFrame, targets: set[str]) -> None:
    assert set(table["target"]) == targets
    assert set(table["method"]) == METHODS and set(table["model"]) == MODELS
    assert len(table) == len(targets) * len(METHODS) * len(MODELS)
    assert table["accuracy_mean"].between(0, 1).all()
    assert table["n_test"].min() > 0


@pytest.mark.slow
def test_mkl_transfer_targets_on_a_tiny_config(workdir):
    run_snakemake(["--cores", "2", "mkl_transfer_figS7", "mkl_transfer_figS7_bio", "--configfile", *TINY], workdir, timeout=1200)
    img = workdir / "results/mkl_transfer/digits"
    table = pd.read_csv(img / "tables/figS7.tsv", sep="\t")
    _check(table, {"contrast", "gaussian_noise", "translate"})
    assert (img / "figures/figS7.png").stat().st_size > 1000 and (img / "figures/figS7.pdf").is_file()
    # the digits are easy: every MKL classifier beats chance on the mild corruption
    noise = table[(table["target"] == "gaussian_noise") & (table["model"] != "source")]
    assert (noise["accuracy_mean"] > 0.8).all()
    w = pd.read_csv(img / "tables/figS7_weights.tsv", sep="\t")
    assert set(w["kernel"]) == {"laplace", "gaussian", "linear"} and (w["weight_mean"] >= 0).all()
    bio = workdir / "results/mkl_transfer/depmap/tiny/tiny/morgan"
    tb = pd.read_csv(bio / "tables/figS7_bio.tsv", sep="\t")
    assert tb["target"].nunique() >= 1
    _check(tb, set(tb["target"]))
    assert (tb["n_train"] == 30).all()
    assert (bio / "figures/figS7_bio.png").stat().st_size > 1000
    # a figure rerun does not recompute the models
    proc = run_snakemake(["-n", "mkl_transfer_figS7", "--configfile", *TINY, "--forcerun", "mkl_transfer_figure_images"],
                         workdir)
    assert "mkl_transfer_images" not in proc.stdout and "mkl_transfer_figure_images" in proc.stdout
