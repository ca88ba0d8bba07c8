"""Logging for the workflow's entry scripts."""

from __future__ import annotations

import logging
import os
import platform
import sys
from pathlib import Path


def rule_logger(log_path: str | Path, name: str = "biokernels") -> logging.Logger:
    """Return a logger that writes to a rule's ``log:`` file and to stderr.

    Its first line records where the job ran: the host, and the SLURM job id,
    partition and ``CUDA_VISIBLE_DEVICES`` (``<unset>`` outside SLURM / without
    a GPU), so a log shows whether a job had a GPU allocated.

    Uncaught exceptions are written to the log too (then re-raised by Python
    as usual, so Snakemake marks the job failed and removes its outputs).

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
        logger.error("uncaught exception", exc_info=(exc_type, exc, tb))
        sys.__excepthook__(exc_type, exc, tb)

    sys.excepthook = _excepthook
    env = {k: os.environ.get(k, "<unset>") for k in ("SLURM_JOB_ID", "SLURM_JOB_PARTITION",
                                                        "CUDA_VISIBLE_DEVICES")}
    logger.info("job environment: host=%s %s", platform.node(),
                " ".join(f"{k}={v}" for k, v in env.items()))
    return logger


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
