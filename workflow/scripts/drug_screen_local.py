"""Snakemake entry: one local file of the drug screen, its sha256 checked
when the config gives one (progress in the log), then linked, not copied."""

from biokernels.io.download import link_local
from biokernels.logs import rule_logger

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
sha256 = smk.params.sha256
log.info("%s: %s", smk.input[0], f"checking sha256 {sha256}" if sha256 else "no sha256 in the config, not checked")
link_local(smk.input[0], smk.output[0], sha256=sha256, log=log, progress_every=smk.params.progress_s)
log.info("linked %s -> %s", smk.output[0], smk.input[0])
