"""biokernels.report: paper_values.yaml validation, verdicts, and the
reproduction table against small result tables."""

from __future__ import annotations

import copy
import math
from pathlib import Path

import pandas as pd
import pytest
import yaml

from biokernels.report import (VERDICT_KINDS, Context, PaperValuesError, SelectorError, judge, label_verdict,
                               load_paper_values, reproduction_table, required_tables, schema_errors, select_value,
                               table_html, verdict_counts, verdict_kind)

REPO = Path(__file__).resolve().parents[2]
PAPER_VALUES = REPO / "config/paper_values.yaml"
SCHEMA = REPO / "workflow/schemas/paper_values.schema.yaml"


def _doc():
    return {"version": 1,
            "papers": {"p": {"title": "A paper", "file": "a.txt"}},
            "entries": [
                {"id": "t2_mdkl", "paper": "p", "where": "Table 2",
                 "condition": {"dataset": "Ligand", "metric": "mean ROC", "method": "mDKL"},
                 "value": 0.85, "tolerance": 0.02,
                 "source": {"study": "diffusion", "table": "diffusion/{dkl_ligand}/tables/mean_roc.tsv",
                            "select": {"method": "mDKL"}, "column": "mean_roc"}},
                {"id": "mdkl_beats_e", "paper": "p", "where": "Table 2 (text)",
                 "condition": {"dataset": "Ligand", "metric": "mDKL minus eBaseline"},
                 "bound": {"op": ">", "value": 0.0}, "tolerance": 0.0,
                 "source": {"study": "diffusion", "table": "diffusion/{dkl_ligand}/tables/mean_roc.tsv",
                            "select": {"method": "mDKL"}, "column": "mean_roc",
                            "versus": {"select": {"method": "eBaseline"}, "column": "mean_roc"}}},
                {"id": "vm_mdkl", "paper": "p", "where": "Table 5",
                 "condition": {"dataset": "von Mering", "metric": "mean ROC"},
                 "value": 0.83, "tolerance": 0.02,
                 "source": {"study": "diffusion", "table": "diffusion/{dkl_vonmering}/tables/mean_roc.tsv",
                            "select": {"method": "mDKL"}, "column": "mean_roc"}},
                {"id": "pk_auc", "paper": "p", "where": "Fig. 3a",
                 "condition": {"dataset": "cohorts", "metric": "AUC"},
                 "bound": {"op": "within", "value": 0.03}, "tolerance": 0.0,
                 "source": {"study": "pimkl", "table": "pimkl/{pk_dataset}/tables/fig3a.tsv", "column": "auc"}},
            ]}


def _ctx(ligand=("real", True)):
    return Context.from_mapping({"studies": ["diffusion", "theory"],
                                 "placeholders": {"dkl_ligand": {ligand[0]: ligand[1]}, "dkl_vonmering": {},
                                                  "pk_dataset": {}}})


def _write_mean_roc(results: Path, ds: str, mdkl=0.86, ebase=0.82, drop=None):
    t = pd.DataFrame({"method": ["mDKL", "eBaseline", "DKL"], "mean_roc": [mdkl, ebase, 0.84]})
    if drop:
        t = t[t["method"] != drop]
    path = results / f"diffusion/{ds}/tables/mean_roc.tsv"
    path.parent.mkdir(parents=True, exist_ok=True)
    t.to_csv(path, sep="\t", index=False)
    return path


# --- the project's paper_values.yaml --------------------------------------

