"""One-step multiple kernel learning: CKA, FHeuristic, PWMK (and EasyMKL), plus a classifier wrapper.

Source: the MKLpy methods that Radhakrishnan et al. 2023 compare with kernel
translation (Nat. Commun., Methods "Comparison with multiple kernel learning
approaches", SI Fig. S7); each weight learner follows its method's paper, and
MKLpy 0.6 where the paper leaves a choice open (deviations listed per class).

API: ``fit(Ks, y)`` with P precomputed training kernels (n, n) and two
distinct labels; ``weights_`` of shape (P,); ``combine(Ks)`` =
``Σ_r weights_[r] Ks[r]``. :class:`MKLClassifier` trains an SVC or
:class:`~biokernels.solvers.easymkl.KOMD` on the combined kernel. Invalid
kernels or labels raise :class:`biokernels.errors.InputError` naming the
kernel index (:mod:`biokernels.solvers.kernel_lists`). :data:`MKL_METHODS`
maps a config name to its class; :func:`make_mkl` builds one.

Notes: docs/mkl_transfer_notes.md, section "MKL methods (solvers/mkl)".
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence

import numpy as np
import scipy.optimize
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.model_selection import cross_val_score
from sklearn.svm import SVC

from biokernels.errors import InputError
from biokernels.solvers.easymkl import KOMD, EasyMKL
from biokernels.solvers.kernel_lists import (check_binary_labels, check_kernel_list,
                                             check_test_kernel_list, check_weights, kernel_sketch,
                                             combine_kernels)

__all__ = ["CKA", "FHeuristic", "PWMK", "EasyMKL", "KOMD", "MKLClassifier", "MKL_METHODS", "make_mkl",
           "centered_alignment_terms", "cka_weights", "kernel_alignment"]


def _center(K: np.ndarray) -> np.ndarray:
    """H K H with H = I - 11'/n (Cortes et al. 2012, Eq. 1), as a new array."""
    Kc = K - K.mean(axis=0, keepdims=True)
    Kc -= Kc.mean(axis=1, keepdims=True)
    return Kc


