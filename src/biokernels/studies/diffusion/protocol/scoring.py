"""Decision values and ROC AUCs of the classifier per task on one kernel.

Two paths with the same fits: the reference (:func:`task_scores`: a fit and
``decision_function`` per task; :func:`task_aucs`: ``roc_auc_score`` per
task) and the fast ones (:func:`fit_task_scores`: inputs checked once, the
decision values of all tasks as one GEMM, fits in threads; with the ``smo``
solver, :func:`smo_task_scores` and :func:`kernel_scores`: one batched,
optionally warm-started solve and factored decision values).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from sklearn import config_context
from sklearn.metrics import roc_auc_score
from sklearn.svm import SVC

from biokernels.solvers.svm_smo import SMOSVC, svc_dual
from biokernels.studies.diffusion.protocol.blocks import KernelBlocks
from biokernels.studies.diffusion.protocol.classifiers import smo_of, svm_classifier


def task_scores(Ktr: np.ndarray, Kte: np.ndarray, ytr: np.ndarray, C: float,
                classifier: Callable[[float], object] | None = None, name: str = "task_scores") -> np.ndarray:
    """Decision values of one classifier per task on a precomputed kernel.

    Parameters
    ----------
    Ktr : (n_train, n_train), Kte : (n_test, n_train)
    ytr : 0/1 array (n_train, t)
    C : float
    classifier : callable C -> unfitted estimator, optional
        From :func:`make_classifier`; None = the paper's SVM
        (:func:`svm_classifier`).
    name : str
        For messages.

    Returns
    -------
    array (n_test, t); a column is NaN when the task has a single class in
    training (no classifier can be trained).

    Raises
    ------
    InputError
        ``Kte`` without ``n_train`` columns, or square, symmetric and not
        ``Ktr``: a test x test kernel where the test x train one belongs
        (:func:`biokernels.solvers.kernel_lists.check_predict_kernel`).
    """
    from biokernels.solvers.kernel_lists import check_predict_kernel

    make = svm_classifier if classifier is None else classifier
    Kte = check_predict_kernel(Kte, Ktr.shape[0], Ktr, name=f"{name}: Kte")
    out = np.full((Kte.shape[0], ytr.shape[1]), np.nan)
    for k in range(ytr.shape[1]):
        y = ytr[:, k]
        if y.min() == y.max():
            continue
        out[:, k] = make(C).fit(Ktr, y).decision_function(Kte)
    return out


def svm_task_scores(Ktr: np.ndarray, Kte: np.ndarray, ytr: np.ndarray, C: float) -> np.ndarray:
    """:func:`task_scores` with the paper's SVM (scikit-learn
    ``SVC(kernel="precomputed", C=C)``, LIBSVM): shapes, NaN columns and
    errors as there."""
    return task_scores(Ktr, Kte, ytr, C, svm_classifier, name="svm_task_scores")


def _is_binary_precomputed_svc(model) -> bool:
    return type(model) is SVC and model.kernel == "precomputed" and len(model.classes_) == 2


def fit_task_scores(Ktr: np.ndarray, Kte: np.ndarray, ytr: np.ndarray, C: float,
                    classifier: Callable[[float], object] | None = None, n_jobs: int = 1,
                    name: str = "fit_task_scores") -> np.ndarray:
    """:func:`task_scores` with the same fits, checked once and scored at once.

    The same classifier is fitted per task on the same kernel (same inputs,
    so the same LIBSVM solution as :func:`task_scores`), but

    * the kernels are checked (finite, float64, C-contiguous) once per call
      and the fits run under ``sklearn.config_context(assume_finite=True)``,
      so scikit-learn does not scan the (n_train, n_train) kernel for NaN
      at every fit; the estimator's parameters (the same for every task) are
      validated by the first fit only (``skip_parameter_validation`` after
      it). Both are public scikit-learn settings; LIBSVM gets the same
      arrays and parameters;
    * for the paper's SVM (an ``SVC(kernel="precomputed")`` with two
      classes), the decision values of all tasks are one GEMM,
      ``Kte @ D + b``, with ``D`` (n_train, t) holding each task's
      ``dual_coef_`` at its ``support_`` rows and ``b`` the ``intercept_``:
      scikit-learn's documented decision function, summed in another order
      than LIBSVM's loop, so equal to rounding, at most
      ``2 gamma_{m+1} (sum_i |a_i K_xi| + |b|)`` apart (m support vectors);
      any other classifier is scored with its ``decision_function``;
    * with ``n_jobs > 1`` the fits run in a thread pool (LIBSVM releases the
      GIL); each fit is the same deterministic computation, so the results
      do not depend on ``n_jobs``.

    Parameters, returns and errors as :func:`task_scores` (``n_jobs``:
    threads for the fits); a non-finite ``Ktr`` raises ``ValueError`` as
    scikit-learn's check does.
    """
    from biokernels.solvers.kernel_lists import check_predict_kernel

    make = svm_classifier if classifier is None else classifier
    Kte = check_predict_kernel(Kte, Ktr.shape[0], Ktr, name=f"{name}: Kte")
    Ktr = np.ascontiguousarray(Ktr, dtype=np.float64)
    Kte = np.ascontiguousarray(Kte, dtype=np.float64)
    if not np.isfinite(Ktr).all():
        raise ValueError(f"{name}: Ktr contains NaN or infinity")
    out = np.full((Kte.shape[0], ytr.shape[1]), np.nan)
    ok = [k for k in range(ytr.shape[1]) if ytr[:, k].min() != ytr[:, k].max()]
    if not ok:
        return out

    def fit(k, validate=False):
        # thread-local settings, so set in the worker; every estimator has the
        # same parameters, checked by the first fit
        with config_context(assume_finite=True, skip_parameter_validation=not validate):
            return make(C).fit(Ktr, ytr[:, k])

    models = [fit(ok[0], validate=True)]
    if n_jobs > 1 and len(ok) > 2:
        with ThreadPoolExecutor(max_workers=min(int(n_jobs), len(ok) - 1)) as pool:
            models += list(pool.map(fit, ok[1:]))
    else:
        models += [fit(k) for k in ok[1:]]
    svc = [j for j, m in enumerate(models) if _is_binary_precomputed_svc(m)]
    if svc:
        D = np.zeros((Ktr.shape[0], len(svc)))
        b = np.empty(len(svc))
        for c, j in enumerate(svc):
            D[models[j].support_, c] = models[j].dual_coef_[0]
            b[c] = models[j].intercept_[0]
        out[:, [ok[j] for j in svc]] = Kte @ D + b
    with config_context(assume_finite=True):
        for j, m in enumerate(models):
            if not _is_binary_precomputed_svc(m):
                out[:, ok[j]] = m.decision_function(Kte)
    return out


def smo_task_scores(Ktr: np.ndarray, Kte: np.ndarray, ytr: np.ndarray, C: float, smo: SMOSVC,
                    alpha0: np.ndarray | None = None, n_jobs: int = 1, name: str = "smo_task_scores"
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Decision values of the ``smo`` SVM for every task on one kernel, in
    one batched solve (:func:`biokernels.solvers.svm_smo.svc_dual`) from an
    optional warm start.

    Parameters
    ----------
    Ktr : (n_train, n_train), Kte : (n_test, n_train)
    ytr : 0/1 array (n_train, t)
    C : float
    smo : SMOSVC
        Its ``class_weight`` and ``tol`` are used (:func:`smo_of`).
    alpha0 : array (n_train, t), optional
        A feasible start per task (e.g. the solution on a neighbouring
        kernel, a convex combination of solutions of the same tasks, or a
        solution at C' scaled by C / C').
    n_jobs : int
        Threads over tasks; results do not depend on it.

    Returns
    -------
    scores : array (n_test, t), NaN for a task with one class in training
    alpha : array (n_train, t), the solutions (warm starts for the next fit)

    Raises
    ------
    InputError
        As :func:`biokernels.solvers.kernel_lists.check_predict_kernel` and
        :func:`biokernels.solvers.svm_smo.svc_dual`.
    """
    from biokernels.solvers.kernel_lists import check_predict_kernel

    Kte = check_predict_kernel(Kte, Ktr.shape[0], Ktr, name=f"{name}: Kte")
    sol = _smo_solve(Ktr, ytr, C, smo, alpha0, n_jobs, name)
    return sol.decision(np.asarray(Kte, dtype=np.float64)), sol.alpha


