"""The CMap LINCS 2020 release as drug-screen input (biokernels.io.lincs2020)
and the block reader behind it (biokernels.io.gctx), on a tiny release the
test writes in the public layout: GCTX matrices with only ``0/META/ROW/id``
and ``0/META/COL/id``, uncompressed and chunked by whole signatures;
``siginfo_beta.txt``, ``geneinfo_beta.txt``, ``compoundinfo_beta.txt`` and
``cellinfo_beta.txt`` with their real column names and ``-666`` for missing
values. Every expected number below follows from the planted rows."""

from __future__ import annotations

import logging

import h5py
import numpy as np
import pandas as pd
import pytest

from biokernels.errors import InputError
from biokernels.io.cmap import preprocess_cmap
from biokernels.io.download import Progress
from biokernels.io.gctx import GCT, iter_gctx_columns, read_gctx, write_gct, write_gctx
from biokernels.io.lincs2020 import (SignatureFilter, prepare_lincs2020, read_cellinfo, read_compoundinfo,
                                     read_geneinfo, read_siginfo)
from fakes.lincs2020 import SIG_COLUMNS

# geneinfo_beta.txt: the matrix rows are in another order, landmarks not contiguous
GENES = pd.DataFrame([
    ("5720", "PSME1", "ENSG00000092010", "proteasome activator subunit 1", "protein-coding", "NCBI", "landmark"),
    ("466", "ATF1", "ENSG00000123268", "activating transcription factor 1", "protein-coding", "NCBI", "landmark"),
    ("6009", "RHEB", "ENSG00000106615", "Ras homolog, mTORC1 binding", "protein-coding", "NCBI", "landmark"),
    ("2101", "ESRRA", "ENSG00000173153", "estrogen related receptor alpha", "protein-coding", "NCBI",
     "best inferred"),
    ("7849", "PAX8", "ENSG00000125618", "paired box 8", "protein-coding", "NCBI", "best inferred"),
    ("10000", "AKT3", "ENSG00000117020", "AKT serine/threonine kinase 3", "protein-coding", "NCBI", "inferred"),
], columns=["gene_id", "gene_symbol", "ensembl_id", "gene_title", "gene_type", "src", "feature_space"])
ROWS = ["10000", "5720", "2101", "466", "7849", "6009"]      # GCTX row order
LANDMARK = ["5720", "466", "6009"]

ASPIRIN = ("CC(=O)OC1=CC=CC=C1C(O)=O", "BSYNRYMUTXBXSQ-UHFFFAOYSA-N")
CAFFEINE = ("CN1C=NC2=C1C(=O)N(C(=O)N2C)C", "RYYVLZVUVIJVGH-UHFFFAOYSA-N")
IBUPROFEN = ("CC(C)CC1=CC=C(C=C1)C(C)C(O)=O", "HEFNNWSXXWATRW-UHFFFAOYSA-N")
ETHANOL = ("CCO", "LFQSCWFLJHTTHZ-UHFFFAOYSA-N")
METHANOL = ("CO", "OKKJLVBELUTLKV-UHFFFAOYSA-N")

