"""Snakemake entry: PRISM-style viability from the drug screen's hidden model
(embedded default of the DepMap study)."""
import os
import sys

sys.path.insert(0, os.path.join(snakemake.scriptdir, os.pardir, "src"))  # noqa: F821

import pandas as pd  # noqa: E402

from biokernels.logs import rule_logger  # noqa: E402
from biokernels.synth.depmap import generate_depmap  # noqa: E402

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
src = {k: v for k, v in dict(smk.params.source).items() if k not in ("type", "description", "columns", "cell_pattern")}
pert_info = pd.read_csv(smk.input.pert_info, sep="\t", dtype=str, keep_default_na=False)
info = generate_depmap(os.path.dirname(smk.input.truth), pert_info, smk.output.table, seed=smk.params.seed, **src)
log.info("generated %s: %s", smk.output.table, info)
