"""Benchmark: the drug-screen source model from 10k to 250k+ pairs (issue #19).

Kernel ridge with the NTK of (drug, cell line) pairs (Radhakrishnan et al.
2023, Methods), fitted and used to predict held-out pairs by:

``exact``
    the workflow's exact path: the n x n float32 Gram
    (:func:`biokernels.kernels.ntk.ntk_relu_indexed`) factored in place by
    :func:`biokernels.solvers.ridge.solve_ridge` (``method="cholesky"``).
    Skipped when its memory (:func:`biokernels.solvers.matrix_free.exact_bytes`
    + 1 GiB) exceeds ``--max-exact-gib`` or the memory available.
``nystrom``
    :func:`biokernels.solvers.matrix_free.nystrom_ridge` on the matrix-free
    operator (``centres="auto"``, the documented rule), float32 kernel blocks,
    float64 sums.
``falkon``
    :func:`biokernels.solvers.falkon.falkon_ridge`: Nystrom with
    leverage-score centres and the K_MM-Cholesky conditioning, two M x M
    float64 buffers, M capped by ``--falkon-budget-gib``
    (:func:`biokernels.solvers.falkon.falkon_max_centres`); with
    ``--falkon-exact`` then CG on the exact system to ``--cg-tol``.
``cg_matrix_free``
    :func:`biokernels.solvers.matrix_free.cg_ridge`, only for n <=
    ``--max-cg-n`` (O(n^2 c) work per iteration).

Data: the synthetic screen of ``bench_ntk_krr.make_data`` (1024-bit sparse
fingerprints, centred unit-norm control profiles, a sparse linear drug
effect plus noise, 978 genes) at the drug and cell-line counts of the LINCS
2020 data on these machines (``--n-drugs 8316 --n-cells 165``:
``../shared/data/l1000_transigen_lincs2020``, 8,316 compounds with SMILES
and 165 cell lines with controls), ``--n-test`` held-out pairs.

Each (n, method, repeat) runs in a fresh subprocess, so its peak resident
set (``VmHWM``, :func:`_harness.peak_rss_mib`) is its own; within a repeat
the methods run in rotated order (interleaved), and the median over
``--repeats`` is quoted (a size whose single run takes longer than
``--single-run-above-s`` seconds is run once, and marked ``repeats: 1``).
Accuracy: each method's test predictions against the exact ones (largest
difference relative to the largest centred exact prediction), and the
held-out mean R^2 over genes of each.

Output (``--json``): ``rows``, one per (n, method, device) with ``n``,
``method``, ``device``, ``fit_s``, ``predict_s`` (medians), ``operator_s``
(Gram or K_MM set-up inside the fit), ``peak_rss_gib``, ``cuda_peak_gib``,
``iterations``, ``centres``, ``r2``, ``r2_diff_vs_exact``,
``pred_rel_diff_vs_exact``, ``pred_rel_fro_vs_exact``, the repeats; ``scaling``: per method, the
exponent of a least-squares fit of log(fit_s) and log(peak_rss) on log(n);
``headline``: time and memory ratios nystrom / exact at each n where both ran.

Usage::

    python benchmarks/bench_ntk_scale.py --sizes 10000,54000,250000 --json results/benchmarks/ntk_scale.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import (begin_report, finish_report, log, mem_available_gib, peak_rss_mib,  # noqa: E402
                      pin_threads, run_worker_rounds)
from bench_ntk_krr import make_data  # noqa: E402

METHODS = ("exact", "nystrom", "falkon", "cg_matrix_free")


def r2_mean(pred: np.ndarray, Y: np.ndarray) -> float:
    """Mean over genes of the held-out R^2 (the study's ``mean_r2``)."""
    ss = ((Y - Y.mean(0)) ** 2).sum(0)
    return float(np.mean(1.0 - ((Y - pred) ** 2).sum(0) / np.where(ss > 0, ss, 1.0)))


# --------------------------------------------------------------------------- worker


def worker(spec: dict) -> dict:
    """Fit and predict with one method in this fresh process."""
    import torch

    from biokernels.device import resolve_device
    from biokernels.kernels.ntk import ntk_relu_indexed
    from biokernels.kernels.ntk_operator import PairNTKOperator
    from biokernels.solvers.falkon import falkon_max_centres, falkon_ridge
    from biokernels.solvers.matrix_free import cg_ridge, nystrom_ridge, predict_pairs
    from biokernels.solvers.ridge import predict_ridge, solve_ridge

    with pin_threads(spec["threads"]):
        dev = resolve_device(spec["device"])
        cuda = dev.type == "cuda"

        def sync():
            if cuda:
                torch.cuda.synchronize(dev)

        data = make_data(spec["n"], spec["n_test"], spec["n_drugs"], spec["n_cells"], spec["genes"], spec["seed"])
        out = {"method": spec["method"], "n": spec["n"], "device": str(dev), "rss_after_data_gib": peak_rss_mib() / 1024}
        method, lam = spec["method"], spec["lam"]
        t0 = time.perf_counter()
        if method == "exact":
            Dg = torch.as_tensor(data["D"] @ data["D"].T, device=dev)
            Cg = torch.as_tensor(data["C"] @ data["C"].T, device=dev)
            K = torch.empty((spec["n"], spec["n"]), dtype=torch.float32, device=dev)
            ntk_relu_indexed(Dg, Cg, data["train"], None, out=K, dtype=torch.float32)
            sync()
            out["operator_s"] = time.perf_counter() - t0
            alpha, info = solve_ridge(K, data["Y"], lam, method="cholesky", fit_intercept=True, overwrite=True)
            del K
            sync()
            out["fit_s"] = time.perf_counter() - t0
            t1 = time.perf_counter()
            pred = np.empty((spec["n_test"], data["Y"].shape[1]))
            for s in range(0, spec["n_test"], 4096):
                rows = (data["test"][0][s:s + 4096], data["test"][1][s:s + 4096])
                Kt = ntk_relu_indexed(Dg, Cg, rows, data["train"], dtype=torch.float32)
                pred[s:s + 4096] = predict_ridge(Kt, alpha, info["intercept"])
            sync()
            out["predict_s"] = time.perf_counter() - t1
        else:
            op = PairNTKOperator(data["D"], data["C"], data["train"], dtype=torch.float32, device=dev,
                                 block_bytes=spec["block_mib"] * 2**20)
            sync()
            out["operator_s"] = time.perf_counter() - t0
            if method == "nystrom":
                fit = nystrom_ridge(op, data["Y"], lam, centres=spec["centres"], tol=spec["nystrom_tol"],
                                    max_centres=spec["max_centres"], seed=spec["seed"])
                out["centres"] = fit["info"]["centres"]
                out["passes"] = fit["info"]["passes"]
                out["converged"] = fit["info"]["converged"]
            elif method == "falkon":
                cap = falkon_max_centres(spec["falkon_budget_gib"] * 2**30, data["Y"].shape[1])
                fit = falkon_ridge(op, data["Y"], lam, centres=spec["centres"], tol=spec["nystrom_tol"],
                                   max_centres=cap, sketch=spec["sketch"], seed=spec["seed"],
                                   exact=spec["falkon_exact"], cg_tol=spec["cg_tol"])
                out["iterations"] = fit["info"].get("iterations")
                out["centres"] = fit["info"]["centres"]
                out["passes"] = fit["info"]["passes"]
                out["converged"] = fit["info"]["converged"]
                out["d_eff_leverage"] = fit["info"]["d_eff_leverage"]
            else:
                fit = cg_ridge(op, data["Y"], lam, tol=spec["cg_tol"], precond_rank=spec["precond_rank"],
                               seed=spec["seed"])
                out["iterations"] = fit["info"]["iterations"]
                out["converged"] = fit["info"]["converged"]
            sync()
            out["fit_s"] = time.perf_counter() - t0
            t1 = time.perf_counter()
            pred = predict_pairs(op, fit, data["test"])
            sync()
            out["predict_s"] = time.perf_counter() - t1
        out["r2"] = r2_mean(pred, data["Y_test"])
        out["peak_rss_gib"] = peak_rss_mib() / 1024
        out["cuda_peak_gib"] = torch.cuda.max_memory_allocated(dev) / 2**30 if cuda else None
        np.save(spec["pred_path"], pred.astype(np.float32))
    return out


# --------------------------------------------------------------------------- driver


def exponent(ns, ys) -> float | None:
    """Slope of log(y) on log(n) by least squares (None with < 2 sizes)."""
    pts = [(n, y) for n, y in zip(ns, ys) if y and y > 0]
    if len({n for n, _ in pts}) < 2:
        return None
    return float(np.polyfit(np.log([n for n, _ in pts]), np.log([y for _, y in pts]), 1)[0])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10000,54000,250000", help="training pairs n, comma-separated")
    ap.add_argument("--methods", default="exact,nystrom,cg_matrix_free")
    ap.add_argument("--json", default="results/benchmarks/ntk_scale.json", help="output JSON")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--single-run-above-s", type=float, default=600.0,
                    help="a size whose first run took longer than this is not repeated")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--n-test", type=int, default=5000)
    ap.add_argument("--n-drugs", type=int, default=8316)
    ap.add_argument("--n-cells", type=int, default=165)
    ap.add_argument("--genes", type=int, default=978)
    ap.add_argument("--lam", type=float, default=1000.0, help="absolute ridge (the paper's source model: 1000)")
    ap.add_argument("--centres", default="auto")
    ap.add_argument("--nystrom-tol", type=float, default=0.01)
    ap.add_argument("--max-centres", type=int, default=16384)
    ap.add_argument("--falkon-budget-gib", type=float, default=4.5,
                    help="falkon: the M x M buffers' budget (4.5 GiB: 16,659 centres with 978 genes)")
    ap.add_argument("--sketch", type=int, default=2048, help="falkon: columns of the leverage-score sketch")
    ap.add_argument("--falkon-exact", default="never", choices=("never", "unconverged", "always"),
                    help="falkon: then CG on the exact system (to --cg-tol) preconditioned by its Nystrom kernel")
    ap.add_argument("--cg-tol", type=float, default=1e-4)
    ap.add_argument("--precond-rank", type=int, default=1000)
    ap.add_argument("--block-mib", type=int, default=256)
    ap.add_argument("--max-exact-gib", type=float, default=20.0)
    ap.add_argument("--max-cg-n", type=int, default=20000)
    ap.add_argument("--timeout", type=float, default=7200.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print("RESULT " + json.dumps(worker(json.loads(args.worker))), flush=True)
        return 0
    if args.repeats < 1:
        ap.error("--repeats must be >= 1")
    from biokernels.solvers.matrix_free import exact_bytes

    sizes = [int(s) for s in args.sizes.split(",") if s]
    methods = [m for m in args.methods.split(",") if m]
    bad = set(methods) - set(METHODS)
    if bad:
        ap.error(f"--methods: unknown {sorted(bad)}; known {METHODS}")
    centres = args.centres if args.centres == "auto" else int(args.centres)
    rows, tmp = [], Path(tempfile.mkdtemp(prefix="ntk_scale_"))
    with pin_threads(args.threads):
        report = begin_report("ntk_scale", args, packages=("torch", "numpy"))
        for n in sizes:
            todo = []
            for m in methods:
                if m == "exact" and (exact_bytes(n, args.genes) / 2**30 + 1 > min(args.max_exact_gib,
                                                                                    mem_available_gib())):
                    log(f"n={n}: exact skipped (needs {exact_bytes(n, args.genes) / 2**30:.1f} GiB)")
                    continue
                if m == "cg_matrix_free" and n > args.max_cg_n:
                    log(f"n={n}: cg_matrix_free skipped (n > --max-cg-n {args.max_cg_n})")
                    continue
                todo.append(m)
            def spec_of(m, n=n):
                return {"n": n, "method": m, "threads": args.threads, "device": args.device,
                        "n_test": args.n_test, "n_drugs": args.n_drugs, "n_cells": args.n_cells,
                        "genes": args.genes, "lam": args.lam, "seed": args.seed, "centres": centres,
                        "nystrom_tol": args.nystrom_tol, "max_centres": args.max_centres,
                        "falkon_budget_gib": args.falkon_budget_gib, "sketch": args.sketch,
                        "falkon_exact": args.falkon_exact,
                        "cg_tol": args.cg_tol, "precond_rank": args.precond_rank, "block_mib": args.block_mib,
                        "pred_path": str(tmp / f"{n}_{m}.npy")}

            def describe(m, r, res, n=n):
                log(f"n={n} {m} repeat {r + 1}: " + ", ".join(
                    f"{k}={res[k]:.3g}" if isinstance(res.get(k), float) else f"{k}={res.get(k)}"
                    for k in ("fit_s", "predict_s", "peak_rss_gib", "r2", "centres", "iterations", "error")
                    if k in res))

            runs = run_worker_rounds(__file__, todo, spec_of, repeats=args.repeats, timeout=args.timeout,
                                     single_run_above_s=args.single_run_above_s, describe=describe)
            exact_pred = np.load(tmp / f"{n}_exact.npy") if (tmp / f"{n}_exact.npy").exists() else None
            exact_r2 = None
            for m, rs in runs.items():
                ok = [x for x in rs if "error" not in x]
                if not ok:
                    rows.append({"n": n, "method": m, "device": args.device, "error": rs[-1].get("error"),
                                 "detail": rs[-1]})
                    continue
                med = lambda k: float(np.median([x[k] for x in ok]))  # noqa: E731
                row = {"n": n, "method": m, "device": ok[0]["device"], "fit_s": med("fit_s"),
                       "predict_s": med("predict_s"), "operator_s": med("operator_s"),
                       "peak_rss_gib": max(x["peak_rss_gib"] for x in ok), "cuda_peak_gib": ok[0]["cuda_peak_gib"],
                       "iterations": ok[0].get("iterations"), "centres": ok[0].get("centres"),
                       "converged": ok[0].get("converged"), "r2": ok[0]["r2"], "repeats": len(ok),
                       "fit_s_all": [x["fit_s"] for x in ok], "passes": ok[0].get("passes"),
                       "d_eff_leverage": ok[0].get("d_eff_leverage")}
                if m == "exact":
                    exact_r2 = row["r2"]
                rows.append(row)
            for row in rows:
                if row["n"] == n and "error" not in row and exact_pred is not None:
                    pred = np.load(tmp / f"{n}_{row['method']}.npy").astype(np.float64)
                    ref = exact_pred.astype(np.float64)
                    scale = np.abs(ref - ref.mean(0)).max()
                    row["pred_rel_diff_vs_exact"] = float(np.abs(pred - ref).max() / scale)
                    # the relative distance of the held-out predictions, the test-set analogue of a
                    # solver's fit distance ||f - f_exact||_F / ||f_exact||_F (centred: the intercept is shared)
                    row["pred_rel_fro_vs_exact"] = float(np.linalg.norm(pred - ref) / np.linalg.norm(ref - ref.mean(0)))
                    row["r2_diff_vs_exact"] = row["r2"] - exact_r2
        scaling = {}
        for m in methods:
            rs = [x for x in rows if x["method"] == m and "error" not in x]
            scaling[m] = {"sizes": [x["n"] for x in rs],
                          "fit_s_exponent": exponent([x["n"] for x in rs], [x["fit_s"] for x in rs]),
                          "peak_rss_exponent": exponent([x["n"] for x in rs], [x["peak_rss_gib"] for x in rs]),
                          "largest_n": max([x["n"] for x in rs], default=None)}
        headline = []
        for n in sizes:
            e = next((x for x in rows if x["n"] == n and x["method"] == "exact" and "error" not in x), None)
            for x in rows:
                if e is not None and x["n"] == n and x["method"] != "exact" and "error" not in x:
                    headline.append({"name": f"{x['method']}_vs_exact_n{n}",
                                     "time_ratio": (x["fit_s"] + x["predict_s"]) / (e["fit_s"] + e["predict_s"]),
                                     "rss_ratio": x["peak_rss_gib"] / e["peak_rss_gib"],
                                     "r2_diff": x["r2_diff_vs_exact"], "precision": "float32 kernel",
                                     "output": "test predictions, 978 genes"})
        report["rows"] = rows
        report["scaling"] = scaling
        finish_report(report, headline, args.json)
    log(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