# compoundinfo_beta.txt: one row per target, so pert_ids repeat
COMPOUNDS = pd.DataFrame([
    ("BRD-K00000001", "aspirin", "PTGS1", "cyclooxygenase inhibitor", *ASPIRIN, "acetylsalicylic acid"),
    ("BRD-K00000001", "aspirin", "PTGS2", "cyclooxygenase inhibitor", *ASPIRIN, "acetylsalicylic acid"),
    ("BRD-K00000002", "caffeine", "ADORA1", "adenosine receptor antagonist", *CAFFEINE, "-666"),
    ("BRD-K00000003", "ibuprofen", "PTGS2", "cyclooxygenase inhibitor", *IBUPROFEN, "-666"),
    ("BRD-K00000004", "BRD-K00000004", "-666", "-666", "-666", "-666", "-666"),            # no structure
    ("BRD-K00000004", "BRD-K00000004", "-666", "-666", "restricted", "restricted", "-666"),
    ("BRD-K00000005", "aspirin", "PTGS1", "cyclooxygenase inhibitor", *ASPIRIN, "-666"),     # aspirin again
    ("BRD-K00000006", "solvent", "-666", "-666", *ETHANOL, "-666"),                          # two structures:
    ("BRD-K00000006", "solvent", "-666", "-666", *METHANOL, "-666"),                         # ambiguous here
    ("BRD-K00000007", "ibuprofen", "PTGS1", "cyclooxygenase inhibitor", *IBUPROFEN, "-666"),  # no signature
], columns=["pert_id", "cmap_name", "target", "moa", "canonical_smiles", "inchi_key", "compound_aliases"])
# a second compound table, lower priority
EXTRA = pd.DataFrame([
    ("BRD-K00000006", "ethanol", *ETHANOL),                 # resolves K6
    ("BRD-K00000002", "caffeine", "CN1C=NC2=C1C(=O)NC(=O)N2C", "ZFXYFBGIUFBOJW-UHFFFAOYSA-N"),  # K2 already given
    ("BRD-K00000008", "phenol", "OC1=CC=CC=C1", "-666"),      # SMILES without InChIKey
], columns=["pert_id", "cmap_name", "canonical_smiles", "inchi_key"])


def _sig(sig, pert, cell, dose, time, qc="1", hiq="1", ptype="trt_cp"):
    name = {"BRD-K00000001": "aspirin", "BRD-K00000002": "caffeine", "DMSO": "DMSO"}.get(pert, pert)
    idose = "-666" if dose == "-666" else f"{dose} uM"
    return (sig, pert, name, ptype, cell, dose, "uM" if dose != "-666" else "-666", idose, time, "h", f"{time} h",
            qc, hiq, "3", "0.25")


# level 5 signatures of the trt_cp matrix (and of the control matrix)
TRT = [
    _sig("SIG01", "BRD-K00000001", "A375", "10", "24"),                 # aspirin in A375, 10 uM
    _sig("SIG02", "BRD-K00000001", "A375", "1.11", "24"),               # ... and 1.11 uM: pooled
    _sig("SIG03", "BRD-K00000002", "A375", "10", "6", hiq="0"),         # caffeine in A375, 6 h, not hiq
    _sig("SIG04", "BRD-K00000001", "A549", "10", "24", qc="0"),         # qc_pass 0 -> out
    _sig("SIG05", "BRD-K00000002", "A549", "-666", "24"),               # dose -666 -> out (preprocessing)
    _sig("SIG06", "BRD-K00000003", "A549", "10", "24", qc="-666"),      # qc_pass missing -> out
    _sig("SIG07", "BRD-K00000004", "A549", "10", "24"),                 # no structure -> out (preprocessing)
    _sig("SIG08", "BRD-K00000005", "A375", "10", "24"),                 # aspirin under another pert_id
    _sig("SIG09", "BRD-K00000006", "A549", "10", "24"),                 # ethanol (from the 2nd table)
    _sig("SIG10", "BRD-K00000002", "A375", "10", "24"),                 # caffeine in A375, 24 h
]
CTL = [
    _sig("CTL01", "DMSO", "A375", "-666", "24", ptype="ctl_vehicle"),
    _sig("CTL02", "DMSO", "A375", "-666", "24", ptype="ctl_vehicle"),
    _sig("CTL03", "DMSO", "A549", "-666", "24", ptype="ctl_vehicle"),
    _sig("CTL04", "UnTrt", "A549", "-666", "24", ptype="ctl_untrt"),  # pert_type not kept -> out
]
ELSEWHERE = [_sig("SH01", "TRCN0001", "A375", "-666", "96", ptype="trt_sh")]  # in siginfo only


def _values(n_cols: int, seed: int) -> np.ndarray:
    """Genes x signatures; multiples of 1/8 (exact in float32 and in means
    of up to 8 of them)."""
    return np.random.default_rng(seed).integers(-40, 40, size=(len(ROWS), n_cols)).astype(np.float32) / 8


