"""GCTX / GCT reading and writing (biokernels.io.gctx)."""

import gzip
import hashlib
from pathlib import Path

import h5py
import numpy as np
import pandas as pd
import pytest

from biokernels.io.gctx import (GCT, iter_gctx_columns, matrix_format, read_gct, read_gctx, read_gctx_meta,
                                write_gct, write_gctx)
from biokernels.errors import InputError

SHARED_DATA = Path(__file__).resolve().parents[3].parent / "shared" / "data"
REAL = SHARED_DATA / "l1000_cmapR_modzs_n272x978" / "modzs_n272x978.gctx"
needs_real = pytest.mark.skipif(not REAL.is_file(), reason=f"real L1000 GCTX not found at {REAL}")


@pytest.fixture(scope="module")
def real():
    if not REAL.is_file():
        pytest.skip(f"real L1000 GCTX not found at {REAL}")
    return read_gctx(REAL)


def small_gct() -> GCT:
    """3 genes x 4 samples, with a µ string, numeric, bool and missing metadata."""
    rid = pd.Index(["g1", "g2", "g3"], name="rid")
    cid = pd.Index(["s1", "s2", "s3", "s4"], name="cid")
    data = pd.DataFrame(np.arange(12, dtype=np.float32).reshape(3, 4) / 7, index=rid, columns=cid)
    row_meta = pd.DataFrame({"pr_gene_symbol": ["PSME1", "ATF1", "RHEB"],
                             "is_lm": np.array([1.0, 0.0, 1.0], dtype=np.float32)}, index=rid)
    col_meta = pd.DataFrame({"pert_idose": ["10 µM", "500 nM", "1 µM", np.nan],
                             "pert_iname": ["atorvastatin", "vemurafenib", "venlafaxine", "vemurafenib"],
                             "n": np.array([1, 2, 3, 4], dtype=np.int64),
                             "score": [0.5, np.nan, -1.25, 2.0],
                             "gold": [True, False, True, True]}, index=cid)
    return GCT(data=data, row_meta=row_meta, col_meta=col_meta)


def assert_gct_equal(a: GCT, b: GCT, **kw):
    pd.testing.assert_frame_equal(a.data, b.data, **kw)
    pd.testing.assert_frame_equal(a.row_meta, b.row_meta, **kw)
    pd.testing.assert_frame_equal(a.col_meta, b.col_meta, **kw)


# ------------------------------------------------------------------ real file

@needs_real
def test_real_file_contents(real):
    # PROVENANCE.md: 272 level-5 signatures x 978 landmark genes, float32,
    # 3 compounds, 65 cell lines, 218 signatures at 10 µM.
    assert real.data.shape == (978, 272)
    assert real.row_meta.shape[0] == 978 and real.col_meta.shape[0] == 272
    assert (real.data.dtypes == np.float32).all()
    # MODZ scores are clipped to +-10 (stored as float32: 10.000001).
    assert np.abs(real.data.to_numpy()).max() <= 10 + 1e-5
    assert np.abs(real.data.to_numpy()).max() > 9.9
    assert set(real.col_meta["pert_iname"]) == {"atorvastatin", "vemurafenib", "venlafaxine"}
    assert real.col_meta["cell_id"].nunique() == 65
    doses = real.col_meta["pert_idose"].value_counts()
    assert doses["10 µM"] == 218 and doses["1 µM"] == 12 and doses["500 nM"] == 16
    assert {"pr_gene_id", "pr_gene_symbol", "is_lm", "is_bing"} <= set(real.row_meta.columns)
    assert {"cell_id", "pert_id", "pert_iname", "pert_idose", "pert_itime", "pert_type"} <= set(real.col_meta.columns)
    assert real.row_meta.loc["200814_at", "pr_gene_symbol"] == "PSME1"
    # numeric metadata stay numeric (float32 in the file)
    assert real.row_meta["is_lm"].dtype == np.float32 and (real.row_meta["is_lm"] == 1).all()


