"""Snakemake entry: one checksummed DepMap/PRISM release file (sha256
verified before it is moved into place; biokernels.io.download.fetch)."""

from biokernels.io.download import fetch
from biokernels.logs import rule_logger

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
spec = smk.params.spec
log.info("%s: fetching %s", smk.params.field, spec["url"])
fetch(spec["url"], smk.output[0], sha256=spec["sha256"], gunzip=spec.get("gunzip", False))
log.info("verified sha256 %s -> %s", spec["sha256"], smk.output[0])
