"""Transfer versus multiple kernel learning (SI Fig. S7 of the transfer-learning paper).

Radhakrishnan, Ruiz Luyten, Prasad & Uhler, "Transfer learning with kernel
methods", Nat. Commun. 2023, Methods "Comparison with multiple kernel learning
approaches" (and its Remark), SI Fig. S7: each MKL method (CKA, EasyMKL,
FHeuristic, PWMK) learns weights of three base kernels — Laplace
``exp(-||x - z||₂ / L)`` with L = 10, Gaussian ``exp(-γ ||x - z||²)``, linear
``x'z`` — on a binary source task; on each target task three models are
compared on held-out target samples:

``baseline``
    the MKL method run directly on the target (weights and classifier
    learned on the target training samples);
``transfer``
    the "transfer learned kernel": the source-learned weights combine the
    target's base kernels, and the classifier is trained on the target
    training samples;
``translation``
    Definition 2 applied to the source model of the learned kernel: a kernel
    regression ``f_s`` on the source training samples (labels ±1) with the
    source-learned combination ``K_w = Σ_r w_r K_r``, then on the target
    ``f_t = f_s + f_c`` with ``f_c`` a kernel regression (same ``K_w``) on the
    residual ``y_t - f_s(X_t)``; classify by the sign. The paper solved the
    CIFAR-10-C translations "exactly (no ridge)"; here a small ridge is
    added, given relative to the kernel's mean diagonal: ``ridge_rel``, the
    absolute ``λ = ridge_rel · mean(diag K)``
    (:func:`biokernels.solvers.ridge_core.absolute_ridge`), so
    ``(K + λ I) α = y``. It is chosen by closed-form leave-one-out from a
    grid (``RIDGE_REL_GRID``, from 1e-6 ≈ exact) on the source samples for
    ``f_s`` and on the target residuals for ``f_c``, using training samples
    only; fixed numbers can be given instead. (Relative, so that one grid
    fits every learned combination ``Σ_r w_r K_r``, whose scale follows the
    method's weight normalisation: weights summing to 1, or of unit L2 norm
    for CKA.)

``source`` (``f_s`` alone on the target test samples) is reported beside
them, as in the paper's Fig. 3 (not in S7).

The classifiers of ``baseline`` and ``transfer`` are MKLpy's defaults, as the
paper used MKLpy: an SVC with C = 1000 on the combined kernel for CKA,
FHeuristic and PWMK, and KOMD (λ = 0.1) for EasyMKL
(:class:`biokernels.solvers.mkl.MKLClassifier`).

Base-kernel scales (``KernelSpec``). The paper took L = 10 from EigenPro's
defaults and "the value of γ for the Gaussian kernel so that the entries of
the Gaussian kernel are on the same order of magnitude as the Laplace kernel
for this task", which gave γ = 0.001 on CIFAR-10 (3072 features in [0, 1]).
The tasks here have other scales (8×8 digits in [0, 16]; binary drug
fingerprints), so ``gamma="match"`` applies the paper's rule instead of its
number: γ = 1 / (L · d_med), with d_med the median pairwise Euclidean
distance of the source training samples, so that both kernels equal
``exp(-d_med / L)`` at the median distance. The linear kernel is scaled by
``linear_scale`` (``"match"``: 1 / mean ||x||² over the source training
samples, so its diagonal is ≈ 1 like the others'; 1.0 gives the paper's raw
``x'z``); MKL weights of CKA are scale-equivariant, those of FHeuristic,
EasyMKL and PWMK are not, and an unscaled linear kernel (entries ~10⁴ on the
digits) would otherwise dominate every combination. Scales are fixed from the
source training samples and reused on every target (a kernel is a function of
the inputs, not of the task).

Tasks (builders below, both pure given a seed):

* :func:`digit_tasks` — scikit-learn's 8×8 digits, two classes (3 vs 8), clean
  source, the same classes under the corruptions of
  :mod:`biokernels.synth.corruptions` as targets. The paper had CIFAR-10 cars
  vs deer (10 000 train / 2 000 test) and 1 000 / 1 000 target samples; the
  digits have only 357 images of 3 and 8, so the source gets half (about
  149 train / 30 test) and each target the other half, about 88 train / 90
  test.
* :func:`viability_tasks` — drug response from a DepMap/PRISM-style viability
  table: source = one cell line, targets = other cell lines; features = drug
  Morgan fingerprints; label 1 = the drug is "effective" on the cell line
  (viability below the cell line's median, or below a fixed threshold).
  Drugs are split at random into disjoint source and target sets (a new cell
  line and new drugs), as the digits source and target images are disjoint.

Outputs are tidy DataFrames: accuracies (target, method, model, accuracy,
seed, n_train, n_test, ridge_rel) and weights (target, method, kernel,
weight, seed).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.spatial.distance import cdist, pdist

from biokernels.errors import InputError
from biokernels.solvers.kernel_lists import check_binary_labels, combine_kernels
from biokernels.solvers.mkl import MKLClassifier, make_mkl
# the torch-free half of the ridge service: these rules run in the core environment (no torch)
from biokernels.solvers.ridge_core import NotPositiveDefiniteError, absolute_ridge, ridge_scale, solve_ridge_exact

__all__ = ["METHODS", "MODELS", "KERNEL_NAMES", "RIDGE_REL_GRID", "KernelSpec", "resolve_kernel_spec",
           "base_kernels", "krr_coefficients", "loo_ridge_rel", "translate", "run_transfer", "digit_tasks",
           "viability_tasks", "summarize", "plot_accuracies"]

METHODS = ("CKA", "EasyMKL", "FHeuristic", "PWMK")
MODELS = ("baseline", "transfer", "translation", "source")
KERNEL_NAMES = ("laplace", "gaussian", "linear")
# Relative ridges (ridge_rel: multiples of mean(diag K)) tried by leave-one-out
# for the translation's regressions.
RIDGE_REL_GRID = (1e-6, 1e-4, 1e-3, 1e-2, 1e-1, 1.0)


# ----------------------------------------------------------------- kernels
@dataclass(frozen=True)
class KernelSpec:
    """Resolved scales of the three base kernels.

    Attributes
    ----------
    bandwidth : float  L of the Laplace kernel ``exp(-||x-z||₂/L)``
    gamma : float      γ of the Gaussian kernel ``exp(-γ||x-z||²)``
    linear_scale : float  c of the linear kernel ``c · x'z``
    """

    bandwidth: float
    gamma: float
    linear_scale: float


def _as_matrix(X, name: str) -> np.ndarray:
    A = np.asarray(X, dtype=np.float64)
    if A.ndim != 2 or A.shape[0] == 0:
        raise InputError(f"{name}: expected a non-empty (n_samples, n_features) matrix, got shape {A.shape}")
    if not np.isfinite(A).all():
        raise InputError(f"{name}: NaN or infinite feature values")
    return A


def resolve_kernel_spec(X_source, bandwidth: float = 10.0, gamma: float | str = "match",
                        linear_scale: float | str = "match", max_samples: int = 2000) -> KernelSpec:
    """Fix the base-kernel scales from the source training samples.

    Parameters
    ----------
    X_source : array (n, p), the source training features
    bandwidth : float > 0, Laplace L (paper: 10)
    gamma : float > 0 or "match"
        "match": γ = 1 / (L · median pairwise distance) (the paper's rule,
        see the module docstring); the paper's CIFAR number is 0.001.
    linear_scale : float > 0 or "match"
        "match": 1 / mean ||x||²; 1.0 is the raw ``x'z``.
    max_samples : int
        The median distance uses at most this many (the first) samples.

    Returns
    -------
    KernelSpec

    Raises
    ------
    InputError
        Non-positive or unknown settings, a single sample or all-identical
        samples with "match", all-zero features with linear "match".
    """
    X = _as_matrix(X_source, "source features")
    if not float(bandwidth) > 0:
        raise InputError(f"kernels.laplace_bandwidth: expected > 0, got {bandwidth}")
    if gamma == "match":
        if X.shape[0] < 2:
            raise InputError("kernels.gaussian_gamma=match needs at least 2 source samples")
        d_med = float(np.median(pdist(X[:max_samples])))
        if not d_med > 0:
            raise InputError("kernels.gaussian_gamma=match: the median source distance is 0")
        g = 1.0 / (float(bandwidth) * d_med)
    elif isinstance(gamma, str) or not float(gamma) > 0:
        raise InputError(f"kernels.gaussian_gamma: expected a number > 0 or 'match', got {gamma!r}")
    else:
        g = float(gamma)
    if linear_scale == "match":
        m = float(np.mean(np.sum(X * X, axis=1)))
        if not m > 0:
            raise InputError("kernels.linear_scale=match: the source features are all zero")
        c = 1.0 / m
    elif isinstance(linear_scale, str) or not float(linear_scale) > 0:
        raise InputError(f"kernels.linear_scale: expected a number > 0 or 'match', got {linear_scale!r}")
    else:
        c = float(linear_scale)
    return KernelSpec(float(bandwidth), g, c)


def base_kernels(X, Z=None, spec: KernelSpec | None = None) -> list[np.ndarray]:
    """The paper's three base kernels between X and Z (numpy, float64).

    Same formulas as :mod:`biokernels.kernels.classic` (torch), in numpy so
    the workflow's rules run in the core environment.

    Parameters
    ----------
    X : array (n, p); Z : array (m, p), optional (defaults to X)
    spec : KernelSpec, default ``KernelSpec(10, 1e-3, 1)`` (the paper's numbers)

    Returns
    -------
    list of 3 ndarrays (n, m): [Laplace, Gaussian, linear] (``KERNEL_NAMES``).
    With Z omitted the matrices are exactly symmetric with unit diagonals for
    Laplace and Gaussian.

    Raises
    ------
    InputError
        Non-finite features or differing feature counts.
    """
    spec = spec or KernelSpec(10.0, 1e-3, 1.0)
    X = _as_matrix(X, "X")
    same = Z is None
    Z = X if same else _as_matrix(Z, "Z")
    if X.shape[1] != Z.shape[1]:
        raise InputError(f"X has {X.shape[1]} features but Z has {Z.shape[1]}")
    D = cdist(X, Z, "euclidean")
    if same:
        D = 0.5 * (D + D.T)
        np.fill_diagonal(D, 0.0)
    lin = spec.linear_scale * (X @ Z.T)
    if same:
        lin = 0.5 * (lin + lin.T)
    return [np.exp(-D / spec.bandwidth), np.exp(-spec.gamma * D * D), lin]


# ------------------------------------------------------------ translation
def krr_coefficients(K, y, ridge_rel: float) -> np.ndarray:
    """Kernel regression coefficients ``α = (K + λ I)⁻¹ y`` with ``λ = ridge_rel · mean(diag K)``.

    Solved by the ridge service's exact solve
    (:func:`biokernels.solvers.ridge_core.solve_ridge_exact`: SciPy's
    Cholesky, float64, no intercept; torch-free, as these rules run in the
    core environment); when ``K + λ I`` is not positive definite (``ridge_rel
    = 0`` on a singular K) the minimum-norm least-squares solution
    (``numpy.linalg.lstsq``) is returned instead.

    Parameters
    ----------
    K : array (n, n), symmetric PSD; y : array (n,) or (n, k), float
    ridge_rel : float >= 0, relative to the mean diagonal
        (:func:`~biokernels.solvers.ridge_core.absolute_ridge`; 0 =
        interpolation, the paper's "exact" kernel regression)

    Returns
    -------
    ndarray, the shape of y

    Raises
    ------
    InputError
        Negative or non-finite ``ridge_rel``, shapes that disagree.
    """
    K = np.asarray(K, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if K.ndim != 2 or K.shape[0] != K.shape[1] or y.shape[0] != K.shape[0]:
        raise InputError(f"krr: expected K (n, n) and y (n,), got {K.shape} and {y.shape}")
    lam = absolute_ridge(K, ridge_rel)
    try:
        return solve_ridge_exact(K, y, lam)[0]
    except NotPositiveDefiniteError:
        return np.linalg.lstsq(K + lam * np.eye(K.shape[0]), y, rcond=None)[0]


def loo_ridge_rel(K, y, grid: Sequence[float]) -> tuple[float, np.ndarray, np.ndarray]:
    """Pick the relative ridge ``ridge_rel`` of :func:`krr_coefficients` by leave-one-out squared error.

    Closed form from one eigendecomposition ``K = U Λ U'``: with
    ``A = K + λ I`` (``λ = ridge_rel · mean(diag K)``,
    :func:`~biokernels.solvers.ridge_core.ridge_scale`), the LOO residuals
    are ``(A⁻¹y)_i / (A⁻¹)_ii`` (Allen 1974; Rifkin & Lippert 2007) and
    ``α = U (Λ + λ)⁻¹ U'y``. Eigenvalues are clipped at ``1e-12 · λ_max`` (a
    0 ridge on a singular K).

    This is a different selection criterion (leave-one-out, not a holdout)
    and a different algorithm (one eigendecomposition for the whole grid,
    not a Cholesky per grid value) from the ridge service's
    :func:`~biokernels.solvers.ridge_core.select_ridge_holdout`; it shares
    the service's relative-to-absolute conversion.

    Parameters
    ----------
    K : (n, n) symmetric PSD; y : (n,) float; grid : non-empty ``ridge_rel``
        values >= 0 (relative to mean(diag K)); ties (LOO errors within a
        relative 1e-12 of the minimum) go to the larger ridge.

    Returns
    -------
    ridge_rel : float, the chosen grid value
    alpha : (n,), the coefficients at that ridge
    loo_mse : (len(grid),), the LOO mean squared error of every grid value

    Raises
    ------
    InputError
        Empty grid, a negative ridge, inconsistent shapes.
    """
    grid = [float(g) for g in grid]
    if not grid or min(grid) < 0:
        raise InputError(f"ridge_rel grid: expected non-negative values, got {grid}")
    K = np.asarray(K, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if K.ndim != 2 or K.shape[0] != K.shape[1] or y.shape != (K.shape[0],):
        raise InputError(f"loo_ridge_rel: expected K (n, n) and y (n,), got {K.shape} and {y.shape}")
    lam, U = np.linalg.eigh(0.5 * (K + K.T))
    lam = np.maximum(lam, 1e-12 * max(float(lam.max()), np.finfo(float).tiny))
    Uy = U.T @ y
    U2 = U * U
    scale = ridge_scale(K)
    mse, alphas = [], []
    for g in grid:
        inv = 1.0 / (lam + g * scale)
        alpha = U @ (inv * Uy)
        mse.append(float(np.mean((alpha / (U2 @ inv)) ** 2)))
        alphas.append(alpha)
    mse = np.array(mse)
    best = max(i for i in range(len(grid)) if mse[i] <= mse.min() * (1 + 1e-12))
    return grid[best], alphas[best], mse


def _fit(K, y, ridge_rel) -> tuple[float, np.ndarray]:
    """(ridge_rel, α): a number is used as is, a sequence is a LOO grid (:func:`loo_ridge_rel`)."""
    if isinstance(ridge_rel, (int, float, np.floating)):
        return float(ridge_rel), krr_coefficients(K, y, float(ridge_rel))
    r, a, _ = loo_ridge_rel(K, y, ridge_rel)
    return r, a


def translate(K_ss, y_s, K_ts, K_tt, y_t, K_qs, K_qt, source_ridge_rel: float | Sequence[float] = 1e-4,
              target_ridge_rel: float | Sequence[float] = 1e-4) -> dict:
    """Translated kernel predictor (Definition 2) with precomputed kernels.

    ``f_s = K(·, X_s) α_s`` with ``α_s = krr(K_ss, y_s)``; ``f_c = K(·, X_t) α_c``
    with ``α_c = krr(K_tt, y_t - f_s(X_t))``; ``f_t = f_s + f_c``.

    Parameters
    ----------
    K_ss : (n_s, n_s) source training kernel; y_s : (n_s,) float source targets
    K_ts : (n_t, n_s) target training vs source training
    K_tt : (n_t, n_t) target training kernel; y_t : (n_t,) float target targets
    K_qs : (n_q, n_s) and K_qt : (n_q, n_t) query vs source / target training
    source_ridge_rel, target_ridge_rel : float >= 0, relative ridges (see
        :func:`krr_coefficients`), or a grid chosen by leave-one-out on the
        source samples / on the target residuals (:func:`loo_ridge_rel`)

    Returns
    -------
    dict: ``source`` = f_s(queries), ``correction`` = f_c(queries),
    ``translation`` = f_s + f_c, each (n_q,); ``source_on_target`` = f_s(X_t)
    (n_t,); ``source_ridge_rel``, ``target_ridge_rel``: the relative ridges used.

    Raises
    ------
    InputError
        Inconsistent kernel shapes, negative ridges.

    Notes
    -----
    A huge ``target_ridge_rel`` gives f_c → 0 (translation = source model);
    ``y_s = 0`` gives f_s = 0 (translation = target-only kernel regression).
    Cost: one n_s³/3 and one n_t³/3 Cholesky (an eigendecomposition each
    with grids); memory: the given kernels.
    """
    K_ts, K_qs, K_qt = (np.asarray(a, dtype=np.float64) for a in (K_ts, K_qs, K_qt))
    r_s, a_s = _fit(K_ss, y_s, source_ridge_rel)
    if K_ts.shape != (np.shape(K_tt)[0], a_s.shape[0]) or K_qs.shape[1] != a_s.shape[0] \
            or K_qt.shape != (K_qs.shape[0], np.shape(K_tt)[0]):
        raise InputError(f"translate: inconsistent kernel shapes K_ts {K_ts.shape}, K_tt {np.shape(K_tt)}, "
                         f"K_qs {K_qs.shape}, K_qt {K_qt.shape} for {a_s.shape[0]} source samples")
    fs_t = K_ts @ a_s
    r_t, a_c = _fit(K_tt, np.asarray(y_t, dtype=np.float64) - fs_t, target_ridge_rel)
    fs_q = K_qs @ a_s
    fc_q = K_qt @ a_c
    return {"source": fs_q, "correction": fc_q, "translation": fs_q + fc_q, "source_on_target": fs_t,
            "source_ridge_rel": r_s, "target_ridge_rel": r_t}


# ---------------------------------------------------------------- runner
def _make_mkl(method: str, learners: Mapping) -> object:
    """The MKL method ``method`` of :data:`biokernels.solvers.mkl.MKL_METHODS`
    with its ``learners`` settings (``easymkl_lam``, ``pwmk_delta``,
    ``pwmk_cv``, ...: :func:`~biokernels.solvers.mkl.make_mkl`), unfitted;
    ``psd_tol=None`` as the base kernels are checked once when built.
    Raises InputError for an unknown method (the known ones listed) or setting."""
    return make_mkl(method, learners, psd_tol=None)


def _classifier(method: str, learners: Mapping, weights=None) -> MKLClassifier:
    """MKLpy's default learners: KOMD for EasyMKL, SVC(C=1000) for the others."""
    learner = "komd" if method == "EasyMKL" else "svc"
    return MKLClassifier(mkl=None if weights is not None else _make_mkl(method, learners), weights=weights,
                         learner=learner, C=float(learners.get("svc_C", 1000.0)),
                         komd_lam=float(learners.get("komd_lam", 0.1)))


def _check_task(name: str, task: Mapping, n_features: int | None, classes=None):
    keys = ("X_train", "y_train", "X_test", "y_test")
    missing = [k for k in keys if k not in task]
    if missing:
        raise InputError(f"{name}: missing {missing}")
    Xtr = _as_matrix(task["X_train"], f"{name} X_train")
    Xte = _as_matrix(task["X_test"], f"{name} X_test")
    if n_features is not None and (Xtr.shape[1] != n_features or Xte.shape[1] != n_features):
        raise InputError(f"{name}: expected {n_features} features like the source, got "
                         f"{Xtr.shape[1]} (train) and {Xte.shape[1]} (test)")
    if Xtr.shape[1] != Xte.shape[1]:
        raise InputError(f"{name}: train has {Xtr.shape[1]} features, test {Xte.shape[1]}")
    ytr, yte = np.asarray(task["y_train"]), np.asarray(task["y_test"])
    if ytr.shape != (Xtr.shape[0],) or yte.shape != (Xte.shape[0],):
        raise InputError(f"{name}: expected one label per sample, got {ytr.shape} labels for {Xtr.shape[0]} "
                         f"training and {yte.shape} for {Xte.shape[0]} test samples")
    try:
        cls, _ = check_binary_labels(ytr, ytr.shape[0])
    except InputError as exc:
        raise InputError(f"{name}: training labels: {exc}") from None
    if classes is not None:
        if not np.array_equal(cls, classes):
            raise InputError(f"{name}: training labels are {cls.tolist()}, expected the source's "
                             f"{list(classes)}")
        extra = set(np.unique(yte).tolist()) - set(np.asarray(classes).tolist())
        if extra:
            raise InputError(f"{name}: test labels {sorted(extra)} are not among the source's {list(classes)}")
    return Xtr, ytr, Xte, yte, cls


def transfer_options(model: Mapping) -> dict:
    """Keyword arguments of :func:`run_transfer` from the ``mkl_transfer``
    config section (``methods``, ``kernels``, ``learners``, ``translation``)."""
    return {"methods": model["methods"], "kernels": model["kernels"], "learners": model["learners"],
            "source_ridge_rel": model["translation"]["source_ridge_rel"],
            "target_ridge_rel": model["translation"]["target_ridge_rel"]}


def run_transfer(source: Mapping, targets: Mapping[str, Mapping], *, seed: int,
                 methods: Sequence[str] = METHODS, kernels: Mapping | None = None,
                 learners: Mapping | None = None,
                 source_ridge_rel: float | Sequence[float] = RIDGE_REL_GRID,
                 target_ridge_rel: float | Sequence[float] = RIDGE_REL_GRID) -> tuple[pd.DataFrame, pd.DataFrame]:
    """SI Fig. S7 on one source task and several targets: baseline, transfer, translation per MKL method.

    Parameters
    ----------
    source : mapping with ``X_train`` (n_s, p), ``y_train`` (n_s,), ``X_test``,
        ``y_test``: two distinct labels of any type; ``classes[1]`` of
        ``np.unique(y_train)`` is +1 in the regressions.
    targets : mapping name -> the same keys (p features, the source's labels).
    seed : int, recorded in the outputs (the inputs carry the randomness;
        the methods here are deterministic).
    methods : subset of ``METHODS``
    kernels : ``{"laplace_bandwidth", "gaussian_gamma", "linear_scale"}``
        (see :func:`resolve_kernel_spec`); default 10 / "match" / "match".
    learners : ``{"svc_C": 1000, "komd_lam": 0.1, "easymkl_lam": 0.1,
        "pwmk_delta": 0, "pwmk_cv": 3}`` (defaults as shown: MKLpy's)
    source_ridge_rel, target_ridge_rel : relative ridges (multiples of
        mean(diag K)) of the translation's regressions
        (:func:`krr_coefficients`), or grids chosen by leave-one-out on the
        source / target training samples (:func:`loo_ridge_rel`; default
        ``RIDGE_REL_GRID``). The paper solved exactly
        (ridge 0); on the small tasks here the near-interpolating linear
        part of a combination (e.g. CKA's all-linear weights, n_t = 88 vs
        64 pixels) makes an unregularised fit unstable.

    Returns
    -------
    accuracies : DataFrame, columns target, method, model, accuracy, seed,
        n_train, n_test, ridge_rel (relative ridge: the translation's target
        ``ridge_rel``, the source model's source ``ridge_rel``; NaN for the
        MKL classifiers). ``target == "source"`` rows hold the source model's
        accuracy on the source test samples (models ``baseline`` = MKL
        classifier, ``source`` = kernel regression ``f_s``).
    weights : DataFrame, columns target, method, kernel, weight, seed: the
        weights learned on the source (target "source") and on each target.

    Raises
    ------
    InputError
        Bad features (names the task), a target whose training labels are
        not the source's two classes (e.g. a single class; names the
        target), an unknown method, or an MKL method that fails on a task
        (message prefixed by the task's name).
    """
    kernels = dict(kernels or {})
    learners = dict(learners or {})
    if not targets:
        raise InputError("targets: expected at least one target task")
    for m in methods:
        if m not in METHODS:
            raise InputError(f"methods: unknown MKL method {m!r}; expected one of {list(METHODS)}")
    Xs, ys, Xsq, ysq, classes = _check_task("source", source, None)
    checked = {name: _check_task(f"target {name!r}", t, Xs.shape[1], classes)
               for name, t in targets.items()}
    spec = resolve_kernel_spec(Xs, kernels.get("laplace_bandwidth", 10.0), kernels.get("gaussian_gamma", "match"),
                               kernels.get("linear_scale", "match"))
    pm = lambda y: np.where(np.asarray(y) == classes[1], 1.0, -1.0)  # noqa: E731
    acc_rows, w_rows = [], []

    def _acc(pred, y):
        return float(np.mean(np.asarray(pred) == np.asarray(y)))

    Ks_ss = base_kernels(Xs, spec=spec)
    Ks_qs_src = base_kernels(Xsq, Xs, spec)
    tgt_kernels = {}
    for name, (Xt, yt, Xq, yq, _) in checked.items():
        tgt_kernels[name] = {"tt": base_kernels(Xt, spec=spec), "qt": base_kernels(Xq, Xt, spec),
                             "ts": base_kernels(Xt, Xs, spec), "qs": base_kernels(Xq, Xs, spec)}
    for method in methods:
        try:
            src_clf = _classifier(method, learners).fit(Ks_ss, ys)
        except InputError as exc:
            raise InputError(f"source, {method}: {exc}") from None
        w = src_clf.weights_
        w_rows += [{"target": "source", "method": method, "kernel": k, "weight": float(v), "seed": seed}
                   for k, v in zip(KERNEL_NAMES, w, strict=True)]
        acc_rows.append({"target": "source", "method": method, "model": "baseline",
                         "accuracy": _acc(src_clf.predict(Ks_qs_src), ysq), "seed": seed,
                         "n_train": len(ys), "n_test": len(ysq)})
        K_ss = combine_kernels(Ks_ss, w)
        r_s, a_s = _fit(K_ss, pm(ys), source_ridge_rel)
        f_src = combine_kernels(Ks_qs_src, w) @ a_s
        acc_rows.append({"target": "source", "method": method, "model": "source",
                         "accuracy": _acc(np.where(f_src >= 0, classes[1], classes[0]), ysq), "seed": seed,
                         "n_train": len(ys), "n_test": len(ysq), "ridge_rel": r_s})
        for name, (Xt, yt, Xq, yq, _) in checked.items():
            K = tgt_kernels[name]
            row = {"target": name, "method": method, "seed": seed, "n_train": len(yt), "n_test": len(yq)}
            try:
                base = _classifier(method, learners).fit(K["tt"], yt)
            except InputError as exc:
                raise InputError(f"target {name!r}, {method}: {exc}") from None
            w_rows += [{"target": name, "method": method, "kernel": k, "weight": float(v), "seed": seed}
                       for k, v in zip(KERNEL_NAMES, base.weights_, strict=True)]
            acc_rows.append(row | {"model": "baseline", "accuracy": _acc(base.predict(K["qt"]), yq)})
            tr = _classifier(method, learners, weights=w).fit(K["tt"], yt)
            acc_rows.append(row | {"model": "transfer", "accuracy": _acc(tr.predict(K["qt"]), yq)})
            out = translate(K_ss, pm(ys), combine_kernels(K["ts"], w), combine_kernels(K["tt"], w), pm(yt),
                            combine_kernels(K["qs"], w), combine_kernels(K["qt"], w), r_s, target_ridge_rel)
            lab = lambda f: np.where(f >= 0, classes[1], classes[0])  # noqa: E731
            acc_rows.append(row | {"model": "translation", "accuracy": _acc(lab(out["translation"]), yq),
                                   "ridge_rel": out["target_ridge_rel"]})
            acc_rows.append(row | {"model": "source", "accuracy": _acc(lab(out["source"]), yq), "ridge_rel": r_s})
    acc = pd.DataFrame(acc_rows, columns=["target", "method", "model", "accuracy", "seed", "n_train", "n_test",
                                          "ridge_rel"])
    return acc, pd.DataFrame(w_rows, columns=["target", "method", "kernel", "weight", "seed"])


# ------------------------------------------------------------------ tasks
def digit_tasks(corruptions: Sequence[str], seed: int, *, severity: int = 5, classes=(3, 8),
                source_fraction: float = 0.5) -> tuple[dict, dict[str, dict], dict]:
    """Clean 8×8 digits (two classes) as source, corrupted copies as targets.

    For one seed the source/target split is the same for every corruption:
    :func:`biokernels.synth.corruptions.digit_transfer_task` draws the split
    first from ``default_rng(seed)``, then the corruption noise; the target
    images differ only by corruption.

    Parameters
    ----------
    corruptions : names in ``biokernels.synth.corruptions.CORRUPTIONS``
    seed : int
    severity : int 1-5 (CIFAR-10-C's highest, 5, as in the paper)
    classes : pair, the digit classes; ``classes[1]`` is label 1
    source_fraction : float, share of the images for the source

    Returns
    -------
    source : dict X_train (≈149, 64), y_train, X_test (≈30, 64), y_test
    targets : dict corruption -> dict X_train (≈88, 64), y_train, X_test (≈90, 64), y_test
    info : dict of counts

    Raises
    ------
    InputError
        Unknown corruption, bad severity (from the corruptions module), no corruption.
    """
    from biokernels.synth.corruptions import digit_transfer_task

    if not corruptions:
        raise InputError("images.corruptions: expected at least one corruption")
    source, targets, info = None, {}, {}
    for c in corruptions:
        t = digit_transfer_task(c, severity, np.random.default_rng(seed), classes=tuple(classes),
                                source_fraction=source_fraction)
        if source is None:
            source = {"X_train": t["X_source_train"], "y_train": t["y_source_train"],
                      "X_test": t["X_source_test"], "y_test": t["y_source_test"]}
            info = {k: v for k, v in t["info"].items() if k.startswith("n_")}
        targets[c] = {"X_train": t["X_target_train"], "y_train": t["y_target_train"],
                      "X_test": t["X_target_test"], "y_test": t["y_target_test"]}
    return source, targets, info


def viability_tasks(viability: pd.DataFrame, features: pd.DataFrame, seed: int, *,
                    source_cell: str | None = None, target_cells: Sequence[str] | None = None,
                    label: str | float = "median", source_fraction: float = 0.5,
                    source_test_fraction: float = 1 / 6, n_target_train: int = 100
                    ) -> tuple[dict, dict[str, dict], dict]:
    """Cell line → cell line drug-response classification from a viability table.

    Parameters
    ----------
    viability : DataFrame with columns ``drug_key``, ``cell_id``, ``viability``
        (one row per pair; e.g. the DepMap study's prepared/targets.tsv)
    features : DataFrame indexed by drug_key, numeric columns (e.g. Morgan
        fingerprint bits); pairs whose drug has no row are dropped (counted
        in ``info``).
    seed : int, drives the drug split and the target training subset
    source_cell : the source cell line; None = the one with the most drugs
        (ties: first by name)
    target_cells : None or empty = every other cell line
    label : "median" (label 1 = viability below the cell line's median, so
        each cell line's classes are balanced) or a number (label 1 =
        viability below it, e.g. 0: the drug kills the cells)
    source_fraction : share of the drugs reserved for the source; the rest
        are the target drugs (disjoint: new cell line and new drugs)
    source_test_fraction : share of the source's drugs held out for its test
    n_target_train : target training drugs per cell line (the rest of its
        target drugs are the test set); capped so that >= 10 remain for test

    Returns
    -------
    source, targets (cell -> task dict), info (cells, counts, thresholds)

    Raises
    ------
    InputError
        Missing columns, an unknown source/target cell line, too few drugs,
        a target whose labels have a single class (names the target).
    """
    need = {"drug_key", "cell_id", "viability"}
    if not need <= set(viability.columns):
        raise InputError(f"viability table: missing columns {sorted(need - set(viability.columns))}")
    v = viability[list(need)].dropna()
    n_all = len(v)
    v = v[v["drug_key"].isin(features.index)]
    cells = v.groupby("cell_id")["drug_key"].nunique().sort_index()
    if cells.empty:
        raise InputError("viability table: no pair has a drug with features")
    if source_cell is None:
        source_cell = str(cells.sort_values(ascending=False, kind="stable").index[0])
    if source_cell not in cells.index:
        raise InputError(f"bio.source_cell: {source_cell!r} is not in the table ({cells.index.tolist()})")
    targets_ = [c for c in (target_cells or cells.index) if c != source_cell]
    bad = [c for c in targets_ if c not in cells.index]
    if bad or not targets_:
        raise InputError(f"bio.targets: {bad or 'none left'} (cell lines: {cells.index.tolist()})")
    X = features.apply(pd.to_numeric, errors="raise").astype(np.float64)
    rng = np.random.default_rng(seed)
    drugs = np.array(sorted(v["drug_key"].unique()))
    drugs = rng.permutation(drugs)
    n_src = int(round(source_fraction * len(drugs)))
    src_drugs, tgt_drugs = set(drugs[:n_src]), set(drugs[n_src:])

    def labels(sub):
        thr = float(sub["viability"].median()) if label == "median" else float(label)
        return (sub["viability"].to_numpy() < thr).astype(int), thr

    info = {"source_cell": source_cell, "n_pairs": n_all, "n_pairs_with_features": len(v), "thresholds": {}}
    s = v[(v["cell_id"] == source_cell)].sort_values("drug_key")
    y_all, info["thresholds"][source_cell] = labels(s)
    keep = s["drug_key"].isin(src_drugs).to_numpy()
    s, y_s = s[keep], y_all[keep]
    if len(s) < 12:
        raise InputError(f"source cell line {source_cell!r}: {len(s)} source drugs, need >= 12")
    perm = rng.permutation(len(s))
    n_te = max(1, int(round(source_test_fraction * len(s))))
    te, tr = perm[:n_te], perm[n_te:]
    Xs = X.loc[s["drug_key"]].to_numpy()
    source = {"X_train": Xs[tr], "y_train": y_s[tr], "X_test": Xs[te], "y_test": y_s[te]}
    targets = {}
    for c in targets_:
        t = v[v["cell_id"] == c].sort_values("drug_key")
        y_all, info["thresholds"][c] = labels(t)        # threshold over all of the cell's drugs
        keep = t["drug_key"].isin(tgt_drugs).to_numpy()
        t, y_t = t[keep], y_all[keep]
        if len(t) < 20:
            raise InputError(f"target {c!r}: {len(t)} target drugs, need >= 20")
        n_tr = min(int(n_target_train), len(t) - 10)
        perm = rng.permutation(len(t))
        tr, te = perm[:n_tr], perm[n_tr:]
        if np.unique(y_t[tr]).size < 2:
            raise InputError(f"target {c!r}: its {n_tr} training drugs have a single class "
                             f"({int(y_t[tr][0])}) at threshold {info['thresholds'][c]:.3g}")
        Xt = X.loc[t["drug_key"]].to_numpy()
        targets[c] = {"X_train": Xt[tr], "y_train": y_t[tr], "X_test": Xt[te], "y_test": y_t[te]}
    info["n_source_train"], info["n_source_test"] = len(source["y_train"]), len(source["y_test"])
    return source, targets, info


# ------------------------------------------------------- tables, figures
def summarize(acc: pd.DataFrame, target_order: Sequence[str] | None = None) -> pd.DataFrame:
    """Mean and SD over seeds of each (target, method, model); target "source" dropped.

    Returns
    -------
    DataFrame: target, method, model, accuracy_mean, accuracy_sd, n_seeds,
    n_train, n_test, translation_best (translation's mean is the highest
    of baseline / transfer / translation for this target and method, ties
    counted as best: the project's count, not a statement of the paper),
    translation_beats_transfer (translation's mean is strictly above the
    transfer-learned kernel's, i.e. the MKL weights learned on the source
    reused on the target: the paper's SI Fig. S7 statement "it is
    outperformed by our translation methodology in all cases"; a tie does
    not count). Both booleans repeat on every row of a (target, method).
    """
    a = acc[acc["target"] != "source"]
    g = a.groupby(["target", "method", "model"], sort=False)
    out = g.agg(accuracy_mean=("accuracy", "mean"), accuracy_sd=("accuracy", "std"),
                n_seeds=("seed", "nunique"), n_train=("n_train", "mean"),
                n_test=("n_test", "mean")).reset_index()
    out["accuracy_sd"] = out["accuracy_sd"].fillna(0.0)
    piv = out[out["model"].isin(["baseline", "transfer", "translation"])].pivot_table(
        index=["target", "method"], columns="model", values="accuracy_mean")
    best = (piv["translation"] >= piv[["baseline", "transfer"]].max(axis=1) - 1e-12).rename("translation_best")
    beats = (piv["translation"] > piv["transfer"] + 1e-12).rename("translation_beats_transfer")
    out = out.merge(pd.concat([best, beats], axis=1).reset_index(), on=["target", "method"], how="left")
    order = {t: i for i, t in enumerate(target_order or dict.fromkeys(out["target"]))}
    out["_t"] = out["target"].map(order)
    out["_m"] = out["method"].map({m: i for i, m in enumerate(METHODS)})
    out["_k"] = out["model"].map({m: i for i, m in enumerate(MODELS)})
    return out.sort_values(["_m", "_t", "_k"]).drop(columns=["_t", "_m", "_k"]).reset_index(drop=True)


def plot_accuracies(table: pd.DataFrame, title: str, xlabel: str = "target"):
    """One panel per MKL method: grouped bars (baseline, transfer, translation) per target, SD over seeds
    as error bars, the source model alone as grey ticks. Returns a matplotlib Figure."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    methods = [m for m in METHODS if m in set(table["method"])]
    targets = list(dict.fromkeys(table["target"]))
    colors = {"baseline": "#d62728", "transfer": "#1f77b4", "translation": "#2ca02c"}
    fig, axes = plt.subplots(len(methods), 1, figsize=(max(6.0, 0.55 * len(targets) + 2), 2.3 * len(methods)),
                             sharex=True, squeeze=False)
    x = np.arange(len(targets))
    lo = max(0.0, float(table["accuracy_mean"].min()) - 0.05)
    for ax, method in zip(axes[:, 0], methods, strict=True):
        sub = table[table["method"] == method].set_index(["target", "model"])
        for j, model in enumerate(colors):
            m = [sub.loc[(t, model), "accuracy_mean"] if (t, model) in sub.index else np.nan for t in targets]
            s = [sub.loc[(t, model), "accuracy_sd"] if (t, model) in sub.index else np.nan for t in targets]
            ax.bar(x + (j - 1) * 0.27, m, 0.27, yerr=s, color=colors[model], label=model, capsize=1.5,
                   error_kw={"lw": 0.6})
        src = [sub.loc[(t, "source"), "accuracy_mean"] if (t, "source") in sub.index else np.nan for t in targets]
        ax.scatter(x, src, marker="_", s=120, color="0.35", zorder=3, label="source model alone")
        wins = int(table[(table["method"] == method) & (table["model"] == "translation")]["translation_best"].sum())
        ax.set_title(f"{method}: translation best on {wins}/{len(targets)} targets", fontsize=9)
        ax.set_ylim(lo, 1.0)
        ax.set_ylabel("test accuracy")
        ax.grid(axis="y", lw=0.3)
    axes[-1, 0].set_xticks(x)
    axes[-1, 0].set_xticklabels(targets, rotation=45 if len(targets) > 6 else 0,
                                ha="right" if len(targets) > 6 else "center", fontsize=8)
    axes[-1, 0].set_xlabel(xlabel)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=8, ncol=4, loc="upper center", bbox_to_anchor=(0.5, 0.965), frameon=False)
    return fig