def test_project_paper_values_is_valid_and_covers_the_papers():
    doc = load_paper_values(PAPER_VALUES, SCHEMA)
    assert set(doc["papers"]) == {"diffusion", "transfer", "pimkl", "mmdt"}
    ids = [e["id"] for e in doc["entries"]]
    assert len(ids) == len(set(ids))
    for must in ("dkl_ligand_mean_roc_mdkl", "dkl_vonmering_stability_mean_mdkl", "ds_fig4c_log_law_r2",
                 "dm_s9a_log_law_r2", "dm_s9a_predict_last", "theory_thm2_eq8_vs_simulation",
                 "pimkl_fig3a_highest_median", "pimkl_figs4_signature_correlation", "mmdt_beats_svm_source",
                 "mkl_s7_translation_beats_transfer_easymkl"):
        assert must in ids, must
    t2 = {e["source"]["select"]["method"]: e["value"] for e in doc["entries"]
          if e["where"] == "Table 2" and "value" in e}
    assert t2["mDKL"] == 0.8542 and t2["SM1"] == 0.8162 and len(t2) == 12


def test_project_entries_of_unlanded_studies_are_not_run():
    doc = load_paper_values(PAPER_VALUES, SCHEMA)
    ctx = Context.from_mapping({"studies": ["theory"], "placeholders": {}})
    # unknown placeholders of studies not in the workflow are fine: not run
    table = reproduction_table({**doc, "entries": [e for e in doc["entries"] if e["source"]["study"] != "theory"]},
                               "/nonexistent", ctx)
    assert set(table["verdict"]) == {"not run"}
    assert table["note"].str.contains("not in this workflow").all()


# --- schema validation -----------------------------------------------------

def test_valid_document_has_no_errors():
    assert schema_errors(_doc(), SCHEMA) == []


@pytest.mark.parametrize("edit, expect", [
    (lambda d: d["entries"][0].update(value="high"), "'high' is not of type 'number'"),
    (lambda d: d["entries"][0].pop("tolerance"), "'tolerance' is a required property"),
    (lambda d: d["entries"][1]["bound"].update(op=">="), "'>=' is not one of"),
    (lambda d: d["entries"][0].update(bound={"op": ">", "value": 1}), "t2_mdkl"),       # value and bound
    (lambda d: d["entries"][0]["source"].update(reduce="sum"), "'sum' is not one of"),
    (lambda d: d["entries"][0]["source"].update(table="/abs/x.tsv"), "does not match"),
    (lambda d: d["entries"][0].update(colour="red"), "Additional properties"),
    (lambda d: d["entries"][1].update(id="t2_mdkl"), "duplicate id"),
    (lambda d: d["entries"][0].update(paper="nope"), "paper 'nope' is not in papers"),
])
def test_schema_errors_name_the_entry(edit, expect):
    doc = _doc()
    edit(doc)
    errors = schema_errors(doc, SCHEMA)
    assert errors, "no error"
    text = "\n".join(errors)
    assert expect in text
    assert "t2_mdkl" in text or "mdkl_beats_e" in text


def test_load_raises_with_every_problem(tmp_path):
    doc = _doc()
    doc["entries"][0]["value"] = "high"
    doc["entries"][2]["tolerance"] = -1
    path = tmp_path / "pv.yaml"
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(PaperValuesError) as err:
        load_paper_values(path, SCHEMA)
    assert "t2_mdkl" in str(err.value) and "vm_mdkl" in str(err.value)


# --- verdicts --------------------------------------------------------------

