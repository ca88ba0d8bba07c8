"""biokernels.coverage and config/coverage.yaml: every figure and table the
papers mention has an item, every entry and target an item names exists, the
status rule on small hand-made reproduction tables, the schema's messages."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pandas as pd
import pytest
import yaml

from biokernels.coverage import (COLUMNS, STATUSES, CoverageError, coverage_html, coverage_table, item_status,
                                 load_coverage, reference_errors, schema_errors, status_counts, verdict_head)

REPO = Path(__file__).resolve().parents[3]
COVERAGE = REPO / "config/coverage.yaml"
SCHEMA = REPO / "workflow/schemas/coverage.schema.yaml"
PAPER_VALUES = REPO / "config/paper_values.yaml"
PAPERS_DIR = REPO.parent / "shared" / "papers"


def _paper_values() -> dict:
    return yaml.safe_load(PAPER_VALUES.read_text())


# ---------------------------------------------------------------------------
# (a) every figure and table the paper texts mention has an item

# How the four texts name figures and tables: "Fig. 2a", "Figure 3(a)",
# "Figure 4 a and b", "Fig. 4c and d", "SI Fig. S2a and b", "Supplementary
# Figure S1", "Figures S1", "Table 5", "Supplementary Table S2" (the numbers
# sometimes after a no-break space, which \s matches). A panel letter counts
# only when no other letter follows it ("Figure 3 contains" has none).
_MENTION = re.compile(
    r"\b(?P<kind>Figures?|Figs?\.|Tables?)\s*(?P<num>S?\d+)"
    r"(?:\s?\(?(?P<panel>[a-h])\)?(?![A-Za-z]))?"
    r"(?:\s*(?:and|,)\s*(?P<panel2>[a-h])(?![A-Za-z]))?")
# How coverage.yaml names them: "Fig. 2a", "SI Fig. S7", "Table 3", "SI Table S1", "Fig. 3 (left)"
_ITEM = re.compile(r"^(?:SI\s+)?(?P<kind>Fig\.|Table)\s+(?P<num>S?\d+)(?P<panel>[a-z])?(?![A-Za-z0-9])")


def _kind(word: str) -> str:
    return "Table" if word.startswith("Table") else "Fig"


def mentions(text: str) -> set[tuple[str, str, str | None]]:
    """(kind, number, panel or None) of every figure and table a text names."""
    found = set()
    for m in _MENTION.finditer(text):
        kind, num = _kind(m["kind"]), m["num"]
        panels = [p for p in (m["panel"], m["panel2"]) if p]
        found |= {(kind, num, p) for p in panels} or {(kind, num, None)}
    return found


def item_keys(items) -> dict[str, set[tuple[str, str, str | None]]]:
    keys: dict[str, set] = {}
    for it in items:
        m = _ITEM.match(it["item"])
        if m:
            keys.setdefault(it["paper"], set()).add((_kind(m["kind"]), m["num"], m["panel"]))
    return keys


def test_the_scanner_reads_each_texts_way_of_naming():
    text = ("In Fig. 2a, we ... SI Fig. S2a and b ... Figure 4 a and b show ... Figure 4c and d ... "
            "Fig. 4e and f, we ... Figure 3(a) ... Supplementary Table S1 ... Figure\u00a03 contains ... "
            "<p>Table 7</p> ... Table 1 for ... Figures S1 and 3(a)")
    assert mentions(text) == {("Fig", "2", "a"), ("Fig", "S2", "a"), ("Fig", "S2", "b"), ("Fig", "4", "a"),
                              ("Fig", "4", "b"), ("Fig", "4", "c"), ("Fig", "4", "d"), ("Fig", "4", "e"),
                              ("Fig", "4", "f"), ("Fig", "3", "a"), ("Table", "S1", None), ("Fig", "3", None),
                              ("Table", "7", None), ("Table", "1", None), ("Fig", "S1", None)}


def test_every_figure_and_table_of_the_papers_has_an_item():
    """A figure or table a paper text names but coverage.yaml lacks is an
    experiment nobody has said anything about: the table must list it
    (as not run, with why, at the least). A mention without a panel is covered
    by any item of that figure; one with a panel by that panel's item or the
    whole figure's."""
    if not PAPERS_DIR.is_dir():
        pytest.skip(f"{PAPERS_DIR} is absent (the paper texts live beside the repository)")
    papers = _paper_values()["papers"]
    keys = item_keys(load_coverage(COVERAGE, SCHEMA))
    missing = []
    seen = {}
    for paper, meta in papers.items():
        path = PAPERS_DIR / meta["file"]
        if not path.exists():
            pytest.skip(f"{path} is absent")
        seen[paper] = found = mentions(path.read_text())
        have = keys.get(paper, set())
        for kind, num, panel in sorted(found, key=str):
            whole = (kind, num, None) in have
            ok = whole or ((kind, num, panel) in have if panel else any(k[:2] == (kind, num) for k in have))
            if not ok:
                missing.append(f"{paper}: {'SI ' if num.startswith('S') else ''}"
                               f"{'Fig.' if kind == 'Fig' else 'Table'} {num}{panel or ''}")
    assert not missing, "mentioned in the paper texts, no item in config/coverage.yaml:\n" + "\n".join(missing)
    # the scanner saw what each text is known to name (else a change of the
    # texts' format would let this test pass on nothing)
    assert {("Table", "7", None), ("Fig", "8", None)} <= seen["diffusion"]
    assert {("Fig", "2", "a"), ("Fig", "S9", "a"), ("Fig", "S7", None), ("Fig", "4", "f")} <= seen["transfer"]
    assert {("Table", "S2", None), ("Fig", "S4", None), ("Fig", "3", "b")} <= seen["pimkl"]
    assert {("Fig", "3", None), ("Fig", "6", None)} <= seen["mmdt"]


