"""Snakemake entry: one checksummed GEO download (sha256 verified, atomic)."""
import os
import sys

sys.path.insert(0, os.path.join(snakemake.scriptdir, os.pardir, "src"))  # noqa: F821

from biokernels.io.download import fetch  # noqa: E402
from biokernels.logs import rule_logger  # noqa: E402

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
spec = smk.params.spec
log.info("fetching %s", spec["url"])
fetch(spec["url"], smk.output[0], sha256=spec["sha256"], gunzip=spec.get("gunzip", False))
log.info("verified sha256 %s -> %s", spec["sha256"], smk.output[0])