@needs_real
def test_real_file_orientation_matches_raw_h5py(real):
    # Independent read with h5py: the stored matrix is (n_cols, n_rows) =
    # (272 signatures, 978 genes); our data is its transpose.
    with h5py.File(REAL, "r") as h5:
        raw = h5["0/DATA/0/matrix"][()]
        cids = [x.decode() for x in h5["0/META/COL/id"][()]]
        rids = [x.decode() for x in h5["0/META/ROW/id"][()]]
        assert h5.attrs["version"] == b"GCTX1.0"
        raw_dose = h5["0/META/COL/pert_idose"][()]
    assert raw.shape == (272, 978) == (len(cids), len(rids))
    np.testing.assert_array_equal(real.data.to_numpy(), raw.T)
    assert list(real.data.columns) == cids and list(real.data.index) == rids
    # the raw bytes hold Latin-1 0xB5 for µ; decoded here as U+00B5
    assert b"10 \xb5M" in set(raw_dose)
    assert [d.decode("latin-1") for d in raw_dose] == list(real.col_meta["pert_idose"])


@needs_real
def test_real_file_neg_666_is_missing():
    # distil_cc_q75 holds CMap's null -666 three times.
    converted = read_gctx_meta(REAL, "col", convert_neg_666=True)
    kept = read_gctx_meta(REAL, "col")  # as stored, by default
    assert converted["distil_cc_q75"].isna().sum() == 3
    assert (kept["distil_cc_q75"] == -666).sum() == 3
    assert converted.index.equals(kept.index)
    pd.testing.assert_frame_equal(read_gctx_meta(REAL, "row"), read_gctx(REAL, meta_only=True).row_meta)


@needs_real
def test_selection_equals_slicing_the_full_read(real):
    rng = np.random.default_rng(0)
    rid = list(rng.choice(real.data.index, 40, replace=False))
    dense_cid = list(real.data.columns[100:130][::-1])       # contiguous span, reversed
    sparse_cid = list(rng.permutation(real.data.columns[::9]))  # spread out: h5py fancy selection
    for cid in (dense_cid, sparse_cid):
        sub = read_gctx(REAL, rid=rid, cid=cid)
        pd.testing.assert_frame_equal(sub.data, real.data.loc[rid, cid])
        pd.testing.assert_frame_equal(sub.col_meta, real.col_meta.loc[cid])
        pd.testing.assert_frame_equal(sub.row_meta, real.row_meta.loc[rid])
    only_cols = read_gctx(REAL, cid=sparse_cid)
    pd.testing.assert_frame_equal(only_cols.data, real.data[sparse_cid])
    meta = read_gctx(REAL, cid=sparse_cid, meta_only=True)
    assert meta.data is None and list(meta.col_meta.index) == sparse_cid


@needs_real
def test_iter_columns_concatenates_to_the_full_read(real):
    chunks = list(iter_gctx_columns(REAL, chunk_size=50))
    assert [c.data.shape[1] for c in chunks] == [50] * 5 + [22]
    pd.testing.assert_frame_equal(pd.concat([c.data for c in chunks], axis=1), real.data)
    pd.testing.assert_frame_equal(pd.concat([c.col_meta for c in chunks]), real.col_meta)
    rid = list(real.data.index[:10])
    cid = list(real.data.columns[::-3])
    parts = list(iter_gctx_columns(REAL, cid=cid, rid=rid, chunk_size=7))
    pd.testing.assert_frame_equal(pd.concat([c.data for c in parts], axis=1), real.data.loc[rid, cid])


@needs_real
def test_real_file_round_trips_through_gctx_and_gct(real, tmp_path):
    out = write_gctx(tmp_path / "copy.gctx", real)
    assert_gct_equal(read_gctx(out), real)
    with h5py.File(out, "r") as h5:
        assert h5["0/DATA/0/matrix"].shape == (272, 978)
        assert h5["0/DATA/0/matrix"].dtype == np.float32
    # GCT text: data exact as float32 (shortest float32 repr written)
    text = write_gct(tmp_path / "copy.gct.gz", real)
    back = read_gct(text, dtype=np.float32)
    pd.testing.assert_frame_equal(back.data, real.data)
    for field in ("pert_idose", "pert_iname", "cell_id"):
        pd.testing.assert_series_equal(back.col_meta[field], real.col_meta[field])
    # GCT text cannot keep types: pr_gene_id (strings of digits) reads as numbers
    assert list(back.row_meta["pr_gene_id"]) == [int(x) for x in real.row_meta["pr_gene_id"]]