def _write_matrix(path, ids, values, chunk_cols=2):
    """A GCTX as CMap's release files: ids only, uncompressed, chunks of
    whole signatures."""
    gct = GCT(data=pd.DataFrame(values, index=ROWS, columns=ids), row_meta=pd.DataFrame(index=ROWS),
              col_meta=pd.DataFrame(index=ids))
    return write_gctx(path, gct, compression=None, chunk=(chunk_cols, len(ROWS)))


@pytest.fixture
def release(tmp_path):
    trt_ids = [r[0] for r in TRT]
    ctl_ids = [r[0] for r in CTL]
    trt_values, ctl_values = _values(len(trt_ids), 1), _values(len(ctl_ids), 2)
    _write_matrix(tmp_path / "level5_beta_trt_cp_n10x6.gctx", trt_ids, trt_values)
    _write_matrix(tmp_path / "level5_beta_ctl_n4x6.gctx", ctl_ids, ctl_values)
    pd.DataFrame(TRT + CTL + ELSEWHERE, columns=SIG_COLUMNS).to_csv(tmp_path / "siginfo_beta.txt", sep="\t",
                                                                  index=False)
    GENES.to_csv(tmp_path / "geneinfo_beta.txt", sep="\t", index=False)
    COMPOUNDS.to_csv(tmp_path / "compoundinfo_beta.txt", sep="\t", index=False)
    EXTRA.to_csv(tmp_path / "extra_compounds.txt", sep="\t", index=False)
    pd.DataFrame({"cell_iname": ["A375", "MCF7"], "cellosaurus_id": ["CVCL_0132", "CVCL_0031"],
                  "cell_type": ["tumor", "tumor"], "primary_disease": ["skin cancer", "breast cancer"]}) \
        .to_csv(tmp_path / "cellinfo_beta.txt", sep="\t", index=False)
    values = pd.DataFrame(np.hstack([trt_values, ctl_values]), index=ROWS, columns=trt_ids + ctl_ids)
    return tmp_path, values


def _prepare(folder, **kw):
    from biokernels.io.gctx import read_gctx_meta

    cols = [*read_gctx_meta(folder / "level5_beta_trt_cp_n10x6.gctx").index,
            *read_gctx_meta(folder / "level5_beta_ctl_n4x6.gctx").index]
    tables = [("compoundinfo_beta", read_compoundinfo(folder / "compoundinfo_beta.txt")),
              ("extra", read_compoundinfo(folder / "extra_compounds.txt"))]
    return prepare_lincs2020(cols, read_siginfo(folder / "siginfo_beta.txt", 5),
                             read_geneinfo(folder / "geneinfo_beta.txt"), tables,
                             read_cellinfo(folder / "cellinfo_beta.txt"), level=5, **kw)


def _counts(res) -> dict:
    return {(r.step, r.reason): r.n for r in res.counts.itertuples()}