def _smo_solve(Ktr: np.ndarray, ytr: np.ndarray, C: float, smo: SMOSVC, alpha0, n_jobs: int, name: str):
    """:func:`biokernels.solvers.svm_smo.svc_dual` with the estimator's
    settings; warns (RuntimeWarning, naming ``name``) when a task with two
    classes stops at the step limit."""
    sol = svc_dual(Ktr, ytr, C, class_weight=smo.class_weight, alpha0=alpha0, tol=smo.tol, n_jobs=n_jobs)
    if not sol.converged[ytr.min(axis=0) != ytr.max(axis=0)].all():
        warnings.warn(f"{name}: SMO stopped at its step limit before the gap {smo.tol:g} for "
                      f"{int((~sol.converged).sum())} task(s)", RuntimeWarning, stacklevel=2)
    return sol


def _smo_block_scores(blocks: KernelBlocks, Ktr: np.ndarray, s: np.ndarray, ytr: np.ndarray, C: float,
                      smo: SMOSVC, start: np.ndarray | None = None, n_jobs: int = 1,
                      name: str = "smo") -> tuple[np.ndarray, np.ndarray]:
    """The ``smo`` fits on the train block ``Ktr`` of the kernel with
    spectrum ``s`` and their decision values without a test block
    (:meth:`KernelBlocks.decision`): (scores (n_test, t), alpha (n_train, t))."""
    sol = _smo_solve(Ktr, ytr, C, smo, start, n_jobs, name)
    return blocks.decision(s, sol.dual_coef) - sol.rho, sol.alpha


