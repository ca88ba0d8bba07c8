"""New function predictions from a network: one formulation of
the diffusion study trained per function on every annotated protein, then
every protein scored (:func:`predict_functions`).

The computations are the protocol's own (:mod:`biokernels.studies.
diffusion.protocol`): the kernel scale of :func:`run_split` (fixed, or its
train-only choice), the diffusion kernels ``exp(beta_i L) / trace`` of the
Laplacian's eigendecomposition (Eqs. 5-6), the formulation's weights learned
from the targets of Eq. 13 with the ridge ``lam`` of Eq. 11, the classifier of
:data:`CLASSIFIERS` and its C from :func:`choose_C` (eBaseline kernel, inner
folds of the training proteins). So a score is exactly what a split's test
protein gets when every annotated protein trains. Calibration and expected
precision come from out-of-fold decision values of the same inner folds.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import KFold

from biokernels.errors import InputError
from biokernels.kernels.diffusion import diffusion_betas, diffusion_spectra
from biokernels.metrics import roc_auc_columns
from biokernels.solvers.dkl import DiffusionKernelLearning
from biokernels.studies.diffusion.protocol.blocks import KernelBlocks
from biokernels.studies.diffusion.protocol.classifiers import classifier_of, smo_of
from biokernels.studies.diffusion.protocol.inner_cv import choose_C
from biokernels.studies.diffusion.protocol.kernel_scale import choose_kernel_scale, scale_candidates
from biokernels.studies.diffusion.protocol.masks import target_matrix
from biokernels.studies.diffusion.protocol.run import _eval_mask
from biokernels.studies.diffusion.protocol.scoring import kernel_scores
from biokernels.studies.diffusion.protocol.split import FORMULATIONS

#: Fraction of the training proteins in the "top" of a function's
#: out-of-fold ranking whose precision :func:`predict_functions` reports.
TOP_FRACTION = 0.01


@dataclass
class Prediction:
    """What :func:`predict_functions` returns (proteins in the order of the labels)."""

    scores: pd.DataFrame          # (n, t) decision values of the final fit; NaN: a single-class function
    probabilities: pd.DataFrame   # (n, t) Platt probabilities of those scores
    functions: pd.DataFrame       # one row per function: CV AUC, expected precision, Platt a, b
    top_k: pd.DataFrame           # protein, function, rank, probability, score
    notes: dict = field(default_factory=dict)   # C, kernel_scale, formulation, n_train, weights


def _fit_scores(P: np.ndarray, S: np.ndarray, Yv: np.ndarray, fit: np.ndarray, score: np.ndarray,
                formulation: str, lam: float, solver: str, C: float, classifier, device: str,
                n_jobs: int) -> tuple[np.ndarray, np.ndarray]:
    """The formulation trained on the proteins ``fit`` (int indices) and its
    decision values on ``score``: weights from Eq. 13's targets (``+1/-1`` on
    ``fit``, 0 elsewhere) with ridge ``lam``, then the classifier per task at
    ``C`` on the learned kernel (:func:`kernel_scores`, cold starts).
    Returns (scores (len(score), t), weights (p,) or (t, p)); NaN columns for
    tasks with a single class on ``fit``."""
    mask = np.zeros(P.shape[0], bool)
    mask[fit] = True
    B = P.T @ target_matrix(Yv, mask)
    W = np.asarray(DiffusionKernelLearning(formulation=formulation, lam=lam, solver=solver).fit(S, B).weights_)
    blocks = KernelBlocks(P, fit, score, device)
    ytr = Yv[fit]
    if W.ndim == 1:
        return kernel_scores(blocks, W @ S, ytr, C, classifier, n_jobs), W
    cols = [kernel_scores(blocks, W[k] @ S, ytr[:, [k]], C, classifier, n_jobs)[:, 0] for k in range(W.shape[0])]
    return np.column_stack(cols), W


def platt(scores: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Platt's sigmoid ``P(y = 1 | f) = 1 / (1 + exp(-(a f + b)))`` fitted to
    decision values ``scores`` (m,) and 0/1 labels ``y`` (m,).

    Platt's (1999) method as scikit-learn's ``CalibratedClassifierCV(method=
    "sigmoid")`` uses it: the likelihood of the smoothed targets ``(N+ + 1) /
    (N+ + 2)`` (positives) and ``1 / (N- + 2)`` (negatives), maximized by
    scikit-learn's ``LogisticRegression`` (lbfgs, ``C = 1e12``: in effect no
    penalty) on each score twice, as class 1 weighted by the target and as
    class 0 weighted by one minus it. The smoothed targets keep ``a`` finite
    on separable scores. A negative slope (scores ranking against the
    labels) is replaced by the flat sigmoid ``a = 0`` at the targets' mean,
    so the probability never decreases with the score.

    Returns (a, b); (nan, nan) with fewer than one protein of each class.
    """
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(y).astype(bool)
    ok = np.isfinite(s)
    s, y = s[ok], y[ok]
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    if n_pos == 0 or n_neg == 0:
        return math.nan, math.nan
    t = np.where(y, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))
    X = np.concatenate([s, s])[:, None]
    lab = np.concatenate([np.ones_like(s), np.zeros_like(s)])
    model = LogisticRegression(C=1e12, max_iter=1000).fit(X, lab, sample_weight=np.concatenate([t, 1 - t]))
    a, b = float(model.coef_[0, 0]), float(model.intercept_[0])
    if a < 0:
        m = float(t.mean())
        a, b = 0.0, math.log(m / (1 - m))
    return a, b


