"""Snakemake entry: PRISM-style viability from the drug screen's hidden model
(embedded default of the DepMap study)."""
import os


import pandas as pd

from biokernels.logs import rule_logger
from biokernels.synth.depmap import generate_depmap

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
src = {k: v for k, v in dict(smk.params.source).items() if k not in ("type", "description", "data", "data_reason", "columns", "cell_pattern")}
pert_info = pd.read_csv(smk.input.pert_info, sep="\t", dtype=str, keep_default_na=False)
info = generate_depmap(os.path.dirname(smk.input.truth), pert_info, smk.output.table, seed=smk.params.seed, **src)
log.info("generated %s: %s", smk.output.table, info)
