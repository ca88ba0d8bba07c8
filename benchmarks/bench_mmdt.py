"""Benchmark: LS-MMDT transform solver, low-rank (beta) vs explicit (W).

Rodner et al. 2013, "Towards adapting ImageNet to reality", Sect. 3: the
transform step of MMDT solved by dual coordinate descent keeping either
``W`` (``D x Dt``, Eqs. 7-10, ``O(D Dt)`` per coordinate step) or
``B`` (``m x Dt``, Eqs. 12-15, ``O(Dt + m)`` per step). Both are
:func:`biokernels.solvers.mmdt.solve_transform`, with the same backend and the
same coordinate order (same seed), interleaved in one process, warmed up (the
numba backend compiles on its first call), median of ``--repeats``
(``benchmarks/_harness.py``), BLAS threads pinned to ``--threads``.

Problem (per (D, m)): source and target dimension ``D = Dt`` (+1 for the
bias); hyperplanes ``H`` = one-vs-rest L2-loss SVMs trained on ``20 m``
synthetic source examples (class means ``N(0, I/D) * 3``, unit noise
``/ sqrt(D)``); ``--per-class`` (5) labelled target examples per class drawn
from the same class means through a fixed random rotation plus noise;
``C_T``, ``tol`` and ``max_iter`` are the workflow's: ``mmdt.C_target``,
``mmdt.tol`` and ``mmdt.max_iter`` of ``config/config.yaml`` when set, else
the defaults of
:class:`biokernels.solvers.mmdt.MMDT` (what ``scripts/mmdt_*.py`` use);
shrinking on.

Measured: wall time of the whole solve and of its first epoch (full active
set: the per-epoch cost). The explicit solver is run to convergence when its
estimated time (first epoch x low-rank epochs) is under ``--budget`` seconds
(both then reach the same dual optimum: ``max |W_explicit - H^T B|`` is
checked against a bound from the KKT residuals); otherwise, if one epoch fits
the budget, one epoch is timed and the time to convergence extrapolated as
epoch time x the low-rank solver's visits / visits of a first epoch (marked
``extrapolated``; its first epoch does the same updates as the low-rank
one's); if not even one epoch fits, the epoch time is estimated from timed
BLAS ``dger`` rank-1 updates of a ``D x Dt`` matrix (marked ``estimated``, not
in the headline). The ratio explicit / low-rank should grow roughly like
``D Dt / (Dt + m)``.

Usage::

    .venv/bin/python benchmarks/bench_mmdt.py [--out results/benchmarks/mmdt.json]
        [--quick] [--dims 64,256,1024,2048,4096] [--classes 10,50] [--threads 1]
"""

from __future__ import annotations

import argparse
import inspect
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from scipy.linalg import blas

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import (  # noqa: E402
    REPO,
    Comparison,
    add_harness_args,
    begin_report,
    check_harness_args,
    finish_report,
    headline_ratio,
    log,
    pin_threads,
    run_interleaved,
)

from biokernels.solvers.mmdt import MMDT, augment, ovr_squared_hinge_svm, solve_transform  # noqa: E402


def workflow_settings(config_path: Path) -> dict:
    """``C_T``, ``tol`` and ``max_iter`` as the workflow runs them: the
    config's ``mmdt`` keys when present, else :class:`MMDT`'s defaults."""
    defaults = {k: p.default for k, p in inspect.signature(MMDT).parameters.items()
                if p.default is not inspect.Parameter.empty}
    cfg = {}
    try:
        import yaml

        cfg = (yaml.safe_load(config_path.read_text()) or {}).get("mmdt", {}) or {}
    except (OSError, ImportError):
        pass
    tol = cfg.get("tol", defaults["tol"])
    C_T = cfg.get("C_target", defaults.get("C_target", 1.0))
    max_iter = cfg.get("max_iter", defaults.get("max_iter", 1000))
    return {"tol": float(tol), "C_T": float(C_T), "max_iter": int(max_iter),
            "tol_from": f"{config_path.name}: mmdt.tol" if "tol" in cfg else "MMDT default",
            "max_iter_from": f"{config_path.name}: mmdt.max_iter" if "max_iter" in cfg else "MMDT default",
            "C_T_from": f"{config_path.name}: mmdt.C_target" if "C_target" in cfg else "MMDT default"}


def solver_backends() -> tuple[str | None, list[str]]:
    p = inspect.signature(solve_transform).parameters.get("backend")
    if p is None:
        return None, []
    return p.default, [p.default]


def make_problem(D: int, m: int, per_class: int, rng: np.random.Generator):
    """Hyperplanes (m, D + 1) from a source SVM; target (n, D + 1), labels (n,)."""
    means = 3.0 * rng.normal(size=(m, D)) / np.sqrt(D)
    ys = np.repeat(np.arange(m), 20)
    Xs = means[ys] + rng.normal(size=(ys.size, D)) / np.sqrt(D)
    H = ovr_squared_hinge_svm(augment(Xs), ys, m, np.ones(ys.size), random_state=0)
    Q, _ = np.linalg.qr(rng.normal(size=(D, D)))
    yt = np.repeat(np.arange(m), per_class)
    Xt = (means[yt] + rng.normal(size=(yt.size, D)) / np.sqrt(D)) @ Q
    return H, augment(Xt), yt


