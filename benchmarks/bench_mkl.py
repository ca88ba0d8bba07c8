"""Benchmark: one-step MKL weight learners vs a single kernel ridge solve.

The transfer-learning paper (Radhakrishnan et al. 2023, Methods "Comparison
with multiple kernel learning approaches", Remark) restricts its MKL
comparison to a binary task because MKLpy's methods "scale poorly"; this
measures how each method here scales with the number of training samples n
and of kernels P, on identical kernels:

* ``CKA``, ``EasyMKL`` (λ = 0.1, weights + final KOMD), ``FHeuristic``,
  ``PWMK`` (3-fold SVC, C = 1000) from ``biokernels.solvers.mkl``;
* MKLpy 0.6's ``EasyMKL``, ``CKA``, ``FHeuristic``, ``PWMK`` when importable,
  with the max |weight difference| to ours (CKA may differ by design: MKLpy
  does not constrain the weights to be non-negative);
* the single-kernel baseline of the translation approach: one kernel ridge
  solve ``(K + 1e-4 I) α = y`` on the summed kernel (Cholesky);
* a full translation fit (Definition 2, ``biokernels.mkl_transfer.translate``)
  on the summed kernel: the source regression on the n samples, the
  correction on a target of ``n_t = min(n, 1000) / 2`` samples (the first
  rows, relabelled) and predictions for as many test rows, with fixed
  ridges 1e-4 (no leave-one-out grid), as SI Fig. S7's translation model.

Kernels: the paper's three — Laplace ``exp(-||x-z||₂/10)``, Gaussian
``exp(-0.001||x-z||²)``, linear ``x'z`` — on synthetic two-class data in 64
dimensions at the 8×8-digits intensity scale (0-16); for P > 3, more Laplace
and Gaussian bandwidths. Kernels are built once per (n, P), outside the
timings. Time is wall-clock (``time.perf_counter``, one run, without
tracemalloc); memory is the peak of Python/numpy allocations during a second
run under ``tracemalloc``, which does not see torch's allocator (used by
MKLpy), so MKLpy's memory is a lower bound. Our fits include the input
checks (symmetry, a Cholesky PSD test per kernel), timed alone as
``validation_seconds``.

Usage::

    .venv/bin/python benchmarks/bench_mkl.py [--quick] [--out results/benchmarks/mkl.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
import tracemalloc
import warnings
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import scipy.linalg

from biokernels.mkl_transfer import translate
from biokernels.solvers.mkl import CKA, PWMK, EasyMKL, FHeuristic


def make_kernels(n: int, P: int, seed: int) -> tuple[list[np.ndarray], np.ndarray]:
    """P kernels (n, n) and ±1 labels on synthetic 64-d data in [0, 16]."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1, -1)
    centres = rng.uniform(2, 10, size=(2, 64))
    X = np.clip(centres[(y > 0).astype(int)] + rng.normal(0, 3.0, size=(n, 64)), 0, 16)
    sq = np.maximum((X ** 2).sum(1)[:, None] + (X ** 2).sum(1)[None] - 2 * X @ X.T, 0.0)
    d = np.sqrt(sq)
    Ks = [np.exp(-d / 10.0), np.exp(-1e-3 * sq), X @ X.T]
    extra_L = [5.0, 20.0, 40.0, 2.5, 80.0]
    extra_g = [3e-4, 3e-3, 1e-2, 1e-4, 3e-2]
    i = 0
    while len(Ks) < P:
        Ks.append(np.exp(-d / extra_L[i % 5] / (1 + i // 5)) if i % 2 == 0
                  else np.exp(-extra_g[i % 5] * (1 + i // 5) * sq))
        i += 1
    return Ks[:P], y


def measure(fn, memory: bool = True):
    """(seconds, peak traced MiB, result) of fn().

    Timed without tracemalloc (it slows the many small allocations of an SMO
    loop several-fold), then run again under tracemalloc for the peak.
    """
    t0 = time.perf_counter()
    out = fn()
    dt = time.perf_counter() - t0
    peak = float("nan")
    if memory:
        tracemalloc.start()
        tracemalloc.reset_peak()
        fn()
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    return dt, peak, out


def ours(name):
    return {"CKA": lambda: CKA(), "EasyMKL": lambda: EasyMKL(lam=0.1),
            "FHeuristic": lambda: FHeuristic(), "PWMK": lambda: PWMK(delta=0.0, cv=3)}[name]()


def mklpy_model(name):
    import MKLpy.algorithms as A
    from sklearn.svm import SVC
    if name == "EasyMKL":
        return A.EasyMKL(lam=0.1, learner=A.KOMD(lam=0.1))
    if name == "CKA":
        return A.CKA(learner=SVC(C=1000))
    if name == "FHeuristic":
        return A.FHeuristic(learner=SVC(C=1000))
    return A.PWMK(delta=0.0, cv=3, learner=SVC(C=1000))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="results/benchmarks/mkl.json")
    ap.add_argument("--quick", action="store_true", help="n in 250,500,1000 and P in 3,10 (a few minutes)")
    ap.add_argument("--sizes", default=None, help="comma-separated n (default 250,500,1000,2000)")
    ap.add_argument("--kernels", default=None, help="comma-separated P (default 3,10,30)")
    ap.add_argument("--no-mklpy", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    sizes = [int(s) for s in (args.sizes or ("250,500,1000" if args.quick else "250,500,1000,2000")).split(",")]
    Ps = [int(s) for s in (args.kernels or ("3,10" if args.quick else "3,10,30")).split(",")]
    have_mklpy = False
    if not args.no_mklpy:
        try:
            import MKLpy  # noqa: F401
            import torch
            have_mklpy = True
        except Exception as exc:                                  # noqa: BLE001
            print(f"MKLpy not importable: {exc}", file=sys.stderr)
    log = lambda m: print(m, file=sys.stderr, flush=True)  # noqa: E731
    report = {"created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
              "command": " ".join(["bench_mkl.py", *(argv if argv is not None else sys.argv[1:])]),
              "machine": {"python": platform.python_version(), "platform": platform.platform(),
                          "cores": os.cpu_count(), "numpy": np.__version__},
              "memory_note": "peak tracemalloc MiB during fit (numpy/Python allocations; torch not traced)",
              "mklpy": have_mklpy, "runs": []}
    for P in Ps:
        for n in sizes:
            Ks, y = make_kernels(n, P, args.seed)
            entry = {"n": n, "P": P, "results": {}}
            # single-kernel ridge on the summed kernel (translation-like solve)
            def ridge():
                K = np.sum(Ks, axis=0)
                K.flat[:: n + 1] += 1e-4
                return scipy.linalg.cho_solve(scipy.linalg.cho_factor(K, lower=True, check_finite=False),
                                              y.astype(float), check_finite=False)
            dt, peak, _ = measure(ridge)
            entry["results"]["ridge_sum_kernel"] = {"seconds": dt, "peak_mib": peak}
            log(f"[n={n} P={P}] ridge_sum_kernel {dt:.3f}s {peak:.0f} MiB")
            n_t = min(n, 1000) // 2
            y_t = -y[:n_t].astype(float)            # a target task: the first rows, labels flipped

            def translation():
                K = np.sum(Ks, axis=0)
                return translate(K, y.astype(float), K[:n_t], K[:n_t, :n_t], y_t, K[n_t:2 * n_t],
                                 K[n_t:2 * n_t, :n_t], 1e-4, 1e-4)
            dt, peak, _ = measure(translation)
            entry["results"]["translation_sum_kernel"] = {"seconds": dt, "peak_mib": peak, "n_target": n_t}
            log(f"[n={n} P={P}] translation_sum_kernel (n_t={n_t}) {dt:.3f}s {peak:.0f} MiB")
            from biokernels.solvers.kernel_lists import check_kernel_list
            t0 = time.perf_counter()
            check_kernel_list(Ks)
            entry["validation_seconds"] = time.perf_counter() - t0   # included in every fit below
            weights = {}
            for name in ("CKA", "EasyMKL", "FHeuristic", "PWMK"):
                dt, peak, m = measure(lambda: ours(name).fit(Ks, y))
                weights[name] = m.weights_
                r = {"seconds": dt, "peak_mib": peak, "weights": m.weights_.tolist()}
                if name == "EasyMKL":
                    r["komd_info"] = {k: m.solver_info_[k] for k in ("iterations", "polished", "seconds")}
                entry["results"][name] = r
                log(f"[n={n} P={P}] {name} {dt:.3f}s {peak:.0f} MiB")
                if have_mklpy:
                    KL = [torch.tensor(K) for K in Ks]
                    Y = torch.tensor(y)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        try:
                            dt, peak, mm = measure(lambda: mklpy_model(name).fit(KL, Y))
                            w = np.asarray(mm.solution.weights, dtype=float)
                            entry["results"][f"MKLpy_{name}"] = {
                                "seconds": dt, "peak_mib_lower_bound": peak, "weights": w.tolist(),
                                "has_negative_weight": bool(w.min() < 0),
                                "max_abs_weight_diff_vs_ours": float(np.abs(w - weights[name]).max())}
                            log(f"[n={n} P={P}] MKLpy_{name} {dt:.3f}s, max|Δw| "
                                f"{np.abs(w - weights[name]).max():.2e}")
                        except Exception as exc:                  # noqa: BLE001
                            entry["results"][f"MKLpy_{name}"] = {"error": repr(exc)}
                            log(f"[n={n} P={P}] MKLpy_{name} FAILED {exc!r}")
            report["runs"].append(entry)
            del Ks
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2))
    print(f"\n{'P':>3} {'n':>5} " + " ".join(f"{k:>16}" for k in report["runs"][0]["results"]))
    for e in report["runs"]:
        print(f"{e['P']:>3} {e['n']:>5} " + " ".join(
            f"{v.get('seconds', float('nan')):>15.3f}s" for v in e["results"].values()))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
