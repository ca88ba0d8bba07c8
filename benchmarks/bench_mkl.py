"""Benchmark: one-step MKL weight learners vs MKLpy and a single kernel ridge solve.

The transfer-learning paper (Radhakrishnan et al. 2023, Methods "Comparison
with multiple kernel learning approaches", Remark) restricts its MKL
comparison to a binary task because MKLpy's methods "scale poorly"; this
measures how each method here scales with the number of training samples n
and of kernels P, on identical kernels, every contender of an (n, P)
interleaved in one process, warmed up, median of ``--repeats``
(``benchmarks/_harness.py``), BLAS and torch threads pinned to ``--threads``:

* every method of ``biokernels.solvers.mkl.MKL_METHODS`` (``CKA``,
  ``EasyMKL`` (λ = 0.1), ``FHeuristic``, ``PWMK`` (3-fold SVC, C = 1000)),
  each as the workflow runs it (``biokernels.studies.mkl_transfer.protocol``:
  ``psd_tol=None``) inside ``MKLClassifier``: the weights, then the method's
  ``default_learner`` on the combined kernel (KOMD for EasyMKL, SVC(C = 1000)
  for the others), which is what MKLpy's ``fit`` does;
* MKLpy 0.6's ``EasyMKL`` (learner ``KOMD(lam=0.1)``; ours gets the KOMD
  lambda equal to it, see ``mklpy_equivalent_komd_lam``), ``CKA``,
  ``FHeuristic``, ``PWMK`` (learner ``SVC(C=1000)``) when importable, on the
  same kernels (float64 torch tensors, converted once outside the timings;
  a method that raises is probed once and recorded as failed; a method
  without an MKLpy counterpart is timed alone). Headline:
  MKLpy / ours per method, with the max |weight difference| (tolerance 1e-5:
  MKLpy returns EasyMKL's and FHeuristic's weights in float32) and the
  largest relative difference of the training decision values (1e-3: the
  solvers' stopping tolerances) as the same-output checks. CKA differs by
  design where MKLpy's unconstrained weights go negative (flagged);
* context, not a headline ratio (another output): the single-kernel
  baseline of the translation approach, one kernel ridge solve
  ``(K + 1e-4 I) α = y`` on the summed kernel (Cholesky), and a full
  translation fit (Definition 2, ``biokernels.studies.mkl_transfer.protocol.translate``) on
  the summed kernel: the source regression on the n samples, the correction
  on a target of ``n_t = min(n, 1000) / 2`` samples (the first rows,
  relabelled) and predictions for as many test rows, with fixed ridges 1e-4.

Kernels: the paper's three — Laplace ``exp(-||x-z||₂/10)``, Gaussian
``exp(-0.001||x-z||²)``, linear ``x'z`` — on synthetic two-class data in 64
dimensions at the 8×8-digits intensity scale (0-16); for P > 3, more Laplace
and Gaussian bandwidths. Kernels are built once per (n, P), outside the
timings. Memory (``--memory``): the peak of Python/numpy allocations during
one extra untimed call under ``tracemalloc``, which does not see torch's
allocator (used by MKLpy), so MKLpy's memory is a lower bound. The input
checks that a default ``psd_tol`` adds to our fits (symmetry, a Cholesky PSD
test per kernel) are timed alone as ``validation`` (context).

Usage::

    .venv/bin/python benchmarks/bench_mkl.py [--quick] [--out results/benchmarks/mkl.json] [--threads 1]
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np
import scipy.linalg

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

from biokernels.studies.mkl_transfer.protocol import translate  # noqa: E402
from biokernels.solvers.kernel_lists import check_kernel_list  # noqa: E402
from biokernels.solvers.mkl import MKL_METHODS, MKLClassifier, make_mkl  # noqa: E402

METHODS = tuple(MKL_METHODS)
#: Each method's settings here (MKLpy's defaults), as ``mkl_transfer.learners`` entries.
SETTINGS = {"easymkl_lam": 0.1, "pwmk_delta": 0.0, "pwmk_cv": 3}
WEIGHT_TOL = 1e-5
DECISION_TOL = 1e-3  # libsvm / cvxopt stop at ~1e-3 / ~1e-6 (objective): ~1e-3 on the decision values


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


def mklpy_equivalent_komd_lam(mu: float, y) -> float:
    """Our KOMD lambda equal to MKLpy's ``KOMD(lam=mu)``: MKLpy puts ``mu n+ n- / n``
    on the identity, ``(1 - mu) YKY + mu c I``, ours ``(1 - lam) YKY + lam I``
    (the mapping tests/unit/solvers/test_easymkl.py checks)."""
    y = np.asarray(y)
    c = (y > 0).sum() * (y <= 0).sum() / len(y)
    return float(mu * c / (1 - mu + mu * c))


def ours(name, y):
    """The workflow's classifier (``biokernels.studies.mkl_transfer.protocol``): the MKL method's
    weights (no PSD check, ``psd_tol=None``), then its ``default_learner`` on the combined
    kernel, as MKLpy's ``fit`` does: KOMD for EasyMKL (lambda equal to
    MKLpy's default KOMD(0.1)), SVC(C=1000) for the others."""
    mkl = make_mkl(name, SETTINGS, psd_tol=None)
    if mkl.default_learner == "komd":
        return MKLClassifier(mkl=mkl, learner="komd", komd_lam=mklpy_equivalent_komd_lam(0.1, y))
    return MKLClassifier(mkl=mkl, learner=mkl.default_learner, C=1000.0)


