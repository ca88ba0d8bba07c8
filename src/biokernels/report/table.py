"""The reproduction table: every entry resolved against the run's result
tables (one row per configured data set), its verdict counts and its HTML
view."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from biokernels.departures import row_departures
from biokernels.report.context import Context, expand_source
from biokernels.report.judge import _paper_value_text, compose_verdict, judge, resolve_tolerance, verdict_kind
from biokernels.report.kinds import COLUMNS, DEVIATION_LABEL, VERDICT_KINDS, SelectorError
from biokernels.report.select import _reduce, select_rows, select_value


def _read(path: Path, cache: dict) -> pd.DataFrame:
    if path not in cache:
        cache[path] = pd.read_csv(path, sep="\t")
    return cache[path]


def _value_of(src: Mapping, results_dir: Path, cache: dict, entry_id: str) -> float:
    """The entry's number from its (filled) source: the main selection, minus
    (or over) ``versus``; with ``each: <column>``, computed per value of that
    column of the main table (added as a filter to both selections) and
    reduced over them with ``each_reduce``."""
    main = _read(results_dir / src["table"], cache)

    def one(s: Mapping) -> float:
        value = select_value(main, s, entry_id, src["table"])
        if s.get("versus"):
            vs = s["versus"]
            vt = vs.get("table", src["table"])
            other = select_value(_read(results_dir / vt, cache), vs, entry_id, vt)
            value = value - other if vs.get("op", "minus") == "minus" else (value / other if other else math.nan)
        return value

    if not src.get("each"):
        return one(src)
    col = src["each"]
    if col not in main.columns:
        raise SelectorError(f"entry {entry_id!r}: table {src['table']}: no column {col!r} for `each`")
    rows = select_rows(main, src, entry_id, src["table"])
    per = []
    for g in pd.unique(rows[col]):
        s = {**src, "select": {**(src.get("select") or {}), col: g}}
        if s.get("versus"):
            s["versus"] = {**s["versus"], "select": {**(s["versus"].get("select") or {}), col: g}}
        per.append(one(s))
    try:
        return _reduce(np.asarray(per, dtype=float), src.get("each_reduce", "min"))
    except ValueError as err:
        raise SelectorError(f"entry {entry_id!r}: table {src['table']}: each {col!r}: {err}") from None


def _effect(direction: Mapping, results_dir: Path, cache: dict, entry_id: str) -> float:
    """``better - than`` of a directional claim (both selections of
    ``direction``'s table and column)."""
    t = _read(results_dir / direction["table"], cache)
    sel = {"column": direction["column"], "reduce": direction.get("reduce", "single")}
    return (select_value(t, {**sel, "select": direction["better"]}, entry_id, direction["table"])
            - select_value(t, {**sel, "select": direction["than"]}, entry_id, direction["table"]))


def resolve_entry(entry: Mapping, results_dir: str | Path, ctx: Context, cache: dict | None = None,
                  by_id: Mapping[str, Mapping] | None = None) -> list[dict]:
    """Rows of the reproduction table for one entry (one per configured
    combination of its placeholders; one ``not run`` row when none).
    ``by_id``: every entry by id, for tolerances derived from other entries
    (default: this entry alone)."""
    cache = {} if cache is None else cache
    results_dir = Path(results_dir)
    cond = entry["condition"]
    tolerance, tolerance_source = resolve_tolerance(entry, by_id or {entry["id"]: entry})
    study = entry["source"]["study"]
    base = {"id": entry["id"], "paper": entry["paper"], "where": entry["where"],
            "dataset": cond.get("dataset", ""), "metric": cond.get("metric", ""),
            "condition": "; ".join(f"{k}: {v}" for k, v in cond.items() if k not in ("dataset", "metric")),
            "paper_value": _paper_value_text(entry), "tolerance": tolerance,
            "tolerance_source": tolerance_source, "study": study}
    sources, reason = expand_source(entry, ctx)
    if not sources:
        return [{**base, "reproduced": math.nan, "difference": math.nan, "verdict": "not run", "data": "",
                 "protocol": "", "table": entry["source"]["table"], "note": reason}]
    rows = []
    for src, values, data in sources:
        departures = row_departures(entry["id"], ctx.protocols.get(study) or [], ctx.config.get(study) or {},
                                    values)
        departures += [entry["deviation"]] if entry.get("deviation") else []
        protocol = "; ".join(departures) or "paper"
        tables = [src["table"], (src.get("versus") or {}).get("table"), (src.get("direction") or {}).get("table")]
        absent = [t for t in dict.fromkeys(t for t in tables if t) if not (results_dir / t).exists()]
        note = "; ".join(f"{k}={v}" for k, v in values.items())
        row = {**base, "data": data, "protocol": protocol, "table": src["table"]}
        if absent:
            rows.append({**row, "reproduced": math.nan, "difference": math.nan, "verdict": "not run",
                         "note": f"not built: {', '.join(absent)}" + (f" ({note})" if note else "")})
            continue
        try:
            value = _value_of(src, results_dir, cache, entry["id"])
            effect = _effect(src["direction"], results_dir, cache, entry["id"]) if src.get("direction") else None
        except SelectorError as err:
            own = set(row_departures(entry["id"], ctx.protocols.get(study) or [], ctx.config.get(study) or {}, {}))
            if entry.get("deviation") or all(d in own for d in departures):
                raise       # the table of a data set under the study's own settings lacks the number: an error
            # a data set with departures need not run every method (e.g. SM1,
            # the paper's comparison method, is skipped there by default)
            rows.append({**row, "reproduced": math.nan, "difference": math.nan, "verdict": "not run",
                         "note": f"not computed on this data set ({note}): {err}"})
            continue
        diff, agrees = judge(value, entry, tolerance)
        if effect is not None:
            d = src["direction"]
            names = ["/".join(map(str, d[k].values())) for k in ("better", "than")]
            note = (note + "; " if note else "") + f"effect {names[0]} - {names[1]}: {effect:+.4g}"
            if not effect > 0:
                agrees = False
                note += " (against the paper's direction)"
        verdict = compose_verdict(agrees, data, departures)
        if data == "synthetic":
            note = (note + "; " if note else "") + ("synthetic data (the numbers: "
                                                    f"{'agree' if agrees else 'differ'})")
        rows.append({**row, "reproduced": value, "difference": diff, "verdict": verdict, "note": note})
    return rows


def reproduction_table(doc: Mapping, results_dir: str | Path, ctx: Context) -> pd.DataFrame:
    """One row per entry of ``doc`` (per configured data set), see the module
    docstring; :class:`SelectorError` when an existing table lacks a number."""
    cache: dict = {}
    by_id = {e["id"]: e for e in doc["entries"]}
    rows = [r for e in doc["entries"] for r in resolve_entry(e, results_dir, ctx, cache, by_id)]
    return pd.DataFrame(rows, columns=COLUMNS)


def verdict_counts(table: pd.DataFrame) -> dict[str, int]:
    """Rows per kind of verdict (:data:`VERDICT_KINDS`, zeros included): a
    row "reproduced with a stated deviation: ..." counts under "reproduced
    with a stated deviation", not under "reproduced"."""
    counts = table["verdict"].map(verdict_kind).value_counts()
    return {v: int(counts.get(v, 0)) for v in VERDICT_KINDS}


def table_html(table: pd.DataFrame, doc: Mapping) -> str:
    """The reproduction table as a self-contained HTML page (the report item
    on the report's front category): verdicts per paper, then one table per
    paper."""
    colors = {"reproduced": "#d8f0d8", f"reproduced {DEVIATION_LABEL}": "#e8f3c6", "differs": "#f6d5d5",
              f"differs {DEVIATION_LABEL}": "#f8e1cc", "agrees on substitute data": "#e3eef8",
              "differs on substitute data": "#efe0ef", "not comparable on this data": "#eeeeee",
              "not run": "#fdf3d0"}

    def fmt(v):
        if isinstance(v, float):
            return "" if math.isnan(v) else f"{v:.4g}"
        return str(v)

    parts = ["<!DOCTYPE html><html><head><meta charset='utf-8'><title>Paper vs reproduction</title>",
             "<style>body{font-family:sans-serif;font-size:12px;margin:8px}table{border-collapse:collapse;"
             "margin-bottom:12px}td,th{border:1px solid #ccc;padding:2px 5px;vertical-align:top}"
             "th{background:#f0f0f0}td.n{text-align:right;white-space:nowrap}td.id{font-family:monospace;"
             "font-size:11px;color:#555}</style></head><body>",
             "<h1>Paper versus reproduction</h1>",
             "<p>Every number of <code>config/paper_values.yaml</code> beside this run's "
             "(<code>results/reproduction.tsv</code>). <i>reproduced</i> needs the paper's data (each source "
             "declares <code>data: paper</code>) under the paper's protocol. <i>with a stated deviation</i>: the "
             "paper's data, with the departures from its protocol that the <i>protocol</i> column lists (computed "
             "from this run's config against <code>config/paper_protocols.yaml</code>). <i>on substitute "
             "data</i>: other real data standing in for the paper's. <i>not comparable on this data</i>: "
             "synthetic data (the note says what the numbers alone would give). Each tolerance says where it "
             "comes from.</p>",
             "<table><tr><th>paper</th>" + "".join(f"<th>{v}</th>" for v in VERDICT_KINDS) + "<th>all</th></tr>"]
    for key, paper in doc["papers"].items():
        c = verdict_counts(table[table["paper"] == key])
        parts.append(f"<tr><td>{_esc(paper['title'])}</td>" + "".join(
            f"<td class='n' style='background:{colors[v]}'>{c[v]}</td>" for v in VERDICT_KINDS)
                     + f"<td class='n'>{sum(c.values())}</td></tr>")
    c = verdict_counts(table)
    parts.append("<tr><th>all</th>" + "".join(f"<th>{c[v]}</th>" for v in VERDICT_KINDS)
                 + f"<th>{len(table)}</th></tr></table>")
    head = ["where", "data set", "metric / condition", "paper", "reproduced", "difference", "tolerance",
            "verdict", "data", "protocol", "tolerance source", "note", "id"]
    for key, paper in doc["papers"].items():
        sub = table[table["paper"] == key]
        if sub.empty:
            continue
        parts.append(f"<h2>{_esc(paper['title'])}</h2><table><tr>" + "".join(f"<th>{h}</th>" for h in head)
                     + "</tr>")
        for _, r in sub.iterrows():
            metric = r["metric"] + (f" ({r['condition']})" if r["condition"] else "")
            cells = [(r["where"], ""), (r["dataset"], ""), (metric, ""), (r["paper_value"], "n"),
                     (fmt(r["reproduced"]), "n"), (fmt(r["difference"]), "n"), (fmt(r["tolerance"]), "n"),
                     (r["verdict"], ""), (fmt(r["data"]), ""), (fmt(r["protocol"]), ""),
                     (fmt(r["tolerance_source"]), ""), (r["note"], ""), (r["id"], "id")]
            parts.append(f"<tr style='background:{colors[verdict_kind(r['verdict'])]}'>"
                         + "".join(f"<td class='{cls}'>{_esc(str(v))}</td>" for v, cls in cells) + "</tr>")
        parts.append("</table>")
    parts.append("</body></html>")
    return "\n".join(parts)


def _esc(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").lower()

