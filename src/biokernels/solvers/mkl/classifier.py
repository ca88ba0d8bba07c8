"""MKLClassifier: a classifier on the combined kernel ``Σ_r w_r K_r``.

The weights are learned by an MKL method (:class:`MKLMethod`, e.g. from
:func:`~biokernels.solvers.mkl.make_mkl`) or given (weights transferred from
another task, SI Fig. S7 of Radhakrishnan et al. 2023); the learner is an
SVC or :class:`~biokernels.solvers.easymkl.KOMD` on the precomputed combined
kernel, as MKLpy's ``fit`` trains its learner. A method's
``default_learner`` names the one MKLpy pairs it with. Invalid kernels,
labels or weights raise :class:`~biokernels.errors.InputError` naming the
kernel index.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sklearn import config_context
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.svm import SVC
from sklearn.utils.validation import check_is_fitted

from biokernels.errors import InputError
from biokernels.solvers.easymkl import KOMD
from biokernels.solvers.mkl.base import MKLMethod
from biokernels.solvers.kernel_lists import (check_binary_labels, check_kernel_list, check_test_kernel_list,
                                             check_weights, combine_kernels)

__all__ = ["MKLClassifier"]


class MKLClassifier(ClassifierMixin, BaseEstimator):
    """A classifier on ``Σ_r w_r K_r``, with w learned by an MKL method or given.

    Parameters
    ----------
    mkl : MKLMethod (or an estimator with ``fit(Ks, y)`` and ``weights_``), optional
        E.g. ``CKA()``, ``EasyMKL(lam=0.1)``; cloned at fit. Ignored when
        ``weights`` is given.
    weights : array (P,), optional
        Fixed non-negative weights (e.g. learned on a source task and
        transferred, the "transfer learned kernel model" of the paper).
    learner : "svc", "komd", or an estimator with ``kernel="precomputed"``
        semantics (``fit(K, y)`` on an (n, n) kernel); cloned at fit. The
        pairing MKLpy uses is the method's ``default_learner``
        (``learner=type(mkl).default_learner``).
    C : float, default 1000
        SVC's C when ``learner="svc"`` (MKLpy's default learner is
        ``SVC(C=1000)`` for CKA, FHeuristic and PWMK).
    komd_lam : float, default 0.1
        KOMD's λ when ``learner="komd"``.

    Attributes
    ----------
    weights_ : ndarray (P,)
    mkl_ : fitted clone of ``mkl`` (None when weights were given)
    learner_ : fitted classifier
    classes_ : ndarray (2,)
    """

    def __init__(self, mkl=None, weights=None, learner="svc", C: float = 1000.0,
                 komd_lam: float = 0.1):
        self.mkl = mkl
        self.weights = weights
        self.learner = learner
        self.C = C
        self.komd_lam = komd_lam

    def _make_learner(self):
        if isinstance(self.learner, str):
            if self.learner == "svc":
                return SVC(C=self.C, kernel="precomputed")
            if self.learner == "komd":
                return KOMD(lam=self.komd_lam, psd_tol=None)
            raise InputError(f"learner must be 'svc', 'komd' or an estimator, got {self.learner!r}")
        return clone(self.learner)

    def fit(self, Ks: Sequence, y):
        """Learn (or take) the weights, then fit the learner on the combined kernel.

        Parameters
        ----------
        Ks : sequence of P array-likes (n, n); y : (n,) two labels

        Returns
        -------
        self

        Raises
        ------
        InputError
            Invalid kernels, labels or weights; neither ``mkl`` nor ``weights``.
        """
        if self.weights is not None:
            Ks = check_kernel_list(Ks, psd_tol=getattr(self.mkl, "psd_tol", 1e-8))
            self.weights_ = check_weights(self.weights, len(Ks))
            self.mkl_ = None
        elif self.mkl is not None:
            if type(self.mkl).fit is MKLMethod.fit:  # checked once here; the method's own check passes them
                Ks = check_kernel_list(Ks, psd_tol=self.mkl.psd_tol)
            self.mkl_ = clone(self.mkl).fit(Ks, y)  # a method with its own fit checks its given dtypes
            self.weights_ = np.asarray(self.mkl_.weights_, dtype=np.float64)
            Ks = check_kernel_list(Ks, psd_tol=None)
        else:
            raise InputError("MKLClassifier needs an `mkl` method or fixed `weights`")
        self.classes_, _ = check_binary_labels(y, Ks[0].shape[0])
        self.n_kernels_, self.n_train_ = len(Ks), Ks[0].shape[0]
        self.train_sketches_ = Ks.sketches()  # the test x test kernel check
        with config_context(assume_finite=True):         # the kernels are checked finite
            self.learner_ = self._make_learner().fit(combine_kernels(Ks, self.weights_), np.asarray(y))
        return self

    def combine(self, Ks: Sequence) -> np.ndarray:
        """``Σ_r weights_[r] Ks[r]`` for (n_rows, n_train) kernels; a square
        symmetric kernel that is not training kernel r is refused (InputError);
        NotFittedError before ``fit``."""
        check_is_fitted(self, "learner_")
        Ks = check_test_kernel_list(Ks, self.n_kernels_, self.n_train_, self.train_sketches_)
        return combine_kernels(Ks, self.weights_)

    def decision_function(self, Ks_test: Sequence) -> np.ndarray:
        """Learner's score on the combined (n_test, n_train) kernel; shape (n_test,)."""
        return np.asarray(self.learner_.decision_function(self.combine(Ks_test))).ravel()

    def predict(self, Ks_test: Sequence) -> np.ndarray:
        """Predicted labels, shape (n_test,)."""
        return np.asarray(self.learner_.predict(self.combine(Ks_test)))

    def fit_predict(self, Ks: Sequence, y, Ks_test: Sequence | None = None) -> np.ndarray:
        """``fit(Ks, y)`` then ``predict(Ks_test)`` (the training kernels when omitted)."""
        self.fit(Ks, y)
        return self.predict(Ks if Ks_test is None else Ks_test)
