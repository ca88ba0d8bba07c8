"""Snakemake entry (GPU-tagged): sensitivity of the diffusion study to C,
lam and the beta grid (its end and its step), on the given split."""

import pandas as pd

from biokernels.device import log_device
from biokernels.logs import rule_logger
from biokernels.studies.diffusion.data import load_eigens
from biokernels.studies.diffusion.protocol import run_sensitivity

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
device = log_device(smk.params.device, log)
eigens, labels, train_mask = load_eigens(list(smk.input.eigen), smk.input.labels, smk.input.splits)
table = run_sensitivity(smk.params.cfg, eigens, labels, train_mask, pd.read_csv(smk.input.scale, sep="\t"),
                        smk.params.seed, device, log, source=smk.input.scale, n_jobs=smk.threads)
table.to_csv(smk.output[0], sep="\t", index=False, float_format="%.6g")
