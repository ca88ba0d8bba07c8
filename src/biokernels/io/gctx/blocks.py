"""The GCTX (HDF5) layout as read with h5py: opening, metadata groups and the
matrix dataset, and the block reads of only the wanted columns and rows
(:func:`_read_block`: h5py slices of at most ``BLOCK_BYTES``, no point
selection), so a matrix larger than memory is read a block at a time."""

from __future__ import annotations

from pathlib import Path

import h5py
import numpy as np
import pandas as pd

from biokernels.errors import InputError
from biokernels.io.gctx.common import (COL_META, MATRIX, ROW_META, _AXES, _decode, _duplicates, _few,
                                       _ids_as_str, _null_666)
from biokernels.io.gctx.format import matrix_format


def _open_h5(path: Path) -> h5py.File:
    if matrix_format(path) != "gctx":
        raise InputError(f"{path}: a GCT text file where a GCTX (HDF5) file is needed here; read it with "
                         "biokernels.io.gctx.read_gct or open_matrix")
    try:
        return h5py.File(path, "r")
    except OSError as err:
        raise InputError(f"{path}: has the HDF5 signature but cannot be opened as HDF5 ({err}): the file is "
                         "truncated or corrupt; fetch or copy it again") from None


def _read_meta(h5: h5py.File, path: Path, axis: str, convert_neg_666: bool) -> pd.DataFrame:
    group_name, index_name = _AXES[axis]
    group = h5.get(group_name)
    if not isinstance(group, h5py.Group) or not isinstance(group.get("id"), h5py.Dataset):
        raise InputError(f"{path}: missing {group_name}/id (expected the GCTX layout: "
                         f"{MATRIX}, {ROW_META}/id, {COL_META}/id)")
    ids = pd.Index(_ids_as_str(group["id"][()].reshape(-1)), name=index_name)
    dup = _duplicates(ids)
    if dup:
        raise InputError(f"{path}: {group_name}/id: {len(dup)} duplicated {axis} id(s): {_few(dup)}")
    fields = {}
    for name, dataset in group.items():
        if name == "id":
            continue
        if not isinstance(dataset, h5py.Dataset) or dataset.shape != (len(ids),):
            shape = dataset.shape if isinstance(dataset, h5py.Dataset) else "a group"
            raise InputError(f"{path}: {group_name}/{name} has shape {shape}, expected ({len(ids)},) "
                             f"like {group_name}/id")
        fields[name] = _decode(dataset[()])
    meta = pd.DataFrame(fields, index=ids)
    meta.columns.name = None
    return _null_666(meta) if convert_neg_666 else meta


def _layout(h5: h5py.File, path: Path, convert_neg_666: bool):
    row_meta = _read_meta(h5, path, "row", convert_neg_666)
    col_meta = _read_meta(h5, path, "col", convert_neg_666)
    matrix = h5.get(MATRIX)
    if not isinstance(matrix, h5py.Dataset):
        raise InputError(f"{path}: missing dataset {MATRIX} (expected the GCTX layout)")
    expected = (len(col_meta), len(row_meta))
    if matrix.shape != expected:
        raise InputError(f"{path}: {MATRIX} has shape {matrix.shape}, expected (n_cols, n_rows) = {expected} "
                         f"from {COL_META}/id and {ROW_META}/id")
    if matrix.dtype.kind not in "fiu":
        raise InputError(f"{path}: {MATRIX} holds {matrix.dtype}, expected numbers")
    return matrix, row_meta, col_meta


def _positions(index: pd.Index, wanted, path: Path, axis: str) -> np.ndarray | None:
    """File positions of the requested ids, in the requested order."""
    if wanted is None:
        return None
    if isinstance(wanted, (str, bytes)):
        name = "rid" if axis == "row" else "cid"
        raise InputError(f"{path}: {name} must be a list of {axis} ids, got one string {wanted!r}")
    wanted = pd.Index([str(x) for x in wanted], dtype=object)
    dup = _duplicates(wanted)
    if dup:
        raise InputError(f"{path}: {len(dup)} {axis} id(s) requested more than once: {_few(dup)}")
    pos = index.get_indexer(wanted)
    missing = list(wanted[pos < 0])
    if missing:
        raise InputError(f"{path}: {len(missing)} requested {axis} id(s) not in the file: {_few(missing)}")
    return pos.astype(np.int64)


BLOCK_BYTES = 64 << 20
"""Largest slab of ``0/DATA/0/matrix`` read at once (bytes), see :func:`_plan_windows`."""


