"""KOMD and EasyMKL on precomputed kernels.

KOMD (Aiolli, Da San Martino & Sperduti, "A kernel method for the optimization
of the margin distribution", ICANN 2008) finds the two closest points of the
convex hulls of the positive and negative examples in feature space, with a
quadratic regulariser that spreads the weight over the examples:

    γ* = argmin_{γ ∈ Γ}  (1 - λ) γ' Y K Y γ + λ ||γ||²,                   (1)
    Γ  = {γ >= 0 : Σ_{i: y_i=+1} γ_i = 1, Σ_{i: y_i=-1} γ_i = 1},  Y = diag(y), λ ∈ [0, 1].

λ = 0 is the hard-margin (closest hull points) problem; λ = 1 gives the class
centroids, γ_i = 1 / n_{y_i} (the unique minimiser of ||γ||² on Γ). The
classifier is the perpendicular bisector of the two points,

    f(x) = Σ_i y_i γ_i k(x, x_i) - b,   b = ½ γ' Y K γ = ½ (||p₊||² - ||p₋||²),   (2)

with p_± = Σ_{i: y_i=±1} γ_i φ(x_i) (b puts the threshold at the midpoint).

EasyMKL (Aiolli & Donini, "EasyMKL: a scalable multiple kernel learning
algorithm", Neurocomputing 169:215-224, 2015; the MKL step of PIMKL, Manica et
al. 2019, Supplementary) solves (1) once with the SUM of the P kernels
``K = Σ_r K_r`` and sets the weights proportional to each kernel's contribution
to the squared distance of the two points,

    d_r = γ*' Y K_r Y γ*,    η_r = d_r / Σ_s d_s                              (3)

(η ≥ 0 for PSD kernels; η sums to 1 as in PIMKL, "the weights obtained are
divided by their sum"). A KOMD classifier is then trained on ``Σ_r η_r K_r``.

Solver. Problem (1) is a convex QP over a product of two simplices. It is
solved by SMO (sequential minimal optimisation, the method of libsvm): each
step moves mass between two examples of the same class, picked by the
second-order working-set rule of Fan, Chen & Lin (JMLR 6, 2005), with an exact
line search; O(n) work per step on the precomputed ``Q = (1-λ) Y K Y + λ I``.
When the maximal KKT violation is small, the support ``S = {γ_i > 0}`` is
fixed and the equality-constrained QP on ``S`` is solved exactly (one
(|S|+2)-square linear system); the polished point is kept when it is feasible
and satisfies the KKT conditions better. The result matches an interior-point
solve (cvxpy/Clarabel, tests/unit/test_easymkl.py) to ~1e-9 in the objective,
in ~0.1-2 s for n = 250-2000 (benchmarks/bench_mkl.py). Memory: one n×n float64
matrix for Q besides the inputs.

Backends (issue #20). The SMO loop runs compiled by numba
(:mod:`biokernels.solvers.easymkl_numba`, ``backend="numba"``, the default)
or as the pure-Python/NumPy reference (``backend="python"``); the compiled
loop makes the same floating-point operations in the same order, so it takes
the same steps (tests/unit/test_easymkl.py bounds the two by the stopping
rule). With ``"numba"``, kernel sums over a float64 ``(P, n, n)`` stack are
compiled too (:func:`weighted_kernel_sum`, bit for bit ``combine_kernels``).
:meth:`EasyMKL.fit_path` and :meth:`KOMD.fit_path` fit a grid of λ on one
set of kernels with the λ-independent work (checks, PSD factorisations,
aggregated kernel, sketches) done once (PIMKL's inner λ grid).

Differences from MKLpy 0.6 (IvanoLauriola/MKLpy), documented because the
transfer-learning paper (Radhakrishnan et al., Methods "Comparison with
multiple kernel learning approaches") used MKLpy:

* MKLpy's ``KOMD`` multiplies λ in the identity term by ``n₊n₋/n``; here (1)
  is used as written in the EasyMKL paper and in the authors' reference code
  (jmikko/EasyMKL), where the same (1) serves both steps. MKLpy's
  ``KOMD(lam=μ)`` equals ``KOMD(lam=λ)`` here with
  ``λ = μc / (1 - μ + μc)``, ``c = n₊n₋/n`` (same minimiser of a positively
  rescaled objective).
* MKLpy's ``EasyMKL`` predicts with a shared default learner ``KOMD(lam=0.1)``
  whatever ``lam`` is; here the final KOMD uses ``komd_lam`` (default: the
  same λ as the weights, as in the reference code) and a fresh object per fit.
* MKLpy rejects string labels (it converts y to a torch tensor); here any
  two distinct labels work.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Sequence

import numpy as np
import scipy.linalg
from sklearn.base import BaseEstimator, ClassifierMixin

from biokernels.errors import InputError
from biokernels.solvers.kernel_lists import (KernelSketch, _probe, check_binary_labels, check_kernel_list,
                                             check_predict_kernel, check_test_kernel_list, combine_kernels,
                                             float_eps, kernel_sketch)

__all__ = ["komd_dual", "KOMD", "EasyMKL", "BACKENDS", "weighted_kernel_sum"]

#: SMO loop of :func:`komd_dual`: compiled (numba) or the pure-Python reference.
BACKENDS = ("numba", "python")


def _check_lam(lam, name="lam") -> float:
    lam = float(lam)
    if not 0.0 <= lam <= 1.0:
        raise InputError(f"{name} must be in [0, 1], got {lam}")
    return lam


def weighted_kernel_sum(Ks, weights) -> np.ndarray:
    """``Σ_r w_r K_r``, bit for bit
    :func:`~biokernels.solvers.kernel_lists.combine_kernels` (the same
    per-element additions in the same order, zero weights skipped).

    A float64 stack ``(P, n, m)`` (any memory layout) is summed by the
    compiled single-pass loop
    (:func:`biokernels.solvers.easymkl_numba.weighted_sum`); anything else (a
    list of arrays) by ``combine_kernels``. The result has ``combine_kernels``'
    memory layout (``zeros_like`` of the first kernel).

    Parameters
    ----------
    Ks : ndarray (P, n, m) or sequence of P (n, m) float64 arrays
        Already validated kernels (finite, equal shapes).
    weights : array (P,)

    Returns
    -------
    ndarray (n, m), float64, a new array
    """
    w = np.asarray(weights, dtype=np.float64)
    if isinstance(Ks, np.ndarray) and Ks.ndim == 3 and Ks.dtype == np.float64 and w.shape == (Ks.shape[0],):
        from biokernels.solvers.easymkl_numba import weighted_sum

        out = np.zeros_like(Ks[0], dtype=np.float64)
        weighted_sum(Ks, np.ascontiguousarray(w), out)
        return out
    return combine_kernels(Ks, w)


def _sketches(Ks: list[np.ndarray], eps: list[float]) -> list[KernelSketch]:
    """``[kernel_sketch(K, e) for K, e in zip(Ks, eps)]`` for validated
    float64 square kernels of one size, the probe vector drawn once."""
    if not Ks or Ks[0].shape[0] < 1:
        return [kernel_sketch(K, e) for K, e in zip(Ks, eps)]
    v = _probe(Ks[0].shape[0])
    return [KernelSketch(diag=K.diagonal().copy(), product=K @ v, scale=float(np.abs(K).max()), eps=float(e))
            for K, e in zip(Ks, eps)]


def _check_backend(backend) -> str:
    if backend not in BACKENDS:
        raise InputError(f"backend: expected one of {BACKENDS}, got {backend!r}")
    return backend


def _solve_on_support(Q: np.ndarray, pos: np.ndarray, S: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Minimiser of (1) restricted to ``S`` without the sign constraints.

    Solves the KKT system ``2 Q_SS γ_S - A' ν = 0, A γ_S = 1`` (A: class
    indicators). Returns (γ_S, ν) or None when a class is missing from S.
    """
    s_pos = pos[S]
    if not s_pos.any() or s_pos.all():
        return None
    m = S.size
    KKT = np.zeros((m + 2, m + 2))
    KKT[:m, :m] = 2.0 * Q[np.ix_(S, S)]
    KKT[:m, m] = -s_pos.astype(float)
    KKT[:m, m + 1] = -(~s_pos).astype(float)
    KKT[m, :m] = s_pos
    KKT[m + 1, :m] = ~s_pos
    rhs = np.zeros(m + 2)
    rhs[m:] = 1.0
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", scipy.linalg.LinAlgWarning)
            sol = scipy.linalg.solve(KKT, rhs, check_finite=False)
    except (np.linalg.LinAlgError, scipy.linalg.LinAlgWarning):
        sol = np.linalg.lstsq(KKT, rhs, rcond=None)[0]
    if not np.isfinite(sol).all():
        return None
    return sol[:m], sol[m:]


