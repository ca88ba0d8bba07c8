"""Shared fixtures: the repository, the workflow's rules, fresh work dirs."""

from __future__ import annotations

import fnmatch
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from slurm_cluster import SlurmCluster, slurm_unavailable_reason

REPO = Path(__file__).resolve().parents[1]

# Under pytest-xdist (`make test`: a worker per core), one BLAS/OpenMP thread
# per worker (torch; numpy's and scipy's OpenBLAS), set here, before any test
# module imports them: with their default of a thread per core, the workers'
# threads oversubscribe the cores and spin-wait on each other, which made the
# unit tests far slower. Snakemake sets the thread counts of each job from its
# `threads:`, so the workflow's jobs keep theirs; but a job's idle OpenMP and
# OpenBLAS threads would still spin while another worker's job wants the core:
# they sleep at once instead (OMP_WAIT_POLICY, OPENBLAS_THREAD_TIMEOUT: 2^4
# cycles), inherited by the Snakemake runs of the tests. None of these changes
# a result. A value set by the user stays.
if os.environ.get("PYTEST_XDIST_WORKER"):
    for _var, _value in (("OMP_NUM_THREADS", "1"), ("OPENBLAS_NUM_THREADS", "1"), ("MKL_NUM_THREADS", "1"),
                         ("OMP_WAIT_POLICY", "PASSIVE"), ("OPENBLAS_THREAD_TIMEOUT", "4")):
        os.environ.setdefault(_var, _value)

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


# --- pytest-xdist (`make test` runs `pytest -n auto`) --------------------------
#
# Tests that share an expensive session- or module-scoped fixture run on one
# worker under pytest-xdist, which sets the fixture up once: every SLURM test
# file, tests/workflow/test_slurm_*.py (the session's one cluster, started by
# whichever worker runs them), and each file of XDIST_FILE_GROUPS (the report
# built once by `reproduce` for both tests of test_report_browser.py). The
# grouping is by file name because xdist's scheduler sees only node ids; the
# xdist_group mark of `--dist loadgroup` would do it by rewriting node ids,
# which pytest 9.2 no longer lets xdist 3.8 do (pytest-dev/pytest-xdist#1386):
# the mark alone groups nothing.
XDIST_FILE_GROUPS = {"tests/workflow/test_report_browser.py": "report_browser"}


def _xdist_group(rel_path: str) -> str | None:
    """The group of the tests of a file (its repository-relative path)."""
    if fnmatch.fnmatch(rel_path, "tests/workflow/test_slurm_*.py"):
        return "slurm"
    return XDIST_FILE_GROUPS.get(rel_path)


def pytest_collection_modifyitems(config, items):
    """A test that uses the SLURM cluster must be in a test_slurm_*.py file
    (else, under pytest-xdist, a second worker would start a second cluster).
    Under pytest-xdist, hand out the long tests first: those marked ``slow``
    (real Snakemake runs), then the other workflow tests, the short unit tests
    last, so that no worker starts a minutes-long run while the other runs out
    of work (a stable sort: within each kind, the collection order). Serial
    runs keep the collection order."""
    for item in items:
        path = Path(str(item.path)).resolve()
        rel = path.relative_to(REPO).as_posix() if path.is_relative_to(REPO) else str(path)
        if "slurm_cluster" in getattr(item, "fixturenames", ()) and _xdist_group(rel) != "slurm":
            raise pytest.UsageError(f"{item.nodeid} uses the slurm_cluster fixture: name its file "
                                    "tests/workflow/test_slurm_*.py (tests/conftest.py, pytest-xdist groups)")
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return

    def kind(item) -> int:
        if item.get_closest_marker("slow"):
            return 0
        return 1 if Path(str(item.path)).is_relative_to(REPO / "tests" / "workflow") else 2

    items.sort(key=kind)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """The scheduler of ``-n N`` (xdist's default ``--dist load``) and of
    ``--dist loadgroup``: each test is its own unit of work, but for the
    tests of one group (_xdist_group), which go to one worker together; the
    units with most tests go out first (xdist's loadgroup). Other --dist
    modes are xdist's own."""
    if config.getvalue("dist") not in ("load", "loadgroup"):
        return None
    from xdist.scheduler import LoadGroupScheduling

    class FileGroupScheduling(LoadGroupScheduling):
        def _split_scope(self, nodeid: str) -> str:
            scope = super()._split_scope(nodeid)  # "...@name" (a working xdist_group mark): name
            if scope != nodeid:
                return scope
            group = _xdist_group(nodeid.split("::", 1)[0])
            return f"group:{group}" if group else nodeid

    return FileGroupScheduling(config, log)


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


@pytest.fixture(scope="module")
def planted_network():
    """Factory ``(n, edges, tasks, seed) -> (A, d, P, labels, train_mask)``
    for the diffusion study's unit tests: a planted function network of the
    generator, its adjacency, the eigendecomposition of its Laplacian and
    the generator's train split (cached per module)."""
    import numpy as np

    from biokernels.io.networks import adjacency_matrix
    from biokernels.kernels.diffusion import laplacian, laplacian_eigh
    from biokernels.synth.networks import planted_function_network

    cache = {}

    def make(n: int, edges: int, tasks: int, seed: int):
        key = (n, edges, tasks, seed)
        if key not in cache:
            e, labels, split = planted_function_network(n, edges, tasks, np.random.default_rng(seed))
            _, A = adjacency_matrix(e, list(labels.index))
            d, P = laplacian_eigh(laplacian(A))
            cache[key] = (A, d, P, labels, (split == "train").to_numpy())
        return cache[key]

    return make
