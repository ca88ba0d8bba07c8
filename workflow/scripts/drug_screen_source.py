"""Snakemake entry (GPU-tagged): NTK source model, ridge chosen on a random
source subset (biokernels.solvers.ridge.select_ridge_holdout), predictions
for every target pair."""

import json
import time
from pathlib import Path

import numpy as np
import pandas as pd

from biokernels.device import log_device
from biokernels.studies.drug_screen.protocol import SourceModel, load_screen
from biokernels.io.gctx import GCT, write_gctx
from biokernels.logs import rule_logger, run_logged
from biokernels.studies.drug_screen.source_fit import distributed_command
from biokernels.metrics import mean_r2
from biokernels.solvers.ridge import select_ridge_holdout

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
device = log_device(smk.params.device, log)
cfg = smk.params.cfg
data, source = load_screen(smk.input.expression, smk.input.controls, smk.input.fingerprints, smk.input.folds)
role = data.folds["role"].to_numpy()
src = np.flatnonzero(role == "source")
tgt = np.flatnonzero(role == "target")
log.info("source: %d pairs over %d cell lines; target pairs to predict: %d; genes: %d", len(src), len(source),
         len(tgt), data.Y.shape[1])


def model(lam, log=None):
    return SourceModel(lam, kernel_params=cfg["kernel"], device=device, solver=cfg["solver"],
                       settings=cfg["solver_settings"], log=log, seed=smk.params.seed)


def score(lam, tr, va):
    """Validation mean R² of the source model fitted on the holdout's training pairs."""
    r2 = mean_r2(model(lam).fit(data, src[tr]).predict(data, src[va]), data.Y[src[va]])
    log.info("ridge lam=%g: validation mean R2 %.4f (%d train, %d validation pairs)", lam, r2, len(tr), len(va))
    return r2


rs = cfg["source_ridge"]
lam, grid = select_ridge_holdout(score, len(src), rs["grid"], subset=rs["subset"], seed=smk.params.seed,
                                 name="drug_screen.source_ridge")
grid.to_csv(smk.output.ridge, sep="\t", index=False)
st = cfg["solver_settings"]
processes = int(st["processes"]) * int(st["nodes"])
t0 = time.perf_counter()
if processes > 1:
    # the final fit by several processes (torchrun; srun + torchrun across nodes): each loads the screen,
    # takes its share of the rows of a matrix-free solve, and rank 0 writes the gathered predictions
    work = Path(smk.output.summary).parent / ".distributed"
    work.mkdir(parents=True, exist_ok=True)
    (work / "config.json").write_text(json.dumps(cfg))
    args = ["--expression", smk.input.expression, "--controls", smk.input.controls, "--fingerprints",
            smk.input.fingerprints, "--folds", smk.input.folds, "--out", str(work), "--lam", repr(float(lam)),
            "--config", str(work / "config.json"), "--device", "cuda" if str(device).startswith("cuda") else "cpu",
            "--seed", str(smk.params.seed), "--threads", str(max(1, smk.threads // int(st["processes"])))]
    cmd = distributed_command(args, int(st["processes"]), int(st["nodes"]))
    log.info("distributed fit: %d process(es) on %d node(s): %s", int(st["processes"]), int(st["nodes"]),
             " ".join(cmd))
    for f in ("predictions.npy", "info.json"):
        (work / f).unlink(missing_ok=True)
    run_logged(cmd, log)
    pred = np.load(work / "predictions.npy")
    info = json.loads((work / "info.json").read_text())
    fit_s, pred_s = time.perf_counter() - t0, 0.0
    log.info("distributed fit and prediction of %d target pairs in %.1f s (%s)", len(tgt), fit_s, info["solver"])
else:
    m = model(lam, log).fit(data, src)
    fit_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    pred = m.predict(data, tgt)
    pred_s = time.perf_counter() - t0
    info = {**m.info_, "solver": m.solver_}
    log.info("fit %d pairs in %.1f s (%s), predicted %d in %.1f s", len(src), fit_s, m.solver_, len(tgt), pred_s)
ids = data.folds.index[tgt]
tgt_cell = data.folds["cell_id"].to_numpy()[tgt]
write_gctx(smk.output.predictions, GCT(data=pd.DataFrame(pred.T, index=data.genes, columns=ids),
                                       row_meta=pd.DataFrame(index=data.genes),
                                       col_meta=data.folds.loc[ids, ["pert_id", "cell_id", "stratum"]]))
summary = {"lam": lam, "n_source": int(len(src)), "n_source_cells": len(source), "n_target_pairs": int(len(tgt)),
           "n_genes": int(data.Y.shape[1]), "fit_seconds": fit_s, "predict_seconds": pred_s, "device": str(device),
           "processes": processes,
           "solver": {k: v for k, v in info.items() if isinstance(v, (int, float, str))},
           "target_mean_r2_source_only": {c: float(mean_r2(pred[tgt_cell == c], data.Y[tgt][tgt_cell == c]))
                                          for c in sorted(set(tgt_cell))}}
with open(smk.output.summary, "w") as f:
    json.dump(summary, f, indent=2)
