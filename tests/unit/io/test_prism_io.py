"""PRISM release readers (biokernels.io.depmap): files written here in the
public layouts of the PRISM Repurposing 19Q4 release (R ``write.csv``:
quoted strings and headers, bare numbers, ``NA``; the matrix's first header
field empty), DepMap's ``Model.csv`` and the older ``sample_info.csv``, with
planted values whose expected results follow from the stated rules (dose,
screens, IC50 transform, name matching); every drop is counted; bad files
are refused naming the file, line and field."""

from __future__ import annotations

import gzip
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from biokernels.errors import InputError
from biokernels.io import depmap as dio
from biokernels.registry import call, lookup
from fakes.prism import SECONDARY_HEAD, TREATMENT_HEAD, r_csv

REPO = Path(__file__).resolve().parents[3]
NA = float("nan")


# --- the model tables ------------------------------------------------------------
# ACH-000001..4 are A375, HT-29, PC-3, MCF7 (CMAP spells them A375, HT29, PC3,
# MCF7: DepMap's stripped names); ACH-000005 is in the model table but not in
# the matrices; ACH-999999 (in the matrices) is in no model table.
MODELS = [("ACH-000001", "A375", "A375", "A375_SKIN"),
          ("ACH-000002", "HT-29", "HT29", "HT29_LARGE_INTESTINE"),
          ("ACH-000003", "PC-3", "PC3", "PC3_PROSTATE"),
          ("ACH-000004", "MCF7", "MCF7", "MCF7_BREAST"),
          ("ACH-000005", "Hep G2", "HEPG2", "HEPG2_LIVER")]


def model_csv(path: Path) -> Path:
    """DepMap Model.csv (22Q2 on; pandas-written, unquoted), leading columns."""
    head = ["ModelID", "PatientID", "CellLineName", "StrippedCellLineName", "DepmapModelType", "OncotreeLineage",
            "OncotreePrimaryDisease", "OncotreeSubtype", "OncotreeCode", "CCLEName"]
    rows = [[m, f"PT-{i:05d}", name, stripped, "X", "Lineage", "Disease", "Subtype", "CODE", ccle]
            for i, (m, name, stripped, ccle) in enumerate(MODELS)]
    pd.DataFrame(rows, columns=head).to_csv(path, index=False)
    return path


def sample_info_csv(path: Path) -> Path:
    """DepMap sample_info.csv (19Q4-22Q1 layout), leading columns."""
    head = ["DepMap_ID", "cell_line_name", "stripped_cell_line_name", "CCLE_Name", "alias", "COSMICID", "sex",
            "source", "RRID", "sample_collection_site", "primary_or_metastasis", "primary_disease", "lineage"]
    rows = [[m, name, stripped, ccle, "", 0, "Male", "ATCC", "CVCL_0000", "skin", "Primary", "Cancer", "skin"]
            for m, name, stripped, ccle in MODELS]
    pd.DataFrame(rows, columns=head).to_csv(path, index=False)
    return path


def cell_line_info_csv(path: Path, failed: str = "ACH-000004") -> Path:
    """PRISM primary-screen-cell-line-info.csv (19Q4): ``failed`` failed STR profiling."""
    head = ["row_name", "depmap_id", "ccle_name", "primary_tissue", "secondary_tissue", "tertiary_tissue",
            "passed_str_profiling"]
    rows = [[m, m, ccle, "tissue", "NA", "NA", m != failed] for m, _, _, ccle in MODELS]
    return r_csv(path, head, rows)


