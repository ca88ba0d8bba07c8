"""One split of the protocol (:func:`evaluate_split`): single kernels
(rBaseline, uBaseline), eBaseline, the six formulations, optionally Neighbor
Counting and FS-Weighted Averaging, each scored by ROC AUC per task.

Two paths with the same fits: the reference (``reference=True``: a GEMM per
kernel, a scikit-learn fit, ``decision_function`` and ``roc_auc_score`` per
task) and the default fast path (learned kernels summed from kept
single-kernel blocks, decision values of all tasks as one GEMM, a rank AUC
over all tasks, optionally the fits in threads; with the ``smo`` solver also
warm starts, train blocks only and factored decision values). Their tables
agree within stated rounding bounds and LIBSVM's tolerance
(tests/unit/studies/test_diffusion_speed_paths.py, tests/unit/solvers/test_svm_smo.py).
"""

from __future__ import annotations

import time
import warnings
from collections import Counter
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from biokernels.kernels.diffusion import diffusion_spectra
from biokernels.metrics import roc_auc_columns
from biokernels.solvers.dkl import DiffusionKernelLearning
from biokernels.solvers.svm_smo import SMOSVC
from biokernels.studies.diffusion.protocol.blocks import KernelBlocks
from biokernels.studies.diffusion.protocol.classifiers import smo_of
from biokernels.studies.diffusion.protocol.inner_cv import choose_C
from biokernels.studies.diffusion.protocol.masks import split_rows, target_matrix
from biokernels.studies.diffusion.protocol.scoring import _smo_block_scores, fit_task_scores, task_aucs, task_scores


FORMULATIONS = ("DKL", "DKLKL", "DKLKLu", "mDKL", "mDKLKL", "mDKLKLu")


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

    Keyword-only (speed)
    --------------------
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
        (tests/unit/studies/test_diffusion_speed_paths.py). With the ``smo``
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
