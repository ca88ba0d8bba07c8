"""Snakemake entry (GPU-tagged): viability of every unmeasured DepMap pair,
with its interval and nearest measured compound
(biokernels.studies.depmap.predict)."""

import pandas as pd

from biokernels.device import log_device
from biokernels.features.similarity import nearest_compounds
from biokernels.logs import rule_logger
from biokernels.studies.depmap.predict import predict_viability, unmeasured_pairs
from biokernels.studies.depmap.projection import chosen_ridges, load_projection_data

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
device = log_device(smk.params.device, log)
cfg = smk.params.cfg
targets = pd.read_csv(smk.input.targets, sep="\t", index_col=0, dtype={"drug_key": str, "cell_id": str})
new = unmeasured_pairs(targets)
data = load_projection_data(smk.input.targets, smk.input.imputed, smk.input.controls, smk.input.features,
                            smk.input.summary, extra_pairs=new.index)
model, lam = cfg["model"], chosen_ridges(smk.input.ridge)[cfg["model"]]
log.info("%d unmeasured pairs; %s at lambda %g, intervals at level %g", len(new), model, lam, cfg["interval_level"])
pred, cal = predict_viability(data, new, model, lam, cfg["interval_level"], cfg, device)
bits = pd.concat([pd.read_csv(p, sep="\t", index_col=0) for p in smk.input.bits])
bits.index = bits.index.astype(str)
bits = bits[~bits.index.duplicated()]
near = []
for cell, rows in pred.groupby("cell_id"):
    measured = data.targets.loc[data.targets["cell_id"] == cell, "drug_key"].unique()
    near.append(nearest_compounds(bits.loc[rows["drug_key"].unique()], bits.loc[measured]).assign(cell_id=cell))
near = pd.concat(near).rename_axis("drug_key").reset_index() if near else pd.DataFrame(
    columns=["drug_key", "nearest_id", "tanimoto", "cell_id"])
out = pred.reset_index().merge(near, on=["drug_key", "cell_id"], how="left").set_index(pred.index.name or "pair_id")
out.insert(3, "model", model)
out.to_csv(smk.output.viability, sep="\t")
cal.assign(model=model, lam=lam).to_csv(smk.output.calibration, sep="\t", index=False)
for _, r in cal.iterrows():
    log.info("%-6s trained on %d, predicted %d; CV R2 %.3f; half-width %.3g; held-out fold %d coverage %.3f (n=%d, "
             "nominal %.2f)", r["stratum"], r["n_train"], r["n_predicted"], r["cv_r2"], r["half_width"],
             r["check_fold"], r["check_coverage"], r["n_check"], r["level"])
