"""Snakemake entry (GPU-tagged): the library imputed on one target cell line,
with intervals, their held-out coverage and each compound's nearest measured
compound (biokernels.studies.drug_screen.predict)."""

import pandas as pd

from biokernels.device import log_device
from biokernels.errors import InputError
from biokernels.features.similarity import nearest_compounds
from biokernels.io.gctx import read_gctx, write_gctx
from biokernels.logs import rule_logger
from biokernels.studies.drug_screen.predict import (compound_table, library_features, predict_cell, profiles_gct,
                                                    read_features, with_library)
from biokernels.studies.drug_screen.protocol import load_screen, target_cells
from biokernels.studies.drug_screen.tables import chosen_ridges

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
device = log_device(smk.params.device, log)
cfg = smk.params.cfg
data, _ = load_screen(smk.input.expression, smk.input.controls, smk.input.fingerprints, smk.input.folds)
cells = target_cells(smk.input.availability)
cell = cells[int(smk.wildcards.rank) - 1]
lib = read_features(smk.input.library) if smk.params.library else None
feats = library_features(read_features(smk.input.fingerprints), lib, "drug_screen.predict.library_path")
ext, _ = with_library(data, feats, [cell])
f_s = read_gctx(smk.input.source).data.T
model = cfg["model"]
lams = chosen_ridges(smk.input.ridge)
if model not in lams:
    raise InputError(f"drug_screen.predict.model: {model!r} has no chosen ridge in {smk.input.ridge} "
                     f"(it has {sorted(lams)})")
log.info("target %s (rank %s): %s at lambda %g, intervals at level %g", cell, smk.wildcards.rank, model,
         lams[model], cfg["interval_level"])
pred = predict_cell(ext, f_s, cell, model, lams[model], cfg["interval_level"], cfg["kernel"], device)
measured = data.folds.loc[(data.folds["cell_id"] == cell) & (data.folds["role"] == "target"), "pert_id"].unique()
screen_bits = read_features(smk.input.screen_bits)
library_bits = read_features(smk.input.library_bits)
near = nearest_compounds(library_bits.loc[pred.pairs["pert_id"].unique()], screen_bits.loc[measured])
table = compound_table(pred, near)
cal = pred.calibration.assign(cell_id=cell, model=model, lam=lams[model], n_imputed=[
    int((pred.pairs["stratum"] == s).sum()) for s in pred.calibration["stratum"]])
genes = pd.read_csv(smk.input.genes, sep="\t", dtype=str).set_index("gene_id")
write_gctx(smk.output.profiles, profiles_gct(pred, table, genes))
table.to_csv(smk.output.compounds, sep="\t", index=False)
cal.to_csv(smk.output.calibration, sep="\t", index=False)
for _, r in cal.iterrows():
    log.info("%s %-6s imputed %d (trained on %s: %d pairs); CV mean R2 %.3f; held-out fold %d coverage %.3f "
             "(n=%d, nominal %.2f)", cell, r["stratum"], r["n_imputed"], r["trained_on"], r["n_train"],
             r["cv_mean_r2"], r["check_fold"], r["check_coverage"], r["n_check"], r["level"])