def _polish(Q: np.ndarray, pos: np.ndarray, gamma: np.ndarray, eps: float,
            max_rounds: int = 12) -> np.ndarray | None:
    """Primal active-set refinement from the support of ``gamma``.

    Each round solves (1) on the working set exactly; indices with negative
    values leave it, indices whose gradient is below their class multiplier
    (by more than ``eps``) enter it. Returns a feasible point (the caller
    checks optimality) or None.
    """
    S = np.flatnonzero(gamma > 0)
    for _ in range(max_rounds):
        res = _solve_on_support(Q, pos, S)
        if res is None:
            return None
        gS, nu = res
        if gS.min() < -1e-13:
            S = S[gS > 0]
            continue
        out = np.zeros_like(gamma)
        out[S] = np.maximum(gS, 0.0)
        for c in (pos, ~pos):
            out[c] /= out[c].sum()
        g = 2.0 * (Q @ out)
        nu_i = np.where(pos, nu[0], nu[1])
        enter = np.flatnonzero((out == 0) & (g < nu_i - eps))
        if enter.size == 0:
            return out
        S = np.union1d(S, enter)
    return None


def _kkt_violation(g: np.ndarray, gamma: np.ndarray, pos: np.ndarray) -> float:
    """max over classes of (max gradient on the support - min gradient): 0 at the optimum."""
    v = 0.0
    for c in (pos, ~pos):
        gc, sc = g[c], gamma[c] > 0
        v = max(v, float(gc[sc].max() - gc.min()))
    return v


