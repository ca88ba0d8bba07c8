"""Snakemake entry: one checksummed download of the drug screen's files
(sha256 verified, atomic; progress in the log)."""

from biokernels.io.download import fetch
from biokernels.logs import rule_logger

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
spec = smk.params.spec
log.info("fetching %s", spec["url"])
fetch(spec["url"], smk.output[0], sha256=spec["sha256"], gunzip=spec.get("gunzip", False), log=log,
      progress_every=smk.params.progress_s)
log.info("verified sha256 %s -> %s", spec["sha256"], smk.output[0])
