"""The classifier's C of a split: inner K-fold cross-validation on the
training proteins only, pooled over tasks, with the eBaseline kernel (which
uses no labels); every method of the split then uses that C.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
from sklearn.model_selection import KFold

from biokernels.metrics import roc_auc_columns
from biokernels.studies.diffusion.protocol.blocks import KernelBlocks
from biokernels.studies.diffusion.protocol.classifiers import smo_of
from biokernels.studies.diffusion.protocol.scoring import fit_task_scores, smo_task_scores, task_aucs, task_scores


def choose_C(blocks: KernelBlocks, s: np.ndarray, ytr: np.ndarray, C_grid: list[float],
             n_folds: int, seed: int, classifier: Callable[[float], object] | None = None,
             *, kernel: np.ndarray | None = None, fast: bool = False, n_jobs: int = 1
             ) -> tuple[float, pd.DataFrame]:
    """Choose the classifier's C by inner K-fold CV on the training proteins.

    The kernel is ``s``'s (the eBaseline spectrum in the protocol); the score
    of a C is the mean validation AUC over tasks and folds (folds where a task
    has one class are skipped for that task). ``classifier``: as in
    :func:`task_scores` (None: the paper's SVM).

    Keyword-only
    ------------
    kernel : array (n_train, n_train), optional
        ``blocks(s)[0]`` when the caller has it already (not recomputed).
    fast : bool
        False (the reference): :func:`task_scores` and :func:`task_aucs` per
        fold and C; True: :func:`fit_task_scores` (same fits, one GEMM for
        the decision values) and :func:`biokernels.metrics.roc_auc_columns`.
    n_jobs : int
        Threads for the fits when ``fast``.

    Returns
    -------
    best C, and a table (C, mean_auc).
    """
    Ktr = blocks(s)[0] if kernel is None else kernel
    folds = list(KFold(n_folds, shuffle=True, random_state=seed).split(Ktr))
    smo = smo_of(classifier) if fast else None
    if smo is not None:
        # per fold, C ascending, each fit warm-started from the previous C's solution scaled by C / C'
        aucs_by_C: dict[float, list] = {C: [] for C in C_grid}
        for fit_idx, val_idx in folds:
            Kf, Kv = Ktr[np.ix_(fit_idx, fit_idx)], Ktr[np.ix_(val_idx, fit_idx)]
            prev, prev_C = None, None
            for C in sorted(C_grid):
                start = None if prev is None else prev * (C / prev_C)
                sc, prev = smo_task_scores(Kf, Kv, ytr[fit_idx], C, smo, start, n_jobs, name="choose_C")
                prev_C = C
                aucs_by_C[C].append(roc_auc_columns(ytr[val_idx], sc))
        table = pd.DataFrame([{"C": C, "mean_auc": float(np.nanmean(np.concatenate(aucs_by_C[C])))}
                              for C in C_grid])
        return float(table.loc[table["mean_auc"].idxmax(), "C"]), table
    rows = []
    for C in C_grid:
        aucs = []
        for fit_idx, val_idx in folds:
            if fast:
                sc = fit_task_scores(Ktr[np.ix_(fit_idx, fit_idx)], Ktr[np.ix_(val_idx, fit_idx)],
                                     ytr[fit_idx], C, classifier, n_jobs)
                aucs.append(roc_auc_columns(ytr[val_idx], sc))
                continue
            sc = task_scores(Ktr[np.ix_(fit_idx, fit_idx)], Ktr[np.ix_(val_idx, fit_idx)],
                             ytr[fit_idx], C, classifier)
            aucs.append(task_aucs(sc, ytr[val_idx]))
        rows.append({"C": C, "mean_auc": float(np.nanmean(np.concatenate(aucs)))})
    table = pd.DataFrame(rows)
    return float(table.loc[table["mean_auc"].idxmax(), "C"]), table
