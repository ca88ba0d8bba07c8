"""Logging for the workflow's entry scripts."""

from __future__ import annotations

import json
import logging
import os
import platform
import re
import sys
from pathlib import Path

from biokernels.errors import InputError

#: Suffix of the file beside a workflow link that says where the link points
#: in the user's terms (:func:`write_origin`).
ORIGIN_SUFFIX = ".origin.json"
_PATHS = re.compile(r"[\w.~+-]*/[\w./~+-]*[\w~+-]")  # path-like tokens of a message


def rule_logger(log_path: str | Path, name: str = "biokernels") -> logging.Logger:
    """Return a logger that writes to a rule's ``log:`` file and to stderr.

    Its first line records where the job ran: the host, and the SLURM job id,
    partition and ``CUDA_VISIBLE_DEVICES`` (``<unset>`` outside SLURM / without
    a GPU), so a log shows whether a job had a GPU allocated.

    An uncaught :class:`~biokernels.errors.InputError` (bad input data)
    ends the job with its message alone, on one line in the log and on
    stderr, the links it names given as the user's file and config key
    (:func:`name_origins`), and no traceback; any other uncaught exception
    is written with its traceback, once, to the log and stderr. Python
    then exits with status 1, so Snakemake marks the job failed, removes its
    outputs and names the log.

    Parameters
    ----------
    log_path : path
        The rule's log file; its folder is created.
    name : str
        Logger name.

    Returns
    -------
    logging.Logger at level INFO.
    """
    Path(log_path).parent.mkdir(parents=True, exist_ok=True)
    logger = logging.getLogger(name)
    logger.handlers.clear()
    logger.setLevel(logging.INFO)
    fmt = logging.Formatter("%(asctime)s %(levelname)s %(message)s")
    for handler in (logging.FileHandler(log_path, mode="w"), logging.StreamHandler(sys.stderr)):
        handler.setFormatter(fmt)
        logger.addHandler(handler)

    def _excepthook(exc_type, exc, tb):
        if issubclass(exc_type, InputError):
            logger.error("%s", name_origins(str(exc)))
        else:
            logger.error("uncaught exception", exc_info=(exc_type, exc, tb))

    sys.excepthook = _excepthook
    env = {k: os.environ.get(k, "<unset>") for k in ("SLURM_JOB_ID", "SLURM_JOB_PARTITION",
                                                        "CUDA_VISIBLE_DEVICES")}
    logger.info("job environment: host=%s %s", platform.node(),
                " ".join(f"{k}={v}" for k, v in env.items()))
    return logger


def write_origin(link: str | Path, config_key: str, path: str | Path) -> Path:
    """Record beside a workflow link (``<link>.origin.json``) the config key
    and the path, as the user wrote it, of the file it links, for
    :func:`name_origins`. Returns the record's path."""
    out = Path(f"{link}{ORIGIN_SUFFIX}")
    out.write_text(json.dumps({"config_key": config_key, "path": str(path)}) + "\n")
    return out


def name_origins(message: str) -> str:
    """``message`` with every path in it that has an origin record
    (:func:`write_origin`; e.g. ``resources/drug_screen/x/local/gctx``)
    replaced by ``<user's path> (<config key>)``; other text unchanged."""
    def user_terms(match: re.Match) -> str:
        record = Path(f"{match.group(0)}{ORIGIN_SUFFIX}")
        if not record.is_file():
            return match.group(0)
        origin = json.loads(record.read_text())
        return f"{origin['path']} ({origin['config_key']})"

    return _PATHS.sub(user_terms, message)


def run_logged(cmd: list[str], logger: logging.Logger, env: dict | None = None) -> None:
    """Run ``cmd``, writing each line of its output (stdout and stderr,
    merged) to ``logger`` as it comes, so a long child process (a distributed
    solve) shows progress in the rule's log.

    Parameters
    ----------
    cmd : argv list
    logger : logging.Logger
    env : environment of the child (default: this process's)

    Raises
    ------
    RuntimeError
        The child exited with a nonzero status (the message names the
        command and the status; its last lines are in the log above).
    OSError
        The program could not be started.
    """
    import subprocess

    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                          bufsize=1) as proc:
        for line in proc.stdout:
            logger.info("| %s", line.rstrip("\n"))
        status = proc.wait()
    if status != 0:
        raise RuntimeError(f"{cmd[0]} ... exited with status {status}: {' '.join(cmd)} (its output is in the log "
                           f"above)")
