"""Snakemake entry: one random train/test split of a diffusion-study data set
(the stability test's splits 01, 02, ...), seeded by (seed, data set, split)."""

import numpy as np
import pandas as pd

from biokernels.studies.diffusion.data import random_split
from biokernels.logs import rule_logger

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
split = smk.wildcards.split
rng = np.random.default_rng([smk.params.seed, *smk.params.seed_name.encode(), int(split)])
proteins = pd.read_csv(smk.input.labels, sep="\t", index_col=0, usecols=[0]).index.astype(str)
table = random_split(proteins, smk.params.test_fraction, rng, name=split).to_frame()
table.to_csv(smk.output[0], sep="\t")
log.info("split %s: %d train, %d test proteins", split, (table[split] == "train").sum(), (table[split] == "test").sum())