# --- the primary screen ----------------------------------------------------------
K = {i: f"BRD-K{i:08d}-001-01-{i}" for i in range(1, 10)}
# column -> (broad_id, name, dose µM, screen, SMILES); the planted cases:
#   K1 in two screens at 2.5 µM (combined per cell line by `screens`);
#   K2 at 2.43902 µM (its dose closest to 2.5, used) and at 10 µM (other dose, dropped);
#   K3 only at 10 µM, a factor 4 from 2.5 > max_dose_ratio 2 (dropped);
#   K4 without SMILES or name (passed on, counted); K5 lists two structures (the first used);
#   "unknown::2.5::HTS" has an empty broad_id (dropped); K6's column has no treatment row
#   (dropped); K7's treatment row has no matrix column (ignored).
TREATMENTS = {
    f"{K[1]}::2.5::HTS": (K[1], "ethanol", 2.5, "HTS", "CCO"),
    f"{K[1]}::2.5::MTS004": (K[1], "ethanol", 2.5, "MTS004", "CCO"),
    f"{K[2]}::2.43902::HTS": (K[2], "phenol", 2.43902, "HTS", "Oc1ccccc1"),
    f"{K[2]}::10::MTS005": (K[2], "phenol", 10.0, "MTS005", "Oc1ccccc1"),
    f"{K[3]}::10::HTS": (K[3], "propanol", 10.0, "HTS", "CCCO"),
    f"{K[4]}::2.5::HTS": (K[4], "", 2.5, "HTS", ""),
    f"{K[5]}::2.5::HTS": (K[5], "ethylamine", 2.5, "HTS", "CCN, CCN.Cl"),
    "unknown::2.5::HTS": ("", "mystery", 2.5, "HTS", "CCCC"),
    f"{K[7]}::2.5::HTS": (K[7], "butanol", 2.5, "HTS", "CCCCO"),
}
MATRIX_ROWS = ["ACH-000001", "ACH-000002", "ACH-000003", "ACH-000004", "ACH-999999"]
# matrix values: row -> column -> log2 fold change (absent = NA)
VALUES = {
    f"{K[1]}::2.5::HTS": [-1.0, NA, NA, 0.1, 0.5],
    f"{K[1]}::2.5::MTS004": [-2.0, NA, 0.4, NA, 0.5],
    f"{K[2]}::2.43902::HTS": [0.25, -0.5, NA, 1.5, 0.5],
    f"{K[2]}::10::MTS005": [-4.0, -4.0, -4.0, -4.0, -4.0],
    f"{K[3]}::10::HTS": [-3.0, -3.0, -3.0, -3.0, -3.0],
    f"{K[4]}::2.5::HTS": [0.0, 0.0, 0.0, 0.0, 0.0],
    f"{K[5]}::2.5::HTS": [1.0, 2.0, 3.0, 4.0, 5.0],
    "unknown::2.5::HTS": [9.0, 9.0, 9.0, 9.0, 9.0],
    f"{K[6]}::2.5::HTS": [7.0, 7.0, 7.0, 7.0, 7.0],
}


def primary_release(folder: Path, models: str = "model") -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    cols = list(VALUES)
    r_csv(folder / "primary-screen-replicate-collapsed-logfold-change.csv", [""] + cols,
          [[m] + [VALUES[c][i] for c in cols] for i, m in enumerate(MATRIX_ROWS)])
    r_csv(folder / "primary-screen-replicate-collapsed-treatment-info.csv", TREATMENT_HEAD,
          [[c, b, n, d, s, smi, "moa", "TARGET", "oncology", "cancer", "Launched"]
           for c, (b, n, d, s, smi) in TREATMENTS.items()])
    writer = {"model": model_csv, "sample_info": sample_info_csv, "cell_line_info": cell_line_info_csv}[models]
    return {"logfold_change": folder / "primary-screen-replicate-collapsed-logfold-change.csv",
            "treatment_info": folder / "primary-screen-replicate-collapsed-treatment-info.csv",
            "models": writer(folder / {"model": "Model.csv", "sample_info": "sample_info.csv",
                                       "cell_line_info": "primary-screen-cell-line-info.csv"}[models])}


def as_dict(v: pd.DataFrame) -> dict:
    return {(d, c): x for d, c, x in zip(v["drug_id"], v["cell_id"], v["viability"])}