def test_signature_filters_and_structures_are_counted(release):
    folder, _ = release
    res = _prepare(folder)
    c = _counts(res)
    # 14 matrix columns; the trt_sh signature is only in siginfo
    assert c["signatures", "in the matrices"] == 14
    assert c["signatures", "in the signature table but not in the matrices (ignored)"] == 1
    assert c["signatures", "pert_type not in ['trt_cp', 'ctl_vehicle'] (excluded)"] == 1      # CTL04 ctl_untrt
    assert c["signatures", "qc_pass missing (-666 or empty) (excluded)"] == 1                 # SIG06
    assert c["signatures", "qc_pass 0 (excluded)"] == 1                                       # SIG04
    assert c["signatures", "excluded in all"] == 3 == res.n_excluded
    assert c["signatures", "kept"] == 11
    assert sorted(res.sample_info.index) == sorted(
        ["SIG01", "SIG02", "SIG03", "SIG05", "SIG07", "SIG08", "SIG09", "SIG10", "CTL01", "CTL02", "CTL03"])
    assert res.sample_info.index.name == "sig_id"
    assert res.sample_info.loc["SIG02", ["pert_id", "cell_id", "pert_dose", "pert_dose_unit", "pert_time"]].tolist() \
        == ["BRD-K00000001", "A375", "1.11", "uM", "24"]
    # genes: the feature spaces as planted
    assert c["genes", "feature_space landmark"] == 3
    assert c["genes", "feature_space best inferred"] == 2
    assert c["genes", "feature_space inferred"] == 1
    gi = res.gene_info.set_index("pr_gene_id")
    assert list(gi.index[gi["pr_is_lm"] == 1]) == LANDMARK
    assert set(gi.index[gi["pr_is_bing"] == 1]) == set(LANDMARK) | {"2101", "7849"}
    # compound table 1: 10 rows, 2 without a SMILES (-666 and restricted, both BRD-K4), the second aspirin row
    # of K1 collapsed, K6 ambiguous (ethanol and methanol); 5 pert_ids take their structure (K1, K2, K3, K5, K7)
    assert c["compounds", "compoundinfo_beta: rows"] == 10
    assert c["compounds", "compoundinfo_beta: rows without a SMILES (-666, empty or restricted; not used)"] == 2
    assert c["compounds", "compoundinfo_beta: repeated rows of a pert_id with the same InChIKey (one kept; e.g. one "
             "row per target)"] == 1
    assert c["compounds", "compoundinfo_beta: pert_ids with several InChIKeys (ambiguous; no structure taken from "
             "this table)"] == 1
    assert c["compounds", "compoundinfo_beta: pert_ids given a structure"] == 5
    # table 2: K6 resolved, K2 already given (with another InChIKey), K8 keyed by its SMILES text
    assert c["compounds", "extra: rows with a SMILES but no InChIKey (told apart by the SMILES text)"] == 1
    assert c["compounds", "extra: pert_ids already given a structure by an earlier table (this table's ignored)"] == 1
    assert c["compounds", "extra: ... of which with another InChIKey than the earlier table's"] == 1
    assert c["compounds", "extra: pert_ids given a structure"] == 2
    pi = res.pert_info.set_index("pert_id")
    assert pi.loc["BRD-K00000006", ["canonical_smiles", "structure_table"]].tolist() == ["CCO", "extra"]
    assert pi.loc["BRD-K00000002", "inchi_key"] == CAFFEINE[1]                  # the first table wins
    assert "BRD-K00000004" not in pi.index and (pi["pert_type"] == "trt_cp").all()
    # drugs of the kept trt_cp signatures: K1, K2, K4, K5, K6; K4 has no structure; K1 and K5 are one structure
    assert c["drugs", "compounds (pert_id) of the kept trt_cp signatures"] == 5
    assert c["drugs", "... with a structure"] == 4
    assert c["drugs", "... without a structure in any compound table (their signatures are dropped in the "
             "preprocessing as 'treatment without a parseable SMILES')"] == 1
    assert c["drugs", "... sharing their InChIKey with another pert_id (identical fingerprints; kept apart; "
             "drug_key inchi_key merges them)"] == 2
    # cells: A375 and A549 kept; A549 is not in the (partial) cellinfo
    assert c["cells", "cell lines of the kept columns"] == 2
    assert c["cells", "... not in cellinfo (kept)"] == 1


def test_drug_key_inchi_key_merges_pert_ids_of_one_structure(release):
    folder, _ = release
    res = _prepare(folder, drug_key="inchi_key")
    c = _counts(res)
    assert c["drugs", "... merged into another pert_id of the same InChIKey (drug_key inchi_key)"] == 1
    assert res.sample_info.loc["SIG08", ["pert_id", "lincs_pert_id"]].tolist() == ["BRD-K00000001", "BRD-K00000005"]
    # K7 (ibuprofen) shares K3's InChIKey: K3 (smaller pert_id, same table) represents both
    assert {"BRD-K00000005", "BRD-K00000007"}.isdisjoint(res.pert_info["pert_id"])
    assert res.compounds.loc["BRD-K00000005", "drug"] == "BRD-K00000001"


