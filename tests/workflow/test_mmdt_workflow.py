"""LS-MMDT rules (rules/mmdt.smk) on tiny settings: the digits task, the
cohort task on the tiny PIMKL cohorts and the image task (the images study's
digits, clean to corrupted and coarser) run, write their tables and figures,
and rerunning a figure does not refit."""

import pandas as pd
import pytest

from conftest import REPO, run_snakemake

pytestmark = pytest.mark.slow

CONFIGS = [str(REPO / ".test/config/pimkl_tiny.yaml"), str(REPO / ".test/config/mmdt_tiny.yaml")]


def test_mmdt_targets_on_tiny_settings(workdir):
    run_snakemake(["--cores", "2", "mmdt_fig_digits", "mmdt_fig_cohorts", "mmdt_fig_images", "--configfile", *CONFIGS],
                  workdir)
    digits = pd.read_csv(workdir / "results/mmdt/digits/tables/learning_curve.tsv", sep="\t")
    assert set(digits["method"]) == {"MMDT", "MMDT-W0", "SVM-Source", "SVM-Target"}
    assert set(digits["k"]) == {1, 3}
    acc = digits[digits["metric"] == "accuracy"].set_index(["method", "k"])["mean"]
    assert acc.between(0, 1).all()
    # SVM-Target never predicts the held-out digits 8 and 9, so it scores 0 there
    held = digits[digits["metric"] == "accuracy_heldout"].set_index(["method", "k"])["mean"]
    assert (held.loc["SVM-Target"] == 0).all()
    cohorts = pd.read_csv(workdir / "results/mmdt/cohorts_tiny/tables/learning_curve.tsv", sep="\t")
    assert set(cohorts["k"]) == {2, 5} and cohorts["mean"].between(0, 1).all()
    images = pd.read_csv(workdir / "results/mmdt/images_digits/tables/learning_curve.tsv", sep="\t")
    assert set(images["k"]) == {1, 3} and images["mean"].between(0, 1).all()
    held = images[images["metric"] == "accuracy_heldout"].set_index(["method", "k"])["mean"]
    assert (held.loc["SVM-Target"] == 0).all()
    for task in ("digits", "cohorts_tiny", "images_digits"):
        assert (workdir / f"results/mmdt/{task}/figures/learning_curve.png").stat().st_size > 1000
    proc = run_snakemake(["-n", "mmdt_fig_digits", "--configfile", *CONFIGS, "--forcerun", "mmdt_figure"], workdir)
    assert "rule mmdt_digits:" not in proc.stdout and "rule mmdt_figure:" in proc.stdout