@pytest.mark.parametrize("entry, reproduced, paper_data, verdict", [
    ({"value": 0.85, "tolerance": 0.02}, 0.86, True, "reproduced"),
    ({"value": 0.85, "tolerance": 0.02}, 0.80, True, "differs"),
    ({"value": 0.85, "tolerance": 0.02}, 0.86, False, "not comparable on this data"),
    ({"value": 0.85, "tolerance": 0.02}, math.nan, True, "differs"),
    ({"bound": {"op": ">", "value": 0.9}, "tolerance": 0.0}, 0.95, True, "reproduced"),
    ({"bound": {"op": ">", "value": 0.9}, "tolerance": 0.0}, 0.85, True, "differs"),
    ({"bound": {"op": ">", "value": 0.9}, "tolerance": 0.1}, 0.85, True, "reproduced"),   # slack
    ({"bound": {"op": "<", "value": 0.05}, "tolerance": 0.0}, 0.01, True, "reproduced"),
    ({"bound": {"op": "<", "value": 0.05}, "tolerance": 0.0}, 0.2, True, "differs"),
    ({"bound": {"op": "within", "value": 0.03}, "tolerance": 0.0}, -0.02, True, "reproduced"),
    ({"bound": {"op": "within", "value": 0.03}, "tolerance": 0.0}, 0.05, True, "differs"),
    ({"bound": {"op": "within", "value": 0.03, "center": 1.0}, "tolerance": 0.0}, 0.98, True, "reproduced"),
    ({"value": 1e-4, "tolerance": 1.0, "scale": "log10"}, 5e-4, True, "reproduced"),
    ({"value": 1e-4, "tolerance": 1.0, "scale": "log10"}, 0.2, True, "differs"),
])
def test_verdicts(entry, reproduced, paper_data, verdict):
    assert judge(reproduced, entry, paper_data)[1] == verdict


def test_difference_is_signed():
    # differences of decimal literals: exact up to their binary rounding (pytest.approx's
    # default rel 1e-6 absorbs it), here and in the tables below
    assert judge(0.8, {"value": 0.85, "tolerance": 0.1}, True)[0] == pytest.approx(-0.05)
    assert judge(0.95, {"bound": {"op": ">", "value": 0.9}, "tolerance": 0}, True)[0] == pytest.approx(0.05)
    assert judge(0.05, {"bound": {"op": "within", "value": 0.03}, "tolerance": 0}, True)[0] == pytest.approx(0.02)


# --- the table ---------------------------------------------------------------

def test_reproduction_table_one_row_per_entry(tmp_path):
    _write_mean_roc(tmp_path, "real")
    table = reproduction_table(_doc(), tmp_path, _ctx())
    assert list(table["id"]) == ["t2_mdkl", "mdkl_beats_e", "vm_mdkl", "pk_auc"]
    row = table.set_index("id")
    assert row.loc["t2_mdkl", "reproduced"] == pytest.approx(0.86)
    assert row.loc["t2_mdkl", "difference"] == pytest.approx(0.01)
    assert row.loc["t2_mdkl", "verdict"] == "reproduced"
    assert row.loc["mdkl_beats_e", "reproduced"] == pytest.approx(0.04)
    assert row.loc["mdkl_beats_e", "verdict"] == "reproduced"
    assert row.loc["vm_mdkl", "verdict"] == "not run" and "dkl_vonmering" in row.loc["vm_mdkl", "note"]
    assert row.loc["pk_auc", "verdict"] == "not run" and "pimkl" in row.loc["pk_auc", "note"]
    assert set(verdict_counts(table)) == set(VERDICT_KINDS) and sum(verdict_counts(table).values()) == 4
    assert (table["deviation"] == "").all()  # no entry states a deviation


def test_synthetic_data_is_not_comparable_but_shown(tmp_path):
    _write_mean_roc(tmp_path, "synthetic", mdkl=0.95)
    table = reproduction_table(_doc(), tmp_path, _ctx(("synthetic", False))).set_index("id")
    assert table.loc["t2_mdkl", "verdict"] == "not comparable on this data"
    assert table.loc["t2_mdkl", "reproduced"] == pytest.approx(0.95)
    assert "differs" in table.loc["t2_mdkl", "note"]          # what the numbers alone would say


def test_table_not_built_is_not_run(tmp_path):
    table = reproduction_table(_doc(), tmp_path, _ctx()).set_index("id")
    assert table.loc["t2_mdkl", "verdict"] == "not run" and "not built" in table.loc["t2_mdkl", "note"]


def test_missing_row_in_an_existing_table_raises_naming_entry_table_selector(tmp_path):
    _write_mean_roc(tmp_path, "real", drop="eBaseline")
    with pytest.raises(SelectorError) as err:
        reproduction_table(_doc(), tmp_path, _ctx())
    msg = str(err.value)
    assert "mdkl_beats_e" in msg and "diffusion/real/tables/mean_roc.tsv" in msg
    assert "method" in msg and "eBaseline" in msg