# ------------------------------------------------------------------ round trips

def test_gctx_round_trip_and_on_disk_layout(tmp_path):
    gct = small_gct()
    path = write_gctx(tmp_path / "small.gctx", gct)
    back = read_gctx(path, convert_neg_666=True)  # the missing dose is stored as CMap's "-666"
    assert_gct_equal(back, gct)
    assert read_gctx(path).col_meta.loc["s4", "pert_idose"] == "-666"
    assert back.col_meta.loc["s1", "pert_idose"] == "10 µM"
    with h5py.File(path, "r") as h5:
        assert h5.attrs["version"] == b"GCTX1.0"
        stored = h5["0/DATA/0/matrix"]
        assert stored.shape == (4, 3)  # (n_cols, n_rows)
        np.testing.assert_array_equal(stored[()], gct.data.to_numpy().T)
        assert [x.decode() for x in h5["0/META/COL/id"][()]] == ["s1", "s2", "s3", "s4"]
        assert h5["0/META/COL/pert_idose"][0] == "10 µM".encode("utf-8")
        assert h5["0/META/COL/pert_idose"][3] == b"-666"  # missing string -> CMap null
        assert h5["0/META/COL/n"].dtype == np.int64
        assert list(h5["0/META/COL"]) == ["id", "pert_idose", "pert_iname", "n", "score", "gold"]


def test_gctx_nan_written_and_rejected_on_validated_read(tmp_path):
    gct = small_gct()
    gct.data.loc["g2", "s3"] = np.nan
    gct.data.loc["g3", "s1"] = np.inf
    path = write_gctx(tmp_path / "nan.gctx", gct)
    with pytest.raises(InputError, match=r"nan.gctx: 2 non-finite value\(s\).*row id 'g2', column id 's3'"):
        read_gctx(path)
    pd.testing.assert_frame_equal(read_gctx(path, validate=False).data, gct.data)
    # a selection without the bad values validates
    assert read_gctx(path, rid=["g1"]).data.shape == (1, 4)


def test_gct13_round_trip_plain_and_gzip(tmp_path):
    gct = small_gct()
    gct.data = gct.data.astype(np.float64) / 3
    for name in ("small.gct", "small.gct.gz"):
        path = write_gct(tmp_path / name, gct)
        assert (path.read_bytes()[:2] == b"\x1f\x8b") == name.endswith(".gz")
        back = read_gct(path)
        pd.testing.assert_frame_equal(back.data, gct.data)  # repr round-trips float64 exactly
        pd.testing.assert_frame_equal(back.row_meta, gct.row_meta, check_dtype=False)
        expected_col = gct.col_meta.assign(gold=gct.col_meta["gold"].astype(str))  # text keeps no bools
        pd.testing.assert_frame_equal(back.col_meta, expected_col, check_dtype=False)


def test_gct12_round_trip(tmp_path):
    gct = small_gct()
    gct.row_meta = pd.DataFrame({"Description": ["PSME1", "ATF1", "RHEB"]}, index=gct.data.index)
    gct.col_meta = pd.DataFrame(index=gct.data.columns)
    path = write_gct(tmp_path / "v12.gct", gct, version="1.2")
    assert path.read_text().splitlines()[:3] == ["#1.2", "3\t4", "Name\tDescription\ts1\ts2\ts3\ts4"]
    back = read_gct(path, dtype=np.float32)
    assert_gct_equal(back, gct, check_dtype=False)
    with pytest.raises(InputError, match="GCT 1.2 holds only a row 'Description'"):
        write_gct(tmp_path / "bad.gct", small_gct(), version="1.2")


