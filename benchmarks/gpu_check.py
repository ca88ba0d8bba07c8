"""The prepared GPU check: every CUDA path of the workflow in one short run, one JSON.

Run by ``benchmarks/gpu_check.sh`` (its header says how). Steps, each timed
and recorded even when another fails (``status``: ok, failed with the error,
or skipped with the reason):

``ntk_fc``      :func:`biokernels.kernels.ntk_deep.ntk_fc` (depth 5) on the
                device in float32 against the CPU in float64, on seeded
                784-d rows: largest difference relative to the largest entry.
``cntk``        :func:`biokernels.kernels.ntk_deep.cntk` likewise on seeded
                28x28 images (the images study's GPU-tagged kernel).
``pair_ntk``    :func:`biokernels.kernels.ntk.ntk_relu_indexed`, the
                drug-screen source kernel, device against CPU.
``source_fit``  ``benchmarks/bench_ntk_scale.py --device <dev>`` at
                ``--source-pairs`` (the LINCS 2020 size, 720,000, on a GPU),
                one repeat, its JSON kept beside this one.
``workflow``    with ``--workflow``: the GPU-tagged rules of the default
                (``snakemake --config device=<dev>`` on ``--targets``),
                wall time and exit status.

``--small`` runs the same steps at a size the CPU finishes in about a minute
(the test suite runs it so, on the CPU, so that the script is known to work
before a GPU is lent). Tolerances, float32 against float64 on kernels of
entries O(1): 1e-4 relative for the pair NTK (``TOL32``: a few hundred
roundings of 6e-8); for the deep NTK and the CNTK, ``sqrt(eps32)`` per
ReLU layer (``arccos_tol``): the arc-cosine of a cosine within rounding of 1
moves by about ``sqrt(eps)``, and each layer adds its own.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
import traceback
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import collect_environment, write_json  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
TOL32 = 1e-4
SIZES = {"small": {"ntk_rows": 256, "cntk_images": 6, "pair_rows": 2000, "source_pairs": 1000, "n_test": 200,
                   "n_drugs": 400, "n_cells": 30},
         "full": {"ntk_rows": 8192, "cntk_images": 64, "pair_rows": 20000, "source_pairs": 720000,
                  "n_test": 5000, "n_drugs": 8316, "n_cells": 165}}


def arccos_tol(layers: int) -> float:
    """``layers * sqrt(eps32)``: the deep kernels' float32 tolerance (module docstring)."""
    return float(layers * np.sqrt(np.finfo(np.float32).eps))


def _rel(a, b) -> float:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-300))


def _sync(dev):
    import torch

    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def _timed(fn, dev):
    _sync(dev)
    t = time.perf_counter()
    out = fn()
    _sync(dev)
    return out, time.perf_counter() - t


def step_ntk_fc(dev, size, rng):
    import torch
    from biokernels.kernels.ntk_deep import ntk_fc

    X = rng.random((size["ntk_rows"], 784))
    ref, t_cpu = _timed(lambda: ntk_fc(X[:512], X, dtype=torch.float64, device="cpu"), torch.device("cpu"))
    ntk_fc(X[:8], X[:8], dtype=torch.float32, device=dev)          # warm-up (CUDA context, kernels)
    got, t_dev = _timed(lambda: ntk_fc(X[:512], X, dtype=torch.float32, device=dev), dev)
    rel, tol = _rel(got.cpu().numpy(), ref.numpy()), arccos_tol(5)
    return {"shape": list(ref.shape), "cpu_float64_s": t_cpu, "device_float32_s": t_dev,
            "max_rel_diff": rel, "tolerance": tol, "agrees": rel <= tol}


def step_cntk(dev, size, rng):
    import torch
    from biokernels.kernels.ntk_deep import cntk

    X = rng.random((size["cntk_images"], 28, 28))
    ref, t_cpu = _timed(lambda: cntk(X, dtype=torch.float64, device="cpu", block=8), torch.device("cpu"))
    got, t_dev = _timed(lambda: cntk(X, dtype=torch.float32, device=dev, block=16), dev)
    rel, tol = _rel(got.cpu().numpy(), ref.numpy()), arccos_tol(6)
    return {"images": len(X), "cpu_float64_s": t_cpu, "device_float32_s": t_dev,
            "max_rel_diff": rel, "tolerance": tol, "agrees": rel <= tol}


