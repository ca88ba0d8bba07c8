"""biokernels.report: paper_values.yaml validation, verdicts, and the
reproduction table against small result tables."""

from __future__ import annotations

import copy
import math
from pathlib import Path

import pandas as pd
import pytest
import yaml

from biokernels.departures import load_protocols
from biokernels.report import (VERDICT_KINDS, Context, PaperValuesError, SelectorError, compose_verdict, judge,
                               label_verdict, load_paper_values, reproduction_table, required_tables,
                               resolve_tolerance, schema_errors, select_value, source_data, table_html,
                               verdict_counts, verdict_kind)

REPO = Path(__file__).resolve().parents[3]
PAPER_VALUES = REPO / "config/paper_values.yaml"
SCHEMA = REPO / "workflow/schemas/paper_values.schema.yaml"
PROTOCOLS = REPO / "config/paper_protocols.yaml"
_TS = {"tolerance_source": "test: stated"}


def _doc():
    return {"version": 1,
            "papers": {"p": {"title": "A paper", "file": "a.txt"}},
            "entries": [
                {"id": "t2_mdkl", "paper": "p", "where": "Table 2",
                 "condition": {"dataset": "Ligand", "metric": "mean ROC", "method": "mDKL"},
                 "value": 0.85, "tolerance": 0.02, **_TS,
                 "source": {"study": "diffusion", "table": "diffusion/{dkl_ligand}/tables/mean_roc.tsv",
                            "select": {"method": "mDKL"}, "column": "mean_roc"}},
                {"id": "mdkl_beats_e", "paper": "p", "where": "Table 2 (text)",
                 "condition": {"dataset": "Ligand", "metric": "mDKL minus eBaseline"},
                 "bound": {"op": ">", "value": 0.0}, "tolerance": 0.0, **_TS,
                 "source": {"study": "diffusion", "table": "diffusion/{dkl_ligand}/tables/mean_roc.tsv",
                            "select": {"method": "mDKL"}, "column": "mean_roc",
                            "versus": {"select": {"method": "eBaseline"}, "column": "mean_roc"}}},
                {"id": "vm_mdkl", "paper": "p", "where": "Table 5",
                 "condition": {"dataset": "von Mering", "metric": "mean ROC"},
                 "value": 0.83, "tolerance": 0.02, **_TS,
                 "source": {"study": "diffusion", "table": "diffusion/{dkl_vonmering}/tables/mean_roc.tsv",
                            "select": {"method": "mDKL"}, "column": "mean_roc"}},
                {"id": "pk_auc", "paper": "p", "where": "Fig. 3a",
                 "condition": {"dataset": "cohorts", "metric": "AUC"},
                 "bound": {"op": "within", "value": 0.03}, "tolerance": 0.0, **_TS,
                 "source": {"study": "pimkl", "table": "pimkl/{pk_dataset}/tables/fig3a.tsv", "column": "auc"}},
            ]}


def _ctx(ligand=("real", "paper")):
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
                 "pimkl_figs1_highest_median_cohorts", "pimkl_figs4_signature_correlation", "mmdt_beats_svm_source",
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
    (lambda d: d["entries"][0]["source"].update(reduce="total"), "'total' is not one of"),
    (lambda d: d["entries"][0].pop("tolerance_source"), "needs a tolerance_source"),
    (lambda d: d["entries"][0].update(tolerance={"rule": "split_sd", "sd_entries": ["nope"]}), "not entry ids"),
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

