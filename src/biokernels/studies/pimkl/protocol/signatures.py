"""PIMKL signatures (Section 3.1): the median weight per pathway over the
folds (:func:`median_signature`), the significance of each pathway's weight
against the equal-weight baseline ``1/P`` (one-sample Wilcoxon signed-rank,
Benjamini-Hochberg; :func:`signature_tests`, Figure S3), and the tables
across cohorts: :func:`significance_table` (Figure 3b) and
:func:`signature_correlation` (Figure 4)."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

log = logging.getLogger(__name__)


def median_signature(weights: pd.DataFrame) -> pd.DataFrame:
    """Median weight per (cohort, pathway) over the folds: the molecular
    signature (Section 3.1).

    Parameters
    ----------
    weights : DataFrame ``cohort, pathway, weight`` (one row per fold)

    Returns
    -------
    DataFrame, pathways x cohorts (NaN where a cohort has no kernel for it)
    """
    return weights.groupby(["pathway", "cohort"], sort=False)["weight"].median().unstack("cohort")


def signature_tests(weights: pd.DataFrame, alpha: float = 0.001) -> pd.DataFrame:
    """Per cohort and pathway, is the weight above the equal-weight baseline?
    (Section 3.1, Figure S3.)

    For each cohort with ``P`` pathways (kernels), each pathway's weights over
    the folds are tested against ``w_b = 1/P`` with a one-sample Wilcoxon
    signed-rank test (``scipy.stats.wilcoxon(w - 1/P, alternative="greater")``;
    zero differences: scipy's default ``zero_method="wilcox"``), and the
    p-values are Benjamini-Hochberg adjusted (``statsmodels`` ``multipletests``,
    ``"fdr_bh"``) over the ``m <= P`` pathways that have one. A pathway whose
    p-value is NaN (a NaN weight in a fold) keeps a NaN adjusted p-value, is
    not significant and does not count in ``m``; such pathways are counted
    and logged (warning, cohort and pathway names) and the counts are columns
    of the table. A pathway is significant when its adjusted p-value is
    ``<= alpha`` (BH's rejection) and its median weight is above ``1/P`` (the
    paper tests "the distribution of the kernel weights with median above
    w_b"; with the one-sided test the two agree except in degenerate cases).

    Parameters
    ----------
    weights : DataFrame ``cohort, pathway, weight`` (+ any fold columns)
    alpha : float
        Paper: 0.001.

    Returns
    -------
    DataFrame ``cohort, pathway, n_folds, median, mean, baseline, statistic,
    p_value, p_adjusted, significant`` (bool), ``n_tested`` (the cohort's
    ``m``, pathways with a p-value: BH's number of tests) and
    ``n_no_p_value`` (the cohort's pathways with a NaN p-value), in input
    order.

    Raises
    ------
    ValueError
        If a pathway has fewer weights than others of its cohort (an
        incomplete table) or alpha is not in (0, 1).
    """
    from scipy.stats import wilcoxon
    from statsmodels.stats.multitest import multipletests

    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    out = []
    for cohort, sub in weights.groupby("cohort", sort=False):
        groups = sub.groupby("pathway", sort=False)["weight"]
        sizes = groups.size()
        if sizes.nunique() > 1:
            raise ValueError(f"cohort {cohort!r}: pathways have different numbers of weights {sorted(set(sizes))}")
        P = len(sizes)
        wb = 1.0 / P
        rows = []
        for name, w in groups:
            w = w.to_numpy(float)
            d = w - wb
            if np.all(d == 0):
                stat, p = np.nan, 1.0
            else:
                res = wilcoxon(d, alternative="greater")
                stat, p = float(res.statistic), float(res.pvalue)
            rows.append({"cohort": cohort, "pathway": name, "n_folds": len(w), "median": float(np.median(w)),
                         "mean": float(w.mean()), "baseline": wb, "statistic": stat, "p_value": p})
        t = pd.DataFrame(rows)
        p = t["p_value"].to_numpy(float)
        has_p = np.isfinite(p)
        padj = np.full(len(t), np.nan)
        reject = np.zeros(len(t), bool)
        if has_p.any():
            # BH over the m tests that have a p-value: a NaN would make
            # statsmodels return NaN for every adjusted p-value of the cohort
            reject[has_p], padj[has_p], _, _ = multipletests(p[has_p], alpha=alpha, method="fdr_bh")
        n_missing = int((~has_p).sum())
        if n_missing:
            log.warning("cohort %s: %d of %d pathway(s) have no p-value (NaN, e.g. from a NaN weight): %s; "
                        "BH adjusts the other %d and these are not significant", cohort, n_missing, len(t),
                        t.loc[~has_p, "pathway"].tolist(), int(has_p.sum()))
        t["p_adjusted"] = padj
        t["significant"] = reject & (t["median"].to_numpy() > wb)
        t["n_tested"] = int(has_p.sum())
        t["n_no_p_value"] = n_missing
        out.append(t)
    return pd.concat(out, ignore_index=True)


def significance_table(tests: pd.DataFrame, min_cohorts: int = 1) -> pd.DataFrame:
    """Significant pathways across cohorts (Figure 3b).

    Parameters
    ----------
    tests : DataFrame from :func:`signature_tests` (several cohorts)
    min_cohorts : int
        Keep pathways significant in at least this many cohorts (paper: 4 of
        6); 0 keeps all.

    Returns
    -------
    DataFrame indexed by pathway: one bool column per cohort (False where a
    cohort has no kernel for the pathway), ``n_significant`` (int), sorted by
    it (descending) then name.
    """
    wide = tests.pivot(index="pathway", columns="cohort", values="significant")
    wide = wide.reindex(columns=list(dict.fromkeys(tests["cohort"])))
    wide = wide.fillna(False).astype(bool)
    wide["n_significant"] = wide.sum(axis=1).astype(int)
    wide = wide[wide["n_significant"] >= min_cohorts]
    return wide.reset_index().sort_values(["n_significant", "pathway"], ascending=[False, True]).set_index("pathway")


def signature_correlation(weights: pd.DataFrame, method: str = "pearson") -> pd.DataFrame:
    """Correlation of the median-weight signatures between cohorts (Figure 4).

    Parameters
    ----------
    weights : DataFrame ``cohort, pathway, weight``
    method : {"pearson", "spearman"}

    Returns
    -------
    DataFrame, one row per ordered pair of cohorts (including a cohort with
    itself): ``cohort_a, cohort_b, r, p_value, n_pathways`` (pathways with a
    kernel in both).

    Raises
    ------
    ValueError
        Unknown method.
    """
    from scipy.stats import pearsonr, spearmanr

    if method not in ("pearson", "spearman"):
        raise ValueError(f"method {method!r}: expected 'pearson' or 'spearman'")
    sig = median_signature(weights)
    cohorts = list(sig.columns)
    rows = []
    for a in cohorts:
        for b in cohorts:
            ok = sig[a].notna().to_numpy() & sig[b].notna().to_numpy()
            xa, xb = sig[a].to_numpy(float)[ok], sig[b].to_numpy(float)[ok]
            if ok.sum() >= 3 and xa.std() > 0 and xb.std() > 0:
                res = (pearsonr if method == "pearson" else spearmanr)(xa, xb)
                r, p = float(res[0]), float(res[1])
            else:
                r, p = np.nan, np.nan
            rows.append({"cohort_a": a, "cohort_b": b, "r": r, "p_value": p, "n_pathways": int(ok.sum())})
    return pd.DataFrame(rows)
