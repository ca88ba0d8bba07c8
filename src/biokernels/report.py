"""Paper versus reproduction: the numbers the papers report, beside this run's.

``config/paper_values.yaml`` lists every number of the four papers that a run
can be compared with (table values, and statements of the text such as
"R² > 0.9" or "within 0.03"); ``workflow/schemas/paper_values.schema.yaml``
types it. Each entry names where the reproduced number comes from: a study, a
result table (a path under ``results/`` with placeholders such as
``{dkl_ligand}`` that the current config fills in), a row selector and a
column, optionally reduced over several rows and compared with a second
selection (``versus``).

:func:`reproduction_table` resolves every entry against the result tables
and gives one row per entry (per configured data set where a placeholder
stands for several) with the paper's value, the reproduced value, the
difference, the tolerance and a verdict:

``reproduced``
    the reproduced value is within the tolerance of the paper's value, or
    satisfies the paper's bound (``>``, ``<``, ``within``) up to the tolerance;
``differs``
    it does not;
``not comparable on this data``
    the run used data other than the paper's (e.g. the embedded default
    synthetic data): the number is computed and shown, but not judged;
``not run``
    the study is not in the workflow yet, the configured data sets include
    none of the entry's kind (e.g. no von Mering-type network), or the table
    has not been built.

An entry with ``deviation: <text>`` is computed under a stated change from
the paper's protocol (another parameter grid, another split, ...). It is
judged like any other entry, and its numeric verdict is labelled
``reproduced with a stated deviation: <text>`` or ``differs with a stated
deviation: <text>`` (``not comparable on this data`` and ``not run`` stay as
they are); the text is also the row's ``deviation`` column (empty for the
protocol's entries). Such an entry is a row of its own, beside the entry
that follows the paper's protocol: it never replaces that row.
:func:`verdict_kind` maps a labelled verdict back to one of
:data:`VERDICT_KINDS`.

A table that exists but lacks the row or column an entry refers to is an
error (:class:`SelectorError`) naming the entry, the table and the selector:
the YAML and the studies' tables must agree.

Pure library: no Snakemake; ``scripts/report_table.py`` is the rule's entry.
"""

from __future__ import annotations

import itertools
import math
import re
import string
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

VERDICTS = ("reproduced", "differs", "not comparable on this data", "not run")
DEVIATION_LABEL = "with a stated deviation"
# what verdict_counts and the HTML summary count: the verdicts, the two numeric ones also with a deviation
VERDICT_KINDS = ("reproduced", f"reproduced {DEVIATION_LABEL}", "differs", f"differs {DEVIATION_LABEL}",
                 "not comparable on this data", "not run")
REDUCERS = ("single", "unique", "min", "max", "mean", "median", "max_abs", "first", "last",
            "last_minus_first", "last_minus_max", "min_step", "count")
COLUMNS = ["id", "paper", "where", "dataset", "metric", "condition", "paper_value", "reproduced", "difference",
           "tolerance", "verdict", "deviation", "study", "table", "note"]
_DEFAULT_SCHEMA = Path(__file__).resolve().parents[2] / "workflow" / "schemas" / "paper_values.schema.yaml"


class PaperValuesError(ValueError):
    """paper_values.yaml does not follow its schema (one line per problem)."""


class SelectorError(KeyError):
    """A table exists but lacks the row or column an entry refers to."""

    def __str__(self):  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else ""


# ---------------------------------------------------------------------------
# loading and validation

def schema_errors(doc, schema_path: str | Path = _DEFAULT_SCHEMA) -> list[str]:
    """One line per schema violation of a paper_values document, naming the
    entry id where there is one (e.g. ``"entry 'dkl_t2_ligand_mDKL'
    (entries.3.value): 'high' is not of type 'number'"``); empty when valid.
    Also checks what a schema cannot: unique ids, ``paper`` keys defined."""
    import jsonschema
    import yaml

    schema = yaml.safe_load(Path(schema_path).read_text())
    validator = jsonschema.validators.validator_for(schema)(schema)
    lines = []
    for err in sorted(validator.iter_errors(doc), key=lambda e: list(map(str, e.absolute_path))):
        path = list(err.absolute_path)
        where = ".".join(map(str, path)) or "(top level)"
        label = f"paper_values {where}"
        if len(path) >= 2 and path[0] == "entries" and isinstance(doc, Mapping):
            try:
                eid = doc["entries"][path[1]].get("id", "?")
            except (IndexError, KeyError, TypeError, AttributeError):
                eid = "?"
            label = f"entry {eid!r} ({where})"
        lines.append(f"{label}: {err.message}")
    if lines or not isinstance(doc, Mapping):
        return lines
    seen = set()
    for e in doc["entries"]:
        if e["id"] in seen:
            lines.append(f"entry {e['id']!r}: duplicate id")
        seen.add(e["id"])
        if e["paper"] not in doc["papers"]:
            lines.append(f"entry {e['id']!r}: paper {e['paper']!r} is not in papers ({sorted(doc['papers'])})")
        if ("value" in e) == ("bound" in e):
            lines.append(f"entry {e['id']!r}: give exactly one of value and bound")
        if "deviation" in e and not str(e["deviation"]).strip():
            lines.append(f"entry {e['id']!r}: deviation is blank; name the change from the paper's protocol")
    return lines


