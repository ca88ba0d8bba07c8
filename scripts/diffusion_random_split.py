"""Snakemake entry: one random train/test split of a diffusion-study data set
(the stability test's splits 01, 02, ...), seeded by (seed, data set, split)."""
import os
import sys

sys.path.insert(0, os.path.join(snakemake.scriptdir, os.pardir, "src"))  # noqa: F821

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from biokernels.io.protein_data import random_split  # noqa: E402
from biokernels.logs import rule_logger  # noqa: E402

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
split = smk.wildcards.split
rng = np.random.default_rng([smk.params.seed, *smk.params.seed_name.encode(), int(split)])
proteins = pd.read_csv(smk.input.labels, sep="\t", index_col=0, usecols=[0]).index.astype(str)
table = random_split(proteins, smk.params.test_fraction, rng, name=split).to_frame()
table.to_csv(smk.output[0], sep="\t")
log.info("split %s: %d train, %d test proteins", split, (table[split] == "train").sum(), (table[split] == "test").sum())