def step_pair_ntk(dev, size, rng):
    import torch
    from biokernels.kernels.ntk import ntk_relu_indexed

    D = rng.random((500, 64)) / 8
    C = rng.normal(size=(40, 32)) / 6
    n = size["pair_rows"]
    pairs = (rng.integers(0, 500, n), rng.integers(0, 40, n))
    sub = (pairs[0][:256], pairs[1][:256])

    def on(device, dtype):
        Dg = torch.as_tensor(D @ D.T, device=device, dtype=dtype)
        Cg = torch.as_tensor(C @ C.T, device=device, dtype=dtype)
        return ntk_relu_indexed(Dg, Cg, sub, pairs, dtype=dtype)

    ref, t_cpu = _timed(lambda: on("cpu", torch.float64), torch.device("cpu"))
    got, t_dev = _timed(lambda: on(dev, torch.float32), dev)
    rel = _rel(got.cpu().numpy(), ref.cpu().numpy())
    return {"shape": [256, n], "cpu_float64_s": t_cpu, "device_float32_s": t_dev,
            "max_rel_diff": rel, "tolerance": TOL32, "agrees": rel <= TOL32}


def step_source_fit(dev, size, out_dir, lam):
    path = out_dir / "gpu_check_source_fit.json"
    cmd = [sys.executable, str(REPO / "benchmarks" / "bench_ntk_scale.py"), "--device", dev.type,
           "--sizes", str(size["source_pairs"]), "--methods", "nystrom", "--repeats", "1",
           "--n-test", str(size["n_test"]), "--n-drugs", str(size["n_drugs"]),
           "--n-cells", str(size["n_cells"]), "--lam", str(lam), "--json", str(path)]
    t = time.perf_counter()
    res = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if res.returncode != 0:
        raise RuntimeError(f"bench_ntk_scale.py exited {res.returncode}: {res.stderr[-2000:]}")
    rows = json.loads(path.read_text())["rows"]
    keep = ("n", "method", "device", "fit_s", "predict_s", "centres", "converged", "r2",
            "peak_rss_gib", "cuda_peak_gib")
    return {"wall_s": wall, "json": path.name, "rows": [{k: r.get(k) for k in keep} for r in rows]}


def step_workflow(dev, targets, cores):
    if shutil.which("snakemake") is None and not (REPO / ".venv" / "bin" / "snakemake").exists():
        return {"status": "skipped", "reason": "snakemake is not installed here"}
    exe = shutil.which("snakemake") or str(REPO / ".venv" / "bin" / "snakemake")
    cmd = [exe, "--cores", str(cores), "--config", f"device={dev.type}", "--forceall", *targets]
    t = time.perf_counter()
    res = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    return {"targets": targets, "wall_s": time.perf_counter() - t, "returncode": res.returncode,
            "tail": res.stderr[-1500:]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--small", action="store_true", help="the CPU-sized run (about a minute)")
    ap.add_argument("--device", default="auto", help="auto | cpu | cuda")
    ap.add_argument("--out", default="results/benchmarks/gpu_check.json")
    ap.add_argument("--lam", type=float, default=1.0, help="the source fit's ridge (the holdout's choice)")
    ap.add_argument("--workflow", action="store_true", help="also run --targets with device=<device>")
    ap.add_argument("--targets", default="drug_screen_fig4a,images_fig3a")
    ap.add_argument("--cores", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    import torch
    from biokernels.device import resolve_device

    dev = resolve_device(args.device)
    size = SIZES["small" if args.small else "full"]
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    report = {"benchmark": "gpu_check", "device": str(dev), "size": "small" if args.small else "full",
              "sizes": size, "environment": collect_environment(threads=torch.get_num_threads()),
              "cuda": {"available": torch.cuda.is_available(),
                       "name": torch.cuda.get_device_name(dev) if dev.type == "cuda" else None,
                       "torch_cuda": torch.version.cuda}, "steps": {}}
    rng = np.random.default_rng(args.seed)
    steps = {"ntk_fc": lambda: step_ntk_fc(dev, size, rng), "cntk": lambda: step_cntk(dev, size, rng),
             "pair_ntk": lambda: step_pair_ntk(dev, size, rng),
             "source_fit": lambda: step_source_fit(dev, size, out.parent, args.lam)}
    if args.workflow:
        steps["workflow"] = lambda: step_workflow(dev, [t for t in args.targets.split(",") if t], args.cores)
    for name, fn in steps.items():
        t = time.perf_counter()
        try:
            r = fn()
            r.setdefault("status", "ok")
        except Exception as exc:                                   # noqa: BLE001 (recorded, the next step runs)
            r = {"status": "failed", "error": repr(exc), "traceback": traceback.format_exc()[-3000:]}
        r["step_s"] = time.perf_counter() - t
        report["steps"][name] = r
        print(f"gpu_check {name}: {r['status']} ({r['step_s']:.1f} s)", flush=True)
        write_json(out, report)                                    # kept after every step
    failed = [k for k, v in report["steps"].items() if v["status"] == "failed"
              or v.get("agrees") is False]
    report["ok"] = not failed
    write_json(out, report)
    print(f"gpu_check: wrote {out}; {'all steps ok' if not failed else 'FAILED: ' + ', '.join(failed)}")
    return 0 if not failed else 1


if __name__ == "__main__":
    raise SystemExit(main())
