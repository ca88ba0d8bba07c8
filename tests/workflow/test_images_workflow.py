"""The images study end to end: every panel target on a tiny digits config,
and one target on the real Fashion-MNIST files where Debian's package put
them (.ci/run installs it)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from conftest import REPO, run_snakemake

TINY = str(REPO / ".test/config/images_tiny.yaml")
FIGS = ["fig2a", "fig2b", "fig2c", "fig3a", "fig3b"]
FASHION = Path("/usr/share/datasets/fashion-mnist")


@pytest.mark.slow
def test_every_panel_on_a_tiny_config(workdir):
    run_snakemake(["--cores", "2", *[f"images_{f}" for f in FIGS], "--configfile", TINY], workdir, timeout=1200)
    out = workdir / "results/images/digits"
    for f in FIGS:
        assert (out / f"figures/{f}.png").stat().st_size > 1000, f
    a = pd.read_csv(out / "tables/fig2a.tsv", sep="\t")
    assert set(a["kernel"]) == {"laplace", "cntk"} and set(a["target"]) == {"overlap", "partial", "disjoint"}
    assert a[["baseline", "projected"]].stack().between(0, 1).all()
    shared = a[a["kernel"] == "laplace"].set_index("target")["in_source"].to_dict()
    assert shared == {"overlap": 4, "partial": 1, "disjoint": 0}
    t = pd.read_csv(out / "tables/fig3a.tsv", sep="\t")
    assert len(t) == 2 * 3 and {"translated_margin", "translated_best"} <= set(t.columns)
    law = pd.read_csv(out / "tables/fig2b.tsv", sep="\t")
    assert set(law["metric"]) == {"projected", "baseline"} and law["r2"].notna().all()
    c = pd.read_csv(out / "tables/fig2c.tsv", sep="\t")
    assert set(c["source_classes"]) == {2, 3} and set(c["n_source"]) == {60}


@pytest.mark.slow
@pytest.mark.skipif(not FASHION.is_dir(), reason="Debian's dataset-fashion-mnist is not installed")
def test_translation_on_real_fashion_mnist(workdir):
    small = workdir / "fashion_small.yaml"
    small.write_text(
        "images:\n"
        "  compared_kernels: [laplace]\n"
        "  solver: {name: exact, ridge: 0.0}\n"
        "  translation: {max_source: 2000, max_images: 1000, curve_points: 3, seeds: [0],\n"
        "                corruptions: [contrast, fog]}\n")
    run_snakemake(["--cores", "2", "images_fig3a", "--configfile", str(REPO / "config/images_fashion_mnist.yaml"),
                   str(small)], workdir, timeout=1200)
    t = pd.read_csv(workdir / "results/images/fashion_mnist/tables/fig3a.tsv", sep="\t")
    assert list(t["corruption"]) == ["contrast", "fog"] and (t["n_test"] == 100).all()
    # Zalando's benchmark: kernel methods on 28x28 Fashion-MNIST reach about 0.8-0.9
    # accuracy; 900 corrupted training images put the baseline well above chance (0.1).
    assert (t["baseline"] > 0.5).all() and (t["translated"] > 0.5).all()


@pytest.mark.slow
@pytest.mark.skipif(not FASHION.is_dir(), reason="Debian's dataset-fashion-mnist is not installed")
def test_mkl_figS7_on_real_fashion_mnist(workdir):
    small = workdir / "fashion_s7.yaml"
    small.write_text(
        "mkl_transfer:\n"
        "  methods: [EasyMKL]\n"
        "  images:\n"
        "    seeds: [0]\n"
        "    corruptions: [contrast]\n"
        "    sizes: {n_source_train: 200, n_source_test: 100, n_target_train: 200, n_target_test: 200}\n")
    run_snakemake(["--cores", "2", "mkl_transfer_figS7", "--configfile", str(REPO / "config/images_fashion_mnist.yaml"),
                   str(small)], workdir, timeout=1200)
    t = pd.read_csv(workdir / "results/mkl_transfer/fashion_mnist/tables/figS7.tsv", sep="\t")
    row = t[(t["target"] == "contrast") & (t["method"] == "EasyMKL")].set_index("model")["accuracy_mean"]
    assert set(row.index) >= {"baseline", "transfer", "translation", "source"}
    # pullover vs coat: two balanced classes; 200 training images of the target put every
    # model trained on it well above chance (0.5). The source model alone is not checked:
    # severity-5 contrast may leave it at chance, as the paper's Fig. 3a shows for contrast.
    trained = row[["baseline", "transfer", "translation"]]
    assert (trained > 0.6).all() and (row <= 1).all() and (row >= 0).all(), row
