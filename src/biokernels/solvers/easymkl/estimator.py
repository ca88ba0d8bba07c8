"""EasyMKL: kernel weights from one KOMD problem on the aggregated kernel.

Aiolli & Donini, Neurocomputing 2015 (the MKL step of PIMKL): :class:`EasyMKL`
solves the KOMD dual (1) once on ``Σ_r K_r``, sets the weights (3)
proportional to each kernel's share of the squared distance of the two hull
points, and trains a :class:`~biokernels.solvers.easymkl.KOMD` on
``Σ_r η_r K_r``; :meth:`EasyMKL.fit_path` fits a λ grid with the
λ-independent work done once. Equations: ``docs/easymkl_notes.md``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from biokernels.errors import InputError
from biokernels.solvers.checks import check_lam
from biokernels.solvers.easymkl.dual import _check_backend, komd_dual
from biokernels.solvers.easymkl.kernel_sums import _sketches, weighted_kernel_sum
from biokernels.solvers.easymkl.komd import KOMD
from biokernels.solvers.kernel_lists import (check_binary_labels, check_kernel_list, check_test_kernel_list,
                                             combine_kernels, float_eps, kernel_sketch)

__all__ = ["EasyMKL"]


class EasyMKL(ClassifierMixin, BaseEstimator):
    """EasyMKL: kernel weights (3) from one KOMD problem on the aggregated kernel.

    Parameters
    ----------
    lam : float, default 0.1
        λ ∈ [0, 1] of (1) for the weight problem. PIMKL cross-validates λ in
        {0, 0.1, 0.3, 0.5, 0.7, 0.9, 1} (Supplementary Algorithm S1) and
        uses 0.2 on METABRIC (Algorithm S2).
    komd_lam : float, optional
        λ of the final KOMD on ``Σ η_r K_r``; default: ``lam`` (as in the
        authors' reference code). MKLpy's default learner is its own
        ``KOMD(lam=0.1)`` whatever ``lam`` is.
    kernel_aggregation : {"sum", "mean"}, default "sum"
        Kernel used in the weight problem: ``Σ_r K_r`` (the reference, the
        EasyMKL paper and MKLpy) or ``(1/P) Σ_r K_r``. The weights η are the
        same only at λ ∈ {0, 1}: with the mean, λ trades off against a kernel
        P times smaller, i.e. "mean" at λ equals "sum" at
        ``λ' = Pλ / (1 - λ + Pλ)`` (same minimiser: the objectives are
        proportional).
    tol, max_iter :
        Passed to :func:`komd_dual` (both QPs).
    psd_tol : float or None, default 1e-8
        PSD check of every training kernel (see ``check_kernel_list``).
    backend : {"numba", "python"}, default "numba"
        ``"numba"``: the compiled SMO loop of :func:`komd_dual` (both QPs)
        and compiled kernel sums (:func:`weighted_kernel_sum`) on a float64
        ``(P, n, n)`` stack; ``"python"``: the reference implementation
        (pure-Python SMO loop, ``combine_kernels`` on the list). The same
        operations in the same order: the same numbers.

    Attributes
    ----------
    weights_ : ndarray, shape (P,), float64
        η of (3): non-negative, sums to 1.
    gamma_ : ndarray, shape (n_train,)
        γ* of the weight problem.
    margin_terms_ : ndarray, shape (P,)
        d_r of (3), before normalisation.
    komd_ : KOMD
        The classifier fitted on ``Σ η_r K_r``.
    classes_ : ndarray, shape (2,)
    n_kernels_, n_train_ : int
    train_sketches_ : list of P KernelSketch
        Fingerprints of the training kernels, used at predict time to reject
        test x test kernels.
    """

    def __init__(self, lam: float = 0.1, komd_lam: float | None = None,
                 kernel_aggregation: str = "sum", tol: float = 1e-9,
                 max_iter: int | None = None, psd_tol: float | None = 1e-8, backend: str = "numba"):
        self.lam = lam
        self.komd_lam = komd_lam
        self.kernel_aggregation = kernel_aggregation
        self.tol = tol
        self.max_iter = max_iter
        self.psd_tol = psd_tol
        self.backend = backend

    def fit(self, Ks: Sequence, y):
        """Learn the weights η and the final KOMD.

        Parameters
        ----------
        Ks : sequence of P array-likes, each (n_train, n_train)
            Symmetric PSD training kernels (numpy or torch).
        y : array-like, shape (n_train,)
            Two distinct labels of any type.

        Returns
        -------
        self

        Raises
        ------
        InputError
            Invalid kernels (index named) or labels, ``lam``/``komd_lam``
            outside [0, 1], unknown ``kernel_aggregation``, or all d_r = 0
            (every kernel is blind to the labels, e.g. all-zero kernels).
        """
        self._check_options()
        lam = check_lam(self.lam, interval="[0, 1]")
        komd_lam = lam if self.komd_lam is None else check_lam(self.komd_lam, "komd_lam", "[0, 1]")
        return self._fit_prepared(self._prepare(Ks, y), lam, komd_lam, keep_agg=False)

    def fit_path(self, Ks: Sequence, y, lams: Sequence[float]) -> list[EasyMKL | InputError]:
        """One EasyMKL per λ in ``lams`` on the same kernels (PIMKL's inner
        λ grid, Algorithm S1 lines 4-8), the λ-independent work done once:
        the kernel checks (with ``psd_tol``, one PSD factorisation per
        kernel), the labels, the aggregated kernel ``Σ_r K_r`` of the weight
        problem and the training-kernel sketches.

        Each model equals ``clone(self).set_params(lam=lam).fit(Ks, y)``
        (same arithmetic, so the same numbers); ``komd_lam`` None means
        ``lam`` per model, as in :meth:`fit`.

        Parameters
        ----------
        Ks : sequence of P array-likes, each (n_train, n_train)
            Symmetric PSD training kernels.
        y : array-like, shape (n_train,)
            Two distinct labels.
        lams : sequence of float in [0, 1]

        Returns
        -------
        list, one entry per λ in the order of ``lams``: the fitted
        :class:`EasyMKL`, or the :class:`~biokernels.errors.InputError` its
        :meth:`fit` raises at that λ (all d_r = 0: no kernel separates the
        classes), so that the caller can score that λ as failed.

        Raises
        ------
        InputError
            What :meth:`fit` raises before the weight problem, once: invalid
            kernels (index named) or labels, a λ or ``komd_lam`` outside
            [0, 1], unknown ``kernel_aggregation`` or ``backend``.
        """
        self._check_options()
        lams = [check_lam(lam, interval="[0, 1]") for lam in lams]
        komd_lam = None if self.komd_lam is None else check_lam(self.komd_lam, "komd_lam", "[0, 1]")
        prep = self._prepare(Ks, y)
        out: list[EasyMKL | InputError] = []
        for lam in lams:
            try:
                out.append(self._copy(lam)._fit_prepared(prep, lam, lam if komd_lam is None else komd_lam))
            except InputError as err:
                out.append(err)
        return out

    def _copy(self, lam: float) -> EasyMKL:
        """An unfitted copy with ``lam`` (``clone(self).set_params(lam=lam)``
        without scikit-learn's signature inspection)."""
        return type(self)(lam=lam, komd_lam=self.komd_lam, kernel_aggregation=self.kernel_aggregation,
                          tol=self.tol, max_iter=self.max_iter, psd_tol=self.psd_tol, backend=self.backend)

    def _check_options(self) -> None:
        if self.kernel_aggregation not in ("sum", "mean"):
            raise InputError(f"kernel_aggregation must be 'sum' or 'mean', got {self.kernel_aggregation!r}")
        _check_backend(self.backend)

    def _prepare(self, Ks: Sequence, y) -> dict:
        """The λ-independent part of :meth:`fit`: checked float64 kernels,
        their dtype epsilons and sketches, the labels and the aggregated kernel."""
        Ks_in = Ks
        Ks = check_kernel_list(Ks, psd_tol=self.psd_tol)
        eps = [float_eps(Ks_in[r]) for r in range(len(Ks))]       # dtype as given (float32: coarser)
        classes, y_pm = check_binary_labels(y, Ks[0].shape[0])
        P = len(Ks)
        agg = np.full(P, 1.0 if self.kernel_aggregation == "sum" else 1.0 / P)
        if self.backend == "python":           # the reference: list operations throughout
            return {"Ks": Ks, "stack": None, "eps": eps, "y": y, "classes": classes, "y_pm": y_pm,
                    "K_agg": combine_kernels(Ks, agg), "sketches": [kernel_sketch(K, e) for K, e in zip(Ks, eps)]}
        # a float64 (P, n, n) stack as given: the compiled sums and one batched product, the same
        # numbers (matmul treats each slice of a stack as it treats that slice alone: same layout)
        stack = (Ks_in if isinstance(Ks_in, np.ndarray) and Ks_in.ndim == 3 and Ks_in.dtype == np.float64
                 else None)
        return {"Ks": Ks, "stack": stack, "eps": eps, "y": y, "classes": classes, "y_pm": y_pm,
                "K_agg": weighted_kernel_sum(Ks if stack is None else stack, agg), "sketches": _sketches(Ks, eps)}

    def _fit_prepared(self, prep: dict, lam: float, komd_lam: float, keep_agg: bool = True):
        """The λ-dependent part of :meth:`fit` on :meth:`_prepare`'s output
        (``keep_agg=False``: the aggregated kernel is released after use)."""
        Ks, y_pm = prep["Ks"], prep["y_pm"]
        self.classes_ = prep["classes"]
        P = len(Ks)
        K_agg = prep["K_agg"] if keep_agg else prep.pop("K_agg")
        gamma, info = komd_dual(K_agg, y_pm, lam, tol=self.tol, max_iter=self.max_iter, backend=self.backend)
        del K_agg
        yg = y_pm * gamma
        stack = prep["stack"]
        if stack is None:
            d = np.array([float(yg @ (K @ yg)) for K in Ks])
        else:                                  # matmul: per slice as K @ yg (same layout, same kernel)
            KY = stack @ yg
            d = np.array([float(yg @ KY[r]) for r in range(P)])
        d = np.maximum(d, 0.0)                 # PSD kernels: d_r >= 0 up to rounding
        if not d.sum() > 0:
            raise InputError("EasyMKL: every kernel gives γ'YK_rYγ = 0 (no kernel separates the "
                             "classes); cannot normalise the weights")
        self.weights_ = d / d.sum()
        self.margin_terms_ = d
        self.gamma_ = gamma
        self.solver_info_ = info
        self.n_kernels_ = P
        self.n_train_ = Ks[0].shape[0]
        self.train_sketches_ = prep["sketches"]
        self.komd_ = KOMD(lam=komd_lam, tol=self.tol, max_iter=self.max_iter, psd_tol=None, backend=self.backend)
        K_w = (combine_kernels(Ks, self.weights_) if self.backend == "python"
               else weighted_kernel_sum(Ks if stack is None else stack, self.weights_))
        self.komd_._fit_checked(K_w, prep["y"], max(prep["eps"]))
        return self

    def combine(self, Ks: Sequence) -> np.ndarray:
        """``Σ_r η_r K_r`` for training (n, n) or test (n_test, n_train) kernels.

        Raises
        ------
        NotFittedError
            Before ``fit``.
        InputError
            Wrong number of kernels or shapes (index named), or a square
            symmetric kernel that is not the training kernel of its index.
        """
        check_is_fitted(self, "weights_")
        Ks = check_test_kernel_list(Ks, self.n_kernels_, self.n_train_, self.train_sketches_)
        return combine_kernels(Ks, self.weights_)

    def decision_function(self, Ks_test: Sequence) -> np.ndarray:
        """KOMD score (2) on ``Σ η_r K_r(test, train)``.

        Parameters
        ----------
        Ks_test : sequence of P array-likes, each (n_test, n_train)

        Returns
        -------
        ndarray, shape (n_test,); positive predicts ``classes_[1]``.

        Raises
        ------
        NotFittedError
            Before ``fit``.
        InputError
            Wrong number of kernels, a column count other than ``n_train``,
            NaN, or kernel ``r`` square and symmetric but not training kernel
            ``r`` (a test x test kernel; index and shapes named).
        """
        check_is_fitted(self, "weights_")
        Ks_test = check_test_kernel_list(Ks_test, self.n_kernels_, self.n_train_, self.train_sketches_)
        return self.komd_.decision_function(combine_kernels(Ks_test, self.weights_))

    def predict(self, Ks_test: Sequence) -> np.ndarray:
        """Labels (shape (n_test,)) from :meth:`decision_function`."""
        return self.classes_[(self.decision_function(Ks_test) >= 0).astype(int)]
