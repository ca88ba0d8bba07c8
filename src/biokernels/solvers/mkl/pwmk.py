"""PWMK: weights proportional to single-kernel CV accuracy (Tanabe, Ho, Nguyen & Kawasaki, RIVF 2008).

:class:`PWMK` cross-validates a classifier on each kernel alone and weights
the kernels by their accuracy above a threshold, as MKLpy 0.6's ``PWMK``
(threshold ``delta · min accuracy``, unshuffled stratified folds, learner
``SVC(C=1000)``). Paired with an SVC (MKLpy's default learner).
"""

from __future__ import annotations

import numpy as np
from sklearn import config_context
from sklearn.base import clone
from sklearn.model_selection import check_cv
from sklearn.svm import SVC

from biokernels.errors import InputError
from biokernels.solvers.mkl.base import MKLMethod

__all__ = ["PWMK", "cv_accuracy"]


class PWMK(MKLMethod):
    """Proportionally weighted multiple kernels (Tanabe, Ho, Nguyen & Kawasaki, RIVF 2008).

    ``weights_[r] ∝ acc_r - δ``, where ``acc_r`` is the cross-validated
    accuracy of a classifier on kernel r alone and the threshold is, as in
    MKLpy 0.6, ``δ = delta · min_s acc_s`` (``delta`` in [0, 1]; 0 gives
    accuracy-proportional weights, 1 gives the worst kernel weight 0). If all
    ``acc_r - δ`` are 0 (equal accuracies with delta = 1) the weights are
    uniform.

    Parameters
    ----------
    delta : float in [0, 1], default 0
    cv : int or CV splitter, default 3
        An int means scikit-learn's unshuffled ``StratifiedKFold(cv)``
        (deterministic; MKLpy's choice).
    learner : estimator, optional
        Cloned for every kernel and fold, fitted on ±1 labels. Default
        ``SVC(C=1000, kernel="precomputed")`` (MKLpy's default; MKLpy shares
        one mutable default instance between all its models, here a fresh
        clone is used).
    psd_tol : float or None, default 1e-8

    Attributes
    ----------
    weights_ : ndarray (P,), non-negative, sums to 1
    accuracies_ : ndarray (P,)

    Raises
    ------
    InputError (in fit)
        Invalid inputs (:meth:`MKLMethod.fit`) or ``delta`` outside [0, 1].
    """

    def __init__(self, delta: float = 0.0, cv=3, learner=None, psd_tol: float | None = 1e-8):
        self.delta = delta
        self.cv = cv
        self.learner = learner
        self.psd_tol = psd_tol

    def _learn_weights(self, Ks, y):
        if not 0.0 <= float(self.delta) <= 1.0:
            raise InputError(f"PWMK: delta must be in [0, 1], got {self.delta}")
        learner = SVC(C=1000.0, kernel="precomputed") if self.learner is None else self.learner
        folds = list(check_cv(self.cv, y, classifier=True).split(Ks[0], y))
        acc = np.array([cv_accuracy(learner, K, y, folds) for K in Ks])
        self.accuracies_ = acc
        w = np.maximum(acc - float(self.delta) * acc.min(), 0.0)
        return w / w.sum() if w.sum() > 0 else np.full(len(Ks), 1.0 / len(Ks))


def cv_accuracy(learner, K: np.ndarray, y: np.ndarray, folds) -> float:
    """Mean over ``folds`` of the accuracy of ``clone(learner)`` fitted on the
    fold's training block of the precomputed kernel ``K``: scikit-learn's
    ``cross_val_score(learner, K, y, scoring="accuracy", cv=folds).mean()``,
    with the fold kernels sliced by a compiled gather
    (:func:`biokernels.solvers.kernel_numba.gather`, the same copies as
    ``K[np.ix_(rows, cols)]``).

    Parameters
    ----------
    learner : estimator on precomputed kernels; K : (n, n) float64, finite
        (scikit-learn's own finiteness check is skipped);
    y : (n,); folds : sequence of (train, test) index arrays
    """
    from biokernels.solvers.kernel_numba import gather

    K = np.ascontiguousarray(K, dtype=np.float64)
    scores = []
    with config_context(assume_finite=True):          # K is checked finite (check_kernel_list)
        for tr, te in folds:
            tr, te = np.asarray(tr, dtype=np.int64), np.asarray(te, dtype=np.int64)
            model = clone(learner).fit(gather(K, tr, tr), y[tr])
            scores.append(float(np.mean(model.predict(gather(K, te, tr)) == y[te])))
    return float(np.mean(scores))
