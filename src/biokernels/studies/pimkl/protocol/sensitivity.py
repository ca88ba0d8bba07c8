"""PIMKL controls: randomized gene sets (:func:`random_gene_sets`, Figure
S2: sets of random size 50-250 drawn from the union of all sets) and S1 with
each alternative of a modelling choice (:func:`run_sensitivity`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from biokernels.studies.pimkl.protocol.s1 import run_s1


def random_gene_sets(gene_sets: dict[str, list[str]], seed: int, size_range: tuple[int, int] = (50, 250),
                     prefix: str = "RANDOM_") -> dict[str, list[str]]:
    """Randomized gene sets (Figure S2): as many sets as ``gene_sets``, each of
    a uniformly random size in ``size_range`` (inclusive; capped at the union
    size), drawn without replacement from the union of all sets.

    Parameters
    ----------
    gene_sets : dict name -> genes
    seed : int
    size_range : (int, int)
    prefix : str
        Names are ``<prefix>001``...

    Returns
    -------
    dict name -> sorted list of genes

    Raises
    ------
    ValueError
        Empty ``gene_sets`` or a bad size range.
    """
    lo, hi = int(size_range[0]), int(size_range[1])
    if not gene_sets or lo < 1 or hi < lo:
        raise ValueError(f"need gene sets and 1 <= size_range[0] <= size_range[1], got {size_range}")
    union = np.array(sorted(set().union(*map(set, gene_sets.values()))), dtype=object)
    rng = np.random.default_rng(seed)
    width = max(3, len(str(len(gene_sets))))
    out = {}
    for k in range(len(gene_sets)):
        size = min(int(rng.integers(lo, hi + 1)), len(union))
        out[f"{prefix}{k + 1:0{width}d}"] = sorted(rng.choice(union, size=size, replace=False).tolist())
    return out


#: The modelling choices of the sensitivity table: (variant, the S1 option it
#: changes, its value); the reference is the paper's choice.
SENSITIVITY_VARIANTS = (
    ("reference", None, None),
    ("classifier_svm", "classifier", "svm"),
    ("aggregation_mean", "kernel_aggregation", "mean"),
    ("criterion_auc", "criterion", "auc"),
    ("collapse_mean", "collapse", "mean"),
)


def run_sensitivity(load, cohorts: list[str], edges: pd.DataFrame, gene_sets: dict[str, list[str]],
                    s1_kwargs: dict, variants=SENSITIVITY_VARIANTS, reference: dict | None = None) -> pd.DataFrame:
    """S1 with each alternative of a modelling choice (the sensitivity table).

    Parameters
    ----------
    load : callable (cohort, collapse) -> (X, y, has_probes)
        Reads a cohort with a probe-collapse method.
    cohorts : list of str
    edges, gene_sets :
    s1_kwargs : dict
        Keyword arguments of :func:`run_s1` shared by all variants (repeats,
        folds, seed, ...; ``baselines`` is forced False).
    variants : sequence of (name, option, value)
        ``option`` is a :func:`run_s1` keyword or ``"collapse"``; None = the
        reference.
    reference : dict, optional
        The reference choices: ``classifier``, ``kernel_aggregation``,
        ``criterion``, ``collapse`` (default: the paper's komd / sum /
        accuracy / max_mean).

    Returns
    -------
    DataFrame ``variant, option, value, cohort, n_folds, mean_auc,
    median_auc, sd_auc, applicable`` (``applicable`` False, AUCs NaN, for a
    probe-collapse variant on a cohort without probes).
    """
    ref = {"classifier": "komd", "kernel_aggregation": "sum", "criterion": "accuracy", "collapse": "max_mean"}
    ref.update(reference or {})
    rows = []
    for name, option, value in variants:
        opts = dict(ref)
        if option is not None:
            opts[option] = value
        for c in cohorts:
            X, y, has_probes = load(c, opts["collapse"])
            row = {"variant": name, "option": option or "", "value": "" if value is None else str(value),
                   "cohort": c}
            if option == "collapse" and not has_probes:
                rows.append({**row, "n_folds": 0, "mean_auc": np.nan, "median_auc": np.nan, "sd_auc": np.nan,
                             "applicable": False})
                continue
            kw = {**s1_kwargs, "baselines": False, "classifier": opts["classifier"],
                  "kernel_aggregation": opts["kernel_aggregation"], "criterion": opts["criterion"]}
            a = run_s1(X, y, edges, gene_sets, cohort=c, **kw).aucs["auc"]
            rows.append({**row, "n_folds": len(a), "mean_auc": float(a.mean()), "median_auc": float(a.median()),
                         "sd_auc": float(a.std(ddof=1)) if len(a) > 1 else np.nan, "applicable": True})
    return pd.DataFrame(rows)
