"""benchmarks/gpu_check.sh at its CPU size: the prepared GPU check runs end to end
before a GPU is lent, and its device-against-CPU comparisons hold on the CPU
(float32 against float64 within the script's stated tolerances)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_gpu_check_small_on_cpu(tmp_path):
    out = tmp_path / "gpu_check.json"
    res = subprocess.run([str(REPO / "benchmarks" / "gpu_check.sh"), "--small", "--device", "cpu",
                          "--out", str(out)], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    report = json.loads(out.read_text())
    assert report["ok"] and report["device"] == "cpu" and report["size"] == "small"
    steps = report["steps"]
    assert set(steps) == {"ntk_fc", "cntk", "pair_ntk", "source_fit"}
    for name in ("ntk_fc", "cntk", "pair_ntk"):
        assert steps[name]["status"] == "ok" and steps[name]["agrees"], (name, steps[name])
    (row,) = steps["source_fit"]["rows"]
    assert row["n"] == 1000 and row["method"] == "nystrom" and row["device"] == "cpu"
    assert 0.0 < row["r2"] <= 1.0                     # a fit of the planted screen, scored on held-out pairs
    cal = report["environment"]["calibration"]
    assert cal["gemm_gflops_1thread"] > 0 and cal["python_loop_mops"] > 0
