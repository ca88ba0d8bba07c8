"""Snakemake entry: one checksummed download of a PIMKL input (a GEO series
matrix or platform table, a GMT, a network): sha256 verified before the file
is moved into place (biokernels.io.download.fetch)."""

from biokernels.io.download import fetch
from biokernels.logs import rule_logger

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
spec = smk.params.spec
log.info("fetching %s", spec["url"])
fetch(spec["url"], smk.output[0], sha256=spec["sha256"], gunzip=spec.get("gunzip", False))
log.info("verified sha256 %s -> %s", spec["sha256"], smk.output[0])
