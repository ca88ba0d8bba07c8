"""Picking one number from a result table: row filters (values, lists,
numeric ranges), sorting, reducers and groups."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from biokernels.report.kinds import SelectorError


def _describe(sel: Mapping) -> str:
    parts = [f"{k}={v!r}" for k, v in (sel.get("select") or {}).items()]
    return f"select {{{', '.join(parts)}}} column {sel.get('column')!r} reduce {sel.get('reduce', 'single')!r}"


_RANGE_OPS = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal}


def _match(col: pd.Series, want) -> pd.Series:
    if isinstance(want, Mapping):     # a range, e.g. {"<": 2000}: every bound must hold
        num = pd.to_numeric(col, errors="coerce").to_numpy(dtype=float)
        ok = ~np.isnan(num)
        for op, bound in want.items():
            ok &= _RANGE_OPS[op](num, float(bound))
        return pd.Series(ok, index=col.index)
    wants = want if isinstance(want, list) else [want]
    mask = pd.Series(False, index=col.index)
    for w in wants:
        if isinstance(w, bool) or col.dtype == bool:
            mask |= col.astype(str).str.lower() == str(w).lower()
        elif isinstance(w, (int, float)):
            num = pd.to_numeric(col, errors="coerce")
            mask |= np.isclose(num.to_numpy(dtype=float), float(w), rtol=1e-4, atol=1e-9) & num.notna().to_numpy()
        else:
            mask |= col.astype(str) == str(w)
    return mask


def _reduce(values: np.ndarray, how: str) -> float:
    v = values.astype(float)
    if how == "count":
        return float(len(v))
    if how in ("count_positive", "fraction_positive"):
        if not len(v):
            raise ValueError(f"{how} of no rows")
        pos = float(np.sum(v > 0))
        return pos if how == "count_positive" else pos / len(v)
    if how in ("single", "unique"):
        u = np.unique(v[~np.isnan(v)]) if how == "unique" else v
        if len(u) != 1:
            raise ValueError(f"{len(u)} {'distinct values' if how == 'unique' else 'rows'} where one was expected")
        return float(u[0])
    if how == "min_step":
        if len(v) < 2:
            raise ValueError("min_step needs at least two rows")
        return float(np.min(np.diff(v)))
    fn = {"min": np.nanmin, "max": np.nanmax, "mean": np.nanmean, "median": np.nanmedian,
          "max_abs": lambda x: np.nanmax(np.abs(x)), "sum": np.nansum, "first": lambda x: x[0], "last": lambda x: x[-1],
          "last_minus_first": lambda x: x[-1] - x[0], "last_minus_max": lambda x: x[-1] - np.nanmax(x)}[how]
    return float(fn(v))


def select_rows(table: pd.DataFrame, sel: Mapping, entry_id: str, table_name: str) -> pd.DataFrame:
    """The rows of ``table`` matching every filter of ``sel["select"]``;
    :class:`SelectorError` names the entry, table and selector when a column
    ``sel`` needs is missing, a filter value matches no row, or no row
    matches them all."""
    where = f"entry {entry_id!r}: table {table_name}: {_describe(sel)}"
    filters = sel.get("select") or {}
    needed = [*filters, sel["column"], *([sel["sort_by"]] if sel.get("sort_by") else []),
              *([sel["group_by"]] if sel.get("group_by") else [])]
    missing = [c for c in needed if c not in table.columns]
    if missing:
        raise SelectorError(f"{where}: no column(s) {missing} (columns: {list(table.columns)})")
    mask = pd.Series(True, index=table.index)
    for col, want in filters.items():
        m = _match(table[col], want)
        wants = want if isinstance(want, list) else [want]
        absent = [w for w in wants if not _match(table[col], w).any()] if not isinstance(want, Mapping) else (
            [] if m.any() else [want])
        if absent:
            raise SelectorError(f"{where}: no row with {col} = {absent} (values: "
                                f"{sorted(map(str, table[col].unique()))[:20]})")
        mask &= m
    rows = table[mask]
    if rows.empty:
        raise SelectorError(f"{where}: no row matches all filters")
    return rows


def select_value(table: pd.DataFrame, sel: Mapping, entry_id: str, table_name: str) -> float:
    """The number ``sel`` picks from ``table``: rows matching every filter of
    ``select`` (a value or a list of values per column; numbers matched with
    a relative tolerance), optionally sorted (``sort_by``), the ``column``'s
    values reduced (``reduce``, default ``single``: exactly one row); with
    ``group_by``, reduced per group and then over the groups
    (``group_reduce``). :class:`SelectorError` names the entry, table and
    selector when a column or row is missing."""
    rows = select_rows(table, sel, entry_id, table_name)
    where = f"entry {entry_id!r}: table {table_name}: {_describe(sel)}"
    if sel.get("sort_by"):
        rows = rows.sort_values(sel["sort_by"], kind="stable")
    how = sel.get("reduce", "single")
    try:
        if sel.get("group_by"):
            per = rows.groupby(sel["group_by"], sort=False)[sel["column"]].apply(
                lambda s: _reduce(pd.to_numeric(s, errors="coerce").to_numpy(), how))
            return _reduce(per.to_numpy(), sel.get("group_reduce", "single"))
        return _reduce(pd.to_numeric(rows[sel["column"]], errors="coerce").to_numpy(), how)
    except ValueError as err:
        raise SelectorError(f"{where}: {err}") from None


