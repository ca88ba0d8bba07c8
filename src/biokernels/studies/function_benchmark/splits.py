"""Trials and inner folds of deepNF's protocol (Gligorijevic, Barot &
Bonneau 2018): each trial holds out a fraction of the annotated genes,
seeded; inner K-fold CV on the trial's training genes chooses the
hyperparameters. Genes without a label never appear in a trial (they stay
in the networks).
"""

from __future__ import annotations

import numpy as np
from sklearn.model_selection import KFold

from biokernels.errors import InputError
from biokernels.seeds import check_seed

__all__ = ["trial_splits", "inner_folds"]


def trial_splits(annotated: np.ndarray, n_trials: int, test_fraction: float, seed: int
                 ) -> list[tuple[np.ndarray, np.ndarray]]:
    """Seeded train/test splits of the annotated genes.

    Parameters
    ----------
    annotated : bool array (n,)
        Genes with at least one term.
    n_trials : int >= 1
    test_fraction : float in (0, 1)
        Share of the annotated genes held out per trial (rounded to the
        nearest gene, at least 1).
    seed : int >= 0
        Trial ``t`` permutes with ``default_rng([seed, t])``, so a trial does
        not depend on how many others are run.

    Returns
    -------
    list of (train, test) sorted int arrays of gene indices, disjoint, their
    union the annotated genes.

    Raises
    ------
    InputError
        Fewer than 2 annotated genes, ``n_trials < 1`` or ``test_fraction``
        outside (0, 1).
    """
    idx = np.flatnonzero(np.asarray(annotated, dtype=bool))
    if idx.size < 2:
        raise InputError(f"need at least 2 annotated genes for a split, found {idx.size}")
    if int(n_trials) < 1:
        raise InputError(f"n_trials must be >= 1, got {n_trials}")
    if not 0 < float(test_fraction) < 1:
        raise InputError(f"test_fraction must lie in (0, 1), got {test_fraction}")
    n_test = min(max(1, int(round(test_fraction * idx.size))), idx.size - 1)
    out = []
    for t in range(int(n_trials)):
        perm = np.random.default_rng([check_seed(seed), t]).permutation(idx)
        out.append((np.sort(perm[n_test:]), np.sort(perm[:n_test])))
    return out


def inner_folds(n_train: int, n_folds: int, seed: int, trial: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """K-fold split of positions ``0..n_train-1`` of a trial's training genes
    (scikit-learn ``KFold``, shuffled with ``random_state`` drawn from
    ``default_rng([seed, trial, 1])``). Returns (fit, validation) position
    arrays; raises InputError when ``n_folds < 2`` or above ``n_train``."""
    if not 2 <= int(n_folds) <= n_train:
        raise InputError(f"inner_folds must be in 2..{n_train}, got {n_folds}")
    rs = int(np.random.default_rng([check_seed(seed), trial, 1]).integers(2 ** 31))
    return list(KFold(int(n_folds), shuffle=True, random_state=rs).split(np.zeros(n_train)))
