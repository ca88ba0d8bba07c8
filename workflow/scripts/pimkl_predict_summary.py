"""Snakemake entry: one row per cohort scored by the PIMKL signature."""

import json

import pandas as pd
from sklearn.metrics import roc_auc_score

from biokernels.logs import rule_logger

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
rows = []
for cohort, scores, cov in zip(smk.params.cohorts, smk.input.scores, smk.input.coverage):
    s = pd.read_csv(scores, sep="\t")
    c = json.load(open(cov))
    auc = roc_auc_score(s["label"], s["score"]) if s["label"].nunique() == 2 else float("nan")
    rows.append({"cohort": cohort, "n_samples": len(s), "predicted_class_1": int(s["predicted_class"].sum()),
                 "signature_genes": c["signature_genes"], "measured": c["measured"],
                 "coverage": round(c["fraction"], 4), "normalization": c["normalization"], "auc": auc})
out = pd.DataFrame(rows)
out.to_csv(smk.output[0], sep="\t", index=False)
log.info("\n%s", out.to_string(index=False))
