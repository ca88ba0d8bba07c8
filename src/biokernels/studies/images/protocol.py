"""Projection and translation of image classifiers (Radhakrishnan et al.
2023, Definitions 1-2; Fig. 2a-c, Fig. 3a-b, SI Figs. S2-S6).

- baseline: the kernel trained on the target alone;
- source: the source model's scores read as target classes (translation only);
- projected: a Laplace kernel (bandwidth ``projection.bandwidth``, ridge
  ``projection.ridge``, Methods "Details for projection experiments") on the
  source model's scores of each target image;
- translated: source scores plus a correction, the same kernel fitted on
  ``y_t - f_s(X_t)`` (ridge ``translation.ridge``; the paper: exact, 0).

Target kernels are formed once per (kernel, target) and sliced for each
target size, so a scaling curve costs one solve per point.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
import torch

from biokernels.kernels.classic import laplace_kernel
from biokernels.seeds import make_rng
from biokernels.studies.images.models import KernelRegressor, accuracy, one_hot, solve_exact
from biokernels.studies.images.tasks import stratified_take

__all__ = ["fit_source", "TargetKernels", "projection_rows", "translation_rows", "curve_sizes"]


def fit_source(kernel: Callable, X, y, classes, solver: dict, log=None) -> KernelRegressor:
    """The source model on one-hot labels over ``classes``: ``solver.name``
    (exact or eigenpro), exact whatever the name for at most
    ``solver.exact_max`` rows (as the paper solved its smaller sources)."""
    name = solver.get("name", "exact")
    if name == "eigenpro" and len(y) <= int(solver.get("exact_max", 0)):
        name = "exact"
    model = KernelRegressor(kernel, ridge=float(solver.get("ridge", 0.0)), solver=name,
                            eigenpro=solver.get("eigenpro"), log=log)
    return model.fit(X, one_hot(y, classes))


def _solve_predict(K_tr: torch.Tensor, K_te: torch.Tensor, Y: np.ndarray, ridge: float) -> np.ndarray:
    return (K_te @ solve_exact(K_tr, Y, ridge)).numpy()


class TargetKernels:
    """One target's kernel matrices: the study kernel on images (formed on
    first use) and the projection's Laplace kernel on source scores, train ×
    train and test × train."""

    def __init__(self, kernel: Callable, task: dict, source: KernelRegressor | None, bandwidth: float):
        Xtr = torch.as_tensor(task["X_train"], dtype=torch.float64)
        Xte = torch.as_tensor(task["X_test"], dtype=torch.float64)
        self.task, self._kernel, self._X = task, kernel, (Xtr, Xte)
        if source is not None:
            self.S_tr, self.S_te = source.predict(Xtr), source.predict(Xte)
            St, Se = torch.as_tensor(self.S_tr), torch.as_tensor(self.S_te)
            self.L_tr, self.L_te = laplace_kernel(St, St, bandwidth), laplace_kernel(Se, St, bandwidth)

    @functools.cached_property
    def K_tr(self) -> torch.Tensor:
        return self._kernel(self._X[0], self._X[0])

    @functools.cached_property
    def K_te(self) -> torch.Tensor:
        return self._kernel(self._X[1], self._X[0])

    def baseline(self, idx, ridge: float) -> float:
        t = self.task
        Y = one_hot(t["y_train"][idx], t["classes"])
        return accuracy(_solve_predict(self.K_tr[np.ix_(idx, idx)], self.K_te[:, idx], Y, ridge),
                        t["y_test"], t["classes"])

    def projected(self, idx, ridge: float) -> float:
        t = self.task
        Y = one_hot(t["y_train"][idx], t["classes"])
        return accuracy(_solve_predict(self.L_tr[np.ix_(idx, idx)], self.L_te[:, idx], Y, ridge),
                        t["y_test"], t["classes"])

    def baseline_and_translated(self, idx, ridge: float) -> tuple[float, float]:
        """The baseline, and the source scores plus the correction fitted on
        the residual labels (same classes), by one solve with both right-hand sides."""
        t = self.task
        Y = one_hot(t["y_train"][idx], t["classes"])
        P = _solve_predict(self.K_tr[np.ix_(idx, idx)], self.K_te[:, idx], np.hstack([Y, Y - self.S_tr[idx]]), ridge)
        c = Y.shape[1]
        return (accuracy(P[:, :c], t["y_test"], t["classes"]),
                accuracy(self.S_te + P[:, c:], t["y_test"], t["classes"]))

    def source(self) -> float:
        return accuracy(self.S_te, self.task["y_test"], self.task["classes"])


def curve_sizes(n_max: int, points: int, n_min: int, cap: int | None = None) -> list[int]:
    """``points`` evenly spaced target sizes from ``n_min`` to ``n_max`` (or
    ``cap`` when smaller; the paper: 50 evenly spaced points), fewer when the
    range has fewer integers."""
    n_max = int(n_max) if cap is None else min(int(n_max), int(cap))
    n_min = max(1, min(int(n_min), n_max))
    return sorted(set(np.linspace(n_min, n_max, int(points)).round().astype(int).tolist()))


def _subset(tk: TargetKernels, n: int, seed: int, stream: int) -> np.ndarray:
    y = tk.task["y_train"]
    if n >= len(y):
        return np.arange(len(y))
    return np.sort(stratified_take(y, n, make_rng(seed, 6, stream, n)))


def projection_rows(kernel_name: str, tk: TargetKernels, target: str, cfg: dict, seeds) -> tuple[list, list]:
    """Fig. 2a rows (baseline vs projected at the full target size, per seed)
    and Fig. 2b curve rows (projected and baseline accuracy per size and seed)."""
    n = len(tk.task["y_train"])
    base = {"kernel": kernel_name, "target": target, "set": tk.task["set"], "in_source": tk.task["in_source"],
            "classes": len(tk.task["classes"]), "n_test": len(tk.task["y_test"])}
    full = [{**base, "n_train": n, "baseline": tk.baseline(np.arange(n), cfg["target_ridge"]),
             "projected": tk.projected(np.arange(n), cfg["ridge"])}]
    curve = []
    for n_t in curve_sizes(n, cfg["curve_points"], cfg["curve_min"], cfg.get("curve_max")):
        for seed in seeds:
            idx = _subset(tk, n_t, seed, 0)
            curve.append({**base, "n_train": len(idx), "seed": seed,
                          "baseline": tk.baseline(idx, cfg["target_ridge"]),
                          "projected": tk.projected(idx, cfg["ridge"])})
    return full, curve


def translation_rows(kernel_name: str, tk: TargetKernels, corruption: str, cfg: dict, seeds) -> tuple[list, list]:
    """Fig. 3a rows (baseline, source, projected, translated at the full
    target size) and Fig. 3b curve rows (per size and seed)."""
    n = len(tk.task["y_train"])
    base = {"kernel": kernel_name, "corruption": corruption, "n_test": len(tk.task["y_test"])}
    r = cfg["ridge"]
    b, t = tk.baseline_and_translated(np.arange(n), r)
    full = [{**base, "n_train": n, "baseline": b, "source": tk.source(),
             "projected": tk.projected(np.arange(n), cfg["projection_ridge"]), "translated": t}]
    curve = []
    for n_t in curve_sizes(n, cfg["curve_points"], cfg["curve_min"], cfg.get("curve_max")):
        for seed in seeds:
            idx = _subset(tk, n_t, seed, 1)
            b, t = tk.baseline_and_translated(idx, r)
            curve.append({**base, "n_train": len(idx), "seed": seed, "baseline": b, "translated": t})
    return full, curve
