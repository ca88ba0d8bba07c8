"""Shared fixtures: the repository, the workflow's rules, fresh work dirs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from slurm_cluster import SlurmCluster, slurm_unavailable_reason

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
SNAKEMAKE = str(BIN / "snakemake")
SHARED_DATA = REPO.parent / "shared" / "data"

# What a fresh clone holds, for the workflow (no results, caches or venv).
_WORKFLOW_ITEMS = ["workflow", "src", "config", ".test",
                   "profiles", "resources/README.md", "Makefile", "pyproject.toml"]
_IGNORE = shutil.ignore_patterns("__pycache__", "*.egg-info", ".snakemake", "results")


def _project_files() -> list[str] | None:
    """Files a clone of the repository would hold (tracked, plus new files
    not ignored by git), or None outside a git checkout."""
    proc = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                          cwd=REPO, capture_output=True, text=True)
    return proc.stdout.splitlines() if proc.returncode == 0 else None


def copy_workflow(dest: Path) -> Path:
    """Copy the workflow's parts to ``dest`` as a fresh clone would have them:
    in a git checkout only files git tracks or would add (so a file hidden by
    .gitignore is missing here as in a clone); otherwise the workflow folders."""
    dest.mkdir(parents=True, exist_ok=True)
    files = _project_files()
    if files is not None:
        for rel in files:
            top = rel.split("/")[0]
            if top in _WORKFLOW_ITEMS or rel in _WORKFLOW_ITEMS:
                src = REPO / rel
                if src.is_file():
                    (dest / rel).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(src, dest / rel)
        return dest
    for item in _WORKFLOW_ITEMS:
        src = REPO / item
        if src.is_dir():
            shutil.copytree(src, dest / item, ignore=_IGNORE)
        else:
            (dest / item).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / item)
    return dest


def run_snakemake(args: list[str], cwd: Path, check: bool = True, env: dict | None = None,
                  timeout: int = 600) -> subprocess.CompletedProcess:
    """Run the venv's snakemake CLI in ``cwd``; output is captured as text."""
    proc = subprocess.run([SNAKEMAKE, *args], cwd=cwd, capture_output=True, text=True,
                          env=env, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed ({proc.returncode}):\n"
                             f"{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return proc


@pytest.fixture
def workdir(tmp_path) -> Path:
    """A fresh copy of the workflow in a temporary folder."""
    return copy_workflow(tmp_path / "wf")


@pytest.fixture(scope="session")
def workflow_rules():
    """The workflow's rules, parsed by Snakemake's own API (name -> Rule)."""
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import ConfigSettings, OutputSettings, ResourceSettings

    with SnakemakeApi(OutputSettings(quiet=True)) as api:
        wf = api.workflow(resource_settings=ResourceSettings(), config_settings=ConfigSettings(),
                          snakefile=REPO / "workflow" / "Snakefile", workdir=REPO)
        yield {rule.name: rule for rule in wf._workflow.rules}


def require_slurm() -> None:
    """Skip the calling test when no SLURM cluster can run here.

    With ``BIOKERNELS_REQUIRE_SLURM=1`` in the environment (CI, where
    ``.ci/install-slurm.sh`` ran) the test fails instead of being skipped.
    """
    reason = slurm_unavailable_reason()
    if reason is None:
        return
    if os.environ.get("BIOKERNELS_REQUIRE_SLURM") == "1":
        pytest.fail(f"BIOKERNELS_REQUIRE_SLURM=1 but {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def slurm_cluster():
    """A running single-node SLURM cluster (tests/slurm_cluster.py: partitions
    ``cpu`` and ``gpu`` with one fake GPU), shared by the whole session; use
    ``slurm_cluster.env`` for sbatch/squeue/snakemake subprocesses."""
    require_slurm()
    with SlurmCluster() as cluster:
        yield cluster
