"""Snakemake entry of every study's download rule: one checksummed file
(sha256 verified before it is moved into place, optional gunzip, progress in
the log every ``params.progress_s`` seconds, 30 when the rule sets none;
biokernels.io.download.fetch)."""

from biokernels.io.download import fetch
from biokernels.logs import rule_logger

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
spec = smk.params.spec
field = getattr(smk.params, "field", None)
log.info("%sfetching %s", f"{field}: " if field else "", spec["url"])
fetch(spec["url"], smk.output[0], sha256=spec["sha256"], gunzip=spec.get("gunzip", False), log=log,
      progress_every=getattr(smk.params, "progress_s", 30))
log.info("verified sha256 %s -> %s", spec["sha256"], smk.output[0])