@pytest.mark.parametrize("entry, reproduced, agrees", [
    ({"value": 0.85, "tolerance": 0.02}, 0.86, True),
    ({"value": 0.85, "tolerance": 0.02}, 0.80, False),
    ({"value": 0.85, "tolerance": 0.02}, math.nan, False),
    ({"bound": {"op": ">", "value": 0.9}, "tolerance": 0.0}, 0.95, True),
    ({"bound": {"op": ">", "value": 0.9}, "tolerance": 0.0}, 0.85, False),
    ({"bound": {"op": ">", "value": 0.9}, "tolerance": 0.1}, 0.85, True),   # slack
    ({"bound": {"op": "<", "value": 0.05}, "tolerance": 0.0}, 0.01, True),
    ({"bound": {"op": "<", "value": 0.05}, "tolerance": 0.0}, 0.2, False),
    ({"bound": {"op": "within", "value": 0.03}, "tolerance": 0.0}, -0.02, True),
    ({"bound": {"op": "within", "value": 0.03}, "tolerance": 0.0}, 0.05, False),
    ({"bound": {"op": "within", "value": 0.03, "center": 1.0}, "tolerance": 0.0}, 0.98, True),
    ({"value": 1e-4, "tolerance": 1.0, "scale": "log10"}, 5e-4, True),
    ({"value": 1e-4, "tolerance": 1.0, "scale": "log10"}, 0.2, False),
    # a p-value judged on the paper's decision at alpha, not on a decade
    ({"value": 0.3217, "tolerance": {"rule": "decision", "alpha": 0.05}, "scale": "log10"}, 0.9, True),
    ({"value": 0.3217, "tolerance": {"rule": "decision", "alpha": 0.05}, "scale": "log10"}, 0.04, False),
    ({"value": 0.0008, "tolerance": {"rule": "decision", "alpha": 0.05}, "scale": "log10"}, 0.03, True),
    ({"value": 0.0008, "tolerance": {"rule": "decision", "alpha": 0.05}, "scale": "log10"}, 0.06, False),
])
def test_judge(entry, reproduced, agrees):
    tol = resolve_tolerance(entry, {})[0] if isinstance(entry["tolerance"], dict) else None
    assert judge(reproduced, entry, tol)[1] is agrees


def test_one_decade_no_longer_matches_a_significant_p_to_a_non_significant_one():
    """The old tolerance (one decade in log10) let p = 0.04 match the paper's
    non-significant 0.3217; the decision rule does not."""
    old = {"value": 0.3217, "tolerance": 1.0, "scale": "log10"}
    assert judge(0.04, old)[1] is True
    new = {**old, "tolerance": {"rule": "decision", "alpha": 0.05}}
    assert judge(0.04, new, 0.05)[1] is False


def test_difference_is_signed():
    # differences of decimal literals: exact up to their binary rounding (pytest.approx's
    # default rel 1e-6 absorbs it), here and in the tables below
    assert judge(0.8, {"value": 0.85, "tolerance": 0.1})[0] == pytest.approx(-0.05)
    assert judge(0.95, {"bound": {"op": ">", "value": 0.9}, "tolerance": 0})[0] == pytest.approx(0.05)
    assert judge(0.05, {"bound": {"op": "within", "value": 0.03}, "tolerance": 0})[0] == pytest.approx(0.02)


@pytest.mark.parametrize("agrees, data, departures, verdict", [
    (True, "paper", [], "reproduced"),
    (False, "paper", [], "differs"),
    (True, "paper", ["beta grid step: 0.01 (paper: 0.1)"],
     "reproduced with a stated deviation: beta grid step: 0.01 (paper: 0.1)"),
    (True, "substitute: GSE2034 for METABRIC", [], "agrees on substitute data: GSE2034 for METABRIC"),
    (True, "substitute: x", ["y"], "agrees on substitute data: x"),     # never 'reproduced'
    (False, "substitute: x", [], "differs on substitute data: x"),
    (True, "synthetic", ["y"], "not comparable on this data"),
])
def test_compose_verdict(agrees, data, departures, verdict):
    assert compose_verdict(agrees, data, departures) == verdict
    assert verdict_kind(verdict) in VERDICT_KINDS


def test_split_sd_tolerance_is_the_papers_spread_of_the_difference():
    """1.96 sqrt(sd_a^2 + sd_b^2) sqrt(1/11 + 1/11): the 95 % band of the
    difference of the paper's and this run's means over 11 splits, from the
    paper's own split-to-split SDs (Table 4: mDKL 0.0033, uBaseline 0.0064)."""
    by_id = {"sd_m": {"value": 0.0033, "where": "Table 4", "condition": {"method": "mDKL"}},
             "sd_u": {"value": 0.0064, "where": "Table 4", "condition": {"method": "uBaseline"}}}
    entry = {"tolerance": {"rule": "split_sd", "sd_entries": ["sd_m", "sd_u"], "n_paper": 11, "n_run": 11}}
    tol, text = resolve_tolerance(entry, by_id)
    assert tol == pytest.approx(1.96 * math.hypot(0.0033, 0.0064) * math.sqrt(2 / 11))
    assert tol < 0.0181 / 2          # the paper's effect (0.8507 - 0.8326) is far outside the band
    assert "Table 4" in text and "11" in text
    single = {"tolerance": {"rule": "split_sd", "sd_entries": ["sd_u"]}}
    assert resolve_tolerance(single, by_id)[0] == pytest.approx(1.96 * 0.0064 * math.sqrt(2))
    sd = {"tolerance": {"rule": "sd_sampling", "sd_entries": ["sd_u"], "n_paper": 11, "n_run": 11}}
    assert resolve_tolerance(sd, by_id)[0] == pytest.approx(1.96 * 0.0064 * math.sqrt(2 / 20))


