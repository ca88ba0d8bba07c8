"""Snakemake entry (GPU-tagged): projection from the imputed expression to
viability against the baseline: the ridge of each model (curve=ridge), then
by 5-fold CV x seeds R² against the number of target samples (S9a,
curve=scaling) or against the number of genes the source predicts (S9b,
curve=genes) (biokernels.studies.depmap.projection)."""

from biokernels.device import log_device
from biokernels.logs import rule_logger
from biokernels.studies.depmap.projection import load_projection_data, projection_table

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
device = log_device(smk.params.device, log)
data = load_projection_data(smk.input.targets, smk.input.imputed, smk.input.controls, smk.input.features,
                            smk.input.summary)
table = projection_table(data, smk.wildcards.curve, smk.params.cfg, smk.params.seed, device,
                         ridge_tsv=smk.input.get("ridge"), log=log)
table.to_csv(smk.output[0], sep="\t", index=False)
