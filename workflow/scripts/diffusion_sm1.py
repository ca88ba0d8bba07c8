"""Snakemake entry: SM1 (Lanckriet et al.'s QCQP) on the given split, with the
C that the split's inner CV chose (skipped, logged, where the config says)."""

import pandas as pd

from biokernels.device import log_device
from biokernels.logs import rule_logger
from biokernels.studies.diffusion.data import load_eigens
from biokernels.studies.diffusion.protocol import run_sm1

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
device = log_device(smk.params.device, log)
eigens, labels, train_mask = load_eigens(list(smk.input.eigen), smk.input.labels, smk.input.splits)
roc, weights, times = run_sm1(smk.params.cfg, eigens, labels, train_mask, pd.read_csv(smk.input.scale, sep="\t"),
                              pd.read_csv(smk.input.cv, sep="\t"), device, log, source=smk.input.scale)
roc.to_csv(smk.output.roc, sep="\t", index=False)
weights.to_csv(smk.output.weights, sep="\t", index=False)
times.to_csv(smk.output.times, sep="\t", index=False)