def test_every_project_tolerance_states_its_source():
    doc = load_paper_values(PAPER_VALUES, SCHEMA)
    by_id = {e["id"]: e for e in doc["entries"]}
    for e in doc["entries"]:
        tol, text = resolve_tolerance(e, by_id)
        assert tol >= 0 and text.strip(), e["id"]
    # the headline Ligand effect mDKL - uBaseline (Table 4: 0.0181) is judged on the difference,
    # with a band narrower than the effect, so that the effect and its absence are told apart
    eff = by_id["dkl_ligand_stability_effect_mdkl_vs_ubaseline"]
    assert eff["value"] == pytest.approx(0.8507 - 0.8326)
    assert resolve_tolerance(eff, by_id)[0] < eff["value"] / 2


# --- data kinds ----------------------------------------------------------------

@pytest.mark.parametrize("source, expect", [
    ({"type": "synthetic", "data": "synthetic"}, "synthetic"),
    ({"type": "edgelist", "data": "paper"}, "paper"),
    ({"type": "gem", "data": "substitute", "data_reason": "rebuilt Ligand"}, "substitute: rebuilt Ligand"),
    ({"type": "synthetic", "data": "paper"}, "paper"),       # declared, not inferred from the type
])
def test_source_data_is_declared(source, expect):
    assert source_data("diffusion", "x", source) == expect


@pytest.mark.parametrize("source, expect", [
    ({"type": "gem"}, r"diffusion.sources.x.data: None; say what"),           # nothing inferred from type
    ({"type": "gem", "data": "substitute"}, r"diffusion.sources.x.data_reason: missing"),
    ({"type": "gem", "data": "real"}, r"diffusion.sources.x.data: 'real'"),
])
def test_source_data_errors_name_the_key(source, expect):
    with pytest.raises(ValueError, match=expect):
        source_data("diffusion", "x", source)


def test_project_configs_declare_their_data():
    """Each shipped source says what it is; only the von Mering network, the
    paper's GEO cohorts and DepMap's PRISM primary screen are the papers' own."""
    paper, subs = set(), set()
    for path in sorted((REPO / "config").glob("*.yaml")):
        doc = yaml.safe_load(path.read_text()) or {}
        for study in ("diffusion", "drug_screen", "depmap", "pimkl"):
            for name, src in ((doc.get(study) or {}).get("sources") or {}).items():
                kind = source_data(study, name, src)
                (paper if kind == "paper" else subs).add((path.name, name, kind))
    assert {(f, n) for f, n, _ in paper} == {
        ("diffusion_vonmering_mips.yaml", n) for n in yaml.safe_load(
            (REPO / "config/diffusion_vonmering_mips.yaml").read_text())["diffusion"]["sources"]} | {
        ("pimkl_geo_table_s1.yaml", "geo_table_s1"), ("depmap_prism_primary.yaml", "prism_primary_19q4")}
    assert ("diffusion_ligand_gem.yaml", "ligand_gem") in {(f, n) for f, n, k in subs if k.startswith("substitute")}


# --- the table ---------------------------------------------------------------

def test_reproduction_table_one_row_per_entry(tmp_path):
    _write_mean_roc(tmp_path, "real")
    table = reproduction_table(_doc(), tmp_path, _ctx())
    assert list(table["id"]) == ["t2_mdkl", "mdkl_beats_e", "vm_mdkl", "pk_auc"]
    row = table.set_index("id")
    assert row.loc["t2_mdkl", "reproduced"] == pytest.approx(0.86)
    assert row.loc["t2_mdkl", "difference"] == pytest.approx(0.01)
    assert row.loc["t2_mdkl", "verdict"] == "reproduced"
    assert row.loc["t2_mdkl", "data"] == "paper" and row.loc["t2_mdkl", "protocol"] == "paper"
    assert row.loc["mdkl_beats_e", "reproduced"] == pytest.approx(0.04)
    assert row.loc["mdkl_beats_e", "verdict"] == "reproduced"
    assert row.loc["vm_mdkl", "verdict"] == "not run" and "dkl_vonmering" in row.loc["vm_mdkl", "note"]
    assert row.loc["pk_auc", "verdict"] == "not run" and "pimkl" in row.loc["pk_auc", "note"]
    assert set(verdict_counts(table)) == set(VERDICT_KINDS) and sum(verdict_counts(table).values()) == 4