def load_paper_values(path: str | Path, schema_path: str | Path = _DEFAULT_SCHEMA) -> dict:
    """Read and validate paper_values.yaml; :class:`PaperValuesError` lists
    every problem."""
    import yaml

    doc = yaml.safe_load(Path(path).read_text())
    problems = schema_errors(doc, schema_path)
    if problems:
        raise PaperValuesError(f"{path} is not valid:\n" + "\n".join(problems))
    return doc


# ---------------------------------------------------------------------------
# the run's context

@dataclass
class Context:
    """What the current config provides.

    Attributes
    ----------
    studies : set of str
        Studies whose rules are in the workflow (others give ``not run``).
    placeholders : dict
        Placeholder name -> list of (value, paper_data) pairs: the configured
        data sets (or featurizations, ...) that fill ``{name}`` in table
        paths, and whether each is the paper's own data. An empty list means
        the config has none (entries using it give ``not run``).
    deviations : dict
        Placeholder value -> the change from the paper's protocol that the
        data set of that name carries (e.g. a diffusion data set with the
        normalized Laplacian). Rows computed on it are labelled with it,
        beside the rows of the protocol's own data sets.
    """

    studies: set[str] = field(default_factory=set)
    placeholders: dict[str, list[tuple[str, bool]]] = field(default_factory=dict)
    deviations: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_mapping(cls, m: Mapping) -> Context:
        """From plain data (e.g. a rule's params): ``{"studies": [...],
        "placeholders": {name: value | [value, ...] | {value: paper_data}},
        "deviations": {value: text}}``; a bare value counts as not the
        paper's data."""
        ph = {}
        for name, v in (m.get("placeholders") or {}).items():
            if v is None:
                ph[name] = []
            elif isinstance(v, str):
                ph[name] = [(v, False)]
            elif isinstance(v, Mapping):
                ph[name] = [(str(k), bool(b)) for k, b in v.items()]
            else:
                ph[name] = [(x, False) if isinstance(x, str) else (str(x[0]), bool(x[1])) for x in v]
        dev = {str(k): str(v) for k, v in (m.get("deviations") or {}).items() if v}
        return cls(studies=set(m.get("studies") or []), placeholders=ph, deviations=dev)


def is_paper_data(study: str, name: str, source: Mapping, declared: Mapping | None = None) -> bool:
    """Whether data set ``name`` (config ``source``) of ``study`` is the
    paper's own data, so that its numbers can be judged against the paper's:
    listed in ``declared`` (config ``report.paper_data``: study -> names), or
    a real source of the paper's kind (diffusion: any non-synthetic network;
    drug screen: measured L1000 files, i.e. the GEO layout, the LINCS 2020
    release or local copies of either; DepMap: a downloaded release or local
    PRISM files; PIMKL: real cohort files). Never the embedded synthetic defaults or simulated
    responses (e.g. ``lincs2020_structure``)."""
    if name in ((declared or {}).get(study) or []):
        return True
    kind = source.get("type")
    return {"diffusion": kind not in ("synthetic", None),
            "drug_screen": kind in ("geo", "lincs2020", "local"),
            "depmap": kind == "download" or (
                kind == "local" and str((source.get("reader") or {}).get("format", "")).startswith("prism")),
            "pimkl": kind not in ("synthetic", None)}.get(study, False)


def _fields(text: str) -> list[str]:
    return [f for _, f, _, _ in string.Formatter().parse(text) if f]


def _source_strings(src: Mapping) -> list[str]:
    out = [src["table"]]
    for sel in (src, src.get("versus") or {}):
        if "table" in sel:
            out.append(sel["table"])
        for v in (sel.get("select") or {}).values():
            out += [x for x in (v if isinstance(v, list) else [v]) if isinstance(x, str)]
    return out


