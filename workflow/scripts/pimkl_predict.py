"""Snakemake entry: an exported PIMKL signature applied to one cohort."""

import json

import numpy as np
import pandas as pd

from biokernels.logs import rule_logger
from biokernels.studies.pimkl.predict import load_signature
from biokernels.studies.pimkl.protocol import load_cohort

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
cfg, cohort = smk.params.cfg, smk.wildcards.cohort
pred = cfg["predict"]
sig = load_signature(smk.input.model)
X, y, _ = load_cohort(smk.params.spec, collapse=cfg["collapse"], name=cohort)
scores, cov = sig.decision_function(X, pred["normalization"], float(pred["min_coverage"]), name=cohort)
pd.DataFrame({"sample": X.index, "score": scores, "predicted_class": (scores >= 0).astype(int),
              "label": np.asarray(y).astype(int)}).to_csv(smk.output.scores, sep="\t", index=False)
with open(smk.output.coverage, "w") as fh:
    json.dump({"cohort": cohort, "n_samples": len(X), "normalization": pred["normalization"],
               **cov}, fh, indent=1)
log.info("cohort %s: %d samples scored; %d of %d signature genes measured", cohort, len(X), cov["measured"],
         cov["signature_genes"])