def test_primary_matrix_to_long_table_with_planted_values_and_counts(tmp_path):
    files = primary_release(tmp_path)
    v, counts = dio.load_prism_primary(files)
    got = as_dict(v)
    # K1: two screens at 2.5 µM, mean of the finite values per cell line
    assert got[(K[1], "A375")] == pytest.approx(-1.5)     # (-1.0 + -2.0) / 2
    assert got[(K[1], "PC3")] == pytest.approx(0.4)       # HTS NA: MTS004 alone
    assert got[(K[1], "MCF7")] == pytest.approx(0.1)      # MTS004 NA: HTS alone
    assert (K[1], "HT29") not in got                       # NA in both: missing
    # K2: the 2.43902 µM column (closest to 2.5), never the 10 µM one (-4.0)
    assert got[(K[2], "A375")] == 0.25 and got[(K[2], "HT29")] == -0.5 and got[(K[2], "MCF7")] == 1.5
    assert (K[2], "PC3") not in got
    assert not any(d == K[3] for d, _ in got)              # only 10 µM: out of range
    assert got[(K[5], "MCF7")] == 4.0
    assert set(v.loc[v["drug_id"] == K[5], "smiles"]) == {"CCN"}   # first of "CCN, CCN.Cl"
    assert set(v.loc[v["drug_id"] == K[4], "smiles"]) == {""}      # passed on without structure
    assert set(v["cell_id"]) == {"A375", "HT29", "PC3", "MCF7"}    # ACH-999999 not mapped
    assert (v["viability"] != 7.0).all() and (v["viability"] != 9.0).all()
    # the matrix row of the model, 1-based
    assert v.loc[v["cell_id"] == "PC3", "row"].unique().tolist() == [3]
    assert list(v.columns) == ["row", "drug_id", "smiles", "cell_id", "viability"]
    assert counts == {
        "format": "prism_primary", "matrix_models": 5, "matrix_columns": 9, "treatment_rows": 9,
        "treatments_not_in_matrix": 1,          # K7
        "columns_without_treatment_info": 1,    # K6
        "columns_without_broad_id": 1,          # "unknown::2.5::HTS"
        "compounds_dose_out_of_range": 1, "columns_dose_out_of_range": 1,   # K3
        "columns_other_dose": 1,                # K2 at 10 µM
        "columns_used": 5,                      # K1 x2, K2, K4, K5
        "compounds": 4, "compounds_without_smiles": 1, "compounds_several_smiles": 1,
        "compounds_differing_smiles": 0, "compounds_without_name": 1,
        "compounds_several_columns": 1,         # K1
        "model_table_layout": "Model.csv", "model_table_rows_without_id": 0, "model_table_models_without_name": 0,
        "models_not_in_mapping": 1, "values_model_not_in_mapping": 4,      # ACH-999999's 4 finite values
        "models_failed_str": 0, "values_model_failed_str": 0,
        "models_without_name": 0, "values_model_without_name": 0,
        "values_missing": 2,                    # K1 x HT29, K2 x PC3
        "values_combined": 1,                   # K1 x A375
        "rows": 14, "cell_lines": 4, "cell_lines_of_several_models": 0}
    assert counts["rows"] + counts["values_missing"] == 4 * counts["compounds"]   # 4 mapped models
    table = dio.read_counts_table(counts)
    assert (table["meaning"] != "").all() and table["count"].tolist() == list(counts)


def test_primary_screen_priority_dose_settings_and_cell_fields(tmp_path):
    files = primary_release(tmp_path)
    v, c = dio.load_prism_primary(files, screens="priority", screen_priority=["MTS004"])
    got = as_dict(v)
    assert got[(K[1], "A375")] == -2.0          # MTS004 preferred
    assert got[(K[1], "MCF7")] == 0.1           # MTS004 NA: the next screen (HTS)
    # a wider factor keeps K3 (10 µM is then its closest dose)
    v4, c4 = dio.load_prism_primary(files, max_dose_ratio=4.0)
    assert as_dict(v4)[(K[3], "A375")] == -3.0 and c4["compounds_dose_out_of_range"] == 0
    # dose 10 µM: K2's 10 µM column is used, its 2.44 µM one is the other dose
    v10, c10 = dio.load_prism_primary(files, dose_um=10.0)
    assert as_dict(v10)[(K[2], "PC3")] == -4.0 and c10["columns_other_dose"] == 1
    assert c10["compounds_dose_out_of_range"] == 3    # K1, K4, K5 only at 2.5 µM (factor 4)
    # the CCLE name with the existing default pattern gives the same cell ids
    vc, _ = dio.load_prism_primary(files, cell_field="ccle_name", cell_pattern=r"^([^_]+)_")
    assert as_dict(vc) == as_dict(dio.load_prism_primary(files)[0])
    vn, _ = dio.load_prism_primary(files, cell_field="cell_line_name")
    assert set(vn["cell_id"]) == {"A375", "HT-29", "PC-3", "MCF7"}   # exact names, not normalised


