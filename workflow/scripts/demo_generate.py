"""Snakemake entry: generate the demo's planted regression task."""

import numpy as np

from biokernels.logs import rule_logger
from biokernels.synth.demo import planted_regression

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
cfg = smk.params.cfg
data = planted_regression(cfg["n_train"], cfg["n_test"], cfg["n_features"], cfg["noise"],
                          np.random.default_rng(smk.params.seed))
np.savez(smk.output[0], **data)
log.info("wrote %s: %s", smk.output[0], {k: v.shape for k, v in data.items()})
