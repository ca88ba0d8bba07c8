"""Snakemake entry: the drug featurizations compared on the DepMap task (R²
at the smallest and largest target sizes, from each S9a table)."""
import os
import sys

sys.path.insert(0, os.path.join(snakemake.scriptdir, os.pardir, "src"))  # noqa: F821

import pandas as pd  # noqa: E402

from biokernels.depmap_tables import featurization_table  # noqa: E402
from biokernels.logs import rule_logger  # noqa: E402

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
tables = {f: pd.read_csv(p, sep="\t") for f, p in zip(smk.params.featurizations, smk.input)}
table = featurization_table(tables)
table.to_csv(smk.output[0], sep="\t", index=False)
log.info("featurizations compared:\n%s", table.to_string(index=False))
