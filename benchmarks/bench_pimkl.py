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

``s1_cohort`` (issue #20): Algorithm S1 on one cohort of the default data
(``config/config.yaml``'s ``pimkl`` section: the ``default_synthetic``
generator with its arguments and the top-level ``seed``, the ``cv``
settings, ``classifier``, ``kernel_aggregation``, ``baseline_C_grid``,
``min_genes``; baselines on, as the workflow's primary collection), by
``run_s1(..., reference=True)`` (the original path: one EasyMKL/KOMD fit per
inner fold and lambda with every check redone, the pure-Python KOMD loop,
GridSearchCV SVM baselines on the features) and by the default path (the
lambda-independent work once per inner fold, the compiled KOMD loop and
kernel sums, one precomputed Gram matrix per outer fold for the SVMs),
interleaved in one process, warmed up, median of ``--repeats``. The headline
is reference / fast; same output: the three S1 tables (AUCs, weights,
pathways) compared exactly (tolerance 0: the fast path makes the same
floating-point operations in the same order for PIMKL and pathway_mean; the
SVM rows come from libsvm on Gram matrices equal to libsvm's own kernel
values up to rounding, and are identical on this data).

Usage::

    .venv/bin/python benchmarks/bench_pimkl.py [--quick] [--out results/benchmarks/pimkl.json] [--threads 1]
        [--parts grid,s1_cohort] [--s1-cohort cohort1]
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
    REPO,
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
from biokernels.studies.pimkl.protocol import load_cohort, load_network, run_s1  # noqa: E402
from biokernels.synth.pimkl import generate_default  # noqa: E402

LAM = 0.2
WEIGHT_TOL = 1e-5
DECISION_TOL = 1e-3  # cvxopt stops at ~1e-6 relative on the objective: ~sqrt of that on the solution


def mklpy_komd_lam(lam: float, y) -> float:
    """MKLpy's KOMD ``mu`` equivalent to our KOMD ``lam``: MKLpy solves with
    ``(1 - mu) YKY + mu c I``, ``c = n+ n- / n``, ours with ``(1 - lam) YKY +
    lam I``; equal up to scale when ``lam / (1 - lam) = mu c / (1 - mu)``
    (tests/unit/solvers/test_easymkl.py checks the mapping)."""
    y = np.asarray(y)
    c = (y > 0).sum() * (y <= 0).sum() / len(y)
    return float(lam / (lam + c * (1 - lam)))


def s1_settings(config_path: Path) -> dict:
    """The default data and Algorithm S1 settings of ``config_path`` (the
    workflow's ``pimkl`` section with its ``default_synthetic`` source)."""
    import yaml

    cfg = yaml.safe_load(Path(config_path).read_text())
    pk = cfg["pimkl"]
    src = pk["sources"]["default_synthetic"]
    cv = pk["cv"]
    return {"seed": int(cfg["seed"]), "generator": dict(src.get("generator", {})),
            "s1": {"repeats": cv["repeats"], "folds": cv["folds"], "inner_folds": cv["inner_folds"],
                   "easymkl_lams": list(cv["easymkl_lams"]), "criterion": cv["criterion"],
                   "classifier": pk["classifier"], "svm_C": pk["svm_C"], "kernel_aggregation": pk["kernel_aggregation"],
                   "baselines": True, "baseline_C_grid": list(pk["baseline_C_grid"]), "seed": int(cfg["seed"]),
                   "min_genes": pk["min_genes"]}}


def s1_tables_diff(ref, fast) -> dict:
    """Exact comparison of two :class:`S1Result`: the largest |difference| of
    the AUCs and weights, NaN-aware equality of ``easymkl_lam``/``C``, frame equality."""
    out = {}
    for name in ("aucs", "weights", "pathways"):
        a, b = getattr(ref, name), getattr(fast, name)
        try:
            pd.testing.assert_frame_equal(a, b, check_exact=True)
            out[f"{name}_identical"] = True
        except AssertionError:
            out[f"{name}_identical"] = False
    a, b = ref.aucs, fast.aucs
    same_rows = len(a) == len(b) and (a["method"].to_numpy() == b["method"].to_numpy()).all()
    out["auc_max_abs_diff"] = (float(np.abs(a["auc"].to_numpy() - b["auc"].to_numpy()).max())
                               if same_rows else float("inf"))
    out["auc_max_abs_diff_by_method"] = ((a["auc"] - b["auc"]).abs().groupby(a["method"]).max().to_dict()
                                         if same_rows else None)
    out["lam_C_equal"] = bool(same_rows and a["easymkl_lam"].equals(b["easymkl_lam"]) and a["C"].equals(b["C"]))
    wa, wb = ref.weights["weight"].to_numpy(), fast.weights["weight"].to_numpy()
    out["weight_max_abs_diff"] = float(np.abs(wa - wb).max()) if wa.shape == wb.shape else float("inf")
    out["max_abs_diff"] = max(out["auc_max_abs_diff"], out["weight_max_abs_diff"],
                              0.0 if out["lam_C_equal"] else float("inf"))
    return out


def s1_cohort(args) -> tuple[dict, dict]:
    """The ``s1_cohort`` comparison: (report row, headline entry)."""
    st = s1_settings(args.config)
    kw = dict(st["s1"])
    if args.quick:
        kw["repeats"] = 1
    with tempfile.TemporaryDirectory() as tmp:
        generate_default(tmp, seed=st["seed"], **st["generator"])
        edges, _ = load_network({"format": "edgelist", "path": str(Path(tmp) / "network.tsv")})
        sets = read_gmt(Path(tmp) / "gene_sets.gmt")
        folder = Path(tmp) / "cohorts" / args.s1_cohort
        X, y, _ = load_cohort({"format": "tsv", "expression_path": str(folder / "expression.tsv"),
                               "labels_path": str(folder / "labels.tsv")}, name=args.s1_cohort)
    log(f"[s1_cohort] {args.s1_cohort}: {X.shape[0]} samples ({int(y.sum())} positive), {X.shape[1]} genes; "
        f"{kw['repeats']} x {kw['folds']} folds, {kw['inner_folds']} inner, {len(kw['easymkl_lams'])} lambdas")
    t0 = time.perf_counter()                      # numba's compile or cache load: once per process
    run_s1(X.iloc[:60], y.iloc[:60], edges, sets, **{**kw, "repeats": 1, "folds": 2, "inner_folds": 2,
                                                     "cohort": "compile"})
    first_call_s = time.perf_counter() - t0
    contenders = {"reference": lambda: run_s1(X, y, edges, sets, cohort=args.s1_cohort, reference=True, **kw),
                  "fast": lambda: run_s1(X, y, edges, sets, cohort=args.s1_cohort, **kw)}
    cmp = run_interleaved(contenders, warmup=args.warmup, repeats=args.repeats, log=log)
    check = s1_tables_diff(cmp.outputs["reference"], cmp.outputs["fast"])
    cmp.outputs.clear()
    ratio = cmp.ratio("reference", "fast")
    log(f"[s1_cohort] reference {cmp.median('reference'):.2f} s, fast {cmp.median('fast'):.2f} s "
        f"({ratio:.2f}x); tables identical: {check['aucs_identical']}, {check['weights_identical']}, "
        f"{check['pathways_identical']}")
    max_diff = check.pop("max_abs_diff")
    context = dict(cohort=args.s1_cohort, n_samples=int(X.shape[0]), n_genes=int(X.shape[1]),
                   s1_settings=kw, data_seed=st["seed"], generator=st["generator"],
                   fast_first_call_s=first_call_s,
                   fast_first_call_is="untimed small run_s1 before the comparison: numba compile (first run "
                                      "on a machine) or cache load, paid once per process (per workflow job)",
                   **check)
    row = {"part": "s1_cohort", "timings": cmp.to_json(), **context}
    head = headline_ratio(f"s1_cohort_reference_over_fast_{args.s1_cohort}", cmp, "reference", "fast",
                          precision="float64",
                          output="Algorithm S1 tables of one cohort (AUCs of pimkl, pathway_mean, svm_linear, "
                                 "svm_rbf; EasyMKL weights; pathways)",
                          max_abs_diff=max_diff, tolerance=0.0,
                          max_abs_diff_is="max over |AUC|, |weight| differences (inf if lam or C differ)",
                          **context)
    return row, head


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
    ap.add_argument("--quick", action="store_true", help="small grid (P <= 25, n <= 400); s1_cohort with 1 CV repeat")
    ap.add_argument("--sets", default=None, help="comma-separated P (default 10,25,50)")
    ap.add_argument("--sizes", default=None, help="comma-separated n (default 100,200,400,800)")
    ap.add_argument("--no-mklpy", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--parts", default="grid,s1_cohort",
                    help="comma-separated: grid (EasyMKL over P and n, MKLpy), s1_cohort (Algorithm S1 on "
                         "one cohort, reference vs fast path); default %(default)s")
    ap.add_argument("--s1-cohort", default="cohort1", help="default-data cohort of s1_cohort (default %(default)s)")
    ap.add_argument("--config", type=Path, default=REPO / "config/config.yaml",
                    help="config whose pimkl section sets the data and S1 settings of s1_cohort")
    args = ap.parse_args(argv)
    check_harness_args(ap, args)
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    if not parts or set(parts) - {"grid", "s1_cohort"}:
        ap.error(f"--parts: expected grid and/or s1_cohort, got {args.parts!r}")
    Ps = [int(s) for s in (args.sets or ("10,25" if args.quick else "10,25,50")).split(",")]
    ns = [int(s) for s in (args.sizes or ("100,400" if args.quick else "100,200,400,800")).split(",")]
    mk = None if args.no_mklpy else _mklpy()

    with pin_threads(args.threads):
        report = begin_report("pimkl", args, lam=LAM, mklpy=mk is not None, parts=parts)
        rows, headline = [], []
        if "s1_cohort" in parts:
            row, head = s1_cohort(args)
            rows.append(row)
            headline.append(head)
        if "grid" in parts:
            with tempfile.TemporaryDirectory() as tmp:
                generate_default(tmp, seed=args.seed)
                edges = pd.read_csv(Path(tmp) / "network.tsv", sep="\t")
                sets = read_gmt(Path(tmp) / "gene_sets.gmt")
                X, y, _ = read_cohort(Path(tmp) / "cohorts/multiomics/expression.tsv",
                                      Path(tmp) / "cohorts/multiomics/labels.tsv")
            X = (X - X.mean()) / X.std()
            rng = np.random.default_rng(args.seed)
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
                            f"({row['mklpy_over_ours']:.2f}x), max|Δw| {diff:.1e}, max rel |Δf| {fdiff:.1e}, "
                            f"AUC {row['ours_auc']:.3f} / {row['mklpy_auc']:.3f}")
                    else:
                        log(f"[P={P} n={n}] kernels {kc.median('kernels'):.3f} s; EasyMKL ours "
                            f"{cmp.median('ours'):.3f} s")
                    cmp.outputs.clear()
                    rows.append(row)
        report["rows"] = rows
    path = finish_report(report, headline, args.out, notes=[
        "headline: s1_cohort reference / fast (Algorithm S1 on one cohort, issue #20), and MKLpy / ours "
        "at the largest n of each P; every (P, n) is under rows",
        "fits exclude the kernels (timed separately); both fits get identical kernels",
    ])
    log(f"wrote {path} ({report.get('benchmark_wall_s', 0):.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