def _smo_python(Q: np.ndarray, diag: np.ndarray, gamma: np.ndarray, g: np.ndarray, classes: list,
                eps_stage: float, tau: float, it: int, max_iter: int) -> int:
    """SMO steps on (1) in place until the KKT spread is ``<= eps_stage`` (the
    reference loop; :func:`biokernels.solvers.easymkl_numba.smo_loop` is the
    same loop compiled). Returns the step count."""
    while it < max_iter:
        best = None
        for idx in classes:
            gc = g[idx]
            up = np.where(gamma[idx] > 0, gc, -np.inf)
            ii = int(np.argmax(up))
            gi = gc[ii]
            if gi - gc.min() <= eps_stage:
                continue
            i = idx[ii]
            b = gi - gc                                    # > 0 where moving mass i -> j helps
            a = np.maximum(diag[i] + diag[idx] - 2.0 * Q[i, idx], tau)
            score = np.where(b > 0, b * b / a, -np.inf)
            jj = int(np.argmax(score))
            if best is None or score[jj] > best[0]:
                best = (score[jj], i, idx[jj], b[jj], a[jj])
        if best is None:
            break
        _, i, j, b, a = best
        t = min(gamma[i], b / (2.0 * a))
        gamma[i] -= t
        gamma[j] += t
        if gamma[i] < 1e-300:
            gamma[i] = 0.0
        g += (2.0 * t) * (Q[j] - Q[i])                    # Q symmetric: rows = columns
        it += 1
    return it


