"""The library's error types (the one place they are defined)."""


class InputError(ValueError):
    """Bad input data: the message names the file, the row or field, and what
    was expected. A ValueError, so callers that catch ValueError still do;
    workflow scripts let it propagate, so Snakemake marks the job failed and
    removes its outputs."""
