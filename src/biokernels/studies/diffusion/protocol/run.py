"""Config-level entry points of the workflow's diffusion jobs: one split
(:func:`run_split`, its kernel scale :func:`split_kernel_scale`), SM1
(:func:`run_sm1`) and the sensitivity table (:func:`run_sensitivity`) as a
data set configures them.

The beta grid ``beta_i = -step * i`` (i = 1..n_kernels) is built only by
:func:`biokernels.kernels.diffusion.diffusion_betas`; these functions take
``n_kernels`` and the split's chosen step and call it, so the workflow
scripts never build a grid.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from biokernels.kernels.diffusion import diffusion_betas
from biokernels.studies.diffusion.protocol.classifiers import classifier_of
from biokernels.studies.diffusion.protocol.kernel_scale import (ScaleCandidate, choose_kernel_scale, chosen_scale,
                                                                 scale_candidates)
from biokernels.studies.diffusion.protocol.masks import annotated_mask
from biokernels.studies.diffusion.protocol.sensitivity import sensitivity_table
from biokernels.studies.diffusion.protocol.sm1_eval import evaluate_sm1, sm1_empty_tables
from biokernels.studies.diffusion.protocol.split import SplitResult, evaluate_split


def split_kernel_scale(cfg: dict, eigens: dict[str, tuple[np.ndarray, np.ndarray]], Y: pd.DataFrame,
                       train_mask: np.ndarray, seed: int, device: str = "auto", log=None
                       ) -> tuple[ScaleCandidate, pd.DataFrame]:
    """The kernel scale of one split as a data set configures it: its own
    (``kernel_scale: fixed``) or the train-only choice of
    :func:`choose_kernel_scale` (``inner_cv``, which sees no test protein).

    Parameters: as :func:`run_split`.

    Returns
    -------
    the chosen ScaleCandidate, and the scale table (one row per candidate
    and C for ``inner_cv``; one row for ``fixed``) with a ``chosen`` column,
    the record of the choice for this split.
    """
    cands = scale_candidates(cfg, eigens)
    if cfg.get("kernel_scale", "fixed") == "fixed":
        scale = pd.DataFrame([{"candidate": cands[0].name, "laplacian": cands[0].laplacian,
                               "beta_step": cands[0].beta_step, "C": np.nan, "inner_auc": np.nan,
                               "score": np.nan, "best_C": np.nan, "chosen": True}])
        return cands[0], scale
    scv = cfg["kernel_scale_cv"]
    chosen, scale = choose_kernel_scale(cands, Y, train_mask, cfg["n_kernels"], cfg["lam"], cfg["svm_C_grid"],
                                        cfg["inner_folds"], seed, scv["formulation"], device, cfg["solver"],
                                        _eval_mask(cfg, Y), log, classifier_of(cfg))
    return cands[chosen], scale


def run_split(cfg: dict, eigens: dict[str, tuple[np.ndarray, np.ndarray]], Y: pd.DataFrame,
              train_mask: np.ndarray, seed: int, adjacency=None, device: str = "auto",
              log=None, *, reference: bool = False, n_jobs: int = 1,
              scale: tuple[ScaleCandidate, pd.DataFrame] | None = None) -> tuple[SplitResult, pd.DataFrame]:
    """One split of the diffusion study as a data set configures it: the
    kernel scale (:func:`split_kernel_scale`), then :func:`evaluate_split`
    on it.

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
    scale : keyword-only, optional
        The result of :func:`split_kernel_scale` for these arguments, when
        the caller has it already (it is not recomputed).

    Returns
    -------
    SplitResult of the chosen scale, and the scale table of
    :func:`split_kernel_scale`.
    """
    eval_mask = _eval_mask(cfg, Y)
    if eval_mask is not None and log:
        log.info("unannotated: exclude: %d of %d proteins carry no annotation and are neither "
                 "trained on nor scored (they stay in the network)", int((~eval_mask).sum()), len(Y))
    c, table = split_kernel_scale(cfg, eigens, Y, train_mask, seed, device, log) if scale is None else scale
    res = evaluate_split(c.P, c.d, Y, train_mask, diffusion_betas(cfg["n_kernels"], c.beta_step),
                         cfg["lam"], cfg["svm_C_grid"], cfg["inner_folds"], seed,
                         tuple(cfg["formulations"]), adjacency=adjacency, device=device,
                         solver=cfg["solver"], log=log, eval_mask=eval_mask, classifier=classifier_of(cfg),
                         reference=reference, n_jobs=n_jobs)
    res.notes["kernel_scale"] = c.name
    return res, table


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