@pytest.mark.parametrize("layout", ["sample_info", "cell_line_info"])
def test_older_model_tables_give_the_same_table(tmp_path, layout):
    ref, _ = dio.load_prism_primary(primary_release(tmp_path / "model"))
    files = primary_release(tmp_path / layout, models=layout)
    v, c = dio.load_prism_primary(files)
    if layout == "sample_info":
        assert c["model_table_layout"] == "sample_info.csv"
        pd.testing.assert_frame_equal(v, ref)
        return
    # PRISM's cell-line-info: no stripped name (from the CCLE name, counted by
    # read_models) and a failed STR profile (ACH-000004 = MCF7) dropped
    assert c["model_table_layout"] == "cell-line-info.csv"
    assert c["models_failed_str"] == 1 and c["values_model_failed_str"] == 4   # K1, K2, K4, K5 on MCF7
    pd.testing.assert_frame_equal(v, ref[ref["cell_id"] != "MCF7"].reset_index(drop=True))
    models, mc = dio.read_models(files["models"])
    assert mc == {"layout": "cell-line-info.csv", "models": 5, "rows_without_model_id": 0,
                  "models_without_any_name": 0, "stripped_from_ccle_name": 5}
    assert models.loc["ACH-000002", "stripped_name"] == "HT29"
    v_all, c_all = dio.load_prism_primary(files, require_str_profiling=False)
    assert c_all["models_failed_str"] == 0 and "MCF7" in set(v_all["cell_id"])


# --- the secondary screen --------------------------------------------------------
def secondary_release(folder: Path) -> dict[str, Path]:
    """Rows (broad_id, depmap_id, screen, auc, ic50, passed STR), planted:
    K1 x ACH-000001 in two screens (auc 0.8 / 0.6, ic50 10 / 1 µM); K1 x
    ACH-000002 auc NA; K2 x ACH-000003 failed STR; K2 x ACH-999999 not in
    the model table; K2 x ACH-000004 ic50 0 (no logarithm); an empty
    broad_id; an empty depmap_id; K5 x ACH-000003 with passed_str_profiling
    NA (not known to have failed: kept)."""
    folder.mkdir(parents=True, exist_ok=True)
    spec = [(K[1], "ACH-000001", "HTS002", 0.8, 10.0, True),
            (K[1], "ACH-000001", "MTS010", 0.6, 1.0, True),
            (K[1], "ACH-000002", "HTS002", NA, NA, True),
            (K[1], "ACH-000004", "MTS010", 0.9, 2.0, True),
            (K[2], "ACH-000001", "HTS002", 0.5, 0.1, True),
            (K[2], "ACH-000003", "HTS002", 0.4, 5.0, False),
            (K[2], "ACH-999999", "HTS002", 0.3, 5.0, True),
            (K[2], "ACH-000004", "MTS010", 0.7, 0.0, True),
            ("", "ACH-000001", "HTS002", 0.2, 1.0, True),
            (K[5], "", "HTS002", 0.2, 1.0, True),
            (K[5], "ACH-000003", "MTS006", 0.25, 3.0, None)]
    smiles = {K[1]: "CCO", K[2]: "Oc1ccccc1", K[5]: "CCN", "": "C"}
    ccle = {m: c for m, _, _, c in MODELS}
    rows = [[b, m, ccle.get(m, "NA"), s, 1.0, 0.0, -1.0, 0.9, auc, 1.0, ic50, "drug", "moa", "T", "onc", "ind",
             smiles[b], "Launched", ok, m or "NA"] for b, m, s, auc, ic50, ok in spec]
    r_csv(folder / "secondary-screen-dose-response-curve-parameters.csv", SECONDARY_HEAD, rows)
    return {"dose_response": folder / "secondary-screen-dose-response-curve-parameters.csv",
            "models": model_csv(folder / "Model.csv")}