def kernel_scores(blocks: KernelBlocks, s: np.ndarray, ytr: np.ndarray, C: float,
                  classifier: Callable[[float], object] | None = None, n_jobs: int = 1) -> np.ndarray:
    """Decision values (n_test, t) of the classifier per task on the kernel
    of spectrum ``s`` (n,): with the ``smo`` solver, one batched solve on
    the train block (:meth:`KernelBlocks.train`) and factored decisions
    (:meth:`KernelBlocks.decision`); otherwise :func:`task_scores` on
    ``blocks(s)``. Cold starts, so the result does not depend on what was
    fitted before; ``n_jobs`` threads for the ``smo`` fits (results do not
    depend on it). NaN columns for tasks with one class in training."""
    smo = smo_of(classifier)
    if smo is None:
        Ktr, Kte = blocks(s)
        return task_scores(Ktr, Kte, ytr, C, classifier)
    return _smo_block_scores(blocks, blocks.train(s), s, ytr, C, smo, None, n_jobs, "kernel_scores")[0]


def convex_start(alphas: np.ndarray, w: np.ndarray) -> np.ndarray | None:
    """Warm start for the kernel ``sum_i w_i K_i`` from the solutions
    ``alphas`` (p, n, t) on the ``K_i``: ``sum_i w_i alpha_i / sum_i w_i``,
    feasible (the feasible set is convex and the same for every kernel);
    None when a weight is negative or they sum to 0."""
    w = np.asarray(w, dtype=np.float64)
    if (w < 0).any() or not w.sum() > 0:
        return None
    return np.tensordot(w / w.sum(), alphas, axes=1)


def task_aucs(scores: np.ndarray, yte: np.ndarray) -> np.ndarray:
    """ROC AUC per task (scikit-learn); NaN where the test labels have one
    class or the scores are missing. Shapes (n_test, t) -> (t,)."""
    out = np.full(yte.shape[1], np.nan)
    for k in range(yte.shape[1]):
        y, s = yte[:, k], scores[:, k]
        if y.min() != y.max() and np.isfinite(s).all():
            out[k] = roc_auc_score(y, s)
    return out