def test_read_hand_written_gct_files(tmp_path):
    # Independent of write_gct: files laid out as in cmapPy's parse_gct docs
    # (1.2 with trailing tabs on lines 1-2, as in cmapPy's test file).
    v12 = tmp_path / "a.gct"
    v12.write_text("#1.2\t\t\n2\t3\t\t\nName\tDescription\tA\tB\tC\n"
                   "200814_at\tPSME1\t11.38\t11.33\tNaN\n222103_at\tATF1\t7.9\tna\t8.7\n")
    g = read_gct(v12)
    assert g.data.shape == (2, 3) and list(g.data.columns) == ["A", "B", "C"]
    assert g.data.loc["200814_at", "B"] == 11.33 and np.isnan(g.data.loc["222103_at", "B"])
    assert list(g.row_meta["Description"]) == ["PSME1", "ATF1"] and g.col_meta.shape == (3, 0)
    v13 = tmp_path / "b.gct"
    v13.write_bytes("#1.3\n2\t2\t1\t2\nid\tsymbol\tS1\tS2\ndose\tna\t10 µM\t-666\n"
                    "time\tna\t6\t24\nG1\tPSME1\t1.5\t-2\nG2\tATF1\t0\t3e-1\n".encode("latin-1"))
    g = read_gct(v13, convert_neg_666=True)  # Latin-1 bytes accepted
    np.testing.assert_array_equal(g.data.to_numpy(), [[1.5, -2.0], [0.0, 0.3]])
    assert g.col_meta.loc["S1", "dose"] == "10 µM" and pd.isna(g.col_meta.loc["S2", "dose"])
    assert read_gct(v13).col_meta.loc["S2", "dose"] == "-666"  # kept as stored by default
    assert list(g.col_meta["time"]) == [6, 24] and g.row_meta.loc["G2", "symbol"] == "ATF1"


# ------------------------------------------------------------------ bad input

def _raw_gctx(path, matrix, rids, cids, col_fields=None):
    with h5py.File(path, "w") as h5:
        h5.attrs["version"] = np.bytes_(b"GCTX1.0")
        h5["0/DATA/0/matrix"] = matrix
        h5["0/META/ROW/id"] = np.array(rids, dtype="S")
        h5["0/META/COL/id"] = np.array(cids, dtype="S")
        for k, v in (col_fields or {}).items():
            h5[f"0/META/COL/{k}"] = v
    return path


def test_bad_gctx_files(tmp_path):
    ok = np.zeros((2, 3), dtype=np.float32)  # 2 columns x 3 rows on disk
    dup = _raw_gctx(tmp_path / "dup.gctx", ok, ["r1", "r2", "r1"], ["c1", "c2"])
    with pytest.raises(InputError, match=r"dup.gctx: 0/META/ROW/id: 1 duplicated row id\(s\): 'r1'"):
        read_gctx(dup)
    # the matrix stored genes-first, (n_rows, n_cols), is not the GCTX layout
    flipped = _raw_gctx(tmp_path / "flip.gctx", ok.T, ["r1", "r2", "r3"], ["c1", "c2"])
    with pytest.raises(InputError, match=r"flip.gctx: 0/DATA/0/matrix has shape \(3, 2\), "
                                         r"expected \(n_cols, n_rows\) = \(2, 3\)"):
        read_gctx(flipped)
    short = _raw_gctx(tmp_path / "short.gctx", ok, ["r1", "r2", "r3"], ["c1", "c2"], {"dose": np.array([b"x"])})
    with pytest.raises(InputError, match=r"0/META/COL/dose has shape \(1,\), expected \(2,\)"):
        read_gctx(short)
    good = _raw_gctx(tmp_path / "good.gctx", ok, ["r1", "r2", "r3"], ["c1", "c2"])
    with pytest.raises(InputError, match=r"good.gctx: 6 requested row id\(s\) not in the file: "
                                         r"'x0', 'x1', 'x2', 'x3', 'x4', \.\.\."):
        read_gctx(good, rid=["r1"] + [f"x{i}" for i in range(6)])
    with pytest.raises(InputError, match=r"requested more than once"):
        read_gctx(good, cid=["c1", "c1"])
    not_h5 = tmp_path / "text.gctx"
    not_h5.write_text("hello")
    with pytest.raises(InputError, match=r"text.gctx: not a GCTX \(HDF5\) or GCT \(text\) matrix: the content is "
                                         r"text starting with 'hello', not the GCT version line '#1.2' or '#1.3'"):
        read_gctx(not_h5)
    with pytest.raises(InputError, match="expected a GCTX .* found nothing"):
        read_gctx(tmp_path / "missing.gctx")