def test_missing_column_in_an_existing_table_raises(tmp_path):
    doc = _doc()
    doc["entries"][0]["source"]["column"] = "average_roc"
    _write_mean_roc(tmp_path, "real")
    with pytest.raises(SelectorError, match=r"t2_mdkl.*mean_roc.tsv.*average_roc"):
        reproduction_table(doc, tmp_path, _ctx())


def test_ambiguous_selection_raises():
    t = pd.DataFrame({"method": ["a", "a"], "x": [1.0, 2.0]})
    with pytest.raises(SelectorError, match="2 rows where one was expected"):
        select_value(t, {"select": {"method": "a"}, "column": "x"}, "e1", "t.tsv")
    assert select_value(t, {"select": {"method": "a"}, "column": "x", "reduce": "max"}, "e1", "t.tsv") == 2.0


def test_reducers_and_groups():
    t = pd.DataFrame({"m": ["p", "p", "p", "b", "b", "b"], "n": [4, 1, 2, 1, 2, 4],
                      "y": [0.9, 0.5, 0.7, 0.4, 0.45, 0.5], "angle": [0.7854, 0.5, 0.1, 0.7854, 0.5, 0.1]})
    sel = {"select": {"m": "p"}, "column": "y", "sort_by": "n"}
    assert select_value(t, {**sel, "reduce": "first"}, "e", "t") == 0.5
    assert select_value(t, {**sel, "reduce": "last_minus_first"}, "e", "t") == pytest.approx(0.4)
    assert select_value(t, {**sel, "reduce": "min_step"}, "e", "t") == pytest.approx(0.2)
    assert select_value(t, {"select": {"m": "p", "angle": 0.785398}, "column": "y"}, "e", "t") == 0.9
    grouped = {"column": "y", "group_by": "m", "reduce": "median", "group_reduce": "max"}
    assert select_value(t, grouped, "e", "t") == pytest.approx(0.7)


# --- entries with a stated deviation from the paper's protocol ---------------

_DEV = "beta grid ends at -0.5 instead of the paper's -1"


def _doc_with_deviations():
    """The protocol entry t2_mdkl (paper 0.85 +- 0.02, mean_roc.tsv) and two
    siblings that differ only by their table and a `deviation`."""
    doc = _doc()
    proto = doc["entries"][0]
    dev = copy.deepcopy(proto)
    dev.update(id="t2_mdkl_short_grid", deviation=_DEV)
    dev["source"]["table"] = "diffusion/{dkl_ligand}/tables/mean_roc_short_grid.tsv"
    dev2 = copy.deepcopy(dev)
    dev2.update(id="t2_mdkl_other_split", deviation="another split")
    dev2["source"]["table"] = "diffusion/{dkl_ligand}/tables/mean_roc_other_split.tsv"
    doc["entries"] = [proto, dev, dev2]
    return doc


def _write_table(results: Path, ds: str, name: str, mdkl: float):
    path = results / f"diffusion/{ds}/tables/{name}.tsv"
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame({"method": ["mDKL"], "mean_roc": [mdkl]}).to_csv(path, sep="\t", index=False)


