"""Whether expression values look like z-scores (L1000 level 4/5) rather than
log expression (:func:`looks_like_zscores`), checked on the values of the
control embedding."""

from __future__ import annotations

import numpy as np


# looks_like_zscores: thresholds of the rule (see its docstring)
Z_MAX_ABS_MEAN = 0.25
Z_SD_RANGE = (0.5, 2.0)
Z_MIN_NEGATIVE = 0.2
Z_MAX_MEAN_OVER_SD = 0.5


def _scale_stats(n: int, s1: np.ndarray, s2: np.ndarray, n_neg: np.ndarray) -> dict:
    """Summary of values from per-gene sums: ``n`` samples, ``s1``/``s2`` per-gene
    sum and sum of squares, ``n_neg`` per-gene count of negative values."""
    if n == 0 or len(s1) == 0:
        return {"n_samples": int(n), "median_abs_gene_mean": np.nan, "median_gene_sd": np.nan,
                "negative_fraction": np.nan, "mean": np.nan, "sd": np.nan}
    mean_g = s1 / n
    sd_g = np.sqrt(np.maximum(s2 / n - mean_g ** 2, 0.0))
    mean = float(s1.sum() / (n * len(s1)))
    sd = float(np.sqrt(max(s2.sum() / (n * len(s1)) - mean ** 2, 0.0)))
    return {"n_samples": int(n), "median_abs_gene_mean": float(np.median(np.abs(mean_g))),
            "median_gene_sd": float(np.median(sd_g)), "negative_fraction": float(n_neg.sum() / (n * len(s1))),
            "mean": mean, "sd": sd}


def looks_like_zscores(x=None, *, stats: dict | None = None) -> tuple[bool, dict]:
    """Whether expression values look like z-scores (L1000 level 4/5, e.g.
    MODZ signatures) rather than log expression, for the control embedding.

    Level 4/5 values are standardised against a plate or population, so a
    mean of vehicle controls is about 0 in every cell line and carries no
    cell identity; log2 expression (level 3, or log2(x+1) of linear
    intensities) is >= 0, with per-gene means of about 2-15.

    Rule (population statistics over all values, each gene over the samples):
    the values look like z-scores when either

    (a) per-gene standardised: the median over genes of ``|mean_g|`` is <=
        ``Z_MAX_ABS_MEAN`` (0.25) and the median over genes of ``sd_g`` lies
        in ``Z_SD_RANGE`` ([0.5, 2]); or
    (b) centred at 0 with negatives: at least ``Z_MIN_NEGATIVE`` (20 %) of the
        values are negative and ``|mean| <= Z_MAX_MEAN_OVER_SD * sd`` (0.5)
        over all values.

    Parameters
    ----------
    x : array-like, shape (n_samples, n_genes), optional
        The values (e.g. the control samples, or a cells x genes table).
    stats : dict, optional
        Instead of ``x``: the output of the internal per-gene sums summary
        (keys ``median_abs_gene_mean``, ``median_gene_sd``,
        ``negative_fraction``, ``mean``, ``sd``), for values streamed in chunks.

    Returns
    -------
    (flag, stats) : bool and the dict of statistics, with ``rule``: which of
    (a), (b) fired ("" when none). No values (``n_samples`` 0) -> False.
    """
    if stats is None:
        a = np.asarray(x, dtype=float)
        if a.ndim != 2:
            raise ValueError(f"looks_like_zscores: expected a 2-D samples x genes array, got shape {a.shape}")
        stats = _scale_stats(a.shape[0], a.sum(axis=0), (a ** 2).sum(axis=0), (a < 0).sum(axis=0))
    stats = dict(stats)
    if not np.isfinite(stats.get("mean", np.nan)):
        stats["rule"] = ""
        return False, stats
    rule_a = (stats["median_abs_gene_mean"] <= Z_MAX_ABS_MEAN
              and Z_SD_RANGE[0] <= stats["median_gene_sd"] <= Z_SD_RANGE[1])
    rule_b = (stats["negative_fraction"] >= Z_MIN_NEGATIVE
              and abs(stats["mean"]) <= Z_MAX_MEAN_OVER_SD * stats["sd"])
    stats["rule"] = "+".join(r for r, ok in (("a: per-gene mean ~0, sd ~1", rule_a),
                                            ("b: centred at 0 with negatives", rule_b)) if ok)
    return bool(rule_a or rule_b), stats
