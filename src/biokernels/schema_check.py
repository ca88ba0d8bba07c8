"""JSON-schema validation of the project's YAML data files (paper values,
protocols, coverage), one message per problem.

Pure library: jsonschema (draft of the schema's ``$schema``) and PyYAML.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path


def schema_messages(doc, schema_path: str | Path, label: Callable[[list], str | None] | None = None) -> list[str]:
    """One line per schema violation of ``doc`` against the YAML schema at
    ``schema_path``, sorted by location: ``"<label> (<dotted path>): <message>"``
    where ``label(path)`` names the offending record (an entry id, an item),
    else ``"<file stem> <dotted path>: <message>"``. Empty when valid."""
    import jsonschema
    import yaml

    schema = yaml.safe_load(Path(schema_path).read_text())
    validator = jsonschema.validators.validator_for(schema)(schema)
    stem = Path(schema_path).name.split(".")[0]
    lines = []
    for err in sorted(validator.iter_errors(doc), key=lambda e: list(map(str, e.absolute_path))):
        path = list(err.absolute_path)
        where = ".".join(map(str, path)) or "(top level)"
        name = label(path) if label else None
        lines.append(f"{name} ({where}): {err.message}" if name else f"{stem} {where}: {err.message}")
    return lines
