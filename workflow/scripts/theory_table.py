"""Snakemake entry: one theory-vs-simulation table of the linear setting."""

from biokernels.studies.theory import sweeps
from biokernels.logs import rule_logger

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
tid = smk.wildcards.tid
table = getattr(sweeps, tid)(**smk.params.kwargs, seed=smk.params.seed)
table.to_csv(smk.output[0], sep="\t", index=False, float_format="%.6g")
ok = table["z"].abs().le(3).sum()
log.info("%s: %d rows, %d with |z| <= 3 against the exact theory; max |rel_err| %.3g",
         tid, len(table), ok, table["rel_err"].abs().max())