def test_deviation_entry_is_a_row_of_its_own_with_a_labelled_verdict(tmp_path):
    doc = _doc_with_deviations()
    assert schema_errors(doc, SCHEMA) == []
    _write_mean_roc(tmp_path, "real", mdkl=0.86)                       # protocol: |0.86 - 0.85| <= 0.02
    _write_table(tmp_path, "real", "mean_roc_short_grid", 0.80)       # |0.80 - 0.85| = 0.05 > 0.02
    _write_table(tmp_path, "real", "mean_roc_other_split", 0.84)      # within the tolerance
    table = reproduction_table(doc, tmp_path, _ctx()).set_index("id")
    # the protocol's row is untouched by its siblings
    assert table.loc["t2_mdkl", "verdict"] == "reproduced" and table.loc["t2_mdkl", "deviation"] == ""
    assert table.loc["t2_mdkl_short_grid", "verdict"] == f"differs with a stated deviation: {_DEV}"
    assert table.loc["t2_mdkl_short_grid", "deviation"] == _DEV
    assert table.loc["t2_mdkl_short_grid", "reproduced"] == pytest.approx(0.80)
    assert table.loc["t2_mdkl_other_split", "verdict"] == "reproduced with a stated deviation: another split"
    assert verdict_counts(table.reset_index()) == {
        "reproduced": 1, "reproduced with a stated deviation": 1, "differs": 0,
        "differs with a stated deviation": 1, "not comparable on this data": 0, "not run": 0}
    html = table_html(table.reset_index(), doc)
    assert "<th>deviation</th>" in html and f"<td class=''>{_DEV}</td>" in html
    assert html.count("differs with a stated deviation") >= 2       # summary column and the row's verdict


def test_deviation_entry_not_comparable_or_not_run_keeps_those_verdicts(tmp_path):
    doc = _doc_with_deviations()
    _write_mean_roc(tmp_path, "synthetic")
    _write_table(tmp_path, "synthetic", "mean_roc_short_grid", 0.80)
    # mean_roc_other_split.tsv not built
    table = reproduction_table(doc, tmp_path, _ctx(("synthetic", False))).set_index("id")
    assert table.loc["t2_mdkl_short_grid", "verdict"] == "not comparable on this data"
    assert table.loc["t2_mdkl_short_grid", "deviation"] == _DEV   # the deviation is still stated
    assert "differs" in table.loc["t2_mdkl_short_grid", "note"]    # what the numbers alone would say
    assert table.loc["t2_mdkl_other_split", "verdict"] == "not run"
    assert table.loc["t2_mdkl_other_split", "deviation"] == "another split"


def test_label_verdict_and_verdict_kind():
    assert label_verdict("reproduced", None) == "reproduced"
    assert label_verdict("differs", "x") == "differs with a stated deviation: x"
    assert label_verdict("not run", "x") == "not run"
    for v in VERDICT_KINDS:
        assert verdict_kind(v) == v
    assert verdict_kind("reproduced with a stated deviation: a: b") == "reproduced with a stated deviation"
    for bad in ("reproduced: x", "unknown"):
        with pytest.raises(ValueError, match="verdict"):
            verdict_kind(bad)


@pytest.mark.parametrize("deviation, expect", [
    ("", "should be non-empty"),
    ("   ", "deviation is blank"),
    (3, "3 is not of type 'string'"),
])
def test_deviation_must_name_the_change(deviation, expect):
    doc = _doc()
    doc["entries"][0]["deviation"] = deviation
    errors = schema_errors(doc, SCHEMA)
    assert len(errors) == 1 and "t2_mdkl" in errors[0] and expect in errors[0], errors


def test_several_configured_datasets_give_one_row_each(tmp_path):
    _write_mean_roc(tmp_path, "a")
    _write_mean_roc(tmp_path, "b", mdkl=0.7)
    ctx = Context.from_mapping({"studies": ["diffusion"], "placeholders": {
        "dkl_ligand": {"a": True, "b": True}, "dkl_vonmering": {}, "pk_dataset": {}}})
    doc = _doc()
    doc["entries"] = doc["entries"][:1]
    table = reproduction_table(doc, tmp_path, ctx)
    assert list(table["verdict"]) == ["reproduced", "differs"]
    assert sorted(required_tables(doc, ctx)) == ["diffusion/a/tables/mean_roc.tsv", "diffusion/b/tables/mean_roc.tsv"]


