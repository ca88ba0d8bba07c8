"""Tables of the DepMap study (SI Fig. S9), from the per-fold results of
:mod:`biokernels.studies.depmap.protocol`; pandas only, so the figure rule needs no torch."""

from __future__ import annotations

import numpy as np
import pandas as pd

from biokernels.errors import InputError


def _sd(v) -> float:
    return float(np.std(v, ddof=1)) if len(v) > 1 else np.nan


def s9a_table(scaling: pd.DataFrame, first: int = 10) -> pd.DataFrame:
    """SI Fig. S9a: R² against the number of target samples, per stratum and
    model, averaged over folds and seeds, with the law ``a log2(n) + b``
    fitted to each curve (:func:`biokernels.scaling.fit_log2_law`), its R²,
    and the error when the fit on the first ``first`` points predicts the
    last (paper: 76 points, R² 0.994, last point within 0.03 from the first
    10).

    Parameters
    ----------
    scaling : DataFrame ``stratum``, ``n_train``, ``seed``, ``fold``,
        ``model``, ``r2`` (:func:`biokernels.studies.depmap.protocol.scaling_curve`)
    first : int

    Returns
    -------
    DataFrame ``stratum``, ``model``, ``n_train``, ``mean``, ``sd`` (over
    folds x seeds), ``n_runs``, ``a``, ``b``, ``fit_r2``, ``n_points``,
    ``pred_last``, ``abs_error_last``.

    Raises
    ------
    InputError
        The table is empty (no stratum had enough pairs).
    """
    from biokernels.scaling import extrapolation_error, fit_log2_law

    if scaling.empty:
        raise InputError("DepMap scaling: no curve (no stratum had enough target pairs for the sizes)")
    curve = scaling.groupby(["stratum", "model", "n_train"])["r2"].agg(
        mean="mean", sd=_sd, n_runs="size").reset_index()
    rows = []
    for (_, _), c in curve.groupby(["stratum", "model"], sort=False):
        c = c.sort_values("n_train")
        fit = fit_log2_law(c["n_train"], c["mean"]) if len(c) >= 3 else {"a": np.nan, "b": np.nan, "r2": np.nan}
        ext = (extrapolation_error(c["n_train"], c["mean"], first) if len(c) > first
               else {"predicted": np.nan, "abs_error": np.nan})
        rows.append(c.assign(a=fit["a"], b=fit["b"], fit_r2=fit["r2"], n_points=len(c), pred_last=ext["predicted"],
                             abs_error_last=ext["abs_error"]))
    return pd.concat(rows, ignore_index=True)


def s9b_table(genes: pd.DataFrame) -> pd.DataFrame:
    """SI Fig. S9b: R² of projection against the number of genes the source
    predicts, per stratum, averaged over folds and seeds.

    Parameters
    ----------
    genes : DataFrame ``stratum``, ``n_genes``, ``seed``, ``fold``, ``r2``

    Returns
    -------
    DataFrame ``stratum``, ``n_genes``, ``mean``, ``sd``, ``n_runs``.
    """
    if genes.empty:
        raise InputError("DepMap genes curve: empty (no stratum had enough target pairs)")
    return genes.groupby(["stratum", "n_genes"])["r2"].agg(mean="mean", sd=_sd, n_runs="size").reset_index()


def featurization_table(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Featurizations compared: for each featurization's S9a table, R² at the
    largest target size per stratum and model, and the gain of projection
    over the baseline at the smallest and largest sizes.

    Parameters
    ----------
    tables : dict featurization -> :func:`s9a_table` output

    Returns
    -------
    DataFrame ``featurization``, ``stratum``, ``model``, ``n_small``,
    ``r2_small``, ``n_full``, ``r2_full``, ``fit_r2``.
    """
    rows = []
    for feat, t in tables.items():
        for (stratum, model), c in t.groupby(["stratum", "model"], sort=False):
            c = c.sort_values("n_train")
            rows.append({"featurization": feat, "stratum": stratum, "model": model,
                         "n_small": int(c["n_train"].iloc[0]), "r2_small": float(c["mean"].iloc[0]),
                         "n_full": int(c["n_train"].iloc[-1]), "r2_full": float(c["mean"].iloc[-1]),
                         "fit_r2": float(c["fit_r2"].iloc[0])})
    return pd.DataFrame(rows)
