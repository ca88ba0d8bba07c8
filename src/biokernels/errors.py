"""The library's error types (the one place they are defined)."""


class InputError(ValueError):
    """Bad input data: the message names the file, the row or field, and what
    was expected. A ValueError, so callers that catch ValueError still do;
    workflow scripts let it propagate: the hook of
    :func:`biokernels.logs.rule_logger` writes its message alone, one line
    (workflow links named by the user's file and config key), to the job's
    log and stderr, and the job exits with status 1, so Snakemake marks it
    failed and removes its outputs."""
