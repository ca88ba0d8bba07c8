"""Benchmark: PIMKL's pathway kernels and EasyMKL against P (pathways) and n
(samples), and against MKLpy's EasyMKL on identical kernels, in one run.

Data: the embedded default generator (``biokernels.synth.pimkl``: a
scale-free network, gene sets, the 1000-sample two-omics cohort with planted
pathways), written to a temporary folder. For each (P, n): the first P gene
sets are induced on the network (``induce_pathways``), the kernels of n
training and n/4 test samples are built and trace-normalized
(``pathway_kernels``, ``normalize_trace``; timed as ``kernels``), then
EasyMKL (lambda 0.2, the paper's Algorithm S2 value, ``kernel_aggregation``
"sum", no PSD check: as ``biokernels.studies.pimkl.protocol`` runs it; KOMD with the learned
weights and the same lambda) is fitted by ``biokernels.solvers.easymkl`` and,
when it imports, by MKLpy 0.6 (``MKLpy.algorithms.EasyMKL(lam=0.2,
learner=KOMD(lam=mu))`` with MKLpy's ``mu`` that equals our KOMD lambda 0.2:
MKLpy puts ``mu n+ n- / n`` on the identity, see ``mklpy_komd_lam``; so both
fit the same model; kernels converted to float64 torch tensors once, outside
the timings). The two fits are
interleaved in one process, warmed up, median of ``--repeats``
(``benchmarks/_harness.py``), BLAS and torch threads pinned to
``--threads``. Same output: the maximum weight difference (MKLpy returns
float32 weights: tolerance 1e-5), the largest difference of the test decision
values (relative to their largest magnitude; cvxopt stops at ~1e-6
relative on the QP's objective, so ~1e-3 on its solution) and the test AUC of both (scikit-learn ``roc_auc_score``). Peak memory of each fit: ``tracemalloc`` in one extra
untimed call (torch's allocator, used by MKLpy, is not traced: a lower bound).

Usage::

    .venv/bin/python benchmarks/bench_pimkl.py [--quick] [--out results/benchmarks/pimkl.json] [--threads 1]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import (  # noqa: E402
    add_harness_args,
    begin_report,
    check_harness_args,
    finish_report,
    headline_ratio,
    log,
    pin_threads,
    run_interleaved,
)

from biokernels.io.cohorts import read_cohort  # noqa: E402
from biokernels.io.pathways import read_gmt  # noqa: E402
from biokernels.kernels.pathway import induce_pathways, normalize_trace, pathway_kernels  # noqa: E402
from biokernels.solvers.easymkl import EasyMKL  # noqa: E402
from biokernels.synth.pimkl import generate_default  # noqa: E402

LAM = 0.2
WEIGHT_TOL = 1e-5
DECISION_TOL = 1e-3  # cvxopt stops at ~1e-6 relative on the objective: ~sqrt of that on the solution


def mklpy_komd_lam(lam: float, y) -> float:
    """MKLpy's KOMD ``mu`` equivalent to our KOMD ``lam``: MKLpy solves with
    ``(1 - mu) YKY + mu c I``, ``c = n+ n- / n``, ours with ``(1 - lam) YKY +
    lam I``; equal up to scale when ``lam / (1 - lam) = mu c / (1 - mu)``
    (tests/unit/test_easymkl.py checks the mapping)."""
    y = np.asarray(y)
    c = (y > 0).sum() * (y <= 0).sum() / len(y)
    return float(lam / (lam + c * (1 - lam)))


def _mklpy():
    try:
        import torch
        from MKLpy.algorithms import KOMD
        from MKLpy.algorithms import EasyMKL as MKLpyEasyMKL
    except Exception:  # noqa: BLE001 - not installed, or fails to import on this stack
        return None
    return torch, MKLpyEasyMKL, KOMD


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_harness_args(ap, out="results/benchmarks/pimkl.json")
    ap.add_argument("--quick", action="store_true", help="small grid (P <= 25, n <= 400)")
    ap.add_argument("--sets", default=None, help="comma-separated P (default 10,25,50)")
    ap.add_argument("--sizes", default=None, help="comma-separated n (default 100,200,400,800)")
    ap.add_argument("--no-mklpy", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    check_harness_args(ap, args)
    Ps = [int(s) for s in (args.sets or ("10,25" if args.quick else "10,25,50")).split(",")]
    ns = [int(s) for s in (args.sizes or ("100,400" if args.quick else "100,200,400,800")).split(",")]
    mk = None if args.no_mklpy else _mklpy()

    with pin_threads(args.threads):
        report = begin_report("pimkl", args, lam=LAM, mklpy=mk is not None)
        with tempfile.TemporaryDirectory() as tmp:
            generate_default(tmp, seed=args.seed)
            edges = pd.read_csv(Path(tmp) / "network.tsv", sep="\t")
            sets = read_gmt(Path(tmp) / "gene_sets.gmt")
            X, y, _ = read_cohort(Path(tmp) / "cohorts/multiomics/expression.tsv",
                                  Path(tmp) / "cohorts/multiomics/labels.tsv")
        X = (X - X.mean()) / X.std()
        rng = np.random.default_rng(args.seed)
        rows, headline = [], []
        for P in Ps:
            names = list(sets)[:P]
            t0 = time.perf_counter()
            pathways, _ = induce_pathways(edges, {k: sets[k] for k in names}, list(X.columns))
            induce_s = time.perf_counter() - t0
            for n in ns:
                order = rng.permutation(len(y))
                tr, te = order[:n], order[n:n + max(n // 4, 50)]

                def kernels():
                    K_tr, f = normalize_trace(pathway_kernels(X.iloc[tr], pathways))
                    K_te, _ = normalize_trace(pathway_kernels(X.iloc[te], pathways, X_other=X.iloc[tr]),
                                              factors=f)
                    return K_tr, K_te

                kc = run_interleaved({"kernels": kernels}, warmup=args.warmup, repeats=args.repeats)
                K_tr, K_te = kc.outputs.pop("kernels")
                ytr, yte = y.to_numpy()[tr], y.to_numpy()[te]
                Ks = list(K_tr)
                contenders = {"ours": lambda: EasyMKL(lam=LAM, kernel_aggregation="sum", psd_tol=None).fit(Ks, ytr)}
                if mk is not None:
                    torch, MEasy, MKOMD = mk
                    KL, Yt = [torch.tensor(K) for K in K_tr], torch.tensor(ytr)
                    KLte = [torch.tensor(K) for K in K_te]
                    mu = mklpy_komd_lam(LAM, ytr)

                    def mklpy_fit():
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            return MEasy(lam=LAM, learner=MKOMD(lam=mu)).fit(KL, Yt)
                    contenders["mklpy"] = mklpy_fit
                cmp = run_interleaved(contenders, warmup=args.warmup, repeats=args.repeats, memory=True)
                model = cmp.outputs["ours"]
                row = {"P_sets": P, "P_kernels": len(pathways), "n": n, "n_test": len(te),
                       "induce_seconds": induce_s, "kernels": kc.to_json(), "fits": cmp.to_json(),
                       "ours_median_s": cmp.median("ours"),
                       "ours_auc": float(roc_auc_score(yte, model.decision_function(list(K_te))))}
                if mk is not None:
                    ref = cmp.outputs["mklpy"]
                    w = np.asarray(ref.solution.weights, dtype=float)
                    diff = float(np.abs(w - model.weights_).max())
                    scores = ref.decision_function(KLte)
                    scores = np.asarray(scores.numpy() if hasattr(scores, "numpy") else scores, float).ravel()
                    f_ours = np.asarray(model.decision_function(list(K_te)), float).ravel()
                    fdiff = float(np.abs(scores - f_ours).max() / np.abs(scores).max())
                    row |= {"mklpy_median_s": cmp.median("mklpy"), "mklpy_over_ours": cmp.ratio("mklpy", "ours"),
                            "max_abs_weight_difference": diff, "mklpy_komd_mu": mu,
                            "max_rel_decision_difference": fdiff, "mklpy_auc": float(roc_auc_score(yte, scores))}
                    if n == max(ns):
                        headline.append(headline_ratio(
                            f"MKLpy_over_ours_EasyMKL_P{P}_n{n}", cmp, "mklpy", "ours",
                            precision="float64 kernels (MKLpy returns float32 weights)",
                            output="EasyMKL weights and the KOMD on the combined kernel (lambda 0.2)",
                            max_abs_diff=diff, tolerance=WEIGHT_TOL, P_sets=P, P_kernels=len(pathways), n=n,
                            max_rel_decision_difference=fdiff, decision_tolerance=DECISION_TOL,
                            same_decision=fdiff <= DECISION_TOL,
                            auc_ours=row["ours_auc"], auc_mklpy=row["mklpy_auc"]))
                    log(f"[P={P} n={n}] kernels {kc.median('kernels'):.3f} s; EasyMKL ours "
                        f"{cmp.median('ours'):.3f} s, MKLpy {cmp.median('mklpy'):.3f} s "
                        f"({row['mklpy_over_ours']:.2f}x), max|Δw| {diff:.1e}, max rel |Δf| {fdiff:.1e}, AUC {row['ours_auc']:.3f} / "
                        f"{row['mklpy_auc']:.3f}")
                else:
                    log(f"[P={P} n={n}] kernels {kc.median('kernels'):.3f} s; EasyMKL ours {cmp.median('ours'):.3f} s")
                cmp.outputs.clear()
                rows.append(row)
        report["rows"] = rows
    path = finish_report(report, headline, args.out, notes=[
        "headline: MKLpy / ours at the largest n of each P; every (P, n) is under rows",
        "fits exclude the kernels (timed separately); both fits get identical kernels",
    ])
    log(f"wrote {path} ({report.get('benchmark_wall_s', 0):.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
