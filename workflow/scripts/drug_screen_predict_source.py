"""Snakemake entry (GPU-tagged): the source model refitted on every source
pair predicts the target cell lines' measured and library pairs
(biokernels.studies.drug_screen.predict)."""

import json

from biokernels.device import log_device
from biokernels.io.gctx import read_gctx, write_gctx
from biokernels.logs import rule_logger
from biokernels.studies.drug_screen.predict import (library_features, read_features, source_check,
                                                    source_predictions, with_library)
from biokernels.studies.drug_screen.protocol import load_screen, target_cells
from biokernels.studies.drug_screen.source import predictions_gct, role_positions, source_model

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
device = log_device(smk.params.device, log)
data, _ = load_screen(smk.input.expression, smk.input.controls, smk.input.fingerprints, smk.input.folds)
cells = target_cells(smk.input.availability)
screen_feats = read_features(smk.input.fingerprints)
lib = read_features(smk.input.library) if smk.params.library else None
feats = library_features(screen_feats, lib, "drug_screen.predict.library_path")
ext, added = with_library(data, feats, cells)
log.info("library: %d compounds; %d unmeasured pairs on %d target cell lines", len(feats), len(added), len(cells))
lam = json.load(open(smk.input.summary))["lam"]
src, _ = role_positions(ext)
model = source_model(lam, smk.params.cfg, device, smk.params.seed, log).fit(ext, src)
log.info("source refitted on %d pairs at lambda %g (%s)", len(src), lam, model.solver_)
pred = source_predictions(ext, model, cells)
protocol = read_gctx(smk.input.predictions).data.T
check = source_check(pred, protocol)
log.info("against drug_screen_source on %d measured pairs: max |diff| %.3g (%.3g of the SD): %s", check["n_pairs"],
         check["max_abs_diff"], check["relative"], "same" if check["same"] else "DIFFERENT")
if not check["same"]:
    raise RuntimeError(f"the refitted source model differs from drug_screen_source's: {check}; rerun both rules "
                       "(drug_screen_source was fitted with other inputs or settings)")
# the measured pairs keep drug_screen_source's predictions, so that each target
# model trains on exactly the protocol's inputs; the library pairs are the refit's
pred.loc[protocol.index] = protocol.loc[protocol.index].to_numpy()
pos = ext.folds.index.get_indexer(pred.index)
write_gctx(smk.output.predictions, predictions_gct(ext, pos, pred.to_numpy()))
with open(smk.output.check, "w") as f:
    json.dump({**check, "lam": lam, "solver": model.solver_, "n_library_pairs": int(len(added))}, f, indent=2)