def _plan_windows(sorted_pos: np.ndarray, gap: int, max_cols: int) -> list[tuple[int, int, int, int]]:
    """Split increasing column positions into windows ``(first, stop, i0, i1)``:
    file columns ``first:stop`` are read as one slice and hold the sorted
    positions ``i0:i1``. A new window starts where two wanted columns are more
    than ``gap`` apart (the columns between would be read for nothing) or
    where the window would span more than ``max_cols`` columns."""
    windows = []
    n = len(sorted_pos)
    if n == 0:
        return windows
    breaks = np.flatnonzero(np.diff(sorted_pos) > gap) + 1
    for lo, hi in zip(np.r_[0, breaks], np.r_[breaks, n]):
        i = lo
        while i < hi:  # split a run longer than max_cols
            first = sorted_pos[i]
            j = int(np.searchsorted(sorted_pos[i:hi], first + max_cols, side="left")) + i
            j = max(j, i + 1)
            windows.append((int(first), int(sorted_pos[j - 1]) + 1, int(i), int(j)))
            i = j
    return windows


def _read_block(matrix: h5py.Dataset, row_pos: np.ndarray | None, col_pos: np.ndarray | None,
                max_bytes: int = BLOCK_BYTES) -> np.ndarray:
    """Values at (row_pos, col_pos) as an (n_rows, n_cols) array, in the
    requested orders.

    The stored matrix is (n_cols, n_rows), each sample's values contiguous.
    Rows: the slice spanning the requested rows is read and the rows taken
    from it. Columns: the requested positions, sorted, are cut into windows
    (:func:`_plan_windows`: a gap wider than one HDF5 chunk of columns, or a
    slab over ``max_bytes``, starts a new window); each window is one h5py
    slice ``matrix[first:stop, row_lo:row_hi]`` read into one reused buffer
    (``read_direct``), so memory is the output plus at most ``max_bytes``,
    whatever the file's size, and no h5py fancy (point-list) selection is
    made. A window whose columns are all wanted, in file order, with all the
    rows of its span, is read straight into the output.
    """
    n_file_cols, n_file_rows = matrix.shape
    rows = np.arange(n_file_rows, dtype=np.int64) if row_pos is None else np.asarray(row_pos, dtype=np.int64)
    cols = np.arange(n_file_cols, dtype=np.int64) if col_pos is None else np.asarray(col_pos, dtype=np.int64)
    out = np.empty((len(cols), len(rows)), dtype=matrix.dtype)  # samples x genes, transposed at the end
    if len(rows) == 0 or len(cols) == 0:
        return out.T
    row_lo, row_hi = int(rows.min()), int(rows.max()) + 1
    row_take = rows - row_lo
    width = row_hi - row_lo
    order = np.argsort(cols, kind="stable")
    sorted_cols = cols[order]
    chunk_cols = matrix.chunks[0] if matrix.chunks else 1
    max_cols = max(1, int(max_bytes // max(1, width * matrix.dtype.itemsize)))
    windows = _plan_windows(sorted_cols, gap=chunk_cols, max_cols=max_cols)
    whole_rows = width == len(rows) and np.array_equal(row_take, np.arange(width))
    in_order = np.array_equal(order, np.arange(len(cols)))
    buffer = None
    for first, stop, i0, i1 in windows:
        dense = i1 - i0 == stop - first            # every column of the window is wanted
        if dense and whole_rows and in_order:      # straight into the output, no copy
            matrix.read_direct(out[i0:i1], source_sel=np.s_[first:stop, row_lo:row_hi])
            continue
        if buffer is None:
            buffer = np.empty((max(b - a for a, b, _, _ in windows), width), dtype=matrix.dtype)
        slab = buffer[:stop - first]
        matrix.read_direct(slab, source_sel=np.s_[first:stop, row_lo:row_hi])
        take = slice(None) if dense else sorted_cols[i0:i1] - first
        picked = slab[take] if whole_rows else slab[np.ix_(np.arange(stop - first)[take], row_take)]
        if in_order:
            out[i0:i1] = picked
        else:
            out[order[i0:i1]] = picked
    return out.T


def _check_finite(path: Path, data: pd.DataFrame) -> None:
    values = data.to_numpy()
    bad = ~np.isfinite(values)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise InputError(f"{path}: {int(bad.sum())} non-finite value(s) (NaN or inf) in the matrix; first at "
                         f"row id {data.index[i]!r}, column id {data.columns[j]!r} ({values[i, j]}); "
                         f"pass validate=False to keep them")
