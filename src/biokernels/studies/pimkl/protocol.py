"""PIMKL study: cross-validation, signatures, transfer and controls
(Manica, Cadow, Mathis & Rodriguez Martinez 2019, "PIMKL: Pathway-Induced
Multiple Kernel Learning", npj Syst. Biol. Appl. 5:8; Sections 3.1-3.2,
Supplementary Algorithms S1 and S2).

Pure library (no Snakemake). The pieces:

* :func:`run_s1` - Algorithm S1 on one cohort: ``repeats`` x stratified
  ``folds``-fold CV; per outer fold a feature-wise standardization fitted on
  the training part, pathway-induced kernels (:mod:`biokernels.kernels.pathway`)
  set to equal trace, an inner stratified ``inner_folds``-fold grid over the
  EasyMKL ``lam`` (criterion ``"accuracy"`` as in the paper, or ``"auc"``),
  EasyMKL weights on the whole training part at the chosen ``lam`` and a
  classifier on ``sum_p w_p K_p`` (KOMD as the paper and its reference code,
  or an SVM); the held-out AUC. Baselines beside it on the same folds: linear
  and RBF SVMs on all genes (C chosen on the same inner folds) and the
  equal-weight mean of the pathway kernels with the same classifier.
  The inner grid fits every lambda on one set of inner-fold kernels with the
  lambda-independent work once (:func:`fit_predict_path`) and the SVM
  baselines on one Gram matrix per outer fold (:func:`svm_baselines`);
  ``reference=True`` runs the original implementation (the same tables;
  issue #20, benchmarks/bench_pimkl.py ``s1_cohort``).
* :func:`signature_tests` - the significance of each pathway's weight over
  the folds: one-sample Wilcoxon signed-rank test against ``1/P``
  (alternative "greater"), Benjamini-Hochberg over the ``P`` pathways at
  ``alpha`` (paper 0.001; Section 3.1 and Figure S3);
  :func:`significance_table` (Figure 3b) and :func:`signature_correlation`
  (Figure 4) across cohorts.
* :func:`run_s2` - Algorithm S2 on a large cohort: ``folds`` random splits
  with ``per_class`` training samples per class and a fixed ``lam`` (paper
  100 folds, 20 per class, 0.2), on mRNA, CNA or both (all kernels in one
  mixture), and the *transferred* signature (median weights of the other
  cohorts) used with KOMD (Figures 5, 6 and S4).
* Controls: :func:`random_gene_sets` (Figure S2: sets of random size 50-250
  drawn from the union of all sets), and :func:`run_sensitivity` (S1 with
  each alternative of a modelling choice).

Data loading for the workflow: :func:`load_network`, :func:`load_cohort`.

All randomness comes from explicit integer seeds (``numpy.random.Generator``
and scikit-learn ``random_state``); the same inputs and seed give the same
tables. Labels are 0/1 with 1 = the positive ("relapse within 5 years")
class; the AUC ranks the classifier's score for class 1.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from biokernels.errors import InputError
from biokernels.kernels.pathway import induce_pathways, normalize_trace, pathway_kernels

log = logging.getLogger(__name__)

#: EasyMKL lambda grid of Algorithm S1.
LAMBDAS = (0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0)
CRITERIA = ("accuracy", "auc")
CLASSIFIERS = ("komd", "svm")
AGGREGATIONS = ("sum", "mean")
#: Method names in the AUC tables.
METHODS = ("pimkl", "pathway_mean", "svm_linear", "svm_rbf")


# ---------------------------------------------------------------------------
# data loading (workflow side)

#: The PIMKL study's defaults per network format, below the source's own
#: settings: its ``edges`` files carry a ``weight`` column (the generated
#: default network; the readers' own default is unweighted).
NETWORK_DEFAULTS = {"edges": {"weight_col": "weight"}}


def load_network(spec: dict) -> tuple[pd.DataFrame, dict]:
    """Read the interaction network of a PIMKL source.

    Parameters
    ----------
    spec : dict
        ``format``: a key of :data:`biokernels.io.networks.NETWORK_READERS`
        (``"string"``, ``"sif"``, ``"edges"``, ``"gem"``); ``path``: the file;
        every other key is a setting of that format's reader (e.g.
        ``score_threshold`` of ``"string"`` on STRING's 0-1000 scale,
        ``interaction_types`` of ``"sif"``), over :data:`NETWORK_DEFAULTS`.

    Returns
    -------
    edges : DataFrame ``protein_a < protein_b``, ``weight``
    counts : dict (the reader's counts)

    Raises
    ------
    InputError
        Unknown format (the known ones are listed), a setting the reader
        does not take, or whatever the reader raises.
    """
    from biokernels.io.networks import NETWORK_READERS
    from biokernels.registry import call, lookup

    fmt = spec.get("format")
    reader = lookup(NETWORK_READERS, fmt, "network format")
    settings = {**NETWORK_DEFAULTS.get(fmt, {}), **{k: v for k, v in spec.items() if k not in ("format", "path")}}
    return call(reader, settings, f"network ({fmt})", spec["path"])


def load_cohort(spec: dict, collapse: str = "max_mean", name: str = "<cohort>"
                ) -> tuple[pd.DataFrame, pd.Series, dict]:
    """Read one labelled cohort of a PIMKL source.

    Parameters
    ----------
    spec : dict
        ``format``: a key of :data:`biokernels.io.cohorts.COHORT_READERS`;
        every other key is a keyword argument of that format's reader:

        * ``"tsv"``: ``expression_path`` (samples x genes), ``labels_path``,
          optional ``cna_path`` (:func:`biokernels.io.cohorts.load_tsv_cohort`);
        * ``"vdxs"``: genefu vdxs files ``expression_path``,
          ``annotation_path``, ``clinical_path``, optional ``series``
          (default ``"VDX"`` = GSE2034), ``endpoint`` (default ``"rfs"``)
          (:func:`~biokernels.io.cohorts.load_vdxs_cohort`);
        * ``"arff"``: scikit-survival GSE7390 ``arff_path``, optional
          ``annotation_path`` (probe -> HUGO symbol, e.g. vdxs' annotation;
          without it the probes stay columns)
          (:func:`~biokernels.io.cohorts.load_arff_cohort`);
        * ``"geo_series_matrix"``: a GEO series matrix
          ``series_matrix_path`` and platform annotation ``platform_path``,
          the survival fields (``time_key``/``time_regex``,
          ``event_key``/``event_regex``, ``time_unit``, optional
          ``clinical_path``) and the probe and missing-value rules
          (:func:`~biokernels.io.cohorts.load_geo_series_matrix_cohort`).
    collapse : {"max_mean", "mean"}
        Probe collapse of the microarray formats (ignored for ``"tsv"``).
    name : str
        Cohort name, for messages.

    Returns
    -------
    X : DataFrame (n_samples, n_genes), float64
    y : Series int64 0/1 aligned with ``X``
    counts : dict (the reader's counts; ``"cna"``: a DataFrame aligned with
        ``X`` when the spec has ``cna_path``; ``"has_probes"``: bool)

    Raises
    ------
    InputError
        Unknown format (the known ones are listed), a key the format does
        not take, NaN values, mismatched sample ids, ... (the readers').
    """
    from biokernels.io.cohorts import COHORT_READERS
    from biokernels.registry import call, lookup

    reader = lookup(COHORT_READERS, spec.get("format"), f"cohort {name!r}: format")
    settings = {k: v for k, v in spec.items() if k != "format"}
    return call(reader, settings, f"cohort {name!r}", collapse=collapse, name=name)


# ---------------------------------------------------------------------------
# gene-set controls

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


# ---------------------------------------------------------------------------
# folds

def _check_two_classes(y_part: np.ndarray, cohort: str, where: str) -> None:
    classes = np.unique(y_part)
    if classes.size < 2:
        raise InputError(f"cohort {cohort!r}, {where}: only class {classes.tolist()} present "
                         f"(expected both classes 0 and 1; too few samples of the other class for this many folds)")


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


# ---------------------------------------------------------------------------
# one fit

def _sub(K: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    return K[:, rows[:, None], cols[None, :]]


def _score(y_true: np.ndarray, s: np.ndarray, criterion: str) -> float:
    if criterion == "auc":
        return float(roc_auc_score(y_true, s))
    return float(np.mean((s >= 0).astype(int) == y_true))


def _check_fit_predict_inputs(K_train, K_test, classifier: str):
    """The checks of :func:`fit_predict` and :func:`fit_predict_path`:
    a known classifier, K_train (P, n, n) and K_test (P, m, n) with the same
    P, and each ``K_test[p]`` a test x train kernel
    (:func:`biokernels.solvers.kernel_lists.check_predict_kernel`).
    Returns both as arrays; raises InputError."""
    from biokernels.solvers.kernel_lists import check_predict_kernel

    if classifier not in CLASSIFIERS:
        raise InputError(f"classifier {classifier!r}: expected one of {CLASSIFIERS}")
    K_train, K_test = np.asarray(K_train), np.asarray(K_test)
    if K_train.ndim != 3 or K_test.ndim != 3 or K_test.shape[0] != K_train.shape[0]:
        raise InputError(f"fit_predict: expected K_train (P, n, n) and K_test (P, m, n) with the same P, "
                         f"got {K_train.shape} and {K_test.shape}")
    for p in range(K_test.shape[0]):
        check_predict_kernel(K_test[p], K_train.shape[-1], K_train[p], name=f"fit_predict: K_test[{p}]")
    return K_train, K_test


def fit_predict(K_train: np.ndarray, K_test: np.ndarray, y: np.ndarray, lam: float, *, classifier: str = "komd",
                svm_C: float = 1.0, kernel_aggregation: str = "sum", weights: np.ndarray | None = None,
                backend: str = "numba") -> tuple[np.ndarray, np.ndarray]:
    """PIMKL(lam) on trace-normalized kernels: EasyMKL weights (or given
    ``weights``), then a classifier on ``sum_p w_p K_p`` (Algorithm S1 lines
    6-7 and 9-11).

    Parameters
    ----------
    K_train : ndarray (P, n, n)
    K_test : ndarray (P, m, n)
    y : ndarray (n,), 0/1
    lam : float in [0, 1]
        EasyMKL lambda (weights) and KOMD lambda (classifier).
    classifier : {"komd", "svm"}
        KOMD (EasyMKL's own classifier, the paper) or ``SVC(C=svm_C)``.
    svm_C : float
    kernel_aggregation : {"sum", "mean"}
        Kernel of EasyMKL's weight problem.
    weights : ndarray (P,), optional
        Fixed weights (e.g. equal, or a transferred signature): EasyMKL is
        skipped.
    backend : {"numba", "python"}
        ``"numba"``: the compiled KOMD loop and kernel sums
        (:class:`~biokernels.solvers.easymkl.EasyMKL`'s ``backend``);
        ``"python"``: the reference implementation. The same numbers.

    Returns
    -------
    scores : ndarray (m,), larger = class 1
    weights : ndarray (P,), summing to 1

    Raises
    ------
    InputError
        From EasyMKL/KOMD (one class, bad lambda, ...), unknown classifier,
        shapes other than (P, n, n) / (P, m, n), or a ``K_test[p]`` that is
        square (m = n), symmetric and not ``K_train[p]``: a test x test
        kernel where the test x train one belongs
        (:func:`biokernels.solvers.kernel_lists.check_predict_kernel`).
    """
    from biokernels.solvers.easymkl import KOMD, EasyMKL

    K_train, K_test = _check_fit_predict_inputs(K_train, K_test, classifier)
    if weights is None:
        mkl = EasyMKL(lam=lam, kernel_aggregation=kernel_aggregation, psd_tol=None, backend=backend).fit(K_train, y)
        w = mkl.weights_
        if classifier == "komd":
            return mkl.decision_function(K_test), w
    else:
        w = np.asarray(weights, float)
        w = w / w.sum()
    Ktr = np.tensordot(w, K_train, axes=1)
    Kte = np.tensordot(w, K_test, axes=1)
    if classifier == "komd":
        clf = KOMD(lam=lam, psd_tol=None, backend=backend).fit(Ktr, y)
    else:
        clf = SVC(kernel="precomputed", C=svm_C).fit(Ktr, y)
    return clf.decision_function(Kte), w


def fit_predict_path(K_train: np.ndarray, K_test: np.ndarray, y: np.ndarray, lambdas, *, classifier: str = "komd",
                     svm_C: float = 1.0, kernel_aggregation: str = "sum", weights: np.ndarray | None = None,
                     backend: str = "numba") -> list[tuple[np.ndarray, np.ndarray] | InputError]:
    """:func:`fit_predict` at every ``lam`` of ``lambdas`` on the same kernels
    (the inner grid of Algorithm S1, lines 4-8), the lambda-independent work
    done once: the kernel checks, EasyMKL's aggregated kernel and kernel
    sketches (:meth:`~biokernels.solvers.easymkl.EasyMKL.fit_path`), and with
    fixed ``weights`` the combined kernels (and the SVM, which does not
    depend on lambda).

    Entry ``j`` holds the same numbers as ``fit_predict(K_train, K_test, y,
    lambdas[j], ...)`` (the same operations in the same order; checked in
    tests/unit/test_pimkl.py), or the :class:`InputError` that call raises.

    Parameters
    ----------
    K_train : ndarray (P, n, n)
    K_test : ndarray (P, m, n)
    y : ndarray (n,), 0/1
    lambdas : sequence of float in [0, 1]
    classifier, svm_C, kernel_aggregation, weights, backend :
        As :func:`fit_predict`.

    Returns
    -------
    list, one entry per lambda: ``(scores (m,), weights (P,))`` or the
    :class:`InputError` of that lambda (e.g. EasyMKL cannot weight: every
    kernel blind to the labels; a kernel or label error is the entry of
    every lambda).

    Raises
    ------
    InputError
        A lambda outside [0, 1].
    """
    from biokernels.solvers.easymkl import KOMD, EasyMKL, weighted_kernel_sum
    from biokernels.solvers.kernel_lists import check_test_kernel_list

    lambdas = [float(lam) for lam in lambdas]
    bad = [lam for lam in lambdas if not 0.0 <= lam <= 1.0]
    if bad:
        raise InputError(f"lambdas must be in [0, 1], got {bad}")
    try:
        K_train, K_test = _check_fit_predict_inputs(K_train, K_test, classifier)
        if weights is None:
            models = EasyMKL(kernel_aggregation=kernel_aggregation, psd_tol=None,
                             backend=backend).fit_path(K_train, y, lambdas)
            ok = next((m for m in models if not isinstance(m, InputError)), None)
            if ok is None:
                return models
            if classifier == "komd":
                # EasyMKL.decision_function's checks, once (the same float64 arrays), and its
                # combination bit for bit (weighted_kernel_sum: compiled on the float64 stack)
                Kte = check_test_kernel_list(K_test, ok.n_kernels_, ok.n_train_, ok.train_sketches_)
                if K_test.dtype == np.float64:
                    Kte = K_test
                return [m if isinstance(m, InputError)
                        else (m.komd_.decision_function(weighted_kernel_sum(Kte, m.weights_)), m.weights_)
                        for m in models]
            out = []
            for m in models:
                if isinstance(m, InputError):
                    out.append(m)
                    continue
                clf = SVC(kernel="precomputed", C=svm_C).fit(np.tensordot(m.weights_, K_train, axes=1), y)
                out.append((clf.decision_function(np.tensordot(m.weights_, K_test, axes=1)), m.weights_))
            return out
        w = np.asarray(weights, float)
        w = w / w.sum()
        Ktr = np.tensordot(w, K_train, axes=1)
        Kte = np.tensordot(w, K_test, axes=1)
        if classifier == "komd":
            return [(clf.decision_function(Kte), w)
                    for clf in KOMD(psd_tol=None, backend=backend).fit_path(Ktr, y, lambdas)]
        # the SVM on fixed weights does not depend on lambda (deterministic libsvm): fitted once
        s = SVC(kernel="precomputed", C=svm_C).fit(Ktr, y).decision_function(Kte)
        return [(s, w) for _ in lambdas]
    except InputError as err:
        return [err for _ in lambdas]


def _inner_kernels(K: np.ndarray, inner: list) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per inner fold ``(a, b)``: the kernels of the inner training part
    ``a`` and of ``b`` x ``a``, trace-normalized on ``a`` (shapes (P, |a|, |a|)
    and (P, |b|, |a|))."""
    out = []
    for a, b in inner:
        Ka, f = normalize_trace(_sub(K, a, a))
        Kb, _ = normalize_trace(_sub(K, b, a), f)
        out.append((Ka, Kb))
    return out


def _choose_lambda(K: np.ndarray, y: np.ndarray, inner: list, lambdas, criterion: str, classifier: str,
                   svm_C: float, aggregation: str, weights: np.ndarray | None = None, *,
                   inner_kernels: list | None = None, reference: bool = False) -> tuple[float, np.ndarray]:
    """Inner grid (Algorithm S1 lines 4-8): mean criterion per lambda over the
    inner folds, argmax (first of ties).

    ``reference=True``: the original loop, one :func:`fit_predict` per (inner
    fold, lambda) with the pure-Python KOMD loop; otherwise
    :func:`fit_predict_path` per inner fold (same numbers) on
    ``inner_kernels`` (:func:`_inner_kernels`; computed when None).
    """
    scores = np.zeros((len(inner), len(lambdas)))
    if reference:
        for i, (a, b) in enumerate(inner):
            Ka, f = normalize_trace(_sub(K, a, a))
            Kb, _ = normalize_trace(_sub(K, b, a), f)
            for j, lam in enumerate(lambdas):
                try:
                    s, _ = fit_predict(Ka, Kb, y[a], lam, classifier=classifier, svm_C=svm_C,
                                       kernel_aggregation=aggregation, weights=weights, backend="python")
                except InputError as err:  # e.g. every kernel blind to the labels on this inner part
                    log.warning("inner fold %d, lambda %g: %s; scored as -inf", i + 1, lam, err)
                    scores[i, j] = -np.inf
                    continue
                scores[i, j] = _score(y[b], s, criterion)
    else:
        if inner_kernels is None:
            inner_kernels = _inner_kernels(K, inner)
        for i, ((a, b), (Ka, Kb)) in enumerate(zip(inner, inner_kernels)):
            res = fit_predict_path(Ka, Kb, y[a], lambdas, classifier=classifier, svm_C=svm_C,
                                   kernel_aggregation=aggregation, weights=weights)
            for j, (lam, r) in enumerate(zip(lambdas, res)):
                if isinstance(r, InputError):  # e.g. every kernel blind to the labels on this inner part
                    log.warning("inner fold %d, lambda %g: %s; scored as -inf", i + 1, lam, r)
                    scores[i, j] = -np.inf
                    continue
                scores[i, j] = _score(y[b], r[0], criterion)
    mean = scores.mean(axis=0)
    return float(lambdas[int(np.argmax(mean))]), mean


def svm_baselines(Xtr: np.ndarray, ytr: np.ndarray, Xte: np.ndarray, inner: list, C_grid, criterion: str,
                  kinds=("linear", "rbf")) -> dict[str, tuple[np.ndarray, float]]:
    """The linear and RBF SVM baselines of Algorithm S1 on precomputed Gram
    matrices: per kind, C chosen on the inner folds, the SVM refitted on the
    whole training part, its test scores.

    The same models as ``GridSearchCV(SVC(kernel=kind, gamma="scale"),
    {"C": C_grid}, cv=inner, scoring=...)`` on the features (the reference
    path of :func:`run_s1`): libsvm solves the same problem from the Gram
    matrix of the same samples; ``gamma="scale"`` is ``1 / (n_features *
    X.var())`` of each fit's own training rows (the inner part, then the
    whole training part), as scikit-learn computes it; the inner score per
    C and fold as its scorers (accuracy of ``predict``, or ROC AUC of
    ``decision_function``), the mean over the folds (``np.average``) and the
    first best C (GridSearchCV's rank "min" and argmin). One Gram matrix
    ``Xtr Xtr'`` (and ``Xte Xtr'``) per outer fold serves both kinds and
    every fit, where GridSearchCV evaluates the kernel on ``n_features``-long
    rows inside libsvm for each of its ``len(C_grid) * len(inner) + 1`` fits
    (2,300 genes here against ~100 samples). The kernel values differ from
    libsvm's own by rounding only (~1e-16 relative); the tables of the
    default data are identical (tests/unit/test_pimkl.py checks one cohort).

    Parameters
    ----------
    Xtr : ndarray (n, genes), standardized on the training part
    ytr : ndarray (n,), 0/1
    Xte : ndarray (m, genes)
    inner : list of (a, b) index arrays into ``Xtr``
    C_grid : sequence of float
    criterion : {"accuracy", "auc"}
    kinds : subset of ("linear", "rbf")

    Returns
    -------
    dict kind -> (scores (m,): the refitted SVM's decision values on
    ``Xte``, the chosen C)

    Raises
    ------
    InputError
        An unknown kind or criterion.
    """
    bad = [k for k in kinds if k not in ("linear", "rbf")]
    if bad or criterion not in CRITERIA:
        raise InputError(f"svm_baselines: kinds must be 'linear'/'rbf' and criterion one of {CRITERIA}, "
                         f"got {list(kinds)}, {criterion!r}")
    G = Xtr @ Xtr.T
    Gte = Xte @ Xtr.T
    if "rbf" in kinds:
        sq_tr = np.einsum("ij,ij->i", Xtr, Xtr)
        D = sq_tr[:, None] + sq_tr[None, :] - 2.0 * G
        Dte = np.einsum("ij,ij->i", Xte, Xte)[:, None] + sq_tr[None, :] - 2.0 * Gte

    def gamma_scale(X_fit: np.ndarray) -> float:                      # sklearn's gamma="scale"
        var = X_fit.var()
        return 1.0 / (X_fit.shape[1] * var) if var != 0 else 1.0

    C_grid = [float(C) for C in C_grid]
    out = {}
    for kind in kinds:
        scores = np.zeros((len(C_grid), len(inner)))
        for i, (a, b) in enumerate(inner):
            if kind == "linear":
                Ka, Kb = G[np.ix_(a, a)], G[np.ix_(b, a)]
            else:
                g = gamma_scale(Xtr[a])
                Ka, Kb = np.exp(-g * D[np.ix_(a, a)]), np.exp(-g * D[np.ix_(b, a)])
            for c, C in enumerate(C_grid):
                clf = SVC(kernel="precomputed", C=C).fit(Ka, ytr[a])
                if criterion == "auc":
                    scores[c, i] = float(roc_auc_score(ytr[b], clf.decision_function(Kb)))
                else:                                              # accuracy_score: mean of the matches
                    scores[c, i] = float(np.mean(clf.predict(Kb) == ytr[b]))
        mean = np.average(scores, axis=1)
        best = int(np.flatnonzero(mean == np.nanmax(mean))[0]) if np.isfinite(mean).any() else 0
        if kind == "linear":
            Ktr, Kte = G, Gte
        else:
            g = gamma_scale(Xtr)
            Ktr, Kte = np.exp(-g * D), np.exp(-g * Dte)
        clf = SVC(kernel="precomputed", C=C_grid[best]).fit(Ktr, ytr)
        out[kind] = (clf.decision_function(Kte), C_grid[best])
    return out


def _inner_splits(y: np.ndarray, inner_folds: int, seed: int, cohort: str, where: str) -> list:
    classes, counts = np.unique(y, return_counts=True)
    if counts.min() < inner_folds:
        raise InputError(f"cohort {cohort!r}, {where}: class {classes[counts.argmin()]} has {counts.min()} "
                         f"training samples, fewer than the {inner_folds} inner folds")
    skf = StratifiedKFold(inner_folds, shuffle=True, random_state=seed)
    return [(a, b) for a, b in skf.split(np.zeros(len(y)), y)]


# ---------------------------------------------------------------------------
# Algorithm S1

@dataclass
class S1Result:
    """Tables of :func:`run_s1`.

    Attributes
    ----------
    aucs : DataFrame, one row per (repeat, fold, method)
        ``cohort, repeat, fold, method, auc, lam`` (``lam``: the chosen
        lambda; NaN for the SVMs, whose chosen C is in ``C``), ``C``,
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
           lambdas=LAMBDAS, criterion: str = "accuracy", classifier: str = "komd", svm_C: float = 1.0,
           kernel_aggregation: str = "sum", baselines: bool = True, baseline_C_grid=(0.01, 0.1, 1.0, 10.0),
           seed: int = 0, min_genes: int = 2, reference: bool = False) -> S1Result:
    """Algorithm S1 (Supplementary; Section 3.1, Figures 3a, S1, S3) on one cohort.

    For each of ``repeats`` x stratified ``folds``-fold outer splits: a
    :class:`~sklearn.preprocessing.StandardScaler` fitted on the training part
    (line 3); pathway-induced kernels ``X_p L_p Z_p^T`` of the standardized
    data, trace-normalized on the training part (S.1); ``lam`` chosen by an
    inner stratified ``inner_folds``-fold grid over ``lambdas`` on the
    training part by ``criterion`` (lines 4-8; inner kernels are re-trace-
    normalized on each inner training part); EasyMKL at the chosen ``lam`` on
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
    lambdas : sequence of float in [0, 1]
        Paper: :data:`LAMBDAS`.
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
    if criterion not in CRITERIA:
        raise InputError(f"criterion {criterion!r}: expected one of {CRITERIA}")
    if classifier not in CLASSIFIERS:
        raise InputError(f"classifier {classifier!r}: expected one of {CLASSIFIERS}")
    if kernel_aggregation not in AGGREGATIONS:
        raise InputError(f"kernel_aggregation {kernel_aggregation!r}: expected one of {AGGREGATIONS}")
    bad = [lam for lam in lambdas if not 0.0 <= float(lam) <= 1.0]
    if bad:
        raise InputError(f"lambdas must be in [0, 1], got {bad}")
    backend = "python" if reference else "numba"
    if not isinstance(X, pd.DataFrame):
        raise InputError(f"cohort {cohort!r}: X must be a DataFrame with gene columns")
    yv = np.asarray(y).astype(int)
    if len(yv) != len(X):
        raise InputError(f"cohort {cohort!r}: {len(X)} samples but {len(yv)} labels")
    if X.isna().to_numpy().any():
        raise InputError(f"cohort {cohort!r}: X has missing values (read it with the cohort readers)")
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
        lam, _ = _choose_lambda(Ktr_raw, yv[tr], inner, lambdas, criterion, classifier, svm_C, kernel_aggregation,
                                inner_kernels=inner_K, reference=reference)
        try:
            s, w = fit_predict(Ktr, Kte, ytr, lam, classifier=classifier, svm_C=svm_C,
                               kernel_aggregation=kernel_aggregation, backend=backend)
            fallback = False
        except InputError as err:
            # degenerate data (e.g. a few 2-gene pathways): EasyMKL cannot
            # weight; equal weights are used and flagged in the table
            log.warning("cohort %s %s: EasyMKL failed (%s); equal weights used", cohort, where, err)
            s, w = fit_predict(Ktr, Kte, ytr, lam, classifier=classifier, svm_C=svm_C, weights=np.ones(P),
                               backend=backend)
            fallback = True
        auc_rows.append({**base, "method": "pimkl", "auc": float(roc_auc_score(yte, s)), "lam": lam, "C": np.nan,
                         "equal_weight_fallback": fallback})
        w_rows.append(pd.DataFrame({"cohort": cohort, "repeat": r + 1, "fold": f + 1, "pathway": names,
                                    "weight": w}))
        if baselines:
            eq = np.full(P, 1.0 / P)
            lam_eq, _ = _choose_lambda(Ktr_raw, yv[tr], inner, lambdas, criterion, classifier, svm_C,
                                       kernel_aggregation, weights=eq, inner_kernels=inner_K, reference=reference)
            s, _ = fit_predict(Ktr, Kte, ytr, lam_eq, classifier=classifier, svm_C=svm_C, weights=eq,
                               backend=backend)
            auc_rows.append({**base, "method": "pathway_mean", "auc": float(roc_auc_score(yte, s)),
                             "lam": lam_eq, "C": svm_C if classifier == "svm" else np.nan})
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
                                 "lam": np.nan, "C": float(C)})
        log.info("cohort %s %s: lambda %.1f, PIMKL AUC %.3f", cohort, where, lam, auc_rows[-1 - 3 * baselines]["auc"])
    aucs = pd.DataFrame(auc_rows)
    aucs["equal_weight_fallback"] = aucs["equal_weight_fallback"].astype("boolean").fillna(False).astype(bool)
    aucs = aucs[["cohort", "repeat", "fold", "method", "auc", "lam", "C", "n_train", "n_test", "equal_weight_fallback"]]
    table = table.reset_index().assign(cohort=cohort)
    return S1Result(aucs, pd.concat(w_rows, ignore_index=True), table)


# ---------------------------------------------------------------------------
# signatures

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


# ---------------------------------------------------------------------------
# Algorithm S2

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
           cohort: str = "<cohort>", folds: int = 100, per_class: int = 20, lam: float = 0.2,
           modes: dict[str, list[str]] | None = None, transferred: pd.Series | None = None,
           kernel_aggregation: str = "sum", seed: int = 0, min_genes: int = 2) -> S2Result:
    """Algorithm S2 (Supplementary; Section 3.2, Figures 5, 6, S4) on one large cohort.

    Per fold (:func:`s2_splits`): each data type is standardized on the
    training samples (line 3), its pathway kernels are computed and
    trace-normalized; for each mode (a list of data types, e.g. ``mrna``,
    ``cna``, ``both = [mrna, cna]``: all kernels in one mixture, Section 2.2),
    EasyMKL(``lam``) weights and its KOMD classifier (lines 4-6). With
    ``transferred`` (a signature over pathway names, e.g. the median weights
    of other cohorts), KOMD(``lam``) on the mRNA kernels combined with those
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
    lam : float
        Paper: 0.2.
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
            mkl = EasyMKL(lam=lam, kernel_aggregation=kernel_aggregation, psd_tol=None).fit(Ka, yv[tr])
            auc_rows.append({**base, "omics": m, "weights": "trained",
                             "auc": float(roc_auc_score(yv[te], mkl.decision_function(Kb)))})
            kern = [n for t in ts for n in omics_kernel_names(induced[t], t)]
            w_rows.append(pd.DataFrame({"fold": k + 1, "omics": m, "kernel": kern,
                                        "pathway": [n.rsplit("|", 1)[0] for n in kern],
                                        "data_type": [n.rsplit("|", 1)[1] for n in kern], "weight": mkl.weights_}))
        if w_tr is not None:
            clf = KOMD(lam=lam, psd_tol=None).fit(np.tensordot(w_tr, Ktr["mrna"], axes=1), yv[tr])
            s = clf.decision_function(np.tensordot(w_tr, Kte["mrna"], axes=1))
            auc_rows.append({**base, "omics": "mrna", "weights": "transferred", "auc": float(roc_auc_score(yv[te], s))})
    aucs = pd.DataFrame(auc_rows)[["fold", "omics", "weights", "auc", "n_train", "n_test"]]
    aucs.insert(0, "cohort", cohort)
    weights = pd.concat(w_rows, ignore_index=True)
    weights.insert(0, "cohort", cohort)
    log.info("cohort %s: S2 mean AUC %s", cohort,
             aucs.groupby(["omics", "weights"])["auc"].mean().round(3).to_dict())
    return S2Result(aucs, weights)


# ---------------------------------------------------------------------------
# sensitivity

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
    """S1 with each alternative of a modelling choice (issue #8 sensitivity table).

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


def read_weights(paths: list[str | Path]) -> pd.DataFrame:
    """Concatenate per-cohort weight tables (TSV) written by the workflow."""
    return pd.concat([pd.read_csv(p, sep="\t") for p in paths], ignore_index=True)
