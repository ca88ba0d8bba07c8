"""Every rule's conda env exists, parses, pins what pyproject.toml pins, and
lists every third-party package that its script and the library modules the
script uses import; every env installs biokernels itself (post-deploy
script); the locks (requirements/lock-*.txt) hash every file and resolve
every pin of pyproject.toml and the envs to the same version."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from packaging.version import Version

from conftest import REPO

# Import name -> distribution name where they differ. matplotlib comes as
# matplotlib-base from conda-forge (no Qt); torch from PyPI via pip.
IMPORT_TO_DIST = {"sklearn": "scikit-learn", "yaml": "pyyaml", "matplotlib": "matplotlib-base"}
DIST_ALIASES = {"matplotlib-base": "matplotlib"}

LOCK_CPU = REPO / "requirements" / "lock-cpu.txt"
LOCK_CUDA = REPO / "requirements" / "lock-cuda.txt"
LOCKS = [LOCK_CPU, LOCK_CUDA, REPO / "requirements" / "pip.txt"]
ENV_DIR = REPO / "workflow" / "envs"


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


# --- the locks ---------------------------------------------------------------


def norm(name: str) -> str:
    """PEP 503 normalised project name: the lock writes `mklpy`, pyproject
    `MKLpy`; `jupyter_core` and `jupyter-core` are one project. Names are
    compared normalised because pip and uv treat them so."""
    return re.sub(r"[-_.]+", "-", name).lower()


def same_release(a: str, b: str) -> bool:
    """Two versions name the same release: equal as PEP 440 versions once the
    local label is dropped. Deliberate: the CPU lock pins torch 2.13.0+cpu
    (PyTorch's CPU build of the 2.13.0 release), which pyproject's and the
    torch env's torch==2.13.0 accept (PEP 440: == without a local label
    matches any local label), while the CUDA lock and the conda env take
    PyPI's 2.13.0 itself. Every other local label would be a mistake, so the
    CPU lock's torch is checked to carry exactly +cpu (test below)."""
    return Version(a).public == Version(b).public


def lock_requirements(lock: Path) -> dict[str, tuple[str, list[str]]]:
    """Normalised name -> (pinned version, sha256 hashes) of a hashed
    requirements file; fails on any requirement that is not `name==version`."""
    logical, cur = [], ""
    for raw in lock.read_text().splitlines():
        line = raw.split(" #", 1)[0].strip() if not raw.lstrip().startswith("#") else ""
        if not line:
            continue
        cur += " " + line.rstrip("\\").strip()
        if not line.endswith("\\"):
            logical.append(cur.strip())
            cur = ""
    assert not cur, f"{lock.name}: trailing line continuation"
    reqs = {}
    for req in logical:
        m = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)((?:\s+--hash=\S+)*)", req)
        assert m, f"{lock.name}: not an exact pin with hashes: {req!r}"
        hashes = m.group(3).split()
        for h in hashes:
            assert re.fullmatch(r"--hash=sha256:[0-9a-f]{64}", h), f"{lock.name}: {m.group(1)}: bad hash {h!r}"
        name = norm(m.group(1))
        assert name not in reqs, f"{lock.name}: {name} listed twice"
        reqs[name] = (m.group(2), [h.split(":", 1)[1] for h in hashes])
    assert reqs, f"{lock.name}: no requirements"
    return reqs


@pytest.mark.parametrize("lock", LOCKS, ids=lambda p: p.name)
def test_lock_pins_and_hashes_every_requirement(lock):
    for name, (_, hashes) in lock_requirements(lock).items():
        assert hashes, f"{lock.name}: {name} has no --hash=sha256: (pip --require-hashes would refuse the lock)"


@pytest.mark.parametrize("lock", [LOCK_CPU, LOCK_CUDA], ids=lambda p: p.name)
def test_lock_resolves_every_pyproject_pin_to_its_version(lock):
    locked = lock_requirements(lock)
    for name, ver in pyproject_pins().items():
        name = norm(name)
        assert name in locked, f"{lock.name} lacks {name} (pyproject.toml pins it): run `make lock`"
        assert same_release(locked[name][0], ver), \
            f"{lock.name} pins {name}=={locked[name][0]} but pyproject.toml {ver}: run `make lock`"


def test_cpu_lock_takes_torch_cpu_build_and_cuda_lock_pypi_build():
    cpu_torch = Version(lock_requirements(LOCK_CPU)["torch"][0])
    cuda_torch = Version(lock_requirements(LOCK_CUDA)["torch"][0])
    assert cpu_torch.local == "cpu", f"lock-cpu.txt pins torch {cpu_torch}, not a +cpu build"
    assert cuda_torch.local is None, f"lock-cuda.txt pins torch {cuda_torch}, not PyPI's build"


