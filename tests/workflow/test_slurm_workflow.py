"""`snakemake --profile slurm` on a real single-node SLURM cluster
(tests/slurm_cluster.py) with a fake GPU: GPU-tagged jobs get a GPU, CPU jobs
do not, by the scheduler's own records and by what each job saw."""

from __future__ import annotations

import os
import re
import subprocess

import pytest

from conftest import BIN, SNAKEMAKE, copy_workflow

pytestmark = [pytest.mark.slurm, pytest.mark.slow]

TARGET = "demo_lam_sweep"
EXPECTED_RULES = {"demo_generate": False, "demo_sweep": True, "demo_figure": False}  # rule -> GPU


@pytest.fixture(scope="module")
def slurm_run(slurm_cluster, tmp_path_factory):
    wd = copy_workflow(tmp_path_factory.mktemp("slurm") / "wf")
    # The README's set-up renders ./slurm from profiles/slurm (make setup).
    subprocess.run(["make", "profiles"], cwd=wd, check=True, capture_output=True)
    env = dict(slurm_cluster.env)
    env["PATH"] = f"{BIN}{os.pathsep}{env['PATH']}"  # jobs find the venv's snakemake
    before = {r["JobId"] for r in slurm_cluster.job_records()}
    # The exact command users type (plus the target).
    proc = subprocess.run([SNAKEMAKE, "--profile", "slurm", TARGET], cwd=wd, env=env,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
    records = [r for r in slurm_cluster.job_records() if r["JobId"] not in before]
    return wd, proc, records


def _rule_of(record) -> str:
    m = re.search(r"rule_([A-Za-z0-9_]+?)(?:_wildcards|$)", str(record.get("Comment", "")))
    return m.group(1) if m else ""


def test_profile_found_by_name_and_outputs_made(slurm_run):
    wd, proc, _ = slurm_run
    assert "Using profile slurm" in proc.stderr
    assert (wd / "results/demo/tables/demo_lam_sweep.tsv").stat().st_size > 0
    assert (wd / "results/demo/figures/demo_lam_sweep.png").stat().st_size > 1000


def test_gpu_jobs_and_only_they_get_a_gpu(slurm_run):
    wd, _, records = slurm_run
    by_rule = {}
    for r in records:
        by_rule.setdefault(_rule_of(r), []).append(r)
    assert set(EXPECTED_RULES) <= set(by_rule), f"jobs seen: {sorted(by_rule)}"
    for rule, gpu in EXPECTED_RULES.items():
        for r in by_rule[rule]:
            assert r["JobState"] == "COMPLETED", r
            if gpu:
                assert r["Gpus"] == 1 and "gres/gpu=1" in r["AllocTRES"], r
                assert r["Partition"] == "gpu", r
            else:
                assert r["Gpus"] == 0 and "gres/gpu" not in r["AllocTRES"], r
                assert r["Partition"] == "cpu", r


def test_jobs_saw_their_allocation(slurm_run):
    wd, _, _ = slurm_run
    logs = wd / "results/demo/logs"
    seen = {}
    for name, rule in (("demo_generate.log", "demo_generate"), ("demo_sweep_lam.log", "demo_sweep"),
                       ("demo_figure_lam.log", "demo_figure")):
        m = re.search(r"SLURM_JOB_ID=(\S+) SLURM_JOB_PARTITION=(\S+) CUDA_VISIBLE_DEVICES=(\S+)",
                      (logs / name).read_text())
        assert m, name
        seen[rule] = m.groups()
    for rule, (job_id, partition, cvd) in seen.items():
        assert job_id != "<unset>", f"{rule} did not run under SLURM"
        if EXPECTED_RULES[rule]:
            assert cvd == "0" and partition == "gpu", (rule, cvd, partition)
        else:
            assert cvd == "<unset>" and partition == "cpu", (rule, cvd, partition)