def test_secondary_auc_duplicates_over_screens_and_counts(tmp_path):
    files = secondary_release(tmp_path)
    v, c = dio.load_prism_secondary(files)
    got = as_dict(v)
    assert got == pytest.approx({(K[1], "A375"): 0.7,       # mean of HTS002 0.8 and MTS010 0.6
                                 (K[1], "MCF7"): 0.9, (K[2], "A375"): 0.5, (K[2], "MCF7"): 0.7,
                                 (K[5], "PC3"): 0.25})
    assert v["row"].tolist() == [1, 4, 5, 8, 11]    # first data row of each kept pair
    assert c == {"format": "prism_secondary", "response": "auc", "input_rows": 11,
                 "rows_without_broad_id": 1, "rows_without_model_id": 1, "rows_failed_str": 1,
                 "rows_str_unknown": 1, "values_missing": 1, "values_not_positive": 0, "model_table_layout": "Model.csv",
                 "model_table_rows_without_id": 0, "model_table_models_without_name": 0,
                 "models_not_in_mapping": 1, "rows_model_not_in_mapping": 1,
                 "models_failed_str": 0, "rows_model_failed_str": 0,
                 "models_without_name": 0, "rows_model_without_name": 0,
                 "compounds": 3, "compounds_without_smiles": 0, "compounds_several_smiles": 0,
                 "compounds_differing_smiles": 0, "compounds_without_name": 0,
                 "pairs_several_rows": 1, "rows_other_screen": 0, "rows_merged": 1,
                 "rows": 5, "cell_lines": 3, "cell_lines_of_several_models": 0}
    # every input row is kept, merged or dropped with a reason
    drops = ("rows_without_broad_id", "rows_without_model_id", "rows_failed_str", "values_missing",
             "values_not_positive", "rows_model_not_in_mapping", "rows_other_screen", "rows_merged")
    assert c["rows"] + sum(c[k] for k in drops) == c["input_rows"]
    vp, cp = dio.load_prism_secondary(files, screens="priority", screen_priority=["MTS010", "HTS002"])
    assert as_dict(vp)[(K[1], "A375")] == 0.6 and cp["rows_other_screen"] == 1 and cp["rows_merged"] == 0
    # without the STR requirement the PC3 row is kept
    vs, cs = dio.load_prism_secondary(files, require_str_profiling=False)
    assert as_dict(vs)[(K[2], "PC3")] == 0.4 and cs["rows_failed_str"] == cs["rows_str_unknown"] == 0


def test_secondary_ic50_is_log10_of_micromolar(tmp_path):
    v, c = dio.load_prism_secondary(secondary_release(tmp_path), response="ic50")
    got = as_dict(v)
    # log10(10 µM) = 1 and log10(1 µM) = 0 averaged: 0.5, the geometric mean's log
    assert got[(K[1], "A375")] == pytest.approx(0.5)
    assert got[(K[2], "A375")] == pytest.approx(-1.0)     # 0.1 µM
    assert got[(K[1], "MCF7")] == pytest.approx(math.log10(2.0))
    assert (K[2], "MCF7") not in got and c["values_not_positive"] == 1     # ic50 0 µM
    assert c["response"] == "ic50"


# --- depmap.cell_lines: the target cell lines ---------------------------------------

def test_cell_lines_select_models_by_id_or_name_and_count_the_rest(tmp_path):
    files = primary_release(tmp_path)
    ref, ref_counts = dio.load_prism_primary(files)
    # a DepMap id, a CellLineName (HT-29) and a CCLE name, any case: three models kept
    v, c = dio.load_prism_primary(files, cell_lines=["ach-000001", "HT-29", "pc3_prostate"])
    assert set(v["cell_id"]) == {"A375", "HT29", "PC3"}
    pd.testing.assert_frame_equal(v, ref[ref["cell_id"] != "MCF7"].reset_index(drop=True))
    # MCF7 (ACH-000004) and ACH-999999 are left out: ACH-999999 is counted as not in the
    # mapping (its earlier reason), MCF7 as not selected with its 4 finite values (K1, K2, K4, K5)
    assert c["cell_lines_requested"] == 3
    assert (c["models_not_selected"], c["values_model_not_selected"]) == (1, 4)
    assert c["models_not_in_mapping"] == ref_counts["models_not_in_mapping"] == 1
    assert c["rows"] == ref_counts["rows"] - 4
    assert "cell_lines_requested" not in ref_counts          # no selection: no such counts
    table = dio.read_counts_table(c)
    assert (table["meaning"] != "").all()
    # the secondary screen: MCF7 by its stripped name keeps K1 and K2 on MCF7 only
    sec = secondary_release(tmp_path / "sec")
    vs, cs = dio.load_prism_secondary(sec, cell_lines=["MCF7"])
    assert as_dict(vs) == pytest.approx({(K[1], "MCF7"): 0.9, (K[2], "MCF7"): 0.7})
    # A375 (3 rows: K1 x2, K2) and PC3 (K5; K2's failed STR first) are not selected
    assert (cs["models_not_selected"], cs["rows_model_not_selected"]) == (2, 4)
    # a model whose rows were all dropped before (ACH-000002: its only value NA) is a known
    # name, that selects nothing
    vn, cn = dio.load_prism_secondary(sec, cell_lines=["HT29", "MCF7"])
    assert set(vn["cell_id"]) == {"MCF7"}


