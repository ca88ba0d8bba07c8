"""Benchmark: PIMKL's pathway kernels and EasyMKL against P (pathways) and n
(samples), and against MKLpy's EasyMKL on identical kernels, in one run.

Data: the embedded default generator (``biokernels.synth.pimkl``: a
scale-free network, gene sets, the 1000-sample two-omics cohort with planted
pathways), written to a temporary folder. For each (P, n): the first P gene
sets are induced on the network (``induce_pathways``), the kernels of n
training and n/4 test samples are built and trace-normalized
(``pathway_kernels``, ``normalize_trace``) -- timed as ``kernel_seconds`` --
then EasyMKL (lambda 0.2, the paper's Algorithm S2 value; KOMD with the
learned weights) is fitted by ``biokernels.solvers.easymkl`` and, when it
imports, by MKLpy 0.6 (``MKLpy.algorithms.EasyMKL``, its own KOMD with
lambda 0.1): fit time of each, the maximum weight difference and the test
AUC of both (scikit-learn ``roc_auc_score``). Times are wall-clock, one run
(``time.perf_counter``); peak memory of our fit by ``tracemalloc``.

Usage::

    .venv/bin/python benchmarks/bench_pimkl.py [--quick] [--out results/benchmarks/pimkl.json]
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
import tracemalloc
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score

from biokernels.io.cohorts import read_cohort
from biokernels.io.pathways import read_gmt
from biokernels.kernels.pathway import induce_pathways, normalize_trace, pathway_kernels
from biokernels.solvers.easymkl import EasyMKL
from biokernels.synth.pimkl import generate_default


def _mklpy_easymkl(lam: float):
    try:
        import torch
        from MKLpy.algorithms import EasyMKL as MKLpyEasyMKL
    except Exception:  # not installed, or fails to import on this stack
        return None
    return lambda Ks, y: MKLpyEasyMKL(lam=lam).fit([torch.tensor(K) for K in Ks], torch.tensor(y))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="results/benchmarks/pimkl.json")
    ap.add_argument("--quick", action="store_true", help="small grid (P <= 25, n <= 400)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    Ps = [10, 25] if args.quick else [10, 25, 50]
    ns = [100, 400] if args.quick else [100, 200, 400, 800]
    lam = 0.2
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        generate_default(tmp, seed=args.seed)
        edges = pd.read_csv(Path(tmp) / "network.tsv", sep="\t")
        sets = read_gmt(Path(tmp) / "gene_sets.gmt")
        X, y, _ = read_cohort(Path(tmp) / "cohorts/multiomics/expression.tsv",
                              Path(tmp) / "cohorts/multiomics/labels.tsv")
    X = (X - X.mean()) / X.std()
    rng = np.random.default_rng(args.seed)
    mklpy = _mklpy_easymkl(lam)
    for P in Ps:
        names = list(sets)[:P]
        t0 = time.perf_counter()
        pathways, _ = induce_pathways(edges, {k: sets[k] for k in names}, list(X.columns))
        induce_s = time.perf_counter() - t0
        for n in ns:
            order = rng.permutation(len(y))
            tr, te = order[:n], order[n:n + max(n // 4, 50)]
            t0 = time.perf_counter()
            K_tr, f = normalize_trace(pathway_kernels(X.iloc[tr], pathways))
            K_te, _ = normalize_trace(pathway_kernels(X.iloc[te], pathways, X_other=X.iloc[tr]), factors=f)
            kernel_s = time.perf_counter() - t0
            ytr, yte = y.to_numpy()[tr], y.to_numpy()[te]
            t0 = time.perf_counter()
            model = EasyMKL(lam=lam).fit(list(K_tr), ytr)
            ours_s = time.perf_counter() - t0
            tracemalloc.start()
            EasyMKL(lam=lam).fit(list(K_tr), ytr)
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            row = {"P_sets": P, "P_kernels": len(pathways), "n": n, "n_test": len(te), "induce_seconds": induce_s,
                   "kernel_seconds": kernel_s, "ours_fit_seconds": ours_s, "ours_peak_mib": peak / 2**20,
                   "ours_auc": float(roc_auc_score(yte, model.decision_function(list(K_te))))}
            if mklpy is not None:
                t0 = time.perf_counter()
                ref = mklpy(list(K_tr), ytr)
                row["mklpy_fit_seconds"] = time.perf_counter() - t0
                row["mklpy_over_ours_time"] = row["mklpy_fit_seconds"] / ours_s
                w = np.asarray(ref.solution.weights, dtype=float)
                row["max_abs_weight_difference"] = float(np.abs(w - model.weights_).max())
                import torch
                row["mklpy_auc"] = float(roc_auc_score(yte, ref.predict_proba([torch.tensor(K) for K in K_te])
                                                       if hasattr(ref, "predict_proba") else
                                                       ref.decision_function([torch.tensor(K) for K in K_te])))
            rows.append(row)
            print(json.dumps(row), flush=True)
    report = {"benchmark": "pimkl", "created": datetime.now(timezone.utc).isoformat(), "python": sys.version.split()[0],
              "machine": platform.machine(), "lam": lam, "mklpy": mklpy is not None, "rows": rows}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
