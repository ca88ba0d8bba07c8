"""Loading and validating ``config/paper_values.yaml`` (the papers'
numbers) against its schema."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from biokernels.report.kinds import _DEFAULT_SCHEMA, PaperValuesError
from biokernels.schema_check import schema_messages


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


