"""The kernel scale of a split (Laplacian and beta grid): the candidates a
data set configures (:func:`scale_candidates`), the train-only choice among
them by inner cross-validation (:func:`choose_kernel_scale`, a labelled
deviation from the paper's fixed scale), the chosen row of its table
(:func:`chosen_scale`), and the fixed-scale data sets whose split results
the choice may take (:func:`scale_siblings`, :func:`same_split_inputs`).
"""

from __future__ import annotations

import filecmp
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.model_selection import KFold

from biokernels.kernels.diffusion import diffusion_betas, diffusion_spectra
from biokernels.metrics import roc_auc_columns
from biokernels.solvers.dkl import DiffusionKernelLearning
from biokernels.studies.diffusion.protocol.blocks import KernelBlocks
from biokernels.studies.diffusion.protocol.classifiers import smo_of
from biokernels.studies.diffusion.protocol.masks import split_masks, target_matrix
from biokernels.studies.diffusion.protocol.scoring import _smo_block_scores, task_aucs, task_scores


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


def chosen_scale(scale: pd.DataFrame, source: str = "scale table") -> tuple[str, float]:
    """(laplacian, beta_step) of the chosen row of a scale table written by
    :func:`run_split`. Raises ValueError (naming ``source``) unless exactly
    one candidate is chosen."""
    rows = scale.loc[scale["chosen"].astype(bool), ["laplacian", "beta_step"]].drop_duplicates()
    if len(rows) != 1:
        raise ValueError(f"{source}: expected one chosen kernel scale, found {len(rows)}")
    return str(rows.iloc[0]["laplacian"]), float(rows.iloc[0]["beta_step"])


#: Source keys that may differ between a data set and a sibling whose split
#: it reuses: what names or labels the data set, and what sets its scale.
SCALE_KEYS = frozenset({"description", "deviation", "laplacian", "beta_step", "kernel_scale", "splits_of"})


def scale_siblings(name: str, sources: Mapping[str, Mapping], default_step: float,
                   candidates: list[Mapping]) -> dict[tuple[str, float], str]:
    """The configured data sets whose split results a train-only kernel-scale
    choice may take instead of recomputing them.

    A sibling of ``name`` (a data set with ``kernel_scale: inner_cv``) has
    ``kernel_scale: fixed``, the same splits (``splits_of``, or its own
    name), the same source settings apart from :data:`SCALE_KEYS`, and the
    Laplacian and beta step of one candidate. Its split is then the very
    computation :func:`evaluate_split` would run on that candidate (the
    study's settings and seed are shared by every data set).

    Parameters
    ----------
    name : str
        The data set choosing its scale.
    sources : mapping data set -> source settings
        The configured data sets only (``diffusion.datasets``).
    default_step : float
        ``diffusion.beta_step``, the step of a source without its own.
    candidates : list of mappings
        ``diffusion.kernel_scale_cv.candidates`` (``laplacian``, ``step_factor``).

    Returns
    -------
    dict (laplacian, beta step) -> sibling data set, one per candidate that
    has one (the first configured); empty for a fixed-scale data set.
    """
    def step_of(src):
        return float(src.get("beta_step", default_step))

    def rest(src):
        return {k: v for k, v in src.items() if k not in SCALE_KEYS}

    me = sources[name]
    if me.get("kernel_scale", "fixed") != "inner_cv":
        return {}
    # fixed-scale data sets on the same splits and inputs: (laplacian, step) -> data set, first one kept
    fixed: list[tuple[str, float, str]] = [
        (src.get("laplacian", "unnormalized"), step_of(src), ds) for ds, src in sources.items()
        if ds != name and src.get("kernel_scale", "fixed") == "fixed"
        and src.get("splits_of", ds) == me.get("splits_of", name) and rest(src) == rest(me)]
    out: dict[tuple[str, float], str] = {}
    for c in candidates:
        lap, step = str(c["laplacian"]), step_of(me) * float(c["step_factor"])
        match = next((ds for flap, fstep, ds in fixed if flap == lap and np.isclose(fstep, step)), None)
        if match is not None:
            out[(lap, step)] = match
    return out


def same_split_inputs(own: Mapping[str, str], sibling: Mapping[str, str],
                      eigen: tuple[np.ndarray, np.ndarray]) -> str | None:
    """Whether a sibling's split ran on this split's inputs: None when they
    are the same, else the reason they are not.

    ``own`` and ``sibling`` map ``edges``, ``labels`` and ``splits`` to
    paths, compared byte for byte (:func:`filecmp.cmp`); ``sibling`` also
    maps ``eigen`` to its ``.npz``, whose ``d`` and ``P`` must equal
    ``eigen`` = (d, P) exactly."""
    for key in ("edges", "labels", "splits"):
        if not filecmp.cmp(own[key], sibling[key], shallow=False):
            return f"{sibling[key]} differs from {own[key]}"
    with np.load(sibling["eigen"]) as f:
        if not (np.array_equal(f["d"], eigen[0]) and np.array_equal(f["P"], eigen[1])):
            return f"{sibling['eigen']}: another eigendecomposition than this data set's"
    return None
