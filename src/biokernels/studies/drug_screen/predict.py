"""Imputed responses of a compound library on the target cell lines: the
virtual screen itself (Radhakrishnan et al. 2023, Results: "training models
on existing experimental data to then impute the effect of drugs on cell
lines for which there was no experimental data").

The protocol's own steps (:mod:`biokernels.studies.drug_screen.protocol`):
:func:`with_library` adds the library's unmeasured (compound, target cell
line) pairs; the source model, fitted on every source pair, predicts them
(:func:`source_predictions`); per target cell line :func:`predict_cell`
fits the chosen target predictor per stratum on every measured pair and
imputes the library, with per-gene split-conformal intervals
(:mod:`biokernels.conformal`) from its cross-validated residuals and their
coverage on a fold held out of the whole procedure.

Notes: docs/drug_screen_notes.md, section "Predictions for the user's compounds".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from biokernels.conformal import conformal_half_width, interval_coverage
from biokernels.errors import InputError
from biokernels.metrics import mean_r2
from biokernels.studies.drug_screen.protocol import (KERNEL_MODELS, ScreenData, _take, fit_predict_target,
                                                     source_mean, transfer_features, unit_rows)

STRATA = ("seen", "unseen")


def library_features(screen_features: pd.DataFrame, library: pd.DataFrame | None, where: str) -> pd.DataFrame:
    """The library's compounds and their features (compounds x features).

    Parameters
    ----------
    screen_features : DataFrame, the screen's drug features (the
        fingerprints or Mol2Vec table the models use), index = pert_id
    library : DataFrame of the user's compounds (the same features, index =
        compound id), or None: every compound of ``screen_features``
    where : the config key of the library, for messages

    Returns
    -------
    DataFrame, one row per library compound, columns of ``screen_features``

    Raises
    ------
    InputError
        Other feature columns, or an id of the screen with other features.
    """
    if library is None:
        return screen_features
    if list(library.columns) != list(screen_features.columns):
        raise InputError(f"{where}: the library's features ({library.shape[1]} columns) are not the screen's "
                         f"({screen_features.shape[1]}); expected the same featurization")
    shared = library.index.intersection(screen_features.index)
    differ = [c for c in shared if not np.array_equal(library.loc[c].to_numpy(), screen_features.loc[c].to_numpy())]
    if differ:
        raise InputError(f"{where}: compound id(s) {differ[:5]} are compounds of the screen with another structure; "
                         "give them new ids")
    return library


def with_library(data: ScreenData, features: pd.DataFrame, cells: list[str]) -> tuple[ScreenData, np.ndarray]:
    """The screen with the library's compounds and unmeasured pairs added.

    Parameters
    ----------
    data : the screen (:func:`~biokernels.studies.drug_screen.protocol.load_screen`)
    features : DataFrame (library compounds x features), from :func:`library_features`
    cells : target cell lines whose unmeasured pairs are added

    Returns
    -------
    (extended, added) : ``extended`` has the screen's pairs first, in their
    order and with their drug rows unchanged, then one pair ``pert:cell`` per
    library compound not measured on each cell line (``role`` ``library``,
    ``stratum`` ``seen`` when the compound is in a source pair, ``unseen``
    otherwise, ``fold`` -1, expression NaN); ``added`` their positions.
    """
    drugs = data.drugs.append(features.index.difference(data.drugs))
    new = drugs[len(data.drugs):]
    D = np.vstack([data.D, unit_rows(features.loc[new].to_numpy(np.float64), "library features")]) if len(new) \
        else data.D
    f = data.folds
    measured = set(zip(f["pert_id"], f["cell_id"]))
    in_source = set(f.loc[f["role"] == "source", "pert_id"])
    rows = [(p, c) for c in cells for p in features.index if (p, c) not in measured]
    lib = pd.DataFrame({"pert_id": [p for p, _ in rows], "cell_id": [c for _, c in rows], "role": "library",
                        "stratum": ["seen" if p in in_source else "unseen" for p, _ in rows], "fold": -1},
                       index=pd.Index([f"{p}:{c}" for p, c in rows], name=f.index.name))
    folds = pd.concat([f, lib])
    ext = ScreenData(Y=np.vstack([data.Y, np.full((len(lib), data.Y.shape[1]), np.nan)]),
                     drug_idx=np.concatenate([data.drug_idx, drugs.get_indexer(lib["pert_id"])]),
                     cell_idx=np.concatenate([data.cell_idx, data.cells.get_indexer(lib["cell_id"])]),
                     D=D, C=data.C, folds=folds, drugs=drugs, cells=data.cells, genes=data.genes)
    return ext, np.arange(len(f), len(folds))


def source_predictions(data: ScreenData, model, cells: list[str]) -> pd.DataFrame:
    """The fitted source model's predictions for every target and library
    pair of ``cells`` (pairs x genes, index = pair id; ``model`` a fitted
    :class:`~biokernels.studies.drug_screen.protocol.SourceModel`)."""
    f = data.folds
    idx = np.flatnonzero(f["cell_id"].isin(cells).to_numpy() & f["role"].isin(["target", "library"]).to_numpy())
    return pd.DataFrame(model.predict(data, idx), index=f.index[idx], columns=data.genes)


@dataclass
class CellPrediction:
    """What :func:`predict_cell` returns for one target cell line.

    Attributes
    ----------
    predicted : DataFrame (library pairs x genes), log2 expression
    pairs : DataFrame, one row per library pair: ``pert_id``, ``cell_id``, ``stratum``
    half_width : DataFrame (genes x strata), interval half-widths (inf: too
        few out-of-fold pairs of that stratum for the level)
    calibration : DataFrame, one row per stratum: ``trained_on`` (the
        stratum whose measured pairs train its model, or ``all`` when the
        stratum alone spans fewer than 2 folds), ``n_train``, ``n_cv``
        (out-of-fold residuals), ``cv_mean_r2``, ``level``, ``check_fold``,
        ``n_check`` and ``check_coverage`` (fraction of the held-out fold's
        values inside its intervals, all genes)
    """

    predicted: pd.DataFrame
    pairs: pd.DataFrame
    half_width: pd.DataFrame
    calibration: pd.DataFrame


def _cv(model, feats, Y, fs, fold, lam, kernel_params, device) -> np.ndarray:
    """Out-of-fold predictions of ``model`` over the folds ``fold`` (NaN
    rows where a fold has no training pairs)."""
    oof = np.full_like(Y, np.nan)
    for k in np.unique(fold):
        tr, te = np.flatnonzero(fold != k), np.flatnonzero(fold == k)
        if len(tr):
            oof[te] = fit_predict_target(model, _take(feats, tr), Y[tr], fs[tr], _take(feats, te), fs[te], lam,
                                         kernel_params, device)
    return oof


def _half_width(resid: np.ndarray, level: float) -> np.ndarray:
    resid = resid[~np.isnan(resid).any(axis=1)]
    return conformal_half_width(resid, level) if len(resid) else np.full(resid.shape[1], np.inf)


def predict_cell(data: ScreenData, f_s: pd.DataFrame, cell: str, model: str, lam: float, level: float,
                 kernel_params: dict | None = None, device="cpu", check_fold: int = 0) -> CellPrediction:
    """Fit the target predictor on the measured pairs of ``cell`` and
    predict its library pairs, with per-gene intervals (module docstring).

    As in the protocol (:func:`~biokernels.studies.drug_screen.protocol.cross_validate_cell`),
    each stratum has its own model: a library compound the source measured
    is predicted from the line's measured ``seen`` pairs, any other from its
    ``unseen`` pairs; a stratum spanning fewer than 2 folds borrows the
    model of all the line's measured pairs (``trained_on`` ``all``).

    Parameters
    ----------
    data : the screen with the library (:func:`with_library`)
    f_s : DataFrame (pairs x genes), source predictions of the measured and
        library pairs of ``cell`` (:func:`source_predictions`)
    cell : a target cell line
    model : one of :data:`KERNEL_MODELS`; lam : its absolute ridge
    level : nominal coverage of the intervals, in (0, 1)
    check_fold : the fold held out of the whole procedure (CV residuals and
        fit on the other folds) to measure the coverage

    Raises
    ------
    InputError
        ``cell`` has no measured pairs in at least two folds, or the model is unknown.
    """
    if model not in KERNEL_MODELS:
        raise InputError(f"drug_screen.predict.model: expected one of {list(KERNEL_MODELS)}, got {model!r}")
    f = data.folds
    cell_of, role, strata = f["cell_id"].to_numpy(), f["role"].to_numpy(), f["stratum"].to_numpy()
    measured = (cell_of == cell) & (role == "target")
    if len(np.unique(f["fold"].to_numpy()[measured])) < 2:
        raise InputError(f"target cell line {cell}: its {int(measured.sum())} measured pair(s) span fewer than "
                         "2 folds")
    mu, d, args = source_mean(data), data.Y.shape[1], (lam, kernel_params, device)
    lib_all = np.flatnonzero((cell_of == cell) & (role == "library"))
    parts, q, rows = [], {}, []
    for s in STRATA:
        sel = np.flatnonzero(measured & (strata == s))
        trained_on = s
        if len(np.unique(f["fold"].to_numpy()[sel])) < 2:
            sel, trained_on = np.flatnonzero(measured), "all"
        lib = lib_all[strata[lib_all] == s]
        fold = f["fold"].to_numpy()[sel]
        fs, fs_lib = f_s.loc[f.index[sel]].to_numpy(), f_s.loc[f.index[lib]].to_numpy()
        feats, feats_lib = transfer_features(data, sel, fs, mu), transfer_features(data, lib, fs_lib, mu)
        Y = data.Y[sel]
        # the residuals of this stratum's own pairs calibrate its intervals
        own = strata[sel] == s
        oof = _cv(model, feats, Y, fs, fold, *args)
        q[s] = _half_width((Y - oof)[own], level) if own.any() else np.full(d, np.inf)

        keep, out = fold != check_fold, (fold == check_fold) & own
        row = {"stratum": s, "trained_on": trained_on, "n_train": len(sel), "n_cv": int(own.sum()),
               "cv_mean_r2": float(mean_r2(oof[own], Y[own])) if own.any() else np.nan, "level": level,
               "check_fold": check_fold, "n_check": int(out.sum()), "check_coverage": np.nan}
        if out.any() and len(np.unique(fold[keep])) >= 2:
            inner = _cv(model, _take(feats, keep), Y[keep], fs[keep], fold[keep], *args)
            q_check = _half_width((Y[keep] - inner)[own[keep]], level)
            pred_out = fit_predict_target(model, _take(feats, keep), Y[keep], fs[keep], _take(feats, out), fs[out],
                                          *args)
            row["check_coverage"] = interval_coverage(Y[out], pred_out, q_check)
        rows.append(row)
        if len(lib):
            parts.append(pd.DataFrame(fit_predict_target(model, feats, Y, fs, feats_lib, fs_lib, *args),
                                      index=f.index[lib], columns=data.genes))
    predicted = (pd.concat(parts) if parts else pd.DataFrame(columns=data.genes, dtype=float)).loc[f.index[lib_all]]
    return CellPrediction(predicted=predicted, pairs=f.iloc[lib_all][["pert_id", "cell_id", "stratum"]].copy(),
                          half_width=pd.DataFrame(q, index=data.genes), calibration=pd.DataFrame(rows))


def compound_table(pred: CellPrediction, nearest: pd.DataFrame) -> pd.DataFrame:
    """One row per predicted pair: ``pair_id``, ``pert_id``, ``cell_id``,
    ``stratum``, ``nearest_id`` and ``tanimoto`` (the nearest compound
    measured on the cell line, ``nearest`` indexed by compound id) and
    ``median_half_width`` (the median over genes of the pair's interval)."""
    t = pred.pairs.copy()
    t["nearest_id"] = nearest.loc[t["pert_id"], "nearest_id"].to_numpy()
    t["tanimoto"] = nearest.loc[t["pert_id"], "tanimoto"].to_numpy()
    med = pred.half_width.median(axis=0)
    t["median_half_width"] = med.loc[t["stratum"]].to_numpy()
    t.index.name = "pair_id"
    return t.reset_index()


# --------------------------------------------------------------------------- files


def read_features(path) -> pd.DataFrame:
    """A feature table (compounds x features) written by the fingerprint rules."""
    t = pd.read_csv(path, sep="\t", index_col=0, dtype={0: str})
    t.index = t.index.astype(str)
    return t


def source_check(refit: pd.DataFrame, protocol: pd.DataFrame, tol: float = 1e-3) -> dict:
    """How far the refitted source model's predictions of the measured
    target pairs are from ``drug_screen_source``'s (both pairs x genes).

    The two fits solve the same system; their float32 Grams differ in the
    last bits (the BLAS blocks a larger drug matrix differently), which the
    ridge system amplifies by at most its condition number. ``tol`` = 1e-3
    of the predictions' SD is that noise at the grid's smallest ridges and
    stays two orders below the transfer models' own CV error (R2 0.95-0.99
    leaves residuals of 10-20 % of the SD).

    Returns
    -------
    dict ``n_pairs``, ``max_abs_diff``, ``relative`` (max |diff| over the
    predictions' standard deviation), ``tol``, ``same`` (``relative <= tol``)

    Raises
    ------
    ValueError
        A measured pair of ``protocol`` that ``refit`` lacks.
    """
    ids = protocol.index
    missing = ids.difference(refit.index)
    if len(missing):
        raise ValueError(f"source check: {len(missing)} measured target pair(s) were not predicted, "
                         f"e.g. {list(missing[:3])}")
    diff = np.abs(refit.loc[ids].to_numpy() - protocol.to_numpy())
    scale = float(np.std(protocol.to_numpy())) or 1.0
    mx = float(diff.max()) if diff.size else 0.0
    return {"n_pairs": int(len(ids)), "max_abs_diff": mx, "relative": mx / scale, "tol": tol,
            "same": mx / scale <= tol}


def profiles_gct(pred: CellPrediction, table: pd.DataFrame, gene_meta: pd.DataFrame | None = None):
    """The imputed profiles as a GCT (genes x library pairs, log2
    expression): column metadata the compound table's columns but
    ``pair_id``; row metadata ``half_width_seen`` and ``half_width_unseen``
    (and ``gene_meta``'s columns, e.g. the symbol)."""
    from biokernels.io.gctx import GCT

    col = table.set_index("pair_id").loc[pred.predicted.index]
    row = pred.half_width.add_prefix("half_width_")
    if gene_meta is not None:
        row = gene_meta.reindex(row.index).join(row)
    data = pred.predicted.T.copy()
    data.index = data.index.astype(str)
    row.index = row.index.astype(str)
    return GCT(data=data, row_meta=row, col_meta=col)
