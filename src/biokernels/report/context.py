"""What the run's config provides to the report: the studies in the
workflow, the placeholders' values with the data each declares, the
protocols and config sections; and the entries' sources filled in."""

from __future__ import annotations

import itertools
import string
from collections.abc import Mapping
from dataclasses import dataclass, field

from biokernels.report.kinds import DATA_KINDS, PaperValuesError


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


