"""The drug screen's source model as a GPU job on a real SLURM cluster
(tests/slurm_cluster.py, one fake GPU), fitted by two processes through the
distributed launch (torchrun, gloo on the CPU: the fake GPU has no CUDA).

The data steps run locally first (``--omit-from drug_screen_source``); then
`snakemake --profile slurm` submits the source rule alone, with
``solver_settings.processes: 2``. The rule asks SLURM for one GPU per process;
the test cluster has one GPU and a few GB, so the test sets the rule's
``gpu`` to 1 and its ``mem_mb`` to 2000 with Snakemake's own
``--set-resources``, as a user would on a small partition."""

from __future__ import annotations

import json
import os
import re
import subprocess

import pytest
import yaml

from conftest import BIN, REPO, SNAKEMAKE, copy_workflow, run_snakemake

pytestmark = [pytest.mark.slurm, pytest.mark.slow]

TINY_DS = REPO / ".test/config/drug_screen_tiny.yaml"
PRED = "results/drug_screen/tiny/morgan/source/predictions.gctx"


def test_source_model_runs_as_a_distributed_gpu_job(slurm_cluster, tmp_path):
    wd = copy_workflow(tmp_path / "wf")
    subprocess.run(["make", "profiles"], cwd=wd, check=True, capture_output=True)
    cfg = yaml.safe_load(TINY_DS.read_text())
    cfg["drug_screen"]["solver"] = "nystrom"
    cfg["drug_screen"]["solver_settings"] = {"processes": 2}
    (wd / "dist.yaml").write_text(yaml.safe_dump(cfg))
    run_snakemake(["--cores", "2", PRED, "--omit-from", "drug_screen_source", "--configfile", "dist.yaml"], wd)
    assert not (wd / PRED).exists()

    env = dict(slurm_cluster.env)
    env["PATH"] = f"{BIN}{os.pathsep}{env['PATH']}"
    before = {r["JobId"] for r in slurm_cluster.job_records()}
    proc = subprocess.run([SNAKEMAKE, "--profile", "slurm", PRED, "--configfile", "dist.yaml", "--set-resources",
                           "drug_screen_source:gpu=1", "drug_screen_source:mem_mb=2000"], cwd=wd, env=env, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
    records = [r for r in slurm_cluster.job_records() if r["JobId"] not in before]
    source = [r for r in records if re.search(r"rule_drug_screen_source", str(r.get("Comment", "")))]
    assert len(source) == 1 and len(records) == 1, records  # the source rule alone, one job
    job = source[0]
    assert job["JobState"] == "COMPLETED" and job["Partition"] == "gpu", job
    assert job["Gpus"] == 1 and "gres/gpu=1" in job["AllocTRES"], job

    log = (wd / "results/drug_screen/tiny/morgan/logs/source.log").read_text()
    m = re.search(r"SLURM_JOB_ID=(\S+) SLURM_JOB_PARTITION=(\S+) CUDA_VISIBLE_DEVICES=(\S+)", log)
    assert m and m.group(1) != "<unset>" and m.group(2) == "gpu" and m.group(3) == "0", log[:500]
    assert "torch.distributed.run" in log and "--nproc-per-node=2" in log
    assert "rank 0/2" in log and "rank 1/2" in log  # both processes joined the gloo group
    summary = json.loads((wd / "results/drug_screen/tiny/morgan/source/summary.json").read_text())
    assert summary["processes"] == 2 and summary["solver"]["method"] == "nystrom"
    assert (wd / PRED).stat().st_size > 0
