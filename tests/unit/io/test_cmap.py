"""CMAP preprocessing: a hand-made GCTX with known averages and exclusions,
bad input, and the real level-5 GCTX of ../shared/data."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from biokernels.io.cmap import parse_dose_um, preprocess_cmap, read_l1000_table
from biokernels.io.gctx import GCT, read_gctx_meta, write_gctx
from biokernels.errors import InputError
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
    # A in X: mean of log2 (8, 4, 16, 32) and (4, 8, 16, 32) on genes 102-104 (logs of
    # powers of 2 and their means are exact in float64; numpy's default rtol 1e-7 covers
    # the float32 storage of the inputs)
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

    from biokernels.features.fingerprints import morgan_fingerprints

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


# --------------------------------------------------------------------------- issue #16, section 4
# Doses and times pooled as replicates; the equal-to-1 filter only after our
# log2(x+1); a warning for z-score-like control embeddings.

G4 = GENES[:4]


def _inst(i, pert, cell, dose, time, ptype="trt_cp", dose_unit="µM"):
    """A GEO level-3 inst_info row: numeric pert_dose / pert_time with units."""
    return {"id": f"s{i}", "pert_id": pert, "cell_id": cell, "pert_type": ptype, "pert_dose": dose,
            "pert_dose_unit": dose_unit, "pert_time": time, "pert_time_unit": "h"}


@pytest.fixture
def doses(tmp_path):
    """Planted design (log2(x+1) of the values below are whole numbers):
    A in X: 10 µM 24 h (twice), 1 µM 24 h, 10 µM at time -666  -> pools 2 doses, 1 unknown time
    A in Y: 10 µM 6 h, 10 µM 24 h                              -> pools 2 times
    B in X: 10 µM 24 h and 9.99998 µM 24 h (one dose at 3 significant digits)
    DMSO in X and Y (dose 0.1 %, time -666: controls are not dose/time-filtered)."""
    v = {"s0": [3, 7, 15, 31, 5], "s1": [7, 3, 15, 31, 5], "s2": [15, 15, 15, 15, 5], "s3": [31, 31, 31, 31, 5],
         "s4": [3, 3, 3, 3, 5], "s5": [7, 7, 7, 7, 5], "s6": [3, 7, 3, 7, 5], "s7": [7, 3, 7, 3, 5],
         "s8": [3, 3, 7, 7, 5], "s9": [7, 7, 3, 3, 5]}
    meta = [_inst(0, "A", "X", 10, 24), _inst(1, "A", "X", 10, 24), _inst(2, "A", "X", 1, 24),
            _inst(3, "A", "X", 10, -666), _inst(4, "A", "Y", 10, 6), _inst(5, "A", "Y", 10, 24),
            _inst(6, "B", "X", 10, 24), _inst(7, "B", "X", 9.99998, 24),
            _inst(8, "DMSO", "X", 0.1, -666, "ctl_vehicle", "%"), _inst(9, "DMSO", "Y", 0.1, 24, "ctl_vehicle", "%")]
    return _write(tmp_path, {k: [float(x) for x in vals] for k, vals in v.items()}, meta)


def _log2(*linear):
    return np.log2(np.array(linear, dtype=float) + 1)


def test_pooled_doses_and_times_are_counted_and_the_range_logged(doses, gene_info, caplog):
    import logging

    log = logging.getLogger("test_cmap.doses")
    with caplog.at_level(logging.INFO, logger="test_cmap.doses"):
        res = preprocess_cmap(doses, ["A", "B"], gene_info=gene_info, log=log)
    counts = res.counts.set_index("reason")["n"]
    # the default pools, as the paper: three pairs
    assert list(res.pairs.index) == ["A:X", "A:Y", "B:X"]
    assert counts["drug x cell line pairs (replicates averaged; doses and times pooled)"] == 3
    assert counts["pooling several doses (averaged as replicates)"] == 1          # A:X (10 and 1 µM)
    assert counts["pooling several times (averaged as replicates)"] == 1          # A:Y (6 and 24 h)
    assert counts["pooling several doses or times (averaged as replicates)"] == 2
    assert counts["with a replicate of unknown time (not counted as pooling several times)"] == 1  # A:X
    assert counts["treatment time unknown (-666, unparseable or no time field; kept, pooled)"] == 1
    assert counts["distinct doses among the kept treatments (µM, 3 significant digits)"] == 2  # 1, 10
    assert counts["distinct times among the kept treatments (h)"] == 2
    assert res.pairs[["n_replicates", "n_doses", "n_times"]].to_numpy().tolist() == [[4, 2, 1], [2, 1, 2], [2, 1, 1]]
    # A:X is the plain mean of its 4 instances, whatever their dose or time
    np.testing.assert_allclose(res.expression.loc["A:X"], _log2([3, 7, 15, 31], [7, 3, 15, 31], [15] * 4,
                                                                [31] * 4).mean(axis=0))
    text = caplog.text
    assert "doses of the kept treatments (field pert_dose, 3 significant digits): 2 distinct, 1 to 10 µM" in text
    assert "times of the kept treatments (field pert_time): 2 distinct, 6 to 24 h" in text


def test_dose_time_key_gives_one_row_per_dose_and_time(doses, gene_info):
    res = preprocess_cmap(doses, ["A", "B"], gene_info=gene_info, replicate_key=["pert", "cell", "dose", "time"])
    counts = res.counts.set_index("reason")["n"]
    # the -666 time of s3 cannot be keyed: dropped and counted
    assert counts["treatment time unknown (-666 or unparseable, e.g. '6 h & 4 h'): replicate_key "
                  "[pert, cell, dose, time] needs it (dropped)"] == 1
    assert list(res.pairs.index) == ["A:X:10uM:24h", "A:X:1uM:24h", "A:Y:10uM:6h", "A:Y:10uM:24h", "B:X:10uM:24h"]
    assert res.pairs["n_replicates"].tolist() == [2, 1, 1, 1, 2]   # 9.99998 µM is B's 10 µM
    assert res.pairs["dose_um"].tolist() == [10, 1, 10, 10, 10] and res.pairs["time_h"].tolist() == [24, 24, 6, 24, 24]
    assert counts["drug x cell line x dose x time rows (replicates averaged)"] == 5
    assert counts["distinct drug x cell line pairs among the rows"] == 3
    assert counts["drug x cell line pairs with several dose/time rows"] == 2
    np.testing.assert_allclose(res.expression.loc["A:X:10uM:24h"], _log2([3, 7, 15, 31], [7, 3, 15, 31]).mean(0))
    np.testing.assert_allclose(res.expression.loc["A:X:1uM:24h"], [4, 4, 4, 4])  # log2(15 + 1)
    # controls are the same whatever the key (the -666 time of a vehicle does not matter)
    pooled = preprocess_cmap(doses, ["A", "B"], gene_info=gene_info)
    pd.testing.assert_frame_equal(res.controls, pooled.controls)
    with pytest.raises(ValueError, match="drug_screen.replicate_key"):
        preprocess_cmap(doses, ["A", "B"], gene_info=gene_info, replicate_key=["pert", "dose"])


def test_layout_without_dose_or_time_fields(doses, gene_info):
    meta = read_gctx_meta(doses, axis="col").drop(columns=["pert_dose", "pert_dose_unit", "pert_time",
                                                           "pert_time_unit"])
    with pytest.warns(UserWarning, match="no dose field"):
        res = preprocess_cmap(doses, ["A", "B"], sample_meta=meta, sample_meta_source="sig_info.txt",
                              gene_info=gene_info)
    counts = res.counts.set_index("reason")["n"]
    # nothing is dropped for lack of a dose, and the mix is unknown, not 0
    assert counts["treatment dose unknown: no pert_dose or pert_idose field, dose >= 0 filter not applied "
                  "(kept)"] == 8
    assert counts["dose mix unknown: no dose field in the sample metadata"] == 3
    assert counts["time mix unknown: no time field in the sample metadata"] == 3
    assert "pooling several doses (averaged as replicates)" not in counts
    assert (res.pairs[["n_doses", "n_times"]] == 0).all().all() and res.pairs["n_replicates"].sum() == 8
    with pytest.raises(InputError, match=r"sig_info.txt: drug_screen.replicate_key \[pert, cell, dose, time\] "
                                         r"needs the dose .* no 'pert_dose'"):
        preprocess_cmap(doses, ["A", "B"], sample_meta=meta, sample_meta_source="sig_info.txt", gene_info=gene_info,
                        replicate_key=("pert", "cell", "dose", "time"))
    meta_t = read_gctx_meta(doses, axis="col").drop(columns=["pert_time", "pert_time_unit"])
    with pytest.raises(InputError, match="needs the time .* no 'pert_time'"):
        preprocess_cmap(doses, ["A", "B"], sample_meta=meta_t, gene_info=gene_info,
                        replicate_key=("pert", "cell", "dose", "time"))


def test_time_parsing():
    from biokernels.io.cmap import parse_time_h, round_dose

    np.testing.assert_allclose(parse_time_h(["24 h", "6 h & 4 h", "-666", "30 min", "2 d", None, "3 weeks"]),
                               [24, np.nan, np.nan, 0.5, 48, np.nan, np.nan])
    np.testing.assert_allclose(parse_time_h([6, 24.0, -666], ["h", "hr", "h"]), [6, 24, np.nan])
    np.testing.assert_allclose(round_dose([9.99998, 3.333333, 0.037037, np.nan]), [10, 3.33, 0.037, np.nan])


def test_real_level5_doses_and_times_pooled_are_counted():
    """cmapR's level-5 GCTX (pert_idose / pert_itime): the mixing counts equal
    an independent count from the raw metadata."""
    if not (REAL.is_file() and PERTINFO.is_file() and CONTROLS.is_file()):
        pytest.skip("real L1000 files not in ../shared/data")
    from biokernels.features.fingerprints import morgan_fingerprints

    raw = read_gctx_meta(REAL, axis="col")
    pert = pd.read_csv(PERTINFO, sep="\t", dtype=str, usecols=["pert_id", "canonical_smiles"]).set_index("pert_id")
    bits, _ = morgan_fingerprints(pert["canonical_smiles"].reindex(raw["pert_id"].unique()))
    controls = pd.read_csv(CONTROLS, index_col=0)
    res = preprocess_cmap(REAL, bits.index, log2_transform=False, controls=controls, missing_controls="drop")
    keep = raw[raw["pert_id"].isin(bits.index) & raw["cell_id"].isin(controls.index)]
    g = keep.groupby(["pert_id", "cell_id"])
    n_dose = g["pert_idose"].nunique()
    known = keep[~keep["pert_itime"].str.contains("&")]   # "6 h & 4 h": a signature of two times
    n_time = known.groupby(["pert_id", "cell_id"])["pert_itime"].nunique().reindex(n_dose.index, fill_value=0)
    counts = res.counts.set_index("reason")["n"]
    assert counts["pooling several doses (averaged as replicates)"] == (n_dose > 1).sum() > 0
    assert counts["pooling several times (averaged as replicates)"] == (n_time > 1).sum() > 0
    assert counts["pooling several doses or times (averaged as replicates)"] == ((n_dose > 1) | (n_time > 1)).sum()
    by_dose = preprocess_cmap(REAL, bits.index, log2_transform=False, controls=controls, missing_controls="drop",
                              replicate_key=["pert", "cell", "dose", "time"])
    assert len(by_dose.pairs) == len(known.groupby(["pert_id", "cell_id", "pert_idose", "pert_itime"]))


def test_equal_to_one_filter_only_after_our_log2(tmp_path, gene_info):
    # log-scale input (log2_transform false): gene 101 holds an exact 1.0 in a
    # treatment, which means nothing here; the paper's rule is about values
    # after its log2(x+1) scaling, so the gene stays and the count says why
    vals = {"s0": [1.0, 2.0, 3.0, 4.0, 5.0], "s1": [3.0, 4.0, 5.0, 6.0, 5.0], "s2": [2.0, 2.0, 2.0, 2.0, 5.0]}
    meta = [_meta(0, "A", "X"), _meta(1, "A", "X"), _meta(2, "DMSO", "X", "ctl_vehicle")]
    path = _write(tmp_path, vals, meta)
    res = preprocess_cmap(path, ["A"], gene_info=gene_info, log2_transform=False)
    counts = res.counts.set_index("reason")["n"]
    assert list(res.genes["gene_id"]) == G4
    np.testing.assert_allclose(res.expression.loc["A:X"], [2, 3, 4, 5])  # plain means, no transform
    skipped = [r for r in counts.index if "equal-to-1 filter skipped" in r]
    assert skipped == ["with a value of exactly 1.0 in some sample (kept: the paper's equal-to-1 filter skipped, "
                       "input not log2(x+1)-transformed here, log2_transform false)"] and counts[skipped[0]] == 1
    assert "equal to 1 after log2(x+1) scaling in some sample (dropped)" not in counts
    # the same numbers as linear intensities transformed here: 1 = log2(1 + 1) is dropped
    res = preprocess_cmap(path, ["A"], gene_info=gene_info, log2_transform=True)
    assert res.counts.set_index("reason")["n"]["equal to 1 after log2(x+1) scaling in some sample (dropped)"] == 1
    assert list(res.genes["gene_id"]) == G4[1:]


def _screen(tmp_path, values: np.ndarray, n_ctl: int, name: str):
    """Two cell lines, each with 2 treatments of drug A and ``n_ctl`` DMSO
    samples; ``values`` (samples x 5 genes) in that order."""
    meta = []
    for c, cell in enumerate(("X", "Y")):
        meta += [_meta(len(meta), "A", cell), _meta(len(meta) + 1, "A", cell)]
        meta += [_meta(len(meta) + j, "DMSO", cell, "ctl_vehicle") for j in range(n_ctl)]
    d = tmp_path / name
    d.mkdir()
    return _write(d, {m["id"]: list(values[i]) for i, m in enumerate(meta)}, meta)


ZREASON = "cell embedding values look like z-scores (1 = warned; rule of biokernels.io.cmap.looks_like_zscores)"


def test_zscore_like_controls_warn_and_log_expression_does_not(tmp_path, gene_info):
    import warnings

    rng = np.random.default_rng(0)
    n = 2 * (2 + 40)
    # planted level-4/5 z-scores: every gene N(0, 1) in every sample
    z = rng.normal(0.0, 1.0, (n, 5))
    with pytest.warns(UserWarning, match="look like z-scores .* carries no cell identity"):
        res = preprocess_cmap(_screen(tmp_path, z, 40, "z"), ["A"], gene_info=gene_info, log2_transform=False)
    assert res.counts.set_index("reason")["n"][ZREASON] == 1
    # planted log2 expression (level 3): gene means 6-12, sd 1, no negatives
    logexpr = np.clip(rng.normal(np.linspace(6, 12, 5), 1.0, (n, 5)), 0, None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = preprocess_cmap(_screen(tmp_path, logexpr, 40, "log"), ["A"], gene_info=gene_info,
                              log2_transform=False)
        assert res.counts.set_index("reason")["n"][ZREASON] == 0
        # and linear intensities transformed here (2^y - 1 of the same)
        res = preprocess_cmap(_screen(tmp_path, np.exp2(logexpr) - 1, 40, "lin"), ["A"], gene_info=gene_info)
        assert res.counts.set_index("reason")["n"][ZREASON] == 0
    # external controls that are z-scores: the same rule on the table
    ext = pd.DataFrame(rng.normal(0, 1, (30, 4)), index=["X", "Y"] + [f"C{i}" for i in range(28)], columns=G4)
    with pytest.warns(UserWarning, match="external controls table .* look like z-scores"):
        preprocess_cmap(_screen(tmp_path, logexpr, 40, "ext"), ["A"], gene_info=gene_info, log2_transform=False,
                        controls=ext)


def test_zscore_rule_on_planted_values():
    from biokernels.io.cmap import looks_like_zscores

    rng = np.random.default_rng(1)
    flag, stats = looks_like_zscores(rng.normal(0, 1, (200, 50)))       # per-gene standardised
    assert flag and stats["rule"].startswith("a:") and "b:" in stats["rule"]
    flag, stats = looks_like_zscores(rng.normal(0, 3, (200, 50)))       # robust z, sd 3: centred with negatives
    assert flag and stats["rule"] == "b: centred at 0 with negatives"
    flag, _ = looks_like_zscores(np.abs(rng.normal(8, 2, (200, 50))))   # log2 expression
    assert not flag
    flag, _ = looks_like_zscores(rng.uniform(0.0, 0.5, (200, 50)))      # low but non-negative log values
    assert not flag
    # a log fold change that is not centred (mean 2, sd 1): some negatives, not z-scores
    flag, _ = looks_like_zscores(rng.normal(2, 1, (200, 50)))
    assert not flag


def test_generator_layout_doses_pooled_match_its_instance_table(tmp_path):
    """The generator's files (synthetic and lincs2020_structure sources): a
    pair's replicates get independent doses at one time, so the pairs that
    pool doses are exactly those with > 1 distinct valid dose in
    inst_info.txt (ground truth written by the generator), and none pools
    times."""
    from biokernels.features.fingerprints import morgan_fingerprints
    from biokernels.io.cmap import read_sample_info
    from biokernels.synth import drug_screen as ds

    ds.generate_default(tmp_path, seed=3, n_drugs=60, n_cells=6, n_targets=2, n_landmark=30, n_other_genes=5,
                        replicates=(2, 3), design=dict(target_drugs=(40, 30), source_drugs=(20, 8)))
    info = pd.read_csv(tmp_path / "inst_info.txt", sep="\t")
    pert = pd.read_csv(tmp_path / "pert_info.txt", sep="\t").set_index("pert_id")
    bits, _ = morgan_fingerprints(pert["canonical_smiles"])
    meta = read_sample_info(tmp_path / "inst_info.txt")
    gi = read_l1000_table(tmp_path / "gene_info.txt", ["pr_gene_id", "pr_gene_symbol", "pr_is_lm"])
    res = preprocess_cmap(tmp_path / "level3.gctx", bits.index, sample_meta=meta, gene_info=gi)
    counts = res.counts.set_index("reason")["n"]
    trt = info[(info["pert_type"] == "trt_cp") & (info["pert_dose"] >= 0) & info["pert_id"].isin(bits.index)]
    g = trt.groupby(["pert_id", "cell_id"])
    assert counts["pooling several doses (averaged as replicates)"] == (g["pert_dose"].nunique() > 1).sum() > 0
    assert counts["pooling several times (averaged as replicates)"] == (g["pert_time"].nunique() > 1).sum() == 0
    assert counts["distinct doses among the kept treatments (µM, 3 significant digits)"] == trt["pert_dose"].nunique()
    by_dose = preprocess_cmap(tmp_path / "level3.gctx", bits.index, sample_meta=meta, gene_info=gi,
                              replicate_key=["pert", "cell", "dose", "time"])
    assert len(by_dose.pairs) == len(trt.groupby(["pert_id", "cell_id", "pert_dose", "pert_time"]))
    assert by_dose.pairs["n_replicates"].sum() == res.pairs["n_replicates"].sum() == len(trt)


# --------------------------------------------------------------------------- issue #18
# GCT text wherever a GCTX is; several matrices; tables read by content.

def test_gct_text_matrix_preprocesses_as_the_gctx(small, gene_info, tmp_path):
    from biokernels.io.gctx import read_gctx, write_gct

    text = write_gct(tmp_path / "level3", read_gctx(small))           # GCT 1.3, no extension
    a = preprocess_cmap(small, ["A", "B"], gene_info=gene_info, log2_transform=True)
    b = preprocess_cmap(text, ["A", "B"], gene_info=gene_info, log2_transform=True)
    pd.testing.assert_frame_equal(a.counts, b.counts)
    # the GCTX holds float32, the text their shortest decimal: the same numbers
    pd.testing.assert_frame_equal(a.expression, b.expression)
    pd.testing.assert_frame_equal(a.controls, b.controls)


def test_several_matrices_are_one_screen(small, gene_info, tmp_path):
    from biokernels.io.gctx import read_gctx

    whole = read_gctx(small)
    first, second = ["s0", "s1", "s2", "s6", "s7"], ["s3", "s4", "s5", "s8", "s9"]
    parts = []
    for k, cols in enumerate((first, second)):
        rows = GENES if k == 0 else GENES[::-1]                        # row order may differ
        parts.append(write_gctx(tmp_path / f"part{k}.gctx", GCT(data=whole.data.loc[rows, cols],
                                                                 row_meta=whole.row_meta.loc[rows],
                                                                 col_meta=whole.col_meta.loc[cols])))
    one = preprocess_cmap(small, ["A", "B"], gene_info=gene_info)
    two = preprocess_cmap(parts, ["A", "B"], gene_info=gene_info, chunk_size=2)
    pd.testing.assert_frame_equal(one.expression, two.expression)
    pd.testing.assert_frame_equal(one.counts, two.counts)
    with pytest.raises(InputError, match=r"column id\(s\) are in several matrices, e.g. \['s0'"):
        preprocess_cmap([small, parts[0]], ["A", "B"], gene_info=gene_info)
    fewer = write_gctx(tmp_path / "fewer.gctx", GCT(data=whole.data.loc[GENES[:4], second],
                                                    row_meta=whole.row_meta.loc[GENES[:4]],
                                                    col_meta=whole.col_meta.loc[second]))
    with pytest.raises(InputError, match=r"the matrices have different rows \(1 row id\(s\) in one only, "
                                         r"e.g. \['999'\]\)"):
        preprocess_cmap([parts[0], fewer], ["A", "B"], gene_info=gene_info)


def test_gzip_tables_are_read_by_content(tmp_path):
    import gzip

    from biokernels.io.cmap import read_sample_info

    p = tmp_path / "inst_info"                                        # a .txt.gz linked without its suffix
    p.write_bytes(gzip.compress(b"inst_id\tpert_id\tcell_id\tpert_type\ni1\tA\tX\ttrt_cp\n"))
    assert read_sample_info(p).loc["i1", "cell_id"] == "X"


# --- a GCT 1.3 / GCTX that carries its own metadata (issue #27) ----------------
# Column metadata as clue.io's GCT 1.3 / GCTX files write it (CMap field names,
# pert_idose text with its unit), row metadata with the GCT name pr_is_lmark;
# the canonical_smiles field stands in for pert_info.
EMB_SMILES = {"A": "CCO", "B": "c1ccccc1"}
EMB_COLS = [("s0", "A", "X", "trt_cp", "10 µM"), ("s1", "A", "X", "trt_cp", "1 µM"),
            ("s2", "B", "X", "trt_cp", "10 µM"), ("s3", "B", "Y", "trt_cp", "-666"),
            ("c0", "DMSO", "X", "ctl_vehicle", "-666"), ("c1", "DMSO", "Y", "ctl_vehicle", "-666")]
FILES_KEY = "drug_screen.sources.mine.files"


def _embedded(tmp_path, fmt, drop=()):
    """A 5-gene x 6-sample matrix with its metadata inside, as GCT 1.3 text or GCTX."""
    from biokernels.io.gctx import write_gct

    ids = [c[0] for c in EMB_COLS]
    data = pd.DataFrame(np.arange(1.0, 31.0).reshape(5, 6), index=GENES, columns=ids)
    col = pd.DataFrame({"pert_id": [c[1] for c in EMB_COLS], "cell_id": [c[2] for c in EMB_COLS],
                        "pert_type": [c[3] for c in EMB_COLS], "pert_idose": [c[4] for c in EMB_COLS],
                        "pert_itime": "24 h", "pert_iname": [c[1].lower() for c in EMB_COLS],
                        "canonical_smiles": [EMB_SMILES.get(c[1], "-666") for c in EMB_COLS]}, index=ids)
    row = pd.DataFrame({"pr_gene_symbol": [f"G{g}" for g in GENES], "pr_is_lmark": [1, 1, 1, 1, 0]}, index=GENES)
    gct = GCT(data=data, row_meta=row.drop(columns=[c for c in drop if c in row]),
              col_meta=col.drop(columns=[c for c in drop if c in col]))
    path = tmp_path / f"plate.{fmt}"
    (write_gct if fmt == "gct" else write_gctx)(path, gct)
    return path, data


@pytest.mark.parametrize("fmt", ["gct", "gctx"])
def test_geo_tables_from_the_matrix_metadata_alone(tmp_path, fmt):
    """Only the matrix: its column and row metadata give the GEO-layout
    sample, perturbagen and gene tables (written and read back as the
    workflow does), and the preprocessing on them keeps the landmarks that
    pr_is_lmark marks and the planted pairs."""
    from biokernels.io.cmap import matrix_table, read_gene_info, read_sample_info

    path, data = _embedded(tmp_path, fmt)
    files = {}
    for table in ("sample_info", "pert_info", "gene_info"):
        files[table] = tmp_path / f"{table}.txt"
        matrix_table(path, table, f"{FILES_KEY}.{table}").to_csv(files[table], sep="\t", index=False)
    pert = read_l1000_table(files["pert_info"], ["pert_id", "pert_type", "canonical_smiles"], index="pert_id")
    assert pert.loc[["A", "B"], "canonical_smiles"].tolist() == ["CCO", "c1ccccc1"]   # one row per pert_id
    assert pert.loc["A", "pert_iname"] == "a" and len(pert) == 3
    genes = read_gene_info(files["gene_info"])
    assert genes["pr_is_lm"].astype(float).tolist() == [1, 1, 1, 1, 0]                # pr_is_lmark read as pr_is_lm
    meta = read_sample_info(files["sample_info"])
    assert list(meta.index) == [c[0] for c in EMB_COLS] and meta.loc["s1", "pert_idose"] == "1 µM"
    res = preprocess_cmap(path, ["A", "B"], sample_meta=meta, gene_info=genes, log2_transform=False,
                          missing_controls="drop")
    assert list(res.genes["gene_id"]) == G4                     # gene 999 is not a landmark
    counts = res.counts.set_index("reason")["n"]
    assert counts["treatment dose < 0, e.g. -666 missing code (dropped)"] == 1       # s3
    assert sorted(res.pairs.index) == ["A:X", "B:X"]
    np.testing.assert_allclose(res.expression.loc["A:X"], data.loc[G4, ["s0", "s1"]].mean(axis=1))
    np.testing.assert_allclose(res.controls.loc["X"], data.loc[G4, "c0"])


@pytest.mark.parametrize("table, drop, field", [("pert_info", ["canonical_smiles"], "canonical_smiles"),
                                                ("sample_info", ["cell_id"], "cell_id"),
                                                ("gene_info", ["pr_is_lmark"], "pr_is_lm")])
def test_a_field_in_neither_place_names_the_config_key(tmp_path, table, drop, field):
    from biokernels.io.cmap import matrix_table

    path, _ = _embedded(tmp_path, "gct", drop=drop)
    with pytest.raises(InputError) as err:
        matrix_table(path, table, f"{FILES_KEY}.{table}")
    msg = str(err.value)
    assert str(path) in msg and f"set {FILES_KEY}.{table}" in msg and repr(field) in msg
    assert "\n" not in msg


def test_a_gene_table_with_the_gct_landmark_name(tmp_path):
    """A gene_info file whose landmark flag is named as in GCT row metadata
    (pr_is_lmark) or in cmapR's files (is_lm) reads as pr_is_lm."""
    from biokernels.io.cmap import read_gene_info

    for name in ("pr_is_lmark", "is_lm"):
        p = tmp_path / f"{name}.txt"
        p.write_text(f"pr_gene_id\tpr_gene_symbol\t{name}\n5720\tPSME1\t1\n466\tATF1\t0\n")
        assert read_gene_info(p)["pr_is_lm"].tolist() == ["1", "0"]
    p = tmp_path / "none.txt"
    p.write_text("pr_gene_id\tpr_gene_symbol\n5720\tPSME1\n")
    with pytest.raises(InputError, match=r"none.txt: missing column\(s\) \['pr_is_lm'\]"):
        read_gene_info(p)


