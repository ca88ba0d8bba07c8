"""Snakemake entry: a diffusion-study data set's network, tasks and splits."""
import json
import os
import sys

sys.path.insert(0, os.path.join(snakemake.scriptdir, os.pardir, "src"))  # noqa: F821

import numpy as np  # noqa: E402

from biokernels.logs import rule_logger  # noqa: E402
from biokernels.io.protein_data import prepare_inputs  # noqa: E402

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
# One seed per data set, derived from the global seed and the name (or its source's splits_of).
rng = np.random.default_rng([smk.params.seed, *smk.params.seed_name.encode()])
edges, labels, given, summary = prepare_inputs(smk.params.source, smk.params.test_fraction, rng, log)
edges.to_csv(smk.output.edges, sep="\t", index=False)
labels.to_csv(smk.output.labels, sep="\t")
given.to_csv(smk.output.given_split, sep="\t")
with open(smk.output.summary, "w") as fh:
    json.dump(summary, fh, indent=2)
