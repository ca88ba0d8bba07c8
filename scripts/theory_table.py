"""Snakemake entry: one theory-vs-simulation table of the linear setting."""
import os
import sys

sys.path.insert(0, os.path.join(snakemake.scriptdir, os.pardir, "src"))  # noqa: F821

from biokernels import theory  # noqa: E402
from biokernels.logs import rule_logger  # noqa: E402

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
tid = smk.wildcards.tid
table = getattr(theory, tid)(**smk.params.kwargs, seed=smk.params.seed)
table.to_csv(smk.output[0], sep="\t", index=False, float_format="%.6g")
ok = table["z"].abs().le(3).sum()
log.info("%s: %d rows, %d with |z| <= 3 against the exact theory; max |rel_err| %.3g",
         tid, len(table), ok, table["rel_err"].abs().max())
