"""Snakemake entry: generate the demo's planted regression task."""
import os
import sys

sys.path.insert(0, os.path.join(snakemake.scriptdir, os.pardir, "src"))  # noqa: F821

import numpy as np  # noqa: E402

from biokernels.logs import rule_logger  # noqa: E402
from biokernels.synth.demo import planted_regression  # noqa: E402

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
cfg = smk.params.cfg
data = planted_regression(cfg["n_train"], cfg["n_test"], cfg["n_features"], cfg["noise"],
                          np.random.default_rng(smk.params.seed))
np.savez(smk.output[0], **data)
log.info("wrote %s: %s", smk.output[0], {k: v.shape for k, v in data.items()})
