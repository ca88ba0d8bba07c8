"""Departures of a run from the papers' protocols, computed from its config.

``config/paper_protocols.yaml`` (schema ``workflow/schemas/paper_protocols.schema.yaml``)
writes each study's protocol once, as data: per study a list of settings,
each naming where the run's value sits in the study's config section (a
``key``, the row's ``placeholder``, or ``fixed`` for a departure of every
run), the paper's value (``paper``, ``one_of``, ``at_least``, ``at_most``)
and the reproduction rows (``fnmatch`` patterns of paper_values ids) whose
numbers depend on it. A row's departures are the settings that apply to it
and whose resolved value differs from the paper's (``docs/report_notes.md``).

Pure library: no Snakemake.
"""

from __future__ import annotations

import fnmatch
import math
import string
from collections.abc import Mapping, Sequence
from pathlib import Path

from biokernels.schema_check import schema_messages

_DEFAULT_SCHEMA = Path(__file__).resolve().parents[2] / "workflow" / "schemas" / "paper_protocols.schema.yaml"
_MISSING = object()


class ProtocolsError(ValueError):
    """paper_protocols.yaml does not follow its schema (one line per problem)."""


def load_protocols(path: str | Path, schema_path: str | Path = _DEFAULT_SCHEMA) -> dict[str, list[dict]]:
    """Study -> its protocol settings, validated against the schema;
    :class:`ProtocolsError` lists every problem, naming the study and the
    setting's index and ``what``."""
    import yaml

    doc = yaml.safe_load(Path(path).read_text())
    lines = [f"{path}: {m}" for m in schema_messages(doc, schema_path)]
    if lines:
        raise ProtocolsError("\n".join(lines))
    return doc["studies"]


def _fields(text: str) -> list[str]:
    return [f for _, f, _, _ in string.Formatter().parse(text) if f]


def _lookup(section: Mapping, dotted: str):
    node = section
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return _MISSING
        node = node[part]
    return node


def resolve(setting: Mapping, section: Mapping, values: Mapping[str, str]):
    """The run's value of ``setting`` (a ``key`` or ``placeholder`` setting):
    the first of its keys present in ``section`` (the study's config) with
    the row's placeholder ``values`` filled in, else its ``default``;
    ``_MISSING`` when the row lacks the placeholder or nothing applies."""
    if "placeholder" in setting:
        return values.get(setting["placeholder"], _MISSING)
    keys = setting["key"] if isinstance(setting["key"], list) else [setting["key"]]
    for key in keys:
        names = _fields(key)
        if any(n not in values for n in names):
            continue
        found = _lookup(section, key.format(**{n: values[n] for n in names}))
        if found is not _MISSING and found is not None:
            return found
    return setting.get("default", _MISSING)


def _same(a, b) -> bool:
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(a, Sequence) and isinstance(b, Sequence) and not isinstance(a, str) and not isinstance(b, str):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return str(a) == str(b)


def _follows(setting: Mapping, value) -> bool:
    if "at_least" in setting:
        return isinstance(value, (int, float)) and value >= setting["at_least"]
    if "at_most" in setting:
        return isinstance(value, (int, float)) and value <= setting["at_most"]
    if "one_of" in setting:
        return any(_same(value, v) for v in setting["one_of"])
    return _same(value, setting["paper"])


def applies(setting: Mapping, entry_id: str) -> bool:
    """Whether ``entry_id`` matches the setting's ``rows`` patterns (all rows
    of the study when absent) and none of its ``except`` patterns."""
    rows = setting.get("rows") or ["*"]
    return (any(fnmatch.fnmatchcase(entry_id, p) for p in rows)
            and not any(fnmatch.fnmatchcase(entry_id, p) for p in setting.get("except") or []))


def _paper_text(setting: Mapping) -> str:
    if setting.get("paper_text"):
        return setting["paper_text"]
    if "at_least" in setting:
        return f">= {setting['at_least']}"
    if "at_most" in setting:
        return f"<= {setting['at_most']}"
    if "one_of" in setting:
        return " or ".join(map(str, setting["one_of"]))
    return str(setting["paper"])


def row_departures(entry_id: str, settings: Sequence[Mapping], section: Mapping,
                   values: Mapping[str, str]) -> list[str]:
    """The departures of one reproduction row from its paper's protocol, one
    text each (``"<what>: <run's value> (paper: <paper's>)"``, or a fixed
    setting's text), in the order of ``settings``.

    Parameters
    ----------
    entry_id : the paper_values entry id of the row.
    settings : the study's protocol settings (:func:`load_protocols`).
    section : the study's resolved config section (``config[study]``).
    values : the row's placeholder values, e.g. ``{"dkl_ligand": "ligand_gem"}``.
    """
    out = []
    for s in settings:
        if not applies(s, entry_id):
            continue
        if "fixed" in s:
            out.append(f"{s['what']}: {s['fixed']}")
            continue
        value = resolve(s, section, values)
        if value is _MISSING or _follows(s, value):
            continue
        out.append(f"{s['what']}: {value} (paper: {_paper_text(s)})")
    return out


def protocol_problems(protocols: Mapping[str, Sequence[Mapping]], config: Mapping,
                      entry_ids: Sequence[str]) -> list[str]:
    """What would make a setting silently never apply, one line each naming
    the study, the setting's index and ``what``:

    * a ``key`` none of whose paths (placeholders read as "any name") exists
      in the study's section of ``config`` while it has no ``default``;
    * a ``rows`` or ``except`` pattern matching no entry id of
      paper_values.yaml (``entry_ids``).
    """
    out = []
    for study, settings in protocols.items():
        section = config.get(study) or {}
        for i, s in enumerate(settings):
            where = f"paper_protocols.yaml studies.{study}.{i} ({s['what']!r})"
            for field in ("rows", "except"):
                for pattern in s.get(field) or []:
                    if not any(fnmatch.fnmatchcase(e, pattern) for e in entry_ids):
                        out.append(f"{where}: {field} pattern {pattern!r} matches no entry of paper_values.yaml")
            if "key" not in s or "default" in s or not section:
                continue
            keys = s["key"] if isinstance(s["key"], list) else [s["key"]]
            if not any(_exists(section, k) for k in keys):
                out.append(f"{where}: key {' / '.join(keys)} is not a key of config {study} (and the setting "
                           "has no default): a typo would leave every departure of it unstated")
    return out


def _exists(section: Mapping, dotted: str) -> bool:
    """Whether ``dotted`` names a key of ``section``, a ``{placeholder}`` part
    standing for any key at that level."""
    nodes = [section]
    for part in dotted.split("."):
        nxt = []
        for node in nodes:
            if not isinstance(node, Mapping):
                continue
            if _fields(part):
                nxt += list(node.values())
            elif part in node:
                nxt.append(node[part])
        if not nxt:
            return False
        nodes = nxt
    return True
