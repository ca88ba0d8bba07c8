"""Logging for the workflow's entry scripts."""

from __future__ import annotations

import logging
import sys
from pathlib import Path


def rule_logger(log_path: str | Path, name: str = "biokernels") -> logging.Logger:
    """Return a logger that writes to a rule's ``log:`` file and to stderr.

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
    return logger
