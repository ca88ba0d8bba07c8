"""Snakemake entry (GPU-tagged): new function predictions of one diffusion
data set, trained on every annotated protein."""

from biokernels.device import log_device
from biokernels.logs import rule_logger
from biokernels.studies.diffusion.data import load_eigens
from biokernels.studies.diffusion.predict import predict_functions

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
device = log_device(smk.params.device, log)
# the split file only fixes the protein order: the prediction trains on every annotated protein
eigens, labels, _ = load_eigens(list(smk.input.eigen), smk.input.labels, smk.input.splits)
pred = predict_functions(smk.params.cfg, eigens, labels, smk.params.seed, formulation=smk.params.formulation,
                         top_k=smk.params.top_k, device=device, log=log, n_jobs=smk.threads)
pred.scores.to_csv(smk.output.scores, sep="\t", index_label="protein", float_format="%.6g")
pred.probabilities.to_csv(smk.output.probabilities, sep="\t", index_label="protein", float_format="%.6g")
pred.top_k.to_csv(smk.output.top_k, sep="\t", index=False, float_format="%.6g")
pred.functions.to_csv(smk.output.functions, sep="\t", index=False, float_format="%.6g")