def test_write_rejects_mismatched_or_duplicated_ids(tmp_path):
    gct = small_gct()
    gct.col_meta = gct.col_meta.iloc[::-1]
    with pytest.raises(InputError, match="data's col ids differ from col_meta's index"):
        write_gctx(tmp_path / "x.gctx", gct)
    gct = small_gct()
    gct.data.index = ["g1", "g1", "g3"]
    gct.row_meta.index = gct.data.index
    with pytest.raises(InputError, match=r"1 duplicated row id\(s\): 'g1'"):
        write_gct(tmp_path / "x.gct", gct)
    assert list(tmp_path.iterdir()) == []


def test_write_is_atomic(tmp_path):
    dest = write_gctx(tmp_path / "keep.gctx", small_gct())
    before = hashlib.sha256(dest.read_bytes()).hexdigest()
    bad = small_gct()
    bad.col_meta["blob"] = [{"a": 1}, None, None, None]  # not storable; fails after the matrix is written
    for target in (dest, tmp_path / "new.gctx"):
        with pytest.raises(InputError, match=r"col metadata field 'blob', id 's1': cannot store a dict"):
            write_gctx(target, bad)
    assert [p.name for p in tmp_path.iterdir()] == ["keep.gctx"]
    assert hashlib.sha256(dest.read_bytes()).hexdigest() == before
    bad_text = small_gct()
    bad_text.row_meta["note"] = ["fine", "tab\there", "ok"]
    with pytest.raises(InputError, match=r"row field 'note', id 'g2'.*tab or newline"):
        write_gct(tmp_path / "new.gct", bad_text)
    assert [p.name for p in tmp_path.iterdir()] == ["keep.gctx"]


@pytest.mark.parametrize("text, match", [
    ("#1.4\n1\t1\t0\t0\nid\tA\nr\t1\n", r"line 1: expected '#1.2' or '#1.3', got '#1.4'"),
    ("#1.3\n1\t1\t0\nid\tA\nr\t1\n", r"line 2: expected 4 non-negative integers"),
    ("#1.2\n1\tx\nName\tDescription\tA\nr\td\t1\n", r"line 2: expected 2 non-negative integers"),
    ("#1.3\n2\t1\t0\t0\nid\tA\nr\t1\n", r"the file ends at line 4, expected 5 lines \(line 2 says 2 data row"),
    ("#1.3\n1\t1\t0\t0\nid\tA\nr\t1\ns\t2\n", r"line 5: unexpected line after the last data row"),
    ("#1.3\n2\t2\t0\t0\nid\tA\tB\nr\t1\t2\ns\t1\n", r"line 5: expected 3 tab-separated fields .* got 2"),
    ("#1.3\n2\t2\t0\t0\nid\tA\tB\nr\t1\t2\ns\t1\tabc\n", r"line 5, column id 'B': expected a number, got 'abc'"),
    ("#1.3\n2\t1\t0\t0\nid\tA\nr\t1\nr\t2\n", r"duplicated row id 'r' \(line 4, line 5\)"),
    ("#1.3\n1\t1\t2\t0\nid\tx\tx\tA\nr\ta\tb\t1\n", r"line 3: duplicated row-metadata field name\(s\) 'x'"),
    ("", r"line 1: expected '#1.2' or '#1.3'"),
])
def test_malformed_gct(tmp_path, text, match):
    path = tmp_path / "bad.gct"
    path.write_text(text)
    with pytest.raises(InputError, match=match):
        read_gct(path)


