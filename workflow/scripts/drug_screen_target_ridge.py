"""Snakemake entry (GPU-tagged): ridge of each target model on a random
subset of one target cell line (biokernels.solvers.ridge.select_ridge_holdout;
the same split for every model)."""

import numpy as np
import pandas as pd

from biokernels.device import log_device
from biokernels.studies.drug_screen.protocol import (KERNEL_MODELS, fit_predict_target, load_target_inputs,
                                                     source_mean, transfer_features)
from biokernels.errors import InputError
from biokernels.logs import rule_logger
from biokernels.metrics import mean_r2
from biokernels.solvers.ridge import select_ridge_holdout

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
device = log_device(smk.params.device, log)
cfg = smk.params.cfg
tr_cfg = cfg["target_ridge"]
data, f_s, targets = load_target_inputs(smk.input.expression, smk.input.controls, smk.input.fingerprints,
                                        smk.input.folds, smk.input.predictions, smk.input.availability)
cell = tr_cfg.get("cell") or targets[0]
if cell not in targets:
    raise InputError(f"drug_screen.target_ridge.cell: {cell!r} is not a target cell line ({targets})")
sel = np.flatnonzero(data.folds["cell_id"].to_numpy() == cell)
mu = source_mean(data)
fs = f_s.loc[data.folds.index[sel]].to_numpy()
feats = transfer_features(data, sel, fs, mu)
Y = data.Y[sel]
tables = []
for model in KERNEL_MODELS:
    def score(lam, tr, va, model=model):
        p = fit_predict_target(model, {k: v[tr] for k, v in feats.items()}, Y[tr], fs[tr],
                               {k: v[va] for k, v in feats.items()}, fs[va], lam, cfg["kernel"], device)
        return mean_r2(p, Y[va])
    # the same seed gives every model the same holdout split
    lam, grid = select_ridge_holdout(score, len(sel), tr_cfg["grid"], subset=tr_cfg["subset"], seed=smk.params.seed,
                                     name="drug_screen.target_ridge")
    grid.insert(0, "model", model)
    tables.append(grid)
    n = min(len(sel), tr_cfg["subset"])
    log.info("%s on %s (%d of %d pairs in the holdout): lam=%g", model, cell, n, len(sel), lam)
out = pd.concat(tables, ignore_index=True)
out.insert(0, "cell_id", cell)
out.to_csv(smk.output[0], sep="\t", index=False)