@pytest.mark.skipif(not REAL.is_file(), reason="cmapR's modzs_n272x978.gctx not in ../shared/data")
def test_real_cmapr_gctx_gives_its_sample_and_gene_tables():
    """cmapR's level-5 GCTX carries cell_id, pert_id, pert_idose, pert_itime,
    pert_type and, per row, pr_gene_symbol and is_lm (all 978 landmarks),
    but no SMILES: the sample and gene tables come from it, the perturbagen
    table must be configured (the message says which key and field)."""
    import h5py

    from biokernels.io.cmap import matrix_table

    sample = matrix_table(REAL, "sample_info", f"{FILES_KEY}.sample_info")
    genes = matrix_table(REAL, "gene_info", f"{FILES_KEY}.gene_info")
    with h5py.File(REAL, "r") as f:  # independent read
        cid = [x.decode() for x in f["0/META/COL/id"][:]]
        is_lm = f["0/META/ROW/is_lm"][:]
    assert sample["inst_id"].tolist() == cid and (sample["pert_type"] == "trt_cp").all()
    assert (sample["pert_idose"] == "10 µM").sum() == 218                        # PROVENANCE.md: 218 at 10 µM
    assert len(genes) == 978 and (genes["pr_is_lm"] == 1).sum() == int((is_lm == 1).sum()) == 978
    with pytest.raises(InputError, match=rf"lacks \['canonical_smiles'\].*set {FILES_KEY}.pert_info"):
        matrix_table(REAL, "pert_info", f"{FILES_KEY}.pert_info")
