"""The function benchmark (issue #31) end to end on the tiny planted source,
and the real-data config's DAG where ../shared/data is present."""

from __future__ import annotations

import pandas as pd
import pytest

from conftest import REPO, SHARED_DATA, run_snakemake

TINY = REPO / ".test/config/function_benchmark_tiny.yaml"
REAL = REPO / "config/function_yeast_mashup.yaml"
DATA = SHARED_DATA / "yeast_mashup_string_mips"


@pytest.mark.slow
def test_function_benchmark_on_the_tiny_planted_source(workdir):
    run_snakemake(["--cores", "2", "function_benchmark", "--configfile", str(TINY)], workdir, timeout=900)
    base = workdir / "results/function_benchmark/planted/level1"
    summary = pd.read_csv(base / "tables/benchmark.tsv", sep="\t")
    assert {"diffusion[net1]", "mDKL[all]", "CKA[mDKL]", "harmonic[sum]", "lgc[net1]", "Mashup"} <= set(summary["method"])
    assert (summary["n_trials"] == 2).all()
    w = pd.read_csv(base / "tables/wilcoxon.tsv", sep="\t")
    assert w["best"].nunique() == 1 and len(w) == 5 * (len(summary) - 1)
    assert (base / "figures/benchmark.png").stat().st_size > 1000
    choices = pd.read_csv(base / "runs/choices.tsv", sep="\t")
    assert choices.groupby("method").size().eq(2).all()


@pytest.mark.skipif(not DATA.is_dir(), reason="../shared/data/yeast_mashup_string_mips is absent")
def test_real_config_dag_has_every_level_and_von_mering(workdir):
    (workdir.parent / "shared").symlink_to(SHARED_DATA.parent, target_is_directory=True)
    proc = run_snakemake(["-n", "function_benchmark", "--configfile", str(REAL)], workdir)
    for part in ("yeast_mashup/level1", "yeast_mashup/level2", "yeast_mashup/level3", "vonmering_mips/level2"):
        assert part in proc.stdout, part