def centered_alignment_terms(Ks: Sequence[np.ndarray], y_pm: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """M and a of Cortes, Mohri & Rostamizadeh (JMLR 13:795-828, 2012), Proposition 9.

    ``M_kl = <K_k^c, K_l^c>_F`` and ``a_k = <K_k^c, y y'>_F`` with ``K^c = H K H``.
    (``<K^c, yy'> = <K^c, (yy')^c>`` since H is a projection, so the target need
    not be centred.)

    Parameters
    ----------
    Ks : sequence of P ndarrays (n, n), float64 (validated)
    y_pm : ndarray (n,), ±1

    Returns
    -------
    M : ndarray (P, P), symmetric PSD
    a : ndarray (P,)

    Notes
    -----
    Memory: the P centred kernels are held at once (P n² floats); time
    O(P² n²).
    """
    Kc = [_center(K) for K in Ks]
    P = len(Kc)
    M = np.empty((P, P))
    a = np.empty(P)
    for k in range(P):
        a[k] = float(y_pm @ Kc[k] @ y_pm)
        for l in range(k + 1):
            M[k, l] = M[l, k] = float(np.vdot(Kc[k], Kc[l]))
    return M, a


def cka_weights(M: np.ndarray, a: np.ndarray, ridge: float = 1e-12) -> np.ndarray:
    """Solve ``v* = argmin_{v >= 0} v'Mv - 2 v'a`` and return ``μ = v*/||v*||₂``.

    This is the alignment-maximising combination of Cortes et al. (2012),
    Proposition 9: ``max_{||μ||₂ = 1, μ >= 0} ρ(Σ μ_k K_k^c, yy')``. Because
    M is the Gram matrix of the vectorised centred kernels and ``a`` lies in
    its range, ``v'Mv - 2v'a = ||R v - c||² - const`` with ``M = R'R``,
    ``R'c = a``, which is a non-negative least-squares problem solved exactly
    by Lawson-Hanson (``scipy.optimize.nnls``, with a ridge ``ridge · tr(M)/P
    · ||v||²`` for robustness), then refined on the active set S by the
    minimum-norm solution of ``M_SS v_S = a_S``. When M is singular
    (duplicate or linearly dependent kernels) the optimum is not unique; the
    minimum-norm one shares the weight between copies instead of giving it
    to an arbitrary one (MKLpy's ``M⁻¹a`` fails there).

    Parameters
    ----------
    M : ndarray (P, P), a : ndarray (P,)
    ridge : float, relative Tikhonov term, >= 0

    Returns
    -------
    ndarray (P,), float64, non-negative with unit L2 norm.

    Raises
    ------
    InputError
        If ``v* = 0`` (no non-negative combination is positively aligned
        with the labels: every ``a_k <= 0``).
    """
    P = a.shape[0]
    evals, evecs = np.linalg.eigh(M)
    keep = evals > max(evals.max(), 0.0) * 1e-10          # M is accurate to ~1e-14 relative
    R = (np.sqrt(evals[keep])[:, None] * evecs[:, keep].T)            # M ≈ R'R
    c = (evecs[:, keep].T @ a) / np.sqrt(evals[keep])                   # R'c = a on range(M)
    if ridge > 0:
        r = np.sqrt(ridge * max(np.trace(M), np.finfo(float).tiny) / P)
        R = np.vstack([R, r * np.eye(P)])
        c = np.concatenate([c, np.zeros(P)])
    v, _ = scipy.optimize.nnls(R, c)
    # Refine on the active set S: Lawson-Hanson stops at a tolerance coarser than
    # the tiny ridge, so take the exact minimum-norm solution of M_SS v_S = a_S
    # (pseudo-inverse; equal weights for duplicate kernels); kept when positive.
    S = v > 0
    if S.any():
        vS = np.linalg.lstsq(M[np.ix_(S, S)], a[S], rcond=1e-10)[0]
        if (vS > 0).all():
            v = np.zeros(P)
            v[S] = vS
    nrm = np.linalg.norm(v)
    if not nrm > 0:
        raise InputError(f"CKA: no non-negative kernel combination is aligned with the labels "
                         f"(centred alignments a = {np.round(a, 6).tolist()})")
    return v / nrm


def kernel_alignment(K: np.ndarray, y_pm: np.ndarray, centered: bool = False) -> float:
    """Kernel-target alignment ``<K, yy'>_F / (||K||_F ||yy'||_F)``.

    Cristianini et al. (NIPS 2001); with ``centered=True`` K is replaced by
    H K H (Cortes et al. 2012). ``||yy'||_F = n`` for ±1 labels. Returns 0 for
    a zero kernel.
    """
    if centered:
        K = _center(K)
    nrm = float(np.linalg.norm(K))
    if nrm == 0:
        return 0.0
    return float(y_pm @ K @ y_pm) / (nrm * y_pm.shape[0])


class _WeightMKL(BaseEstimator):
    """Shared plumbing: validation, ``combine``."""

    psd_tol: float | None

    def _prepare(self, Ks, y):
        Ks = check_kernel_list(Ks, psd_tol=self.psd_tol)
        self.classes_, y_pm = check_binary_labels(y, Ks[0].shape[0])
        self.n_kernels_ = len(Ks)
        self.n_train_ = Ks[0].shape[0]
        self.train_sketches_ = [kernel_sketch(K) for K in Ks]  # the test x test kernel check
        return Ks, y_pm

    def combine(self, Ks: Sequence) -> np.ndarray:
        """``Σ_r weights_[r] Ks[r]``.

        Parameters
        ----------
        Ks : sequence of P array-likes, all (n_rows, n_train) — the training
            kernels or the test-vs-train kernels.

        Returns
        -------
        ndarray (n_rows, n_train), float64

        Raises
        ------
        InputError
            Wrong number of kernels, shapes, or column count (index named).
        """
        Ks = check_test_kernel_list(Ks, self.n_kernels_, self.n_train_, self.train_sketches_)
        return combine_kernels(Ks, self.weights_)


class CKA(_WeightMKL):
    """Centered kernel alignment weights (Cortes, Mohri & Rostamizadeh, JMLR 2012).

    ``weights_ = v*/||v*||₂`` with ``v* = argmin_{v >= 0} v'Mv - 2v'a``
    (Proposition 9; M, a from :func:`centered_alignment_terms`), the
    non-negative combination of maximal centred alignment with yy'.

    Differences from MKLpy 0.6 ``CKA``: MKLpy returns ``M⁻¹a / ||M⁻¹a||``
    without the constraint μ >= 0 (weights can be negative, giving an
    indefinite combined kernel), and fails (singular M) for duplicate
    kernels. The two agree whenever ``M⁻¹a >= 0``.

    Parameters
    ----------
    psd_tol : float or None, default 1e-8
    ridge : float, default 1e-12
        See :func:`cka_weights`.

    Attributes
    ----------
    weights_ : ndarray (P,), non-negative, unit L2 norm (as in the paper and MKLpy)
    alignment_matrix_ : ndarray (P, P) — M
    target_alignment_ : ndarray (P,) — a
    classes_, n_kernels_, n_train_
    """

    def __init__(self, psd_tol: float | None = 1e-8, ridge: float = 1e-12):
        self.psd_tol = psd_tol
        self.ridge = ridge

    def fit(self, Ks: Sequence, y):
        """Learn the weights. Ks: P kernels (n, n); y: (n,) two labels. Returns self.

        Raises
        ------
        InputError
            Invalid kernels/labels, or no positively aligned combination.
        """
        Ks, y_pm = self._prepare(Ks, y)
        M, a = centered_alignment_terms(Ks, y_pm)
        self.alignment_matrix_, self.target_alignment_ = M, a
        self.weights_ = cka_weights(M, a, self.ridge)
        return self


class FHeuristic(_WeightMKL):
    """Alignment-proportional weights (Qiu & Lane, IEEE/ACM TCBB 6:190-199, 2009).

    ``weights_[r] = A_r / Σ_s A_s`` with ``A_r`` the kernel-target alignment of
    kernel r (:func:`kernel_alignment`). MKLpy's ``FHeuristic`` uses the
    uncentred alignment, which is >= 0 for PSD kernels (``y'Ky >= 0``); that is
    the default. With ``centered=True`` negative alignments are clipped to 0.

    Parameters
    ----------
    centered : bool, default False
    psd_tol : float or None, default 1e-8

    Attributes
    ----------
    weights_ : ndarray (P,), non-negative, sums to 1
    alignments_ : ndarray (P,)

    Raises
    ------
    InputError (in fit)
        Invalid inputs, or every alignment <= 0.
    """

    def __init__(self, centered: bool = False, psd_tol: float | None = 1e-8):
        self.centered = centered
        self.psd_tol = psd_tol

    def fit(self, Ks: Sequence, y):
        """Learn the weights. Ks: P kernels (n, n); y: (n,) two labels. Returns self."""
        Ks, y_pm = self._prepare(Ks, y)
        A = np.array([kernel_alignment(K, y_pm, self.centered) for K in Ks])
        self.alignments_ = A
        w = np.maximum(A, 0.0)
        if not w.sum() > 0:
            raise InputError(f"FHeuristic: no kernel is positively aligned with the labels "
                             f"(alignments {np.round(A, 6).tolist()})")
        self.weights_ = w / w.sum()
        return self


class PWMK(_WeightMKL):
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
        Cloned for every kernel and fold. Default ``SVC(C=1000,
        kernel="precomputed")`` (MKLpy's default; MKLpy shares one mutable
        default instance between all its models, here a fresh clone is used).
    psd_tol : float or None, default 1e-8

    Attributes
    ----------
    weights_ : ndarray (P,), non-negative, sums to 1
    accuracies_ : ndarray (P,)
    """

    def __init__(self, delta: float = 0.0, cv=3, learner=None, psd_tol: float | None = 1e-8):
        self.delta = delta
        self.cv = cv
        self.learner = learner
        self.psd_tol = psd_tol

    def fit(self, Ks: Sequence, y):
        """Learn the weights. Ks: P kernels (n, n); y: (n,) two labels. Returns self.

        Raises
        ------
        InputError
            Invalid inputs or ``delta`` outside [0, 1].
        """
        if not 0.0 <= float(self.delta) <= 1.0:
            raise InputError(f"PWMK: delta must be in [0, 1], got {self.delta}")
        Ks, _ = self._prepare(Ks, y)
        y = np.asarray(y)
        learner = SVC(C=1000.0, kernel="precomputed") if self.learner is None else self.learner
        acc = np.array([cross_val_score(clone(learner), K, y, scoring="accuracy", cv=self.cv).mean()
                        for K in Ks])
        self.accuracies_ = acc
        w = np.maximum(acc - float(self.delta) * acc.min(), 0.0)
        self.weights_ = w / w.sum() if w.sum() > 0 else np.full(len(Ks), 1.0 / len(Ks))
        return self


#: The MKL methods by name: the values of ``mkl_transfer.methods`` (the
#: config schema's enum lists exactly these keys, tests/unit/test_registries.py).
#: Each value is an estimator class with the common API above (``fit(Ks, y)``,
#: ``weights_``, ``combine``); its constructor's keyword arguments are the
#: method's settings (:func:`make_mkl`).
MKL_METHODS: dict[str, type] = {
    "CKA": CKA,                  # Cortes, Mohri & Rostamizadeh 2012
    "EasyMKL": EasyMKL,          # Aiolli & Donini 2015 (biokernels.solvers.easymkl)
    "FHeuristic": FHeuristic,    # Qiu & Lane 2009
    "PWMK": PWMK,                # Tanabe et al. 2008
}


def make_mkl(method: str, settings: Mapping | None = None, **fixed):
    """An unfitted MKL method of :data:`MKL_METHODS`, built from its settings.

    A method's settings are the entries ``<method lowercased>_<argument>`` of
    ``settings`` (the config's flat ``mkl_transfer.learners``), passed as
    ``<argument>`` to its class: ``easymkl_lam`` -> ``EasyMKL(lam=...)``,
    ``pwmk_delta`` / ``pwmk_cv`` -> ``PWMK(delta=..., cv=...)``. Other
    entries (e.g. the classifiers' ``svc_C``, ``komd_lam``) are not the
    method's and are ignored; arguments not given keep the class defaults.

    Parameters
    ----------
    method : str
        A key of :data:`MKL_METHODS`.
    settings : mapping, optional
        Flat settings, e.g. ``{"easymkl_lam": 0.1, "pwmk_cv": 3}``.
    **fixed
        Arguments set by the caller, not by config (e.g. ``psd_tol=None``
        when the kernels were checked already); ``settings`` cannot set them.

    Returns
    -------
    estimator
        ``MKL_METHODS[method](**arguments)``, unfitted.

    Raises
    ------
    InputError
        Unknown ``method`` (the known ones are listed), or a setting that is
        not an argument of the method's class or is one of ``fixed`` (the
        ``learners`` entry and the accepted ones are named).
    """
    if method not in MKL_METHODS:
        raise InputError(f"methods: unknown MKL method {method!r}; expected one of {list(MKL_METHODS)}")
    cls = MKL_METHODS[method]
    prefix = method.lower() + "_"
    kwargs = {k[len(prefix):]: v for k, v in (settings or {}).items() if k.startswith(prefix)}
    accepted = [p for p in inspect.signature(cls).parameters if p not in fixed]
    bad = sorted(set(kwargs) - set(accepted))
    if bad:
        raise InputError(f"learners: {[prefix + b for b in bad]} set no argument of {method} "
                         f"(its settings are {[prefix + a for a in accepted]})")
    return cls(**kwargs, **fixed)


class MKLClassifier(ClassifierMixin, BaseEstimator):
    """A classifier on ``Σ_r w_r K_r``, with w learned by an MKL method or given.

    Parameters
    ----------
    mkl : estimator with ``fit(Ks, y)`` and ``weights_``, optional
        E.g. ``CKA()``, ``EasyMKL(lam=0.1)``; cloned at fit. Ignored when
        ``weights`` is given.
    weights : array (P,), optional
        Fixed non-negative weights (e.g. learned on a source task and
        transferred, the "transfer learned kernel model" of the paper).
    learner : "svc", "komd", or an estimator with ``kernel="precomputed"``
        semantics (``fit(K, y)`` on an (n, n) kernel); cloned at fit.
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
            self.mkl_ = clone(self.mkl).fit(Ks, y)
            self.weights_ = np.asarray(self.mkl_.weights_, dtype=np.float64)
            Ks = check_kernel_list(Ks, psd_tol=None)
        else:
            raise InputError("MKLClassifier needs an `mkl` method or fixed `weights`")
        self.classes_, _ = check_binary_labels(y, Ks[0].shape[0])
        self.n_kernels_, self.n_train_ = len(Ks), Ks[0].shape[0]
        self.train_sketches_ = [kernel_sketch(K) for K in Ks]  # the test x test kernel check
        self.learner_ = self._make_learner().fit(combine_kernels(Ks, self.weights_), np.asarray(y))
        return self

    def combine(self, Ks: Sequence) -> np.ndarray:
        """``Σ_r weights_[r] Ks[r]`` for (n_rows, n_train) kernels; a square
        symmetric kernel that is not training kernel r is refused (InputError)."""
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