def test_dose_time_cell_and_hiq_filters(release):
    folder, _ = release
    flt = SignatureFilter(is_hiq=True, dose_um=(5.0, None), times_h=(24,), cell_lines=("A375", "A549"))
    res = _prepare(folder, filters=flt)
    c = _counts(res)
    # order: pert_type (CTL04), cell (none), qc_pass (SIG06 missing, SIG04 0), is_hiq (SIG03 0), time (none
    # left: SIG03 gone), dose: SIG05's -666 unknown, SIG02's 1.11 uM below 5 uM; controls are not dose-filtered
    assert c["signatures", "cell_iname not in ['A375', 'A549'] (excluded)"] == 0
    assert c["signatures", "is_hiq 0 (excluded)"] == 1
    assert c["signatures", "time not in times_h [24] h (excluded)"] == 0
    assert c["signatures", "treatment dose unknown (-666 or unparseable) with dose_um set (excluded)"] == 1
    assert c["signatures", "treatment dose outside dose_um (min 5 µM, max none) (excluded)"] == 1
    assert res.n_excluded == 6 and c["signatures", "kept"] == 8
    assert {"CTL01", "CTL02", "CTL03"} <= set(res.sample_info.index)
    with pytest.raises(InputError, match=r"the is_hiq filter is on but the table has no 'is_hiq' column"):
        prepare_lincs2020(["SIG01"], read_siginfo(folder / "siginfo_beta.txt").drop(columns="is_hiq"),
                          read_geneinfo(folder / "geneinfo_beta.txt"), [], filters=SignatureFilter(is_hiq=True))


def test_preprocessing_of_the_release_gives_the_planted_means(release):
    folder, values = release
    res = _prepare(folder)
    fp_valid = res.pert_info["pert_id"]          # every planted SMILES parses
    # level-5 controls are z-scores: the preprocessing warns (and counts) that their mean embeds nothing
    with pytest.warns(UserWarning, match="look like z-scores"):
        pre = preprocess_cmap([folder / "level5_beta_trt_cp_n10x6.gctx", folder / "level5_beta_ctl_n4x6.gctx"],
                              fp_valid, sample_meta=res.sample_info, gene_info=res.gene_info, log2_transform=False,
                              columns_excluded_upstream=res.n_excluded, upstream_counts=res.counts, chunk_size=3)
    c = {(r.step, r.reason): r.n for r in pre.counts.itertuples()}
    assert pre.counts.iloc[0].tolist() == ["signatures", "in the matrices", 14]   # the conversion's counts first
    assert c["samples", "in matrix"] == 14
    assert c["samples", "excluded before preprocessing (counted above; not read)"] == 3
    assert c["samples", "treatment dose < 0, e.g. -666 missing code (dropped)"] == 1          # SIG05
    assert c["samples", "treatment without a parseable SMILES (dropped)"] == 1                # SIG07 (K4)
    assert c["genes", "not landmark (dropped)"] == 3
    assert list(pre.genes["gene_id"]) == ["5720", "466", "6009"]                             # matrix row order
    # aspirin in A375: SIG01 and SIG02 (10 and 1.11 uM pooled, as the paper)
    np.testing.assert_array_equal(pre.expression.loc["BRD-K00000001:A375"],
                                  values.loc[LANDMARK, ["SIG01", "SIG02"]].mean(axis=1))
    assert pre.pairs.loc["BRD-K00000001:A375", ["n_replicates", "n_doses"]].tolist() == [2, 2]
    np.testing.assert_array_equal(pre.expression.loc["BRD-K00000002:A375"],
                                  values.loc[LANDMARK, ["SIG03", "SIG10"]].mean(axis=1))
    assert pre.pairs.loc["BRD-K00000002:A375", "n_times"] == 2
    np.testing.assert_array_equal(pre.controls.loc["A375"], values.loc[LANDMARK, ["CTL01", "CTL02"]].mean(axis=1))
    np.testing.assert_array_equal(pre.controls.loc["A549"], values.loc[LANDMARK, ["CTL03"]].mean(axis=1))
    assert sorted(pre.pairs.index) == ["BRD-K00000001:A375", "BRD-K00000002:A375", "BRD-K00000005:A375",
                                       "BRD-K00000006:A549"]
    # best_inferred keeps the 3 landmarks and the 2 best inferred genes, in matrix row order
    with pytest.warns(UserWarning, match="look like z-scores"):
        wide = preprocess_cmap([folder / "level5_beta_trt_cp_n10x6.gctx", folder / "level5_beta_ctl_n4x6.gctx"],
                               fp_valid, sample_meta=res.sample_info, gene_info=res.gene_info, log2_transform=False,
                               columns_excluded_upstream=res.n_excluded, gene_space="best_inferred")
    assert list(wide.genes["gene_id"]) == ["5720", "2101", "466", "7849", "6009"]
    assert dict(zip(wide.counts["reason"], wide.counts["n"]))["not in gene space best_inferred (dropped)"] == 1
    # the sample table and the matrices must agree on what the earlier step left out
    with pytest.raises(InputError, match=r"3 column id\(s\) have no row .* 2 were excluded by the earlier step"):
        preprocess_cmap([folder / "level5_beta_trt_cp_n10x6.gctx", folder / "level5_beta_ctl_n4x6.gctx"],
                        fp_valid, sample_meta=res.sample_info, gene_info=res.gene_info, log2_transform=False,
                        columns_excluded_upstream=2)


