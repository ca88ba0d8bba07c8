"""The sample characteristics of a series matrix
(``!Sample_characteristics_ch1`` cells ``"key: value"``): as a samples x
keys table, or one characteristic per sample by key or regular
expression."""

from __future__ import annotations

import re

import pandas as pd

from biokernels.errors import InputError
from biokernels.io.geo.series_matrix import SeriesMatrix


def _split_characteristic(cell: str) -> tuple[str | None, str]:
    """``"t.rfs: 1826"`` -> ``("t.rfs", "1826")``; a cell without a colon
    -> ``(None, cell)``. The key ends at the first ``": "`` (GEO joins the
    tag and the value so), else at the first ``":"``."""
    key, sep, value = cell.partition(": ")
    if not sep:
        key, sep, value = cell.partition(":")
    if not sep:
        return None, cell.strip()
    return key.strip(), value.strip()


def characteristics_table(sm: SeriesMatrix) -> pd.DataFrame:
    """The characteristics as a samples x keys table of strings (NaN where a
    sample lacks a key); cells without ``key:`` are under key ``""``.

    Raises
    ------
    InputError
        A sample with two different values for one key (file, lines, sample,
        key and values named).
    """
    values: dict[str, dict[str, str]] = {}
    where: dict[tuple[str, str], int] = {}
    for n, cells in sm.characteristics:
        for gsm, cell in zip(sm.sample_ids, cells):
            if not cell:
                continue
            key, value = _split_characteristic(cell)
            key = key or ""
            old = values.setdefault(key, {}).get(gsm)
            if old is not None and old != value:
                raise InputError(f"{sm.path}, lines {where[(gsm, key)]} and {n}: sample {gsm}: characteristic "
                                 f"{key!r} has two values {old!r} and {value!r}")
            values[key][gsm] = value
            where[(gsm, key)] = n
    return pd.DataFrame(values, index=pd.Index(sm.sample_ids)).reindex(columns=sorted(values))


def characteristic_values(sm: SeriesMatrix, key: str | None = None, regex: str | None = None,
                          field_name: str = "key") -> tuple[pd.Series, pd.Series]:
    """One characteristic per sample, by key or by regular expression.

    Parameters
    ----------
    sm : SeriesMatrix
    key : str, optional
        The characteristic's tag (``"t.rfs"``, ``"time rfs"``), compared
        with each cell's tag case-insensitively, surrounding spaces ignored.
    regex : str, optional
        Instead of ``key``: a regular expression with one capturing group,
        searched in every cell (``re.search``); the group is the value, e.g.
        ``'^DFS TIME \\(yrs\\):\\s*(\\S+)'``.
    field_name : str
        The config field that gave ``key``/``regex``, for messages.

    Returns
    -------
    values : Series of str (NaN for samples without the characteristic), indexed by GSM
    lines : Series of int (line number of each value; 0 where absent)

    Raises
    ------
    InputError
        Neither or both of ``key``/``regex``; a regex that does not compile
        or lacks exactly one group; a sample with two different values; no
        sample with the characteristic (the keys found are listed).
    """
    if (key is None) == (regex is None):
        raise InputError(f"{sm.path}: {field_name}: give a characteristic key or a regular expression (one of the two)")
    rx = None
    if regex is not None:
        try:
            rx = re.compile(regex)
        except re.error as err:
            raise InputError(f"{field_name}: {regex!r} is not a regular expression ({err})") from None
        if rx.groups != 1:
            raise InputError(f"{field_name}: {regex!r} has {rx.groups} capturing group(s); expected exactly one "
                             "(the value)")
    want = key.strip().lower() if key is not None else None
    values: dict[str, str] = {}
    lines: dict[str, int] = {}
    keys_seen: set[str] = set()
    for n, cells in sm.characteristics:
        for gsm, cell in zip(sm.sample_ids, cells):
            if not cell:
                continue
            k, v = _split_characteristic(cell)
            if k is not None:
                keys_seen.add(k)
            if rx is not None:
                m = rx.search(cell)
                if m is None:
                    continue
                v = (m.group(1) or "").strip()
            elif k is None or k.lower() != want:
                continue
            if gsm in values and values[gsm] != v:
                raise InputError(f"{sm.path}, lines {lines[gsm]} and {n}: sample {gsm}: {field_name} "
                                 f"{key or regex!r} matches two values {values[gsm]!r} and {v!r}")
            values[gsm] = v
            lines[gsm] = n
    if not values:
        raise InputError(f"{sm.path}: {field_name}: no sample has a !Sample_characteristics_ch1 "
                         f"{'with key ' + repr(key) if key is not None else 'matching ' + repr(regex)}; the keys "
                         f"found are {sorted(keys_seen)[:40]}")
    idx = pd.Index(sm.sample_ids)
    return (pd.Series(values, dtype=object).reindex(idx),
            pd.Series(lines, dtype="int64").reindex(idx).fillna(0).astype("int64"))