def test_cell_lines_unknown_names_are_an_error_with_close_matches(tmp_path):
    files = primary_release(tmp_path)
    with pytest.raises(InputError, match=r"depmap.cell_lines: 2 name\(s\) not a model id or cell line name of "
                                         r".*logfold-change.csv \(models of .*Model.csv\): 'HT-290' "
                                         r"\(close: 'HT-29', .*\); 'XYZ' \(no close match\)"):
        dio.load_prism_primary(files, cell_lines=["HT-290", "A375", "XYZ"])
    # Hep G2 (ACH-000005) is in Model.csv but not in the matrix: not a cell line of the data
    with pytest.raises(InputError, match=r"'ACH-000005' \(model ACH-000005 of the model table, not in the data; "
                                         r"close: 'ACH-000004'"):
        dio.load_prism_primary(files, cell_lines=["ACH-000005"])
    # the long layout selects by cell id (after cell_pattern), counting the rows left out
    long = tmp_path / "long.csv"
    long.write_text("broad_id,smiles,ccle_name,viability\nA,CCO,PC3_PROSTATE,0.5\nB,CCN,MCF7_BREAST,NA\n"
                    "C,CCC,PC3_PROSTATE,0.1\n")
    cols = {"drug": "broad_id", "smiles": "smiles", "cell": "ccle_name", "value": "viability"}
    v, c = dio.load_long({"table": long}, columns=cols, cell_pattern="^([^_]+)_", cell_lines=["pc3"])
    assert v["cell_id"].tolist() == ["PC3", "PC3"] and v["row"].tolist() == [1, 3]
    assert c == {"format": "long", "cell_lines_requested": 1, "models_not_selected": 1,
                 "rows_cell_line_not_selected": 1, "rows": 2, "values_missing": 0}
    with pytest.raises(InputError, match=r"'PC-3' \(close: 'PC3'\)"):
        dio.load_long({"table": long}, columns=cols, cell_pattern="^([^_]+)_", cell_lines=["PC-3"])


# --- errors: file, line and field --------------------------------------------------

def test_primary_errors_name_file_line_and_field(tmp_path):
    files = primary_release(tmp_path)
    info = files["treatment_info"]
    text = info.read_text()
    info.write_text(text.replace(",2.43902,", ',"abc",'))
    with pytest.raises(InputError, match=r"treatment-info.csv: line 4, field 'dose': expected a dose in µM > 0, "
                                         r"got 'abc'"):
        dio.load_prism_primary(files)
    lines = text.splitlines()
    info.write_text("\n".join(lines + [lines[2]]) + "\n")
    with pytest.raises(InputError, match=r"lines \[3, 11\], field 'column_name': .* appears twice"):
        dio.load_prism_primary(files)
    info.write_text(text)
    lfc = files["logfold_change"]
    good = lfc.read_text()
    lfc.write_text(good.replace("-0.5,", '"x",', 1))
    with pytest.raises(InputError, match=r"logfold-change.csv: line 3, column '.*::2.43902::HTS': expected a log2 "
                                         r"fold change \(a number or NA\), got 'x'"):
        dio.load_prism_primary(files)
    rows = good.splitlines()
    lfc.write_text("\n".join(rows + [rows[1]]) + "\n")
    with pytest.raises(InputError, match=r"lines \[2, 7\]: row id 'ACH-000001' appears twice"):
        dio.load_prism_primary(files)
    lfc.write_text(good)
    with pytest.raises(InputError, match=r"Model.csv: line 3, field 'stripped_name' \(model 'ACH-000002'\): cell "
                                         r"name 'HT29' does not match cell_pattern"):
        dio.load_prism_primary(files, cell_pattern=r"^(A\d+|PC3|MCF7)$")
    with pytest.raises(InputError, match="cell_field: expected one of"):
        dio.load_prism_primary(files, cell_field="lineage")
    with pytest.raises(InputError, match=r"screens: priority needs screen_priority.*'HTS', 'MTS004'"):
        dio.load_prism_primary(files, screens="priority")
    with pytest.raises(InputError, match="max_dose_ratio: expected a factor >= 1"):
        dio.load_prism_primary(files, max_dose_ratio=0.5)