def test_matrix_columns_without_siginfo_rows_and_bad_tables_are_named(release):
    folder, _ = release
    si = read_siginfo(folder / "siginfo_beta.txt")
    with pytest.raises(InputError, match=r"siginfo: 1 matrix column id\(s\) have no row \(column 'sig_id'\), "
                                         r"e.g. \['SIG99'\]"):
        prepare_lincs2020(["SIG01", "SIG99"], si, read_geneinfo(folder / "geneinfo_beta.txt"), [])
    with pytest.raises(InputError, match=r"missing column\(s\) \['sample_id'\].*level 3 expects instinfo_beta.txt"):
        read_siginfo(folder / "siginfo_beta.txt", 3)
    bad = GENES.copy()
    bad.loc[4, "feature_space"] = "guessed"
    bad.to_csv(folder / "bad_geneinfo.txt", sep="\t", index=False)
    with pytest.raises(InputError, match=r"bad_geneinfo.txt: line 6, field feature_space: expected one of "
                                         r"\['landmark', 'best inferred', 'inferred'\], got 'guessed'"):
        read_geneinfo(folder / "bad_geneinfo.txt")
    odd = si.copy()
    odd.loc["SIG01", "qc_pass"] = "yes"
    with pytest.raises(InputError, match=r"field qc_pass, id 'SIG01': expected 1 or 0 \(or -666\), got 'yes'"):
        prepare_lincs2020(["SIG01"], odd, read_geneinfo(folder / "geneinfo_beta.txt"), [])


# --------------------------------------------------------------------------- the block reader

def test_block_reads_equal_the_whole_read(release, tmp_path):
    folder, values = release
    path = folder / "level5_beta_trt_cp_n10x6.gctx"
    whole = read_gctx(path)
    np.testing.assert_array_equal(whole.data.to_numpy(), values.iloc[:, :10].to_numpy())
    cid = ["SIG10", "SIG01", "SIG07", "SIG02", "SIG05"]              # scattered, out of order
    expected = read_gctx(path, rid=LANDMARK, cid=cid).data
    for max_bytes in (1, 16, 1 << 20):                               # one column per slab ... everything at once
        for chunk_size in (1, 2, 5):
            parts = list(iter_gctx_columns(path, cid=cid, rid=LANDMARK, chunk_size=chunk_size, max_bytes=max_bytes))
            pd.testing.assert_frame_equal(pd.concat([p.data for p in parts], axis=1), expected)
    np.testing.assert_array_equal(expected.to_numpy(), values.loc[LANDMARK, cid].to_numpy())
    # the same file as GCT text reads the same values through the same functions
    text = write_gct(tmp_path / "same.txt", GCT(data=whole.data, row_meta=whole.row_meta, col_meta=whole.col_meta))
    from_text = list(iter_gctx_columns(text, cid=cid, rid=LANDMARK, chunk_size=2))
    np.testing.assert_array_equal(pd.concat([p.data for p in from_text], axis=1).to_numpy(), expected.to_numpy())


