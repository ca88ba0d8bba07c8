"""Benchmark: the images study's source model on Fashion-MNIST, by solver.

Kernel ridge ``(K + lam I) alpha = Y`` with the Laplace kernel (L = 10,
float32 evaluation) on n stratified training images of Fashion-MNIST, ten
one-hot outputs, no intercept; the test images predicted. Contenders:

``exact``     :func:`biokernels.studies.images.models.solve_exact` on the
              formed n x n kernel (Cholesky); only for n <= ``--max-exact-n``.
``eigenpro``  :func:`biokernels.solvers.eigenpro.eigenpro_ridge` (subsample
              4000, top 160, at most ``--epochs``), the paper's solver.
``nystrom``   :func:`biokernels.solvers.matrix_free.nystrom_ridge` on
              :class:`biokernels.kernels.feature_operator.FeatureKernelOperator`,
              ``--centres`` uniform centres.
``cg``        :func:`biokernels.solvers.matrix_free.cg_ridge` on the same
              operator (Nystrom-preconditioned); only for n <= ``--max-cg-n``.

Each (n, method, repeat) runs in a fresh subprocess (its own peak RSS); the
methods of a repeat run in rotated order; the median over ``--repeats`` is
quoted (a size whose first run exceeds ``--single-run-above-s`` runs once).
Accuracy: test accuracy, and where the exact solve ran, the largest
difference of the test scores from the exact ones. Headline: time and RSS
ratios against the exact solve at each n where it ran, and against EigenPro
elsewhere.

Usage::

    python benchmarks/bench_image_source.py --sizes 10000,60000 --json results/benchmarks/image_source.json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import begin_report, finish_report, log, peak_rss_mib, pin_threads, run_worker_rounds  # noqa: E402

METHODS = ("exact", "eigenpro", "nystrom", "cg")


def _data(spec):
    from biokernels.seeds import make_rng
    from biokernels.studies.images.data import load_fashion_mnist_set
    from biokernels.studies.images.models import one_hot
    from biokernels.studies.images.tasks import stratified_take

    s = load_fashion_mnist_set(spec["path"])
    tr, te = s.select(None, "train"), s.select(None, "test")
    keep = stratified_take(tr.labels, spec["n"], make_rng(spec["seed"], 1))
    test = stratified_take(te.labels, spec["n_test"], make_rng(spec["seed"], 2))
    flat = lambda a: a.reshape(len(a), -1).astype(np.float32)  # noqa: E731
    return flat(tr.images[keep]), one_hot(tr.labels[keep], range(10)), flat(te.images[test]), te.labels[test]


def worker(spec: dict) -> dict:
    """Fit and predict with one method in this fresh process."""
    import torch

    from biokernels.kernels.classic import laplace_kernel
    from biokernels.kernels.feature_operator import FeatureKernelOperator
    from biokernels.solvers.eigenpro import eigenpro_predict, eigenpro_ridge
    from biokernels.solvers.matrix_free import cg_ridge, nystrom_ridge
    from biokernels.studies.images.models import solve_exact

    torch.set_num_threads(spec["threads"])
    X, Y, Xt, yt = _data(spec)
    k = lambda A, B: laplace_kernel(A.float(), B.float(), bandwidth=10.0).float()  # noqa: E731
    Xg, Xtg = torch.as_tensor(X), torch.as_tensor(Xt)
    lam, m = spec["lam"], spec["method"]
    t0 = time.perf_counter()
    info = {}
    if m == "exact":
        alpha = solve_exact(k(Xg, Xg).double(), Y, lam).float()
        coef_rows = None
    elif m == "eigenpro":
        fit = eigenpro_ridge(k, Xg, torch.as_tensor(Y, dtype=torch.float32), lam=lam, subsample=4000, top_q=160,
                             epochs=spec["epochs"], stop_accuracy=None, seed=spec["seed"])
        alpha, coef_rows = fit["alpha"], None
        info = {"epochs": fit["epochs"], "batch": fit["batch"]}
    else:
        op = FeatureKernelOperator(Xg, k, diag=lambda R: torch.ones(R.shape[0]), dtype=torch.float32)
        if m == "nystrom":
            fit = nystrom_ridge(op, Y, lam, centres=spec["centres"], fit_intercept=False, seed=spec["seed"])
            coef_rows = torch.as_tensor(fit["centres"])
            info = {"centres": int(coef_rows.numel()), "fit_error_est": fit["info"].get("fit_error_est")}
        else:
            fit = cg_ridge(op, Y, lam, tol=spec["cg_tol"], max_iter=spec["cg_max_iter"], fit_intercept=False,
                           seed=spec["seed"])
            coef_rows = None
            info = {"iterations": fit["info"].get("iterations"), "converged": fit["info"].get("converged")}
        alpha = torch.as_tensor(np.asarray(fit["coef"]), dtype=torch.float32)
    fit_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    centres = Xg if coef_rows is None else Xg[coef_rows]
    scores = eigenpro_predict(k, centres, alpha, Xtg).numpy()
    predict_s = time.perf_counter() - t1
    np.save(spec["pred_path"], scores)
    return {"n": spec["n"], "method": m, "fit_s": fit_s, "predict_s": predict_s,
            "accuracy": float(np.mean(scores.argmax(1) == yt)), "peak_rss_gib": peak_rss_mib() / 1024, **info}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--path", default="/usr/share/datasets/fashion-mnist", help="folder of the four IDX files")
    ap.add_argument("--sizes", default="10000,60000")
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--json", default="results/benchmarks/image_source.json")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--single-run-above-s", type=float, default=300.0)
    ap.add_argument("--n-test", type=int, default=2000)
    ap.add_argument("--lam", type=float, default=1.0, help="absolute ridge, the same for every method")
    ap.add_argument("--epochs", type=int, default=6)
    ap.add_argument("--centres", type=int, default=4000)
    ap.add_argument("--cg-tol", type=float, default=1e-4)
    ap.add_argument("--cg-max-iter", type=int, default=200)
    ap.add_argument("--max-exact-n", type=int, default=20000)
    ap.add_argument("--max-cg-n", type=int, default=10000)
    ap.add_argument("--timeout", type=float, default=3600.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print("RESULT " + json.dumps(worker(json.loads(args.worker))), flush=True)
        return 0
    sizes = [int(s) for s in args.sizes.split(",") if s]
    methods = [m for m in args.methods.split(",") if m]
    if set(methods) - set(METHODS):
        ap.error(f"--methods: unknown {sorted(set(methods) - set(METHODS))}; known {METHODS}")
    rows, tmp = [], Path(tempfile.mkdtemp(prefix="image_source_"))
    with pin_threads(args.threads):
        report = begin_report("image_source", args, packages=("torch", "numpy"))
        for n in sizes:
            todo = [m for m in methods if not (m == "exact" and n > args.max_exact_n)
                    and not (m == "cg" and n > args.max_cg_n)]
            def spec_of(m, n=n):
                keys = ("path", "threads", "n_test", "lam", "epochs", "centres", "cg_tol", "cg_max_iter", "seed")
                return {**{k: getattr(args, k) for k in keys}, "n": n, "method": m,
                        "pred_path": str(tmp / f"{n}_{m}.npy")}

            runs = run_worker_rounds(__file__, todo, spec_of, repeats=args.repeats, timeout=args.timeout,
                                     single_run_above_s=args.single_run_above_s,
                                     describe=lambda m, r, res, n=n: log(f"n={n} {m} repeat {r + 1}: {res}"))
            ref = np.load(tmp / f"{n}_exact.npy") if (tmp / f"{n}_exact.npy").exists() else None
            for m, rs in runs.items():
                ok = [x for x in rs if "error" not in x]
                if not ok:
                    rows.append({"n": n, "method": m, "error": rs[-1].get("error")})
                    continue
                row = {**ok[0], "fit_s": float(np.median([x["fit_s"] for x in ok])),
                       "predict_s": float(np.median([x["predict_s"] for x in ok])),
                       "peak_rss_gib": max(x["peak_rss_gib"] for x in ok), "repeats": len(ok),
                       "fit_s_all": [x["fit_s"] for x in ok]}
                if ref is not None:
                    row["score_max_diff_vs_exact"] = float(np.abs(np.load(tmp / f"{n}_{m}.npy") - ref).max())
                rows.append(row)
        headline = []
        for n in sizes:
            here = {x["method"]: x for x in rows if x["n"] == n and "error" not in x}
            base = "exact" if "exact" in here else "eigenpro"
            for m, x in here.items():
                if m != base and base in here:
                    b = here[base]
                    headline.append({"name": f"{m}_vs_{base}_n{n}",
                                     "time_ratio": (x["fit_s"] + x["predict_s"]) / (b["fit_s"] + b["predict_s"]),
                                     "rss_ratio": x["peak_rss_gib"] / b["peak_rss_gib"],
                                     "accuracy_diff": x["accuracy"] - b["accuracy"],
                                     "precision": "float32 kernel, float64 or float32 solve",
                                     "output": f"scores of {args.n_test} test images, 10 classes"})
        report["rows"] = rows
        finish_report(report, headline, args.json)
    log(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
