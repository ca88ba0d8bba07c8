"""The GCTX layout's names, the :class:`GCT` container (a matrix with row and
column metadata) and the helpers the readers and writers share: decoding
byte strings, CMap's ``-666`` null, and the checks of a GCT before it is
written. The layout is described in ``docs/io_readers_notes.md``."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from biokernels.errors import InputError


GCTX_VERSION = b"GCTX1.0"
MATRIX = "0/DATA/0/matrix"
ROW_META = "0/META/ROW"
COL_META = "0/META/COL"
META_NULL = "-666"
"""CMap's null for metadata (read as missing, written for missing strings)."""

_AXES = {"row": (ROW_META, "rid"), "col": (COL_META, "cid")}
# Text tokens read as missing in GCT metadata / data (cmapPy parse_gct's list).
_TEXT_NULLS = frozenset({"", "#N/A", "N/A", "NA", "#NA", "NULL", "NaN", "-NaN", "nan", "-nan",
                         "#N/A!", "na", "None", "#VALUE!"})


@dataclass
class GCT:
    """A matrix with row and column metadata (cmapPy's GCToo, without the
    multi-index).

    Attributes
    ----------
    data : DataFrame, shape (n_rows, n_cols), or None
        Values; index = row ids (genes, ``rid``), columns = column ids
        (samples, ``cid``). None when only metadata were read.
    row_meta : DataFrame, shape (n_rows, n_row_fields)
        Index = row ids, in the order of ``data.index``.
    col_meta : DataFrame, shape (n_cols, n_col_fields)
        Index = column ids, in the order of ``data.columns``.
    """

    data: pd.DataFrame | None
    row_meta: pd.DataFrame
    col_meta: pd.DataFrame


def _decode_value(value):
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return value.decode("latin-1")
    return value


def _decode(values: np.ndarray) -> np.ndarray:
    """Byte strings -> str (UTF-8, else Latin-1 per value); numbers unchanged."""
    if values.dtype.kind == "S":
        try:
            return np.char.decode(values, "utf-8").astype(object)
        except UnicodeDecodeError:
            pass
    if values.dtype.kind in "SO":
        return np.array([_decode_value(v) for v in values], dtype=object)
    return values


def _ids_as_str(values: np.ndarray) -> np.ndarray:
    values = _decode(values)
    return np.array([v if isinstance(v, str) else str(v) for v in values], dtype=object)


def _duplicates(index: pd.Index) -> list:
    return list(index[index.duplicated()].unique())


def _few(items: Sequence, k: int = 5) -> str:
    shown = ", ".join(repr(x) for x in list(items)[:k])
    return f"{shown}{', ...' if len(items) > k else ''}"


def _null_666(df: pd.DataFrame) -> pd.DataFrame:
    """CMap's -666 metadata null -> NaN (numbers and strings)."""
    out = {}
    for name, col in df.items():
        if pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col):
            out[name] = col.mask(col == -666)
        elif col.dtype == object or pd.api.types.is_string_dtype(col):
            out[name] = col.mask(col == META_NULL)
        else:
            out[name] = col
    return pd.DataFrame(out, index=df.index)


def _check_gct(gct: GCT, path: Path) -> tuple[pd.Index, pd.Index]:
    """Check that data and metadata agree; return (row ids, col ids) as str."""
    if not isinstance(gct, GCT) or gct.data is None:
        raise InputError(f"{path}: expected a GCT with data to write")
    data = gct.data
    for axis, ids, meta in (("row", data.index, gct.row_meta), ("col", data.columns, gct.col_meta)):
        if not isinstance(meta, pd.DataFrame):
            raise InputError(f"{path}: {axis}_meta must be a DataFrame (it may have no columns)")
        repeated = _duplicates(meta.columns)
        if repeated:
            raise InputError(f"{path}: {axis}_meta has duplicated field name(s) {_few(repeated)}")
        if len(ids) != len(meta.index) or not (ids == meta.index).all():
            raise InputError(f"{path}: the data's {axis} ids differ from {axis}_meta's index "
                             f"({len(ids)} vs {len(meta.index)} ids, or another order)")
        bad = [x for x in ids if _is_missing(x) or str(x) == ""]
        if bad:
            raise InputError(f"{path}: {axis} ids must be non-empty, got {_few(bad)}")
        dup = _duplicates(pd.Index([str(x) for x in ids]))
        if dup:
            raise InputError(f"{path}: {len(dup)} duplicated {axis} id(s): {_few(dup)}")
    non_numeric = [c for c, t in data.dtypes.items() if not pd.api.types.is_numeric_dtype(t)
                   or pd.api.types.is_bool_dtype(t)]
    if non_numeric:
        raise InputError(f"{path}: data column(s) {_few(non_numeric)} are not numeric")
    return (pd.Index([str(x) for x in data.index], dtype=object),
            pd.Index([str(x) for x in data.columns], dtype=object))


def _is_missing(value) -> bool:
    return value is None or value is pd.NA or value is pd.NaT or (isinstance(value, float) and math.isnan(value))


def _field_name(name, axis: str, path: Path) -> str:
    if not isinstance(name, str) or not name or "/" in name or name in ("id", ".") or "\t" in name or "\n" in name:
        raise InputError(f"{path}: {axis} metadata field {name!r}: expected a non-empty string name "
                         f"without '/', tabs or newlines, other than 'id'")
    return name
