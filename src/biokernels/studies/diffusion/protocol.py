"""Protein function prediction from a network with diffusion kernels: the
evaluation protocol of Sun, Ji & Ye (BMC Bioinformatics 2008).

For one train/test split of the proteins, every method gives one score per
test protein and task, and the ROC AUC per task is recorded:

* single diffusion kernels K~_i (i = 1..p), fed to an SVM: their per-task AUCs
  give **rBaseline** (the single kernel with the best mean AUC, shared by all
  tasks) and **uBaseline** (the best kernel per task). Both choose the kernel
  by test AUC, i.e. they peek at test labels *by the paper's definition*;
  they are labelled so in every table;
* **eBaseline**: the equal-weight combination;
* the six kernel-learning formulations DKL, DKLKL, DKLKLu, mDKL, mDKLKL,
  mDKLKLu (:mod:`biokernels.solvers.dkl`), fed to an SVM;
* **SM1**: Lanckriet et al.'s 1-norm soft-margin kernel combination
  (:mod:`biokernels.solvers.sm1`), where it fits in the time budget
  (:func:`evaluate_sm1`, given split only, as in the paper's Tables 2-3);
* **Neighbor Counting** and **FS-Weighted Averaging**
  (:mod:`biokernels.solvers.network_baselines`), which score proteins from
  their neighbourhoods directly.

The classifier on every kernel is an entry of :data:`CLASSIFIERS`, chosen by
``diffusion.classifier`` with its settings in
``diffusion.classifier_settings.<name>``; the default ``svm`` is the paper's
LIBSVM C-SVC, solved by default by the ``smo`` solver (:mod:`biokernels.
solvers.svm_smo`: LIBSVM's algorithm, compiled, warm-started and batched
over tasks, agreeing with LIBSVM within its tolerance) and with
``solver: libsvm`` by LIBSVM itself (scikit-learn's
``SVC(kernel="precomputed", C=C)``). Its C is not given in the paper. The trace-normalized kernels have a mean diagonal of
1/n, so the kernels here are scaled by n (mean diagonal 1) and C is chosen
per split from a grid by inner cross-validation on the training proteins
only, pooled over tasks, with the eBaseline kernel (which uses no labels);
every method of the split then uses that C.

One split (:func:`evaluate_split`) has two paths with the same fits
(issue #20): the reference (``reference=True``: a GEMM per kernel, a
scikit-learn fit, ``decision_function`` and ``roc_auc_score`` per task) and
the default fast path (learned kernels summed from kept single-kernel
blocks, inputs checked once per kernel, decision values of all tasks as one
GEMM, a rank AUC over all tasks, optionally the fits in threads); their
tables agree within stated rounding bounds and, for the summed learned
kernels, LIBSVM's tolerance (tests/unit/test_diffusion_speed_paths.py,
benchmarks/bench_diffusion_split.py). With the ``smo`` solver the fast path
also warm-starts every fit (the inner CV along the C grid, the single
kernels along the beta grid, each combination from the same combination of
the single kernels' solutions), builds only train blocks (a rank-k update)
and computes decision values without test blocks
(:meth:`KernelBlocks.decision`); its AUCs agree with the LIBSVM reference
within 1e-3 (tests/unit/test_svm_smo.py).

The beta grid ``beta_i = -step * i`` (i = 1..n_kernels) is built only by
:func:`biokernels.kernels.diffusion.diffusion_betas`; the config-level entry
points here (:func:`run_split`, :func:`run_sm1`, :func:`run_sensitivity`)
take ``n_kernels`` and the split's chosen step and call it, so the workflow
scripts never build a grid.
"""

from __future__ import annotations

import functools
import time
import warnings
from collections import Counter
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import torch
from sklearn import config_context
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import KFold
from sklearn.svm import SVC

from biokernels.device import resolve_device
from biokernels.errors import InputError
from biokernels.kernels.diffusion import diffusion_betas, diffusion_spectra
from biokernels.metrics import roc_auc_columns
from biokernels.registry import check, lookup
from biokernels.solvers.dkl import DiffusionKernelLearning
from biokernels.solvers.svm_smo import SMOSVC, svc_dual

FORMULATIONS = ("DKL", "DKLKL", "DKLKLu", "mDKL", "mDKLKL", "mDKLKLu")


#: Stopping gap of the ``smo`` solver (:mod:`biokernels.solvers.svm_smo`),
#: a tenth of LIBSVM's 1e-3: its own distance to the exact solution is then
#: an order below LIBSVM's, so its distance to LIBSVM's solution is about
#: LIBSVM's own, within LIBSVM's tolerance (tests/unit/test_svm_smo.py).
SMO_TOL = 1e-4


def svm_classifier(C: float, class_weight: str | None = None, solver: str = "smo") -> SMOSVC | SVC:
    """Classifier ``svm``: a C-SVC on a precomputed kernel, the paper's SVM
    ("the SVM", LIBSVM).

    Parameters
    ----------
    C : float > 0
        Chosen per split by inner CV (``diffusion.svm_C_grid``).
    class_weight : None or "balanced"
        None (LIBSVM's default, the paper): every protein weighs 1;
        ``"balanced"``: class c weighs n / (2 n_c) (``diffusion.
        classifier_settings.svm.class_weight``).
    solver : "smo" or "libsvm"
        ``smo`` (default): the same problem solved by LIBSVM's algorithm
        (SMO, second-order working sets), compiled, warm-started along the
        study's grids and batched over tasks (:class:`biokernels.solvers.
        svm_smo.SMOSVC`, stopping gap :data:`SMO_TOL`); ``libsvm``:
        LIBSVM itself through scikit-learn's ``SVC`` (tolerance 1e-3), the
        paper's program. The two agree within LIBSVM's tolerance
        (``diffusion.classifier_settings.svm.solver``).

    Returns
    -------
    SMOSVC or sklearn.svm.SVC, unfitted.

    Raises
    ------
    InputError
        Unknown ``solver``.
    """
    if solver == "smo":
        return SMOSVC(C=C, class_weight=class_weight, tol=SMO_TOL)
    if solver == "libsvm":
        return SVC(kernel="precomputed", C=C, class_weight=class_weight)
    raise InputError(f"diffusion.classifier_settings.svm.solver must be smo or libsvm, got {solver!r}")


#: Classifiers of the study by the config's ``diffusion.classifier`` (the
#: schema's enum lists exactly these keys, tests/unit/test_registries.py).
#: Each is a factory ``(C, **settings) -> estimator`` with ``fit(K, y)`` on
#: an (n_train, n_train) kernel and 0/1 labels and ``decision_function(K)``
#: on an (n_test, n_train) kernel (larger = class 1); C is the regularization
#: constant chosen per split by inner CV, the settings come from
#: ``diffusion.classifier_settings.<name>``. Adding a classifier is such a
#: factory plus one line here (and its name and settings in the schema).
CLASSIFIERS: dict[str, Callable] = {
    "svm": svm_classifier,
}


def make_classifier(name: str = "svm", settings: Mapping | None = None) -> Callable[[float], object]:
    """The classifier factory ``C -> unfitted estimator`` of
    :data:`CLASSIFIERS` ``[name]`` with its settings bound.

    Raises
    ------
    InputError
        Unknown ``name`` (the known ones listed) or a setting the factory
        does not take (``diffusion.classifier_settings.<name>`` named).
    """
    factory = lookup(CLASSIFIERS, name, "diffusion.classifier")
    settings = dict(settings or {})
    check(factory, settings, f"diffusion.classifier_settings.{name}", n_args=1)
    return functools.partial(factory, **settings)