def test_model_table_errors(tmp_path):
    files = primary_release(tmp_path)
    m = files["models"]
    text = m.read_text()
    m.write_text(text + text.splitlines()[2] + "\n")
    with pytest.raises(InputError, match=r"Model.csv: lines \[3, 7\], field 'ModelID': model id 'ACH-000002' "
                                         "appears twice"):
        dio.read_models(m)
    # the matrix given as the model table
    with pytest.raises(InputError, match="not a model table .*looks like a PRISM log-fold-change matrix"):
        dio.load_prism_primary({**files, "models": files["logfold_change"]})
    with pytest.raises(InputError, match="looks like a PRISM treatment or dose-response table"):
        dio.read_models(files["treatment_info"])


def test_secondary_errors(tmp_path):
    files = secondary_release(tmp_path)
    p = files["dose_response"]
    text = p.read_text()
    p.write_text(text.replace(",0.5,1.0,0.1,", ',"high",1.0,0.1,'))
    with pytest.raises(InputError, match=r"curve-parameters.csv: line 6, field 'auc': expected a number or NA, "
                                         "got 'high'"):
        dio.load_prism_secondary(files)
    p.write_text(text.replace("FALSE", '"maybe"'))
    with pytest.raises(InputError, match=r"line 7, field 'passed_str_profiling': expected TRUE, FALSE or NA, "
                                         "got 'maybe'"):
        dio.load_prism_secondary(files)
    p.write_text(text)
    with pytest.raises(InputError, match=r"column\(s\) \['ec90'\] missing|response: expected one of"):
        dio.load_prism_secondary(files, response="ec90")
    p.write_text(text.replace('"auc"', '"area"'))
    with pytest.raises(InputError, match=r"column\(s\) \['auc'\] missing; expected the PRISM "
                                         "secondary-screen-dose-response-curve-parameters layout"):
        dio.load_prism_secondary(files)


def test_content_that_does_not_match_the_name_is_refused_with_advice(tmp_path):
    files = primary_release(tmp_path)
    raw = files["logfold_change"].read_bytes()
    gz = tmp_path / "lfc.csv"
    gz.write_bytes(gzip.compress(raw))
    with pytest.raises(InputError, match=r"lfc.csv: looks like gzip-compressed data .*rename it lfc.csv.gz .*"
                                         "gunzip: true"):
        dio.load_prism_primary({**files, "logfold_change": gz})
    ok = tmp_path / "lfc2.csv.gz"
    ok.write_bytes(gzip.compress(raw))
    v, _ = dio.load_prism_primary({**files, "logfold_change": ok})    # a real .gz is read
    assert len(v) == 14
    fake = tmp_path / "lfc3.csv.gz"
    fake.write_bytes(raw)
    with pytest.raises(InputError, match="named .gz but not gzip data .*rename it without .gz"):
        dio.load_prism_primary({**files, "logfold_change": fake})
    html = tmp_path / "page.csv"
    html.write_text("<!DOCTYPE html>\n<html><body>Sign in to DepMap</body></html>\n")
    with pytest.raises(InputError, match="looks like an HTML page .*check the URL and download it again"):
        dio.load_prism_primary({**files, "treatment_info": html})
    xlsx = tmp_path / "Model.csv"
    xlsx.write_bytes(b"PK\x03\x04" + b"\x00" * 100)
    with pytest.raises(InputError, match="looks like a ZIP archive: unzip it .*Excel workbook, export the sheet as "
                                         "CSV"):
        dio.read_models(xlsx)
    tsv = tmp_path / "tabs.csv"
    tsv.write_text(files["treatment_info"].read_text().replace(",", "\t"))
    with pytest.raises(InputError, match="the header is tab-separated but the name says comma-separated; rename "
                                         "it tabs.tsv"):
        dio.load_prism_primary({**files, "treatment_info": tsv})
    with pytest.raises(InputError, match="a PRISM log-fold-change matrix not found"):
        dio.load_prism_primary({**files, "logfold_change": tmp_path / "nothere.csv"})


# --- the registry --------------------------------------------------------------------

def _schema_formats() -> set:
    schema = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text())
    return set(schema["$defs"]["depmap_reader"]["properties"]["format"]["enum"])