def dger_seconds(D: int, Dt: int, repeats: int = 5) -> float:
    WT = np.asfortranarray(np.zeros((Dt, D)))
    x, h = np.ones(Dt), np.ones(D)
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        blas.dger(1e-9, x, h, a=WT, overwrite_a=1)
        best = min(best, time.perf_counter() - t0)
    return best


def bench_case(D: int, m: int, args, st: dict) -> tuple[dict, list[dict]]:
    rng = np.random.default_rng(args.seed)
    H, X, y = make_problem(D, m, args.per_class, rng)
    n = X.shape[0]
    kw = {"tol": st["tol"], "rng": args.seed}
    if args.backend is not None:
        kw["backend"] = args.backend
    out: dict = {"D": D, "Dt": D, "m": m, "n_target": n, "coordinates": m * n}
    epochs: dict[str, list[float]] = {"lowrank": [], "explicit": []}

    def solve(solver, max_iter):
        def call():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # max_iter=1 (extrapolated mode) does not converge
                r = solve_transform(H, X, y, st["C_T"], solver=solver, max_iter=max_iter, **kw)
            epochs[solver].append(r.epoch_seconds[0])
            return r
        return call

    # a first low-rank solve (also the numba warm-up) sizes the explicit run
    lo0 = solve("lowrank", args.max_iter)()
    epochs["lowrank"].clear()
    visit_ratio = lo0.n_visits / (m * n)          # total visits in units of full epochs
    t_dger = dger_seconds(D + 1, D + 1)
    est_epoch = m * n * t_dger
    ex: dict = {"dger_s": t_dger, "estimated_epoch_s_from_dger": est_epoch}
    if est_epoch * visit_ratio <= args.budget:
        mode = "measured"
        contenders = {"lowrank": solve("lowrank", args.max_iter), "explicit": solve("explicit", args.max_iter)}
    elif est_epoch <= args.budget:
        mode = "extrapolated"
        contenders = {"lowrank": solve("lowrank", args.max_iter), "explicit": solve("explicit", 1)}
    else:
        mode = "estimated"
        contenders = {"lowrank": solve("lowrank", args.max_iter)}
    cmp = run_interleaved(contenders, warmup=args.warmup, repeats=args.repeats)
    k = args.repeats
    ep = Comparison(list(contenders), cmp.warmup, cmp.repeats, cmp.order,
                    {s: epochs[s][-k:] for s in contenders})
    lo = cmp.outputs["lowrank"]
    out["lowrank"] = {"solve": cmp.summary("lowrank"), "first_epoch": ep.summary("lowrank"),
                      "epochs": lo.n_iter, "converged": lo.converged, "visits": lo.n_visits,
                      "updates": lo.n_updates, "kkt_violation": getattr(lo, "kkt_violation", None),
                      "backend": getattr(lo, "backend", None)}
    head: list[dict] = []
    lo_epoch, lo_conv = ep.median("lowrank"), cmp.median("lowrank")
    if mode == "measured":
        r = cmp.outputs["explicit"]
        diff = float(np.abs(r.W_explicit - lo.W(H)).max())
        # ||W - W*||_F <= ||H||_2 ||X||_2 ||alpha - alpha*||_F, ||alpha - alpha*||_2 <= sqrt(mn) kkt / lambda
        lam = 0.5 / st["C_T"]
        kkts = [getattr(s, "kkt_violation", np.nan) for s in (lo, r)]
        kkts = [k_ if np.isfinite(k_) else s.pg_spread for k_, s in zip(kkts, (lo, r))]
        bound = float(np.linalg.norm(H, 2) * np.linalg.norm(X, 2) * np.sqrt(m * n) * sum(kkts) / lam)
        ex.update(solve=cmp.summary("explicit"), first_epoch=ep.summary("explicit"), epochs=r.n_iter,
                  converged=r.converged, mode=mode, max_abs_diff_W=diff, W_diff_bound_from_kkt=bound,
                  same_epochs_as_lowrank=r.n_iter == lo.n_iter)
        ex_epoch, ex_conv = ep.median("explicit"), cmp.median("explicit")
        same = {"precision": "float64", "max_abs_diff": diff, "tolerance": bound, "D": D, "m": m}
        head.append(headline_ratio(f"explicit_over_lowrank_converge_D{D}_m{m}", cmp, "explicit", "lowrank",
                                   output="the transform W at the dual optimum (tol "
                                          f"{st['tol']:g})", **same))
        head.append(headline_ratio(f"explicit_over_lowrank_epoch_D{D}_m{m}", ep, "explicit", "lowrank",
                                   output="first epoch over all coordinates (same order, same updates)",
                                   **same))
    elif mode == "extrapolated":
        r = cmp.outputs["explicit"]
        ex_epoch = ep.median("explicit")
        ex_conv = ex_epoch * visit_ratio
        # same output of the epoch timed: the low-rank solver's dual iterate after one epoch (untimed)
        lo1 = solve("lowrank", 1)()
        epochs["lowrank"].pop()
        diff = float(np.abs(lo1.alpha - r.alpha).max())
        tol = 1e-8 * max(1.0, float(np.abs(lo1.alpha).max()))
        ex.update(first_epoch=ep.summary("explicit"), converge_s=ex_conv, epochs=lo.n_iter, converged=None,
                  mode=mode, max_abs_diff_alpha_after_one_epoch=diff)
        head.append(headline_ratio(f"explicit_over_lowrank_epoch_D{D}_m{m}", ep, "explicit", "lowrank",
                                   precision="float64",
                                   output="first epoch over all coordinates (same order, same updates)",
                                   max_abs_diff=diff, tolerance=tol, max_abs_diff_is="dual alpha after one epoch",
                                   D=D, m=m))
    else:
        ex_epoch = est_epoch
        ex_conv = est_epoch * visit_ratio
        ex.update(epoch_s=est_epoch, converge_s=ex_conv, epochs=lo.n_iter, converged=None, mode=mode)
    out["explicit"] = ex
    out["ratio_epoch_explicit_over_lowrank"] = ex_epoch / lo_epoch
    out["ratio_converge_explicit_over_lowrank"] = ex_conv / lo_conv
    out["ratio_mode"] = mode
    cmp.outputs.clear()
    log(f"D={D:5d} m={m:3d} lowrank: epoch {lo_epoch * 1e3:8.2f} ms, {lo.n_iter} epochs, "
        f"{lo_conv:.3f} s; explicit ({mode}): epoch {ex_epoch * 1e3:8.2f} ms, converge {ex_conv:.2f} s; "
        f"ratio epoch {out['ratio_epoch_explicit_over_lowrank']:.1f}x, converge "
        f"{out['ratio_converge_explicit_over_lowrank']:.1f}x")
    return out, head


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    add_harness_args(ap, out="results/benchmarks/mmdt.json")
    ap.add_argument("--quick", action="store_true",
                    help="dims 64,256,1024,2048 and m = 10 only, budget 5 s")
    ap.add_argument("--dims", default="64,256,1024,2048,4096")
    ap.add_argument("--classes", default="10,50")
    ap.add_argument("--per-class", type=int, default=5, help="labelled target examples per class")
    ap.add_argument("--budget", type=float, default=10.0,
                    help="seconds allowed for one explicit solve (run warmup + repeats times) "
                         "before extrapolating")
    ap.add_argument("--max-iter", type=int, default=None,
                    help="epochs at most (default: config mmdt.max_iter, else MMDT's default)")
    ap.add_argument("--tol", type=float, default=None,
                    help="override the workflow's tolerance (default: config mmdt.tol, else MMDT's default)")
    ap.add_argument("--config", default=str(REPO / "config" / "config.yaml"))
    default_backend, _ = solver_backends()
    ap.add_argument("--backend", default=default_backend,
                    help="solve_transform backend, the same for both solvers (default: the library's, "
                         "%(default)s)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    check_harness_args(ap, args)
    if args.quick:
        args.dims, args.classes, args.budget = "64,256,1024,2048", "10", 5.0
    dims = sorted(int(s) for s in args.dims.split(",") if s.strip())
    classes = sorted(int(s) for s in args.classes.split(",") if s.strip())
    st = workflow_settings(Path(args.config))
    if args.tol is not None:
        st |= {"tol": args.tol, "tol_from": "--tol"}
    if args.max_iter is not None:
        st |= {"max_iter": args.max_iter, "max_iter_from": "--max-iter"}
    args.max_iter = st["max_iter"]

    with pin_threads(args.threads):
        report = begin_report("mmdt", args, packages=("numba",),
                              settings_used=st | {"per_class": args.per_class, "shrinking": True,
                                                  "backend": args.backend})
        report["cases"], headline = [], []
        for m in classes:
            for D in dims:
                case, h = bench_case(D, m, args, st)
                report["cases"].append(case)
                headline += h
    path = finish_report(report, headline, args.out, notes=[
        "both solvers run the same backend and visit coordinates in the same order",
        "first_epoch = the first epoch (full active set) of each timed solve; solve includes set-up",
        "explicit mode: measured (to convergence, W compared) | extrapolated (one epoch timed, converge = "
        "epoch x low-rank visits / coordinates; only the epoch ratio is a headline) | estimated "
        "(dger timing x coordinates; not a headline)",
    ])
    log(f"wrote {path} ({report.get('benchmark_wall_s', 0):.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