def classifier_of(cfg: Mapping) -> Callable[[float], object]:
    """The classifier a job's settings configure: ``cfg["classifier"]``
    (default ``"svm"``) with ``cfg["classifier_settings"][name]`` (default
    none), via :func:`make_classifier`."""
    name = cfg.get("classifier", "svm")
    return make_classifier(name, (cfg.get("classifier_settings") or {}).get(name))



def split_masks(train_mask: np.ndarray, eval_mask: np.ndarray | None = None
                ) -> tuple[np.ndarray, np.ndarray]:
    """Training and test masks of a split, restricted to ``eval_mask``.

    Parameters
    ----------
    train_mask : bool array (n,)
        The split's training proteins (the others are its test proteins).
    eval_mask : bool array (n,), optional
        Proteins that are examples at all (None: every protein).

    Returns
    -------
    train, test : bool arrays (n,), disjoint.

    Raises
    ------
    ValueError
        If the masks differ in length, or no protein is left in train or test.
    """
    train_mask = np.asarray(train_mask, bool)
    if eval_mask is None:
        return train_mask, ~train_mask
    eval_mask = np.asarray(eval_mask, bool)
    if eval_mask.shape != train_mask.shape:
        raise ValueError(f"eval_mask has shape {eval_mask.shape}, the split {train_mask.shape}")
    train, test = train_mask & eval_mask, ~train_mask & eval_mask
    if not train.any() or not test.any():
        raise ValueError(f"no annotated protein left in the {'training' if not train.any() else 'test'} "
                         "set of this split (unannotated: exclude)")
    return train, test


def split_rows(Y: pd.DataFrame, train_mask: np.ndarray, eval_mask: np.ndarray | None = None):
    """The split's masks, row indices and label blocks, as every evaluation
    of a split starts (:func:`split_masks`, then the rows).

    Returns
    -------
    train_mask, test_mask : bool arrays (n,); train, test : int arrays of row
    indices; Yv : (n, t) labels; ytr, yte : (len(train), t), (len(test), t).

    Raises
    ------
    ValueError
        As :func:`split_masks`.
    """
    train_mask, test_mask = split_masks(train_mask, eval_mask)
    train, test = np.flatnonzero(train_mask), np.flatnonzero(test_mask)
    Yv = Y.to_numpy()
    return train_mask, test_mask, train, test, Yv, Yv[train], Yv[test]


def annotated_mask(Y: pd.DataFrame) -> np.ndarray:
    """Proteins with at least one annotation among the tasks: bool (n,)."""
    return (Y.to_numpy() != 0).any(axis=1)


def target_matrix(Y: np.ndarray, train: np.ndarray) -> np.ndarray:
    """Targets a^(k) of Eq. 13: +1 / -1 on training proteins, 0 on test ones.

    Parameters
    ----------
    Y : array of 0/1, shape (n, t)
    train : bool array, shape (n,)

    Returns
    -------
    array, shape (n, t), float64
    """
    return np.where(train[:, None], 2.0 * Y - 1.0, 0.0)


