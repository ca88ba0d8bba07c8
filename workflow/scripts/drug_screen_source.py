"""Snakemake entry (GPU-tagged): NTK source model, ridge chosen on a random
source subset (biokernels.solvers.ridge.select_ridge_holdout), predictions
for every target pair."""

import json
import time

import numpy as np
import pandas as pd

from biokernels.device import log_device
from biokernels.studies.drug_screen.protocol import SourceModel, load_screen
from biokernels.io.gctx import GCT, write_gctx
from biokernels.logs import rule_logger
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


def model(lam):
    return SourceModel(lam, kernel_params=cfg["kernel"], device=device, solver=cfg["solver"])


def score(lam, tr, va):
    """Validation mean R² of the source model fitted on the holdout's training pairs."""
    r2 = mean_r2(model(lam).fit(data, src[tr]).predict(data, src[va]), data.Y[src[va]])
    log.info("ridge lam=%g: validation mean R2 %.4f (%d train, %d validation pairs)", lam, r2, len(tr), len(va))
    return r2


rs = cfg["source_ridge"]
lam, grid = select_ridge_holdout(score, len(src), rs["grid"], subset=rs["subset"], seed=smk.params.seed,
                                 name="drug_screen.source_ridge")
grid.to_csv(smk.output.ridge, sep="\t", index=False)
t0 = time.perf_counter()
m = model(lam).fit(data, src)
fit_s = time.perf_counter() - t0
t0 = time.perf_counter()
pred = m.predict(data, tgt)
pred_s = time.perf_counter() - t0
log.info("fit %d pairs in %.1f s (%s), predicted %d in %.1f s", len(src), fit_s, m.info_.get("method"), len(tgt),
         pred_s)
ids = data.folds.index[tgt]
tgt_cell = data.folds["cell_id"].to_numpy()[tgt]
write_gctx(smk.output.predictions, GCT(data=pd.DataFrame(pred.T, index=data.genes, columns=ids),
                                       row_meta=pd.DataFrame(index=data.genes),
                                       col_meta=data.folds.loc[ids, ["pert_id", "cell_id", "stratum"]]))
summary = {"lam": lam, "n_source": int(len(src)), "n_source_cells": len(source), "n_target_pairs": int(len(tgt)),
           "n_genes": int(data.Y.shape[1]), "fit_seconds": fit_s, "predict_seconds": pred_s, "device": str(device),
           "solver": {k: v for k, v in m.info_.items() if isinstance(v, (int, float, str))},
           "target_mean_r2_source_only": {c: float(mean_r2(pred[tgt_cell == c], data.Y[tgt][tgt_cell == c]))
                                          for c in sorted(set(tgt_cell))}}
with open(smk.output.summary, "w") as f:
    json.dump(summary, f, indent=2)