def test_synthetic_data_is_not_comparable_but_shown(tmp_path):
    _write_mean_roc(tmp_path, "synthetic", mdkl=0.95)
    table = reproduction_table(_doc(), tmp_path, _ctx(("synthetic", "synthetic"))).set_index("id")
    assert table.loc["t2_mdkl", "verdict"] == "not comparable on this data"
    assert table.loc["t2_mdkl", "reproduced"] == pytest.approx(0.95)
    assert "differ" in table.loc["t2_mdkl", "note"]          # what the numbers alone would say


def test_substitute_data_never_reproduces(tmp_path):
    """The rebuilt Ligand network is not the paper's: the same numbers that
    would reproduce on the paper's data say 'agrees on substitute data'."""
    _write_mean_roc(tmp_path, "real")
    table = reproduction_table(_doc(), tmp_path, _ctx(("real", "substitute: rebuilt Ligand"))).set_index("id")
    assert table.loc["t2_mdkl", "verdict"] == "agrees on substitute data: rebuilt Ligand"
    assert table.loc["t2_mdkl", "data"] == "substitute: rebuilt Ligand"
    assert not table["verdict"].str.startswith("reproduced").any()


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
    assert select_value(t, {"select": {"m": "p", "n": {"<": 3}}, "column": "y", "reduce": "sum"}, "e", "t") == \
        pytest.approx(1.2)


def _s9a_doc():
    return {"version": 1, "papers": {"p": {"title": "A paper", "file": "a.txt"}}, "entries": [
        {"id": "dm_small_n", "paper": "p", "where": "SI Fig. S9a", "condition": {"dataset": "d", "metric": "m"},
         "bound": {"op": ">", "value": 0.0}, "tolerance": 0.0, **_TS,
         "source": {"study": "depmap", "table": "s9a.tsv",
                    "select": {"model": "projection", "n_train": {"<": 2000}}, "column": "mean",
                    "each": "n_train", "each_reduce": "min",
                    "versus": {"select": {"model": "baseline"}, "column": "mean"}}}]}


def test_s9a_small_n_claim_checks_every_size_below_2000(tmp_path):
    """'greatly improved when there are fewer than 2000 samples': projection
    above baseline at every size below 2,000, not only the smallest; a size
    of 2,000 or more does not count."""
    n = [10, 100, 1000, 4000]
    t = pd.DataFrame({"model": ["projection"] * 4 + ["baseline"] * 4, "n_train": n * 2,
                      "mean": [0.3, 0.2, 0.10, 0.1, 0.1, 0.1, 0.12, 0.5]})
    t.to_csv(tmp_path / "s9a.tsv", sep="\t", index=False)
    ctx = Context.from_mapping({"studies": ["depmap"]})
    row = reproduction_table(_s9a_doc(), tmp_path, ctx).iloc[0]
    assert row["reproduced"] == pytest.approx(-0.02) and row["verdict"] == "differs"   # n = 1000 fails
    t.loc[(t["model"] == "projection") & (t["n_train"] == 1000), "mean"] = 0.15
    t.to_csv(tmp_path / "s9a.tsv", sep="\t", index=False)
    row = reproduction_table(_s9a_doc(), tmp_path, ctx).iloc[0]
    assert row["reproduced"] == pytest.approx(0.03) and row["verdict"] == "reproduced"


# --- directional claims --------------------------------------------------------

def _significance_doc():
    return {"version": 1, "papers": {"p": {"title": "A paper", "file": "a.txt"}}, "entries": [
        {"id": "dkl_vonmering_significant_dkl_vs_ubaseline", "paper": "p", "where": "Table 6 (text)",
         "condition": {"dataset": "von Mering", "metric": "Wilcoxon p-value"},
         "bound": {"op": "<", "value": 0.05}, "tolerance": 0.0, **_TS,
         "direction": {"table": "diffusion/{dkl_vonmering}/tables/mean_roc.tsv", "column": "mean_roc",
                       "better": {"method": "DKL"}, "than": {"method": "uBaseline"}},
         "source": {"study": "diffusion", "table": "diffusion/{dkl_vonmering}/tables/wilcoxon.tsv",
                    "select": {"method": "uBaseline"}, "column": "DKL"}}]}