def _fill(obj, values: Mapping[str, str]):
    if isinstance(obj, str):
        return obj.format(**values) if _fields(obj) else obj
    if isinstance(obj, list):
        return [_fill(x, values) for x in obj]
    if isinstance(obj, Mapping):
        return {k: _fill(v, values) for k, v in obj.items()}
    return obj


def expand_source(entry: Mapping, ctx: Context) -> tuple[list[tuple[dict, dict, bool]], str | None]:
    """The entry's source with its placeholders filled in, once per
    combination of configured values: a list of ``(source, values,
    paper_data)``, or ``([], reason)`` when the study is not in the workflow
    or a placeholder has no value in this config."""
    src = entry["source"]
    if src["study"] not in ctx.studies:
        return [], f"study {src['study']!r} is not in this workflow yet"
    names = sorted({f for s in _source_strings(src) for f in _fields(s)} | set(src.get("requires", [])))
    unknown = [n for n in names if n not in ctx.placeholders]
    if unknown:
        raise PaperValuesError(f"entry {entry['id']!r}: placeholder(s) {unknown} are not provided by the "
                               f"workflow (known: {sorted(ctx.placeholders)})")
    empty = [n for n in names if not ctx.placeholders[n]]
    if empty:
        return [], f"this config has no {', '.join(empty)}"
    out = []
    for combo in itertools.product(*(ctx.placeholders[n] for n in names)):
        values = {n: v for n, (v, _) in zip(names, combo)}
        out.append((_fill(dict(src), values), values, all(p for _, p in combo)))
    return out, None


def required_tables(doc: Mapping, ctx: Context) -> list[str]:
    """Tables (relative to results/) that the entries read in this config:
    the inputs of the reproduction-table rule."""
    out = []
    for e in doc["entries"]:
        for src, _, _ in expand_source(e, ctx)[0]:
            for t in [src["table"], (src.get("versus") or {}).get("table")]:
                if t and t not in out:
                    out.append(t)
    return out


# ---------------------------------------------------------------------------
# selection

def _describe(sel: Mapping) -> str:
    parts = [f"{k}={v!r}" for k, v in (sel.get("select") or {}).items()]
    return f"select {{{', '.join(parts)}}} column {sel.get('column')!r} reduce {sel.get('reduce', 'single')!r}"


def _match(col: pd.Series, want) -> pd.Series:
    wants = want if isinstance(want, list) else [want]
    mask = pd.Series(False, index=col.index)
    for w in wants:
        if isinstance(w, bool) or col.dtype == bool:
            mask |= col.astype(str).str.lower() == str(w).lower()
        elif isinstance(w, (int, float)):
            num = pd.to_numeric(col, errors="coerce")
            mask |= np.isclose(num.to_numpy(dtype=float), float(w), rtol=1e-4, atol=1e-9) & num.notna().to_numpy()
        else:
            mask |= col.astype(str) == str(w)
    return mask


def _reduce(values: np.ndarray, how: str) -> float:
    v = values.astype(float)
    if how == "count":
        return float(len(v))
    if how in ("single", "unique"):
        u = np.unique(v[~np.isnan(v)]) if how == "unique" else v
        if len(u) != 1:
            raise ValueError(f"{len(u)} {'distinct values' if how == 'unique' else 'rows'} where one was expected")
        return float(u[0])
    if how == "min_step":
        if len(v) < 2:
            raise ValueError("min_step needs at least two rows")
        return float(np.min(np.diff(v)))
    fn = {"min": np.nanmin, "max": np.nanmax, "mean": np.nanmean, "median": np.nanmedian,
          "max_abs": lambda x: np.nanmax(np.abs(x)), "first": lambda x: x[0], "last": lambda x: x[-1],
          "last_minus_first": lambda x: x[-1] - x[0], "last_minus_max": lambda x: x[-1] - np.nanmax(x)}[how]
    return float(fn(v))


