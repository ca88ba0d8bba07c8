"""The source step of the virtual drug screen (Radhakrishnan, Ruiz Luyten,
Prasad & Uhler, Nat Commun 2023, Methods "Details for virtual drug
screening": the NTK source model, its ridge chosen on a random subset of the
source pairs, predictions for every target pair), as the
``drug_screen_source`` rule runs it: :func:`select_source_ridge`, then
:func:`fit_source` (in this process, or by several processes through
:mod:`biokernels.studies.drug_screen.source_fit`), then its outputs
(:func:`predictions_gct`, :func:`source_summary`).

``cfg`` is the rule's ``params.cfg``: the config's ``drug_screen`` keys
``kernel``, ``solver``, ``solver_settings`` and ``source_ridge``.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from biokernels.metrics import mean_r2
from biokernels.solvers.ridge import select_ridge_holdout
from biokernels.studies.drug_screen.protocol import ScreenData, SourceModel
from biokernels.studies.drug_screen.source_fit import distributed_command

#: The inputs a distributed fit reloads in every process (the rule's input names, in the order of
#: :func:`~biokernels.studies.drug_screen.protocol.load_screen`'s arguments).
SCREEN_INPUTS = ("expression", "controls", "fingerprints", "folds")


def role_positions(data: ScreenData) -> tuple[np.ndarray, np.ndarray]:
    """Positions of the source and of the target pairs of ``data``.

    Returns
    -------
    (src, tgt) : int arrays, ascending positions into ``data.Y`` of the pairs
    whose ``folds["role"]`` is ``source`` / ``target`` (dropped pairs in
    neither).
    """
    role = data.folds["role"].to_numpy()
    return np.flatnonzero(role == "source"), np.flatnonzero(role == "target")


def source_model(lam: float, cfg: dict, device, seed: int, log=None) -> SourceModel:
    """An unfitted :class:`~biokernels.studies.drug_screen.protocol.SourceModel`
    with absolute ridge ``lam`` and the kernel, solver and solver settings of
    ``cfg`` (module docstring).

    Raises
    ------
    ValueError
        Unknown solver or solver setting (from ``SourceModel``).
    """
    return SourceModel(lam, kernel_params=cfg["kernel"], device=device, solver=cfg["solver"],
                       settings=cfg["solver_settings"], log=log, seed=seed)


def select_source_ridge(data: ScreenData, src: np.ndarray, cfg: dict, device, seed: int, log
                        ) -> tuple[float, pd.DataFrame]:
    """The source ridge: the grid value of ``cfg["source_ridge"]["grid"]``
    with the highest validation mean R² (smallest on ties) of the source
    model fitted on 80% of a random ``cfg["source_ridge"]["subset"]`` of the
    source pairs ``src`` and scored on the other 20%
    (:func:`biokernels.solvers.ridge.select_ridge_holdout` with ``seed``;
    paper: lam = 1000 on a 10k subset).

    Parameters
    ----------
    data : ScreenData; src : int positions of the source pairs
    cfg : module docstring; device : torch device; seed : int
    log : logging.Logger (one line per grid value)

    Returns
    -------
    (lam, table) : the chosen absolute ridge (float) and the DataFrame
    ``lam``, ``r2``, ``chosen``, one row per grid value in grid order.

    Raises
    ------
    InputError
        Empty or negative grid, or fewer than 2 source pairs (names
        ``drug_screen.source_ridge``).
    """
    def score(lam, tr, va):
        r2 = mean_r2(source_model(lam, cfg, device, seed).fit(data, src[tr]).predict(data, src[va]),
                     data.Y[src[va]])
        log.info("ridge lam=%g: validation mean R2 %.4f (%d train, %d validation pairs)", lam, r2, len(tr), len(va))
        return r2

    rs = cfg["source_ridge"]
    return select_ridge_holdout(score, len(src), rs["grid"], subset=rs["subset"], seed=seed,
                                name="drug_screen.source_ridge")


@dataclass
class SourceFit:
    """The source model's predictions for the target pairs and how they were made.

    Attributes
    ----------
    pred : array (n_target, genes), float64, rows in the order of ``tgt``
    info : dict, the solver's information plus ``solver`` (its name)
    fit_seconds, predict_seconds : wall-clock seconds (a distributed run
        reports fit and prediction together in ``fit_seconds``, 0 in
        ``predict_seconds``)
    processes : int, processes that solved (processes per node x nodes)
    """

    pred: np.ndarray
    info: dict
    fit_seconds: float
    predict_seconds: float
    processes: int


def fit_source(data: ScreenData, src: np.ndarray, tgt: np.ndarray, lam: float, cfg: dict, device, seed: int,
               log, *, inputs: dict[str, str] | None = None, work: str | Path | None = None,
               threads: int = 1) -> SourceFit:
    """Fit the source model on every source pair ``src`` and predict the
    target pairs ``tgt`` (paper: 55,462 source pairs, Methods Eq. 1-2).

    In this process when ``processes * nodes`` of ``cfg["solver_settings"]``
    is 1; otherwise by that many processes
    (:func:`~biokernels.studies.drug_screen.source_fit.distributed_command`:
    torchrun, srun + torchrun across nodes), each reloading the screen from
    ``inputs``, with ``cfg`` written to ``work/config.json`` and the gathered
    predictions read back from ``work``.

    Parameters
    ----------
    data, src, tgt : the screen and the positions of its source / target pairs
    lam : float, absolute ridge; cfg : module docstring; device, seed
    log : logging.Logger
    inputs : dict with the paths :data:`SCREEN_INPUTS` (distributed only)
    work : directory of the distributed run's files (distributed only)
    threads : int, the rule's threads, shared by the processes of one node

    Returns
    -------
    SourceFit

    Raises
    ------
    ValueError
        From the solver (see ``SourceModel.fit``).
    RuntimeError, OSError
        A distributed run exited nonzero or could not start
        (:func:`biokernels.logs.run_logged`).
    """
    st = cfg["solver_settings"]
    processes = int(st["processes"]) * int(st["nodes"])
    t0 = time.perf_counter()
    if processes > 1:
        pred, info = _fit_distributed(lam, cfg, device, seed, log, inputs, Path(work), threads)
        fit_s, pred_s = time.perf_counter() - t0, 0.0
        log.info("distributed fit and prediction of %d target pairs in %.1f s (%s)", len(tgt), fit_s, info["solver"])
        return SourceFit(pred, info, fit_s, pred_s, processes)
    m = source_model(lam, cfg, device, seed, log).fit(data, src)
    fit_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    pred = m.predict(data, tgt)
    pred_s = time.perf_counter() - t0
    log.info("fit %d pairs in %.1f s (%s), predicted %d in %.1f s", len(src), fit_s, m.solver_, len(tgt), pred_s)
    return SourceFit(pred, {**m.info_, "solver": m.solver_}, fit_s, pred_s, processes)


def _fit_distributed(lam, cfg, device, seed, log, inputs, work: Path, threads: int):
    """Run the distributed fit (:func:`fit_source`); returns (pred, info)."""
    from biokernels.logs import run_logged

    st = cfg["solver_settings"]
    work.mkdir(parents=True, exist_ok=True)
    (work / "config.json").write_text(json.dumps(cfg))
    args = [a for k in SCREEN_INPUTS for a in (f"--{k}", inputs[k])]
    args += ["--out", str(work), "--lam", repr(float(lam)), "--config", str(work / "config.json"),
             "--device", "cuda" if str(device).startswith("cuda") else "cpu", "--seed", str(seed),
             "--threads", str(max(1, threads // int(st["processes"])))]
    cmd = distributed_command(args, int(st["processes"]), int(st["nodes"]))
    log.info("distributed fit: %d process(es) on %d node(s): %s", int(st["processes"]), int(st["nodes"]),
             " ".join(cmd))
    for f in ("predictions.npy", "info.json"):
        (work / f).unlink(missing_ok=True)
    run_logged(cmd, log)
    return np.load(work / "predictions.npy"), json.loads((work / "info.json").read_text())


def predictions_gct(data: ScreenData, tgt: np.ndarray, pred: np.ndarray):
    """The target predictions as a GCT (genes x target pairs): columns the
    pair ids of ``tgt``, column metadata ``pert_id``, ``cell_id``,
    ``stratum`` from the folds table, log2 expression units.

    Raises
    ------
    ValueError
        ``pred`` is not (len(tgt), genes) (from pandas).
    """
    from biokernels.io.gctx import GCT

    ids = data.folds.index[tgt]
    return GCT(data=pd.DataFrame(pred.T, index=data.genes, columns=ids), row_meta=pd.DataFrame(index=data.genes),
               col_meta=data.folds.loc[ids, ["pert_id", "cell_id", "stratum"]])


def source_summary(data: ScreenData, n_source_cells: int, src: np.ndarray, tgt: np.ndarray, lam: float,
                   fit: SourceFit, device) -> dict:
    """The source step's summary (``summary.json``).

    Returns
    -------
    dict ``lam``, ``n_source``, ``n_source_cells``, ``n_target_pairs``,
    ``n_genes``, ``fit_seconds``, ``predict_seconds``, ``device``,
    ``processes``, ``solver`` (the int, float and str entries of
    ``fit.info``) and ``target_mean_r2_source_only``: per target cell line
    (sorted), the mean over its pairs of the per-pair R² across genes of the
    source prediction alone (:func:`biokernels.metrics.mean_r2`).
    """
    tgt_cell = data.folds["cell_id"].to_numpy()[tgt]
    return {"lam": lam, "n_source": int(len(src)), "n_source_cells": n_source_cells,
            "n_target_pairs": int(len(tgt)), "n_genes": int(data.Y.shape[1]), "fit_seconds": fit.fit_seconds,
            "predict_seconds": fit.predict_seconds, "device": str(device), "processes": fit.processes,
            "solver": {k: v for k, v in fit.info.items() if isinstance(v, (int, float, str))},
            "target_mean_r2_source_only": {c: float(mean_r2(fit.pred[tgt_cell == c], data.Y[tgt][tgt_cell == c]))
                                           for c in sorted(set(tgt_cell))}}
