"""Hyperparameter choice by inner CV on a trial's training genes only, and
the chosen setting's scores on the trial's test genes.

Criterion: the micro-AUPR of the validation genes, averaged over the inner
folds (deepNF's). Two families: kernels with the diffusion study's SVM (a
C-SVC on the precomputed kernel, one per term, LIBSVM's problem solved by
:func:`biokernels.studies.diffusion.protocol.smo_task_scores`, warm-started
along the C grid), and label propagation's closed forms. Only the
training genes' labels are ever read before the choice is made; the test
genes' labels are read by nobody here (the caller scores the returned
decision values), which tests/unit/studies/test_function_benchmark.py
checks by scrambling them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from biokernels.studies.diffusion.protocol import smo_task_scores, svm_classifier
from biokernels.studies.function_benchmark.metrics import micro_aupr

__all__ = ["Choice", "svm_candidate", "propagation_candidate", "better"]

#: Score of a term that has a single class among the genes a fit sees (no
#: classifier can be trained): a constant, "not this term" for an SVM.
NO_FIT_SCORE = -1.0


@dataclass
class Choice:
    """The best candidate so far of one method on one trial."""

    inner: float = -np.inf          # mean inner-fold micro-AUPR
    setting: dict = field(default_factory=dict)
    test_scores: np.ndarray | None = None   # (n_test, t)


def better(current: Choice, inner: float, setting: dict, test_scores: np.ndarray) -> Choice:
    """``current`` or the new candidate, whichever has the larger inner
    score (ties keep the earlier one: the config's order decides)."""
    if inner > current.inner:
        return Choice(float(inner), dict(setting), test_scores)
    return current


def _filled(scores: np.ndarray) -> np.ndarray:
    return np.where(np.isfinite(scores), scores, NO_FIT_SCORE)


def svm_candidate(K: np.ndarray, Y: np.ndarray, train: np.ndarray, test: np.ndarray,
                  folds: Sequence[tuple[np.ndarray, np.ndarray]], C_grid: Sequence[float],
                  n_jobs: int = 1) -> list[tuple[float, float, np.ndarray]]:
    """One kernel's SVMs on one trial, for every C.

    Parameters
    ----------
    K : array (g, g), the kernel over the annotated genes
    Y : 0/1 array (g, t), their labels (only rows ``train`` are read)
    train, test : int arrays, positions in ``0..g-1``
    folds : (fit, validation) positions into ``train`` (:func:`inner_folds`)
    C_grid : the SVM's C candidates
    n_jobs : threads over terms (results do not depend on it)

    Returns
    -------
    list of (C, inner micro-AUPR, test decision values (n_test, t)), C ascending;
    a term with one class among the fitted genes scores :data:`NO_FIT_SCORE`.
    """
    smo = svm_classifier(1.0)
    Cs = sorted(float(c) for c in C_grid)
    ytr = np.asarray(Y[train], dtype=np.float64)
    inner = np.zeros(len(Cs))
    for fit, val in folds:
        a, b = train[fit], train[val]
        Kf, Kv = K[np.ix_(a, a)], K[np.ix_(b, a)]
        prev = None
        for i, C in enumerate(Cs):
            start = None if prev is None else prev * (C / Cs[i - 1])
            sc, prev = smo_task_scores(Kf, Kv, ytr[fit], C, smo, start, n_jobs, name="inner fold")
            inner[i] += micro_aupr(ytr[val], _filled(sc)) / len(folds)
    out = []
    Kt, Kte = K[np.ix_(train, train)], K[np.ix_(test, train)]
    prev = None
    for i, C in enumerate(Cs):
        start = None if prev is None else prev * (C / Cs[i - 1])
        sc, prev = smo_task_scores(Kt, Kte, ytr, C, smo, start, n_jobs, name="trial")
        out.append((C, float(inner[i]), _filled(sc)))
    return out


def propagation_candidate(score: Callable[[np.ndarray, np.ndarray], np.ndarray], genes: np.ndarray,
                          Y: np.ndarray, train: np.ndarray, test: np.ndarray,
                          folds: Sequence[tuple[np.ndarray, np.ndarray]]) -> tuple[float, np.ndarray]:
    """One propagation setting on one trial.

    Parameters
    ----------
    score : callable (labelled node indices (m,), their 0/1 labels (m, t)) -> node scores (n, t)
    genes : int array (g,), the network node of each annotated gene
    Y, train, test, folds : as :func:`svm_candidate`

    Returns
    -------
    (inner micro-AUPR, test scores (n_test, t)).
    """
    ytr = np.asarray(Y[train])
    inner = 0.0
    for fit, val in folds:
        F = score(genes[train[fit]], ytr[fit])
        inner += micro_aupr(ytr[val], F[genes[train[val]]]) / len(folds)
    F = score(genes[train], ytr)
    return float(inner), F[genes[test]]
