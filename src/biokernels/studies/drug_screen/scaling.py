"""Metrics against the number of target training samples (Radhakrishnan et
al. 2023, Fig. 4c-d: the scaling law of the transfer predictors), as the
``drug_screen_scaling`` rule runs it on one target cell line: the size grid
each stratum shares across the target cell lines (:func:`shared_sizes`) and
the nested subsamples per fold and seed (:func:`scaling_cell`), together
:func:`scaling_target`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from biokernels.metrics import pearson_r_centred, pearson_r_paper, per_sample_cosine, per_sample_r2
from biokernels.scaling import log_spaced_sizes
from biokernels.studies.drug_screen.protocol import ScreenData, _stratum, _take, fit_predict_target

#: Columns of a scaling table (:func:`scaling_cell`, :func:`scaling_target`).
COLUMNS = ["cell_id", "stratum", "n_train", "seed", "fold", "model", "r2", "cosine", "pearson_r_paper",
           "pearson_r_centred"]


def training_sizes(folds: pd.DataFrame, targets: list[str], stratum: str) -> pd.Series:
    """Training pairs per fold of each target cell line in one stratum.

    Parameters
    ----------
    folds : the target rows of the folds table (``cell_id``, ``stratum``,
        ``fold`` in 0..k-1); k is its largest fold + 1
    targets : target cell lines (the index of the result, in this order)
    stratum : ``seen`` or ``unseen``

    Returns
    -------
    Series (int) over ``targets``: ``floor(m (k - 1) / k)`` for a line with
    ``m`` pairs of ``stratum`` (0 for a line with none), the size of its
    smallest training split under balanced folds.
    """
    k = folds["fold"].max() + 1
    sub = folds[folds["stratum"] == stratum]
    return np.floor(sub.groupby("cell_id").size().reindex(targets).fillna(0) * (k - 1) / k).astype(int)


def shared_sizes(n_train: pd.Series, n_min: int, n_points: int) -> tuple[list[str], list[int]]:
    """The size grid one stratum shares across the target cell lines, so that
    its curves average over the same n.

    Parameters
    ----------
    n_train : from :func:`training_sizes`
    n_min, n_points : the config's ``drug_screen.scaling`` keys: smallest
        size and number of sizes

    Returns
    -------
    (eligible, sizes) : the lines with at least ``n_min + n_points - 1``
    training pairs (in the order of ``n_train``), and ``n_points`` distinct
    sizes from ``n_min`` to the smallest of their training sizes, evenly
    spaced in log2 (:func:`biokernels.scaling.log_spaced_sizes`); ``([], [])``
    when no line is eligible.
    """
    eligible = n_train[n_train >= n_min + n_points - 1]
    if eligible.empty:
        return [], []
    return list(eligible.index), log_spaced_sizes(int(eligible.min()), n_points, n_min=n_min)


def scaling_target(data: ScreenData, f_s: pd.DataFrame, source_mean: np.ndarray, targets: list[str], cell: str,
                   lams: dict[str, float], scaling: dict, seed: int, kernel_params: dict | None = None,
                   device="cpu", log=None) -> pd.DataFrame:
    """The scaling table of one target cell line (Fig. 4c-d), both strata.

    Per stratum, the sizes are those :func:`shared_sizes` gives over every
    target line; a line with too few pairs for them is left out of that
    stratum's curve (a warning), and the others get :func:`scaling_cell`
    with seeds ``seed .. seed + scaling["seeds"] - 1``.

    Parameters
    ----------
    data, f_s, source_mean : as for :func:`scaling_cell`
    targets : every target cell line (rank order); cell : one of them
    lams : dict model -> absolute ridge
    scaling : the config's ``drug_screen.scaling`` (``n_min``, ``n_points``,
        ``seeds``)
    seed : int; kernel_params, device : of the NTK
    log : logging.Logger, optional

    Returns
    -------
    DataFrame with the columns :data:`COLUMNS` (seen rows, then unseen; none
    when the line is eligible for neither stratum).

    Raises
    ------
    ValueError
        ``scaling["n_min"] < 1`` or ``n_points < 2``
        (:func:`biokernels.scaling.log_spaced_sizes`).
    """
    folds = data.folds[data.folds["role"] == "target"]
    seeds = [seed + i for i in range(scaling["seeds"])]
    tables = []
    for stratum in ("seen", "unseen"):
        n_train = training_sizes(folds, targets, stratum)
        eligible, sizes = shared_sizes(n_train, scaling["n_min"], scaling["n_points"])
        if cell not in eligible:
            if log is not None:
                log.warning("%s %s: %d training pairs per fold, too few for %d sizes from %d; this line is left "
                            "out of the %s curve", cell, stratum, n_train[cell], scaling["n_points"],
                            scaling["n_min"], stratum)
            continue
        if log is not None:
            log.info("%s %s: sizes %s (shared by %s)", cell, stratum, sizes, eligible)
        tables.append(scaling_cell(data, f_s, source_mean, cell, lams, sizes, seeds, kernel_params, device,
                                   strata=(stratum,)))
    return pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(columns=COLUMNS)


def scaling_cell(data: ScreenData, f_s: pd.DataFrame, source_mean: np.ndarray, cell: str,
                 lams: dict[str, float], sizes: list[int], seeds: list[int], kernel_params: dict | None = None,
                 device="cpu", models=("mean", "baseline", "projection_translation"),
                 strata=("seen", "unseen")) -> pd.DataFrame:
    """Metrics against the number of target training samples (Fig. 4c-d).

    For each stratum, fold k, size n and seed, ``n`` pairs are drawn from the
    training folds (``numpy.random.default_rng(seed + 1000 k)``), each model
    is fitted on them and scored on fold k. Sizes larger than the training
    folds are skipped.

    Returns
    -------
    DataFrame ``cell_id``, ``stratum``, ``n_train``, ``seed``, ``fold``,
    ``model``, ``r2``, ``cosine``, ``pearson_r_paper``, ``pearson_r_centred``
    (see :mod:`biokernels.metrics`).
    """
    rows = []
    for stratum in strata:
        sel, fold, _, fs, feats, Y = _stratum(data, f_s, source_mean, cell, stratum)
        if len(sel) < 2:
            continue
        for k in np.unique(fold):
            tr_all, te = np.flatnonzero(fold != k), np.flatnonzero(fold == k)
            for seed in seeds:
                order = np.random.default_rng(seed + 1000 * int(k)).permutation(tr_all)
                for n in sizes:
                    if n > len(tr_all):
                        continue
                    tr = order[:n]
                    centre = Y[tr].mean(axis=0)
                    for m in models:
                        p = fit_predict_target(m, _take(feats, tr), Y[tr], fs[tr], _take(feats, te), fs[te],
                                               lams.get(m, 0.0), kernel_params, device)
                        rows.append({"cell_id": cell, "stratum": stratum, "n_train": n, "seed": seed, "fold": int(k),
                                     "model": m, "r2": per_sample_r2(p, Y[te]).mean(),
                                     "cosine": per_sample_cosine(p, Y[te], centre).mean(),
                                     "pearson_r_paper": pearson_r_paper(p, Y[te]),
                                     "pearson_r_centred": pearson_r_centred(p, Y[te])})
    return pd.DataFrame(rows)