# ---------------------------------------------------------------------------
# (b) every entry id and target names something that exists

def test_entries_targets_and_papers_exist(workflow_rules):
    pv = _paper_values()
    items = load_coverage(COVERAGE, SCHEMA)
    # the rules as Snakemake parses them (some, e.g. diffusion_table2, are made in a loop)
    rules = set(workflow_rules)
    assert {"reproduction_table", "coverage_table", "diffusion_table2", "mmdt_fig_digits"} <= rules
    assert reference_errors(items, entry_ids=[e["id"] for e in pv["entries"]], rules=rules,
                            papers=pv["papers"]) == []
    assert {it["paper"] for it in items} == set(pv["papers"]), "every paper has items"


def test_every_paper_value_belongs_to_an_item():
    """Each number of paper_values.yaml is about some figure, table or text
    result: an entry no item lists would judge nothing in the coverage table."""
    used = {e for it in load_coverage(COVERAGE, SCHEMA) for e in it["entries"]}
    orphans = sorted(e["id"] for e in _paper_values()["entries"] if e["id"] not in used)
    assert not orphans, f"entries of paper_values.yaml that no item of config/coverage.yaml lists: {orphans}"


def test_reference_errors_name_the_item():
    items = [{"paper": "transfer", "item": "Fig. 2a", "target": "no_such_rule", "entries": ["nope"]},
             {"paper": "other", "item": "Table 1", "target": None, "entries": []}]
    lines = reference_errors(items, entry_ids=["a"], rules={"diffusion_table2"}, papers={"transfer"})
    assert lines == ["item transfer/'Fig. 2a': entry 'nope' is not in paper_values.yaml",
                     "item transfer/'Fig. 2a': target 'no_such_rule' is not a rule of the workflow",
                     "item other/'Table 1': paper 'other' is not a paper of paper_values.yaml (['transfer'])"]


# ---------------------------------------------------------------------------
# (c) the status rule, on hand-made reproduction tables

def _item(entries=("e1", "e2", "e3"), target="diffusion_table2", status=None, why="Because."):
    it = {"paper": "diffusion", "item": "Table 2", "shows": "s", "target": target, "entries": list(entries),
          "data": "d", "why": why}
    if status:
        it["status"] = status
    return it


def _repro(*verdicts, notes=None, ids=None, data=None):
    ids = ids or [f"e{i + 1}" for i in range(len(verdicts))]
    notes = notes or [f"note {i + 1}" for i in range(len(verdicts))]
    t = pd.DataFrame({"id": ids, "verdict": list(verdicts), "note": notes})
    if data:
        t["data"] = data
    return t