def test_registry_is_the_schema_enum_and_checks_settings(tmp_path):
    assert _schema_formats() == set(dio.VIABILITY_READERS) == set(dio.VIABILITY_FILES)
    files = primary_release(tmp_path)
    reader = lookup(dio.VIABILITY_READERS, "prism_primary", "depmap.sources.x.reader.format")
    v, _ = call(reader, {"dose_um": 2.5}, "depmap.sources.x.reader", files)
    assert len(v) == 14
    with pytest.raises(InputError, match=r"depmap.sources.x.reader: \['dose'\] are not settings"):
        call(reader, {"dose": 2.5}, "depmap.sources.x.reader", files)
    with pytest.raises(InputError, match="depmap.sources.x.reader.format: unknown 'prism'"):
        lookup(dio.VIABILITY_READERS, "prism", "depmap.sources.x.reader.format")
    with pytest.raises(InputError, match=r"format 'prism_primary': expected files \['logfold_change', 'models', "
                                         r"'treatment_info'\], got \['logfold_change', 'models'\]"):
        dio.load_prism_primary({k: files[k] for k in ("logfold_change", "models")})
    # the long layout through the registry is read_viability
    long = tmp_path / "long.csv"
    long.write_text("broad_id,smiles,ccle_name,viability\nA,CCO,PC3_PROSTATE,0.5\nB,CCN,MCF7_BREAST,NA\n")
    v, c = call(dio.VIABILITY_READERS["long"], {"columns": {"drug": "broad_id", "smiles": "smiles",
                                                            "cell": "ccle_name", "value": "viability"},
                                                "cell_pattern": "^([^_]+)_"}, "f", {"table": long})
    assert v["cell_id"].tolist() == ["PC3", "MCF7"] and c == {"format": "long", "rows": 2, "values_missing": 1}
    assert np.isnan(v["viability"].iloc[1])


def test_r_na_in_model_tables_is_missing_never_a_cell_line_called_na(tmp_path):
    """PRISM's cell-line-info (R's write.csv) writes NA where a row has no
    DepMap id or CCLE name, as for its control barcodes. Here the matrix row
    ACH-999999 (not in the usual model table) is such a row: depmap_id and
    ccle_name NA; ACH-000005 (not in the matrix) has ccle_name NA; two rows
    have row_name NA."""
    ref, ref_counts = dio.load_prism_primary(primary_release(tmp_path / "ref", models="cell_line_info"))
    files = primary_release(tmp_path / "na", models="cell_line_info")
    head = ["row_name", "depmap_id", "ccle_name", "primary_tissue", "secondary_tissue", "tertiary_tissue",
            "passed_str_profiling"]
    rows = [[m, m, None if m == "ACH-000005" else ccle, "tissue", NA, NA, m != "ACH-000004"]
            for m, _, _, ccle in MODELS]
    rows += [["ACH-999999", NA, NA, NA, NA, NA, NA], [NA, NA, NA, NA, NA, NA, NA],
             [NA, NA, "X_LUNG", "lung", NA, NA, True]]
    r_csv(files["models"], head, rows)
    assert files["models"].read_text().count(",NA") > 10          # written as R writes a missing value
    v, c = dio.load_prism_primary(files)
    assert "NA" not in set(v["cell_id"])
    # ACH-999999's values are dropped as those of a model without a name (4 compound values: K1, K2, K4, K5),
    # where the usual model table dropped them as a model not in the mapping; nothing else changes
    pd.testing.assert_frame_equal(v, ref)
    assert (ref_counts["models_not_in_mapping"], ref_counts["values_model_not_in_mapping"]) == (1, 4)
    assert (c["models_not_in_mapping"], c["models_without_name"], c["values_model_without_name"]) == (0, 1, 4)
    assert c["model_table_rows_without_id"] == 2 and c["model_table_models_without_name"] == 2
    models, mc = dio.read_models(files["models"])
    assert "NA" not in set(models.index) and models.loc["ACH-000005", ["stripped_name", "ccle_name"]].eq("").all()
    assert mc["rows_without_model_id"] == 2 and mc["models_without_any_name"] == 2


def test_r_na_depmap_id_of_secondary_rows_is_a_missing_id(tmp_path):
    """The secondary table's empty depmap_id written as R writes it (NA): the
    row is dropped as one without a model id, not taken for a model 'NA'."""
    files = secondary_release(tmp_path)
    _, ref = dio.load_prism_secondary(files)
    text = files["dose_response"].read_text()
    row = next(x for x in text.splitlines() if x.startswith(f'"{K[5]}",""'))
    files["dose_response"].write_text(text.replace(row, row.replace(f'"{K[5]}",""', f'"{K[5]}",NA', 1)))
    _, c = dio.load_prism_secondary(files)
    assert c["rows_without_model_id"] == ref["rows_without_model_id"] == 1
    assert c["models_not_in_mapping"] == ref["models_not_in_mapping"] == 1        # ACH-999999 only
