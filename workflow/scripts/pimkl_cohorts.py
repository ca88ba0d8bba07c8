"""Snakemake entry: read every cohort of the PIMKL source (as Algorithm S1
does) and write their counts: one row per (cohort, count), long format."""

import pandas as pd

from biokernels.logs import rule_logger
from biokernels.studies.pimkl.protocol import load_cohort

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
rows = []
for cohort, spec in smk.params.specs.items():
    X, y, counts = load_cohort(spec, collapse=smk.params.collapse, name=cohort)
    scalars = {k: int(v) for k, v in counts.items() if k != "cna"}
    scalars.update({"samples_out": int(X.shape[0]), "genes_out": int(X.shape[1]),
                    "positive_out": int(y.sum()), "negative_out": int((y == 0).sum())})
    log.info("cohort %s (%s): %s", cohort, spec.get("format"), scalars)
    rows += [{"cohort": cohort, "format": spec.get("format"), "count": k, "value": v} for k, v in scalars.items()]
pd.DataFrame(rows, columns=["cohort", "format", "count", "value"]).to_csv(smk.output[0], sep="\t", index=False)
