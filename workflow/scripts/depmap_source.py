"""Snakemake entry (GPU-tagged): the CMAP source model on the cell lines not
in DepMap, and the imputed expression of every DepMap target pair."""

import json
import time

import pandas as pd

from biokernels.studies.depmap.protocol import impute_expression, load_source_inputs
from biokernels.device import log_device
from biokernels.io.gctx import GCT, write_gctx
from biokernels.logs import rule_logger

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
device = log_device(smk.params.device, log)
cfg = smk.params.cfg
inputs = load_source_inputs(smk.input.expression, smk.input.pairs, smk.input.controls, smk.input.features,
                            smk.input.targets, smk.input.counts)
expr, targets = inputs["expression"], inputs["targets"]
log.info("CMAP: %d pairs x %d genes; DepMap targets: %d pairs", len(expr), expr.shape[1], len(targets))
t0 = time.perf_counter()
imputed, info, ridge = impute_expression(
    **inputs, lam=cfg["source"]["ridge"], ridge_grid=cfg["source_ridge"]["grid"],
    ridge_subset=cfg["source_ridge"]["subset"], max_source_pairs=cfg["source"]["max_pairs"],
    kernel_params=cfg["kernel"], device=device, solver=cfg["solver"], seed=smk.params.seed, log=log)
info["seconds"] = time.perf_counter() - t0
info["device"] = str(device)
log.info("source: %d pairs over %d cell lines, lam=%g, %.1f s; imputed %d target pairs; check R2 on %d pairs "
         "CMAP also measured: %s", info["n_source"], info["n_source_cells"], info["lam"], info["seconds"],
         len(imputed), info["n_check"], info["check_r2"])
ridge.to_csv(smk.output.ridge, sep="\t", index=False)
write_gctx(smk.output.imputed, GCT(data=imputed.T, row_meta=pd.DataFrame(index=imputed.columns),
                                   col_meta=targets.loc[imputed.index, ["drug_key", "cell_id", "stratum"]]))
with open(smk.output.summary, "w") as f:
    json.dump(info, f, indent=1)
