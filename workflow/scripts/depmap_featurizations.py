"""Snakemake entry: the drug featurizations compared on the DepMap task (R²
at the smallest and largest target sizes, from each featurization's S9a
curve)."""

import pandas as pd

from biokernels.studies.depmap.tables import featurization_table, s9a_table
from biokernels.logs import rule_logger

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
tables = {f: s9a_table(pd.read_csv(p, sep="\t"), first=smk.params.first)
          for f, p in zip(smk.params.featurizations, smk.input)}
table = featurization_table(tables)
table.to_csv(smk.output[0], sep="\t", index=False)
log.info("featurizations compared:\n%s", table.to_string(index=False))
