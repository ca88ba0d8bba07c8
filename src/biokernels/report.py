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
    the paper's data (every data source of the row declares ``data: paper``)
    under the paper's protocol, and the reproduced value is within the
    tolerance of the paper's value, or satisfies the paper's bound (``>``,
    ``<``, ``within``) up to the tolerance, in the paper's direction where
    the entry gives one;
``differs``
    the same, but the numbers disagree;
``reproduced with a stated deviation: <departures>`` / ``differs with a stated deviation: <departures>``
    the paper's data, with departures from the paper's protocol: computed for
    each row from the run's config against ``config/paper_protocols.yaml``
    (:mod:`biokernels.departures`; only the settings the row's number depends
    on), plus an entry's own ``deviation``;
``agrees on substitute data: <what>`` / ``differs on substitute data: <what>``
    a data source declares ``data: substitute`` (with its ``data_reason``):
    never "reproduced";
``not comparable on this data``
    synthetic data (e.g. the embedded default): the number is computed and
    shown, but not judged;
``not run``
    the study is not in the workflow yet, the configured data sets include
    none of the entry's kind (e.g. no von Mering-type network), or the table
    has not been built.

Every row says what it stands on: ``data`` (``paper``, ``substitute: <what>``
or ``synthetic``) and ``protocol`` (``paper`` or its departures). Tolerances
are derived from a stated source (:func:`resolve_tolerance`: the paper's own
split-to-split SD, the sampling spread of an SD, the paper's significance
decision) or given with a ``tolerance_source``; the row's
``tolerance_source`` column says which. A claim with a direction ("A is
significantly better than B") carries ``direction``: the verdict also needs
the effect to have the paper's sign.

A table that exists but lacks the row or column an entry refers to is an
error (:class:`SelectorError`) naming the entry, the table and the selector:
the YAML and the studies' tables must agree.

Pure library: no Snakemake; ``scripts/report_table.py`` is the rule's entry.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
import string
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from biokernels.departures import row_departures
from biokernels.schema_check import schema_messages

VERDICTS = ("reproduced", "differs", "not comparable on this data", "not run")
DEVIATION_LABEL = "with a stated deviation"
SUBSTITUTE_KINDS = ("agrees on substitute data", "differs on substitute data")
# what verdict_counts and the HTML summary count; the kinds after which ": <text>" follows
VERDICT_KINDS = ("reproduced", f"reproduced {DEVIATION_LABEL}", "differs", f"differs {DEVIATION_LABEL}",
                 *SUBSTITUTE_KINDS, "not comparable on this data", "not run")
_LABELLED_KINDS = (f"reproduced {DEVIATION_LABEL}", f"differs {DEVIATION_LABEL}", *SUBSTITUTE_KINDS)
DATA_KINDS = ("paper", "substitute", "synthetic")
REDUCERS = ("single", "unique", "min", "max", "mean", "median", "max_abs", "first", "last",
            "last_minus_first", "last_minus_max", "min_step", "count", "sum", "count_positive",
           "fraction_positive")
COLUMNS = ["id", "paper", "where", "dataset", "metric", "condition", "paper_value", "reproduced", "difference",
           "tolerance", "tolerance_source", "verdict", "data", "protocol", "study", "table", "note"]
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
    def label(path):
        if len(path) >= 2 and path[0] == "entries" and isinstance(doc, Mapping):
            try:
                return f"entry {doc['entries'][path[1]].get('id', '?')!r}"
            except (IndexError, KeyError, TypeError, AttributeError):
                return "entry '?'"
        return None

    lines = schema_messages(doc, schema_path, label)
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
        tol = e["tolerance"]
        if not isinstance(tol, Mapping) and not str(e.get("tolerance_source", "")).strip():
            lines.append(f"entry {e['id']!r}: tolerance {tol} needs a tolerance_source (where it comes from)")
        if isinstance(tol, Mapping):
            unknown = [i for i in tol.get("sd_entries", []) if i not in {x["id"] for x in doc["entries"]}]
            if unknown:
                lines.append(f"entry {e['id']!r}: tolerance.sd_entries {unknown} are not entry ids")
            if tol["rule"] != "decision" and not tol.get("sd_entries"):
                lines.append(f"entry {e['id']!r}: tolerance rule {tol['rule']} needs sd_entries")
            if tol["rule"] == "decision" and ("alpha" not in tol or "value" not in e):
                lines.append(f"entry {e['id']!r}: tolerance rule decision needs alpha and a value (a p-value)")
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
        Placeholder name -> list of (value, data) pairs: the configured data
        sets (or featurizations, ...) that fill ``{name}`` in table paths, and
        what each is: ``"paper"``, ``"synthetic"`` or ``"substitute: <what>"``
        (:func:`source_data`). An empty list means the config has none
        (entries using it give ``not run``).
    protocols : dict
        Study -> its protocol settings (``config/paper_protocols.yaml``,
        :func:`biokernels.departures.load_protocols`).
    config : dict
        Study -> its resolved config section, against which the departures
        of each row are computed.
    """

    studies: set[str] = field(default_factory=set)
    placeholders: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    protocols: dict[str, list] = field(default_factory=dict)
    config: dict[str, Mapping] = field(default_factory=dict)

    @classmethod
    def from_mapping(cls, m: Mapping) -> Context:
        """From plain data (e.g. a rule's params): ``{"studies": [...],
        "placeholders": {name: {value: data}}, "protocols": {...}, "config":
        {...}}`` where data is ``"paper"``, ``"synthetic"`` or
        ``"substitute: <what>"``. ValueError for any other data text."""
        ph = {}
        for name, v in (m.get("placeholders") or {}).items():
            pairs = list((v or {}).items()) if isinstance(v, Mapping) else [tuple(x) for x in (v or [])]
            for value, data in pairs:
                _check_data(data, f"placeholder {name!r} value {value!r}")
            ph[name] = [(str(value), str(data)) for value, data in pairs]
        return cls(studies=set(m.get("studies") or []), placeholders=ph,
                   protocols=dict(m.get("protocols") or {}), config=dict(m.get("config") or {}))


def _check_data(data, where: str) -> None:
    kind = str(data).split(":", 1)[0]
    if kind not in DATA_KINDS or (kind == "substitute") != (":" in str(data)):
        raise ValueError(f"{where}: data {data!r}: expected 'paper', 'synthetic' or 'substitute: <what>'")


def source_data(study: str, name: str, source: Mapping) -> str:
    """What data source ``name`` of ``study`` declares itself to be (config
    ``data``; nothing is inferred from its ``type``): ``"paper"`` (the
    paper's own data), ``"synthetic"``, or ``"substitute: <data_reason>"``.
    ValueError naming the config key when ``data`` is missing, unknown, or a
    substitute without a ``data_reason``."""
    key = f"{study}.sources.{name}"
    data = source.get("data")
    if data not in DATA_KINDS:
        raise ValueError(f"{key}.data: {data!r}; say what this data set is: paper (the paper's own data), "
                         "substitute (with data_reason: what it stands in for) or synthetic")
    if data == "substitute":
        reason = str(source.get("data_reason") or "").strip()
        if not reason:
            raise ValueError(f"{key}.data_reason: missing; a substitute says in one line what it is and what "
                             "it stands in for")
        return f"substitute: {reason}"
    return data


def _combine_data(kinds: list[str]) -> str:
    """The data of a row computed on several sources: synthetic if any is,
    else the substitutes' reasons, else paper."""
    if any(k == "synthetic" for k in kinds):
        return "synthetic"
    subs = [k.split(":", 1)[1].strip() for k in kinds if k.startswith("substitute")]
    return f"substitute: {'; '.join(dict.fromkeys(subs))}" if subs else "paper"


def _fields(text: str) -> list[str]:
    return [f for _, f, _, _ in string.Formatter().parse(text) if f]


def _source_strings(src: Mapping) -> list[str]:
    out = [src["table"]]
    direction = src.get("direction") or {}
    for sel in (src, src.get("versus") or {}, direction.get("better") or {}, direction.get("than") or {}):
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


def expand_source(entry: Mapping, ctx: Context) -> tuple[list[tuple[dict, dict, str]], str | None]:
    """The entry's source (with its ``direction``) with the placeholders
    filled in, once per combination of configured values: a list of
    ``(source, values, data)`` (data as :func:`_combine_data`), or ``([],
    reason)`` when the study is not in the workflow or a placeholder has no
    value in this config."""
    src = dict(entry["source"])
    if entry.get("direction"):
        src["direction"] = entry["direction"]
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
        out.append((_fill(src, values), values, _combine_data([d for _, d in combo])))
    return out, None


def required_tables(doc: Mapping, ctx: Context) -> list[str]:
    """Tables (relative to results/) that the entries read in this config:
    the inputs of the reproduction-table rule."""
    out = []
    for e in doc["entries"]:
        for src, _, _ in expand_source(e, ctx)[0]:
            for t in [src["table"], (src.get("versus") or {}).get("table"), (src.get("direction") or {}).get("table")]:
                if t and t not in out:
                    out.append(t)
    return out


# ---------------------------------------------------------------------------
# selection

def _describe(sel: Mapping) -> str:
    parts = [f"{k}={v!r}" for k, v in (sel.get("select") or {}).items()]
    return f"select {{{', '.join(parts)}}} column {sel.get('column')!r} reduce {sel.get('reduce', 'single')!r}"


_RANGE_OPS = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal}


def _match(col: pd.Series, want) -> pd.Series:
    if isinstance(want, Mapping):     # a range, e.g. {"<": 2000}: every bound must hold
        num = pd.to_numeric(col, errors="coerce").to_numpy(dtype=float)
        ok = ~np.isnan(num)
        for op, bound in want.items():
            ok &= _RANGE_OPS[op](num, float(bound))
        return pd.Series(ok, index=col.index)
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
    if how in ("count_positive", "fraction_positive"):
        if not len(v):
            raise ValueError(f"{how} of no rows")
        pos = float(np.sum(v > 0))
        return pos if how == "count_positive" else pos / len(v)
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
          "max_abs": lambda x: np.nanmax(np.abs(x)), "sum": np.nansum, "first": lambda x: x[0], "last": lambda x: x[-1],
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
        absent = [w for w in wants if not _match(table[col], w).any()] if not isinstance(want, Mapping) else (
            [] if m.any() else [want])
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

TOLERANCE_RULES = ("split_sd", "sd_sampling", "decision")


def resolve_tolerance(entry: Mapping, by_id: Mapping[str, Mapping]) -> tuple[float, str]:
    """``(tolerance, its source)`` of an entry.

    A number comes with the entry's ``tolerance_source`` text. A mapping
    derives it (``z`` default 1.96, a two-sided 95 % band):

    ``rule: split_sd``
        ``z * sqrt(sum sd_i^2) * sqrt(1/n_paper + 1/n_run)``, the sd_i the
        values of the paper's SD entries ``sd_entries`` (its split-to-split
        SD): the spread of the difference of the paper's mean over
        ``n_paper`` splits and this run's over ``n_run``; with two SDs, the
        spread of an effect A - B (independent A and B: an upper bound when
        they correlate positively over splits).
    ``rule: sd_sampling``
        ``z * sd * sqrt(1/(2 (n_paper - 1)) + 1/(2 (n_run - 1)))``: the
        sampling spread of an SD over n splits (normal approximation,
        SE(s) = s / sqrt(2 (n - 1))), for rows that compare SDs.
    ``rule: decision``
        ``alpha``: a p-value row is judged on the paper's decision at this
        level (both on the same side of it), not on its digits: a p-value
        is a random quantity whose spread the paper does not give.
    """
    tol = entry["tolerance"]
    if not isinstance(tol, Mapping):
        return float(tol), str(entry.get("tolerance_source", ""))
    rule, z, extra = tol["rule"], float(tol.get("z", 1.96)), tol.get("note")
    if rule == "decision":
        text = f"the paper's decision at alpha = {tol['alpha']:g} (both p-values on the same side of it)"
        return float(tol["alpha"]), text + (f"; {extra}" if extra else "")
    sds = [float(by_id[i]["value"]) for i in tol["sd_entries"]]
    sd = math.sqrt(sum(x * x for x in sds))
    n_p, n_r = int(tol.get("n_paper", 1)), int(tol.get("n_run", 1))
    names = ", ".join(f"{by_id[i]['where']} {by_id[i]['condition'].get('method', '')} {by_id[i]['value']:g}".strip()
                      for i in tol["sd_entries"])
    if rule == "split_sd":
        value = z * sd * math.sqrt(1 / n_p + 1 / n_r)
        text = (f"{z:g} x {'sqrt(sum SD^2)' if len(sds) > 1 else 'SD'} x sqrt(1/{n_p} + 1/{n_r}); SD: the paper's "
                f"split-to-split SD ({names}); the paper's over {n_p} split(s) against this run's over {n_r}")
    else:
        value = z * sd * math.sqrt(1 / (2 * (n_p - 1)) + 1 / (2 * (n_r - 1)))
        text = (f"{z:g} x SD x sqrt(1/(2({n_p}-1)) + 1/(2({n_r}-1))): the sampling spread of an SD over "
                f"{n_p} and {n_r} splits; SD: {names}")
    return value, text + (f"; {extra}" if extra else "")


def judge(reproduced: float, entry: Mapping, tolerance: float | None = None) -> tuple[float, bool]:
    """``(difference, agrees)`` of a reproduced number against the entry
    (``tolerance`` default: the entry's number).

    value ``v`` with tolerance ``t``: difference ``r - v``, agrees when
    ``|r - v| <= t``. Bound ``> b``: difference ``r - b``, agrees when
    ``r > b - t``; ``< b``: agrees when ``r < b + t``; ``within b`` (of
    ``center``, default 0): difference ``|r - center| - b``, agrees when that
    is ``<= t``. With ``scale: log10`` (p-values) both sides are compared as
    log10. A ``decision`` tolerance (:func:`resolve_tolerance`) agrees when
    ``r`` and ``v`` fall on the same side of alpha. A NaN reproduced value
    never agrees."""
    tol = float(entry["tolerance"]) if tolerance is None else float(tolerance)
    log = entry.get("scale") == "log10"

    def tr(x):
        return math.log10(max(x, 1e-300)) if log else x

    r = float(reproduced)
    if math.isnan(r):
        return math.nan, False
    if isinstance(entry.get("tolerance"), Mapping) and entry["tolerance"]["rule"] == "decision":
        v = float(entry["value"])
        return tr(r) - tr(v), (r < tol) == (v < tol)
    if "value" in entry:
        diff = tr(r) - tr(float(entry["value"]))
        return diff, abs(diff) <= tol + 1e-12
    b = entry["bound"]
    op, bv = b["op"], tr(float(b["value"]))
    if op == "within":
        diff = abs(r - float(b.get("center", 0.0))) - float(b["value"])
        return diff, diff <= tol + 1e-12
    diff = tr(r) - bv
    return diff, (diff > -tol if op == ">" else diff < tol)


def compose_verdict(agrees: bool, data: str, departures: list[str]) -> str:
    """The row's verdict from whether its numbers agree, its data (as
    :func:`_combine_data`) and its protocol departures; see the module
    docstring."""
    if data == "synthetic":
        return "not comparable on this data"
    if data.startswith("substitute"):
        return f"{SUBSTITUTE_KINDS[0 if agrees else 1]}: {data.split(':', 1)[1].strip()}"
    return label_verdict("reproduced" if agrees else "differs", "; ".join(departures))


def label_verdict(verdict: str, deviation: str | None) -> str:
    """``verdict`` itself, or for a numeric verdict (``reproduced`` /
    ``differs``) with departures from the protocol, ``"<verdict> with a
    stated deviation: <deviation>"``. ``not comparable on this data`` and
    ``not run`` are never labelled."""
    if deviation and verdict in ("reproduced", "differs"):
        return f"{verdict} {DEVIATION_LABEL}: {deviation}"
    return verdict


def verdict_kind(verdict: str) -> str:
    """The kind (one of :data:`VERDICT_KINDS`) of a verdict of the table,
    e.g. ``"reproduced with a stated deviation"`` for ``"reproduced with a
    stated deviation: beta grid ends at 0"``. ValueError for anything else."""
    head = str(verdict).split(":", 1)[0]
    if head not in VERDICT_KINDS or (head != verdict and head not in _LABELLED_KINDS):
        raise ValueError(f"verdict {verdict!r}: expected one of {VERDICT_KINDS} (with ': <text>' after "
                         f"{_LABELLED_KINDS})")
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
    rows = main[functools.reduce(lambda m, kv: m & _match(main[kv[0]], kv[1]),
                                 (src.get("select") or {}).items(), pd.Series(True, index=main.index))]
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