def test_cpu_and_cuda_locks_agree_but_for_torchs_cuda_stack():
    cpu, cuda = lock_requirements(LOCK_CPU), lock_requirements(LOCK_CUDA)
    assert not set(cpu) - set(cuda), f"only in lock-cpu.txt: {sorted(set(cpu) - set(cuda))}"
    extra = set(cuda) - set(cpu)
    assert all(re.match(r"(nvidia-|cuda-|triton$)", n) for n in extra), \
        f"lock-cuda.txt adds more than torch's CUDA stack: {sorted(extra)}"
    for name in set(cpu) & set(cuda):
        assert same_release(cpu[name][0], cuda[name][0]), \
            f"{name}: lock-cpu.txt {cpu[name][0]}, lock-cuda.txt {cuda[name][0]}"


def test_env_pins_equal_lock_versions():
    locks = {p.name: lock_requirements(p) for p in (LOCK_CPU, LOCK_CUDA)}
    for env_file in sorted(ENV_DIR.glob("*.yaml")):
        for name, ver in env_packages(env_file).items():
            if name in ("python", "pip"):
                continue
            dist = norm(DIST_ALIASES.get(name, name))
            for lock_name, locked in locks.items():
                assert dist in locked, f"{env_file.name}: {name} is not in {lock_name}"
                assert same_release(ver, locked[dist][0]), \
                    f"{env_file.name}: {name}={ver} but {lock_name} resolves {locked[dist][0]}"


def test_locks_leave_out_rfc3987_syntax():
    # Issue #20: installed, it costs ~1.2 s on every `import jsonschema`
    # (requirements/overrides.txt says why nothing needs it).
    for lock in (LOCK_CPU, LOCK_CUDA):
        assert "rfc3987-syntax" not in lock_requirements(lock), f"{lock.name} installs rfc3987-syntax"


def test_make_setup_installs_the_lock_and_reruns_when_it_changes(tmp_path):
    if not shutil.which("make"):
        pytest.skip("no make")
    for item in ("Makefile", "pyproject.toml", "requirements"):
        src = REPO / item
        (shutil.copytree if src.is_dir() else shutil.copy2)(src, tmp_path / item)
    venv = tmp_path / "v"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAKE")}
    recipe = subprocess.run(["make", "-n", "setup", f"VENV={venv}"], cwd=tmp_path, env=env,
                            capture_output=True, text=True, check=True).stdout
    assert "--require-hashes --no-deps -r requirements/lock-cpu.txt" in recipe
    assert "install --quiet --no-deps -e ." in recipe
    assert "pip check" in recipe
    # The stamp is up to date when newer than the lock and pyproject.toml, and
    # stale again when the lock changes.
    venv.mkdir()
    stamp = venv / ".biokernels-installed"
    stamp.touch()
    t = stamp.stat().st_mtime
    for f in ("requirements/lock-cpu.txt", "requirements/pip.txt", "pyproject.toml"):
        os.utime(tmp_path / f, (t - 10, t - 10))
    q = ["make", "-q", f"VENV={venv}", str(stamp)]
    assert subprocess.run(q, cwd=tmp_path, env=env).returncode == 0
    os.utime(tmp_path / "requirements/lock-cpu.txt", (t + 10, t + 10))
    assert subprocess.run(q, cwd=tmp_path, env=env).returncode == 1


# --- biokernels inside every conda env -----------------------------------------


def test_every_env_installs_biokernels_with_a_post_deploy_script():
    # Snakemake runs <env>.post-deploy.sh (the yaml's name, .yaml replaced)
    # inside the new env; it needs pip there.
    env_files = sorted(ENV_DIR.glob("*.yaml"))
    scripts = []
    for env_file in env_files:
        script = env_file.with_suffix(".post-deploy.sh")
        assert script.is_file(), f"{env_file.name} has no {script.name}: biokernels would not be importable there"
        assert "pip" in env_packages(env_file), f"{env_file.name}: lists no pip for {script.name}"
        scripts.append(script.read_text())
    assert len(set(scripts)) == 1, "the envs' post-deploy scripts differ"
    text = scripts[0]
    assert text.startswith("#!/usr/bin/env bash\n")
    assert re.search(r"^python -m pip install .*--no-deps --editable \"\$src\"$", text, re.M)
    if shutil.which("bash"):
        subprocess.run(["bash", "-n", str(env_files[0].with_suffix(".post-deploy.sh"))], check=True)


def test_post_deploy_refuses_a_directory_that_is_not_the_repository(tmp_path):
    if not shutil.which("bash"):
        pytest.skip("no bash")
    env = {k: v for k, v in os.environ.items() if k != "BIOKERNELS_SRC"}
    proc = subprocess.run(["bash", str(ENV_DIR / "core.post-deploy.sh")], cwd=tmp_path, env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 1
    assert "is not the biokernels repository" in proc.stderr
