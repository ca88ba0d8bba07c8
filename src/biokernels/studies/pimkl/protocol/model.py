"""One PIMKL fit (Algorithm S1 lines 4-11): EasyMKL weights and a classifier
on ``sum_p w_p K_p`` (:func:`fit_predict`), the same at every lambda of a
grid with the lambda-independent work done once (:func:`fit_predict_path`),
the inner lambda grid, and the linear and RBF SVM baselines on precomputed
Gram matrices (:func:`svm_baselines`).

``easymkl_lam`` is EasyMKL's λ in [0, 1] (also its KOMD classifier's;
``lam`` inside :mod:`biokernels.solvers.easymkl`), not a ridge.
Labels are 0/1 with 1 = the positive class; scores rank class 1."""

from __future__ import annotations

import logging

import numpy as np
from sklearn.metrics import roc_auc_score
from sklearn.svm import SVC

from biokernels.errors import InputError
from biokernels.kernels.pathway import normalize_trace

log = logging.getLogger(__name__)


#: EasyMKL lambda grid of Algorithm S1.
EASYMKL_LAMS = (0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0)
CRITERIA = ("accuracy", "auc")
CLASSIFIERS = ("komd", "svm")
AGGREGATIONS = ("sum", "mean")
#: Method names in the AUC tables.
METHODS = ("pimkl", "pathway_mean", "svm_linear", "svm_rbf")


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


def fit_predict(K_train: np.ndarray, K_test: np.ndarray, y: np.ndarray, easymkl_lam: float, *, classifier: str = "komd",
                svm_C: float = 1.0, kernel_aggregation: str = "sum", weights: np.ndarray | None = None,
                backend: str = "numba") -> tuple[np.ndarray, np.ndarray]:
    """PIMKL(easymkl_lam) on trace-normalized kernels: EasyMKL weights (or given
    ``weights``), then a classifier on ``sum_p w_p K_p`` (Algorithm S1 lines
    6-7 and 9-11).

    Parameters
    ----------
    K_train : ndarray (P, n, n)
    K_test : ndarray (P, m, n)
    y : ndarray (n,), 0/1
    easymkl_lam : float in [0, 1]
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
        mkl = EasyMKL(lam=easymkl_lam, kernel_aggregation=kernel_aggregation, psd_tol=None,
                      backend=backend).fit(K_train, y)
        w = mkl.weights_
        if classifier == "komd":
            return mkl.decision_function(K_test), w
    else:
        w = np.asarray(weights, float)
        w = w / w.sum()
    Ktr = np.tensordot(w, K_train, axes=1)
    Kte = np.tensordot(w, K_test, axes=1)
    if classifier == "komd":
        clf = KOMD(lam=easymkl_lam, psd_tol=None, backend=backend).fit(Ktr, y)
    else:
        clf = SVC(kernel="precomputed", C=svm_C).fit(Ktr, y)
    return clf.decision_function(Kte), w


def fit_predict_path(K_train: np.ndarray, K_test: np.ndarray, y: np.ndarray, easymkl_lams, *, classifier: str = "komd",
                     svm_C: float = 1.0, kernel_aggregation: str = "sum", weights: np.ndarray | None = None,
                     backend: str = "numba") -> list[tuple[np.ndarray, np.ndarray] | InputError]:
    """:func:`fit_predict` at every ``easymkl_lam`` of ``easymkl_lams`` on the same kernels
    (the inner grid of Algorithm S1, lines 4-8), the lambda-independent work
    done once: the kernel checks, EasyMKL's aggregated kernel and kernel
    sketches (:meth:`~biokernels.solvers.easymkl.EasyMKL.fit_path`), and with
    fixed ``weights`` the combined kernels (and the SVM, which does not
    depend on lambda).

    Entry ``j`` holds the same numbers as ``fit_predict(K_train, K_test, y,
    easymkl_lams[j], ...)`` (the same operations in the same order; checked in
    tests/unit/studies/test_pimkl.py), or the :class:`InputError` that call raises.

    Parameters
    ----------
    K_train : ndarray (P, n, n)
    K_test : ndarray (P, m, n)
    y : ndarray (n,), 0/1
    easymkl_lams : sequence of float in [0, 1]
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

    easymkl_lams = [float(lam) for lam in easymkl_lams]
    bad = [lam for lam in easymkl_lams if not 0.0 <= lam <= 1.0]
    if bad:
        raise InputError(f"easymkl_lams must be in [0, 1], got {bad}")
    try:
        K_train, K_test = _check_fit_predict_inputs(K_train, K_test, classifier)
        if weights is None:
            models = EasyMKL(kernel_aggregation=kernel_aggregation, psd_tol=None,
                             backend=backend).fit_path(K_train, y, easymkl_lams)
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
                    for clf in KOMD(psd_tol=None, backend=backend).fit_path(Ktr, y, easymkl_lams)]
        # the SVM on fixed weights does not depend on lambda (deterministic libsvm): fitted once
        s = SVC(kernel="precomputed", C=svm_C).fit(Ktr, y).decision_function(Kte)
        return [(s, w) for _ in easymkl_lams]
    except InputError as err:
        return [err for _ in easymkl_lams]


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


