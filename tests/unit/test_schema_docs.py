"""The config schema written for people, and config/README.md.

Every key of workflow/schemas/config.schema.yaml has a description; the
schemas use named definitions ($defs / $ref), not YAML anchors; every key of
the default config and the overlays is documented in config/README.md, whose
key tables are generated from the schema (biokernels.config_docs); the
default config and each overlay, merged as Snakemake merges --configfile,
validate.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest
import yaml

from biokernels import config_docs
from biokernels.config import schema_errors

REPO = Path(__file__).resolve().parents[2]
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
SCHEMAS = [SCHEMA, *(REPO / "workflow" / "schemas" / f for f in ("paper_values.schema.yaml", "paper_protocols.schema.yaml"))]
DEFAULT = REPO / "config" / "config.yaml"
README = REPO / "config" / "README.md"
# the default config and the report's data files (papers' values, protocols, coverage): not config overlays
NOT_OVERLAYS = ("config.yaml", "paper_values.yaml", "paper_protocols.yaml", "coverage.yaml")
OVERLAYS = sorted(p for p in (REPO / "config").glob("*.yaml") if p.name not in NOT_OVERLAYS) \
    + sorted(p for p in (REPO / ".test" / "config").glob("*.yaml") if not p.is_symlink())  # not the links to config/


def _load(path: Path):
    return yaml.safe_load(path.read_text())


def _merge(base: dict, over: dict) -> dict:
    """Snakemake's --configfile merge (snakemake.utils.update_config):
    mappings key by key, anything else replaced."""
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(base.get(k), dict):
            _merge(base[k], v)
        else:
            base[k] = copy.deepcopy(v)
    return base


def _merged(overlay: Path) -> dict:
    return _merge(_load(DEFAULT), _load(overlay))


def _ref(root: dict, ref: str):
    assert ref.startswith("#/"), f"only local $refs, got {ref}"
    node = root
    for part in ref[2:].split("/"):
        assert part in node, f"$ref {ref}: no {part!r}"
        node = node[part]
    return node


# --- (a) every key described ---------------------------------------------------------

def _undescribed(root: dict) -> list[str]:
    """Dotted paths of the properties (at any depth, through $ref, map
    values, array items and if/then branches) without a non-empty
    description. An empty schema ``{}`` in an if/then branch only lets a key
    through that branch's ``additionalProperties: false``: it counts as
    described when the same key is described in the enclosing definition's
    ``properties``."""
    missing: list[str] = []
    seen: set[int] = set()

    def described(node) -> bool:
        node = config_docs.resolve(node, root)
        return isinstance(node, dict) and isinstance(node.get("description"), str) and node["description"].strip() != ""

    def walk(node, path: str, outer_props: dict):
        if isinstance(node, dict) and "$ref" in node:
            target = _ref(root, node["$ref"])
            if id(target) in seen:          # each definition once (its uses share its text)
                node = {k: v for k, v in node.items() if k != "$ref"}
            else:
                seen.add(id(target))
                walk(target, path, outer_props)
                node = {k: v for k, v in node.items() if k != "$ref"}
        if not isinstance(node, dict):
            return
        props = node.get("properties") or {}
        for key, sub in props.items():
            if sub == {} and key in outer_props:
                if not described(outer_props[key]):
                    missing.append(f"{path}.{key}")
                continue
            if not described(sub):
                missing.append(f"{path}.{key}".lstrip("."))
            walk(sub, f"{path}.{key}".lstrip("."), {})
        for kw in ("allOf", "anyOf", "oneOf"):
            for sub in node.get(kw) or []:
                walk(sub, path, props)
        for kw in ("then", "else"):
            if kw in node:
                walk(node[kw], path, outer_props or props)
        for kw in ("additionalProperties", "items"):
            if isinstance(node.get(kw), dict):
                walk(node[kw], f"{path}.<{kw}>", {})

    walk(root, "", {})
    for name, sub in (root.get("$defs") or {}).items():    # definitions used nowhere yet
        if id(sub) not in seen:
            walk(sub, f"$defs.{name}", {})
    return missing


def test_every_key_of_the_config_schema_has_a_description():
    root = _load(SCHEMA)
    assert _undescribed(root) == []
    assert all(isinstance(d.get("description"), str) and d["description"].strip()
               for d in root["$defs"].values()), "every named definition says what it is"


def test_the_description_check_sees_a_missing_one():
    root = {"type": "object", "properties": {
        "a": {"type": "integer", "description": "ok"},
        "b": {"$ref": "#/$defs/thing"},
        "c": {"type": "object", "properties": {"d": {"type": "string"}}, "description": "c"},
        "s": {"$ref": "#/$defs/source", "description": "a source"}},
        "$defs": {"thing": {"type": "number", "description": "a thing"},
                  "source": {"type": "object", "properties": {"type": {"enum": ["x"], "description": "t"},
                                                              "opt": {"type": "string"}},
                             "allOf": [{"if": {"properties": {"type": {"const": "x"}}},
                                        "then": {"properties": {"type": {}, "opt": {}, "n": {"type": "integer"}},
                                                 "additionalProperties": False}}]}}}
    assert sorted(_undescribed(root)) == ["c.d", "s.n", "s.opt", "s.opt"]


# --- (b) named definitions, no YAML anchors --------------------------------------------

@pytest.mark.parametrize("path", SCHEMAS, ids=lambda p: p.name)
def test_no_yaml_anchors_or_aliases(path):
    text = path.read_text()
    assert not re.search(r"[&*]id\d", text), "PyYAML dump anchors (&id001 / *id001): use $defs and $ref"
    events = list(yaml.parse(text))
    assert not any(isinstance(e, yaml.AliasEvent) for e in events)
    assert not [e.anchor for e in events if getattr(e, "anchor", None)]


@pytest.mark.parametrize("path", SCHEMAS, ids=lambda p: p.name)
def test_every_ref_names_a_definition(path):
    root = _load(path)

    def refs_in(node):
        if isinstance(node, dict):
            if isinstance(node.get("$ref"), str):
                yield node["$ref"]
            for v in node.values():
                yield from refs_in(v)
        elif isinstance(node, list):
            for v in node:
                yield from refs_in(v)

    refs = list(refs_in(root))
    assert refs
    for ref in refs:
        _ref(root, ref)


def test_no_default_on_a_definition_itself():
    """snakemake.utils.validate fills a property's default only when the
    property's own schema has `default`; one written at the top of a $defs
    entry (reached through $ref) would be ignored, so it belongs beside the
    $ref. (Defaults of keys inside a $ref'd object are applied.)"""
    root = _load(SCHEMA)
    assert [name for name, d in root["$defs"].items() if "default" in d] == []


# --- (c) every key documented in config/README.md -------------------------------------

def _leaf_paths(obj, prefix=()):
    if isinstance(obj, dict) and obj:
        for k, v in obj.items():
            yield from _leaf_paths(v, prefix + (str(k),))
    elif prefix:
        yield list(prefix)


@pytest.mark.parametrize("config", [DEFAULT, *OVERLAYS], ids=lambda p: str(p.relative_to(REPO)))
def test_every_leaf_key_is_in_the_readme(config):
    root = _load(SCHEMA)
    readme = README.read_text()
    cfg = _load(DEFAULT) if config == DEFAULT else _merged(config)
    missing = sorted(k for k in {config_docs.schema_key_path(p, root) for p in _leaf_paths(cfg)}
                     if f"| `{k}` |" not in readme)
    assert missing == [], f"keys not documented in config/README.md: {missing}"


def test_schema_key_path_names_map_entries():
    root = _load(SCHEMA)
    assert config_docs.schema_key_path(["diffusion", "sources", "ligand_synthetic", "generator", "frac_random"],
                                       root) == "diffusion.sources.<source>.generator.frac_random"
    assert config_docs.schema_key_path(["pimkl", "sources", "x", "gene_sets", "kegg_path"], root) \
        == "pimkl.sources.<source>.gene_sets.<collection>_path"
    with pytest.raises(KeyError, match="n_trian"):
        config_docs.schema_key_path(["demo", "n_trian"], root)


def test_readme_key_tables_are_generated_from_the_schema():
    text = README.read_text()
    assert text == config_docs.replace_block(text, config_docs.render_tables(SCHEMA, DEFAULT)), \
        "config/README.md is stale: run `python -m biokernels.config_docs --write`"


def test_readme_documents_every_overlay():
    readme = README.read_text()
    assert [p for p in OVERLAYS if str(p.relative_to(REPO)) not in readme] == []


# --- (d) the default config and every overlay validate ----------------------------------

@pytest.mark.parametrize("config", [DEFAULT, *OVERLAYS], ids=lambda p: str(p.relative_to(REPO)))
def test_config_validates(config):
    cfg = _load(DEFAULT) if config == DEFAULT else _merged(config)
    assert schema_errors(cfg, SCHEMA) == []
