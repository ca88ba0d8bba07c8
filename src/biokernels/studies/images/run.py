"""One job of the images study per entry point, from the ``images`` config
section: :func:`run_projection` (Fig. 2a-b for one kernel),
:func:`run_classes` (Fig. 2c for one kernel) and :func:`run_translation`
(Fig. 3a-b for one kernel over every corruption). Each returns plain rows;
the workflow scripts write them."""

from __future__ import annotations

import time

import numpy as np

from biokernels.errors import InputError
from biokernels.seeds import make_rng
from biokernels.studies.images.models import make_kernel
from biokernels.studies.images.protocol import (TargetKernels, fit_source, projection_rows,
                                                translation_rows)
from biokernels.studies.images.tasks import (load_set, projection_targets, source_set, stratified_take,
                                             translation_target)

__all__ = ["run_projection", "run_classes", "run_translation", "kernel_settings"]


def kernel_settings(cfg: dict, kernel_name: str) -> tuple[dict, int | None]:
    """The kernel's parameters (``images.kernels.<name>``, defaults when absent)
    and its cap on training rows (``max_train``; None: none)."""
    params = dict((cfg.get("kernels") or {}).get(kernel_name) or {})
    return params, params.get("max_train")


def _source_info(model, kernel_name: str, n: int, seconds: float) -> dict:
    info = {k: v for k, v in model.info.items() if k != "history"}
    return {"kernel": kernel_name, "n_source": n, "fit_s": round(seconds, 3), **info,
            "epochs_history": model.info.get("history", [])}


def _cap(task: dict, cap: int | None, seed: int) -> dict:
    """The task with at most ``cap`` training and test rows (stratified)."""
    if cap is None:
        return task
    tr = np.sort(stratified_take(task["y_train"], cap, make_rng(seed, 7)))
    te = np.sort(stratified_take(task["y_test"], cap, make_rng(seed, 8)))
    return {**task, "X_train": task["X_train"][tr], "y_train": task["y_train"][tr],
            "X_test": task["X_test"][te], "y_test": task["y_test"][te]}


def run_projection(cfg: dict, kernel_name: str, seed: int, log=print, device: str = "cpu") -> dict:
    """Fig. 2a rows, Fig. 2b curve rows and the source fit's record."""
    s = load_set(cfg["dataset"], seed)
    params, cap = kernel_settings(cfg, kernel_name)
    kernel = make_kernel(kernel_name, params, s.images.shape[1:], device)
    pc = cfg["projection"]
    classes = pc.get("source_classes") or list(range(len(s.class_names)))
    src = source_set(s, classes, min(x for x in (pc.get("max_source"), cap) if x) if (pc.get("max_source") or cap)
                     else None, seed)
    t0 = time.perf_counter()
    model = fit_source(kernel, src.images.reshape(len(src.labels), -1), src.labels, classes, cfg["solver"], log)
    info = _source_info(model, kernel_name, len(src.labels), time.perf_counter() - t0)
    log(f"{kernel_name}: source on {len(src.labels)} images of classes {classes} fitted in {info['fit_s']} s")
    full, curve = [], []
    for name, task in projection_targets(s, pc, seed).items():
        tk = TargetKernels(kernel, _cap(task, cap, seed), model, float(pc["bandwidth"]))
        f, c = projection_rows(kernel_name, tk, name, pc, pc["seeds"])
        log(f"{kernel_name} -> {name}: baseline {f[0]['baseline']:.3f}, projected {f[0]['projected']:.3f}")
        full += f
        curve += c
    return {"fig2a": full, "fig2b": curve, "source": info}


