"""Checks of the workflow configuration that a JSON schema cannot express."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path


def find_missing_paths(config: Mapping, base: str | Path = ".", prefix: str = "") -> list[str]:
    """List the config keys ending in ``_path`` whose value names a file or
    folder that does not exist.

    By convention every input path of a real-data config is such a key
    (e.g. ``diffusion.network_path``); relative paths are taken from ``base``
    (the workflow's working directory). Empty or ``null`` values are skipped
    (the input is optional).

    Parameters
    ----------
    config : mapping
        The validated config (nested dicts and lists).
    base : path
    prefix : str
        Dotted key of ``config`` inside the whole config (for recursion).

    Returns
    -------
    list of str
        One message per missing path, naming the dotted key, e.g.
        ``"config key 'diffusion.network_path': '../x.tsv' does not exist"``.
    """
    problems: list[str] = []
    for key, value in config.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping):
            problems += find_missing_paths(value, base, dotted + ".")
        elif isinstance(value, str) and value and str(key).endswith("_path"):
            if not (Path(base) / value).exists():
                problems.append(f"config key '{dotted}': {value!r} does not exist "
                                f"(relative to {Path(base).resolve()})")
    return problems


def schema_errors(config: Mapping, schema_path: str | Path) -> list[str]:
    """Check ``config`` against a JSON schema (YAML file) and return one short
    line per violation, naming the dotted key, e.g.
    ``"config key 'demo': Additional properties are not allowed ('n_trian'
    was unexpected)"``; empty when valid.

    NaN and infinite numbers, which a schema's bounds let through, are
    reported too. Snakemake's own ``validate`` (run afterwards, it also fills defaults)
    prints the whole schema and config with the first error; this gives the
    reader every error, one line each. Source: jsonschema (library).
    """
    import jsonschema
    import yaml

    schema = yaml.safe_load(Path(schema_path).read_text())
    validator = jsonschema.validators.validator_for(schema)(schema)
    lines = []
    for err in sorted(validator.iter_errors(dict(config)), key=lambda e: list(map(str, e.absolute_path))):
        leaves = [err]
        if err.context:  # if/then and oneOf: report the innermost reasons
            leaves = [e for e in err.context if not e.context] or leaves
        for e in leaves:
            key = ".".join(map(str, e.absolute_path)) or "<top level>"
            lines.append(f"config key '{key}': {e.message}")
    lines += [f"config key '{key}': expected a finite number, got {value!r}" for key, value in _non_finite(config)]
    return list(dict.fromkeys(lines))


def _non_finite(obj, prefix: str = ""):
    """(dotted key, value) of every NaN or infinite number in a config tree:
    JSON Schema's bounds cannot reject them (every comparison with NaN is
    false), and no setting of this workflow takes one."""
    if isinstance(obj, Mapping):
        for k, v in obj.items():
            yield from _non_finite(v, f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _non_finite(v, f"{prefix}.{i}")
    elif isinstance(obj, float) and not math.isfinite(obj):
        yield prefix, obj