def test_unknown_placeholder_of_a_landed_study_is_an_error(tmp_path):
    doc = copy.deepcopy(_doc())
    doc["entries"][0]["source"]["table"] = "diffusion/{typo}/tables/mean_roc.tsv"
    with pytest.raises(PaperValuesError, match="t2_mdkl.*typo"):
        reproduction_table(doc, tmp_path, _ctx())


@pytest.mark.parametrize("study, source, declared, expect", [
    ("diffusion", {"type": "synthetic"}, None, False),
    ("diffusion", {"type": "gem"}, None, True),
    ("drug_screen", {"type": "synthetic"}, None, False),
    ("drug_screen", {"type": "lincs2020_structure"}, None, False),   # real structures, simulated response
    ("drug_screen", {"type": "geo"}, None, True),
    ("drug_screen", {"type": "lincs2020"}, None, True),              # measured L1000, the 2020 release
    ("drug_screen", {"type": "local"}, None, True),                  # local copies of measured L1000 files
    ("depmap", {"type": "table"}, None, False),
    ("depmap", {"type": "table"}, {"depmap": ["x"]}, True),          # declared in config report.paper_data
    ("depmap", {"type": "download"}, None, True),
    ("depmap", {"type": "local", "reader": {"format": "prism_primary"}}, None, True),
    ("depmap", {"type": "local", "reader": {"format": "long"}}, None, False),   # a user's own table
    ("theory", {}, None, False),
])
def test_is_paper_data(study, source, declared, expect):
    from biokernels.report import is_paper_data

    assert is_paper_data(study, "x", source, declared) is expect


def test_a_data_set_with_a_deviation_labels_its_rows_beside_the_protocols(tmp_path):
    """The context's `deviations` (a data set carrying a change from the
    paper's protocol, e.g. a diffusion source with the normalized Laplacian):
    the same entry gives the protocol's row and a labelled row for it."""
    doc = _doc()
    doc["entries"] = doc["entries"][:1]                    # t2_mdkl: paper 0.85 +- 0.02
    _write_mean_roc(tmp_path, "real", mdkl=0.77)           # the protocol misses
    _write_mean_roc(tmp_path, "real_normalized", mdkl=0.84)
    ctx = Context.from_mapping({"studies": ["diffusion"],
                                "placeholders": {"dkl_ligand": {"real": True, "real_normalized": True},
                                                 "dkl_vonmering": {}, "pk_dataset": {}},
                                "deviations": {"real_normalized": "normalized Laplacian"}})
    table = reproduction_table(doc, tmp_path, ctx)
    by_ds = {r["note"]: r for _, r in table.iterrows()}
    assert by_ds["dkl_ligand=real"]["verdict"] == "differs" and by_ds["dkl_ligand=real"]["deviation"] == ""
    row = by_ds["dkl_ligand=real_normalized"]
    assert row["verdict"] == "reproduced with a stated deviation: normalized Laplacian"
    assert row["deviation"] == "normalized Laplacian"


def test_a_method_a_deviation_data_set_did_not_run_is_not_run_there(tmp_path):
    """SM1 is skipped on deviation data sets by default: their tables lack
    the row, which is 'not run' there and still an error on the protocol's."""
    doc = _doc()
    doc["entries"] = doc["entries"][:1]                    # selects method mDKL
    _write_mean_roc(tmp_path, "real", mdkl=0.85)
    _write_mean_roc(tmp_path, "real_dev", drop="mDKL")
    ctx = Context.from_mapping({"studies": ["diffusion"],
                                "placeholders": {"dkl_ligand": {"real": True, "real_dev": True},
                                                 "dkl_vonmering": {}, "pk_dataset": {}},
                                "deviations": {"real_dev": "step 0.01"}})
    table = reproduction_table(doc, tmp_path, ctx)
    dev = table[table["note"].str.contains("real_dev")].iloc[0]
    assert dev["verdict"] == "not run" and dev["deviation"] == "step 0.01"
    _write_mean_roc(tmp_path, "real", drop="mDKL")
    with pytest.raises(SelectorError):
        reproduction_table(doc, tmp_path, ctx)