def _choose_easymkl_lam(K: np.ndarray, y: np.ndarray, inner: list, easymkl_lams, criterion: str, classifier: str,
                        svm_C: float, aggregation: str, weights: np.ndarray | None = None, *,
                        inner_kernels: list | None = None, reference: bool = False) -> tuple[float, np.ndarray]:
    """Inner grid (Algorithm S1 lines 4-8): mean criterion per EasyMKL lambda
    (``easymkl_lams``) over the inner folds, argmax (first of ties).

    ``reference=True``: the original loop, one :func:`fit_predict` per (inner
    fold, lambda) with the pure-Python KOMD loop; otherwise
    :func:`fit_predict_path` per inner fold (same numbers) on
    ``inner_kernels`` (:func:`_inner_kernels`; computed when None).
    """
    scores = np.zeros((len(inner), len(easymkl_lams)))
    if reference:
        for i, (a, b) in enumerate(inner):
            Ka, f = normalize_trace(_sub(K, a, a))
            Kb, _ = normalize_trace(_sub(K, b, a), f)
            for j, easymkl_lam in enumerate(easymkl_lams):
                try:
                    s, _ = fit_predict(Ka, Kb, y[a], easymkl_lam, classifier=classifier, svm_C=svm_C,
                                       kernel_aggregation=aggregation, weights=weights, backend="python")
                except InputError as err:  # e.g. every kernel blind to the labels on this inner part
                    log.warning("inner fold %d, lambda %g: %s; scored as -inf", i + 1, easymkl_lam, err)
                    scores[i, j] = -np.inf
                    continue
                scores[i, j] = _score(y[b], s, criterion)
    else:
        if inner_kernels is None:
            inner_kernels = _inner_kernels(K, inner)
        for i, ((a, b), (Ka, Kb)) in enumerate(zip(inner, inner_kernels)):
            res = fit_predict_path(Ka, Kb, y[a], easymkl_lams, classifier=classifier, svm_C=svm_C,
                                   kernel_aggregation=aggregation, weights=weights)
            for j, (easymkl_lam, r) in enumerate(zip(easymkl_lams, res)):
                if isinstance(r, InputError):  # e.g. every kernel blind to the labels on this inner part
                    log.warning("inner fold %d, lambda %g: %s; scored as -inf", i + 1, easymkl_lam, r)
                    scores[i, j] = -np.inf
                    continue
                scores[i, j] = _score(y[b], r[0], criterion)
    mean = scores.mean(axis=0)
    return float(easymkl_lams[int(np.argmax(mean))]), mean


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
    default data are identical (tests/unit/studies/test_pimkl.py checks one cohort).

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
