"""Sensitivity of eBaseline and mDKL on one split to the classifier's C, the
ridge lam, the number of kernels and the beta grid's step
(:func:`sensitivity_table`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from biokernels.kernels.diffusion import diffusion_betas, diffusion_spectra
from biokernels.metrics import roc_auc_columns
from biokernels.solvers.dkl import DiffusionKernelLearning
from biokernels.studies.diffusion.protocol.blocks import KernelBlocks
from biokernels.studies.diffusion.protocol.classifiers import smo_of
from biokernels.studies.diffusion.protocol.inner_cv import choose_C
from biokernels.studies.diffusion.protocol.masks import split_rows, target_matrix
from biokernels.studies.diffusion.protocol.scoring import kernel_scores, task_aucs


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