def select_value(table: pd.DataFrame, sel: Mapping, entry_id: str, table_name: str) -> float:
    """The number ``sel`` picks from ``table``: rows matching every filter of
    ``select`` (a value or a list of values per column; numbers matched with
    a relative tolerance), optionally sorted (``sort_by``), the ``column``'s
    values reduced (``reduce``, default ``single``: exactly one row); with
    ``group_by``, reduced per group and then over the groups
    (``group_reduce``). :class:`SelectorError` names the entry, table and
    selector when a column or row is missing."""
    where = f"entry {entry_id!r}: table {table_name}: {_describe(sel)}"
    filters = sel.get("select") or {}
    needed = [*filters, sel["column"], *([sel["sort_by"]] if sel.get("sort_by") else []),
              *([sel["group_by"]] if sel.get("group_by") else [])]
    missing = [c for c in needed if c not in table.columns]
    if missing:
        raise SelectorError(f"{where}: no column(s) {missing} (columns: {list(table.columns)})")
    mask = pd.Series(True, index=table.index)
    for col, want in filters.items():
        m = _match(table[col], want)
        wants = want if isinstance(want, list) else [want]
        absent = [w for w in wants if not _match(table[col], w).any()]
        if absent:
            raise SelectorError(f"{where}: no row with {col} = {absent} (values: "
                                f"{sorted(map(str, table[col].unique()))[:20]})")
        mask &= m
    rows = table[mask]
    if rows.empty:
        raise SelectorError(f"{where}: no row matches all filters")
    if sel.get("sort_by"):
        rows = rows.sort_values(sel["sort_by"], kind="stable")
    how = sel.get("reduce", "single")
    try:
        if sel.get("group_by"):
            per = rows.groupby(sel["group_by"], sort=False)[sel["column"]].apply(
                lambda s: _reduce(pd.to_numeric(s, errors="coerce").to_numpy(), how))
            return _reduce(per.to_numpy(), sel.get("group_reduce", "single"))
        return _reduce(pd.to_numeric(rows[sel["column"]], errors="coerce").to_numpy(), how)
    except ValueError as err:
        raise SelectorError(f"{where}: {err}") from None


# ---------------------------------------------------------------------------
# verdicts

def judge(reproduced: float, entry: Mapping, paper_data: bool) -> tuple[float, str]:
    """``(difference, verdict)`` of a reproduced number against the entry.

    value ``v`` with tolerance ``t``: difference ``r - v``, reproduced when
    ``|r - v| <= t``. Bound ``> b``: difference ``r - b``, reproduced when
    ``r > b - t``; ``< b``: reproduced when ``r < b + t``; ``within b`` (of
    ``center``, default 0): difference ``|r - center| - b``, reproduced when
    that is ``<= t``. With ``scale: log10`` (p-values) both sides are
    compared as log10. A NaN reproduced value differs. On data other than
    the paper's the verdict is ``not comparable on this data`` whatever the
    numbers."""
    tol = float(entry.get("tolerance", 0.0))
    log = entry.get("scale") == "log10"

    def tr(x):
        return math.log10(max(x, 1e-300)) if log else x

    r = float(reproduced)
    if "value" in entry:
        diff = tr(r) - tr(float(entry["value"])) if not math.isnan(r) else math.nan
        ok = abs(diff) <= tol + 1e-12
    else:
        b = entry["bound"]
        op, bv = b["op"], tr(float(b["value"]))
        if op == "within":
            diff = abs(r - float(b.get("center", 0.0))) - float(b["value"])
            ok = diff <= tol + 1e-12
        else:
            diff = tr(r) - bv if not math.isnan(r) else math.nan
            ok = diff > -tol if op == ">" else diff < tol
    numeric = "differs" if math.isnan(diff) or not ok else "reproduced"
    return diff, numeric if paper_data else "not comparable on this data"


def label_verdict(verdict: str, deviation: str | None) -> str:
    """The verdict shown for an entry: ``verdict`` itself, or for an entry
    with a ``deviation`` and a numeric verdict (``reproduced`` /
    ``differs``), ``"<verdict> with a stated deviation: <deviation>"``.
    ``not comparable on this data`` and ``not run`` are never labelled."""
    if deviation and verdict in ("reproduced", "differs"):
        return f"{verdict} {DEVIATION_LABEL}: {deviation}"
    return verdict


def verdict_kind(verdict: str) -> str:
    """The kind (one of :data:`VERDICT_KINDS`) of a verdict of the table,
    e.g. ``"reproduced with a stated deviation"`` for ``"reproduced with a
    stated deviation: beta grid ends at 0"``. ValueError for anything else."""
    head = str(verdict).split(":", 1)[0]
    if head not in VERDICT_KINDS or (head != verdict and DEVIATION_LABEL not in head):
        raise ValueError(f"verdict {verdict!r}: expected one of {VERDICT_KINDS} (with ': <deviation>' after the "
                         f"two '{DEVIATION_LABEL}' kinds)")
    return head


def _paper_value_text(entry: Mapping) -> str:
    if "value" in entry:
        return f"{entry['value']:g}"
    b = entry["bound"]
    if b["op"] == "within":
        c = b.get("center", 0.0)
        return f"within {b['value']:g}" + (f" of {c:g}" if c else "")
    return f"{b['op']} {b['value']:g}"