@pytest.mark.parametrize("verdicts, status", [
    # 1. a differs-kind row on the paper's data wins over everything
    (["reproduced", "differs", "agrees on substitute data: x"], "differs"),
    (["reproduced", "differs with a stated deviation: beta step 0.05", "not run"], "differs"),
    # 2. else a reproduced-kind row, even beside a substitute that differs
    (["reproduced with a stated deviation: beta step 0.05", "differs on substitute data: GSE2034",
      "not comparable on this data"], "reproduced"),
    # 3. else a substitute that differs, beside one that agrees
    (["differs on substitute data: GSE2034", "agrees on substitute data: GSE7390",
      "not comparable on this data"], "differs"),
    # 4. else one that agrees
    (["agrees on substitute data: digits", "not comparable on this data", "not run"], "agrees on substitute data"),
    # 5. else numbers on synthetic data: an analogue
    (["not comparable on this data", "not run"], "analogue"),
    # 6. nothing ran and no fixed status
    (["not run", "not run"], "not run"),
])
def test_status_branches(verdicts, status):
    got, _ = item_status(_item(), _repro(*verdicts))
    assert got == status


def test_why_is_completed_from_the_deciding_rows():
    repro = _repro("not comparable on this data", "not comparable on this data", "not run",
                   notes=["dkl_ligand=ligand_synthetic; data other than the paper's (the numbers: reproduced)",
                          "dkl_ligand=ligand_synthetic; data other than the paper's (the numbers: differs)",
                          "not built: x.tsv"], data=["synthetic", "synthetic", "synthetic"])
    status, why = item_status(_item(), repro)
    assert status == "analogue"
    assert why.startswith("Because. this run: 2 rows: not comparable on this data, 1 row: not run (data: synthetic; ")
    assert "ligand_synthetic" in why and "the numbers: differs" in why
    assert "not built" not in why          # the not-run row did not decide


def test_why_quotes_at_most_three_notes():
    repro = _repro(*["differs"] * 5, ids=["e1"] * 5)
    _, why = item_status(_item(entries=["e1"]), repro)
    assert why.endswith("(note 1; note 2; note 3; +2 more)")


def test_fixed_status_applies_only_when_no_entry_row_ran():
    not_run = _repro("not run", "not run")
    # nothing ran: the fixed status, the item's why as it is
    assert item_status(_item(status="analogue"), not_run) == ("analogue", "Because.")
    assert item_status(_item(status="not run", target=None), not_run) == ("not run", "Because.")
    assert item_status(_item(entries=[], status="analogue"), _repro()) == ("analogue", "Because.")
    # an analogue needs a target (the schema says so; the library does not trust it)
    assert item_status(_item(entries=[], target=None, status="analogue"), _repro())[0] == "not run"
    # a row that ran overrides the fixed status
    assert item_status(_item(status="analogue"), _repro("reproduced"))[0] == "reproduced"
    assert item_status(_item(status="not run"), _repro("not comparable on this data"))[0] == "analogue"
    # nothing ran and no fixed status: not run, with what the rows say
    status, why = item_status(_item(), not_run)
    assert status == "not run" and why == "Because. this run: 2 rows: not run (note 1; note 2)"


def test_only_the_items_entries_count():
    repro = pd.concat([_repro("differs", ids=["other"]), _repro("reproduced", ids=["e1"])])
    assert item_status(_item(entries=["e1"]), repro)[0] == "reproduced"
    assert item_status(_item(entries=[]), repro) == ("not run", "Because.")


def test_an_unknown_verdict_names_the_item():
    with pytest.raises(ValueError, match=r"item diffusion/'Table 2'.*'judged'"):
        item_status(_item(), _repro("judged: yes"))
    assert verdict_head("reproduced with a stated deviation: beta grid: 0..6") == "reproduced with a stated deviation"


def test_table_counts_and_html():
    items = [_item(entries=["e1"]), {**_item(entries=[], target=None, status="not run"), "item": "Table 1"},
             {**_item(entries=["e2"]), "paper": "mmdt", "item": "Fig. 6 <left>"}]
    table = coverage_table(items, _repro("reproduced", "not comparable on this data"))
    assert list(table.columns) == COLUMNS
    assert list(table["status"]) == ["reproduced", "not run", "analogue"]
    assert table.loc[1, "target"] == "" and table.loc[0, "entries"] == "e1"
    counts = status_counts(table)
    assert list(counts) == list(STATUSES) and counts["reproduced"] == 1 and counts["differs"] == 0
    html = coverage_html(table, {"diffusion": "Sun, Ji & Ye", "transfer": "no items", "mmdt": "Rodner"})
    assert html.count("<h2>") == 2 and "Sun, Ji &amp; Ye" in html and "Fig. 6 &lt;left&gt;" in html
    assert html.index("Sun, Ji") < html.index("Rodner")


