# Functions of the coverage table (coverage.smk), kept apart from its
# definitions as the linter asks.

from snakemake.iocontainers import Wildcards as _Wildcards  # noqa: E402


def coverage_target_files(inputs):
    """The files a named target stands for: its input, with input functions
    (targets have no wildcards) called on empty wildcards; None when
    one of them cannot name its files in this config (e.g. a von Mering
    table without a von Mering data set), i.e. the target cannot be built."""
    out = []
    for item in inputs:
        try:
            value = item(_Wildcards()) if callable(item) else item
        except WorkflowError:
            return None
        if isinstance(value, (list, tuple)):
            out += [str(v) for v in value]
        elif isinstance(value, dict):
            out += [str(v) for v in value.values()]
        else:
            out.append(str(value))
    return out
