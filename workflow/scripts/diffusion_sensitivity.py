"""Snakemake entry (GPU-tagged): sensitivity of the diffusion study to C,
lam and the beta grid (its end and its step), on the given split."""

from biokernels.device import log_device
import pandas as pd

from biokernels.studies.diffusion.data import load_eigens
from biokernels.logs import rule_logger
from biokernels.studies.diffusion.protocol import annotated_mask, chosen_scale, sensitivity_table

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
cfg = smk.params.cfg
device = log_device(smk.params.device, log)
eigens, labels, train_mask = load_eigens(list(smk.input.eigen), smk.input.labels, smk.input.splits)
lap, step = chosen_scale(pd.read_csv(smk.input.scale, sep="\t"), smk.input.scale)
d, P = eigens[lap]
log.info("kernel scale of split 00: %s Laplacian, beta step %g", lap, step)
eval_mask = annotated_mask(labels) if cfg["unannotated"] == "exclude" else None
table = sensitivity_table(P, d, labels, train_mask, step, cfg["n_kernels"],
                          cfg["lam"], cfg["svm_C_grid"], cfg["inner_folds"], cfg["sensitivity"],
                          smk.params.seed, device, cfg["solver"], log, eval_mask)
table.to_csv(smk.output[0], sep="\t", index=False, float_format="%.6g")
