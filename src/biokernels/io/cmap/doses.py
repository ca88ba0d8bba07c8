"""Doses (µM) and treatment times (hours) parsed from L1000 metadata, numeric
with a unit field or text such as ``"10 µM"`` / ``"24 h"``, and the precision
at which doses are compared (:data:`DOSE_DIGITS`)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd


MISSING_CODE = -666.0
_UNIT_TO_UM = {"um": 1.0, "µm": 1.0, "μm": 1.0, "nm": 1e-3, "mm": 1e3, "pm": 1e-6, "m": 1e6}
_UNIT_TO_H = {"h": 1.0, "hr": 1.0, "hrs": 1.0, "hour": 1.0, "hours": 1.0, "min": 1 / 60, "mins": 1 / 60,
              "minute": 1 / 60, "minutes": 1 / 60, "d": 24.0, "day": 24.0, "days": 24.0}
_NUMBER = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([^\s\d]*)\s*$")
DOSE_DIGITS = 3  # doses grouped and compared at 3 significant digits (9.99998 and 10 uM are one dose)


def _text(values) -> np.ndarray:
    """NaN/None -> "" (pandas 3 keeps NaN through astype(str))."""
    return np.array(["" if v is None or (isinstance(v, float) and np.isnan(v)) else str(v) for v in values])


def parse_dose_um(dose, unit=None) -> np.ndarray:
    """Doses in µM from L1000 metadata.

    Parameters
    ----------
    dose : array-like of str or float
        Numeric ``pert_dose`` (with ``unit``) or text ``pert_idose`` such as
        ``"10 µM"``, ``"500 nM"`` or ``"-666"``.
    unit : array-like of str, optional
        ``pert_dose_unit`` per value (µM, uM, nM, ...); ignored where the dose
        text carries its own unit; µM assumed when absent.

    Returns
    -------
    array of float, shape (n,): the dose in µM; ``-666`` stays ``-666`` (a
    negative dose, dropped by the preprocessing); ``NaN`` where the text
    cannot be parsed.
    """
    dose = _text(pd.Series(dose))
    units = _text(pd.Series(unit)) if unit is not None else np.array([""] * len(dose))
    out = np.full(len(dose), np.nan)
    for i, (d, u) in enumerate(zip(dose, units)):
        m = _NUMBER.match(d)
        if not m:
            continue
        value = float(m.group(1))
        if value == MISSING_CODE or value < 0:
            out[i] = value
            continue
        if not np.isfinite(value):
            continue  # '1e400' overflows: unparseable, not an infinite dose
        uname = (m.group(2) or u or "µM").strip().lower()
        if uname in ("", "-666", "nan"):
            uname = "µm"
        factor = _UNIT_TO_UM.get(uname)
        out[i] = value * factor if factor is not None else np.nan
    return out


def parse_time_h(time, unit=None) -> np.ndarray:
    """Treatment times in hours from L1000 metadata.

    Parameters
    ----------
    time : array-like of str or float
        Numeric ``pert_time`` (with ``unit``) or text ``pert_itime`` such as
        ``"24 h"``; ``-666`` is L1000's missing code.
    unit : array-like of str, optional
        ``pert_time_unit`` per value (h, hr, min, d, ...); ignored where the
        text carries its own unit; hours assumed when absent.

    Returns
    -------
    array of float, shape (n,), hours; ``NaN`` where the time is missing
    (``-666``, any negative value, empty) or cannot be parsed (e.g. level 5's
    ``"6 h & 4 h"`` of a signature brewed from two times, or an unknown unit).
    """
    time = _text(pd.Series(time))
    units = _text(pd.Series(unit)) if unit is not None else np.array([""] * len(time))
    out = np.full(len(time), np.nan)
    for i, (t, u) in enumerate(zip(time, units)):
        m = _NUMBER.match(t)
        if not m:
            continue
        value = float(m.group(1))
        if value < 0 or not np.isfinite(value):
            continue
        uname = (m.group(2) or u or "h").strip().lower()
        if uname in ("", "-666", "nan"):
            uname = "h"
        factor = _UNIT_TO_H.get(uname)
        out[i] = value * factor if factor is not None else np.nan
    return out


def round_dose(dose_um) -> np.ndarray:
    """Doses (µM) at ``DOSE_DIGITS`` (3) significant digits, the precision at
    which doses are grouped and compared: an instance's measured
    ``pert_dose`` (9.99998) and its nominal dose (10) are one dose. NaN
    stays NaN. Returns float array, same shape."""
    d = np.asarray(dose_um, dtype=float)
    return np.array([float(f"{v:.{DOSE_DIGITS}g}") if np.isfinite(v) else np.nan for v in d.ravel()]).reshape(d.shape)
