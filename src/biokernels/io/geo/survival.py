"""Survival fields of a series' samples: events as 0/1 (:func:`parse_event`)
and times as non-negative numbers (:func:`parse_time`), NaN when missing."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from biokernels.errors import InputError


def parse_event(values: pd.Series, lines: pd.Series | None, origin: str, field_name: str,
                event_map: Mapping[str, int] | None = None) -> pd.Series:
    """Survival events as 0/1 floats (NaN when missing).

    ``event_map`` (case-insensitive keys, e.g. ``{"yes": 1, "no": 0}``) is
    applied first; other values must be numbers equal to 0 or 1; missing
    markers (empty, ``NA``, ``null``, ``?``, ...) give NaN.

    Raises
    ------
    InputError
        A value that is neither mapped, 0/1 nor missing (file, line, sample,
        field named).
    """
    emap = {str(k).strip().lower(): v for k, v in (event_map or {}).items()}
    out = {}
    for gsm, v in values.items():
        if not isinstance(v, str) or v.strip().lower() in _SURV_NA:
            out[gsm] = np.nan
            continue
        s = v.strip().lower()
        if s in emap:
            out[gsm] = float(emap[s])
            continue
        try:
            x = float(s)
        except ValueError:
            x = None
        if x not in (0.0, 1.0):
            where = f", line {int(lines[gsm])}" if lines is not None and lines.get(gsm, 0) else ""
            raise InputError(f"{origin}{where}: sample {gsm}: {field_name}: expected 0 or 1"
                             f"{' or one of ' + str(sorted(emap)) if emap else ''}, got {v!r}")
        out[gsm] = x
    return pd.Series(out, dtype="float64").reindex(values.index)


def parse_time(values: pd.Series, lines: pd.Series | None, origin: str, field_name: str) -> pd.Series:
    """Survival times as floats (NaN when missing: empty, ``NA``, ``null``, ...).

    Raises
    ------
    InputError
        A value that is not a number or a missing marker, or a negative time
        (file, line, sample and field named).
    """
    out = {}
    for gsm, v in values.items():
        if not isinstance(v, str) or v.strip().lower() in _SURV_NA:
            out[gsm] = np.nan
            continue
        try:
            x = float(v.strip())
        except ValueError:
            x = None
        if x is None or not np.isfinite(x) or x < 0:
            where = f", line {int(lines[gsm])}" if lines is not None and lines.get(gsm, 0) else ""
            raise InputError(f"{origin}{where}: sample {gsm}: {field_name}: expected a non-negative number "
                             f"(survival time), got {v!r}")
        out[gsm] = x
    return pd.Series(out, dtype="float64").reindex(values.index)


#: Survival cells read as missing (compared lower-case).
_SURV_NA = {"", "na", "n/a", "nan", "null", "none", "?", "--", "not available", "unknown"}