def komd_dual(K, y_pm, lam: float, *, tol: float = 1e-9, max_iter: int | None = None,
              polish: bool = True, backend: str = "numba") -> tuple[np.ndarray, dict]:
    """Solve the KOMD problem (1) by SMO plus an exact polish on the support.

    Parameters
    ----------
    K : ndarray, shape (n, n), float64
        Symmetric PSD kernel (not checked here; the estimators check).
    y_pm : ndarray, shape (n,)
        Labels in {+1, -1}, both present.
    lam : float
        λ in [0, 1].
    tol : float
        SMO stops when the maximal KKT violation (gradient spread on the
        support, within a class) is ``<= tol * max(1, max diag Q)``.
    max_iter : int, optional
        SMO step limit; default ``max(10_000, 100 n)``.
    polish : bool
        Solve the equality-constrained QP on the final support exactly.
    backend : {"numba", "python"}, default "numba"
        The SMO loop compiled by numba
        (:func:`biokernels.solvers.easymkl_numba.smo_loop`) or the
        pure-Python/NumPy reference loop; the same operations in the same
        order (the compiled loop: 10-30x faster per step at n = 100-300).

    Returns
    -------
    gamma : ndarray, shape (n,), float64
        γ*, non-negative, summing to 1 over each class.
    info : dict
        ``objective`` (value of (1)), ``iterations``, ``kkt_violation``,
        ``polished`` (bool), ``seconds``.

    Raises
    ------
    InputError
        ``lam`` outside [0, 1], a class without examples, or an unknown
        ``backend``.
    """
    t0 = time.perf_counter()
    lam = _check_lam(lam)
    _check_backend(backend)
    K = np.asarray(K, dtype=np.float64)
    y = np.asarray(y_pm, dtype=np.float64)
    n = y.shape[0]
    pos = y > 0
    n_pos, n_neg = int(pos.sum()), int((~pos).sum())
    if n_pos == 0 or n_neg == 0:
        raise InputError(f"KOMD needs both classes, got {n_pos} positive and {n_neg} negative")
    # Q = (1-λ) Y K Y + λ I, built in place.
    Q = np.multiply(K, np.outer(y, y))
    Q *= 1.0 - lam
    Q.flat[:: n + 1] += lam
    diag = Q.diagonal().copy()
    gamma = np.where(pos, 1.0 / n_pos, 1.0 / n_neg)
    g = 2.0 * (Q @ gamma)
    eps = tol * max(1.0, float(diag.max()))
    tau = 1e-12 * max(1.0, float(diag.max()))
    if max_iter is None:
        max_iter = max(10_000, 100 * n)
    classes = [np.flatnonzero(pos), np.flatnonzero(~pos)]
    it = 0
    polished = False
    # Staged: SMO to a loose tolerance, then try the exact polish on the current
    # support; if that is not yet optimal, tighten and continue.
    stages = [s for s in (1e-3, 1e-5, 1e-7) if s > tol] + [tol] if polish else [tol]
    for stage_tol in stages:
        eps_stage = stage_tol * max(1.0, float(diag.max()))
        if backend == "numba":
            from biokernels.solvers.easymkl_numba import smo_loop

            it = smo_loop(Q, diag, gamma, g, classes[0], classes[1], eps_stage, tau, it, max_iter)
        else:
            it = _smo_python(Q, diag, gamma, g, classes, eps_stage, tau, it, max_iter)
        if polish:
            cand = _polish(Q, pos, gamma, eps)
            if cand is not None:
                g_c = 2.0 * (Q @ cand)
                if _kkt_violation(g_c, cand, pos) <= eps:
                    gamma, g, polished = cand, g_c, True
                    break
    viol = _kkt_violation(g, gamma, pos)
    obj = 0.5 * float(gamma @ g)
    return gamma, {"objective": obj, "iterations": it, "kkt_violation": viol, "polished": polished,
                   "seconds": time.perf_counter() - t0}


