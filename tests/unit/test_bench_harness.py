"""benchmarks/_harness.py: interleaving order, medians of repeats, environment
keys, the JSON report. Nothing here asserts on a measured time."""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path

import pytest

HARNESS = Path(__file__).resolve().parents[2] / "benchmarks" / "_harness.py"


@pytest.fixture(scope="module")
def harness():
    spec = importlib.util.spec_from_file_location("bench_harness_under_test", HARNESS)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    yield mod
    sys.modules.pop(spec.name, None)


class FakeClock:
    """Each call to a contender advances the clock by its scripted duration."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_round_robin_rotated_order_and_warmup(harness):
    calls = []
    contenders = {k: (lambda k=k: calls.append(k)) for k in "abc"}
    cmp = harness.run_interleaved(contenders, warmup=2, repeats=4, clock=FakeClock())
    # warm-up: 2 rounds (rotated), then 4 timed rounds, each rotated left by its index
    assert calls[:6] == list("abc") + list("bca")
    assert cmp.order == [list("abc"), list("bca"), list("cab"), list("abc")]
    assert calls[6:] == [x for rnd in cmp.order for x in rnd]
    assert all(len(t) == 4 for t in cmp.times.values())
    # every contender ran first, and last, at least once
    assert {rnd[0] for rnd in cmp.order} == set("abc") and {rnd[-1] for rnd in cmp.order} == set("abc")


def test_median_of_repeats_and_ratio(harness):
    clock = FakeClock()
    script = {"slow": iter([5.0, 1.0, 9.0, 7.0, 3.0]), "fast": iter([2.0, 1.0, 3.0, 8.0, 1.0])}

    def make(name):
        def call():
            clock.now += next(script[name])
            return name
        return call

    cmp = harness.run_interleaved({"slow": make("slow"), "fast": make("fast")}, warmup=0, repeats=5,
                                  clock=clock)
    assert cmp.times["slow"] == [5.0, 1.0, 9.0, 7.0, 3.0]
    assert cmp.median("slow") == 5.0 and cmp.median("fast") == 2.0
    assert cmp.ratio("slow", "fast") == 2.5
    assert cmp.paired_ratios("slow", "fast") == [2.5, 1.0, 3.0, 7.0 / 8.0, 3.0]
    assert cmp.outputs == {"slow": "slow", "fast": "fast"}
    s = cmp.summary("slow")
    assert s["median_s"] == 5.0 and s["min_s"] == 1.0 and s["max_s"] == 9.0 and s["times_s"] == cmp.times["slow"]
    h = harness.headline_ratio("x", cmp, "slow", "fast", precision="float64", output="same thing",
                               max_abs_diff=1e-12, tolerance=1e-9, n=3)
    assert h["ratio"] == 2.5 and h["paired_ratio_median"] == 2.5 and h["same_output"] is True and h["precision"] == "float64" and h["n"] == 3


def test_setup_is_untimed_and_runs_before_every_call(harness):
    clock = FakeClock()
    seen = []

    def setup():
        clock.now += 100.0            # untimed work
        return len(seen)

    def fn(state):
        seen.append(state)
        clock.now += 1.0

    cmp = harness.run_interleaved({"c": harness.Contender(fn, setup=setup)}, warmup=1, repeats=3, clock=clock)
    assert cmp.times["c"] == [1.0, 1.0, 1.0]
    assert seen == [0, 1, 2, 3]       # a fresh state for the warm-up and each repeat


def test_memory_and_bad_arguments(harness):
    cmp = harness.run_interleaved({"alloc": lambda: bytearray(2**20)}, warmup=0, repeats=3, memory=True)
    assert set(cmp.peak_mib) == {"alloc"} and cmp.peak_mib["alloc"] >= 0
    with pytest.raises(ValueError, match="repeats"):
        harness.run_interleaved({"a": lambda: None}, repeats=2)
    with pytest.raises(ValueError, match="warmup"):
        harness.run_interleaved({"a": lambda: None}, warmup=-1)
    with pytest.raises(ValueError, match="no contenders"):
        harness.run_interleaved({})
    with pytest.raises(TypeError):
        harness.run_interleaved({"a": 3})


def test_environment_keys(harness):
    with harness.pin_threads(1):
        env = harness.collect_environment(threads=1)
    for key in ("date_utc", "python", "platform", "cpu_count", "threads_requested", "torch_threads",
                "threadpools", "blas", "loadavg", "packages"):
        assert key in env, key
    assert env["threads_requested"] == 1
    assert all(p["num_threads"] == 1 for p in env["blas"])
    assert env["packages"]["numpy"] is not None and "threadpoolctl" in env["packages"]
    if env["torch_threads"] is not None:
        assert env["torch_threads"] == 1


def test_report_json_has_headline_and_environment(harness, tmp_path):
    ap = harness.add_harness_args(argparse.ArgumentParser(), out=str(tmp_path / "x.json"))
    args = ap.parse_args(["--threads", "1", "--repeats", "3"])
    harness.check_harness_args(ap, args)
    with pytest.raises(SystemExit):
        harness.check_harness_args(ap, ap.parse_args(["--repeats", "2"]))
    with harness.pin_threads(args.threads):
        report = harness.begin_report("unit", args)
        cmp = harness.run_interleaved({"a": lambda: 1, "b": lambda: 2}, warmup=0, repeats=3)
        report["body"] = {"cmp": cmp, "nan": float("nan")}
    path = harness.finish_report(report, [harness.headline_ratio("a_over_b", cmp, "a", "b", precision="float64",
                                                                  output="int")], args.out)
    data = json.loads(Path(path).read_text())
    assert list(data)[:3] == ["benchmark", "headline", "environment"]
    assert data["headline"]["ratios"][0]["name"] == "a_over_b"
    env = data["headline"]["environment"]
    assert env["threads_requested"] == 1 and "loadavg_before" in env and "loadavg_after" in env
    assert data["environment"]["packages"]["numpy"]
    assert data["body"]["nan"] is None and data["body"]["cmp"]["repeats"] == 3
