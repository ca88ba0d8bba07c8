"""Benchmark: NTK kernel ridge regression of the virtual drug screen's source model.

The source model of Radhakrishnan et al. 2023 (Methods "Details for virtual
drug screening") is kernel ridge regression with the NTK of a one-hidden-layer
ReLU network with bias, on features ``x = [drug fingerprint | cell-line
embedding]``, with 978 genes predicted jointly; the real source has ~54k
(drug, cell) pairs. This script times it on synthetic data of the real shapes:

* drugs: 1024-bit sparse binary fingerprints (each drug sets 1-6 % of the
  bits, like Morgan fingerprints), rows scaled to unit norm;
* cells: ``--n-cells`` (65) control-expression profiles over ``--genes``
  (978) genes, centred over cells and scaled to unit norm (as
  :mod:`biokernels.drug_screen` does);
* samples: distinct random (drug, cell) pairs; targets: the cell's control
  profile plus a sparse linear drug effect plus noise, ``--genes`` columns.

For each n, every measurement runs in a fresh subprocess (``--repeats``
times, keeping the fastest, on a shared machine), so its peak memory
is the process's peak resident set (``ru_maxrss``, which includes BLAS and
LAPACK buffers that tracemalloc misses; on CUDA also
``torch.cuda.max_memory_allocated``):

``gram``
    the indexed NTK Gram (:func:`biokernels.kernels.ntk.ntk_relu_indexed`,
    float32): train x train and test x train.
``ours_cholesky`` / ``ours_cg``
    Gram + :func:`biokernels.solvers.ridge.solve_ridge` (float32; in-place
    blocked Cholesky, or Nystrom-preconditioned CG) + prediction.
``sklearn_f64`` / ``sklearn_f32``
    the same Gram (built in that dtype) given to
    ``sklearn.kernel_ridge.KernelRidge(kernel="precomputed", alpha=lam)``;
    skipped where its ~3 n x n copies would not fit in ``--mem-limit-gb``.

The JSON holds per-n timings and peak memory, the ratios ours / sklearn at
the largest n where both ran, the largest absolute difference of the
predictions (against sklearn float64), a crude extrapolation to ``--extrapolate-to``
samples (Gram ~ n^2, Cholesky ~ n^3, CG ~ n^2 x iterations) and the machine.

Usage::

    .venv/bin/python benchmarks/bench_ntk_krr.py --sizes 2000,5000 \\
        [--out results/benchmarks/ntk_krr.json] [--device cpu|cuda|auto]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

METHODS = ("ours_cholesky", "ours_cg", "sklearn_f64", "sklearn_f32")
FP_BITS = 1024


# --------------------------------------------------------------------------- data


def make_data(n: int, n_test: int, n_drugs: int, n_cells: int, genes: int, seed: int) -> dict:
    """Synthetic screen of the real shapes (see the module docstring).

    Returns dict: ``D`` (drugs used, 1024) float32 unit rows, ``C`` (n_cells,
    genes) float32 unit rows, ``train``/``test`` pairs ``(drug_idx,
    cell_idx)`` into D and C, ``Y``/``Y_test`` float64 (n, genes).
    """
    if n + n_test > n_drugs * n_cells:
        raise ValueError(f"n + n_test = {n + n_test} exceeds the {n_drugs * n_cells} (drug, cell) pairs")
    rng = np.random.default_rng(seed)
    pairs = rng.choice(n_drugs * n_cells, n + n_test, replace=False)
    drug, cell = pairs // n_cells, pairs % n_cells
    used, drug = np.unique(drug, return_inverse=True)  # only the drugs that occur
    density = rng.uniform(0.01, 0.06, (used.size, 1))
    D = (rng.random((used.size, FP_BITS)) < density).astype(np.float32)
    D[np.arange(used.size), rng.integers(0, FP_BITS, used.size)] = 1.0  # no empty fingerprint
    ctrl = rng.uniform(4, 12, genes) + rng.standard_normal((n_cells, 8)) @ rng.standard_normal((8, genes)) * 0.5
    Cc = ctrl - ctrl.mean(axis=0)
    C = (Cc / np.linalg.norm(Cc, axis=1, keepdims=True)).astype(np.float32)
    W = rng.standard_normal((FP_BITS, genes)) * (rng.random((FP_BITS, genes)) < 0.02)
    Y = np.empty((n + n_test, genes))
    for s in range(0, n + n_test, 8192):  # blocks: no (n, 1024) float64 buffer
        sl = slice(s, s + 8192)
        Y[sl] = ctrl[cell[sl]] + 0.3 * (D[drug[sl]] @ W) + 0.1 * rng.standard_normal((len(drug[sl]), genes))
    D /= np.linalg.norm(D, axis=1, keepdims=True)
    return {"D": D, "C": C, "train": (drug[:n], cell[:n]), "test": (drug[n:], cell[n:]),
            "Y": Y[:n], "Y_test": Y[n:], "n_drugs_used": int(used.size)}


# --------------------------------------------------------------------------- worker


def _peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB


def worker(spec: dict) -> dict:
    """One measurement in this (fresh) process; returns a JSON-able dict."""
    import torch

    from biokernels.device import resolve_device
    from biokernels.kernels.ntk import ntk_relu_indexed
    from biokernels.solvers.ridge import solve_ridge

    dev = resolve_device(spec["device"])
    cuda = dev.type == "cuda"

    def sync():
        if cuda:
            torch.cuda.synchronize(dev)

    method, lam = spec["method"], spec["lam"]
    data = make_data(spec["n"], spec["n_test"], spec["n_drugs"], spec["n_cells"], spec["genes"], spec["seed"])
    mu = data["Y"].mean(axis=0)
    out = {"method": method, "n": spec["n"], "n_drugs_used": data["n_drugs_used"],
           "rss_after_data_gib": _peak_rss_bytes() / 2**30}
    f64 = method == "sklearn_f64"
    dtype = torch.float64 if f64 else torch.float32
    gram_dev = dev  # sklearn: Gram built on the device, then copied to the host

    t0 = time.perf_counter()
    Dt = torch.as_tensor(data["D"], device=gram_dev)
    Gd = (Dt @ Dt.T).to(dtype)
    del Dt
    Gc = torch.as_tensor(data["C"], dtype=torch.float64, device=gram_dev)
    Gc = (Gc @ Gc.T).to(dtype)
    sync()
    out["drug_cell_gram_s"] = time.perf_counter() - t0
    n = spec["n"]
    t0 = time.perf_counter()
    K = torch.empty((n, n), dtype=dtype, device=gram_dev)
    ntk_relu_indexed(Gd, Gc, data["train"], out=K, dtype=dtype, block_rows=spec["block_rows"])
    sync()
    out["gram_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    Kt = ntk_relu_indexed(Gd, Gc, data["test"], data["train"], dtype=dtype, block_rows=spec["block_rows"])
    sync()
    out["gram_test_s"] = time.perf_counter() - t0
    del Gd, Gc
    Yc = data["Y"] - mu

    if method == "gram":
        pred = None
    elif method.startswith("ours"):
        t0 = time.perf_counter()
        alpha, info = solve_ridge(K, torch.as_tensor(Yc, dtype=dtype, device=dev), lam,
                                  method=method.removeprefix("ours_"), overwrite=True, tol=spec["tol"],
                                  block_size=spec["block_size"], precond_rank=spec["precond_rank"])
        sync()
        out["fit_s"] = time.perf_counter() - t0
        del K
        t0 = time.perf_counter()
        pred = (Kt @ alpha).double().cpu().numpy() + mu
        sync()
        out["predict_s"] = time.perf_counter() - t0
        out["solver"] = {k: info.get(k) for k in ("method", "dtype", "iterations", "converged", "residual_max",
                                                  "residual_kind", "preconditioner", "history", "factor_s",
                                                  "substitution_s", "precond_s", "cg_s")}
    else:
        from sklearn.kernel_ridge import KernelRidge

        K_np = K.cpu().numpy() if cuda else K.numpy()
        Kt_np = Kt.cpu().numpy() if cuda else Kt.numpy()
        del K, Kt
        np_dtype = np.float64 if f64 else np.float32
        t0 = time.perf_counter()
        model = KernelRidge(alpha=lam, kernel="precomputed").fit(K_np, Yc.astype(np_dtype))
        out["fit_s"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        pred = model.predict(Kt_np).astype(np.float64) + mu
        out["predict_s"] = time.perf_counter() - t0
        out["dual_coef_dtype"] = str(model.dual_coef_.dtype)
    if pred is not None:
        out["fit_predict_s"] = out["fit_s"] + out["predict_s"]
        out["test_r2_mean"] = float(np.mean(1 - ((pred - data["Y_test"]) ** 2).sum(1)
                                            / ((data["Y_test"] - data["Y_test"].mean(1, keepdims=True)) ** 2).sum(1)))
        np.save(spec["pred_path"], pred)
    out["peak_rss_gib"] = _peak_rss_bytes() / 2**30
    out["load_average_after"] = os.getloadavg() if hasattr(os, "getloadavg") else None
    if cuda:
        out["cuda_max_allocated_gib"] = torch.cuda.max_memory_allocated(dev) / 2**30
    return out


# --------------------------------------------------------------------------- driver


def machine_info(device: str) -> dict:
    import scipy
    import sklearn
    import torch
    from threadpoolctl import threadpool_info

    from biokernels.device import describe_device, resolve_device

    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem = int(line.split()[1]) * 1024 / 2**30
    except OSError:
        pass
    dev = resolve_device(device)
    return {
        "cpu": cpu, "cores": os.cpu_count(),
        "cores_available": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "torch_threads": torch.get_num_threads(), "memory_gib": mem, "platform": platform.platform(),
        "python": platform.python_version(), "torch": torch.__version__, "numpy": np.__version__,
        "scipy": scipy.__version__, "sklearn": sklearn.__version__, "device": describe_device(dev),
        "blas": [{k: d.get(k) for k in ("internal_api", "version", "num_threads", "filepath")}
                 for d in threadpool_info()],
        "load_average_at_start": os.getloadavg() if hasattr(os, "getloadavg") else None,
    }


def mem_available_gib() -> float:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable"):
                return int(line.split()[1]) * 1024 / 2**30
    except OSError:
        pass
    return 16.0


def needed_gib(method: str, n: int, n_test: int, genes: int) -> float:
    """Rough peak memory: n x n copies of the Gram (ours: 1; sklearn: its input,
    its copy in ``_solve_cholesky_kernel`` and scipy's ``solve`` copy) plus
    the test Gram and targets."""
    item = 8 if method == "sklearn_f64" else 4
    copies = 3 if method.startswith("sklearn") else 1
    return (copies * n * n + n_test * n + 4 * n * genes) * item / 2**30 + 1.0


def run_worker(spec: dict, timeout: float) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", json.dumps(spec)]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"method": spec["method"], "n": spec["n"], "error": f"timed out after {timeout} s"}
    wall = time.perf_counter() - t0
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    if proc.returncode != 0 or not lines:
        why = (f"killed by signal {-proc.returncode} (9: out of memory?, 11: segfault)" if proc.returncode < 0
               else f"exit status {proc.returncode}")
        return {"method": spec["method"], "n": spec["n"], "error": why, "stderr_tail": proc.stderr[-2000:]}
    res = json.loads(lines[-1][len("RESULT "):])
    res["process_wall_s"] = wall
    return res


def compare(preds: dict[str, np.ndarray], ref: str = "sklearn_f64") -> dict:
    out = {}
    names = [m for m in METHODS if m in preds]
    base = ref if ref in preds else ("ours_cholesky" if "ours_cholesky" in preds else None)
    if base is None:
        return out
    scale = float(np.abs(preds[base]).max())
    for m in names:
        if m == base:
            continue
        d = float(np.abs(preds[m] - preds[base]).max())
        out[f"{m}_vs_{base}"] = {"max_abs_diff": d, "max_rel_diff": d / scale}
    return out


def extrapolate(entry: dict, n_to: int) -> dict:
    """Scale the measured times of one n to ``n_to``: Gram ~ n^2, Cholesky
    factorization ~ n^3 and substitutions ~ n^2 (978 right-hand sides), CG
    iterations ~ n^2 (at the same iteration count), Nystrom set-up ~ n."""
    n = entry["n"]
    r = n_to / n
    res = entry["results"]
    out = {"from_n": n, "to_n": n_to, "note": "crude power-law extrapolation, not a measurement"}
    g = res.get("gram", {})
    if "gram_s" in g:
        out["gram_s"] = g["gram_s"] * r**2
        out["gram_gib_float32"] = n_to**2 * 4 / 2**30
    ch = res.get("ours_cholesky", {}).get("solver") or {}
    if ch.get("factor_s") is not None:
        out["ours_cholesky_factor_s"] = ch["factor_s"] * r**3
        out["ours_cholesky_substitution_s"] = ch["substitution_s"] * r**2
        out["ours_cholesky_fit_s"] = out["ours_cholesky_factor_s"] + out["ours_cholesky_substitution_s"]
    cg = res.get("ours_cg", {}).get("solver") or {}
    if cg.get("cg_s") is not None:
        out["ours_cg_fit_s_same_iterations"] = cg["cg_s"] * r**2 + cg["precond_s"] * r
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="5000,10000,20000,30000,54000",
                    help="comma-separated training sizes n (default %(default)s)")
    ap.add_argument("--out", default="results/benchmarks/ntk_krr.json")
    ap.add_argument("--genes", type=int, default=978)
    ap.add_argument("--n-drugs", type=int, default=20336, help="distinct drugs (paper: 20,336 perturbations)")
    ap.add_argument("--n-cells", type=int, default=65, help="cell lines (paper's source: 65)")
    ap.add_argument("--n-test", type=int, default=1000)
    ap.add_argument("--lam", type=float, default=1000.0, help="ridge (paper's source model: 1000)")
    ap.add_argument("--device", default="cpu", choices=("auto", "cpu", "cuda"))
    ap.add_argument("--methods", default=",".join(METHODS),
                    help=f"comma-separated subset of {','.join(METHODS)}")
    ap.add_argument("--mem-limit-gib", type=float, default=None,
                    help="skip a method whose estimated peak exceeds this (default: 90%% of MemAvailable)")
    ap.add_argument("--tol", type=float, default=1e-5, help="CG relative residual tolerance")
    ap.add_argument("--block-size", type=int, default=2048, help="Cholesky block")
    ap.add_argument("--block-rows", type=int, default=512, help="Gram rows per block")
    ap.add_argument("--precond-rank", type=int, default=500, help="Nystrom preconditioner rank")
    ap.add_argument("--extrapolate-to", type=int, default=54000)
    ap.add_argument("--timeout", type=float, default=6 * 3600, help="per measurement, seconds")
    ap.add_argument("--repeats", type=int, default=1,
                    help="fresh-process runs per measurement; the fastest is kept (for a shared machine)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.worker:
        res = worker(json.loads(args.worker))
        print("RESULT " + json.dumps(res), flush=True)
        return 0

    from biokernels.device import resolve_device

    try:
        resolve_device(args.device)
    except ValueError as e:
        ap.error(str(e))
    sizes = [int(s) for s in args.sizes.split(",") if s]
    methods = [m for m in args.methods.split(",") if m]
    bad = [m for m in methods if m not in METHODS]
    if bad:
        ap.error(f"--methods: unknown {bad}; choose from {METHODS}")
    limit = args.mem_limit_gib if args.mem_limit_gib is not None else 0.9 * mem_available_gib()
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    report = {"created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
              "command": " ".join([Path(sys.argv[0]).name, *(argv if argv is not None else sys.argv[1:])]),
              "machine": machine_info(args.device),
              "settings": {k: v for k, v in vars(args).items() if k != "worker"} | {"mem_limit_gib": limit},
              "sizes": []}
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            entry = {"n": n, "results": {}, "skipped": {}}
            preds = {}
            for method in ["gram", *methods]:
                need = needed_gib(method, n, args.n_test, args.genes)
                if need > limit:
                    entry["skipped"][method] = f"needs ~{need:.1f} GiB > limit {limit:.1f} GiB"
                    log(f"[n={n}] {method}: skipped ({entry['skipped'][method]})")
                    continue
                spec = {"method": method, "n": n, "n_test": args.n_test, "n_drugs": args.n_drugs,
                        "n_cells": args.n_cells, "genes": args.genes, "seed": args.seed, "lam": args.lam,
                        "device": args.device, "tol": args.tol, "block_size": args.block_size,
                        "block_rows": args.block_rows, "precond_rank": args.precond_rank,
                        "pred_path": os.path.join(tmp, f"{method}_{n}.npy")}
                runs = [run_worker(spec, args.timeout) for _ in range(max(1, args.repeats))]
                ok = [r for r in runs if "error" not in r]
                key = "fit_predict_s" if method != "gram" else "gram_s"
                res = min(ok, key=lambda r: r[key]) if ok else runs[-1]
                if len(runs) > 1:
                    res["repeats"] = [{k: r.get(k) for k in ("gram_s", "fit_s", "predict_s", "peak_rss_gib",
                                                             "error")} for r in runs]
                entry["results"][method] = res
                if "error" in res:
                    log(f"[n={n}] {method}: FAILED {res['error']}")
                    continue
                if method != "gram":
                    preds[method] = np.load(spec["pred_path"])
                log(f"[n={n}] {method}: gram {res['gram_s']:.1f} s"
                    + (f", fit {res['fit_s']:.1f} s, predict {res['predict_s']:.2f} s" if "fit_s" in res else "")
                    + f", peak RSS {res['peak_rss_gib']:.2f} GiB")
            entry["prediction_differences"] = compare(preds)
            report["sizes"].append(entry)

    # ratios at the largest n where ours and sklearn both ran
    ratios = {}
    for ours in ("ours_cholesky", "ours_cg"):
        for sk in ("sklearn_f64", "sklearn_f32"):
            both = [e for e in report["sizes"]
                    if "fit_predict_s" in e["results"].get(ours, {}) and "fit_predict_s" in e["results"].get(sk, {})]
            if both:
                e = max(both, key=lambda e: e["n"])
                a, b = e["results"][ours], e["results"][sk]
                ratios[f"{ours}/{sk}"] = {
                    "n": e["n"],
                    "fit_predict_time_ratio": a["fit_predict_s"] / b["fit_predict_s"],
                    "gram_plus_fit_predict_time_ratio": (a["gram_s"] + a["fit_predict_s"])
                    / (b["gram_s"] + b["fit_predict_s"]),
                    "peak_rss_ratio": a["peak_rss_gib"] / b["peak_rss_gib"],
                }
    report["ratios_at_largest_common_n"] = ratios
    measured = [e for e in report["sizes"] if "gram_s" in e["results"].get("gram", {})]
    if measured:
        report["extrapolation"] = extrapolate(max(measured, key=lambda e: e["n"]), args.extrapolate_to)

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2, default=float))

    print(f"\nNTK kernel ridge benchmark ({report['machine']['device']}, {report['machine']['cores']} cores, "
          f"lam={args.lam}, {args.genes} genes)")
    print(f"{'n':>7} {'method':>14} {'gram s':>8} {'fit s':>8} {'pred s':>7} {'peak GiB':>9} {'iters':>6} {'R2':>7}")
    for e in report["sizes"]:
        for m, r in e["results"].items():
            if "error" in r:
                print(f"{e['n']:>7} {m:>14}  FAILED: {r['error']}")
                continue
            it = r.get("solver", {}).get("iterations", "")
            print(f"{e['n']:>7} {m:>14} {r['gram_s']:>8.2f} {r.get('fit_s', float('nan')):>8.2f} "
                  f"{r.get('predict_s', float('nan')):>7.2f} {r['peak_rss_gib']:>9.2f} {it!s:>6} "
                  f"{r.get('test_r2_mean', float('nan')):>7.3f}")
        for m, why in e["skipped"].items():
            print(f"{e['n']:>7} {m:>14}  skipped: {why}")
        for k, v in e["prediction_differences"].items():
            print(f"{'':>7} {k}: max |diff| {v['max_abs_diff']:.2e} (relative {v['max_rel_diff']:.2e})")
    for k, v in ratios.items():
        print(f"ratio {k} at n={v['n']}: fit+predict time {v['fit_predict_time_ratio']:.2f}, "
              f"peak RSS {v['peak_rss_ratio']:.2f}")
    if "extrapolation" in report:
        print("extrapolation (not measured):", json.dumps(report["extrapolation"]))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
