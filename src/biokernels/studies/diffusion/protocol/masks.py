"""A split's examples: training and test masks (restricted to the annotated
proteins with ``unannotated: exclude``), their rows and label blocks, and the
targets of Eq. 13.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def split_masks(train_mask: np.ndarray, eval_mask: np.ndarray | None = None
                ) -> tuple[np.ndarray, np.ndarray]:
    """Training and test masks of a split, restricted to ``eval_mask``.

    Parameters
    ----------
    train_mask : bool array (n,)
        The split's training proteins (the others are its test proteins).
    eval_mask : bool array (n,), optional
        Proteins that are examples at all (None: every protein).

    Returns
    -------
    train, test : bool arrays (n,), disjoint.

    Raises
    ------
    ValueError
        If the masks differ in length, or no protein is left in train or test.
    """
    train_mask = np.asarray(train_mask, bool)
    if eval_mask is None:
        return train_mask, ~train_mask
    eval_mask = np.asarray(eval_mask, bool)
    if eval_mask.shape != train_mask.shape:
        raise ValueError(f"eval_mask has shape {eval_mask.shape}, the split {train_mask.shape}")
    train, test = train_mask & eval_mask, ~train_mask & eval_mask
    if not train.any() or not test.any():
        raise ValueError(f"no annotated protein left in the {'training' if not train.any() else 'test'} "
                         "set of this split (unannotated: exclude)")
    return train, test


def split_rows(Y: pd.DataFrame, train_mask: np.ndarray, eval_mask: np.ndarray | None = None):
    """The split's masks, row indices and label blocks, as every evaluation
    of a split starts (:func:`split_masks`, then the rows).

    Returns
    -------
    train_mask, test_mask : bool arrays (n,); train, test : int arrays of row
    indices; Yv : (n, t) labels; ytr, yte : (len(train), t), (len(test), t).

    Raises
    ------
    ValueError
        As :func:`split_masks`.
    """
    train_mask, test_mask = split_masks(train_mask, eval_mask)
    train, test = np.flatnonzero(train_mask), np.flatnonzero(test_mask)
    Yv = Y.to_numpy()
    return train_mask, test_mask, train, test, Yv, Yv[train], Yv[test]


def annotated_mask(Y: pd.DataFrame) -> np.ndarray:
    """Proteins with at least one annotation among the tasks: bool (n,)."""
    return (Y.to_numpy() != 0).any(axis=1)


def target_matrix(Y: np.ndarray, train: np.ndarray) -> np.ndarray:
    """Targets a^(k) of Eq. 13: +1 / -1 on training proteins, 0 on test ones.

    Parameters
    ----------
    Y : array of 0/1, shape (n, t)
    train : bool array, shape (n,)

    Returns
    -------
    array, shape (n, t), float64
    """
    return np.where(train[:, None], 2.0 * Y - 1.0, 0.0)