def run_classes(cfg: dict, kernel_name: str, seed: int, log=print, device: str = "cpu") -> list[dict]:
    """Fig. 2c: a fixed number of source images spread evenly over k classes
    (``total // k`` each), for each k of ``classes_vs_examples.class_counts``;
    projected accuracy on every projection target. Raises InputError when a
    class has too few training images."""
    s = load_set(cfg["dataset"], seed)
    params, cap = kernel_settings(cfg, kernel_name)
    kernel = make_kernel(kernel_name, params, s.images.shape[1:], device)
    pc, cc = cfg["projection"], cfg["classes_vs_examples"]
    pool = list(pc.get("source_classes") or range(len(s.class_names)))
    total = int(cc["total"]) if cap is None else min(int(cc["total"]), int(cap))
    targets = {k: _cap(v, cap, seed) for k, v in projection_targets(s, pc, seed).items()}
    rows = []
    for rep in cc["seeds"]:
        order = make_rng(seed, 9, rep).permutation(pool).tolist()
        for k in cc["class_counts"]:
            if k > len(pool):
                raise InputError(f"images.classes_vs_examples.class_counts: {k} exceeds the "
                                 f"{len(pool)} source classes")
            classes = sorted(order[:k])
            src = s.select(classes, "train")
            per_class, have = total // k, np.bincount(src.labels, minlength=max(classes) + 1)[classes]
            if have.min() < per_class:
                raise InputError(f"images.classes_vs_examples.total: {total} source images over {k} classes "
                                 f"need {per_class} per class; classes {classes} have {have.tolist()} "
                                 "training images")
            rng = make_rng(seed, 10, rep, k)
            keep = np.concatenate([rng.permutation(np.flatnonzero(src.labels == c))[:per_class] for c in classes])
            model = fit_source(kernel, src.images[keep].reshape(len(keep), -1), src.labels[keep], classes,
                               cfg["solver"], log)
            for name, task in targets.items():
                tk = TargetKernels(kernel, task, model, float(pc["bandwidth"]))
                n = len(task["y_train"])
                rows.append({"kernel": kernel_name, "target": name, "seed": rep, "source_classes": k,
                             "per_class": per_class, "n_source": len(keep), "n_train": n,
                             "projected": tk.projected(np.arange(n), pc["ridge"])})
            log(f"{kernel_name}: {k} classes x {len(keep) // k} images: " +
                ", ".join(f"{r['target']} {r['projected']:.3f}" for r in rows[-len(targets):]))
    return rows


def run_translation(cfg: dict, kernel_name: str, seed: int, log=print, device: str = "cpu") -> dict:
    """Fig. 3a rows, Fig. 3b curve rows and the source fit's record: source on
    the clean train split (all classes), targets the corrupted test split."""
    s = load_set(cfg["dataset"], seed)
    params, cap = kernel_settings(cfg, kernel_name)
    kernel = make_kernel(kernel_name, params, s.images.shape[1:], device)
    tc = cfg["translation"]
    classes = list(range(len(s.class_names)))
    n_src = [x for x in (tc.get("max_source"), cap) if x]
    src = source_set(s, None, min(n_src) if n_src else None, seed)
    t0 = time.perf_counter()
    model = fit_source(kernel, src.images.reshape(len(src.labels), -1), src.labels, classes, cfg["solver"], log)
    info = _source_info(model, kernel_name, len(src.labels), time.perf_counter() - t0)
    log(f"{kernel_name}: source on {len(src.labels)} clean images fitted in {info['fit_s']} s")
    full, curve = [], []
    for c in tc["corruptions"]:
        task = {**translation_target(s, c, tc["severity"], tc, seed), "classes": classes}
        tk = TargetKernels(kernel, _cap(task, cap, seed), model, float(cfg["projection"]["bandwidth"]))
        f, cv = translation_rows(kernel_name, tk, c, {**tc, "projection_ridge": cfg["projection"]["ridge"]},
                                 tc["seeds"])
        r = f[0]
        log(f"{kernel_name} / {c}: baseline {r['baseline']:.3f}, source {r['source']:.3f}, "
            f"projected {r['projected']:.3f}, translated {r['translated']:.3f}")
        full += f
        curve += cv
    return {"fig3a": full, "fig3b": curve, "source": info}