def precision_at(scores: np.ndarray, y: np.ndarray, top_fraction: float = TOP_FRACTION) -> dict:
    """Expected precision of a threshold on a function's decision values,
    from out-of-fold ``scores`` (m,) and 0/1 labels ``y`` (m,):

    * ``precision_at_0``: the fraction carrying the function among the
      proteins with a decision value >= 0 (the classifier's own boundary),
      ``n_at_0`` of them (NaN precision when none);
    * ``precision_top``: the fraction carrying it among the
      ``n_top = ceil(top_fraction * m)`` proteins with the highest values,
      ``threshold_top`` the lowest of those values (ties at it counted in).

    Returns a dict of these five numbers.
    """
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(y).astype(bool)
    ok = np.isfinite(s)
    s, y = s[ok], y[ok]
    out = {"precision_at_0": math.nan, "n_at_0": 0, "precision_top": math.nan, "n_top": 0,
           "threshold_top": math.nan}
    if not len(s):
        return out
    at0 = s >= 0
    out["n_at_0"] = int(at0.sum())
    if at0.any():
        out["precision_at_0"] = float(y[at0].mean())
    m = max(1, math.ceil(top_fraction * len(s)))
    thr = float(np.sort(s)[::-1][m - 1])
    top = s >= thr
    out.update(precision_top=float(y[top].mean()), n_top=int(top.sum()), threshold_top=thr)
    return out


def top_k_table(probabilities: pd.DataFrame, scores: pd.DataFrame, Y: pd.DataFrame, k: int) -> pd.DataFrame:
    """Per protein, the ``k`` functions of highest probability (ties: higher
    score, then column order) among those it does not carry (``Y == 0``) and
    that have a probability. Returns columns protein, function, rank (1..k),
    probability, score; rows by protein (label order), then rank."""
    prob = probabilities.to_numpy(dtype=np.float64)
    sc = scores.to_numpy(dtype=np.float64)
    free = (Y.to_numpy() == 0) & np.isfinite(prob)
    rows = []
    for i, protein in enumerate(Y.index):
        cand = np.flatnonzero(free[i])
        if not len(cand):
            continue
        order = cand[np.lexsort((cand, -sc[i, cand], -prob[i, cand]))][:k]
        rows.extend({"protein": protein, "function": Y.columns[j], "rank": r + 1, "probability": prob[i, j],
                     "score": sc[i, j]} for r, j in enumerate(order))
    return pd.DataFrame(rows, columns=["protein", "function", "rank", "probability", "score"])


