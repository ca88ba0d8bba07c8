"""Snakemake entry: one local file of the drug screen, its sha256 checked
when the config gives one (progress in the log), then linked, not copied,
with its origin (config key, path) beside the link."""

from biokernels.errors import InputError
from biokernels.io.download import link_local
from biokernels.logs import rule_logger, write_origin

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
sha256, key = smk.params.sha256, smk.params.config_key
log.info("%s: %s", smk.input[0], f"checking sha256 {sha256}" if sha256 else "no sha256 in the config, not checked")
try:
    link_local(smk.input[0], smk.output.link, sha256=sha256, log=log, progress_every=smk.params.progress_s)
except InputError as err:
    raise InputError(f"{key}: {err}") from err
write_origin(smk.output.link, key, smk.input[0])
log.info("linked %s -> %s", smk.output.link, smk.input[0])