# ---------------------------------------------------------------------------
# (d) the schema

def _doc():
    return {"version": 1, "items": [
        {"paper": "transfer", "item": "Fig. 2a", "shows": "s", "target": None, "entries": [], "data": "d",
         "why": "no data", "status": "not run"},
        {"paper": "mmdt", "item": "Fig. 6", "shows": "s", "target": "mmdt_fig_digits", "entries": ["mmdt_x"],
         "data": "d", "status": "analogue"}]}


def test_the_shipped_file_is_valid():
    doc = yaml.safe_load(COVERAGE.read_text())
    assert schema_errors(doc, SCHEMA) == []
    assert schema_errors(_doc(), SCHEMA) == []


@pytest.mark.parametrize("edit, match", [
    (lambda d: d["items"][0].update(status="done"),
     r"item transfer/'Fig. 2a' \(items.0.status\): 'done' is not one of"),
    (lambda d: d["items"][0].pop("why"), r"item transfer/'Fig. 2a' \(items.0\): 'why' is a required property"),
    (lambda d: d["items"][1].update(target=None, why="w"),
     r"item mmdt/'Fig. 6' \(items.1.target\): None is not of type 'string'"),
    (lambda d: d["items"][1].update(paper="lsmmdt"), r"item lsmmdt/'Fig. 6' \(items.1.paper\)"),
    (lambda d: d["items"][1].pop("data"), r"item mmdt/'Fig. 6' \(items.1\): 'data' is a required property"),
    (lambda d: d["items"][1].update(entries=["Bad-Id"]), r"item mmdt/'Fig. 6' \(items.1.entries.0\)"),
    (lambda d: d["items"][1].update(colour="red"), r"item mmdt/'Fig. 6' \(items.1\): Additional properties"),
    (lambda d: d["items"].append(copy.deepcopy(d["items"][0])), r"item transfer/'Fig. 2a' \(items.2\): listed twice"),
])
def test_the_schema_rejects_a_bad_item_naming_it(tmp_path, edit, match):
    doc = _doc()
    edit(doc)
    lines = schema_errors(doc, SCHEMA)
    assert any(re.search(match, line) for line in lines), lines
    path = tmp_path / "coverage.yaml"
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(CoverageError, match=match):
        load_coverage(path, SCHEMA)


def test_every_key_of_the_schema_is_described():
    root = yaml.safe_load(SCHEMA.read_text())
    missing = []

    def walk(node, path):
        if not isinstance(node, dict):
            return
        for key, sub in (node.get("properties") or {}).items():
            if not (isinstance(sub, dict) and str(sub.get("description", "")).strip()):
                missing.append(f"{path}.{key}")
            walk(sub, f"{path}.{key}")
        for kw in ("items", "additionalProperties", "then", "else"):
            walk(node.get(kw), path)
        for sub in node.get("allOf") or []:
            walk(sub, path)

    walk(root, "")
    assert not missing, missing


def test_a_fixed_analogue_whose_target_this_run_did_not_build_is_not_run():
    """An item with a fixed status 'analogue' stands for what its target
    builds: in a run that did not build it, the item is 'not run', saying so."""
    import pandas as pd

    from biokernels.coverage import item_status

    item = {"paper": "diffusion", "item": "Fig. 1", "shows": "s", "target": "diffusion_fig1", "entries": [],
            "data": "d", "why": "ROC thresholds", "status": "analogue"}
    empty = pd.DataFrame(columns=["id", "verdict"])
    assert item_status(item, empty, {"diffusion_fig1": True})[0] == "analogue"
    status, why = item_status(item, empty, {"diffusion_fig1": False})
    assert status == "not run" and "did not build diffusion_fig1" in why
    assert item_status(item, empty)[0] == "analogue"      # no information: the target counts as built
