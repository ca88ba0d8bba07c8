"""What every cohort layout shares: the 5-year relapse label
(:func:`five_year_labels`), the probe collapse (:func:`collapse_probes`) and
the missing-value check of an expression matrix.

The label follows the paper's benchmark (PIMKL, Manica et al. 2019; Cun &
Froehlich 2013; Table S1 "rfs <= 5 years" vs "> 5 years"): event within the
horizon -> 1, follow-up beyond it -> 0, censored within it or no endpoint ->
excluded and counted. The default collapse keeps each gene's probe of
highest mean (WGCNA's "MaxMean", genefu's ``geneid.map``). The reasons are
in docs/io_readers_notes.md ("Cohorts").
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from biokernels.errors import InputError

__all__ = ["COLLAPSE_METHODS", "FIVE_YEARS_DAYS", "collapse_probes", "five_year_labels"]

log = logging.getLogger(__name__)

#: 5 years in days (5 x 365.25, floored): the PIMKL / Cun & Froehlich horizon.
FIVE_YEARS_DAYS = 1826.0

COLLAPSE_METHODS = ("max_mean", "mean")


def five_year_labels(time: pd.Series, event: pd.Series, horizon: float = FIVE_YEARS_DAYS,
                     origin: str = "<clinical>") -> tuple[pd.Series, dict[str, int]]:
    """Binary "relapse within ``horizon``" labels from survival data.

    Parameters
    ----------
    time : Series, float (days), indexed by sample
    event : Series, 0/1 (1 = relapse / metastasis observed), same index
    horizon : float
        Days; 1826 by default.
    origin : str
        File name for error messages.

    Returns
    -------
    labels : Series of int64 (0/1), indexed by the kept samples, in input order
        1 = event at time <= horizon; 0 = time > horizon.
    counts : dict
        ``samples``, ``positive``, ``negative``,
        ``censored_before_horizon`` (no event, time <= horizon: excluded),
        ``no_endpoint`` (time or event missing: excluded).

    Raises
    ------
    InputError
        If an event is not 0/1 or a time is negative (the sample is named).
    """
    t = pd.to_numeric(time, errors="coerce")
    e = pd.to_numeric(event, errors="coerce")
    missing = t.isna() | e.isna()
    bad_e = ~missing & ~e.isin([0, 1])
    if bad_e.any():
        raise InputError(f"{origin}: sample {bad_e.idxmax()!r}: event must be 0 or 1, got {event[bad_e.idxmax()]!r}")
    bad_t = ~missing & (t < 0)
    if bad_t.any():
        raise InputError(f"{origin}: sample {bad_t.idxmax()!r}: negative survival time {t[bad_t.idxmax()]}")
    pos = ~missing & (e == 1) & (t <= horizon)
    neg = ~missing & (t > horizon)
    censored = ~missing & (e == 0) & (t <= horizon)
    labels = pd.Series(np.where(pos, 1, 0), index=time.index, dtype="int64")[pos | neg]
    counts = {"samples": int(len(t)), "positive": int(pos.sum()), "negative": int(neg.sum()),
              "censored_before_horizon": int(censored.sum()), "no_endpoint": int(missing.sum())}
    if counts["censored_before_horizon"] or counts["no_endpoint"]:
        log.info("%s: excluded %d sample(s) censored before %g days and %d without endpoint",
                 origin, counts["censored_before_horizon"], horizon, counts["no_endpoint"])
    return labels, counts


def collapse_probes(expr: pd.DataFrame, probe_to_gene: pd.Series | dict[str, str],
                    method: str = "max_mean") -> tuple[pd.DataFrame, dict[str, int]]:
    """Collapse a samples x probes matrix to samples x genes.

    Parameters
    ----------
    expr : DataFrame, shape (n_samples, n_probes), float
    probe_to_gene : Series or dict, probe -> gene symbol
        Probes absent from it or mapped to ``""``/NaN are dropped.
    method : {"max_mean", "mean"}
        ``"max_mean"``: per gene, the probe with the highest mean over the
        samples (ties: first probe in column order); ``"mean"``: average of
        the gene's probes.

    Returns
    -------
    X : DataFrame, shape (n_samples, n_genes), float64, genes sorted
    counts : dict
        ``probes``, ``probes_without_gene``, ``genes``,
        ``genes_with_several_probes``, ``probes_collapsed`` (probes not
        kept as their gene's value, or averaged into it).

    Raises
    ------
    ValueError
        If ``method`` is unknown or no probe maps to a gene.
    """
    if method not in COLLAPSE_METHODS:
        raise ValueError(f"collapse method {method!r}: expected one of {COLLAPSE_METHODS}")
    genes = pd.Series(probe_to_gene).reindex(expr.columns)
    genes = genes.where(genes.notna() & (genes.astype(str).str.strip() != ""))
    mapped = genes.notna().to_numpy()
    if not mapped.any():
        raise ValueError("no probe maps to a gene symbol")
    sub = expr.loc[:, mapped].astype(float)
    g = genes[mapped].astype(str).str.strip()
    if method == "mean":
        X = sub.T.groupby(g.to_numpy()).mean().T
    else:
        means = sub.mean(axis=0)
        order = pd.DataFrame({"gene": g.to_numpy(), "mean": means.to_numpy(), "pos": np.arange(len(g))})
        best = order.sort_values(["gene", "mean", "pos"], ascending=[True, False, True]).drop_duplicates("gene")
        X = sub.iloc[:, best["pos"].to_numpy()]
        X.columns = best["gene"].to_numpy()
    X = X.sort_index(axis=1)
    X.columns.name = None
    per_gene = g.value_counts()
    counts = {"probes": int(expr.shape[1]), "probes_without_gene": int((~mapped).sum()),
              "genes": int(X.shape[1]), "genes_with_several_probes": int((per_gene > 1).sum()),
              "probes_collapsed": int(mapped.sum() - X.shape[1])}
    return X, counts


def _check_nan(X: pd.DataFrame, origin: str, nan_policy: str) -> tuple[pd.DataFrame, int]:
    if nan_policy not in ("error", "drop"):
        raise ValueError(f"nan_policy {nan_policy!r}: expected 'error' or 'drop'")
    inf = np.isinf(X.to_numpy(dtype=float, na_value=np.nan))
    if inf.any():
        r, c = (int(v[0]) for v in np.nonzero(inf))
        raise InputError(f"{origin}: sample {X.index[r]!r}, column {X.columns[c]!r}: infinite value "
                         "(expected a finite number)")
    bad = X.isna().any(axis=1)
    if bad.any() and nan_policy == "error":
        s = bad.idxmax()
        gene = X.loc[s].isna().idxmax()
        raise InputError(f"{origin}: sample {s!r}, column {gene!r}: missing value "
                         f"({int(bad.sum())} sample(s) have missing values; expected a number)")
    if bad.any():
        log.warning("%s: dropped %d sample(s) with missing expression values", origin, int(bad.sum()))
    return X[~bad], int(bad.sum())
