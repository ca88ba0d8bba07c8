"""SM1 (Lanckriet et al.'s 1-norm soft-margin kernel combination,
:mod:`biokernels.solvers.sm1`) per task on one split, where its cost model
fits the time and memory budget (:func:`evaluate_sm1`), then the classifier
on each task's combined kernel.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import pandas as pd

from biokernels.kernels.diffusion import diffusion_spectra
from biokernels.studies.diffusion.protocol.blocks import KernelBlocks
from biokernels.studies.diffusion.protocol.masks import split_rows
from biokernels.studies.diffusion.protocol.scoring import task_aucs, task_scores


def evaluate_sm1(P: np.ndarray, d: np.ndarray, Y: pd.DataFrame, train_mask: np.ndarray,
                 betas: np.ndarray, C: float, max_seconds: float, max_memory_gb: float,
                 device: str = "auto", log=None, eval_mask: np.ndarray | None = None,
                 classifier: Callable[[float], object] | None = None, sm1_form: str = "elementwise",
                 ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """SM1 (Lanckriet et al. 2004, 1-norm soft margin, QCQP) per task on one
    split, then the classifier (the paper: an SVM; ``classifier`` as in
    :func:`evaluate_split`) on each task's combined kernel.

    The diffusion kernels share the Laplacian's eigenvectors, so each
    training block is ``P_tr diag(n s_i) P_tr^T`` and SM1 is fitted from the
    diagonal factors ``sqrt(n s_i)`` with the shared basis ``P_tr``; the
    traces of the full kernels (scaled by n like the SVM's kernels) are all
    n, so the trace constraint makes the weights sum to 1.

    When :func:`biokernels.solvers.sm1.sm1_fits` predicts more than
    ``max_seconds`` (all tasks) or ``max_memory_gb`` (one fit), nothing is
    fitted: the tables are empty and the reason is logged (the paper could
    not run SM1 on its larger network either).

    ``sm1_form`` is :class:`biokernels.solvers.sm1.SM1`'s ``form``: the
    default elementwise cones, or ``"per_kernel"`` (the reference form).

    Returns
    -------
    roc : DataFrame method, task, auc (empty when skipped)
    weights : DataFrame method, task, beta, weight
    times : DataFrame method, seconds
    """
    from biokernels.solvers.sm1 import SM1, sm1_fits

    say = log.info if log else (lambda *a, **k: None)
    train_mask, test_mask, train, test, Yv, ytr, yte = split_rows(Y, train_mask, eval_mask)
    n, p = P.shape[0], len(betas)
    tasks = list(Y.columns)
    ok, reason = sm1_fits(len(train), p, n, basis_dim=n, diagonal=True,
                          max_memory_bytes=max_memory_gb * 2 ** 30, max_seconds=max_seconds,
                          n_fits=len(tasks))
    say(reason)
    if not ok:
        say("SM1 skipped: %s", reason)
        return sm1_empty_tables()
    S = diffusion_spectra(d, betas) * n
    factors = [np.sqrt(s) for s in S]
    basis = P[train]                      # the shared left factor of every training block
    traces = S.sum(axis=1)
    blocks = KernelBlocks(P, train, test, device)
    roc_rows, weight_rows = [], []
    t0 = time.perf_counter()
    for k, task in enumerate(tasks):
        y = 2 * ytr[:, k] - 1
        if y.min() == y.max() or yte[:, k].min() == yte[:, k].max():
            roc_rows.append({"method": "SM1", "task": task, "auc": np.nan})
            continue
        mu = SM1(C=C, form=sm1_form).fit_factors(factors, y, traces, basis=basis).weights_
        weight_rows.extend({"method": "SM1", "task": task, "beta": b, "weight": float(w)}
                           for b, w in zip(betas, mu))
        Ktr, Kte = blocks(mu @ S / n)
        auc = task_aucs(task_scores(Ktr, Kte, ytr[:, [k]], C, classifier), yte[:, [k]])[0]
        roc_rows.append({"method": "SM1", "task": task, "auc": auc})
        say("SM1 task %s: AUC %.4f", task, auc)
    times = pd.DataFrame([{"method": "SM1", "seconds": time.perf_counter() - t0}])
    return pd.DataFrame(roc_rows), pd.DataFrame(weight_rows), times


def sm1_empty_tables() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The tables of :func:`evaluate_sm1` when SM1 does not run: empty
    ``roc`` (method, task, auc), ``weights`` (method, task, beta, weight) and
    ``times`` (method, seconds)."""
    return (pd.DataFrame(columns=["method", "task", "auc"]),
            pd.DataFrame(columns=["method", "task", "beta", "weight"]),
            pd.DataFrame(columns=["method", "seconds"]))
