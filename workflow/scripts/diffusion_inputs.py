"""Snakemake entry: a diffusion-study data set's network, tasks and splits."""
import json


import numpy as np

from biokernels.logs import rule_logger
from biokernels.studies.diffusion.data import prepare_inputs

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