class KernelBlocks:
    """Train/train and test/train blocks of kernels ``P diag(s) P^T``, scaled
    by n (mean diagonal 1), computed with torch on a device.

    Parameters
    ----------
    P : array (n, n)
        Eigenvectors of the Laplacian.
    train, test : int arrays of protein indices
    device : str
        ``auto``, ``cpu`` or ``cuda`` (:func:`biokernels.device.resolve_device`).
    """

    def __init__(self, P: np.ndarray, train: np.ndarray, test: np.ndarray, device: str = "auto"):
        self.device = resolve_device(device)
        self.n = P.shape[0]
        self.Ptr = torch.as_tensor(P[train], dtype=torch.float64, device=self.device)
        self.Pte = torch.as_tensor(P[test], dtype=torch.float64, device=self.device)
        #: single-kernel blocks kept by :meth:`keep`, by kernel index
        self.cached: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def __call__(self, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Blocks for the spectrum ``s`` (n,): (n_train, n_train) and
        (n_test, n_train) float64 numpy arrays."""
        w = torch.as_tensor(np.asarray(s) * self.n, dtype=torch.float64, device=self.device)
        left = self.Ptr * w
        Ktr = left @ self.Ptr.T
        Kte = (self.Pte * w) @ self.Ptr.T
        Ktr = 0.5 * (Ktr + Ktr.T)
        return Ktr.cpu().numpy(), Kte.cpu().numpy()

    def train(self, s: np.ndarray) -> np.ndarray:
        """The (n_train, n_train) block alone, for the spectrum ``s`` (n,).

        For ``s >= 0`` (every diffusion spectrum, and non-negative
        combinations of them) the block is ``L L^T`` with ``L = P_train
        diag(sqrt(n s))``, a symmetric rank-k update (BLAS ``dsyrk``
        through scipy on the CPU, its upper triangle mirrored: half the
        multiplications of a GEMM, exactly symmetric; torch ``L @ L.T`` on
        other devices); otherwise (a signed combination) ``self(s)[0]``.
        Equal to the GEMM of :meth:`__call__` to rounding: every entry of
        either is within ``gamma_n sqrt(K_aa K_bb)`` of the exact kernel
        (Cauchy-Schwarz on ``sum_j |L_aj L_bj|``), as in :meth:`combine`.
        """
        s = np.asarray(s, dtype=np.float64)
        if (s < 0).any():
            return self(s)[0]
        r = torch.as_tensor(np.sqrt(s * self.n), dtype=torch.float64, device=self.device)
        L = self.Ptr * r
        if self.device.type != "cpu":
            return (L @ L.T).cpu().numpy()
        from scipy.linalg.blas import dsyrk

        U = dsyrk(1.0, L.numpy().T, trans=1)            # upper triangle of L L^T (L^T: Fortran order)
        i, j = np.tril_indices(U.shape[0], -1)
        U[i, j] = U[j, i]
        return U

    def decision(self, s: np.ndarray, coef: np.ndarray) -> np.ndarray:
        """Decision values without the test block: ``K_test @ coef`` for the
        kernel of spectrum ``s`` (n,), computed as ``P_test diag(n s)
        (P_train^T coef)`` (``coef`` (n_train, t), e.g. the SVMs' ``y_i
        a_i``): two thin products, O(n t (n_train + n_test)) instead of the
        O(n n_train n_test) of the block. Equal to ``self(s)[1] @ coef`` to
        rounding. Returns (n_test, t) float64."""
        c = torch.as_tensor(np.ascontiguousarray(coef, dtype=np.float64), device=self.device)
        w = torch.as_tensor(np.asarray(s) * self.n, dtype=torch.float64, device=self.device)
        return ((self.Pte * w) @ (self.Ptr.T @ c)).cpu().numpy()

    def combine_train(self, w: np.ndarray, S: np.ndarray) -> np.ndarray:
        """The train block of ``w @ S``: the sum of the kept train blocks
        of the kernels with a nonzero weight (:meth:`combine`'s rule and
        rounding bound), else :meth:`train` of the combined spectrum."""
        kept = self._sum_kept(w, (0,))
        return self.train(w @ S) if kept is None else kept[0]

    def keep(self, i: int, pair: tuple[np.ndarray, np.ndarray]) -> None:
        """Keep the blocks ``pair`` of single kernel ``i`` (``self(S[i])``) for
        :meth:`combine`. Memory: ``8 n_train (n_train + n_test)`` bytes."""
        self.cached[int(i)] = pair

    def combine(self, w: np.ndarray, S: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Blocks of the combination ``w @ S`` (weights (p,), spectra (p, n)).

        When every kernel with a nonzero weight is kept (:meth:`keep`), the
        blocks are ``sum_{i: w_i != 0} w_i * blocks_i`` (zero weights skipped
        exactly): a few element-wise passes instead of a GEMM of inner size
        n. Otherwise one GEMM on the combined spectrum, ``self(w @ S)``,
        the reference arithmetic.

        The two agree to rounding: for non-negative weights, every entry of
        either is within ``gamma_{n+p+3} sqrt(K_aa K_bb)`` of the exact
        kernel (``gamma_m = m u / (1 - m u)``, ``u = 2**-53``, ``K_aa`` the
        full kernel's diagonal at the row and column proteins; GEMM error
        ``gamma_n sum_j |P_aj P_bj| c_j`` with ``c = n w @ S``, bounded by
        Cauchy-Schwarz), so they differ by at most twice that
        (tests/unit/test_diffusion_speed_paths.py).
        """
        kept = self._sum_kept(w, (0, 1))
        return self(w @ S) if kept is None else (kept[0], kept[1])

    def _sum_kept(self, w: np.ndarray, parts: tuple[int, ...]) -> list[np.ndarray] | None:
        """``sum_{i: w_i != 0} w_i * cached[i][part]`` for each part (0 train,
        1 test), zero weights skipped exactly; None when a kernel with a
        nonzero weight is not kept (or every weight is 0)."""
        w = np.asarray(w, dtype=np.float64)
        nz = np.flatnonzero(w)
        if nz.size == 0 or any(int(i) not in self.cached for i in nz):
            return None
        out = []
        for part in parts:
            acc = np.multiply(self.cached[int(nz[0])][part], w[nz[0]])
            tmp = np.empty_like(acc) if nz.size > 1 else None
            for i in nz[1:]:
                np.multiply(self.cached[int(i)][part], w[i], out=tmp)
                acc += tmp
            out.append(acc)
        return out


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


def smo_of(classifier: Callable[[float], object] | None) -> SMOSVC | None:
    """The classifier's estimator at C = 1 when it is the ``smo`` solver's
    :class:`SMOSVC` (the fast path then batches and warm-starts its fits),
    else None."""
    est = (svm_classifier if classifier is None else classifier)(1.0)
    return est if isinstance(est, SMOSVC) else None


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


def choose_C(blocks: KernelBlocks, s: np.ndarray, ytr: np.ndarray, C_grid: list[float],
             n_folds: int, seed: int, classifier: Callable[[float], object] | None = None,
             *, kernel: np.ndarray | None = None, fast: bool = False, n_jobs: int = 1
             ) -> tuple[float, pd.DataFrame]:
    """Choose the classifier's C by inner K-fold CV on the training proteins.

    The kernel is ``s``'s (the eBaseline spectrum in the protocol); the score
    of a C is the mean validation AUC over tasks and folds (folds where a task
    has one class are skipped for that task). ``classifier``: as in
    :func:`task_scores` (None: the paper's SVM).

    Keyword-only
    ------------
    kernel : array (n_train, n_train), optional
        ``blocks(s)[0]`` when the caller has it already (not recomputed).
    fast : bool
        False (the reference): :func:`task_scores` and :func:`task_aucs` per
        fold and C; True: :func:`fit_task_scores` (same fits, one GEMM for
        the decision values) and :func:`biokernels.metrics.roc_auc_columns`.
    n_jobs : int
        Threads for the fits when ``fast``.

    Returns
    -------
    best C, and a table (C, mean_auc).
    """
    Ktr = blocks(s)[0] if kernel is None else kernel
    folds = list(KFold(n_folds, shuffle=True, random_state=seed).split(Ktr))
    smo = smo_of(classifier) if fast else None
    if smo is not None:
        # per fold, C ascending, each fit warm-started from the previous C's solution scaled by C / C'
        aucs_by_C: dict[float, list] = {C: [] for C in C_grid}
        for fit_idx, val_idx in folds:
            Kf, Kv = Ktr[np.ix_(fit_idx, fit_idx)], Ktr[np.ix_(val_idx, fit_idx)]
            prev, prev_C = None, None
            for C in sorted(C_grid):
                start = None if prev is None else prev * (C / prev_C)
                sc, prev = smo_task_scores(Kf, Kv, ytr[fit_idx], C, smo, start, n_jobs, name="choose_C")
                prev_C = C
                aucs_by_C[C].append(roc_auc_columns(ytr[val_idx], sc))
        table = pd.DataFrame([{"C": C, "mean_auc": float(np.nanmean(np.concatenate(aucs_by_C[C])))}
                              for C in C_grid])
        return float(table.loc[table["mean_auc"].idxmax(), "C"]), table
    rows = []
    for C in C_grid:
        aucs = []
        for fit_idx, val_idx in folds:
            if fast:
                sc = fit_task_scores(Ktr[np.ix_(fit_idx, fit_idx)], Ktr[np.ix_(val_idx, fit_idx)],
                                     ytr[fit_idx], C, classifier, n_jobs)
                aucs.append(roc_auc_columns(ytr[val_idx], sc))
                continue
            sc = task_scores(Ktr[np.ix_(fit_idx, fit_idx)], Ktr[np.ix_(val_idx, fit_idx)],
                             ytr[fit_idx], C, classifier)
            aucs.append(task_aucs(sc, ytr[val_idx]))
        rows.append({"C": C, "mean_auc": float(np.nanmean(np.concatenate(aucs)))})
    table = pd.DataFrame(rows)
    return float(table.loc[table["mean_auc"].idxmax(), "C"]), table


@dataclass
class SplitResult:
    """Results of one split (tables in long format)."""

    roc: pd.DataFrame            # method, task, auc
    kernel_roc: pd.DataFrame     # kernel (index), beta, task, auc
    weights: pd.DataFrame        # method, task ('*' = shared), beta, weight
    times: pd.DataFrame          # method, seconds (kernel learning time)
    cv: pd.DataFrame             # C, mean_auc of the inner CV
    notes: dict = field(default_factory=dict)


def _kernels_to_keep(weights, pair_bytes: int, cache_mib: float) -> set[int]:
    """Single kernels whose blocks the fast path keeps: those with a nonzero
    weight in a learned combination, most used first, as many as fit in
    ``cache_mib`` MiB (``pair_bytes`` per kernel)."""
    uses = Counter(int(i) for W in weights for w in np.atleast_2d(W) for i in np.flatnonzero(w))
    room = int(cache_mib * 2 ** 20 // max(pair_bytes, 1))
    return set(sorted(uses, key=lambda i: (-uses[i], i))[:room])


def _per_task_scores(blocks: KernelBlocks, W: np.ndarray, S: np.ndarray, ytr: np.ndarray, C: float,
                     classifier, n_jobs: int, n_test: int, smo: SMOSVC | None = None,
                     start: np.ndarray | None = None) -> np.ndarray:
    """Scores of per-task kernels (task k on ``W[k] @ S``, :meth:`KernelBlocks.combine`),
    tasks in a thread pool of ``n_jobs`` (one kernel per thread alive); with
    ``smo``, each task's fit starts from column k of ``start`` (n_train, t)."""
    def one(k):
        y = ytr[:, [k]]
        if y.min() == y.max():
            return np.full(n_test, np.nan)
        if smo is not None:
            a0 = None if start is None else start[:, [k]]
            return _smo_block_scores(blocks, blocks.combine_train(W[k], S), W[k] @ S, y, C, smo, a0,
                                     name=f"task {k}")[0][:, 0]
        Ktr, Kte = blocks.combine(W[k], S)
        return fit_task_scores(Ktr, Kte, y, C, classifier)[:, 0]

    if n_jobs > 1:
        with ThreadPoolExecutor(max_workers=int(n_jobs)) as pool:
            cols = list(pool.map(one, range(W.shape[0])))
    else:
        cols = [one(k) for k in range(W.shape[0])]
    return np.column_stack(cols) if cols else np.empty((n_test, 0))


class _WarmStarts:
    """Warm starts of the ``smo`` fits of one split (the fast path): the
    single-kernel solutions ``alpha_i`` (n_train, t) are summed as they come,
    uniformly (eBaseline: their mean) and with each learned combination's
    weights (task k's column with ``W[k, i]`` for per-task weights), so a
    combination ``sum_i w_i K_i`` starts from ``sum_i w_i alpha_i /
    sum_i w_i`` (:func:`convex_start`) without keeping every ``alpha_i``.
    A start is only a start: the fit then runs to the gap ``SMO_TOL``."""

    def __init__(self, learned: Mapping[str, np.ndarray]):
        self.learned = {k: np.asarray(W, dtype=np.float64) for k, W in learned.items()}
        self.sums: dict[str, np.ndarray] = {}
        self.count = 0

    def add(self, i: int, alpha: np.ndarray) -> None:
        """Add the solutions ``alpha`` (n_train, t) on single kernel ``i``."""
        terms = {"uniform": alpha}
        for name, W in self.learned.items():
            w = W[i] if W.ndim == 1 else W[:, i][None, :]
            terms[name] = alpha * w
        for name, term in terms.items():
            if name in self.sums:
                self.sums[name] += term
            else:
                self.sums[name] = term.copy()
        self.count += 1

    def start(self, name: str | None) -> np.ndarray | None:
        """The start of eBaseline (``name`` None) or of a learned
        combination; None (cold) without sums or with a negative weight or
        a zero total; for per-task weights, such a task's column is 0 (the
        cold start)."""
        if name is None:
            return self.sums["uniform"] / self.count if self.count else None
        if name not in self.sums:
            return None
        W = self.learned[name]
        if W.ndim == 1:
            return self.sums[name] / W.sum() if (W >= 0).all() and W.sum() > 0 else None
        tot = W.sum(axis=1)
        ok = (W >= 0).all(axis=1) & (tot > 0)
        return np.where(ok[None, :], self.sums[name] / np.where(ok, tot, 1.0)[None, :], 0.0)


def evaluate_split(P: np.ndarray, d: np.ndarray, Y: pd.DataFrame, train_mask: np.ndarray,
                   betas: np.ndarray, lam: float, C_grid: list[float], inner_folds: int,
                   seed: int, formulations=FORMULATIONS, adjacency=None,
                   device: str = "auto", solver: str = "auto", log=None,
                   eval_mask: np.ndarray | None = None,
                   classifier: Callable[[float], object] | None = None,
                   *, reference: bool = False, n_jobs: int = 1, cache_mib: float = 1024.0) -> SplitResult:
    """Run every method of the protocol on one split.

    Parameters
    ----------
    P, d : Laplacian eigenvectors (n, n) and eigenvalues (n,)
    Y : DataFrame of 0/1, shape (n, t), rows in the order of ``P``
    train_mask : bool array (n,)
    betas : array (p,)
        Diffusion parameters (negative), e.g. ``-0.1 * (1..60)``.
    lam : float
        Ridge of the kernel-learning formulations (Eq. 11).
    C_grid, inner_folds, seed
        The classifier's C candidates and the inner CV that picks one.
    formulations : tuple of str
    adjacency : scipy.sparse matrix (n, n), optional
        Enables Neighbor Counting and FS-Weighted Averaging.
    device, solver : str
    log : logging.Logger, optional
    eval_mask : bool array (n,), optional
        Proteins that are examples (train or test) of the tasks; the others
        stay in the network (its Laplacian) but are neither trained on nor
        scored (``unannotated: exclude``). None: every protein, so a protein
        without any annotation is a negative of every task (the default,
        ``unannotated: negative``).
    classifier : callable C -> unfitted estimator, optional
        The classifier on every kernel (:func:`make_classifier`); None = the
        paper's SVM.

    Keyword-only (speed, issue #20)
    -------------------------------
    reference : bool
        True: the reference path, one GEMM ``P diag(s) P^T`` per kernel,
        :func:`task_scores` (a scikit-learn fit and ``decision_function``
        per task) and :func:`task_aucs` (``roc_auc_score`` per task).
        False (default): the same fits, faster around them. The kernel
        weights are learned first; the blocks of the single kernels with a
        nonzero learned weight are kept from the single-kernel pass (up to
        ``cache_mib``) and each learned kernel is the sum of its nonzero
        terms (:meth:`KernelBlocks.combine`); the eBaseline kernel of the
        inner CV is reused; scores come from :func:`fit_task_scores` and AUCs
        from :func:`biokernels.metrics.roc_auc_columns`. The single kernels,
        the eBaseline kernel and every fit's inputs are the reference's
        arithmetic; the learned kernels equal the reference's to rounding
        (bound in :meth:`KernelBlocks.combine`), so their LIBSVM solutions
        agree within LIBSVM's tolerance; the decision values of a fit equal
        the reference's to rounding, and the AUCs follow
        (tests/unit/test_diffusion_speed_paths.py). With the ``smo``
        classifier (:func:`smo_of`) the fits are also warm-started
        (:class:`_WarmStarts`), the kernels are train blocks only
        (:meth:`KernelBlocks.train`) and the decision values are factored
        (:meth:`KernelBlocks.decision`).
    n_jobs : int
        Threads for the classifier fits (fast path only); results do not
        depend on it.
    cache_mib : float
        Memory for kept single-kernel blocks (fast path), ``8 n_train
        (n_train + n_test)`` bytes each; combinations with a term not kept
        use one GEMM.

    Returns
    -------
    SplitResult
    """
    fast = not reference
    smo = smo_of(classifier) if fast else None
    say = log.info if log else (lambda *a, **k: None)
    train_mask, test_mask, train, test, Yv, ytr, yte = split_rows(Y, train_mask, eval_mask)
    tasks = list(Y.columns)
    one_class = [t for k, t in enumerate(tasks) if ytr[:, k].min() == ytr[:, k].max()
                 or yte[:, k].min() == yte[:, k].max()]
    if one_class:
        say("%d task(s) have a single class in train or test and get no AUC on this split: %s",
            len(one_class), one_class[:10])
    S = diffusion_spectra(d, betas)
    B = P.T @ target_matrix(Yv, train_mask)
    blocks = KernelBlocks(P, train, test, device)
    p = len(betas)

    uniform = np.full(p, 1.0 / p)
    if fast:
        # the inner CV's kernel is eBaseline's; smo needs no test block (decisions are factored)
        K_uniform = (blocks.train(uniform @ S), None) if smo is not None else blocks(uniform @ S)
        C, cv = choose_C(blocks, uniform @ S, ytr, C_grid, inner_folds, seed, classifier,
                         kernel=K_uniform[0], fast=True, n_jobs=n_jobs)
    else:
        C, cv = choose_C(blocks, uniform @ S, ytr, C_grid, inner_folds, seed, classifier)
    say("inner CV chose C=%g (%s)", C, dict(zip(cv["C"], cv["mean_auc"].round(4))))

    roc_rows, weight_rows, time_rows = [], [], []

    def record(method, aucs):
        roc_rows.extend({"method": method, "task": t, "auc": a} for t, a in zip(tasks, aucs))

    def record_weights(method, W, shared):
        W = np.atleast_2d(W)
        for ti, w in enumerate(W):
            weight_rows.extend({"method": method, "task": "*" if shared else tasks[ti],
                                "beta": b, "weight": float(x)} for b, x in zip(betas, w))

    def scores_of(Ktr, Kte, y, start=None, what="kernel", spectrum=None):
        """Scores (and, with ``smo``, the solutions, else None) on one
        kernel; with ``smo``, ``Kte`` is unused and the decision values come
        from ``spectrum`` (:meth:`KernelBlocks.decision`)."""
        if smo is not None:
            return _smo_block_scores(blocks, Ktr, spectrum, y, C, smo, start, n_jobs, what)
        if fast:
            return fit_task_scores(Ktr, Kte, y, C, classifier, n_jobs), None
        return task_scores(Ktr, Kte, y, C, classifier), None

    def aucs_of(scores):
        return roc_auc_columns(yte, scores) if fast else task_aucs(scores, yte)

    seconds = {}

    def learn(name):
        model = DiffusionKernelLearning(formulation=name, lam=lam, solver=solver)
        t0 = time.perf_counter()
        model.fit(S, B)
        seconds[name] = time.perf_counter() - t0
        time_rows.append({"method": name, "seconds": seconds[name]})
        W = np.asarray(model.weights_)
        record_weights(name, W, W.ndim == 1)
        return W

    # fast path: learn the weights first, so the single-kernel pass keeps the blocks they reuse
    learned = {name: learn(name) for name in formulations} if fast else {}
    keep: set[int] = set()
    if learned:
        pair_bytes = 8 * len(train) * (len(train) + (0 if smo is not None else len(test)))
        keep = _kernels_to_keep(learned.values(), pair_bytes, cache_mib)
        say("keeping the blocks of %d single kernel(s) with a learned weight (%.0f MiB)", len(keep),
            len(keep) * pair_bytes / 2 ** 20)

    # single kernels -> rBaseline, uBaseline (test-label peeking by definition); with smo, each
    # kernel's fits start from the previous kernel's solutions (the next beta of the grid)
    warm = _WarmStarts(learned) if smo is not None else None
    K_auc = np.empty((p, len(tasks)))
    alpha = None
    for i in range(p):
        Ktr, Kte = (blocks.train(S[i]), None) if smo is not None else blocks(S[i])
        if i in keep:
            blocks.keep(i, (Ktr, Kte))
        scores, alpha = scores_of(Ktr, Kte, ytr, alpha, f"kernel {i + 1}", S[i])
        if warm is not None:
            warm.add(i, alpha)
        K_auc[i] = aucs_of(scores)
    kernel_roc = pd.DataFrame([{"kernel": i + 1, "beta": betas[i], "task": t, "auc": K_auc[i, k]}
                               for i in range(p) for k, t in enumerate(tasks)])
    with warnings.catch_warnings():  # tasks without an AUC (single class) are all-NaN columns
        warnings.simplefilter("ignore", RuntimeWarning)
        best_shared = int(np.nanargmax(np.nanmean(K_auc, axis=1)))
        record("rBaseline", K_auc[best_shared])
        record("uBaseline", np.nanmax(K_auc, axis=0))
    say("rBaseline kernel: beta=%g", betas[best_shared])

    Ktr, Kte = K_uniform if fast else blocks(uniform @ S)
    record("eBaseline", aucs_of(scores_of(Ktr, Kte, ytr, warm and warm.start(None), "eBaseline",
                                          uniform @ S)[0]))
    del Ktr, Kte
    K_uniform = None

    for name in formulations:
        W = learned[name] if fast else learn(name)
        if W.ndim == 1:
            if smo is not None:
                Ktr, Kte = blocks.combine_train(W, S), None
            else:
                Ktr, Kte = blocks.combine(W, S) if fast else blocks(W @ S)
            scores = scores_of(Ktr, Kte, ytr, warm and warm.start(name), name, W @ S)[0]
            del Ktr, Kte
        elif fast:
            scores = _per_task_scores(blocks, W, S, ytr, C, classifier, n_jobs, len(test), smo,
                                      warm and warm.start(name))
        else:
            scores = np.full((len(test), len(tasks)), np.nan)
            for k in range(len(tasks)):
                Ktr, Kte = blocks(W[k] @ S)
                scores[:, [k]] = task_scores(Ktr, Kte, ytr[:, [k]], C, classifier)
        record(name, aucs_of(scores))
        say("%s: mean AUC %.4f, %.3f s", name, np.nanmean([r["auc"] for r in roc_rows[-len(tasks):]]),
            seconds[name])
    blocks.cached.clear()

    if adjacency is not None:
        from biokernels.solvers.network_baselines import fs_weighted_averaging, neighbor_counting

        record("Neighbor Counting", aucs_of(neighbor_counting(adjacency, ytr, train, test)))
        record("FS-Weighted Averaging", aucs_of(fs_weighted_averaging(adjacency, ytr, train, test)))

    return SplitResult(pd.DataFrame(roc_rows), kernel_roc, pd.DataFrame(weight_rows),
                       pd.DataFrame(time_rows), cv.assign(chosen=lambda t: t["C"] == C),
                       {"C": C, "single_class_tasks": one_class})


@dataclass
class ScaleCandidate:
    """One kernel scale the train-only choice may take: a Laplacian (its
    eigendecomposition ``L = P diag(d) P^T``) and a beta grid."""

    name: str                    # e.g. "unnormalized, step 0.1 (paper)"
    laplacian: str               # "unnormalized" | "normalized"
    beta_step: float
    P: np.ndarray                # (n, n)
    d: np.ndarray                # (n,)


def choose_kernel_scale(candidates: list[ScaleCandidate], Y: pd.DataFrame, train_mask: np.ndarray,
                        n_kernels: int, lam: float, C_grid: list[float], inner_folds: int, seed: int,
                        formulation: str = "mDKL", device: str = "auto", solver: str = "auto",
                        eval_mask: np.ndarray | None = None, log=None,
                        classifier: Callable[[float], object] | None = None
                        ) -> tuple[int, pd.DataFrame]:
    """Choose the kernel scale (Laplacian and beta grid) by inner
    cross-validation on the training proteins only.

    Not the paper's protocol (which fixes ``L = diag(Ae) - A`` and
    ``beta_i = -0.1 i``): a labelled deviation of the diffusion study, made
    before any test protein is scored. For each candidate and each of
    ``inner_folds`` folds of the training proteins (the folds of
    :func:`choose_C`, same seed), ``formulation`` learns its weights from
    the targets of the inner-training proteins only (Eq. 13 with the
    inner-validation and test proteins at 0), a classifier per task is
    trained on the inner-training proteins and scored on the inner-validation
    ones.
    The candidate's score is the mean validation ROC AUC over tasks and
    folds at its best C of ``C_grid``; the highest score wins (ties: the
    first candidate, so list the paper's protocol first). The Laplacian's
    eigendecomposition uses the whole network and no labels, as in the
    paper.

    Parameters
    ----------
    candidates : list of ScaleCandidate (all on the same proteins, in the order of ``Y``)
    Y : DataFrame of 0/1 (n, t)
    train_mask : bool (n,)
    n_kernels, lam, C_grid, inner_folds, seed, formulation, device, solver, eval_mask, log, classifier
        As in :func:`evaluate_split`; ``formulation`` must give one shared
        kernel (``mDKL``, ``mDKLKL``, ``mDKLKLu``) or per-task kernels.

    Returns
    -------
    index of the chosen candidate, and a table (candidate, laplacian,
    beta_step, C, inner_auc, best_C, score, chosen) with one row per
    candidate and C.

    Raises
    ------
    ValueError
        If ``candidates`` is empty or their sizes differ from ``Y``.
    """
    if not candidates:
        raise ValueError("choose_kernel_scale needs at least one candidate")
    say = log.info if log else (lambda *a, **k: None)
    n = len(Y)
    for c in candidates:
        if c.P.shape != (n, n) or c.d.shape != (n,):
            raise ValueError(f"candidate {c.name!r}: eigendecomposition of shape {c.P.shape}, "
                             f"expected ({n}, {n}) for the {n} proteins of the labels")
    train_mask, _ = split_masks(train_mask, eval_mask)
    train = np.flatnonzero(train_mask)
    if len(train) < 2 * inner_folds:
        raise ValueError(f"{len(train)} training proteins cannot make {inner_folds} inner folds of two or more "
                         "(diffusion.inner_folds; with unannotated: exclude only annotated proteins count)")
    Yv = Y.to_numpy()
    folds = list(KFold(inner_folds, shuffle=True, random_state=seed).split(train))
    rows, scores = [], []
    for ci, cand in enumerate(candidates):
        S = diffusion_spectra(cand.d, diffusion_betas(n_kernels, cand.beta_step))
        auc = {C: [] for C in C_grid}
        for fit_idx, val_idx in folds:
            fit, val = train[fit_idx], train[val_idx]
            fit_mask = np.zeros(n, bool)
            fit_mask[fit] = True
            B = cand.P.T @ target_matrix(Yv, fit_mask)
            W = np.asarray(DiffusionKernelLearning(formulation=formulation, lam=lam, solver=solver)
                           .fit(S, B).weights_)
            blocks = KernelBlocks(cand.P, fit, val, device)
            Wt = [W] if W.ndim == 1 else list(W)
            smo = smo_of(classifier)
            if smo is not None:         # one train block per kernel, batched solves, factored decisions
                cols = [Yv[fit]] if W.ndim == 1 else [Yv[fit][:, [k]] for k in range(len(Wt))]
                sc = {C: [] for C in C_grid}
                for w, y in zip(Wt, cols):
                    Ktr = blocks.train(w @ S)
                    for C in C_grid:
                        sc[C].append(_smo_block_scores(blocks, Ktr, w @ S, y, C, smo,
                                                       name=f"kernel scale {cand.name}")[0])
                for C in C_grid:
                    auc[C].append(roc_auc_columns(Yv[val], np.column_stack(sc[C])))
                continue
            kern = [blocks(w @ S) for w in Wt]
            for C in C_grid:
                if W.ndim == 1:
                    sc = task_scores(*kern[0], Yv[fit], C, classifier)
                else:
                    sc = np.column_stack([task_scores(*kern[k], Yv[fit][:, [k]], C, classifier)[:, 0]
                                          for k in range(len(Wt))])
                auc[C].append(task_aucs(sc, Yv[val]))
        with warnings.catch_warnings():   # tasks without an AUC in some fold are NaN
            warnings.simplefilter("ignore", RuntimeWarning)
            inner = [float(np.nanmean(np.concatenate(auc[C]))) for C in C_grid]
        best = int(np.argmax(inner))
        scores.append(inner[best])
        rows.extend({"candidate": cand.name, "laplacian": cand.laplacian, "beta_step": cand.beta_step,
                     "C": C, "inner_auc": a, "score": inner[best], "best_C": C_grid[best], "index": ci}
                    for C, a in zip(C_grid, inner))
        say("kernel scale %s: inner-CV %s AUC %.4f (best over C)", cand.name, formulation, inner[best])
    chosen = int(np.argmax(scores))             # first maximum: the paper's setting wins ties
    table = pd.DataFrame(rows)
    table["chosen"] = table.pop("index") == chosen
    say("train-only choice of the kernel scale: %s (inner-CV AUC %.4f)", candidates[chosen].name,
        scores[chosen])
    return chosen, table


def sensitivity_table(P: np.ndarray, d: np.ndarray, Y: pd.DataFrame, train_mask: np.ndarray,
                      beta_step: float, n_kernels: int, lam: float, C_grid: list[float],
                      inner_folds: int, sens: dict, seed: int, device: str = "auto",
                      solver: str = "auto", log=None, eval_mask: np.ndarray | None = None,
                      classifier: Callable[[float], object] | None = None, n_jobs: int = 1,
                      ) -> pd.DataFrame:
    """Mean ROC AUC of eBaseline and mDKL on one split against the classifier's C,
    the ridge lam, the end of the beta grid (the number of kernels) and,
    optionally, the grid's step.

    Each sweep varies one parameter and holds the others at the config's
    values (C at the inner-CV choice). ``mean_minus_beta`` is the
    weight-averaged -beta of mDKL's combination, showing where its weight
    goes. The step sweep (``beta_step`` rows, grid ``-step * (1..n_kernels)``)
    shows how the grid's scale against the Laplacian's spectrum moves the
    criterion's weights (``docs/diffusion_notes.md``). Every grid, the
    reference ``(n_kernels, beta_step)`` one and each swept one, comes from
    :func:`biokernels.kernels.diffusion.diffusion_betas`.

    Parameters
    ----------
    beta_step, n_kernels : the reference grid's step and length
    sens : dict with ``C_grid``, ``lams``, ``n_kernels`` (lists) and
        optionally ``beta_steps`` (list of positive floats)
    (others, ``eval_mask``, ``classifier`` and ``n_jobs`` included, as in
    :func:`evaluate_split`; with the ``smo`` solver every kernel is scored by
    :func:`kernel_scores` and the inner CV takes the fast path)

    Returns
    -------
    DataFrame: parameter, value, method, mean_roc, mean_minus_beta
    """
    say = log.info if log else (lambda *a, **k: None)
    train_mask, test_mask, train, test, Yv, ytr, yte = split_rows(Y, train_mask, eval_mask)
    B = P.T @ target_matrix(Yv, train_mask)
    blocks = KernelBlocks(P, train, test, device)

    def mdkl(S, lam_):
        return DiffusionKernelLearning(formulation="mDKL", lam=lam_, solver=solver).fit(S, B).weights_

    fast = smo_of(classifier) is not None

    def mean_auc(s, C):
        scores = kernel_scores(blocks, s, ytr, C, classifier, n_jobs)
        return float(np.nanmean(roc_auc_columns(yte, scores) if fast else task_aucs(scores, yte)))

    betas = diffusion_betas(n_kernels, beta_step)
    S = diffusion_spectra(d, betas)
    uniform = np.full(n_kernels, 1.0 / n_kernels)
    if fast:
        C0, _ = choose_C(blocks, uniform @ S, ytr, C_grid, inner_folds, seed, classifier,
                         kernel=blocks.train(uniform @ S), fast=True, n_jobs=n_jobs)
    else:
        C0, _ = choose_C(blocks, uniform @ S, ytr, C_grid, inner_folds, seed, classifier)
    w0 = mdkl(S, lam)
    rows = []

    def add(param, value, method, auc, w=None, betas=None):
        mb = float(-(w @ betas) / w.sum()) if w is not None else np.nan
        rows.append({"parameter": param, "value": value, "method": method, "mean_roc": auc,
                     "mean_minus_beta": mb})

    for C in sens["C_grid"]:
        add("C", C, "eBaseline", mean_auc(uniform @ S, C))
        add("C", C, "mDKL", mean_auc(w0 @ S, C), w0, betas)
        say("C=%g done", C)
    for lam_ in sens["lams"]:
        w = mdkl(S, lam_)
        add("lam", lam_, "mDKL", mean_auc(w @ S, C0), w, betas)
        say("lam=%g done", lam_)
    for p in sens["n_kernels"]:
        bp = diffusion_betas(p, beta_step)
        Sp = diffusion_spectra(d, bp)
        up = np.full(p, 1.0 / p)
        w = mdkl(Sp, lam)
        add("n_kernels", p, "eBaseline", mean_auc(up @ Sp, C0))
        add("n_kernels", p, "mDKL", mean_auc(w @ Sp, C0), w, bp)
        say("n_kernels=%d done", p)
    for step in sens.get("beta_steps", []):
        b = diffusion_betas(n_kernels, step)
        Sb = diffusion_spectra(d, b)
        w = mdkl(Sb, lam)
        add("beta_step", step, "eBaseline", mean_auc(uniform @ Sb, C0))
        add("beta_step", step, "mDKL", mean_auc(w @ Sb, C0), w, b)
        say("beta_step=%g done", step)
    return pd.DataFrame(rows).assign(C_chosen=C0)


def evaluate_sm1(P: np.ndarray, d: np.ndarray, Y: pd.DataFrame, train_mask: np.ndarray,
                 betas: np.ndarray, C: float, max_seconds: float, max_memory_gb: float,
                 device: str = "auto", log=None, eval_mask: np.ndarray | None = None,
                 classifier: Callable[[float], object] | None = None, sm1_form: str = "elementwise",
                 ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """SM1 (Lanckriet et al. 2004, 1-norm soft margin, QCQP) per task on one
    split, then the classifier (the paper: an SVM; ``classifier`` as in
    :func:`evaluate_split`) on each task's combined kernel.

    The diffusion kernels share the Laplacian's eigenvectors, so each
    training block is ``P_tr diag(n s_i) P_tr^T`` and SM1 is fitted from the
    diagonal factors ``sqrt(n s_i)`` with the shared basis ``P_tr``; the
    traces of the full kernels (scaled by n like the SVM's kernels) are all
    n, so the trace constraint makes the weights sum to 1.

    When :func:`biokernels.solvers.sm1.sm1_fits` predicts more than
    ``max_seconds`` (all tasks) or ``max_memory_gb`` (one fit), nothing is
    fitted: the tables are empty and the reason is logged (the paper could
    not run SM1 on its larger network either).

    ``sm1_form`` is :class:`biokernels.solvers.sm1.SM1`'s ``form``: the
    default elementwise cones, or ``"per_kernel"`` (the reference form).

    Returns
    -------
    roc : DataFrame method, task, auc (empty when skipped)
    weights : DataFrame method, task, beta, weight
    times : DataFrame method, seconds
    """
    from biokernels.solvers.sm1 import SM1, sm1_fits

    say = log.info if log else (lambda *a, **k: None)
    train_mask, test_mask, train, test, Yv, ytr, yte = split_rows(Y, train_mask, eval_mask)
    n, p = P.shape[0], len(betas)
    tasks = list(Y.columns)
    ok, reason = sm1_fits(len(train), p, n, basis_dim=n, diagonal=True,
                          max_memory_bytes=max_memory_gb * 2 ** 30, max_seconds=max_seconds,
                          n_fits=len(tasks))
    say(reason)
    if not ok:
        say("SM1 skipped: %s", reason)
        return sm1_empty_tables()
    S = diffusion_spectra(d, betas) * n
    factors = [np.sqrt(s) for s in S]
    basis = P[train]                      # the shared left factor of every training block
    traces = S.sum(axis=1)
    blocks = KernelBlocks(P, train, test, device)
    roc_rows, weight_rows = [], []
    t0 = time.perf_counter()
    for k, task in enumerate(tasks):
        y = 2 * ytr[:, k] - 1
        if y.min() == y.max() or yte[:, k].min() == yte[:, k].max():
            roc_rows.append({"method": "SM1", "task": task, "auc": np.nan})
            continue
        mu = SM1(C=C, form=sm1_form).fit_factors(factors, y, traces, basis=basis).weights_
        weight_rows.extend({"method": "SM1", "task": task, "beta": b, "weight": float(w)}
                           for b, w in zip(betas, mu))
        Ktr, Kte = blocks(mu @ S / n)
        auc = task_aucs(task_scores(Ktr, Kte, ytr[:, [k]], C, classifier), yte[:, [k]])[0]
        roc_rows.append({"method": "SM1", "task": task, "auc": auc})
        say("SM1 task %s: AUC %.4f", task, auc)
    times = pd.DataFrame([{"method": "SM1", "seconds": time.perf_counter() - t0}])
    return pd.DataFrame(roc_rows), pd.DataFrame(weight_rows), times


def sm1_empty_tables() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The tables of :func:`evaluate_sm1` when SM1 does not run: empty
    ``roc`` (method, task, auc), ``weights`` (method, task, beta, weight) and
    ``times`` (method, seconds)."""
    return (pd.DataFrame(columns=["method", "task", "auc"]),
            pd.DataFrame(columns=["method", "task", "beta", "weight"]),
            pd.DataFrame(columns=["method", "seconds"]))


def scale_candidates(cfg: dict, eigens: dict[str, tuple[np.ndarray, np.ndarray]]) -> list[ScaleCandidate]:
    """The kernel scales a data set's splits may use.

    Parameters
    ----------
    cfg : dict
        The data set's settings: ``beta_step`` (its own or the study's),
        ``laplacian`` (``unnormalized`` | ``normalized``), ``kernel_scale``
        (``fixed`` | ``inner_cv``) and, for ``inner_cv``,
        ``kernel_scale_cv.candidates`` (``laplacian``, ``step_factor``).
    eigens : dict laplacian -> (d (n,), P (n, n))
        Eigendecompositions of the Laplacians the candidates need.

    Returns
    -------
    list of ScaleCandidate: one (the data set's own) for ``fixed``, the
    configured ones in order for ``inner_cv``.

    Raises
    ------
    ValueError
        If a needed eigendecomposition is missing or ``kernel_scale`` is unknown.
    """
    def cand(lap, step, note=""):
        if lap not in eigens:
            raise ValueError(f"kernel scale {lap}, step {step:g} needs the eigendecomposition of the "
                             f"{lap} Laplacian; have {sorted(eigens)}")
        d, P = eigens[lap]
        return ScaleCandidate(f"{lap}, step {step:g}{note}", lap, float(step), P, d)

    kind = cfg.get("kernel_scale", "fixed")
    step = float(cfg["beta_step"])
    if kind == "fixed":
        return [cand(cfg.get("laplacian", "unnormalized"), step)]
    if kind != "inner_cv":
        raise ValueError(f"kernel_scale must be fixed or inner_cv, got {kind!r}")
    out = []
    for c in cfg["kernel_scale_cv"]["candidates"]:
        paper = c["laplacian"] == "unnormalized" and np.isclose(step * c["step_factor"], 0.1)
        out.append(cand(c["laplacian"], step * c["step_factor"], " (paper)" if paper else ""))
    return out


def run_split(cfg: dict, eigens: dict[str, tuple[np.ndarray, np.ndarray]], Y: pd.DataFrame,
              train_mask: np.ndarray, seed: int, adjacency=None, device: str = "auto",
              log=None, *, reference: bool = False, n_jobs: int = 1) -> tuple[SplitResult, pd.DataFrame]:
    """One split of the diffusion study as a data set configures it: the
    kernel scale (fixed, or the train-only choice of
    :func:`choose_kernel_scale`), then :func:`evaluate_split` on it.

    Parameters
    ----------
    cfg : dict
        The study's split settings (``n_kernels``, ``beta_step``, ``lam``,
        ``formulations``, ``solver``, ``svm_C_grid``, ``inner_folds``,
        optionally ``classifier`` and ``classifier_settings``, see
        :func:`classifier_of`) with the data set's ``laplacian``,
        ``kernel_scale``, ``unannotated`` and, for ``inner_cv``,
        ``kernel_scale_cv``.
    eigens : dict laplacian -> (d, P), see :func:`scale_candidates`
    Y, train_mask, seed, adjacency, device, log : as in :func:`evaluate_split`
    reference, n_jobs : keyword-only, as in :func:`evaluate_split` (the
        kernel-scale choice, when any, always takes the reference path)

    Returns
    -------
    SplitResult of the chosen scale, and the scale table (one row per
    candidate and C for ``inner_cv``; one row for ``fixed``) with a
    ``chosen`` column, the record of the choice for this split.
    """
    eval_mask = _eval_mask(cfg, Y)
    if eval_mask is not None and log:
        log.info("unannotated: exclude: %d of %d proteins carry no annotation and are neither "
                 "trained on nor scored (they stay in the network)", int((~eval_mask).sum()), len(Y))
    classifier = classifier_of(cfg)
    cands = scale_candidates(cfg, eigens)
    if cfg.get("kernel_scale", "fixed") == "fixed":
        chosen = 0
        scale = pd.DataFrame([{"candidate": cands[0].name, "laplacian": cands[0].laplacian,
                               "beta_step": cands[0].beta_step, "C": np.nan, "inner_auc": np.nan,
                               "score": np.nan, "best_C": np.nan, "chosen": True}])
    else:
        scv = cfg["kernel_scale_cv"]
        chosen, scale = choose_kernel_scale(cands, Y, train_mask, cfg["n_kernels"], cfg["lam"],
                                            cfg["svm_C_grid"], cfg["inner_folds"], seed,
                                            scv["formulation"], device, cfg["solver"], eval_mask, log,
                                            classifier)
    c = cands[chosen]
    res = evaluate_split(c.P, c.d, Y, train_mask, diffusion_betas(cfg["n_kernels"], c.beta_step),
                         cfg["lam"], cfg["svm_C_grid"], cfg["inner_folds"], seed,
                         tuple(cfg["formulations"]), adjacency=adjacency, device=device,
                         solver=cfg["solver"], log=log, eval_mask=eval_mask, classifier=classifier,
                         reference=reference, n_jobs=n_jobs)
    res.notes["kernel_scale"] = c.name
    return res, scale


def chosen_scale(scale: pd.DataFrame, source: str = "scale table") -> tuple[str, float]:
    """(laplacian, beta_step) of the chosen row of a scale table written by
    :func:`run_split`. Raises ValueError (naming ``source``) unless exactly
    one candidate is chosen."""
    rows = scale.loc[scale["chosen"].astype(bool), ["laplacian", "beta_step"]].drop_duplicates()
    if len(rows) != 1:
        raise ValueError(f"{source}: expected one chosen kernel scale, found {len(rows)}")
    return str(rows.iloc[0]["laplacian"]), float(rows.iloc[0]["beta_step"])


def _eval_mask(cfg: Mapping, Y: pd.DataFrame) -> np.ndarray | None:
    """The examples of a data set's tasks: the annotated proteins with
    ``unannotated: exclude``, every protein (None) otherwise."""
    return annotated_mask(Y) if cfg.get("unannotated", "negative") == "exclude" else None


def run_sm1(cfg: Mapping, eigens: dict[str, tuple[np.ndarray, np.ndarray]], Y: pd.DataFrame,
            train_mask: np.ndarray, scale: pd.DataFrame, cv: pd.DataFrame, device: str = "auto",
            log=None, source: str = "scale table") -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """SM1 on the given split as the data set configures it (the workflow's
    SM1 job): the split's chosen kernel scale, the C its inner CV chose, the
    beta grid ``diffusion_betas(cfg["n_kernels"], chosen step)``, then
    :func:`evaluate_sm1` with the configured classifier.

    Parameters
    ----------
    cfg : mapping
        ``n_kernels``, ``sm1`` (``enabled``, ``max_seconds``,
        ``max_memory_gb``, optional ``on_deviations``), optional
        ``deviation``, ``unannotated``, ``classifier``, ``classifier_settings``.
    eigens : dict laplacian -> (d (n,), P (n, n))
    Y, train_mask : as in :func:`evaluate_split`
    scale : DataFrame
        The split's kernel-scale table (:func:`run_split`).
    cv : DataFrame
        The split's inner-CV table (``C``, ``chosen``).
    device, log : as in :func:`evaluate_split`
    source : str
        Name of the scale table, for messages.

    Returns
    -------
    roc, weights, times : as :func:`evaluate_sm1`; empty (:func:`sm1_empty_tables`)
    and the reason logged when ``sm1.enabled`` is false, or when the data set
    carries a ``deviation`` and ``sm1.on_deviations`` is false.

    Raises
    ------
    ValueError
        The scale table has no single chosen scale (:func:`chosen_scale`),
        or no C of the inner-CV table is chosen.
    """
    say = log.info if log else (lambda *a, **k: None)
    sm1 = cfg["sm1"]
    if cfg.get("deviation") and not sm1.get("on_deviations", False):
        say("SM1 skipped: this data set carries a deviation from the paper's protocol (%s) and "
            "diffusion.sm1.on_deviations is false", cfg["deviation"])
        return sm1_empty_tables()
    if not sm1["enabled"]:
        say("SM1 disabled in the config (diffusion.sm1.enabled: false)")
        return sm1_empty_tables()
    lap, step = chosen_scale(scale, source)
    d, P = eigens[lap]
    say("kernel scale of split 00: %s Laplacian, beta step %g", lap, step)
    chosen = cv.loc[cv["chosen"].astype(bool), "C"]
    if chosen.empty:
        raise ValueError("inner-CV table: no chosen C")
    return evaluate_sm1(P, d, Y, train_mask, diffusion_betas(cfg["n_kernels"], step), float(chosen.iloc[0]),
                        sm1["max_seconds"], sm1["max_memory_gb"], device, log, _eval_mask(cfg, Y),
                        classifier_of(cfg))


def run_sensitivity(cfg: Mapping, eigens: dict[str, tuple[np.ndarray, np.ndarray]], Y: pd.DataFrame,
                    train_mask: np.ndarray, scale: pd.DataFrame, seed: int, device: str = "auto",
                    log=None, source: str = "scale table", n_jobs: int = 1) -> pd.DataFrame:
    """The sensitivity table of a data set (the workflow's sensitivity job):
    :func:`sensitivity_table` on the split's chosen kernel scale, with the
    settings of ``cfg`` (``n_kernels``, ``lam``, ``svm_C_grid``,
    ``inner_folds``, ``sensitivity``, ``solver``, optional ``unannotated``,
    ``classifier``, ``classifier_settings``). ``scale``: the split's
    kernel-scale table; ``n_jobs``: threads for the classifier fits; others
    as in :func:`run_sm1`. Returns the table of :func:`sensitivity_table`."""
    say = log.info if log else (lambda *a, **k: None)
    lap, step = chosen_scale(scale, source)
    d, P = eigens[lap]
    say("kernel scale of split 00: %s Laplacian, beta step %g", lap, step)
    return sensitivity_table(P, d, Y, train_mask, step, cfg["n_kernels"], cfg["lam"], cfg["svm_C_grid"],
                             cfg["inner_folds"], cfg["sensitivity"], seed, device, cfg["solver"], log,
                             _eval_mask(cfg, Y), classifier_of(cfg), n_jobs)
