"""Snakemake entry: the drug featurizations compared on the DepMap task (R²
at the smallest and largest target sizes, from each featurization's S9a
curve)."""
import os
import sys

sys.path.insert(0, os.path.join(snakemake.scriptdir, os.pardir, "src"))  # noqa: F821

import pandas as pd  # noqa: E402

from biokernels.depmap_tables import featurization_table, s9a_table  # noqa: E402
from biokernels.logs import rule_logger  # noqa: E402

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
tables = {f: s9a_table(pd.read_csv(p, sep="\t"), first=smk.params.first)
          for f, p in zip(smk.params.featurizations, smk.input)}
table = featurization_table(tables)
table.to_csv(smk.output[0], sep="\t", index=False)
log.info("featurizations compared:\n%s", table.to_string(index=False))
