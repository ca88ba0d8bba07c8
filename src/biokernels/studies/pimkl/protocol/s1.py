"""Algorithm S1 of PIMKL on one cohort (:func:`run_s1`): ``repeats`` x
stratified ``folds``-fold CV (:func:`cv_splits`); per outer fold a
standardization fitted on the training part, trace-normalized
pathway-induced kernels, an inner stratified grid over EasyMKL's λ
(``easymkl_lam``), EasyMKL weights and a classifier (KOMD or an SVM) on
``sum_p w_p K_p``, the held-out AUC; baselines on the same folds
(equal-weight mean of the pathway kernels, linear and RBF SVMs on all
genes). ``reference=True`` runs the original implementation (the same
tables).

All randomness comes from explicit integer seeds; the same inputs and seed
give the same tables."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from biokernels.errors import InputError
from biokernels.kernels.pathway import induce_pathways, normalize_trace, pathway_kernels
from biokernels.studies.pimkl.protocol.model import (AGGREGATIONS, CLASSIFIERS, CRITERIA, EASYMKL_LAMS,
                                                     _choose_easymkl_lam, _inner_kernels, fit_predict, svm_baselines)

log = logging.getLogger(__name__)


def _check_two_classes(y_part: np.ndarray, cohort: str, where: str) -> None:
    classes = np.unique(y_part)
    if classes.size < 2:
        raise InputError(f"cohort {cohort!r}, {where}: only class {classes.tolist()} present "
                         f"(expected both classes 0 and 1; too few samples of the other class for this many folds)")


def _check_options(criterion: str, classifier: str, kernel_aggregation: str, easymkl_lams) -> None:
    """InputError for an unknown criterion, classifier or aggregation, or a lambda outside [0, 1]."""
    if criterion not in CRITERIA:
        raise InputError(f"criterion {criterion!r}: expected one of {CRITERIA}")
    if classifier not in CLASSIFIERS:
        raise InputError(f"classifier {classifier!r}: expected one of {CLASSIFIERS}")
    if kernel_aggregation not in AGGREGATIONS:
        raise InputError(f"kernel_aggregation {kernel_aggregation!r}: expected one of {AGGREGATIONS}")
    bad = [lam for lam in easymkl_lams if not 0.0 <= float(lam) <= 1.0]
    if bad:
        raise InputError(f"easymkl_lams must be in [0, 1], got {bad}")


def _check_cohort(X, y, cohort: str) -> np.ndarray:
    """The labels of a cohort as int (n,); InputError unless ``X`` is a
    DataFrame without NaN and with one row per label."""
    if not isinstance(X, pd.DataFrame):
        raise InputError(f"cohort {cohort!r}: X must be a DataFrame with gene columns")
    yv = np.asarray(y).astype(int)
    if len(yv) != len(X):
        raise InputError(f"cohort {cohort!r}: {len(X)} samples but {len(yv)} labels")
    if X.isna().to_numpy().any():
        raise InputError(f"cohort {cohort!r}: X has missing values (read it with the cohort readers)")
    return yv


def cv_splits(y, repeats: int, folds: int, seed: int, cohort: str = "<cohort>"
              ) -> list[tuple[int, int, np.ndarray, np.ndarray]]:
    """Outer splits of Algorithm S1: ``repeats`` x stratified ``folds``-fold.

    Parameters
    ----------
    y : array-like (n,), 0/1
    repeats, folds : int
    seed : int
        Repeat ``r`` shuffles with ``random_state`` drawn from
        ``default_rng(seed)``.
    cohort : str
        For messages.

    Returns
    -------
    list of (repeat, fold, train_idx, test_idx), 0-based repeat/fold

    Raises
    ------
    InputError
        If a class has fewer samples than ``folds`` or a fold's training or
        test part holds one class only (cohort, repeat and fold named).
    """
    y = np.asarray(y)
    if repeats < 1 or folds < 2:
        raise ValueError(f"need repeats >= 1 and folds >= 2, got {repeats}, {folds}")
    classes, counts = np.unique(y, return_counts=True)
    if classes.size < 2:
        raise InputError(f"cohort {cohort!r}, fold 1: only class {classes.tolist()} present (expected 0 and 1)")
    if counts.min() < folds:
        raise InputError(f"cohort {cohort!r}, fold {counts.min() + 1} of {folds}: its test part would hold "
                         f"only class {int(classes[counts.argmin()] == 0)} (class {classes[counts.argmin()]} "
                         f"has {counts.min()} samples, fewer than the {folds} folds)")
    rng = np.random.default_rng(seed)
    out = []
    for r in range(repeats):
        skf = StratifiedKFold(folds, shuffle=True, random_state=int(rng.integers(2**31 - 1)))
        for f, (tr, te) in enumerate(skf.split(np.zeros(len(y)), y)):
            _check_two_classes(y[tr], cohort, f"repeat {r + 1}, fold {f + 1} (training part)")
            _check_two_classes(y[te], cohort, f"repeat {r + 1}, fold {f + 1} (test part)")
            out.append((r, f, tr, te))
    return out


def _inner_splits(y: np.ndarray, inner_folds: int, seed: int, cohort: str, where: str) -> list:
    classes, counts = np.unique(y, return_counts=True)
    if counts.min() < inner_folds:
        raise InputError(f"cohort {cohort!r}, {where}: class {classes[counts.argmin()]} has {counts.min()} "
                         f"training samples, fewer than the {inner_folds} inner folds")
    skf = StratifiedKFold(inner_folds, shuffle=True, random_state=seed)
    return [(a, b) for a, b in skf.split(np.zeros(len(y)), y)]


@dataclass
class S1Result:
    """Tables of :func:`run_s1`.

    Attributes
    ----------
    aucs : DataFrame, one row per (repeat, fold, method)
        ``cohort, repeat, fold, method, auc, easymkl_lam`` (``easymkl_lam``:
        the chosen EasyMKL/KOMD lambda; NaN for the SVMs, whose chosen C is
        in ``C``), ``C``,
        ``n_train, n_test``, ``equal_weight_fallback`` (True where EasyMKL
        could not weight the kernels, e.g. all of them blind to the labels,
        and equal weights were used; logged). repeat/fold are 1-based.
    weights : DataFrame, one row per (repeat, fold, pathway)
        ``cohort, repeat, fold, pathway, weight`` (PIMKL's EasyMKL weights,
        summing to 1 per fold).
    pathways : DataFrame
        :func:`biokernels.kernels.pathway.induce_pathways`' table (one row
        per gene set, ``kernel`` True when it gave a kernel), with ``cohort``.
    """

    aucs: pd.DataFrame
    weights: pd.DataFrame
    pathways: pd.DataFrame


def run_s1(X: pd.DataFrame, y: pd.Series | np.ndarray, edges: pd.DataFrame, gene_sets: dict[str, list[str]], *,
           cohort: str = "<cohort>", repeats: int = 10, folds: int = 10, inner_folds: int = 3,
           easymkl_lams=EASYMKL_LAMS, criterion: str = "accuracy", classifier: str = "komd", svm_C: float = 1.0,
           kernel_aggregation: str = "sum", baselines: bool = True, baseline_C_grid=(0.01, 0.1, 1.0, 10.0),
           seed: int = 0, min_genes: int = 2, reference: bool = False) -> S1Result:
    """Algorithm S1 (Supplementary; Section 3.1, Figures 3a, S1, S3) on one cohort.

    For each of ``repeats`` x stratified ``folds``-fold outer splits: a
    :class:`~sklearn.preprocessing.StandardScaler` fitted on the training part
    (line 3); pathway-induced kernels ``X_p L_p Z_p^T`` of the standardized
    data, trace-normalized on the training part (S.1); EasyMKL's λ chosen by
    an inner stratified ``inner_folds``-fold grid over ``easymkl_lams`` on the
    training part by ``criterion`` (lines 4-8; inner kernels are re-trace-
    normalized on each inner training part); EasyMKL at the chosen λ on
    the whole training part (line 9), weights recorded (line 10), AUC of the
    classifier on ``sum_p w_p K_p(train, test)`` (line 11).

    With ``baselines``, on the same folds: ``pathway_mean`` (equal weights
    ``1/P``, same classifier, its own lambda grid), ``svm_linear`` and
    ``svm_rbf`` (``gamma="scale"``) on all standardized genes with ``C``
    chosen on the same inner folds by the same criterion.

    Parameters
    ----------
    X : DataFrame (n, genes), float, no NaN
    y : Series or ndarray (n,), 0/1
    edges : DataFrame ``protein_a, protein_b, weight``
    gene_sets : dict name -> genes
    cohort : str
        Name in the tables and messages.
    repeats, folds, inner_folds : int
        Paper: 10, 10, 3.
    easymkl_lams : sequence of float in [0, 1]
        EasyMKL's λ grid. Paper: :data:`EASYMKL_LAMS`.
    criterion : {"accuracy", "auc"}
        Inner-grid criterion (paper: accuracy).
    classifier : {"komd", "svm"}
        Classifier on the combined kernel (paper: KOMD).
    svm_C : float
        C of the ``"svm"`` classifier.
    kernel_aggregation : {"sum", "mean"}
        EasyMKL weight-problem kernel.
    baselines : bool
    baseline_C_grid : sequence of float
    seed : int
    min_genes : int
        See :func:`~biokernels.kernels.pathway.induce_pathways`.
    reference : bool
        Run the original implementation (kept for the tests and
        benchmarks/bench_pimkl.py ``s1_cohort``): one EasyMKL/KOMD fit per
        (inner fold, lambda) with every check redone, the inner kernels
        computed for each of the two grids, the pure-Python KOMD loop and the
        SVM baselines by ``GridSearchCV`` on the features. The default path
        does the lambda-independent work once per inner fold
        (:func:`fit_predict_path`), shares the inner kernels between the
        PIMKL and equal-weight grids, runs the compiled KOMD loop (same
        arithmetic) and fits the SVM baselines on one precomputed Gram
        matrix per outer fold (:func:`svm_baselines`). PIMKL and
        ``pathway_mean`` rows and the weights are the same numbers on both
        paths; the SVM rows are too unless the rounding of the Gram matrices
        (~1e-16 relative to libsvm's own kernel values) changes one of
        libsvm's steps (not seen on the default data; benchmarks/bench_pimkl.py
        ``s1_cohort`` compares the tables).

    Returns
    -------
    S1Result

    Raises
    ------
    InputError
        NaN in ``X``, length mismatch, no gene set giving a kernel, a fold
        with one class (cohort and fold named), unknown option values, a
        lambda outside [0, 1].
    """
    _check_options(criterion, classifier, kernel_aggregation, easymkl_lams)
    backend = "python" if reference else "numba"
    yv = _check_cohort(X, y, cohort)
    pws, table = induce_pathways(edges, gene_sets, list(X.columns), min_genes=min_genes)
    if not pws:
        raise InputError(f"cohort {cohort!r}: no gene set gives a kernel (no network edge among the "
                         f"measured genes of any set)")
    names = [p.name for p in pws]
    P = len(pws)
    log.info("cohort %s: %d samples (%d positive), %d genes, %d of %d gene sets give a kernel",
             cohort, len(yv), int(yv.sum()), X.shape[1], P, len(gene_sets))
    Xv = X.to_numpy(float)
    genes = list(X.columns)
    splits = cv_splits(yv, repeats, folds, seed, cohort)
    rng = np.random.default_rng([seed, 1])
    auc_rows, w_rows = [], []
    for r, f, tr, te in splits:
        inner_seed = int(rng.integers(2**31 - 1))
        where = f"repeat {r + 1}, fold {f + 1}"
        scaler = StandardScaler().fit(Xv[tr])
        Xtr, Xte = scaler.transform(Xv[tr]), scaler.transform(Xv[te])
        ytr, yte = yv[tr], yv[te]
        inner = _inner_splits(ytr, inner_folds, inner_seed, cohort, where)
        Ktr_raw = pathway_kernels(Xtr, pws, genes=genes)
        Kte_raw = pathway_kernels(Xte, pws, X_other=Xtr, genes=genes)
        Ktr, fac = normalize_trace(Ktr_raw)
        Kte, _ = normalize_trace(Kte_raw, fac)
        base = {"cohort": cohort, "repeat": r + 1, "fold": f + 1, "n_train": len(tr), "n_test": len(te)}
        inner_K = None if reference else _inner_kernels(Ktr_raw, inner)
        easymkl_lam, _ = _choose_easymkl_lam(Ktr_raw, yv[tr], inner, easymkl_lams, criterion, classifier, svm_C,
                                             kernel_aggregation, inner_kernels=inner_K, reference=reference)
        try:
            s, w = fit_predict(Ktr, Kte, ytr, easymkl_lam, classifier=classifier, svm_C=svm_C,
                               kernel_aggregation=kernel_aggregation, backend=backend)
            fallback = False
        except InputError as err:
            # degenerate data (e.g. a few 2-gene pathways): EasyMKL cannot
            # weight; equal weights are used and flagged in the table
            log.warning("cohort %s %s: EasyMKL failed (%s); equal weights used", cohort, where, err)
            s, w = fit_predict(Ktr, Kte, ytr, easymkl_lam, classifier=classifier, svm_C=svm_C, weights=np.ones(P),
                               backend=backend)
            fallback = True
        auc_rows.append({**base, "method": "pimkl", "auc": float(roc_auc_score(yte, s)), "easymkl_lam": easymkl_lam,
                         "C": np.nan,
                         "equal_weight_fallback": fallback})
        w_rows.append(pd.DataFrame({"cohort": cohort, "repeat": r + 1, "fold": f + 1, "pathway": names,
                                    "weight": w}))
        if baselines:
            eq = np.full(P, 1.0 / P)
            lam_eq, _ = _choose_easymkl_lam(Ktr_raw, yv[tr], inner, easymkl_lams, criterion, classifier, svm_C,
                                            kernel_aggregation, weights=eq, inner_kernels=inner_K,
                                            reference=reference)
            s, _ = fit_predict(Ktr, Kte, ytr, lam_eq, classifier=classifier, svm_C=svm_C, weights=eq,
                               backend=backend)
            auc_rows.append({**base, "method": "pathway_mean", "auc": float(roc_auc_score(yte, s)),
                             "easymkl_lam": lam_eq, "C": svm_C if classifier == "svm" else np.nan})
            svms = None if reference else svm_baselines(Xtr, ytr, Xte, inner, baseline_C_grid, criterion)
            for kind in ("linear", "rbf"):
                if reference:
                    gs = GridSearchCV(SVC(kernel=kind, gamma="scale"), {"C": list(baseline_C_grid)},
                                      cv=inner, scoring="roc_auc" if criterion == "auc" else "accuracy")
                    gs.fit(Xtr, ytr)
                    s, C = gs.best_estimator_.decision_function(Xte), gs.best_params_["C"]
                else:
                    s, C = svms[kind]
                auc_rows.append({**base, "method": f"svm_{kind}", "auc": float(roc_auc_score(yte, s)),
                                 "easymkl_lam": np.nan, "C": float(C)})
        log.info("cohort %s %s: EasyMKL lambda %.1f, PIMKL AUC %.3f", cohort, where, easymkl_lam,
                 auc_rows[-1 - 3 * baselines]["auc"])
    aucs = pd.DataFrame(auc_rows)
    aucs["equal_weight_fallback"] = aucs["equal_weight_fallback"].astype("boolean").fillna(False).astype(bool)
    aucs = aucs[["cohort", "repeat", "fold", "method", "auc", "easymkl_lam", "C", "n_train", "n_test",
                 "equal_weight_fallback"]]
    table = table.reset_index().assign(cohort=cohort)
    return S1Result(aucs, pd.concat(w_rows, ignore_index=True), table)
