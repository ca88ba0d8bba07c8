"""Shared harness of the benchmarks under ``benchmarks/`` (issue #16, section 6).

The project's standard for speed and memory claims:

* contenders are measured **interleaved in one process**: every repeat runs
  each contender once, round-robin, and the order is rotated from repeat to
  repeat, so a change of machine load during the run hits every contender
  alike (:func:`run_interleaved`);
* each contender is **warmed up** first (untimed calls: imports, allocator,
  BLAS buffers, caches) and timed over **at least 3 repeats**; the median is
  the figure quoted, all the repeats are kept;
* BLAS and torch threads are **pinned** (:func:`pin_threads`, the
  ``--threads`` option of every benchmark) and recorded with the load
  average before and after and the package versions
  (:func:`collect_environment`);
* a ratio compares the **same precision and the same output**, against a
  peer measured in the same run (:func:`headline_ratio`), and each JSON has
  a top-level ``headline`` holding those ratios and the environment summary
  (:func:`finish_report`).

Timing is wall clock (``time.perf_counter``). Memory, when asked for, is the
peak of Python/numpy allocations by ``tracemalloc`` during one extra,
untimed call of each contender (tracemalloc slows allocation-heavy code, so
it never runs during a timed call). It does not see torch's or BLAS's own
allocators: where those matter, measure the peak resident set of a fresh
subprocess (:func:`peak_rss_mib` in the worker).

Usage::

    from _harness import Contender, add_harness_args, begin_report, finish_report, pin_threads, run_interleaved

    ap = argparse.ArgumentParser(); add_harness_args(ap); args = ap.parse_args()
    with pin_threads(args.threads):
        report = begin_report("name", args)
        cmp = run_interleaved({"ours": f, "peer": g}, warmup=args.warmup, repeats=args.repeats)
        ...
        finish_report(report, headline_ratios, args.out)
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import json
import math
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
import tracemalloc
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

MIN_REPEATS = 3

#: distributions whose versions every report records (absent ones are listed as None)
DEFAULT_PACKAGES = ("biokernels", "numpy", "scipy", "scikit-learn", "torch", "threadpoolctl",
                    "networkx", "pandas", "MKLpy", "cvxpy")

REPO = Path(__file__).resolve().parents[1]


# --------------------------------------------------------------------------- contenders


@dataclass
class Contender:
    """A timed call ``fn(setup())`` (or ``fn()`` without ``setup``).

    ``setup`` runs before every call, warm-up and memory runs included, and
    is never timed: use it for what the call consumes (e.g. a copy of a
    matrix that the contender factors in place).
    """

    fn: Callable[..., Any]
    setup: Callable[[], Any] | None = None

    def prepare(self) -> Callable[[], Any]:
        if self.setup is None:
            return self.fn
        state = self.setup()
        return lambda: self.fn(state)


def _as_contender(c) -> Contender:
    if isinstance(c, Contender):
        return c
    if callable(c):
        return Contender(c)
    raise TypeError(f"a contender must be a zero-argument callable or a Contender, got {type(c).__name__}")


def rotated(names: list[str], r: int) -> list[str]:
    """``names`` rotated left by ``r`` (the order of repeat ``r``)."""
    if not names:
        return []
    k = r % len(names)
    return names[k:] + names[:k]


@dataclass
class Comparison:
    """Times of interleaved contenders (seconds), in the order they ran."""

    names: list[str]
    warmup: int
    repeats: int
    order: list[list[str]]
    times: dict[str, list[float]]
    outputs: dict[str, Any] = field(default_factory=dict, repr=False)
    peak_mib: dict[str, float] | None = None

    def median(self, name: str) -> float:
        return float(statistics.median(self.times[name]))

    def ratio(self, numerator: str, denominator: str) -> float:
        """median(numerator) / median(denominator): how many times slower
        ``numerator`` is than ``denominator``."""
        den = self.median(denominator)
        return self.median(numerator) / den if den > 0 else math.inf

    def paired_ratios(self, numerator: str, denominator: str) -> list[float]:
        """Per-repeat ratios ``times[numerator][r] / times[denominator][r]``:
        both ran in the same round, so a change of load between rounds
        cancels (their median is robust to a drifting load)."""
        return [a / b if b > 0 else math.inf for a, b in zip(self.times[numerator], self.times[denominator])]

    def summary(self, name: str) -> dict:
        t = self.times[name]
        out = {"median_s": self.median(name), "min_s": min(t), "max_s": max(t), "times_s": list(t)}
        if self.peak_mib is not None and name in self.peak_mib:
            out["peak_tracemalloc_mib"] = self.peak_mib[name]
        return out

    def to_json(self) -> dict:
        return {"warmup": self.warmup, "repeats": self.repeats, "order": self.order,
                "contenders": {n: self.summary(n) for n in self.names}}


def run_interleaved(contenders: Mapping[str, Any], *, warmup: int = 1, repeats: int = MIN_REPEATS,
                    memory: bool = False, log: Callable[[str], None] | None = None,
                    clock: Callable[[], float] = time.perf_counter) -> Comparison:
    """Time named contenders interleaved: warm-up, then round-robin repeats.

    Parameters
    ----------
    contenders : mapping name -> zero-argument callable or :class:`Contender`
    warmup : int
        Untimed calls of each contender before the first timed repeat
        (round-robin as well).
    repeats : int
        Timed calls of each contender (>= 3). Repeat ``r`` runs the
        contenders in their given order rotated left by ``r``, so each one
        runs first, in the middle and last equally often.
    memory : bool
        Afterwards, one more untimed call of each under ``tracemalloc``; its
        peak (MiB) goes to ``Comparison.peak_mib``.
    log : callable, optional
        Gets a line per timed call.
    clock : callable
        Seconds; ``time.perf_counter`` (a test passes a fake clock).

    Returns
    -------
    Comparison
        ``times[name]`` in repeat order, ``order`` of every repeat,
        ``outputs[name]`` the return value of the contender's last timed call.

    Raises
    ------
    ValueError
        ``repeats < 3``, ``warmup < 0`` or no contenders.
    """
    if int(repeats) != repeats or repeats < MIN_REPEATS:
        raise ValueError(f"repeats must be an integer >= {MIN_REPEATS}, got {repeats}")
    if int(warmup) != warmup or warmup < 0:
        raise ValueError(f"warmup must be a non-negative integer, got {warmup}")
    if not contenders:
        raise ValueError("no contenders")
    names = list(contenders)
    cs = {n: _as_contender(c) for n, c in contenders.items()}
    for w in range(int(warmup)):
        for n in rotated(names, w):
            cs[n].prepare()()
    times: dict[str, list[float]] = {n: [] for n in names}
    outputs: dict[str, Any] = {}
    order = []
    for r in range(int(repeats)):
        this = rotated(names, r)
        order.append(this)
        for n in this:
            call = cs[n].prepare()
            outputs.pop(n, None)  # free the previous output before the call
            t0 = clock()
            out = call()
            dt = clock() - t0
            times[n].append(dt)
            outputs[n] = out
            del call, out  # drop what setup made before the next setup runs
            if log is not None:
                log(f"  repeat {r + 1}/{repeats} {n}: {dt:.4g} s")
    peak = None
    if memory:
        peak = {}
        for n in names:
            call = cs[n].prepare()
            was = tracemalloc.is_tracing()
            if not was:
                tracemalloc.start()
            tracemalloc.reset_peak()
            base = tracemalloc.get_traced_memory()[0]
            call()
            peak[n] = (tracemalloc.get_traced_memory()[1] - base) / 2**20
            del call
            if not was:
                tracemalloc.stop()
    return Comparison(names, int(warmup), int(repeats), order, times, outputs, peak)


def peak_rss_mib() -> float:
    """Peak resident set of this process so far (MiB). Includes BLAS/LAPACK/
    torch buffers that tracemalloc misses; measure it in a fresh subprocess
    per contender.

    Linux: ``VmHWM`` of ``/proc/self/status``, the high-water mark of this
    process's own address space. Not ``ru_maxrss``: the kernel carries the
    parent's peak over ``fork``/``exec`` into it, so a child started by a big
    parent reports the parent's peak. Elsewhere ``ru_maxrss``.
    """
    hwm = _first_line("/proc/self/status", "VmHWM")
    if hwm is not None:
        return int(hwm.split()[0]) / 1024
    kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kib / 1024 if sys.platform != "darwin" else kib / 2**20


# --------------------------------------------------------------------------- threads


def _torch():
    try:
        import torch
    except Exception:  # noqa: BLE001 - not installed or broken: nothing to pin
        return None
    return torch


@contextlib.contextmanager
def pin_threads(threads: int):
    """Pin BLAS/OpenMP thread pools (threadpoolctl) and torch's intra-op
    threads to ``threads`` for the block; restored afterwards.

    numpy, scipy.linalg and torch are imported first so that their thread
    pools exist when the limit is applied (threadpoolctl only limits
    libraries already loaded).
    """
    if int(threads) != threads or threads < 1:
        raise ValueError(f"threads must be a positive integer, got {threads}")
    import numpy  # noqa: F401
    import scipy.linalg  # noqa: F401
    from threadpoolctl import threadpool_limits

    torch = _torch()
    before = torch.get_num_threads() if torch is not None else None
    with threadpool_limits(limits=int(threads)):
        if torch is not None:
            torch.set_num_threads(int(threads))
        try:
            yield int(threads)
        finally:
            if torch is not None and before is not None:
                torch.set_num_threads(before)


# --------------------------------------------------------------------------- environment


def package_versions(packages: Iterable[str] = DEFAULT_PACKAGES) -> dict[str, str | None]:
    out = {}
    for p in packages:
        try:
            out[p] = importlib.metadata.version(p)
        except importlib.metadata.PackageNotFoundError:
            out[p] = None
    return out


def _loadavg() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def _first_line(path: str, key: str) -> str | None:
    try:
        for line in Path(path).read_text().splitlines():
            if line.startswith(key):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def _git_commit() -> str | None:
    try:
        p = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, timeout=10)
        return p.stdout.strip() or None if p.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        return None


def machine_calibration(gemm_n: int = 512, loop_n: int = 1_000_000, repeats: int = 5) -> dict:
    """A short calibration of this machine, so that a time measured on another
    can be scaled before it is compared (about 0.5 s).

    Keys: ``gemm_gflops_1thread`` (float64 ``gemm_n``-square matrix products
    on one BLAS thread, 2 n³ flops each, median of ``repeats``),
    ``python_loop_mops`` (million iterations per second of a pure-Python
    integer-sum loop, median of ``repeats``) and ``loadavg`` (1, 5 and 15 min,
    at the calibration).
    """
    import numpy as np
    from threadpoolctl import threadpool_limits

    A = np.random.default_rng(0).random((gemm_n, gemm_n))
    gemm, loop = [], []
    with threadpool_limits(1, user_api="blas"):
        A @ A                                                    # warm-up
        for _ in range(repeats):
            t = time.perf_counter()
            A @ A
            gemm.append(2 * gemm_n ** 3 / (time.perf_counter() - t) / 1e9)
    for _ in range(repeats):
        t, acc = time.perf_counter(), 0
        for i in range(loop_n):
            acc += i
        loop.append(loop_n / (time.perf_counter() - t) / 1e6)
    return {"gemm_gflops_1thread": round(float(np.median(gemm)), 2),
            "python_loop_mops": round(float(np.median(loop)), 2), "loadavg": _loadavg()}


def collect_environment(packages: Iterable[str] = (), threads: int | None = None) -> dict:
    """Machine, threads, load and versions; call it inside :func:`pin_threads`.

    Keys: ``date_utc``, ``command``, ``git_commit``, ``python``, ``platform``,
    ``machine``, ``cpu_model``, ``cpu_count``, ``cores_available``,
    ``memory_gib``, ``threads_requested``, ``torch_threads``,
    ``threadpools`` (threadpoolctl's info: library, API, threads, version),
    ``blas`` (the BLAS entries of it), ``loadavg`` (1, 5, 15 min, now),
    ``calibration`` (:func:`machine_calibration`) and ``packages``
    (importlib.metadata versions).
    """
    from threadpoolctl import threadpool_info

    torch = _torch()
    pools = [{k: i.get(k) for k in ("user_api", "internal_api", "prefix", "num_threads", "version",
                                    "threading_layer", "architecture")}
             for i in threadpool_info()]
    mem = _first_line("/proc/meminfo", "MemTotal")
    return {
        "date_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
        "git_commit": _git_commit(),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_model": _first_line("/proc/cpuinfo", "model name"),
        "cpu_count": os.cpu_count(),
        "cores_available": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "memory_gib": None if mem is None else round(int(mem.split()[0]) / 2**20, 1),
        "threads_requested": threads,
        "torch_threads": torch.get_num_threads() if torch is not None else None,
        "threadpools": pools,
        "blas": [p for p in pools if p["user_api"] == "blas"],
        "loadavg": _loadavg(),
        "calibration": machine_calibration(),
        "packages": package_versions([*DEFAULT_PACKAGES, *[p for p in packages if p not in DEFAULT_PACKAGES]]),
    }


# --------------------------------------------------------------------------- CLI and report


def add_harness_args(ap: argparse.ArgumentParser, *, out: str, threads: int = 1, warmup: int = 1,
                     repeats: int = MIN_REPEATS) -> argparse.ArgumentParser:
    """``--out``, ``--threads``, ``--warmup``, ``--repeats`` (>= 3)."""
    ap.add_argument("--out", default=out, help="output JSON path (default %(default)s)")
    ap.add_argument("--threads", type=int, default=threads,
                    help="BLAS/OpenMP and torch threads, pinned for the whole run (default %(default)s)")
    ap.add_argument("--warmup", type=int, default=warmup, help="untimed calls per contender (default %(default)s)")
    ap.add_argument("--repeats", type=int, default=repeats,
                    help=f"timed interleaved repeats, median quoted (>= {MIN_REPEATS}; default %(default)s)")
    return ap


def check_harness_args(ap: argparse.ArgumentParser, args) -> None:
    if args.repeats < MIN_REPEATS:
        ap.error(f"--repeats must be >= {MIN_REPEATS}, got {args.repeats}")
    if args.warmup < 0:
        ap.error(f"--warmup must be >= 0, got {args.warmup}")
    if args.threads < 1:
        ap.error(f"--threads must be >= 1, got {args.threads}")


def begin_report(benchmark: str, args=None, packages: Iterable[str] = (), **meta) -> dict:
    """A report with the environment at the start (call inside :func:`pin_threads`)."""
    settings = {} if args is None else {k: v for k, v in vars(args).items() if not k.startswith("_")}
    env = collect_environment(packages, threads=getattr(args, "threads", None))
    return {"benchmark": benchmark, "headline": None, "environment": env,
            "settings": settings, "meta": meta, "_t0": time.perf_counter()}


def headline_ratio(name: str, comparison: Comparison, numerator: str, denominator: str, *,
                   precision: str, output: str, max_abs_diff: float | None = None,
                   tolerance: float | None = None, **context) -> dict:
    """One headline entry: ``median(numerator) / median(denominator)`` of one
    interleaved run (and the median of the per-round ratios), with what makes
    it like for like.

    ``precision`` (e.g. "float64") and ``output`` (what both produce) are
    required; ``max_abs_diff`` / ``tolerance`` record the check that both
    produced the same output (``same_output`` is then ``max_abs_diff <=
    tolerance``).
    """
    entry = {"name": name, "ratio": comparison.ratio(numerator, denominator),
             "numerator": numerator, "denominator": denominator,
             "numerator_median_s": comparison.median(numerator),
             "denominator_median_s": comparison.median(denominator),
             "paired_ratios": comparison.paired_ratios(numerator, denominator),
             "paired_ratio_median": float(statistics.median(comparison.paired_ratios(numerator, denominator))),
             "repeats": comparison.repeats, "warmup": comparison.warmup,
             "precision": precision, "output": output}
    if max_abs_diff is not None:
        entry["max_abs_diff"] = float(max_abs_diff)
    if tolerance is not None:
        entry["tolerance"] = float(tolerance)
    if max_abs_diff is not None and tolerance is not None:
        entry["same_output"] = bool(max_abs_diff <= tolerance)
    entry.update(context)
    return entry


def _jsonable(o):
    try:
        import numpy as np
    except ImportError:  # pragma: no cover
        np = None
    if np is not None:
        if isinstance(o, np.generic):
            return o.item()
        if isinstance(o, np.ndarray):
            return o.tolist()
    if isinstance(o, (set, tuple)):
        return list(o)
    if isinstance(o, Path):
        return str(o)
    if isinstance(o, Comparison):
        return o.to_json()
    return str(o)


def _clean_floats(o):
    """NaN/inf -> None (JSON has neither)."""
    if isinstance(o, float) and not math.isfinite(o):
        return None
    if isinstance(o, dict):
        return {k: _clean_floats(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_clean_floats(v) for v in o]
    return o


def write_json(path, obj) -> Path:
    """Write ``obj`` as indented JSON (numpy scalars/arrays converted,
    NaN/inf as null), creating the parent folder."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(obj, indent=2, default=_jsonable)
    text = json.dumps(_clean_floats(json.loads(text)), indent=2)
    path.write_text(text + "\n")
    return path


def finish_report(report: dict, headline: list[dict] | dict, out, notes: Iterable[str] = ()) -> Path:
    """Add the load at the end, the wall time and the ``headline`` (its
    ratios plus the environment summary), then write ``out``."""
    env = report["environment"]
    load_after = _loadavg()
    t0 = report.pop("_t0", None)
    env["loadavg_before"] = env.pop("loadavg", None)
    env["loadavg_after"] = load_after
    report["headline"] = {
        "ratios": headline,
        "environment": {k: env.get(k) for k in ("threads_requested", "torch_threads", "cpu_count",
                                                "cores_available", "loadavg_before", "loadavg_after",
                                                "cpu_model", "git_commit", "date_utc")}
        | {"blas_threads": sorted({p["num_threads"] for p in env["blas"]})},
        "rules": "each ratio: medians of interleaved, warmed-up repeats in this run; same precision "
                 "and same output (checked where max_abs_diff is given)",
    }
    if notes:
        report["notes"] = list(notes)
    if t0 is not None:
        report["benchmark_wall_s"] = time.perf_counter() - t0
    # headline first in the file
    ordered = {"benchmark": report.pop("benchmark"), "headline": report.pop("headline"),
               "environment": report.pop("environment")} | report
    return write_json(out, ordered)


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- worker processes


def run_worker(script: str | Path, spec: dict, timeout: float) -> dict:
    """Run ``python script --worker JSON(spec)`` in a fresh process (its own
    peak RSS) and return the JSON of its last ``RESULT `` line, plus
    ``process_wall_s``; on a timeout, a signal or a nonzero exit, a dict with
    ``error`` (and ``stderr_tail``) instead."""
    cmd = [sys.executable, str(Path(script).resolve()), "--worker", json.dumps(spec)]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"method": spec.get("method"), "n": spec.get("n"), "error": f"timed out after {timeout} s"}
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    if proc.returncode != 0 or not lines:
        why = (f"killed by signal {-proc.returncode} (9: out of memory?, 11: segfault)" if proc.returncode < 0
               else f"exit status {proc.returncode}")
        return {"method": spec.get("method"), "n": spec.get("n"), "error": why, "stderr_tail": proc.stderr[-2000:]}
    res = json.loads(lines[-1][len("RESULT "):])
    res["process_wall_s"] = time.perf_counter() - t0
    return res


def run_worker_rounds(script: str | Path, methods: list[str], spec_of: Callable[[str], dict], *, repeats: int,
                      timeout: float, single_run_above_s: float, describe: Callable[[str, int, dict], None]
                      ) -> dict[str, list[dict]]:
    """Each method in a fresh worker (:func:`run_worker`), ``repeats`` rounds
    in rotated order (:func:`rotated`); after a first round where a run took
    longer than ``single_run_above_s`` or failed, no more rounds.
    ``describe(method, round, result)`` is called after every run. Returns
    method -> its results, in round order."""
    runs: dict[str, list[dict]] = {m: [] for m in methods}
    r = 0
    while r < repeats:
        for m in rotated(list(methods), r):
            res = run_worker(script, spec_of(m), timeout)
            describe(m, r, res)
            runs[m].append(res)
        if r == 0 and any(x.get("fit_s", 0) > single_run_above_s or "error" in x for v in runs.values() for x in v):
            repeats = 1
        r += 1
    return runs


def mem_available_gib() -> float:
    """``MemAvailable`` of /proc/meminfo in GiB (16 where it cannot be read)."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable"):
                return int(line.split()[1]) * 1024 / 2**30
    except OSError:
        pass
    return 16.0
