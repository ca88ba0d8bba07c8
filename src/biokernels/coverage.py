"""Coverage of the papers: every figure and table of the four papers, and what
this run makes of it.

``config/coverage.yaml`` (schema ``workflow/schemas/coverage.schema.yaml``)
lists one item per figure, table, theorem and text-only result of each paper.
:func:`coverage_table` gives each a status (``reproduced``, ``differs``,
``agrees on substitute data``, ``analogue``, ``not run``) from the verdicts
of the reproduction-table rows of its entries (the rule, first match wins, is
in ``docs/report_notes.md``); a verdict head outside :data:`VERDICT_HEADS` is
an error naming the item.

Pure library: no Snakemake; ``workflow/scripts/coverage_table.py`` is the
rule's entry.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import pandas as pd

from biokernels.schema_check import schema_messages

STATUSES = ("reproduced", "differs", "agrees on substitute data", "analogue", "not run")
FIXED_STATUSES = ("not run", "analogue")
COLUMNS = ["paper", "item", "shows", "status", "data", "target", "entries", "why"]

PAPER_DIFFERS = ("differs", "differs with a stated deviation")
PAPER_REPRODUCED = ("reproduced", "reproduced with a stated deviation")
SUBSTITUTE_DIFFERS = "differs on substitute data"
SUBSTITUTE_AGREES = "agrees on substitute data"
NOT_COMPARABLE = "not comparable on this data"
NOT_RUN = "not run"
#: The heads of the reproduction table's verdicts (the text before the first ':').
VERDICT_HEADS = (*PAPER_REPRODUCED, *PAPER_DIFFERS, SUBSTITUTE_AGREES, SUBSTITUTE_DIFFERS, NOT_COMPARABLE,
                 NOT_RUN)
# most notes quoted in a completed `why`
_MAX_NOTES = 3
_DEFAULT_SCHEMA = Path(__file__).resolve().parents[2] / "workflow" / "schemas" / "coverage.schema.yaml"


class CoverageError(ValueError):
    """coverage.yaml does not follow its schema, or names what does not exist
    (one line per problem, naming the item)."""


# ---------------------------------------------------------------------------
# loading and validation

def _label(item, index) -> str:
    if isinstance(item, Mapping):
        return f"item {item.get('paper', '?')}/{item.get('item', '?')!r}"
    return f"item #{index}"


def schema_errors(doc, schema_path: str | Path = _DEFAULT_SCHEMA) -> list[str]:
    """One line per problem of a coverage document, naming the item where
    there is one (e.g. ``"item transfer/'Fig. 2a' (items.3.status): 'done'
    is not one of ['not run', 'analogue']"``); empty when valid. Also checks
    what the schema cannot: each (paper, item) once."""
    def label(path):
        if len(path) >= 2 and path[0] == "items" and isinstance(doc, Mapping):
            try:
                return _label(doc["items"][path[1]], path[1])
            except (IndexError, KeyError, TypeError):
                return None
        return None

    lines = schema_messages(doc, schema_path, label)
    if lines:
        return lines
    seen = set()
    for i, item in enumerate(doc["items"]):
        key = (item["paper"], item["item"])
        if key in seen:
            lines.append(f"{_label(item, i)} (items.{i}): listed twice")
        seen.add(key)
    return lines


def load_coverage(path: str | Path, schema_path: str | Path = _DEFAULT_SCHEMA) -> list[dict]:
    """The items of coverage.yaml, validated; :class:`CoverageError` lists
    every problem."""
    import yaml

    doc = yaml.safe_load(Path(path).read_text())
    problems = schema_errors(doc, schema_path)
    if problems:
        raise CoverageError(f"{path} is not valid:\n" + "\n".join(problems))
    return doc["items"]


def reference_errors(items: Iterable[Mapping], entry_ids: Iterable[str] | None = None,
                     rules: Iterable[str] | None = None, papers: Iterable[str] | None = None) -> list[str]:
    """One line per item naming an entry id not in ``entry_ids``, a target
    not in ``rules`` or a paper not in ``papers`` (each check skipped when
    its collection is None)."""
    ids = None if entry_ids is None else set(entry_ids)
    names = None if rules is None else set(rules)
    keys = None if papers is None else set(papers)
    lines = []
    for i, item in enumerate(items):
        label = _label(item, i)
        if keys is not None and item["paper"] not in keys:
            lines.append(f"{label}: paper {item['paper']!r} is not a paper of paper_values.yaml ({sorted(keys)})")
        if ids is not None:
            for e in item.get("entries") or []:
                if e not in ids:
                    lines.append(f"{label}: entry {e!r} is not in paper_values.yaml")
        if names is not None and item.get("target") is not None and item["target"] not in names:
            lines.append(f"{label}: target {item['target']!r} is not a rule of the workflow")
    return lines


# ---------------------------------------------------------------------------
# status

def verdict_head(verdict: str) -> str:
    """The head of a reproduction-table verdict (the text before the first
    ':'), e.g. ``"reproduced with a stated deviation"``; ValueError when it
    is not one of :data:`VERDICT_HEADS`."""
    head = str(verdict).split(":", 1)[0].strip()
    if head not in VERDICT_HEADS:
        raise ValueError(f"verdict {verdict!r}: its head {head!r} is not one of {VERDICT_HEADS}")
    return head


def _plural(n: int, head: str) -> str:
    return f"{n} row{'s' if n != 1 else ''}: {head}"


def _run_note(heads: pd.Series, rows: pd.DataFrame, deciding: pd.Series) -> str:
    """``"this run: 2 rows: reproduced, 1 row: differs (data: ...; note)"``:
    the verdicts of all the item's rows; the data and notes of those that
    decided."""
    counts = ", ".join(_plural(int(n), h) for h, n in heads.value_counts(sort=False).items())
    notes = []
    for col, prefix in (("data", "data: "), ("note", "")):   # `data`: paper / synthetic / substitute: <what>
        if col not in rows.columns:
            continue
        for n in rows.loc[deciding, col]:
            n = "" if pd.isna(n) else str(n).strip()
            if n and prefix + n not in notes:
                notes.append(prefix + n)
    text = f"this run: {counts}"
    if notes:
        more = f"; +{len(notes) - _MAX_NOTES} more" if len(notes) > _MAX_NOTES else ""
        text += " (" + "; ".join(notes[:_MAX_NOTES]) + more + ")"
    return text


def item_status(item: Mapping, reproduction: pd.DataFrame,
                built: Mapping[str, bool] | None = None) -> tuple[str, str]:
    """``(status, why)`` of one item (the rule: ``docs/report_notes.md``):
    ``why`` is the item's, completed with the rows' verdicts and notes where
    the status comes from them. ``built``: target -> whether this run built
    its outputs; a fixed ``analogue`` needs its target built (default: every
    target counts as built)."""
    why = str(item.get("why") or "").strip()
    entries = list(item.get("entries") or [])
    if "id" in reproduction.columns and entries:
        rows = reproduction[reproduction["id"].isin(entries)]
    else:
        rows = reproduction.iloc[0:0]
    try:
        heads = rows["verdict"].map(verdict_head) if len(rows) else pd.Series([], dtype=object)
    except ValueError as err:
        raise ValueError(f"{_label(item, '?')}: {err}") from None
    ran = heads != NOT_RUN
    fixed = item.get("status")
    rules = [(heads.isin(PAPER_DIFFERS), "differs"), (heads.isin(PAPER_REPRODUCED), "reproduced"),
             (heads == SUBSTITUTE_DIFFERS, "differs"), (heads == SUBSTITUTE_AGREES, SUBSTITUTE_AGREES),
             (heads == NOT_COMPARABLE, "analogue")]
    for mask, status in rules:
        if mask.any():
            return status, _join(why, _run_note(heads, rows, mask))
    assert not ran.any()
    if fixed == "analogue" and item.get("target") and built is not None and not built.get(item["target"]):
        return NOT_RUN, _join(why, f"this run did not build {item['target']}")
    if fixed in FIXED_STATUSES and (fixed != "analogue" or item.get("target")):
        return fixed, why
    if len(rows):
        return NOT_RUN, _join(why, _run_note(heads, rows, ~ran))
    return NOT_RUN, why


def _join(why: str, note: str) -> str:
    return f"{why.rstrip('.')}. {note}" if why else note


def coverage_table(items: Iterable[Mapping], reproduction: pd.DataFrame,
                   built: Mapping[str, bool] | None = None) -> pd.DataFrame:
    """One row per item (columns :data:`COLUMNS`), its status from the rows
    of ``reproduction`` (the reproduction table) whose ``id`` is among its
    entries and, for a fixed ``analogue``, whether ``built`` says its target
    ran (:func:`item_status`). ``entries`` is the ids joined by ", ",
    ``target`` the rule name or "" for none."""
    rows = []
    for item in items:
        status, why = item_status(item, reproduction, built)
        rows.append({"paper": item["paper"], "item": item["item"], "shows": item["shows"], "status": status,
                     "data": item["data"], "target": item.get("target") or "",
                     "entries": ", ".join(item.get("entries") or []), "why": why})
    return pd.DataFrame(rows, columns=COLUMNS)


def status_counts(table: pd.DataFrame) -> dict[str, int]:
    """Items per status (:data:`STATUSES`, zeros included)."""
    counts = table["status"].value_counts()
    unknown = set(counts.index) - set(STATUSES)
    if unknown:
        raise ValueError(f"statuses {sorted(unknown)} are not among {STATUSES}")
    return {s: int(counts.get(s, 0)) for s in STATUSES}


# ---------------------------------------------------------------------------
# HTML

_COLORS = {"reproduced": "#d8f0d8", "differs": "#f6d5d5", "agrees on substitute data": "#e8f3c6",
           "analogue": "#eeeeee", "not run": "#fdf3d0"}


def _esc(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def coverage_html(table: pd.DataFrame, titles: Mapping[str, str] | None = None) -> str:
    """The coverage table as a self-contained HTML page (a report item, in
    the style of :func:`biokernels.report.table_html`): items per status and
    paper on top, then one table per paper. ``titles``: paper key -> title
    (paper_values.yaml's ``papers``), also giving the order."""
    titles = dict(titles or {})
    papers = [p for p in titles if (table["paper"] == p).any()]
    papers += [p for p in dict.fromkeys(table["paper"]) if p not in papers]
    parts = ["<!DOCTYPE html><html><head><meta charset='utf-8'><title>Coverage of the papers</title>",
             "<style>body{font-family:sans-serif;font-size:12px;margin:8px}table{border-collapse:collapse;"
             "margin-bottom:12px}td,th{border:1px solid #ccc;padding:2px 5px;vertical-align:top}"
             "th{background:#f0f0f0}td.n{text-align:right;white-space:nowrap}td.id{font-family:monospace;"
             "font-size:11px;color:#555}</style></head><body>",
             "<h1>Coverage of the papers</h1>",
             "<p>Every figure and table of the four papers (<code>config/coverage.yaml</code>; "
             "<code>results/coverage.tsv</code>) and what this run makes of it. <i>reproduced</i> / "
             "<i>differs</i>: judged by the numbers of <code>results/reproduction.tsv</code> on the paper's data "
             "(<i>differs</i> also on substitute data); <i>agrees on substitute data</i>: judged on other real "
             "data; <i>analogue</i>: the workflow builds a counterpart on other (e.g. synthetic) data that no "
             "paper number judges here; <i>not run</i>: nothing of this run stands for it (the <i>why</i> "
             "column says why).</p>",
             "<table><tr><th>paper</th>" + "".join(f"<th>{s}</th>" for s in STATUSES) + "<th>all</th></tr>"]
    for key in papers:
        c = status_counts(table[table["paper"] == key])
        parts.append(f"<tr><td>{_esc(titles.get(key, key))}</td>" + "".join(
            f"<td class='n' style='background:{_COLORS[s]}'>{c[s]}</td>" for s in STATUSES)
                     + f"<td class='n'>{sum(c.values())}</td></tr>")
    c = status_counts(table)
    parts.append("<tr><th>all</th>" + "".join(f"<th>{c[s]}</th>" for s in STATUSES)
                 + f"<th>{len(table)}</th></tr></table>")
    head = ["item", "shows", "status", "data (paper vs this workflow)", "target", "why", "entries"]
    for key in papers:
        sub = table[table["paper"] == key]
        parts.append(f"<h2>{_esc(titles.get(key, key))}</h2><table><tr>"
                     + "".join(f"<th>{h}</th>" for h in head) + "</tr>")
        for _, r in sub.iterrows():
            cells = [(r["item"], ""), (r["shows"], ""), (r["status"], ""), (r["data"], ""),
                     (r["target"], "id"), (r["why"], ""), (r["entries"], "id")]
            parts.append(f"<tr style='background:{_COLORS[r['status']]}'>"
                         + "".join(f"<td class='{cls}'>{_esc(str(v))}</td>" for v, cls in cells) + "</tr>")
        parts.append("</table>")
    parts.append("</body></html>")
    return "\n".join(parts)
