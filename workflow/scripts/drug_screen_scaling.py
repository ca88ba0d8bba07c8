"""Snakemake entry (GPU-tagged): metrics against the number of target
training samples on one target cell line
(biokernels.studies.drug_screen.scaling)."""

from biokernels.device import log_device
from biokernels.logs import rule_logger
from biokernels.studies.drug_screen.protocol import load_target_inputs, source_mean
from biokernels.studies.drug_screen.scaling import scaling_target
from biokernels.studies.drug_screen.tables import chosen_ridges

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
device = log_device(smk.params.device, log)
cfg = smk.params.cfg
data, f_s, targets = load_target_inputs(smk.input.expression, smk.input.controls, smk.input.fingerprints,
                                        smk.input.folds, smk.input.predictions, smk.input.availability)
cell = targets[int(smk.wildcards.rank) - 1]
out = scaling_target(data, f_s, source_mean(data), targets, cell, chosen_ridges(smk.input.ridge), cfg["scaling"],
                     smk.params.seed, cfg["kernel"], device, log)
out.to_csv(smk.output[0], sep="\t", index=False)
