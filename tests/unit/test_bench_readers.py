"""benchmarks/bench_readers.py: its file generators at tiny sizes (the files
must be in the layouts the project's readers take, with the planted counts,
and reproducible from the seed) and the reader selection. No benchmark runs
here (no subprocess, no real-size file)."""

from __future__ import annotations

import gzip
import importlib.util
import sys
import zipfile
from pathlib import Path

import h5py
import numpy as np
import pandas as pd
import pytest

from fakes.lincs2020 import SIG_COLUMNS

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "benchmarks" / "bench_readers.py"
TINY = 0.001


@pytest.fixture(scope="module")
def br():
    spec = importlib.util.spec_from_file_location("bench_readers_under_test", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    yield mod
    sys.modules.pop(spec.name, None)


def test_scaled_and_reader_selection(br):
    assert br.scaled(22_283, 1.0, 10) == 22_283
    assert br.scaled(22_283, 0.001, 10) == 22
    assert br.scaled(578, 0.001, 5) == 5
    assert br.parse_readers("all") == list(br.READERS)
    assert br.parse_readers("prism_secondary, geo") == ["geo_series_matrix", "geo_platform_annotation",
                                                        "prism_secondary"]
    assert br.parse_readers("go") == ["go_gaf", "go_obo", "go_load_gaf"]
    with pytest.raises(ValueError, match="unknown reader 'nope'"):
        br.parse_readers("geo,nope")
    # every reader names a data set and files its generator writes
    assert {v[0] for v in br.READERS.values()} == set(br.DATASETS)
    assert len(set(br.affy_probe_ids(5000))) == 5000
    assert len({br.yeast_orf(k) for k in range(6400)}) == 6400


def _text(path: Path) -> str:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return fh.read()


def test_geo_files_read_back_and_are_reproducible(br, tmp_path):
    from biokernels.io.geo import read_platform_annotation, read_series_matrix

    (tmp_path / "a").mkdir()
    a = br.make_geo(tmp_path / "a", TINY, 0)
    sm = read_series_matrix(a["files"]["series_matrix"])
    n = a["params"]["probes"]
    assert sm.expression.shape == (n, 300) and sm.platform_id == "GPL96"
    assert sm.missing_values == a["params"]["null_cells"]
    assert len(sm.characteristics) == 5 and sm.sample_ids[0] == "GSM36777"
    ann = read_platform_annotation(a["files"]["platform"])
    assert ann.accession == "GPL96" and ann.symbol_col == "Gene symbol"
    assert ann.counts["platform_probes"] == n and list(ann.probes) == list(sm.expression.index)
    assert ann.counts["probes_without_symbol"] == a["params"]["annot_probes_without_symbol"]
    header = [ln for ln in _text(Path(a["files"]["platform"])).splitlines() if ln.startswith("ID\t")][0]
    assert header.split("\t") == br.ANNOT_COLUMNS
    (tmp_path / "b").mkdir()
    b = br.make_geo(tmp_path / "b", TINY, 0)
    for key in ("series_matrix", "platform"):        # same content (gzip headers hold the time)
        assert _text(Path(a["files"][key])) == _text(Path(b["files"][key]))


def test_geo_annotation_has_multi_gene_probes(br, tmp_path):
    from biokernels.io.geo import read_platform_annotation

    probes = br.affy_probe_ids(400)
    planted = br.write_gpl_annot(tmp_path / "GPL96.annot.gz", probes, br._rng(0, 2))
    ann = read_platform_annotation(tmp_path / "GPL96.annot.gz")
    assert planted["probes_multi_gene"] > 0 and ann.counts["probes_multi_gene"] == planted["probes_multi_gene"]
    assert ann.counts["platform_probes_kept"] == 400 - planted["probes_without_symbol"] - planted["probes_multi_gene"]
    assert "///" in _text(tmp_path / "GPL96.annot.gz")


def test_lincs_gctx_layout_values_siginfo_and_kept_ids(br, tmp_path):
    from biokernels.io import gctx
    from biokernels.io.lincs2020 import read_siginfo

    made = br.make_lincs(tmp_path, TINY, 0)
    n, g = made["params"]["signatures"], made["params"]["genes"]
    assert (n, g) == (720, 978)
    path = made["files"]["gctx"]
    with h5py.File(path, "r") as h5:                  # the layout write_gctx writes for CMap's release files
        assert h5.attrs["version"] == gctx.GCTX_VERSION
        m = h5[gctx.MATRIX]
        assert m.shape == (n, g) and m.dtype == np.float32 and m.chunks == gctx._default_chunks(n, g, 4)
        assert m.compression is None
        assert list(h5[gctx.ROW_META]) == ["id"] and list(h5[gctx.COL_META]) == ["id"]
    whole = gctx.read_gctx(path)
    assert whole.data.shape == (g, n)
    block = made["params"]["block_cols"]
    expected = np.vstack([br.gctx_block(0, b, min(n, s + block) - s, g) for b, s in enumerate(range(0, n, block))])
    np.testing.assert_array_equal(whole.data.to_numpy().T, expected)
    si = read_siginfo(made["files"]["siginfo"], 5)
    assert len(si) == n and list(si.index) == list(whole.col_meta.index)
    assert list(pd.read_csv(made["files"]["siginfo"], sep="\t", nrows=1).columns) == \
        list(SIG_COLUMNS) + br.SIG_EXTRA
    kept = Path(made["files"]["kept_ids"]).read_text().split()
    rule = si.index[si["pert_type"].isin(["trt_cp", "ctl_vehicle"]) & (si["qc_pass"] == "1")]
    assert kept == list(rule) and 0 < len(kept) < n
    assert made["params"]["signatures_kept_by_filter"] == len(kept)
    got = sum(c.data.shape[1] for c in gctx.iter_gctx_columns(path, cid=kept, chunk_size=100, validate=False))
    assert got == len(kept)


def test_go_files_read_back(br, tmp_path):
    from biokernels.io.go import load_gaf, read_gaf, read_obo

    made = br.make_go(tmp_path, 0.01, 0)
    p = made["params"]
    rows, info = read_gaf(made["files"]["gaf"])
    assert info["gaf_version"] == "2.2" and len(rows) == p["gaf_lines"] == 1500
    assert int(rows["NOT"].sum()) == p["gaf_rows_not"]
    onto = read_obo(made["files"]["obo"])
    assert onto.counts["terms"] == p["obo_live_terms"] and onto.counts["obsolete_terms"] == p["obo_obsolete_terms"]
    assert onto.counts["alt_ids"] == p["obo_alt_ids"] and onto.counts["edges_other_relation"] > 0
    assert set(br.GO_ROOTS) <= set(onto.terms)
    labels, counts = load_gaf(made["files"]["gaf"], made["files"]["obo"], **{**br.GO_SETTINGS, "min_annotated": 5,
                                                                           "max_annotated": None})
    assert int(rows["GO_ID"].isin(list(onto.alt_ids)).sum()) == p["gaf_rows_alt_id"] > 0
    assert counts["rows_iea_excluded"] > 0 and counts["rows_unknown_term"] + counts["rows_obsolete_term"] > 0
    assert labels.shape[1] > 0 and all(i.startswith(("Y", "alias")) for i in labels.index)


def test_biogrid_zip_reads_back(br, tmp_path):
    from biokernels.io.biogrid import read_biogrid_tab3

    made = br.make_biogrid(tmp_path, TINY, 0)
    path = made["files"]["tab3_zip"]
    with zipfile.ZipFile(path) as z:
        assert z.namelist() == [br.BIOGRID_MEMBER]
    edges, counts = read_biogrid_tab3(path, zip_member=br.BIOGRID_MEMBER, **br.BIOGRID_SETTINGS)
    assert counts["rows"] == made["params"]["interactions"] == 800
    assert counts["rows_other_system_type"] == made["params"]["genetic"]
    assert counts["edges"] == len(edges) > 0 and counts["rows_other_organism"] > 0


def test_prism_files_read_back(br, tmp_path):
    from biokernels.io.depmap import load_prism_primary, load_prism_secondary

    made = br.make_prism(tmp_path, TINY, 0)
    f, p = made["files"], made["params"]
    v, c = load_prism_primary({k: f[k] for k in ("logfold_change", "treatment_info", "models")},
                              **br.PRISM_PRIMARY_SETTINGS)
    assert (c["matrix_models"], c["matrix_columns"], c["treatment_rows"]) == (5, 4686, 4686)
    assert c["model_table_layout"] == "Model.csv" and c["models_not_in_mapping"] == 1
    assert c["compounds_dose_out_of_range"] == 36 and c["compounds"] == 4400 and len(v) > 0
    assert p["primary_models_not_in_model_table"] == 1
    first = Path(f["logfold_change"]).read_text().split("\n", 1)[0]
    assert first.startswith('"",') and "::2.5::HTS" in first           # R's write.csv header
    v2, c2 = load_prism_secondary({k: f[k] for k in ("dose_response", "models")}, **br.PRISM_SECONDARY_SETTINGS)
    assert c2["input_rows"] == p["secondary_rows"] == 700 and len(v2) > 0
    assert c2["values_missing"] > 0 and c2["rows_failed_str"] > 0
