"""The base class of every MKL method: :class:`MKLMethod`.

A method subclasses it and implements one hook, ``_learn_weights(Ks, y)``;
the base does the rest, the same for all: input checks
(:mod:`biokernels.solvers.kernel_lists`), ``fit`` returning self, the fitted
``weights_`` and the checks on them, ``combine``, ``get_params`` /
``set_params`` (scikit-learn's BaseEstimator), NotFittedError before fit.
Two class attributes state what the method promises: ``weight_norm`` (how
the weights are normalised) and ``default_learner`` (the classifier it is
paired with on the combined kernel, as in MKLpy). The contract is tested for
every registered method by tests/unit/solvers/test_mkl_contract.py.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from biokernels.solvers.kernel_lists import (check_binary_labels, check_kernel_list, check_test_kernel_list,
                                             combine_kernels)

__all__ = ["MKLMethod", "WEIGHT_NORMS", "LEARNERS"]

#: ``weight_norm`` values: the fitted weights have unit L1 norm (sum to 1)
#: or unit L2 norm; they are non-negative either way.
WEIGHT_NORMS = ("l1", "l2")
#: ``default_learner`` values: the string learners of
#: :class:`~biokernels.solvers.mkl.MKLClassifier`.
LEARNERS = ("svc", "komd")


class MKLMethod(BaseEstimator):
    """A one-step MKL method: non-negative weights of P precomputed kernels.

    Subclass and implement :meth:`_learn_weights`. A method with settings
    defines ``__init__`` with them as keyword arguments (stored unchanged,
    scikit-learn's rule) and keeps ``psd_tol``; the keyword arguments are
    its config settings (:func:`~biokernels.solvers.mkl.make_mkl`).

    Parameters
    ----------
    psd_tol : float or None, default 1e-8
        PSD check of every training kernel (``check_kernel_list``); None
        skips it (kernels checked already).

    Attributes
    ----------
    weight_norm : {"l1", "l2"}, class attribute, default "l1"
        The norm the weights are scaled to (1); "l1": they sum to 1.
    default_learner : {"svc", "komd"}, class attribute, default "svc"
        The classifier on the combined kernel that MKLpy pairs the method
        with (:class:`~biokernels.solvers.mkl.MKLClassifier`'s ``learner``).
    weights_ : ndarray (P,), float64, non-negative, unit ``weight_norm``
    classes_ : ndarray (2,), the labels (``classes_[1]`` is +1 in the hook)
    n_kernels_, n_train_ : int
    train_sketches_ : list of P fingerprints (the test x test kernel check)
    """

    weight_norm: str = "l1"
    default_learner: str = "svc"

    def __init__(self, psd_tol: float | None = 1e-8):
        self.psd_tol = psd_tol

    def _learn_weights(self, Ks: list[np.ndarray], y: np.ndarray) -> np.ndarray:
        """The method: weights of the checked kernels. Implement in a subclass.

        Parameters
        ----------
        Ks : list of P ndarrays (n, n), float64, symmetric (PSD if ``psd_tol``)
        y : ndarray (n,), float64, ±1 (``classes_[1]`` is +1)

        Returns
        -------
        array (P,): finite, non-negative, unit ``weight_norm``. Fitted
        diagnostics may be set on ``self`` (names ending in ``_``).

        Raises
        ------
        InputError
            When the kernels and labels admit no weights (say why).
        """
        raise NotImplementedError(f"{type(self).__name__} must implement _learn_weights(Ks, y)")

    def _prepare(self, Ks, y) -> tuple[list[np.ndarray], np.ndarray]:
        Ks = check_kernel_list(Ks, psd_tol=self.psd_tol)
        self.classes_, y_pm = check_binary_labels(y, Ks[0].shape[0])
        self.n_kernels_ = len(Ks)
        self.n_train_ = Ks[0].shape[0]
        self.train_sketches_ = Ks.sketches()  # the test x test kernel check
        return Ks, y_pm

    def fit(self, Ks: Sequence, y):
        """Check the inputs, learn ``weights_``. Returns self.

        Parameters
        ----------
        Ks : sequence of P array-likes (n, n) (numpy, torch, or an (P, n, n) array)
        y : array-like (n,), two distinct labels of any type

        Raises
        ------
        InputError (a ValueError)
            Invalid kernels (index named: shape, square, symmetric, finite,
            PSD), labels (length, number of classes), or what the method
            raises.
        RuntimeError
            ``_learn_weights`` broke its contract (a bug in the method).
        """
        Ks, y_pm = self._prepare(Ks, y)
        self.weights_ = self._check_learned(self._learn_weights(Ks, y_pm))
        return self

    def _check_learned(self, w) -> np.ndarray:
        name = f"{type(self).__name__}._learn_weights"
        w = np.asarray(w, dtype=np.float64)
        if w.shape != (self.n_kernels_,):
            raise RuntimeError(f"{name} returned shape {w.shape}, expected ({self.n_kernels_},)")
        if not (np.isfinite(w).all() and (w >= 0).all()):
            raise RuntimeError(f"{name} returned weights that are not finite and >= 0: {w.tolist()}")
        norm = {"l1": np.sum, "l2": np.linalg.norm}[self.weight_norm](w)
        if not abs(norm - 1.0) <= 1e-6:
            raise RuntimeError(f"{name} returned weights of {self.weight_norm} norm {norm}, expected 1")
        return w

    def combine(self, Ks: Sequence) -> np.ndarray:
        """``Σ_r weights_[r] Ks[r]``.

        Parameters
        ----------
        Ks : sequence of P array-likes, all (n_rows, n_train): the training
            kernels or the test-vs-train kernels.

        Returns
        -------
        ndarray (n_rows, n_train), float64

        Raises
        ------
        NotFittedError
            Before ``fit``.
        InputError
            Wrong number of kernels, shapes, or column count, or a square
            symmetric kernel that is not training kernel r (index named).
        """
        check_is_fitted(self, "weights_")
        Ks = check_test_kernel_list(Ks, self.n_kernels_, self.n_train_, self.train_sketches_)
        return combine_kernels(Ks, self.weights_)
