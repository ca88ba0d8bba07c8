"""Algorithm S2 of PIMKL on a large cohort (:func:`run_s2`): ``folds``
random splits with ``per_class`` training samples per class
(:func:`s2_splits`) and a fixed EasyMKL λ ``easymkl_lam`` (paper 100 folds,
20 per class, 0.2), on mRNA, CNA or both (all kernels in one mixture), and the
*transferred* signature (median weights of the other cohorts) used with KOMD
(Figures 5, 6 and S4)."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score
from sklearn.preprocessing import StandardScaler

from biokernels.errors import InputError
from biokernels.kernels.pathway import induce_pathways, normalize_trace, pathway_kernels

log = logging.getLogger(__name__)


@dataclass
class S2Result:
    """Tables of :func:`run_s2`.

    Attributes
    ----------
    aucs : DataFrame ``fold, omics, weights, auc, n_train, n_test`` (``omics``
        in mrna/cna/both, ``weights`` trained/transferred; fold 1-based)
    weights : DataFrame ``fold, omics, kernel, pathway, data_type, weight``
        (trained EasyMKL weights; ``kernel`` = ``<pathway>|<data_type>``)
    """

    aucs: pd.DataFrame
    weights: pd.DataFrame


def s2_splits(y, folds: int, per_class: int, seed: int, cohort: str = "<cohort>") -> list[tuple[np.ndarray, np.ndarray]]:
    """Training/validation splits of Algorithm S2: ``per_class`` random
    training samples of each class, all others for validation.

    Returns
    -------
    list of (train_idx, test_idx), sorted indices

    Raises
    ------
    InputError
        If a class has no more than ``per_class`` samples (cohort named).
    """
    y = np.asarray(y)
    rng = np.random.default_rng(seed)
    classes, counts = np.unique(y, return_counts=True)
    if classes.size < 2 or counts.min() <= per_class:
        raise InputError(f"cohort {cohort!r}: Algorithm S2 needs more than {per_class} samples of each class "
                         f"for training and validation, got {dict(zip(classes.tolist(), counts.tolist()))}")
    out = []
    for _ in range(folds):
        tr = np.sort(np.concatenate([rng.choice(np.flatnonzero(y == c), per_class, replace=False)
                                     for c in classes]))
        out.append((tr, np.setdiff1d(np.arange(len(y)), tr)))
    return out


def run_s2(omics: dict[str, pd.DataFrame], y, edges: pd.DataFrame, gene_sets: dict[str, list[str]], *,
           cohort: str = "<cohort>", folds: int = 100, per_class: int = 20, easymkl_lam: float = 0.2,
           modes: dict[str, list[str]] | None = None, transferred: pd.Series | None = None,
           kernel_aggregation: str = "sum", seed: int = 0, min_genes: int = 2) -> S2Result:
    """Algorithm S2 (Supplementary; Section 3.2, Figures 5, 6, S4) on one large cohort.

    Per fold (:func:`s2_splits`): each data type is standardized on the
    training samples (line 3), its pathway kernels are computed and
    trace-normalized; for each mode (a list of data types, e.g. ``mrna``,
    ``cna``, ``both = [mrna, cna]``: all kernels in one mixture, Section 2.2),
    EasyMKL(``easymkl_lam``) weights and its KOMD classifier (lines 4-6). With
    ``transferred`` (a signature over pathway names, e.g. the median weights
    of other cohorts), KOMD(``easymkl_lam``) on the mRNA kernels combined with those
    weights is scored too (Figure 5: pathways without a transferred weight get
    0; the weights are renormalized to sum 1).

    Parameters
    ----------
    omics : dict data_type -> DataFrame (n, genes), same sample order
        E.g. ``{"mrna": X, "cna": C}``.
    y : (n,) 0/1
    edges, gene_sets :
        Network and gene sets (pathways are induced per data type).
    cohort : str
    folds, per_class : int
        Paper: 100, 20.
    easymkl_lam : float in [0, 1]
        EasyMKL's λ (also its KOMD's). Paper: 0.2.
    modes : dict mode -> list of data types, optional
        Default: each data type alone, plus ``both`` (all) when there are
        several.
    transferred : Series pathway -> weight, optional
    kernel_aggregation : {"sum", "mean"}
    seed, min_genes : int

    Returns
    -------
    S2Result

    Raises
    ------
    InputError
        Mismatched samples, a mode naming an absent data type, too few
        samples per class, no kernel, no overlap of the transferred signature
        with the mRNA pathways.
    """
    from biokernels.kernels.pathway import omics_kernel_names
    from biokernels.solvers.easymkl import KOMD, EasyMKL

    yv = np.asarray(y).astype(int)
    types = list(omics)
    for t, X in omics.items():
        if len(X) != len(yv):
            raise InputError(f"cohort {cohort!r}: data type {t!r} has {len(X)} samples, labels {len(yv)}")
        if X.isna().to_numpy().any():
            raise InputError(f"cohort {cohort!r}: data type {t!r} has missing values")
    if modes is None:
        modes = {t: [t] for t in types}
        if len(types) > 1:
            modes["both"] = types
    for m, ts in modes.items():
        bad = [t for t in ts if t not in omics]
        if bad:
            raise InputError(f"cohort {cohort!r}: mode {m!r} names data type(s) {bad}, not in {types}")
    induced = {}
    for t, X in omics.items():
        pws, _ = induce_pathways(edges, gene_sets, list(X.columns), min_genes=min_genes)
        if not pws:
            raise InputError(f"cohort {cohort!r}: data type {t!r}: no gene set gives a kernel")
        induced[t] = pws
    w_tr = None
    if transferred is not None and "mrna" in induced:
        names = [p.name for p in induced["mrna"]]
        w_tr = transferred.reindex(names).fillna(0.0).to_numpy(float)
        if not w_tr.sum() > 0:
            raise InputError(f"cohort {cohort!r}: the transferred signature shares no weighted pathway with "
                             f"the mRNA pathways")
        w_tr = w_tr / w_tr.sum()
    auc_rows, w_rows = [], []
    for k, (tr, te) in enumerate(s2_splits(yv, folds, per_class, seed, cohort)):
        Ktr, Kte = {}, {}
        for t, X in omics.items():
            Xv = X.to_numpy(float)
            sc = StandardScaler().fit(Xv[tr])
            A, B = sc.transform(Xv[tr]), sc.transform(Xv[te])
            Ktr[t], fac = normalize_trace(pathway_kernels(A, induced[t], genes=list(X.columns)))
            Kte[t], _ = normalize_trace(pathway_kernels(B, induced[t], X_other=A, genes=list(X.columns)), fac)
        base = {"fold": k + 1, "n_train": len(tr), "n_test": len(te)}
        for m, ts in modes.items():
            Ka = np.concatenate([Ktr[t] for t in ts])
            Kb = np.concatenate([Kte[t] for t in ts])
            mkl = EasyMKL(lam=easymkl_lam, kernel_aggregation=kernel_aggregation, psd_tol=None).fit(Ka, yv[tr])
            auc_rows.append({**base, "omics": m, "weights": "trained",
                             "auc": float(roc_auc_score(yv[te], mkl.decision_function(Kb)))})
            kern = [n for t in ts for n in omics_kernel_names(induced[t], t)]
            w_rows.append(pd.DataFrame({"fold": k + 1, "omics": m, "kernel": kern,
                                        "pathway": [n.rsplit("|", 1)[0] for n in kern],
                                        "data_type": [n.rsplit("|", 1)[1] for n in kern], "weight": mkl.weights_}))
        if w_tr is not None:
            clf = KOMD(lam=easymkl_lam, psd_tol=None).fit(np.tensordot(w_tr, Ktr["mrna"], axes=1), yv[tr])
            s = clf.decision_function(np.tensordot(w_tr, Kte["mrna"], axes=1))
            auc_rows.append({**base, "omics": "mrna", "weights": "transferred", "auc": float(roc_auc_score(yv[te], s))})
    aucs = pd.DataFrame(auc_rows)[["fold", "omics", "weights", "auc", "n_train", "n_test"]]
    aucs.insert(0, "cohort", cohort)
    weights = pd.concat(w_rows, ignore_index=True)
    weights.insert(0, "cohort", cohort)
    log.info("cohort %s: S2 mean AUC %s", cohort,
             aucs.groupby(["omics", "weights"])["auc"].mean().round(3).to_dict())
    return S2Result(aucs, weights)