def test_block_reader_reads_only_windows_of_the_wanted_columns(tmp_path):
    """2,000 signatures in chunks of 10: asking for 3 far apart reads 3
    one-column slabs (not the 1,990 columns between)."""
    ids = [f"S{i:04d}" for i in range(2000)]
    data = pd.DataFrame(np.arange(2000 * 4, dtype=np.float32).reshape(4, 2000), index=list("abcd"), columns=ids)
    path = write_gctx(tmp_path / "wide.gctx", GCT(data=data, row_meta=pd.DataFrame(index=list("abcd")),
                                                  col_meta=pd.DataFrame(index=ids)), compression=None, chunk=(10, 4))
    from biokernels.io import gctx

    calls = []
    real = h5py.Dataset.read_direct

    def spy(self, dest, source_sel=None, dest_sel=None):
        calls.append(source_sel)
        return real(self, dest, source_sel, dest_sel)

    h5py.Dataset.read_direct = spy
    try:
        got = gctx.read_gctx(path, rid=["d", "b"], cid=["S1500", "S0003", "S1999"]).data
    finally:
        h5py.Dataset.read_direct = real
    np.testing.assert_array_equal(got.to_numpy(), data.loc[["d", "b"], ["S1500", "S0003", "S1999"]].to_numpy())
    assert [(s[0].start, s[0].stop, s[1].start, s[1].stop) for s in calls] == [(3, 4, 1, 4), (1500, 1501, 1, 4),
                                                                              (1999, 2000, 1, 4)]


def test_progress_of_a_long_read_is_logged(release, caplog):
    folder, _ = release
    clock = iter(np.arange(0.0, 100.0, 10.0))                    # 10 s per call
    log = logging.getLogger("test_progress")
    progress = Progress(log, "reading", total=10, unit="columns", every_s=15, clock=lambda: float(next(clock)))
    with caplog.at_level(logging.INFO, logger="test_progress"):
        for _ in iter_gctx_columns(folder / "level5_beta_trt_cp_n10x6.gctx", rid=LANDMARK, chunk_size=3,
                                   progress=progress):
            pass
        progress.finish()
    lines = [r.getMessage() for r in caplog.records]
    # started at t = 0; 4 chunks (3, 3, 3, 1 columns of 3 float32 genes) done at t = 10, 20, 30, 40 s: a line
    # at 20 s and 40 s (at least 15 s apart), the summary at 50 s
    assert lines == ["reading: 6 columns of 10 columns (60.0%), 72 B, 0.3 columns/s, about 13s left",
                     "reading: 10 columns of 10 columns (100.0%), 120 B, 0.25 columns/s",
                     "reading: done, 10 columns (120 B) in 50s (0.2 columns/s)"]


def test_level3_instances_from_instinfo(release):
    """Level 3/4: instinfo_beta.txt keyed by sample_id, without is_hiq (a
    signature-level flag); the same filters and tables, counted as
    instances, the sample table keyed as GEO's inst_info (inst_id)."""
    folder, _ = release
    inst = pd.read_csv(folder / "siginfo_beta.txt", sep="\t", dtype=str).rename(columns={"sig_id": "sample_id"}) \
        .drop(columns=["is_hiq", "tas", "nsample"])
    inst.to_csv(folder / "instinfo_beta.txt", sep="\t", index=False)
    ids = [r[0] for r in TRT + CTL]
    res = prepare_lincs2020(ids, read_siginfo(folder / "instinfo_beta.txt", 3),
                            read_geneinfo(folder / "geneinfo_beta.txt"),
                            [("compoundinfo_beta", read_compoundinfo(folder / "compoundinfo_beta.txt"))], level=3)
    c = _counts(res)
    assert c["instances", "in the matrices"] == 14 and c["instances", "excluded in all"] == 3
    assert c["instances", "in the instance table but not in the matrices (ignored)"] == 1
    assert res.sample_info.index.name == "inst_id" and len(res.sample_info) == 11
    with pytest.raises(InputError, match=r"instinfo_beta.txt: missing column\(s\) \['sig_id'\].*level 5 expects "
                                         r"siginfo_beta.txt"):
        read_siginfo(folder / "instinfo_beta.txt", 5)
