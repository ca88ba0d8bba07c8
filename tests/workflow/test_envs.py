"""Every rule's conda env exists, parses, pins what pyproject.toml pins, and
lists every third-party package that its script and the library modules the
script uses import."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from conftest import REPO

# Import name -> distribution name where they differ. matplotlib comes as
# matplotlib-base from conda-forge (no Qt); torch from PyPI via pip.
IMPORT_TO_DIST = {"sklearn": "scikit-learn", "yaml": "pyyaml", "matplotlib": "matplotlib-base"}
DIST_ALIASES = {"matplotlib-base": "matplotlib"}


def _imports(path: Path) -> set[str]:
    """Dotted names of every module imported anywhere in a Python file."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names |= {f"{node.module}.{a.name}" for a in node.names}
    return names


def _module_file(dotted: str) -> Path | None:
    base = REPO / "src" / Path(*dotted.split("."))
    for cand in (base.with_suffix(".py"), base / "__init__.py"):
        if cand.is_file():
            return cand
    return None


def third_party_imports(script: Path) -> set[str]:
    """Top-level third-party modules imported by ``script`` and, transitively,
    by the biokernels modules it imports."""
    seen: set[Path] = set()
    todo = [script]
    found: set[str] = set()
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.add(f)
        for name in _imports(f):
            top = name.split(".")[0]
            if top == "biokernels":
                parts = name.split(".")
                for i in range(1, len(parts) + 1):  # packages' __init__ too
                    mf = _module_file(".".join(parts[:i]))
                    if mf:
                        todo.append(mf)
            elif top not in sys.stdlib_module_names and top != "__future__":
                found.add(top)
    return found


def env_packages(env_file: Path) -> dict[str, str]:
    """Distribution name -> pinned version ('' when unpinned) of a conda env."""
    spec = yaml.safe_load(env_file.read_text())
    assert set(spec["channels"]) == {"conda-forge", "bioconda", "nodefaults"}, env_file
    pkgs: dict[str, str] = {}
    for dep in spec["dependencies"]:
        if isinstance(dep, dict):
            for pip_dep in dep.get("pip", []):
                name, _, ver = pip_dep.partition("==")
                pkgs[name.strip().lower()] = ver.strip()
        else:
            m = re.fullmatch(r"([A-Za-z0-9_.\-]+)\s*(?:=+\s*([^\s=]+))?", dep.strip())
            assert m, f"{env_file}: cannot parse dependency {dep!r}"
            pkgs[m.group(1).lower()] = m.group(2) or ""
    return pkgs


def pyproject_pins() -> dict[str, str]:
    meta = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    deps = list(meta["dependencies"])
    for extra in meta.get("optional-dependencies", {}).values():
        deps += extra
    pins = {}
    for d in deps:
        name, sep, ver = re.sub(r"\[.*?\]", "", d).partition("==")
        assert sep, f"pyproject.toml: {d!r} is not pinned exactly (==)"
        pins[name.strip().lower()] = ver.strip()
    return pins


def _running_rules(workflow_rules):
    return {n: r for n, r in workflow_rules.items() if not r.norun}


def test_every_running_rule_has_an_existing_env(workflow_rules):
    rules = _running_rules(workflow_rules)
    assert rules, "the workflow has no rules that run anything"
    for name, rule in rules.items():
        assert rule.conda_env, f"rule {name} has no conda: directive"
        env_file = Path(rule.basedir) / rule.conda_env
        assert env_file.is_file(), f"rule {name}: env {env_file} does not exist"
        env_packages(env_file)  # parses


def test_env_lists_every_third_party_import(workflow_rules):
    for name, rule in _running_rules(workflow_rules).items():
        if not rule.script:
            continue
        script = (Path(rule.basedir) / rule.script).resolve()
        pkgs = env_packages(Path(rule.basedir) / rule.conda_env)
        needed = {IMPORT_TO_DIST.get(m, m).lower() for m in third_party_imports(script)}
        needed.discard("snakemake")  # provided by Snakemake itself in every job
        missing = needed - set(pkgs)
        assert not missing, f"rule {name}: {rule.conda_env} lacks {sorted(missing)} imported by {script.name}"


def test_env_pins_equal_pyproject_pins():
    pins = pyproject_pins()
    env_files = sorted((REPO / "workflow" / "envs").glob("*.yaml"))
    assert env_files
    for env_file in env_files:
        for name, ver in env_packages(env_file).items():
            dist = DIST_ALIASES.get(name, name)
            if name in ("python", "pip"):
                continue
            assert dist in pins, f"{env_file.name}: {name} is not pinned in pyproject.toml"
            assert ver == pins[dist], f"{env_file.name}: {name}={ver} but pyproject.toml pins {pins[dist]}"


def test_import_scanner_sees_transitive_library_imports():
    # demo_sweep.py imports biokernels.solvers.krr, which imports torch at
    # module level and sklearn inside r2_score: both must be found.
    found = third_party_imports(REPO / "workflow" / "scripts" / "demo_sweep.py")
    assert {"torch", "sklearn", "numpy", "pandas"} <= found
