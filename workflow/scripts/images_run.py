"""Snakemake entry: one experiment of the images study for one kernel
(params.experiment: projection, classes or translation); each output named
like a key of the run's result is written, rows as TSV, a record as JSON."""

import json

import pandas as pd

from biokernels.logs import rule_logger
from biokernels.studies.images.run import run_classes, run_projection, run_translation

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
run = {"projection": run_projection, "classes": run_classes, "translation": run_translation}[smk.params.experiment]
out = run(smk.params.cfg, smk.wildcards.kernel, smk.params.seed, log.info, smk.params.device)
out = out if isinstance(out, dict) else {"fig2c": out}
for key, path in smk.output.items():
    if path.endswith(".json"):
        with open(path, "w") as fh:
            json.dump(out[key], fh, indent=1)
    else:
        pd.DataFrame(out[key]).to_csv(path, sep="\t", index=False)