# ---------------------------------------------------------------------------
# the table

def _read(path: Path, cache: dict) -> pd.DataFrame:
    if path not in cache:
        cache[path] = pd.read_csv(path, sep="\t")
    return cache[path]


def resolve_entry(entry: Mapping, results_dir: str | Path, ctx: Context, cache: dict | None = None) -> list[dict]:
    """Rows of the reproduction table for one entry (one per configured
    combination of its placeholders; one ``not run`` row when none)."""
    cache = {} if cache is None else cache
    cond = entry["condition"]
    base = {"id": entry["id"], "paper": entry["paper"], "where": entry["where"],
            "dataset": cond.get("dataset", ""), "metric": cond.get("metric", ""),
            "condition": "; ".join(f"{k}: {v}" for k, v in cond.items() if k not in ("dataset", "metric")),
            "paper_value": _paper_value_text(entry), "tolerance": float(entry.get("tolerance", 0.0)),
            "deviation": entry.get("deviation", ""), "study": entry["source"]["study"]}
    sources, reason = expand_source(entry, ctx)
    if not sources:
        return [{**base, "reproduced": math.nan, "difference": math.nan, "verdict": "not run",
                 "table": entry["source"]["table"], "note": reason}]
    rows = []
    for src, values, paper_data in sources:
        tables = [src["table"]] + ([src["versus"].get("table", src["table"])] if src.get("versus") else [])
        absent = [t for t in tables if not (Path(results_dir) / t).exists()]
        note = "; ".join(f"{k}={v}" for k, v in values.items())
        if absent:
            rows.append({**base, "reproduced": math.nan, "difference": math.nan, "verdict": "not run",
                         "table": src["table"],
                         "note": f"not built: {', '.join(absent)}" + (f" ({note})" if note else "")})
            continue
        ds_deviation = "; ".join(d for d in (ctx.deviations.get(v, "") for v in values.values()) if d)
        try:
            value = select_value(_read(Path(results_dir) / src["table"], cache), src, entry["id"], src["table"])
            if src.get("versus"):
                vs = src["versus"]
                other = select_value(_read(Path(results_dir) / tables[1], cache), vs, entry["id"], tables[1])
                value = value - other if vs.get("op", "minus") == "minus" else (value / other if other else math.nan)
        except SelectorError as err:
            if not ds_deviation:      # the protocol's own table lacks the number: an error
                raise
            # a deviation data set need not run every method (e.g. SM1 is the
            # paper's comparison method, skipped there by default)
            rows.append({**base, "reproduced": math.nan, "difference": math.nan, "deviation": ds_deviation,
                         "verdict": "not run", "table": src["table"],
                         "note": f"not computed on this deviation's data set ({note}): {err}"})
            continue
        diff, verdict = judge(value, entry, paper_data)
        if verdict == "not comparable on this data":
            would = judge(value, entry, True)[1]
            note = (note + "; " if note else "") + f"data other than the paper's (the numbers: {would})"
        deviation = "; ".join(d for d in [entry.get("deviation", ""), ds_deviation] if d)
        rows.append({**base, "reproduced": value, "difference": diff, "deviation": deviation,
                     "verdict": label_verdict(verdict, deviation), "table": src["table"], "note": note})
    return rows


def reproduction_table(doc: Mapping, results_dir: str | Path, ctx: Context) -> pd.DataFrame:
    """One row per entry of ``doc`` (per configured data set), see the module
    docstring; :class:`SelectorError` when an existing table lacks a number."""
    cache: dict = {}
    rows = [r for e in doc["entries"] for r in resolve_entry(e, results_dir, ctx, cache)]
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
              f"differs {DEVIATION_LABEL}": "#f8e1cc", "not comparable on this data": "#eeeeee",
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
             "(<code>results/reproduction.tsv</code>). <i>not comparable on this data</i>: the run used other "
             "data than the paper's (the note says what the numbers alone would give). <i>with a stated "
             "deviation</i>: a row computed under the change from the paper's protocol its <i>deviation</i> "
             "column names, beside the protocol's own row.</p>",
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
            "verdict", "deviation", "note", "id"]
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
                     (r["verdict"], ""), (fmt(r["deviation"]), ""), (r["note"], ""), (r["id"], "id")]
            parts.append(f"<tr style='background:{colors[verdict_kind(r['verdict'])]}'>"
                         + "".join(f"<td class='{cls}'>{_esc(str(v))}</td>" for v, cls in cells) + "</tr>")
        parts.append("</table>")
    parts.append("</body></html>")
    return "\n".join(parts)


def _esc(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").lower()