def test_truncated_gzip_gct(tmp_path):
    good = write_gct(tmp_path / "g.gct.gz", small_gct())
    cut = tmp_path / "cut.gct.gz"
    cut.write_bytes(good.read_bytes()[:-20])
    with pytest.raises(InputError, match="cut.gct.gz: cannot gunzip"):
        read_gct(cut)
    # and a truncated plain file: the last data row is missing
    plain = tmp_path / "cut.gct"
    plain.write_text("\n".join(gzip.decompress(good.read_bytes()).decode().splitlines()[:-1]) + "\n")
    with pytest.raises(InputError, match=r"cut.gct: the file ends at line 10, expected 11 lines"):
        read_gct(plain)


def test_non_string_ids_are_stored_as_text(tmp_path):
    data = pd.DataFrame([[1.0, 2.0]], index=pd.Index([7], name="rid"), columns=pd.Index([0, 1], name="cid"))
    gct = GCT(data=data, row_meta=pd.DataFrame(index=data.index), col_meta=pd.DataFrame(index=data.columns))
    back = read_gctx(write_gctx(tmp_path / "ints.gctx", gct))
    assert list(back.data.index) == ["7"] and list(back.data.columns) == ["0", "1"]
    np.testing.assert_array_equal(back.data.to_numpy(), [[1.0, 2.0]])
    clash = GCT(data=pd.DataFrame([[1.0, 2.0]], index=["r"], columns=[1, "1"]), row_meta=pd.DataFrame(index=["r"]),
                col_meta=pd.DataFrame(index=pd.Index([1, "1"], dtype=object)))
    with pytest.raises(InputError, match=r"1 duplicated col id\(s\): '1'"):
        write_gctx(tmp_path / "clash.gctx", clash)


# ------------------------------------------------------------------ issue #18: GCT text wherever a GCTX is

def test_gct_text_reads_through_the_gctx_functions_whatever_its_name(tmp_path):
    gct = small_gct()
    gct.data = gct.data.astype(np.float64)
    for version in ("1.3", "1.2"):
        src = gct if version == "1.3" else GCT(gct.data, pd.DataFrame(index=gct.data.index),
                                               pd.DataFrame(index=gct.data.columns))
        for name in ("m.gct", "m.gctx", "m.gct.gz", "m"):            # the content decides, not the name
            path = write_gct(tmp_path / f"{version}_{name}", src, version=version)
            text = read_gct(path)
            assert matrix_format(path) == "gct"
            assert_gct_equal(read_gctx(path), text)
            pd.testing.assert_frame_equal(read_gctx_meta(path, "col"), text.col_meta)
            pd.testing.assert_frame_equal(read_gctx_meta(path, "row"), text.row_meta)
            part = read_gctx(path, rid=["g3", "g1"], cid=["s4", "s2"])
            pd.testing.assert_frame_equal(part.data, text.data.loc[["g3", "g1"], ["s4", "s2"]])
            chunks = list(iter_gctx_columns(path, rid=["g2"], chunk_size=3))
            assert [c.data.shape for c in chunks] == [(1, 3), (1, 1)]
            pd.testing.assert_frame_equal(pd.concat([c.data for c in chunks], axis=1), text.data.loc[["g2"]])
    # GCT 1.3 keeps its column metadata (the µ of pert_idose, numbers as numbers)
    back = read_gctx(tmp_path / "1.3_m")
    assert back.col_meta.loc["s1", "pert_idose"] == "10 µM" and back.col_meta["n"].tolist() == [1, 2, 3, 4]
    # and a GCTX named .gct is read as GCTX
    h5 = write_gctx(tmp_path / "really_hdf5.gct", small_gct())
    assert matrix_format(h5) == "gctx"
    assert_gct_equal(read_gctx(h5), read_gctx(write_gctx(tmp_path / "x.gctx", small_gct())))