class KOMD(ClassifierMixin, BaseEstimator):
    """Kernel method for the Optimization of the Margin Distribution, precomputed kernel.

    Solves (1) of the module docstring and predicts with (2).

    Parameters
    ----------
    lam : float, default 0.1
        λ ∈ [0, 1] of (1): 0 = closest hull points (hard margin), 1 = class
        centroids. NOT MKLpy's ``KOMD(lam)`` (see the module docstring).
    tol : float, default 1e-9
        Relative KKT tolerance of :func:`komd_dual`.
    max_iter : int, optional
        SMO step limit of :func:`komd_dual`.
    psd_tol : float or None, default 1e-8
        Rejects a kernel with ``λ_min < -psd_tol * trace``; None skips the check.
    backend : {"numba", "python"}, default "numba"
        SMO loop of :func:`komd_dual` (compiled, or the reference loop).

    Attributes
    ----------
    classes_ : ndarray, shape (2,)
        Sorted labels; ``classes_[1]`` is the positive class (f >= 0).
    gamma_ : ndarray, shape (n_train,), float64
        γ*; sums to 1 within each class.
    dual_coef_ : ndarray, shape (n_train,)
        ``y_i γ_i`` (±1 labels).
    bias_ : float
        b of (2).
    objective_ : float
        Value of (1) at γ* (the squared distance of the two points when λ = 0).
    solver_info_ : dict
        What :func:`komd_dual` returned.
    train_sketch_ : KernelSketch
        Fingerprint of the training kernel
        (:func:`~biokernels.solvers.kernel_lists.kernel_sketch`), used by
        :meth:`decision_function` to reject a test x test kernel.
    """

    def __init__(self, lam: float = 0.1, tol: float = 1e-9, max_iter: int | None = None,
                 psd_tol: float | None = 1e-8, backend: str = "numba"):
        self.lam = lam
        self.tol = tol
        self.max_iter = max_iter
        self.psd_tol = psd_tol
        self.backend = backend

    def fit(self, K, y):
        """Fit on a precomputed training kernel.

        Parameters
        ----------
        K : array-like, shape (n_train, n_train)
            Symmetric PSD kernel.
        y : array-like, shape (n_train,)
            Two distinct labels of any type (ints, strings, ...).

        Returns
        -------
        self

        Raises
        ------
        InputError
            Non-square, non-symmetric, non-PSD, NaN kernel; labels of the
            wrong length or not exactly 2 classes; lam outside [0, 1].
        """
        eps = float_eps(K)
        K = check_kernel_list([K], psd_tol=self.psd_tol)[0]
        return self._fit_checked(K, y, eps)

    def fit_path(self, K, y, lams: Sequence[float]) -> list[KOMD]:
        """One KOMD per λ in ``lams`` on the same kernel, the checks (symmetry,
        finiteness and, with ``psd_tol``, the PSD factorisation) done once.

        Each model equals ``clone(self).set_params(lam=lam).fit(K, y)`` (same
        arithmetic, so the same numbers).

        Parameters
        ----------
        K : array-like, shape (n_train, n_train)
            Symmetric PSD kernel.
        y : array-like, shape (n_train,)
            Two distinct labels.
        lams : sequence of float in [0, 1]

        Returns
        -------
        list of KOMD, one per λ, in the order of ``lams``

        Raises
        ------
        InputError
            As :meth:`fit` (the kernel and labels once; any λ outside [0, 1]
            before any fit).
        """
        lams = [_check_lam(lam) for lam in lams]
        eps = float_eps(K)
        K = check_kernel_list([K], psd_tol=self.psd_tol)[0]
        return [self._copy(lam)._fit_checked(K, y, eps) for lam in lams]

    def _copy(self, lam: float) -> KOMD:
        """An unfitted copy with ``lam`` (``clone(self).set_params(lam=lam)``
        without scikit-learn's signature inspection)."""
        return type(self)(lam=lam, tol=self.tol, max_iter=self.max_iter, psd_tol=self.psd_tol,
                          backend=self.backend)

    def _fit_checked(self, K: np.ndarray, y, eps: float | None = None):
        _check_backend(self.backend)
        self.classes_, y_pm = check_binary_labels(y, K.shape[0])
        gamma, info = komd_dual(K, y_pm, self.lam, tol=self.tol, max_iter=self.max_iter, backend=self.backend)
        self.gamma_ = gamma
        self.dual_coef_ = y_pm * gamma
        self.bias_ = 0.5 * float(gamma @ (K @ self.dual_coef_))
        self.objective_ = info["objective"]
        self.solver_info_ = info
        self.n_train_ = K.shape[0]
        self.train_sketch_ = kernel_sketch(K, eps)
        return self

    def decision_function(self, K_test):
        """f(x) of (2) for each test sample.

        Parameters
        ----------
        K_test : array-like, shape (n_test, n_train)
            Kernel between test and training samples.

        Returns
        -------
        ndarray, shape (n_test,), float64
            Positive values predict ``classes_[1]``.

        Raises
        ------
        InputError
            Wrong column count, NaN, or a square symmetric (n_train, n_train)
            kernel that is not the training kernel (a test x test kernel;
            :func:`~biokernels.solvers.kernel_lists.check_predict_kernel`).
        """
        K_test = check_predict_kernel(K_test, self.n_train_, self.train_sketch_, name="K_test")
        return K_test @ self.dual_coef_ - self.bias_

    def predict(self, K_test):
        """Labels ``classes_[1]`` where f >= 0, else ``classes_[0]`` (shape (n_test,))."""
        return self.classes_[(self.decision_function(K_test) >= 0).astype(int)]


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
        lam = _check_lam(self.lam)
        komd_lam = lam if self.komd_lam is None else _check_lam(self.komd_lam, "komd_lam")
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
        lams = [_check_lam(lam) for lam in lams]
        komd_lam = None if self.komd_lam is None else _check_lam(self.komd_lam, "komd_lam")
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
        InputError
            Wrong number of kernels or shapes (index named), or a square
            symmetric kernel that is not the training kernel of its index.
        """
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
        InputError
            Wrong number of kernels, a column count other than ``n_train``,
            NaN, or kernel ``r`` square and symmetric but not training kernel
            ``r`` (a test x test kernel; index and shapes named).
        """
        Ks_test = check_test_kernel_list(Ks_test, self.n_kernels_, self.n_train_, self.train_sketches_)
        return self.komd_.decision_function(combine_kernels(Ks_test, self.weights_))

    def predict(self, Ks_test: Sequence) -> np.ndarray:
        """Labels (shape (n_test,)) from :meth:`decision_function`."""
        return self.classes_[(self.decision_function(Ks_test) >= 0).astype(int)]