def _write_vonmering(results: Path, dkl: float, p: float):
    d = results / "diffusion/vm/tables"
    d.mkdir(parents=True, exist_ok=True)
    pd.DataFrame({"method": ["DKL", "uBaseline"], "mean_roc": [dkl, 0.802]}).to_csv(d / "mean_roc.tsv", sep="\t",
                                                                                   index=False)
    pd.DataFrame({"method": ["DKL", "uBaseline"], "DKL": [math.nan, p], "uBaseline": [p, math.nan]}).to_csv(
        d / "wilcoxon.tsv", sep="\t", index=False)


def test_significantly_worse_is_not_the_papers_claim(tmp_path):
    """The real von Mering run (split 00): DKL 0.735 against uBaseline 0.802,
    p = 2.7e-4 (two-sided). Significant, but in the other direction: the
    paper's claim ('better') differs."""
    _write_vonmering(tmp_path, dkl=0.735, p=2.7e-4)
    ctx = Context.from_mapping({"studies": ["diffusion"], "placeholders": {"dkl_vonmering": {"vm": "paper"}}})
    row = reproduction_table(_significance_doc(), tmp_path, ctx).iloc[0]
    assert row["verdict"] == "differs"
    assert "against the paper's direction" in row["note"] and "-0.067" in row["note"]
    _write_vonmering(tmp_path, dkl=0.84, p=2.7e-4)
    assert reproduction_table(_significance_doc(), tmp_path, ctx).iloc[0]["verdict"] == "reproduced"


def test_project_significance_rows_carry_the_papers_direction():
    doc = load_paper_values(PAPER_VALUES, SCHEMA)
    for e in doc["entries"]:
        if "_significant_" in e["id"] or ("_wilcoxon_" in e["id"] and e["value"] < 0.05):
            d = e.get("direction")
            assert d and d["column"] == "mean_roc", e["id"]
        if "_significant_" in e["id"]:
            assert e["direction"]["better"]["method"].lower() == e["id"].split("_significant_")[1].split("_vs_")[0]


# --- protocol departures -------------------------------------------------------

def _diffusion_ctx(config, data="paper"):
    return Context.from_mapping({"studies": ["diffusion"],
                                 "placeholders": {"dkl_ligand": {ds: data for ds in config["sources"]},
                                                  "dkl_vonmering": {}, "pk_dataset": {}},
                                 "protocols": load_protocols(PROTOCOLS), "config": {"diffusion": config}})


def _nc_doc():
    doc = _doc()
    nc = copy.deepcopy(doc["entries"][0])
    nc.update(id="dkl_ligand_mean_roc_neighbor_counting")
    nc["source"]["select"] = {"method": "Neighbor Counting"}
    t2 = copy.deepcopy(doc["entries"][0])
    t2["id"] = "dkl_ligand_mean_roc_mdkl"
    doc["entries"] = [t2, nc]
    return doc


def test_departures_come_from_the_config_and_label_only_rows_they_affect(tmp_path):
    """A data set with a finer beta grid: its mDKL row says so, its Neighbor
    Counting row (no kernel) does not; nothing is typed per data set."""
    for ds in ("real", "real_fine"):
        d = tmp_path / f"diffusion/{ds}/tables"
        d.mkdir(parents=True, exist_ok=True)
        pd.DataFrame({"method": ["mDKL", "Neighbor Counting"], "mean_roc": [0.85, 0.70]}).to_csv(
            d / "mean_roc.tsv", sep="\t", index=False)
    config = {"beta_step": 0.1, "n_kernels": 60, "lam": 1e-6, "classifier": "svm", "n_random_splits": 10,
              "sources": {"real": {"type": "edgelist"}, "real_fine": {"type": "edgelist", "beta_step": 0.01}}}
    table = reproduction_table(_nc_doc(), tmp_path, _diffusion_ctx(config))
    rows = {(r["id"], r["note"]): r for _, r in table.iterrows()}
    fine = rows[("dkl_ligand_mean_roc_mdkl", "dkl_ligand=real_fine")]
    assert "beta grid step: 0.01 (paper: beta_i = -0.1 x i)" in fine["protocol"]
    # 0.85 against the paper's 0.85 +- 0.02: the numbers agree, the departure labels the verdict
    assert fine["verdict"].startswith("reproduced with a stated deviation: ")
    nc_fine = rows[("dkl_ligand_mean_roc_neighbor_counting", "dkl_ligand=real_fine")]
    nc = rows[("dkl_ligand_mean_roc_neighbor_counting", "dkl_ligand=real")]
    assert "beta" not in nc_fine["protocol"] and nc_fine["protocol"] == nc["protocol"]
    # the protocol's own data set departs only where every run does (the unpublished split)
    proto = rows[("dkl_ligand_mean_roc_mdkl", "dkl_ligand=real")]
    assert proto["protocol"].startswith("split 00:") and "beta" not in proto["protocol"]


