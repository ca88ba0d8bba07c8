"""Snakemake entry: one row per (target cell line, stratum) of the virtual
screen: pairs imputed, CV R2 and the intervals' held-out coverage."""

import json

import pandas as pd

from biokernels.logs import rule_logger

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
cal = pd.concat([pd.read_csv(p, sep="\t") for p in smk.input.calibration], ignore_index=True)
tanimoto = pd.concat([pd.read_csv(p, sep="\t") for p in smk.input.compounds], ignore_index=True)
med = tanimoto.groupby(["cell_id", "stratum"])["tanimoto"].median().rename("median_nearest_tanimoto")
out = cal.join(med, on=["cell_id", "stratum"])
cols = ["cell_id", "stratum", "model", "lam", "n_imputed", "trained_on", "n_train", "n_cv", "cv_mean_r2", "level",
        "check_fold", "n_check", "check_coverage", "median_nearest_tanimoto"]
out = out[cols]
out.to_csv(smk.output[0], sep="\t", index=False)
check = json.load(open(smk.input.check))
log.info("source refit against drug_screen_source: max |diff| %.3g over %d pairs", check["max_abs_diff"],
         check["n_pairs"])
log.info("\n%s", out.to_string(index=False))
