"""The private SLURM test cluster (tests/slurm_cluster.py): GPU and CPU jobs.

Skipped where no cluster can run (not root, SLURM/munge not installed: see
.ci/install-slurm.sh); with BIOKERNELS_REQUIRE_SLURM=1 that is a failure.
"""

from __future__ import annotations

import subprocess

import pytest

pytestmark = pytest.mark.slurm

# Where the job writes the CUDA_VISIBLE_DEVICES it sees ("<unset>" if unset).
_PROBE = """#!/bin/bash
echo "${CUDA_VISIBLE_DEVICES-<unset>}" > "$1"
"""


@pytest.fixture(scope="module")
def cluster(slurm_cluster):
    """The session's cluster (started once), or skip/fail as configured."""
    return slurm_cluster


@pytest.fixture(scope="module")
def probe_jobs(cluster, tmp_path_factory):
    """Run a GPU job (partition gpu, --gpus=1) and a CPU job (partition cpu)
    with ``sbatch --wait``; return {kind: (job id, CUDA_VISIBLE_DEVICES seen)}."""
    tmp = tmp_path_factory.mktemp("slurm-probe")
    script = tmp / "probe.sh"
    script.write_text(_PROBE)
    # A stale value from the submitting shell must not leak into jobs:
    # SLURM sets it for GPU jobs and clears it for the others.
    env = dict(cluster.env, CUDA_VISIBLE_DEVICES="7")
    procs = {}
    for kind, opts in (("gpu", ["--partition=gpu", "--gpus=1"]), ("cpu", ["--partition=cpu"])):
        procs[kind] = subprocess.Popen(  # both at once: sbatch --wait polls every 2+ s
            ["sbatch", "--wait", "--parsable", f"--job-name=probe-{kind}", "--time=5",
             f"--output={tmp / kind}.log", *opts, str(script), str(tmp / f"{kind}.cuda")],
            env=env, cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
    jobs = {}
    for kind, proc in procs.items():
        try:
            stdout, stderr = proc.communicate(timeout=180)
        except subprocess.TimeoutExpired:
            proc.kill()
            stdout, stderr = proc.communicate()
        assert proc.returncode == 0, (
            f"sbatch ({kind}) failed: {stdout}{stderr}\n{cluster.logs()}"
        )
        job_id = stdout.strip().split(";")[0]
        jobs[kind] = (job_id, (tmp / f"{kind}.cuda").read_text().strip())
    return jobs


def test_cluster_has_cpu_and_gpu_partitions(cluster):
    out = subprocess.run(
        ["sinfo", "--noheader", "--format=%P %G %a"],
        env=cluster.env, capture_output=True, text=True, timeout=30, check=True,
    ).stdout.split("\n")
    rows = {line.split()[0]: line.split()[1:] for line in out if line.strip()}
    assert rows == {"cpu*": ["gpu:1", "up"], "gpu": ["gpu:1", "up"]}


def test_gpu_job_sees_the_gpu(probe_jobs):
    _, seen = probe_jobs["gpu"]
    assert seen == "0", f"GPU job saw CUDA_VISIBLE_DEVICES={seen!r}"


def test_cpu_job_sees_no_gpu(probe_jobs):
    _, seen = probe_jobs["cpu"]
    assert seen in ("<unset>", ""), f"CPU job saw CUDA_VISIBLE_DEVICES={seen!r}"


def test_scheduler_records_gpu_only_for_gpu_job(cluster, probe_jobs):
    records = {r["JobId"]: r for r in cluster.job_records()}
    gpu = records[probe_jobs["gpu"][0]]
    cpu = records[probe_jobs["cpu"][0]]

    assert (gpu["JobName"], gpu["Partition"], gpu["JobState"]) == ("probe-gpu", "gpu", "COMPLETED")
    assert "gres/gpu=1" in gpu["AllocTRES"]
    assert gpu["Gpus"] == 1

    assert (cpu["JobName"], cpu["Partition"], cpu["JobState"]) == ("probe-cpu", "cpu", "COMPLETED")
    assert "gres/gpu" not in cpu["AllocTRES"]
    assert cpu["AllocGRES"] == ""
    assert cpu["Gpus"] == 0


def test_finished_jobs_stay_visible_to_squeue(cluster, probe_jobs):
    """squeue (the status command without accounting) still sees finished jobs."""
    ids = ",".join(job_id for job_id, _ in probe_jobs.values())
    out = subprocess.run(
        ["squeue", "--noheader", "--states=all", f"--jobs={ids}", "--format=%i %T"],
        env=cluster.env, capture_output=True, text=True, timeout=30, check=True,
    ).stdout
    states = dict(line.split() for line in out.splitlines())
    assert states == {job_id: "COMPLETED" for job_id, _ in probe_jobs.values()}