def mklpy_model(name):
    """MKLpy 0.6's counterpart of method ``name``, or None (a method MKLpy lacks: ours alone)."""
    import MKLpy.algorithms as A
    from sklearn.svm import SVC
    models = {"EasyMKL": lambda: A.EasyMKL(lam=0.1, learner=A.KOMD(lam=0.1)),
              "CKA": lambda: A.CKA(learner=SVC(C=1000)),
              "FHeuristic": lambda: A.FHeuristic(learner=SVC(C=1000)),
              "PWMK": lambda: A.PWMK(delta=0.0, cv=3, learner=SVC(C=1000))}
    return models[name]() if name in models else None


def bench_case(n: int, P: int, args, have_mklpy: bool) -> tuple[dict, list[dict]]:
    Ks, y = make_kernels(n, P, args.seed)
    yf = y.astype(float)
    n_t = min(n, 1000) // 2
    y_t = -yf[:n_t]                      # a target task: the first rows, labels flipped

    def ridge():
        K = np.sum(Ks, axis=0)
        K.flat[:: n + 1] += 1e-4
        return scipy.linalg.cho_solve(scipy.linalg.cho_factor(K, lower=True, check_finite=False),
                                      yf, check_finite=False)

    def translation():
        K = np.sum(Ks, axis=0)
        return translate(K, yf, K[:n_t], K[:n_t, :n_t], y_t, K[n_t:2 * n_t], K[n_t:2 * n_t, :n_t],
                         1e-4, 1e-4)

    contenders = {"ridge_sum_kernel": ridge, "translation_sum_kernel": translation,
                  "validation": lambda: check_kernel_list(Ks)}
    for name in METHODS:
        contenders[name] = lambda name=name: ours(name, y).fit(Ks, y)
    mklpy_errors = {}
    if have_mklpy:
        import torch

        KL = [torch.tensor(K) for K in Ks]
        Y = torch.tensor(y)

        def mk(name):
            def call():
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    return mklpy_model(name).fit(KL, Y)
            return call
        for name in METHODS:
            if mklpy_model(name) is None:
                continue
            try:        # MKLpy can fail (e.g. CKA inverts a singular kernel Gram): probe once, untimed
                mk(name)()
            except Exception as exc:  # noqa: BLE001
                mklpy_errors[name] = repr(exc)
                log(f"[n={n} P={P}] MKLpy_{name} FAILED {exc!r}")
                continue
            contenders[f"MKLpy_{name}"] = mk(name)
    cmp = run_interleaved(contenders, warmup=args.warmup, repeats=args.repeats, memory=args.memory)
    entry = {"n": n, "P": P, "n_target_translation": n_t, "timing": cmp.to_json(), "methods": {}}
    head = []
    for name in METHODS:
        model = cmp.outputs[name]
        w = np.asarray(model.weights_, dtype=float)
        r = {"ours_median_s": cmp.median(name), "weights": w.tolist()}
        info = getattr(model.mkl_, "solver_info_", None)     # EasyMKL's KOMD solver
        if info is not None:
            r["komd_info"] = {k: info[k] for k in ("iterations", "polished", "seconds") if k in info}
        if name in mklpy_errors:
            r["mklpy_error"] = mklpy_errors[name]
            head.append({"name": f"MKLpy_over_ours_{name}_n{n}_P{P}", "ratio": None, "n": n, "P": P,
                         "numerator": f"MKLpy_{name}", "denominator": name, "mklpy_error": mklpy_errors[name],
                         "note": "MKLpy raised on these kernels: no ratio"})
        elif have_mklpy and f"MKLpy_{name}" in cmp.outputs:
            ref = cmp.outputs[f"MKLpy_{name}"]
            wm = np.asarray(ref.solution.weights, dtype=float)
            diff = float(np.abs(wm - w).max())
            f_ref = np.asarray(ref.decision_function(KL), dtype=float).ravel()
            f_ours = model.decision_function(Ks)
            fdiff = float(np.abs(f_ref - f_ours).max() / max(np.abs(f_ref).max(), 1e-300))
            r |= {"mklpy_median_s": cmp.median(f"MKLpy_{name}"), "mklpy_weights": wm.tolist(),
                  "mklpy_has_negative_weight": bool(wm.min() < 0), "max_abs_weight_diff": diff,
                  "max_rel_decision_diff_train": fdiff,
                  "mklpy_over_ours": cmp.ratio(f"MKLpy_{name}", name)}
            h = headline_ratio(f"MKLpy_over_ours_{name}_n{n}_P{P}", cmp, f"MKLpy_{name}", name,
                               precision="float64 kernels (MKLpy returns EasyMKL/FHeuristic weights in float32)",
                               output=f"{name} kernel weights, then the learner on the combined kernel",
                               max_abs_diff=diff, tolerance=WEIGHT_TOL, n=n, P=P,
                               max_rel_decision_diff=fdiff, decision_tolerance=DECISION_TOL,
                               same_decision=fdiff <= DECISION_TOL)
            if name == "CKA" and wm.min() < 0:
                h["note"] = "MKLpy's CKA weights are unconstrained (negative here); ours are non-negative"
            head.append(h)
            log(f"[n={n} P={P}] {name}: ours {cmp.median(name):.3f} s, MKLpy "
                f"{cmp.median(f'MKLpy_{name}'):.3f} s ({r['mklpy_over_ours']:.2f}x), max|Δw| {diff:.1e}, "
                f"max rel |Δf| {fdiff:.1e}")
        else:
            log(f"[n={n} P={P}] {name}: ours {cmp.median(name):.3f} s")
        entry["methods"][name] = r
    entry["context"] = {
        "ridge_sum_kernel_median_s": cmp.median("ridge_sum_kernel"),
        "translation_sum_kernel_median_s": cmp.median("translation_sum_kernel"),
        "validation_median_s": cmp.median("validation"),
        "ours_over_ridge": {m: cmp.ratio(m, "ridge_sum_kernel") for m in METHODS},
        "note": "an MKL weight fit and a ridge solve give different outputs: context, not a headline ratio",
    }
    log(f"[n={n} P={P}] ridge {cmp.median('ridge_sum_kernel'):.3f} s, translation "
        f"{cmp.median('translation_sum_kernel'):.3f} s, validation {cmp.median('validation'):.3f} s")
    cmp.outputs.clear()
    return entry, head


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_harness_args(ap, out="results/benchmarks/mkl.json")
    ap.add_argument("--quick", action="store_true", help="n in 250,500,1000 and P in 3,10 (a few minutes)")
    ap.add_argument("--sizes", default=None, help="comma-separated n (default 250,500,1000,2000)")
    ap.add_argument("--kernels", default=None, help="comma-separated P (default 3,10,30)")
    ap.add_argument("--no-mklpy", action="store_true")
    ap.add_argument("--memory", action="store_true",
                    help="also one untimed tracemalloc run per contender (peak MiB)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    check_harness_args(ap, args)
    sizes = [int(s) for s in (args.sizes or ("250,500,1000" if args.quick else "250,500,1000,2000")).split(",")]
    Ps = [int(s) for s in (args.kernels or ("3,10" if args.quick else "3,10,30")).split(",")]
    have_mklpy = False
    if not args.no_mklpy:
        try:
            import MKLpy  # noqa: F401
            import torch  # noqa: F401
            have_mklpy = True
        except Exception as exc:                                  # noqa: BLE001
            log(f"MKLpy not importable: {exc}")
    with pin_threads(args.threads):
        report = begin_report("mkl", args, mklpy=have_mklpy,
                              memory_note="peak tracemalloc MiB of one untimed call (numpy/Python "
                                          "allocations; torch not traced)" if args.memory else None)
        report["runs"], headline = [], []
        for P in Ps:
            for n in sizes:
                entry, h = bench_case(n, P, args, have_mklpy)
                report["runs"].append(entry)
                if n == max(sizes):
                    headline += h
    path = finish_report(report, headline, args.out, notes=[
        "headline: MKLpy / ours per method at the largest n of each P; every (n, P) is under runs",
        "our fits run without the PSD check (psd_tol=None, as the workflow); 'validation' times that check alone",
    ])
    log(f"wrote {path} ({report.get('benchmark_wall_s', 0):.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
