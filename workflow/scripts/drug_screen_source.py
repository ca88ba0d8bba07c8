"""Snakemake entry (GPU-tagged): NTK source model, ridge chosen on a random
source subset, predictions for every target pair
(biokernels.studies.drug_screen.source)."""

import json
from pathlib import Path

from biokernels.device import log_device
from biokernels.io.gctx import write_gctx
from biokernels.logs import rule_logger
from biokernels.studies.drug_screen.protocol import load_screen
from biokernels.studies.drug_screen.source import (SCREEN_INPUTS, fit_source, predictions_gct, role_positions,
                                                   select_source_ridge, source_summary)

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
device = log_device(smk.params.device, log)
cfg, seed = smk.params.cfg, smk.params.seed
inputs = {k: smk.input[k] for k in SCREEN_INPUTS}
data, source = load_screen(*inputs.values())
src, tgt = role_positions(data)
log.info("source: %d pairs over %d cell lines; target pairs to predict: %d; genes: %d", len(src), len(source),
         len(tgt), data.Y.shape[1])
lam, grid = select_source_ridge(data, src, cfg, device, seed, log)
grid.to_csv(smk.output.ridge, sep="\t", index=False)
fit = fit_source(data, src, tgt, lam, cfg, device, seed, log, inputs=inputs,
                 work=Path(smk.output.summary).parent / ".distributed", threads=smk.threads)
write_gctx(smk.output.predictions, predictions_gct(data, tgt, fit.pred))
with open(smk.output.summary, "w") as f:
    json.dump(source_summary(data, len(source), src, tgt, lam, fit, device), f, indent=2)
