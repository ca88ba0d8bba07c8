"""Viability of every unmeasured (compound, target cell line) pair of the
DepMap study, by the protocol's own models (transfer paper, Methods "DepMap
analysis"): the CMAP source model imputes the pairs' expression
(:func:`~biokernels.studies.depmap.protocol.impute_expression`), and the
projection (or baseline) model, trained per stratum on every measured pair
at the ridge ``depmap_projection`` chose, predicts their viability.

Each prediction has a split-conformal interval from the model's
cross-validated residuals over the protocol's folds
(:mod:`biokernels.conformal`), one half-width per stratum, whose coverage
is measured on a fold held out of the whole procedure, and its compound's
nearest measured compound (Tanimoto). Notes: docs/depmap_notes.md, section
"Predictions for unmeasured pairs".
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from biokernels.conformal import conformal_half_width, interval_coverage
from biokernels.errors import InputError
from biokernels.metrics import r2_score
from biokernels.studies.depmap.projection import ProjectionData, _response
from biokernels.studies.depmap.protocol import MODELS, krr_on_gram, ntk_gram

STRATA = ("seen", "unseen")


def unmeasured_pairs(targets: pd.DataFrame) -> pd.DataFrame:
    """Every (compound, target cell line) pair the viability table lacks, for
    the compounds and cell lines it has.

    Parameters
    ----------
    targets : the measured pairs (``drug_key``, ``cell_id``, ``stratum``;
        :func:`biokernels.io.depmap.prepare_targets`)

    Returns
    -------
    DataFrame indexed ``drug_key:cell_id`` with ``drug_key``, ``cell_id``,
    ``stratum`` (the compound's, which does not depend on the cell line),
    ``fold`` -1 and ``viability`` NaN; sorted by cell line, then compound.
    """
    stratum = targets.drop_duplicates("drug_key").set_index("drug_key")["stratum"]
    cells = sorted(targets["cell_id"].unique())
    grid = pd.MultiIndex.from_product([cells, sorted(stratum.index)], names=["cell_id", "drug_key"])
    measured = pd.MultiIndex.from_arrays([targets["cell_id"], targets["drug_key"]])
    new = grid.difference(measured).to_frame(index=False)
    new = new.sort_values(["cell_id", "drug_key"]).reset_index(drop=True)
    new.index = pd.Index(new["drug_key"] + ":" + new["cell_id"], name=targets.index.name or "pair_id")
    return new.assign(stratum=stratum.loc[new["drug_key"]].to_numpy(), fold=-1, viability=np.nan)[
        ["drug_key", "cell_id", "stratum", "fold", "viability"]]


def _oof(K, y_full: np.ndarray, rows: np.ndarray, fold: np.ndarray, lam: float) -> np.ndarray:
    """Out-of-fold predictions of kernel ridge on the Gram ``K`` for the
    pairs at positions ``rows`` (``y_full``: targets at every position of
    ``K``, read at ``rows`` only), over their folds ``fold``."""
    out = np.full(len(rows), np.nan)
    for k in np.unique(fold):
        tr, te = np.flatnonzero(fold != k), np.flatnonzero(fold == k)
        if len(tr):
            out[te] = krr_on_gram(K, y_full, rows[tr], rows[te], lam)
    return out


def predict_viability(data: ProjectionData, new: pd.DataFrame, model: str, lam: float, level: float, cfg: dict,
                      device="cpu", check_fold: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Fit ``model`` per stratum on every measured pair and predict ``new``.

    Parameters
    ----------
    data : :class:`~biokernels.studies.depmap.projection.ProjectionData`
        whose ``imputed`` covers the measured pairs and ``new``
    new : from :func:`unmeasured_pairs`
    model : ``projection`` or ``baseline``; lam : its absolute ridge
    level : nominal coverage of the intervals, in (0, 1)
    cfg : the projection settings (``projection_input``, ``kernel``)
    check_fold : the fold held out of the whole procedure to measure coverage

    Returns
    -------
    (predictions, calibration): ``predictions`` indexed like ``new`` with
    ``drug_key``, ``cell_id``, ``stratum``, ``viability``, ``half_width``,
    ``lower``, ``upper``; ``calibration`` one row per stratum with
    ``n_train``, ``n_predicted``, ``cv_r2``, ``half_width``, ``level``,
    ``check_fold``, ``n_check``, ``check_coverage``.

    Raises
    ------
    InputError
        Unknown model.
    """
    if model not in MODELS:
        raise InputError(f"depmap.predict.model: expected one of {list(MODELS)}, got {model!r}")
    parts, rows = [], []
    for s in STRATA:
        t, n = data.targets[data.targets["stratum"] == s], new[new["stratum"] == s]
        fold = t["fold"].to_numpy()
        row = {"stratum": s, "n_train": len(t), "n_predicted": len(n), "cv_r2": np.nan, "half_width": np.inf,
               "level": level, "check_fold": check_fold, "n_check": 0, "check_coverage": np.nan}
        if len(np.unique(fold)) < 2:
            rows.append(row)
            if len(n):
                parts.append(n.assign(viability=np.nan, half_width=np.inf))
            continue
        both = pd.concat([t[["drug_key", "cell_id"]], n[["drug_key", "cell_id"]]])
        K = ntk_gram(data.inputs(both, _response(cfg))[model], cfg["kernel"], device)
        y = t["viability"].to_numpy(np.float64)
        y_full = np.concatenate([y, np.zeros(len(n))])       # the new pairs' entries are never read
        m = np.arange(len(t))
        oof = _oof(K, y_full, m, fold, lam)
        q = float(conformal_half_width(y - oof, level))
        keep, out = fold != check_fold, fold == check_fold
        row.update(cv_r2=float(r2_score(y, oof)), half_width=q, n_check=int(out.sum()))
        if out.any() and len(np.unique(fold[keep])) >= 2:
            q_check = conformal_half_width(y[keep] - _oof(K, y_full, m[keep], fold[keep], lam), level)
            pred_out = krr_on_gram(K, y_full, m[keep], m[out], lam)
            row["check_coverage"] = interval_coverage(y[out], pred_out, q_check)
        rows.append(row)
        if len(n):
            pred = krr_on_gram(K, y_full, m, np.arange(len(t), len(both)), lam)
            parts.append(n.assign(viability=pred, half_width=q))
    cols = ["drug_key", "cell_id", "stratum", "viability", "half_width"]
    out = pd.concat(parts).loc[new.index, cols] if parts else pd.DataFrame(columns=cols)
    out["lower"], out["upper"] = out["viability"] - out["half_width"], out["viability"] + out["half_width"]
    return out, pd.DataFrame(rows)