def test_stability_rows_depart_with_fewer_than_ten_random_splits(tmp_path):
    from biokernels.departures import row_departures

    settings = load_protocols(PROTOCOLS)["diffusion"]
    cfg = {"beta_step": 0.1, "n_kernels": 60, "lam": 1e-6, "classifier": "svm", "n_random_splits": 2,
           "sources": {"a": {}}}
    dep = row_departures("dkl_ligand_stability_mean_mdkl", settings, cfg, {"dkl_ligand": "a"})
    assert any(d.startswith("random splits of the stability test: 2") for d in dep)
    assert not any("random splits" in d
                   for d in row_departures("dkl_ligand_mean_roc_mdkl", settings, cfg, {"dkl_ligand": "a"}))


def test_label_verdict_and_verdict_kind():
    assert label_verdict("reproduced", None) == "reproduced"
    assert label_verdict("differs", "x") == "differs with a stated deviation: x"
    assert label_verdict("not run", "x") == "not run"
    for v in VERDICT_KINDS:
        assert verdict_kind(v) == v
    assert verdict_kind("reproduced with a stated deviation: a: b") == "reproduced with a stated deviation"
    assert verdict_kind("agrees on substitute data: x") == "agrees on substitute data"
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


def test_an_entrys_own_deviation_labels_its_row(tmp_path):
    doc = _doc()
    doc["entries"] = doc["entries"][:1]
    doc["entries"][0]["deviation"] = "another split"
    _write_mean_roc(tmp_path, "real", mdkl=0.84)
    table = reproduction_table(doc, tmp_path, _ctx())
    assert table.iloc[0]["verdict"] == "reproduced with a stated deviation: another split"
    assert table.iloc[0]["protocol"] == "another split"
    html = table_html(table, doc)
    assert "<th>protocol</th>" in html and "reproduced with a stated deviation" in html


def test_several_configured_datasets_give_one_row_each(tmp_path):
    _write_mean_roc(tmp_path, "a")
    _write_mean_roc(tmp_path, "b", mdkl=0.7)
    ctx = Context.from_mapping({"studies": ["diffusion"], "placeholders": {
        "dkl_ligand": {"a": "paper", "b": "paper"}, "dkl_vonmering": {}, "pk_dataset": {}}})
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


def test_a_method_a_departing_data_set_did_not_run_is_not_run_there(tmp_path):
    """SM1 is skipped on data sets that depart from the protocol by default:
    their tables lack the row, which is 'not run' there and still an error on
    the protocol's."""
    doc = _doc()
    doc["entries"] = doc["entries"][:1]                    # selects method mDKL
    doc["entries"][0]["id"] = "dkl_ligand_mean_roc_mdkl"
    _write_mean_roc(tmp_path, "real", mdkl=0.85)
    _write_mean_roc(tmp_path, "real_dev", drop="mDKL")
    config = {"beta_step": 0.1, "n_kernels": 60, "lam": 1e-6, "classifier": "svm",
              "sources": {"real": {}, "real_dev": {"laplacian": "normalized"}}}
    table = reproduction_table(doc, tmp_path, _diffusion_ctx(config))
    dev = table[table["note"].str.contains("real_dev")].iloc[0]
    assert dev["verdict"] == "not run" and "graph Laplacian: normalized" in dev["protocol"]
    _write_mean_roc(tmp_path, "real", drop="mDKL")
    with pytest.raises(SelectorError):
        reproduction_table(doc, tmp_path, _diffusion_ctx(config))
