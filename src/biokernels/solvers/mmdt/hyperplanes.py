"""The hyperplane step of MMDT: one-vs-rest L2-loss linear SVMs.

With the transform ``W`` fixed, MMDT's hyperplanes ``H`` solve a one-vs-rest
squared-hinge SVM on the source examples and the transformed target examples
(Hoffman et al. 2013), by scikit-learn's ``LinearSVC`` (liblinear's dual
coordinate descent, the solver the authors call) with per-sample weights.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import LinearSVC

from biokernels.errors import InputError

__all__ = ["ovr_squared_hinge_svm"]


def ovr_squared_hinge_svm(X, y_idx, m: int, sample_weight=None, *, tol: float = 1e-4,
                          max_iter: int = 10000, random_state=None) -> np.ndarray:
    """One-vs-rest L2-regularised, L2-loss (squared hinge) linear SVMs, no intercept.

    For each class k: ``min 1/2 ||h_k||^2 + sum_i c_i max(0, 1 - y_ik h_k^T x_i)^2``
    with ``c_i = sample_weight[i]`` (liblinear's per-sample ``C``); add a
    constant column (:func:`augment`) for a bias, which is then regularised
    like liblinear's. Solved by ``sklearn.svm.LinearSVC(loss="squared_hinge",
    dual=True, fit_intercept=False, C=1)``. For ``m = 2`` LinearSVC fits one
    problem; the class-0 hyperplane is its negative (the class-0 problem is
    the same one with flipped labels).

    Parameters
    ----------
    X : array, shape (n, D)
    y_idx : int array, shape (n,)
        Class index in ``[0, m)`` of each row; every class needs a row.
    m : int
        Number of classes, >= 2.
    sample_weight : array, shape (n,), optional
        Per-sample ``C`` (default 1).
    tol, max_iter, random_state
        Passed to LinearSVC.

    Returns
    -------
    ndarray, shape (m, D)
        Hyperplanes as rows.

    Raises
    ------
    InputError
        If a class has no row or ``m < 2``.
    """
    y_idx = np.asarray(y_idx)
    counts = np.bincount(y_idx, minlength=m)
    if m < 2 or np.any(counts[:m] == 0) or counts.size > m:
        raise InputError(f"y_idx: expected every class 0..{m - 1} (m >= 2) present, "
                         f"counts {counts.tolist()}")
    svc = LinearSVC(loss="squared_hinge", dual=True, C=1.0, fit_intercept=False, tol=tol,
                    max_iter=max_iter, random_state=random_state)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        svc.fit(X, y_idx, sample_weight=sample_weight)
    coef = svc.coef_
    if m == 2:
        coef = np.vstack([-coef[0], coef[0]])
    return np.array(coef, dtype=np.float64)