def test_gct_with_a_byte_order_mark_and_hdf5_with_a_user_block(tmp_path):
    path = write_gct(tmp_path / "plain.gct", small_gct())
    bom = tmp_path / "bom.gct"
    bom.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())              # as Excel saves UTF-8 text
    assert matrix_format(bom) == "gct"
    assert_gct_equal(read_gctx(bom), read_gct(path))
    # an HDF5 file with a 512-byte user block: the signature sits at byte 512
    ub = tmp_path / "userblock.gctx"
    with h5py.File(ub, "w", userblock_size=512) as h5:
        h5.attrs["version"] = np.bytes_(b"GCTX1.0")
        h5.create_dataset("0/DATA/0/matrix", data=np.ones((2, 3), dtype=np.float32))
        h5.create_dataset("0/META/ROW/id", data=np.array([b"r1", b"r2", b"r3"]))
        h5.create_dataset("0/META/COL/id", data=np.array([b"c1", b"c2"]))
    assert ub.read_bytes()[:8] != b"\x89HDF\r\n\x1a\n" and matrix_format(ub) == "gctx"
    assert read_gctx(ub).data.shape == (3, 2)


def _html(p):
    p.write_text("<!DOCTYPE html>\n<html><head><title>Sign in</title></head></html>\n")


def _xml(p):
    p.write_text('<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code></Error>\n')


def _gz_gctx(p):
    p.write_bytes(gzip.compress(write_gctx(p.with_name("inner.gctx"), small_gct()).read_bytes()))


def _gz_csv(p):
    p.write_bytes(gzip.compress(b"gene,s1,s2\ng1,1,2\n"))


@pytest.mark.parametrize("make, match", [
    (lambda p: p.write_bytes(b""), r"the content is an empty file \(0 bytes\): the download or copy did not finish"),
    (_gz_gctx, r"a gzip-compressed GCTX \(HDF5\): HDF5 cannot be read compressed; gunzip it first"),
    (_gz_csv, r"the content is gzip-compressed data holding comma-separated text \(CSV\) with 3 columns: 'gene', "
              r"'s1', 's2': convert it to GCT or GCTX"),
    (_html, r"the content is an HTML page \(an error or sign-in page saved in place of the data\?\)"),
    (_xml, r"the content is an XML document .*AccessDenied or NoSuchKey"),
    (lambda p: p.write_text("gene\ts1\ts2\ng1\t1\t2\n"),
     r"the content is tab-separated text with 3 columns: 'gene', 's1', 's2', not the GCT version line"),
    (lambda p: p.write_text("gene,s1\ng1,1\n"), r"comma-separated text \(CSV\) .*convert it to GCT or GCTX"),
    (lambda p: p.write_bytes(b"PK\x03\x04" + bytes(60)), r"a ZIP archive: unzip it"),
    (lambda p: p.write_text("version https://git-lfs.github.com/spec/v1\noid sha256:ab\nsize 12\n"),
     r"a Git LFS pointer, not the file itself"),
    (lambda p: p.write_bytes(bytes(range(256)) * 4), r"binary data starting with bytes 00 01 02 03 04 05 06 07, "
                                                      r"without the HDF5 signature"),
    (lambda p: p.write_text("#1.4\n1\t1\t0\t0\n"), r"a GCT header of an unknown version '#1.4'"),
])
def test_a_file_that_is_neither_says_what_it_looks_like(tmp_path, make, match):
    path = tmp_path / "level3.gctx"
    make(path)
    for reader in (read_gctx, read_gctx_meta, lambda p: list(iter_gctx_columns(p)), matrix_format):
        with pytest.raises(InputError, match=rf"level3.gctx: .*{match}"):
            reader(path)


def test_truncated_hdf5_and_read_gct_on_a_gctx(tmp_path):
    good = write_gctx(tmp_path / "good.gctx", small_gct())
    cut = tmp_path / "cut.gctx"
    cut.write_bytes(good.read_bytes()[:600])
    with pytest.raises(InputError, match=r"cut.gctx: has the HDF5 signature but cannot be opened as HDF5 .* "
                                         r"truncated or corrupt"):
        read_gctx(cut)
    with pytest.raises(InputError, match=r"good.gctx: line 1: expected '#1.2' or '#1.3', .* \(this is a GCTX "
                                         r"\(HDF5\) file: read it with read_gctx or open_matrix\)"):
        read_gct(good)
