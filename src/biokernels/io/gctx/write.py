"""Writing a GCT to a GCTX (HDF5) file in the published layout, atomically
(:func:`write_gctx`), with about 1 MiB chunks of whole samples by
default."""

from __future__ import annotations

import numbers
from pathlib import Path

import h5py
import numpy as np
import pandas as pd

from biokernels.errors import InputError
from biokernels.io.download import atomic_destination
from biokernels.io.gctx.common import (_AXES, GCT, GCTX_VERSION, MATRIX, META_NULL, _check_gct, _field_name,
                                       _is_missing)


def _h5_meta_values(col: pd.Series, field: str, axis: str, path: Path) -> np.ndarray:
    """A metadata column as an array h5py stores: bool, numbers, or UTF-8
    byte strings (missing -> ``b"-666"``)."""
    if pd.api.types.is_bool_dtype(col) and not col.isna().any():
        return col.to_numpy(dtype=bool)
    if pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col):
        if isinstance(col.dtype, np.dtype):
            return col.to_numpy()
        return col.to_numpy(dtype=np.float64, na_value=np.nan)  # nullable Int64/Float64
    out = []
    for rid, value in col.items():
        if isinstance(value, str):
            out.append(value.encode("utf-8"))
        elif isinstance(value, bytes):
            out.append(value)
        elif _is_missing(value):
            out.append(META_NULL.encode())
        elif isinstance(value, (numbers.Number, np.bool_)):
            out.append(str(value).encode())
        else:
            raise InputError(f"{path}: {axis} metadata field {field!r}, id {rid!r}: cannot store a "
                             f"{type(value).__name__} in GCTX; expected a string or a number")
    width = max([len(v) for v in out] + [1])
    return np.array(out, dtype=f"S{width}")


def _default_chunks(n_cols: int, n_rows: int, itemsize: int) -> tuple[int, int] | None:
    """About 1 MiB chunks of whole samples, as cmapM wrote (268 x 978 float32
    in cmapR's example); None for an empty matrix."""
    if n_cols == 0 or n_rows == 0:
        return None
    per_sample = n_rows * itemsize
    if per_sample >= 1 << 20:
        return 1, max(1, (1 << 20) // itemsize)
    return min(n_cols, (1 << 20) // per_sample), n_rows


def write_gctx(path: str | Path, gct: GCT, compression: str | None = "gzip",
               chunk: tuple[int, int] | None = None, dtype=None) -> Path:
    """Write a GCT to a GCTX file in the published layout, atomically.

    The file is written to a temporary file in the same folder and moved
    into place (:func:`os.replace`); on any error the temporary file is
    removed and an existing ``path`` is left as it was.

    Parameters
    ----------
    path : path
        File to create or replace.
    gct : GCT
        ``data`` (n_rows x n_cols; NaN allowed) with ``row_meta`` and
        ``col_meta`` indexed by the same ids in the same order (ids are
        stored as text, ``str(id)``, and read back as str).
    compression : {"gzip", "lzf", None}
        HDF5 filter for the matrix and the metadata.
    chunk : (int, int), optional
        Chunk shape of the stored (n_cols, n_rows) matrix; default about
        1 MiB of whole samples, like cmapM's files.
    dtype : numpy dtype, optional
        Stored dtype of the matrix; default the data's own floating dtype
        (float32 stays float32), else float64.

    Returns
    -------
    Path
        ``path``.

    Notes
    -----
    Stored as: root attribute ``version`` = ``b"GCTX1.0"`` (as in cmapR's
    example file); ``0/DATA/0/matrix`` of shape (n_cols, n_rows);
    ``0/META/ROW`` and ``0/META/COL`` with ``id`` and one dataset per field,
    in the DataFrame's column order (groups track creation order). Strings
    are stored as fixed-length UTF-8 byte strings; missing strings as
    ``"-666"`` (CMap's null; read back as missing with
    ``convert_neg_666=True``); numbers with their dtype
    (NaN kept); bools as HDF5 booleans.

    Raises
    ------
    InputError
        If the data and metadata ids disagree, are missing or empty, or are
        duplicated (as text), data are not numeric, a field name is empty, ``"id"`` or
        contains ``/``, or a metadata value is neither a string nor a number
        (field and id named).
    """
    path = Path(path)
    row_ids, col_ids = _check_gct(gct, path)
    values = gct.data.to_numpy()
    if dtype is None:
        dtype = values.dtype if values.dtype.kind == "f" else np.float64
    stored = np.ascontiguousarray(values.T, dtype=dtype)  # (n_cols, n_rows)
    if chunk is None:
        chunk = _default_chunks(*stored.shape, stored.dtype.itemsize)
    fields = {axis: [(_field_name(name, axis, path), col) for name, col in meta.items()]
              for axis, meta in (("row", gct.row_meta), ("col", gct.col_meta))}
    with atomic_destination(path) as tmp:
        with h5py.File(tmp, "w") as h5:
            h5.attrs["version"] = np.bytes_(GCTX_VERSION)
            h5.create_dataset(MATRIX, data=stored, chunks=chunk,
                              compression=compression if chunk is not None else None)
            for axis, ids in (("row", row_ids), ("col", col_ids)):
                group = h5.create_group(_AXES[axis][0], track_order=True)
                for name, col in [("id", pd.Series(list(ids), index=ids, dtype=object))] + fields[axis]:
                    array = _h5_meta_values(col, name, axis, path)
                    group.create_dataset(name, data=array,
                                         compression=compression if len(array) else None)
    return path
