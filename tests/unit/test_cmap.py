"""CMAP preprocessing: a hand-made GCTX with known averages and exclusions,
bad input, and the real level-5 GCTX of ../shared/data."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from biokernels.io.cmap import parse_dose_um, preprocess_cmap, read_l1000_table
from biokernels.io.gctx import GCT, read_gctx_meta, write_gctx
from biokernels.io.networks import InputError
from conftest import SHARED_DATA

GENES = ["101", "102", "103", "104", "999"]  # 999 is not a landmark


def _write(tmp_path, values: dict[str, list[float]], meta: list[dict]):
    data = pd.DataFrame(values, index=GENES)
    col_meta = pd.DataFrame(meta).set_index("id")
    gct = GCT(data=data, row_meta=pd.DataFrame({"pr_gene_symbol": [f"G{g}" for g in GENES]}, index=GENES),
              col_meta=col_meta)
    path = tmp_path / "x.gctx"
    write_gctx(path, gct)
    return path


@pytest.fixture
def gene_info():
    return pd.DataFrame({"pr_gene_id": GENES, "pr_gene_symbol": [f"G{g}" for g in GENES],
                         "pr_is_lm": ["1", "1", "1", "1", "0"]})


def _meta(i, pert, cell, ptype="trt_cp", dose="10 µM"):
    return {"id": f"s{i}", "pert_id": pert, "cell_id": cell, "pert_type": ptype, "pert_idose": dose}


@pytest.fixture
def small(tmp_path):
    # linear-scale values x; log2(x+1) gives whole numbers for 1, 3, 7, 15, 31
    v = {
        "s0": [3, 7, 15, 31, 5],     # A in X, replicate 1
        "s1": [7, 3, 15, 31, 5],     # A in X, replicate 2
        "s2": [1, 3, 3, 31, 5],      # B in X  (gene 101 equals 1 after scaling -> dropped)
        "s3": [15, 15, 15, 15, 5],   # A in Y
        "s4": [3, 3, 3, 3, 5],       # A in Y at dose -666 -> dropped
        "s5": [3, 3, 3, 3, 5],       # C (no SMILES) in Y -> dropped
        "s6": [3, 3, 7, 7, 5],       # DMSO in X
        "s7": [7, 7, 7, 7, 5],       # DMSO in X
        "s8": [15, 7, 3, 3, 5],      # DMSO in Y
        "s9": [3, 3, 3, 3, 5],       # shRNA -> dropped
    }
    meta = [_meta(0, "A", "X"), _meta(1, "A", "X", dose="500 nM"), _meta(2, "B", "X"), _meta(3, "A", "Y"),
            _meta(4, "A", "Y", dose="-666"), _meta(5, "C", "Y"), _meta(6, "DMSO", "X", "ctl_vehicle", "-666"),
            _meta(7, "DMSO", "X", "ctl_vehicle"), _meta(8, "DMSO", "Y", "ctl_vehicle"),
            _meta(9, "sh1", "X", "trt_sh")]
    return _write(tmp_path, {k: [float(x) for x in vals] for k, vals in v.items()}, meta)


def test_hand_made_gctx(small, gene_info):
    res = preprocess_cmap(small, ["A", "B"], gene_info=gene_info, log2_transform=True)
    counts = res.counts.set_index("reason")["n"]
    assert counts["not landmark (dropped)"] == 1
    assert counts["treatment dose < 0, e.g. -666 missing code (dropped)"] == 1
    assert counts["treatment without a parseable SMILES (dropped)"] == 1
    assert counts["pert_type not trt_cp or ctl_vehicle (dropped)"] == 1
    assert counts["equal to 1 after log2(x+1) scaling in some sample (dropped)"] == 1
    assert list(res.genes["gene_id"]) == ["102", "103", "104"]
    # A in X: mean of log2 (8, 4, 16, 32) and (4, 8, 16, 32) on genes 102-104
    np.testing.assert_allclose(res.expression.loc["A:X"], [2.5, 4, 5])
    np.testing.assert_allclose(res.expression.loc["B:X"], [2, 2, 5])
    np.testing.assert_allclose(res.expression.loc["A:Y"], [4, 4, 4])
    assert res.pairs.loc["A:X", "n_replicates"] == 2 and res.pairs.loc["A:Y", "n_replicates"] == 1
    # controls: the -666 dose of a vehicle does not matter (only treatments are dose-filtered)
    np.testing.assert_allclose(res.controls.loc["X"], [2.5, 3, 3])
    np.testing.assert_allclose(res.controls.loc["Y"], [3, 2, 2])


def test_dose_parsing():
    np.testing.assert_allclose(parse_dose_um(["10 µM", "500 nM", "-666", "1.5", "abc"]),
                               [10, 0.5, -666, 1.5, np.nan])
    np.testing.assert_allclose(parse_dose_um(["10", "100"], ["uM", "nM"]), [10, 0.1])


def test_missing_metadata_and_missing_controls(small, gene_info, tmp_path):
    meta = read_gctx_meta(small, axis="col").drop(index="s3")
    with pytest.raises(InputError, match="have no row in meta.txt"):
        preprocess_cmap(small, ["A", "B"], sample_meta=meta, sample_meta_source="meta.txt", gene_info=gene_info)
    meta = read_gctx_meta(small, axis="col")
    meta.loc["s8", "pert_type"] = "ctl_untrt_other"  # Y loses its only control
    with pytest.raises(InputError, match=r"have no controls in .*'Y'"):
        preprocess_cmap(small, ["A", "B"], sample_meta=meta, gene_info=gene_info)


def test_nan_in_matrix_is_an_error(tmp_path, gene_info):
    vals = {"s0": [1.0, np.nan, 2.0, 3.0, 4.0], "s1": [3.0, 3.0, 3.0, 3.0, 3.0]}
    path = _write(tmp_path, vals, [_meta(0, "A", "X"), _meta(1, "DMSO", "X", "ctl_vehicle")])
    with pytest.raises(InputError, match="non-finite|NaN"):
        preprocess_cmap(path, ["A"], gene_info=gene_info)


def test_no_treatment_left(small, gene_info):
    with pytest.raises(InputError, match="no trt_cp sample left"):
        preprocess_cmap(small, [], gene_info=gene_info)


def test_metadata_table_errors(tmp_path):
    p = tmp_path / "inst_info.txt"
    p.write_text("inst_id\tpert_id\ninst1\tA\ninst1\tB\n")
    with pytest.raises(InputError, match="missing column"):
        read_l1000_table(p, ["inst_id", "cell_id"])
    with pytest.raises(InputError, match="duplicated"):
        read_l1000_table(p, ["inst_id"], index="inst_id")


REAL = SHARED_DATA / "l1000_cmapR_modzs_n272x978" / "modzs_n272x978.gctx"
PERTINFO = SHARED_DATA / "lincs_metadata_dhimmel" / "pertinfo.tsv.gz"
CONTROLS = SHARED_DATA / "l1000_transigen_lincs2020" / "cell_control_expression_modz_x1.csv.gz"


@pytest.mark.skipif(not (REAL.is_file() and PERTINFO.is_file() and CONTROLS.is_file()),
                    reason="real L1000 files not in ../shared/data")
def test_real_level5_gctx_through_preprocessing():
    import h5py

    from biokernels.fingerprints import morgan_fingerprints

    pert = pd.read_csv(PERTINFO, sep="\t", dtype=str, usecols=["pert_id", "canonical_smiles"]).set_index("pert_id")
    with h5py.File(REAL, "r") as f:  # independent read of the metadata
        raw = {k: [x.decode("latin-1") for x in f["0/META/COL"][k][:]] for k in ("pert_id", "cell_id", "pert_idose")}
    raw = pd.DataFrame(raw)
    ids = raw["pert_id"].unique()
    bits, invalid = morgan_fingerprints(pert["canonical_smiles"].reindex(ids))
    # the BRD-U* batches of atorvastatin and vemurafenib have no SMILES in the LINCS table
    assert set(invalid["id"]) == {i for i in ids if i.startswith("BRD-U")}
    controls = pd.read_csv(CONTROLS, index_col=0)
    with pytest.raises(InputError, match="have no controls in the external controls table"):
        preprocess_cmap(REAL, bits.index, log2_transform=False, controls=controls)
    res = preprocess_cmap(REAL, bits.index, log2_transform=False, controls=controls, missing_controls="drop")
    keep = raw[raw["pert_id"].isin(bits.index) & raw["cell_id"].isin(controls.index)]
    assert len(res.pairs) == len(keep.groupby(["pert_id", "cell_id"]))
    assert res.pairs["n_replicates"].sum() == len(keep)
    n_no_ctl = raw.loc[raw["pert_id"].isin(bits.index), "cell_id"].pipe(lambda c: c[~c.isin(controls.index)])
    assert res.counts.set_index("reason")["n"]["without controls (dropped with their pairs)"] == n_no_ctl.nunique()
    counts = res.counts.set_index("reason")["n"]
    assert counts["treatment without a parseable SMILES (dropped)"] == raw["pert_id"].str.startswith("BRD-U").sum()
    assert res.expression.shape[1] == 978  # level-5 z-scores: no gene equals exactly 1
    assert res.controls.shape == (res.pairs["cell_id"].nunique(), 978)
    assert np.isfinite(res.expression.to_numpy()).all()


def test_dose_parsing_of_missing_and_odd_values():
    np.testing.assert_allclose(parse_dose_um(["10 uM", None, "5. uM", "1e400 uM", ".5 nM"]),
                               [10, np.nan, 5, np.nan, 5e-4])
    np.testing.assert_allclose(parse_dose_um([10.0, np.nan]), [10, np.nan])


def test_sample_info_with_duplicated_ids_is_named(tmp_path):
    from biokernels.io.cmap import read_sample_info

    p = tmp_path / "inst_info.txt"
    p.write_text("inst_id\tpert_id\tcell_id\tpert_type\ni1\tA\tX\ttrt_cp\ni1\tA\tX\ttrt_cp\n")
    with pytest.raises(InputError, match=r"inst_info.txt: column 'inst_id' has 1 duplicated"):
        read_sample_info(p)


def test_corrupt_gctx_is_named(small, gene_info, tmp_path):
    data = bytearray(small.read_bytes())
    mid = len(data) // 2
    data[mid:mid + 4000] = b"\xff" * 4000
    bad = tmp_path / "corrupt.gctx"
    bad.write_bytes(bytes(data))
    with pytest.raises(InputError, match="corrupt"):
        preprocess_cmap(bad, ["A", "B"], gene_info=gene_info)
