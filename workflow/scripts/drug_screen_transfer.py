"""Snakemake entry (GPU-tagged): 5-fold CV of the five predictors on one
target cell line."""

from biokernels.device import log_device
from biokernels.studies.drug_screen.tables import chosen_ridges
from biokernels.studies.drug_screen.protocol import cross_validate_cell, load_target_inputs, source_mean
from biokernels.logs import rule_logger

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
device = log_device(smk.params.device, log)
data, f_s, targets = load_target_inputs(smk.input.expression, smk.input.controls, smk.input.fingerprints,
                                        smk.input.folds, smk.input.predictions, smk.input.availability)
cell = targets[int(smk.wildcards.rank) - 1]
lams = chosen_ridges(smk.input.ridge)
log.info("target %s (rank %s); ridges %s", cell, smk.wildcards.rank, lams)
metrics, samples = cross_validate_cell(data, f_s, source_mean(data), cell, lams, smk.params.cfg["kernel"], device,
                                       log=log)
metrics.to_csv(smk.output.metrics, sep="\t", index=False)
samples.to_csv(smk.output.samples, sep="\t", index=False)
for _, r in metrics.iterrows():
    log.info("%s %-7s %-22s R2 %.3f cos %.3f r (paper, uncentred) %.3f r (centred) %.3f (n=%d)", cell,
             r["stratum"], r["model"], r["r2"], r["cosine"], r["pearson_r_paper"], r["pearson_r_centred"], r["n"])