def predict_functions(cfg: dict, eigens: dict[str, tuple[np.ndarray, np.ndarray]], Y: pd.DataFrame, seed: int,
                      *, formulation: str = "mDKL", top_k: int = 5, train_mask: np.ndarray | None = None,
                      device: str = "auto", log=None, n_jobs: int = 1) -> Prediction:
    """Train ``formulation`` per function on every annotated protein and score every protein.

    Parameters
    ----------
    cfg : dict
        The data set's split settings, as :func:`run_split` takes them
        (``n_kernels``, ``beta_step``, ``lam``, ``solver``, ``svm_C_grid``,
        ``inner_folds``, ``classifier``, ``classifier_settings``,
        ``laplacian``, ``kernel_scale``, ``unannotated``, and for
        ``inner_cv`` ``kernel_scale_cv``); ``formulations`` is not used.
    eigens : dict laplacian -> (d (n,), P (n, n)), as :func:`run_split`
    Y : DataFrame of 0/1 (n, t), rows in the order of ``P``
    seed : int
        The inner folds' seed (``KFold(inner_folds, shuffle=True)``, as the protocol).
    formulation : one of :data:`FORMULATIONS`
    top_k : int >= 1
    train_mask : bool (n,), optional
        The training proteins; None (the prediction): every protein. With
        ``unannotated: exclude`` only annotated ones train (as in a split);
        ``negative``: proteins without annotation train as negatives of
        every function. Every protein is scored either way.
    device, log, n_jobs : as :func:`run_split`

    Steps: the kernel scale (fixed, or :func:`choose_kernel_scale` on the
    training proteins); C by :func:`choose_C` on the eBaseline kernel; the
    weights (Eq. 13 targets of the training proteins, Eq. 11 ridge) and the
    classifier at C on the learned kernel, scored on all n proteins. Then,
    on the folds of :func:`choose_C`, the same steps at the same C on each
    fold's inner-training proteins (weights relearned, so no validation
    label reaches its scores) give out-of-fold decision values: per
    function their ROC AUC (``cv_auc``), :func:`precision_at` and the Platt
    sigmoid (:func:`platt`) applied to the final scores. The final scores of
    training proteins are in-sample, so for a protein trained as a negative
    they tend to lie below its out-of-fold value: its probability and the
    expected precision are conservative for it.

    Returns
    -------
    Prediction: ``scores``/``probabilities`` (n, t); ``functions`` (t rows:
    function, n_positive, cv_auc, precision_at_0, n_at_0, precision_top,
    n_top, threshold_top, platt_a, platt_b, C, formulation, kernel_scale);
    ``top_k`` (:func:`top_k_table` without the functions a protein carries).

    Raises
    ------
    InputError
        Unknown ``formulation``, ``top_k < 1``, or a label table whose
        length differs from the eigendecomposition's.
    ValueError
        Fewer than ``2 inner_folds`` training proteins (as :func:`choose_kernel_scale`).
    """
    if formulation not in FORMULATIONS:
        raise InputError(f"diffusion.predict.formulation must be one of {list(FORMULATIONS)}, got {formulation!r}")
    if int(top_k) < 1:
        raise InputError(f"diffusion.predict.top_k must be >= 1, got {top_k!r}")
    say = log.info if log else (lambda *a, **k: None)
    classifier = classifier_of(cfg)
    cands = scale_candidates(cfg, eigens)
    n = len(Y)
    if cands[0].P.shape[0] != n:
        raise InputError(f"labels have {n} proteins, the eigendecomposition {cands[0].P.shape[0]}")
    train_mask = np.ones(n, bool) if train_mask is None else np.asarray(train_mask, bool).copy()
    eval_mask = _eval_mask(cfg, Y)
    if eval_mask is not None:
        train_mask &= eval_mask
    train = np.flatnonzero(train_mask)
    if len(train) < 2 * cfg["inner_folds"]:
        raise ValueError(f"{len(train)} training proteins cannot make {cfg['inner_folds']} inner folds")
    chosen = 0
    if cfg.get("kernel_scale", "fixed") != "fixed":
        chosen, _ = choose_kernel_scale(cands, Y, train_mask, cfg["n_kernels"], cfg["lam"], cfg["svm_C_grid"],
                                        cfg["inner_folds"], seed, cfg["kernel_scale_cv"]["formulation"], device,
                                        cfg["solver"], None, log, classifier)
    c = cands[chosen]
    S = diffusion_spectra(c.d, diffusion_betas(cfg["n_kernels"], c.beta_step))
    Yv = Y.to_numpy()
    ytr = Yv[train]
    uniform = np.full(S.shape[0], 1.0 / S.shape[0])
    blocks = KernelBlocks(c.P, train, train[:0], device)     # the protocol's fast path: smo needs the train block
    K = blocks.train(uniform @ S) if smo_of(classifier) is not None else blocks(uniform @ S)[0]
    C, _ = choose_C(blocks, uniform @ S, ytr, cfg["svm_C_grid"], cfg["inner_folds"], seed, classifier,
                    kernel=K, fast=True, n_jobs=n_jobs)
    del blocks, K
    say("predict: %s on %d training proteins, kernel scale %s, inner CV chose C=%g", formulation, len(train),
        c.name, C)
    fit = (formulation, cfg["lam"], cfg["solver"], C, classifier, device, n_jobs)
    final, W = _fit_scores(c.P, S, Yv, train, np.arange(n), *fit)

    oof = np.full(ytr.shape, np.nan)
    for fit_idx, val_idx in KFold(cfg["inner_folds"], shuffle=True, random_state=seed).split(train):
        oof[val_idx] = _fit_scores(c.P, S, Yv, train[fit_idx], train[val_idx], *fit)[0]
    with warnings.catch_warnings():     # a function with one class in training has no AUC
        warnings.simplefilter("ignore", RuntimeWarning)
        cv_auc = roc_auc_columns(ytr, oof)
    rows, prob = [], np.full(final.shape, np.nan)
    for k, name in enumerate(Y.columns):
        two = ytr[:, k].min() != ytr[:, k].max()
        a, b = platt(oof[:, k], ytr[:, k]) if two else (math.nan, math.nan)
        if np.isfinite(a):
            prob[:, k] = 1.0 / (1.0 + np.exp(-(a * final[:, k] + b)))
        rows.append({"function": name, "n_positive": int(ytr[:, k].sum()),
                     "cv_auc": float(cv_auc[k]),
                     **precision_at(oof[:, k], ytr[:, k]), "platt_a": a, "platt_b": b, "C": C,
                     "formulation": formulation, "kernel_scale": c.name})
    functions = pd.DataFrame(rows)
    say("predict: mean out-of-fold AUC %.4f over %d function(s)", np.nanmean(functions["cv_auc"]),
        int(functions["cv_auc"].notna().sum()))
    scores = pd.DataFrame(final, index=Y.index, columns=Y.columns)
    probabilities = pd.DataFrame(prob, index=Y.index, columns=Y.columns)
    return Prediction(scores, probabilities, functions, top_k_table(probabilities, scores, Y, int(top_k)),
                      {"C": C, "kernel_scale": c.name, "formulation": formulation, "n_train": len(train),
                       "weights": W})
