"""Benchmark: NTK kernel ridge regression of the virtual drug screen's source model.

The source model of Radhakrishnan et al. 2023 (Methods "Details for virtual
drug screening") is kernel ridge regression with the NTK of a one-hidden-layer
ReLU network with bias, on features ``x = [drug fingerprint | cell-line
embedding]``, with 978 genes predicted jointly; the real source has ~54k
(drug, cell) pairs. This script measures it on synthetic data of the real
shapes:

* drugs: 1024-bit sparse binary fingerprints (each drug sets 1-6 % of the
  bits, like Morgan fingerprints), rows scaled to unit norm;
* cells: ``--n-cells`` (65) control-expression profiles over ``--genes``
  (978) genes, centred over cells and scaled to unit norm (as
  :mod:`biokernels.studies.drug_screen.protocol` does);
* samples: distinct random (drug, cell) pairs; targets: the cell's control
  profile plus a sparse linear drug effect plus noise, ``--genes`` columns.

**Time** (per n, in this process, ``benchmarks/_harness.py``): the indexed
NTK Gram (:func:`biokernels.kernels.ntk.ntk_relu_indexed`; train x train and
test x train) is built once per precision, then the contenders, all given the
same Gram, are interleaved, warmed up and timed over ``--repeats`` (median),
BLAS and torch threads pinned to ``--threads``; each is fit + prediction of
the test rows:

``ours_cholesky_f32`` / ``ours_cholesky_f64``
    :func:`biokernels.solvers.ridge.solve_ridge` (in-place blocked Cholesky
    of a fresh copy of the Gram, made untimed before each call: the
    workflow factors its only Gram in place) +
    :func:`biokernels.solvers.ridge.predict_ridge` (``K_test @ alpha``). The
    targets are centred once, untimed, for every contender (the workflow's
    ``fit_intercept=True`` does that centring inside the solve: O(n c));
``ours_cg_f32``
    the same with Nystrom-preconditioned CG (``--tol``), K untouched;
``sklearn_f32`` / ``sklearn_f64``
    ``sklearn.kernel_ridge.KernelRidge(kernel="precomputed", alpha=lam)``
    fit + predict on the same Gram, in that dtype (scikit-learn keeps
    float32 input in float32).

The headline ratios compare **the same precision and the same output**:
sklearn_f32 / ours_cholesky_f32 and sklearn_f64 / ours_cholesky_f64, with
the largest prediction difference checked against a tolerance derived from
the precision, ``sqrt(n) eps cond`` times the largest centred prediction
(``cond = (||K||_inf + lam) / lam`` bounds the condition number of
``K + lam I``); CG is compared with the exact solution of its precision,
with its residual tolerance added.

**Memory** (per n and method, ``--memory``, on by default): a fresh
subprocess builds the data and the Gram in the method's precision and runs
the method once; its peak resident set (``VmHWM``, see
:func:`_harness.peak_rss_mib`: includes BLAS and LAPACK buffers that
tracemalloc misses; on CUDA also ``torch.cuda.max_memory_allocated``) is the
figure; ``gram_f32`` / ``gram_f64`` (data and Gram only) give the base. The headline peak-RSS
ratios are sklearn / ours at the same precision. A method whose estimated
peak exceeds ``--mem-limit-gib`` is skipped (and so is its timing).

The JSON also holds the Gram build times, a crude extrapolation to
``--extrapolate-to`` samples (Gram ~ n^2, Cholesky ~ n^3, CG ~ n^2 x
iterations) and the machine.

Usage::

    .venv/bin/python benchmarks/bench_ntk_krr.py --sizes 2000,5000 \\
        [--out results/benchmarks/ntk_krr.json] [--device cpu|cuda|auto] [--threads 1]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import (  # noqa: E402
    Contender,
    add_harness_args,
    begin_report,
    check_harness_args,
    finish_report,
    headline_ratio,
    log,
    mem_available_gib,
    peak_rss_mib,
    pin_threads,
    run_interleaved,
)
from _harness import run_worker as _run_worker  # noqa: E402

METHODS = ("ours_cholesky_f32", "ours_cg_f32", "ours_cholesky_f64", "sklearn_f32", "sklearn_f64")
PAIRS = (("sklearn_f32", "ours_cholesky_f32", "float32"), ("sklearn_f64", "ours_cholesky_f64", "float64"))
FP_BITS = 1024


def dtype_of(method: str) -> str:
    return "float64" if method.endswith("f64") else "float32"


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


def build_grams(data: dict, dtype, dev, block_rows: int, out=None):
    """(K train x train, K test x train) of the indexed NTK in ``dtype`` on ``dev``."""
    import torch

    from biokernels.kernels.ntk import ntk_relu_indexed

    Dt = torch.as_tensor(data["D"], device=dev)
    Gd = (Dt @ Dt.T).to(dtype)
    del Dt
    Gc = torch.as_tensor(data["C"], dtype=torch.float64, device=dev)
    Gc = (Gc @ Gc.T).to(dtype)
    n = len(data["train"][0])
    K = out if out is not None else torch.empty((n, n), dtype=dtype, device=dev)
    ntk_relu_indexed(Gd, Gc, data["train"], out=K, dtype=dtype, block_rows=block_rows)
    Kt = ntk_relu_indexed(Gd, Gc, data["test"], data["train"], dtype=dtype, block_rows=block_rows)
    return K, Kt


def r2_mean(pred: np.ndarray, Y: np.ndarray) -> float:
    return float(np.mean(1 - ((pred - Y) ** 2).sum(1) / ((Y - Y.mean(1, keepdims=True)) ** 2).sum(1)))


# --------------------------------------------------------------------------- contenders


def fit_predict(method: str, K, Kt, Yc, lam: float, spec: dict, sync):
    """One contender's fit + prediction (centred). ``K`` is consumed by the
    in-place Cholesky; pass a copy."""
    import torch

    from biokernels.solvers.ridge import predict_ridge, solve_ridge

    if method.startswith("ours"):
        solver = "cg" if "_cg_" in method else "cholesky"
        alpha, info = solve_ridge(K, Yc, lam, method=solver, overwrite=True, tol=spec["tol"],
                                  block_size=spec["block_size"], precond_rank=spec["precond_rank"])
        pred = predict_ridge(Kt, alpha)       # float64 on the host: synchronises the device
        sync()
        return pred, info
    from sklearn.kernel_ridge import KernelRidge

    K_np = K.cpu().numpy() if isinstance(K, torch.Tensor) else K
    Kt_np = Kt.cpu().numpy() if isinstance(Kt, torch.Tensor) else Kt
    model = KernelRidge(alpha=lam, kernel="precomputed").fit(K_np, Yc)
    return model.predict(Kt_np).astype(np.float64), {"dual_coef_dtype": str(model.dual_coef_.dtype)}


def kernel_cond_bound(K, lam: float) -> float:
    """(||K||_inf + lam) / lam >= cond(K + lam I) for a PSD K."""
    import torch

    return float((torch.abs(K).sum(dim=1).max().item() + lam) / lam)


# --------------------------------------------------------------------------- memory worker


def worker(spec: dict) -> dict:
    """Peak memory of one method in this (fresh) process."""
    import torch

    from biokernels.device import resolve_device

    with pin_threads(spec["threads"]):
        dev = resolve_device(spec["device"])
        cuda = dev.type == "cuda"

        def sync():
            if cuda:
                torch.cuda.synchronize(dev)

        method, lam = spec["method"], spec["lam"]
        data = make_data(spec["n"], spec["n_test"], spec["n_drugs"], spec["n_cells"], spec["genes"], spec["seed"])
        out = {"method": method, "n": spec["n"], "rss_after_data_mib": peak_rss_mib()}
        dtype = torch.float64 if dtype_of(method) == "float64" else torch.float32
        t0 = time.perf_counter()
        K, Kt = build_grams(data, dtype, dev, spec["block_rows"])
        sync()
        out["gram_s"] = time.perf_counter() - t0
        out["rss_after_gram_mib"] = peak_rss_mib()
        if not method.startswith("gram"):
            Yc = data["Y"] - data["Y"].mean(axis=0)
            Yc = Yc.astype(np.float64 if dtype == torch.float64 else np.float32)
            if method.startswith("ours"):
                Yc = torch.as_tensor(Yc, device=dev)
            t0 = time.perf_counter()
            fit_predict(method, K, Kt, Yc, lam, spec, sync)
            out["fit_predict_s_single_run"] = time.perf_counter() - t0
        out["peak_rss_mib"] = peak_rss_mib()
        out["peak_rss_gib"] = out["peak_rss_mib"] / 1024
        if cuda:
            out["cuda_max_allocated_gib"] = torch.cuda.max_memory_allocated(dev) / 2**30
    return out


def run_worker(spec: dict, timeout: float) -> dict:
    return _run_worker(__file__, spec, timeout)


# --------------------------------------------------------------------------- driver


def needed_gib(method: str, n: int, n_test: int, genes: int) -> float:
    """Rough peak memory of one method alone: n x n copies of the Gram (ours:
    1; sklearn: its input, its copy in ``_solve_cholesky_kernel`` and scipy's
    ``solve`` copy) plus the test Gram and targets."""
    item = 8 if dtype_of(method) == "float64" else 4
    copies = 3 if method.startswith("sklearn") else (1 if method.startswith("gram") else 2)
    return (copies * n * n + n_test * n + 4 * n * genes) * item / 2**30 + 1.0


def needed_inprocess_gib(methods: list[str], n: int, n_test: int, genes: int) -> float:
    """Timing phase: the Grams of both precisions held, plus the largest
    transient of one contender (copies beyond its Gram)."""
    held = sum(((n * n + n_test * n) * (8 if p == "float64" else 4)) for p in {dtype_of(m) for m in methods})
    transient = max(needed_gib(m, n, n_test, genes) * 2**30 - (n * n + n_test * n) * (8 if dtype_of(m) == "float64"
                                                                                         else 4) for m in methods)
    return (held + transient) / 2**30 + 1.0


def time_size(n: int, methods: list[str], args, log_fn) -> dict:
    """The timing phase of one n: Grams built once, contenders interleaved."""
    import torch

    from biokernels.device import resolve_device

    dev = resolve_device(args.device)
    cuda = dev.type == "cuda"

    def sync():
        if cuda:
            torch.cuda.synchronize(dev)

    data = make_data(n, args.n_test, args.n_drugs, args.n_cells, args.genes, args.seed)
    mu = data["Y"].mean(axis=0)
    Yc64 = data["Y"] - mu
    spec = {"tol": args.tol, "block_size": args.block_size, "precond_rank": args.precond_rank}
    grams, gram_timing = {}, {}
    for prec in sorted({dtype_of(m) for m in methods}):
        tdt = torch.float64 if prec == "float64" else torch.float32
        buf = torch.empty((n, n), dtype=tdt, device=dev)

        def build(tdt=tdt, buf=buf):
            out = build_grams(data, tdt, dev, args.block_rows, out=buf)
            sync()
            return out
        g = run_interleaved({f"gram_{prec}": build}, warmup=args.warmup, repeats=args.repeats)
        grams[prec] = g.outputs.pop(f"gram_{prec}")
        gram_timing[prec] = g.to_json()
        log_fn(f"[n={n}] gram {prec}: {g.median(f'gram_{prec}'):.2f} s")

    Y = {p: (torch.as_tensor(Yc64.astype(np.float32 if p == "float32" else np.float64), device=dev))
         for p in grams}
    Y_np = {p: Y[p].cpu().numpy() for p in grams}
    infos: dict = {}

    def contender(method):
        p = dtype_of(method)
        K, Kt = grams[p]

        def run(Kc):
            pred, info = fit_predict(method, Kc, Kt, Y[p] if method.startswith("ours") else Y_np[p],
                                     args.lam, spec, sync)
            infos[method] = info
            return pred
        if method.startswith("ours_cholesky"):
            return Contender(run, setup=lambda: K.clone())   # the in-place factor consumes its copy
        return Contender(lambda: run(K))

    cmp = run_interleaved({m: contender(m) for m in methods}, warmup=args.warmup, repeats=args.repeats,
                          log=log_fn if args.verbose else None)
    preds = dict(cmp.outputs)
    cmp.outputs.clear()
    entry = {"n": n, "n_drugs_used": data["n_drugs_used"], "gram_timing": gram_timing,
             "timing": cmp.to_json(), "results": {}, "prediction_checks": {}}
    for m in methods:
        info = infos.get(m, {})
        entry["results"][m] = {
            "fit_predict_median_s": cmp.median(m), "test_r2_mean": r2_mean(preds[m] + mu, data["Y_test"]),
            "solver": {k: (v.tolist() if hasattr(v, "tolist") else v) for k, v in info.items()
                       if k in ("method", "dtype", "iterations", "converged", "residual_max", "residual_kind",
                                "preconditioner", "factor_s", "substitution_s", "precond_s", "cg_s",
                                "dual_coef_dtype")}}
    # same-output checks: tolerance from the precision and the conditioning
    cond = {p: kernel_cond_bound(grams[p][0], args.lam) for p in grams}
    for p in grams:
        eps = float(np.finfo(np.float32 if p == "float32" else np.float64).eps)
        ref = f"ours_cholesky_{'f32' if p == 'float32' else 'f64'}"
        if ref not in preds:
            continue
        scale = float(np.abs(preds[ref]).max())
        tol_exact = math.sqrt(n) * eps * cond[p] * scale
        for m in methods:
            if m == ref or dtype_of(m) != p:
                continue
            tol = tol_exact + (cond[p] * args.tol * scale if "_cg_" in m else 0.0)
            d = float(np.abs(preds[m] - preds[ref]).max())
            entry["prediction_checks"][f"{m}_vs_{ref}"] = {
                "max_abs_diff": d, "max_rel_diff": d / scale, "tolerance": tol, "same_output": d <= tol,
                "tolerance_rule": "sqrt(n) eps cond max|pred|" + (" + cond cg_tol max|pred|" if "_cg_" in m else ""),
                "cond_bound": cond[p]}
    if "ours_cholesky_f32" in preds and "ours_cholesky_f64" in preds:
        d = float(np.abs(preds["ours_cholesky_f32"] - preds["ours_cholesky_f64"]).max())
        entry["prediction_checks"]["ours_cholesky_f32_vs_f64"] = {
            "max_abs_diff": d, "max_rel_diff": d / float(np.abs(preds["ours_cholesky_f64"]).max()),
            "note": "the float32 error itself, for reference"}
    entry["_comparison"] = cmp
    del grams, preds
    return entry


def extrapolate(entry: dict, n_to: int) -> dict:
    """Scale the measured times of one n to ``n_to``: Gram ~ n^2, Cholesky
    factorization ~ n^3 and substitutions ~ n^2 (978 right-hand sides), CG
    iterations ~ n^2 (at the same iteration count), Nystrom set-up ~ n."""
    n = entry["n"]
    r = n_to / n
    out = {"from_n": n, "to_n": n_to, "note": "crude power-law extrapolation, not a measurement"}
    g = entry.get("gram_timing", {}).get("float32")
    if g:
        out["gram_f32_s"] = g["contenders"]["gram_float32"]["median_s"] * r**2
        out["gram_gib_float32"] = n_to**2 * 4 / 2**30
    ch = entry["results"].get("ours_cholesky_f32", {}).get("solver") or {}
    if ch.get("factor_s") is not None:
        out["ours_cholesky_f32_factor_s"] = ch["factor_s"] * r**3
        out["ours_cholesky_f32_substitution_s"] = ch["substitution_s"] * r**2
        out["ours_cholesky_f32_fit_s"] = out["ours_cholesky_f32_factor_s"] + out["ours_cholesky_f32_substitution_s"]
    cg = entry["results"].get("ours_cg_f32", {}).get("solver") or {}
    if cg.get("cg_s") is not None:
        out["ours_cg_f32_fit_s_same_iterations"] = cg["cg_s"] * r**2 + cg["precond_s"] * r
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    add_harness_args(ap, out="results/benchmarks/ntk_krr.json")
    ap.add_argument("--sizes", default="5000,10000,20000,30000,54000",
                    help="comma-separated training sizes n (default %(default)s)")
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
    ap.add_argument("--no-memory", dest="memory", action="store_false",
                    help="skip the peak-RSS subprocesses")
    ap.add_argument("--tol", type=float, default=1e-5, help="CG relative residual tolerance")
    ap.add_argument("--block-size", type=int, default=2048, help="Cholesky block")
    ap.add_argument("--block-rows", type=int, default=512, help="Gram rows per block")
    ap.add_argument("--precond-rank", type=int, default=500, help="Nystrom preconditioner rank")
    ap.add_argument("--extrapolate-to", type=int, default=54000)
    ap.add_argument("--timeout", type=float, default=6 * 3600, help="per memory subprocess, seconds")
    ap.add_argument("--verbose", action="store_true", help="log every timed call")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.worker:
        res = worker(json.loads(args.worker))
        print("RESULT " + json.dumps(res), flush=True)
        return 0
    check_harness_args(ap, args)

    from biokernels.device import describe_device, resolve_device

    try:
        dev = resolve_device(args.device)
    except ValueError as e:
        ap.error(str(e))
    sizes = [int(s) for s in args.sizes.split(",") if s]
    methods = [m for m in args.methods.split(",") if m]
    bad = [m for m in methods if m not in METHODS]
    if bad:
        ap.error(f"--methods: unknown {bad}; choose from {METHODS}")
    limit = args.mem_limit_gib if args.mem_limit_gib is not None else 0.9 * mem_available_gib()
    headline: list[dict] = []
    with pin_threads(args.threads):
        report = begin_report("ntk_krr", args, device=describe_device(dev), mem_limit_gib=limit)
        report["sizes"] = []
        if True:
            for n in sizes:
                ok = [m for m in methods if needed_gib(m, n, args.n_test, args.genes) <= limit]
                skipped = {m: f"needs ~{needed_gib(m, n, args.n_test, args.genes):.1f} GiB > limit {limit:.1f} GiB"
                           for m in methods if m not in ok}
                while ok and needed_inprocess_gib(ok, n, args.n_test, args.genes) > limit:
                    drop = max(ok, key=lambda m: needed_gib(m, n, args.n_test, args.genes))
                    skipped[drop] = "timing phase (both precisions held) would exceed the memory limit"
                    ok.remove(drop)
                for m, why in skipped.items():
                    log(f"[n={n}] {m}: skipped ({why})")
                if not ok:
                    report["sizes"].append({"n": n, "skipped": skipped})
                    continue
                entry = time_size(n, ok, args, log)
                cmp = entry.pop("_comparison")
                entry["skipped"] = skipped
                for m in ok:
                    r = entry["results"][m]
                    log(f"[n={n}] {m}: fit+predict median {r['fit_predict_median_s']:.2f} s, "
                        f"R2 {r['test_r2_mean']:.3f}")
                for k, v in entry["prediction_checks"].items():
                    log(f"[n={n}] {k}: max |diff| {v['max_abs_diff']:.2e} (relative {v['max_rel_diff']:.2e})"
                        + (f", tolerance {v['tolerance']:.2e} -> same output {v['same_output']}"
                           if "tolerance" in v else ""))
                if args.memory:
                    mem = {}
                    grams = ["gram_f32"] + (["gram_f64"] if any(dtype_of(m) == "float64" for m in ok) else [])
                    for m in [*grams, *ok]:
                        spec = {"method": m, "n": n, "n_test": args.n_test, "n_drugs": args.n_drugs,
                                "n_cells": args.n_cells, "genes": args.genes, "seed": args.seed, "lam": args.lam,
                                "device": args.device, "tol": args.tol, "block_size": args.block_size,
                                "block_rows": args.block_rows, "precond_rank": args.precond_rank,
                                "threads": args.threads}
                        mem[m] = run_worker(spec, args.timeout)
                        if "error" in mem[m]:
                            log(f"[n={n}] memory {m}: FAILED {mem[m]['error']}")
                        else:
                            log(f"[n={n}] memory {m}: peak RSS {mem[m]['peak_rss_gib']:.2f} GiB")
                    entry["memory"] = mem
                for sk, ours, prec in PAIRS:
                    if sk not in ok or ours not in ok:
                        continue
                    chk = entry["prediction_checks"][f"{sk}_vs_{ours}"]
                    h = headline_ratio(f"time_{sk}_over_{ours}_n{n}", cmp, sk, ours, precision=prec,
                                       output=f"test predictions ({args.n_test} x {args.genes}) of kernel ridge "
                                              f"(lam {args.lam:g}) on the same {prec} NTK Gram",
                                       max_abs_diff=chk["max_abs_diff"], tolerance=chk["tolerance"], n=n,
                                       measures="fit + predict, Gram excluded (built once, shared)")
                    headline.append(h)
                    mm = entry.get("memory", {})
                    if "peak_rss_gib" in mm.get(sk, {}) and "peak_rss_gib" in mm.get(ours, {}):
                        headline.append({
                            "name": f"peak_rss_{sk}_over_{ours}_n{n}",
                            "ratio": mm[sk]["peak_rss_gib"] / mm[ours]["peak_rss_gib"],
                            "numerator": sk, "denominator": ours,
                            "numerator_peak_rss_gib": mm[sk]["peak_rss_gib"],
                            "denominator_peak_rss_gib": mm[ours]["peak_rss_gib"],
                            "gram_only_peak_rss_gib": mm.get(f"gram_{sk[-3:]}", {}).get("peak_rss_gib"),
                            "precision": prec, "output": h["output"], "same_output": h.get("same_output"), "n": n,
                            "measures": "peak resident set of a fresh process: data + Gram + fit + predict "
                                        "(one run per method)"})
                report["sizes"].append(entry)
    measured = [e for e in report["sizes"] if "results" in e]
    if measured:
        report["extrapolation"] = extrapolate(max(measured, key=lambda e: e["n"]), args.extrapolate_to)
    path = finish_report(report, headline, args.out, notes=[
        "time: in one process, the Gram of each precision built once and shared; contenders interleaved",
        "memory: one fresh subprocess per (n, method), peak RSS (VmHWM of the child itself)",
        "ours_cholesky_* get an untimed fresh copy of the Gram before each call (the in-place factor consumes it)",
    ])

    for h in headline:
        log(f"{h['name']}: {h['ratio']:.2f}x"
            + (f" (paired {h['paired_ratio_median']:.2f}x)" if "paired_ratio_median" in h else "")
            + f" (same output: {h.get('same_output')})")
    log(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
