"""GCTX (HDF5) and GCT (text) matrices of the Connectivity Map / LINCS L1000.

Written with h5py and pandas instead of cmapPy (cmapPy 4.0.1 fails on numpy 2
and pandas 3, and decodes the Latin-1 byte for "µ" in ``pert_idose`` as
ASCII).

GCTX layout (cmapPy ``write_gctx``/``parse_gctx``, cmapR, cmapM; Enache et al.
2019, "The GCTx format and cmap{Py, R, M, J} packages", Bioinformatics 35:1427):

* root attribute ``version`` = ``b"GCTX1.0"`` (a fixed-length byte string);
* ``0/DATA/0/matrix``: the values, stored with shape ``(n_cols, n_rows)``:
  the first HDF5 axis is the column (sample, signature) axis and each
  sample's values over all rows (genes) are contiguous on disk. A logical
  ``n_rows x n_cols`` matrix is the transpose of the stored one;
* ``0/META/ROW`` and ``0/META/COL``: one 1-D dataset per metadata field,
  including ``id``, in the order of the matrix's rows and columns. Strings
  are byte strings; numbers stay numbers.

Checked on ``modzs_n272x978.gctx`` (cmapR's example, 272 real level-5
signatures x 978 landmark genes): the matrix dataset has shape (272, 978),
float32, chunks (268, 978) (about 1 MB, whole samples), no compression, and
attributes ``name=b"unnamed"`` and ``row_major=0`` (from cmapM, not read
here); metadata are gzip-compressed fixed-length byte strings or float32; the
root ``version`` is ``b"GCTX1.0"``; ``pert_idose`` holds ``b"10 \\xb5M"``
(Latin-1), so byte strings are decoded as UTF-8 with a Latin-1 fallback per
value; ``distil_cc_q75`` uses ``-666``, the CMap metadata null.

GCT text (Broad Institute GCT 1.2 / 1.3, as GenePattern and cmapPy
``parse_gct``/``write_gct`` use it), tab-separated::

    #1.3
    n_rows  n_cols  n_row_meta  n_col_meta
    id  <row-meta names...>  <column ids...>
    <col-meta name>  na ... na  <values per column>      (n_col_meta lines)
    <row id>  <row-meta values...>  <data values...>     (n_rows lines)

GCT 1.2 has the counts line ``n_rows n_cols``, the header ``Name
Description <column ids>``, one ``Description`` per row and no column
metadata.

Either format is accepted wherever a matrix is read (:func:`read_gctx`,
:func:`iter_gctx_columns`, :func:`read_gctx_meta`, :func:`open_matrix`):
the file's content decides (:func:`matrix_format`: the HDF5 signature, or a
``#1.2``/``#1.3`` first line), not its name, and a file that is neither is
refused with what it looks like (gzip-compressed GCTX, HTML or XML error
page, CSV, Git LFS pointer, ...: :func:`biokernels.io.sniff.sniff`) and
what to do. A GCTX is read by blocks of
columns with h5py slices (:func:`_read_block`), so a matrix larger than
memory (CMap LINCS 2020 level 5: 720,216 x 12,328 float32, 35 GB) is read
with about ``BLOCK_BYTES`` plus the requested block in memory.
"""

from __future__ import annotations

import csv
import gzip
import io
import math
import numbers
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import h5py
import numpy as np
import pandas as pd

from biokernels.io.download import atomic_destination
from biokernels.errors import InputError
from biokernels.io.sniff import GCT_VERSIONS, HDF5_SIGNATURE, Content, sniff

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


# ---------------------------------------------------------------- helpers

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


# ---------------------------------------------------------------- what a file holds

_BOM = "\ufeff"
#: What a matrix reader says, after what a file that is neither GCTX nor GCT
#: looks like (:func:`biokernels.io.sniff.sniff`), by the kind of its content;
#: other kinds take the sniffer's general advice.
_MATRIX_ADVICE = {
    "tsv": (", not the GCT version line '#1.2' or '#1.3': a plain table (e.g. a metadata table such as "
            "siginfo_beta.txt or inst_info.txt) is not a matrix; give the .gctx file, or add the GCT header lines "
            "(format in biokernels.io.gctx, written by write_gct)"),
    "csv": ": convert it to GCT or GCTX (biokernels.io.gctx.write_gct / write_gctx)",
    "ssv": ": convert it to GCT or GCTX (biokernels.io.gctx.write_gct / write_gctx)",
    "binary": (f", without the HDF5 signature ({HDF5_SIGNATURE.hex(' ')}): not a GCTX; the file may be "
               "truncated, corrupt or another format"),
    "parquet": ", not a matrix file: write it as GCTX (biokernels.io.gctx.write_gctx)",
    "pickle": ": load it and write it as GCTX (biokernels.io.gctx.write_gctx)",
    "npy": ": write it as GCTX with its row and column ids (biokernels.io.gctx.write_gctx)",
    "json": ", not a matrix file",
    "text": ", not the GCT version line '#1.2' or '#1.3'",
}


def _as_matrix(content: Content) -> str:
    """What a file looks like and what to do, for a file read as a matrix."""
    advice = _MATRIX_ADVICE.get(content.body.kind)
    return content.what + advice if advice else str(content)


def matrix_format(path: str | Path) -> str:
    """Whether a file is a GCTX (HDF5) or a GCT text file, by its content,
    whatever its name.

    GCTX: the HDF5 signature (:data:`biokernels.io.sniff.HDF5_SIGNATURE`) at byte 0 or after a
    user block. GCT: a first line ``#1.2`` or ``#1.3`` (a UTF-8 byte-order
    mark and surrounding blanks allowed), plain or gzip-compressed
    (``.gct.gz``).

    Returns
    -------
    {"gctx", "gct"}

    Raises
    ------
    InputError
        If the file is missing, or holds neither: the message says what it
        looks like (empty, gzip-compressed GCTX, ZIP, HTML or XML error page,
        Git LFS pointer, CSV or tab-separated table, other binary data) and
        what to do.
    """
    path = Path(path)
    content = sniff(path)
    if content.kind in ("missing", "folder"):
        raise InputError(f"{path}: expected a GCTX (HDF5) or GCT (text) matrix file, found {content.what}")
    if content.kind in ("hdf5", "gct"):
        return "gctx" if content.kind == "hdf5" else "gct"
    if content.kind == "gzip" and content.inner is not None:
        if content.inner.kind == "hdf5":
            raise InputError(f"{path}: a gzip-compressed GCTX (HDF5): HDF5 cannot be read compressed; gunzip it "
                             "first (gunzip -k), or set gunzip: true on its download")
        if content.inner.kind == "gct":
            return "gct"
    raise InputError(f"{path}: not a GCTX (HDF5) or GCT (text) matrix: the content is {_as_matrix(content)}")


def matrix_format_or_none(path: str | Path) -> str | None:
    """:func:`matrix_format`, or None where it would raise."""
    try:
        return matrix_format(path)
    except InputError:
        return None


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


# ---------------------------------------------------------------- one reader for GCTX and GCT

class MatrixFile:
    """An open GCTX or GCT matrix: metadata read, values read on request.

    Made by :func:`open_matrix`. GCTX values stay on disk and are read by
    blocks with h5py (:meth:`read`); a GCT text file is parsed once (its
    values are then in memory, as float64).

    Attributes
    ----------
    path : Path
    format : {"gctx", "gct"}
    row_meta, col_meta : DataFrame
        Indexed by row ids (``rid``) and column ids (``cid``), in file order.
    shape : (int, int)
        (n_rows, n_cols) of the logical matrix.
    """

    def __init__(self, path: Path, fmt: str, row_meta: pd.DataFrame, col_meta: pd.DataFrame,
                 dataset: h5py.Dataset | None = None, values: np.ndarray | None = None,
                 handle: h5py.File | None = None):
        self.path, self.format = path, fmt
        self.row_meta, self.col_meta = row_meta, col_meta
        self._dataset, self._values, self._handle = dataset, values, handle
        self.shape = (len(row_meta), len(col_meta))

    @property
    def dtype(self) -> np.dtype:
        return self._dataset.dtype if self._dataset is not None else self._values.dtype

    @property
    def chunk_cols(self) -> int:
        """Columns per HDF5 chunk (1 for contiguous GCTX or for GCT)."""
        return self._dataset.chunks[0] if self._dataset is not None and self._dataset.chunks else 1

    def positions(self, ids, axis: str) -> np.ndarray | None:
        """File positions of ``ids`` on ``axis`` ("row" or "col"), in the
        given order (None for None); :class:`InputError` for unknown or
        repeated ids."""
        return _positions((self.row_meta if axis == "row" else self.col_meta).index, ids, self.path, axis)

    def read(self, row_pos: np.ndarray | None = None, col_pos: np.ndarray | None = None,
             max_bytes: int = BLOCK_BYTES) -> np.ndarray:
        """Values at file positions ``row_pos`` x ``col_pos`` (None = all),
        shape (n_rows, n_cols), in the requested orders; the file's dtype.

        Raises
        ------
        InputError
            If HDF5 cannot read the values (e.g. a corrupted compressed chunk).
        """
        if self._values is not None:
            block = self._values if col_pos is None else self._values[:, col_pos]
            return block if row_pos is None else block[row_pos]
        try:
            return _read_block(self._dataset, row_pos, col_pos, max_bytes)
        except OSError as err:  # e.g. a failed gzip filter on a corrupted chunk
            raise InputError(f"{self.path}: cannot read the matrix {MATRIX!r} ({err}); the file is corrupt, "
                             "download or generate it again") from err

    def gct(self, row_pos, col_pos, validate: bool = True, max_bytes: int = BLOCK_BYTES) -> GCT:
        """The values and metadata at the given positions as a :class:`GCT`
        (``validate``: :class:`InputError` on NaN or inf)."""
        rows = self.row_meta if row_pos is None else self.row_meta.iloc[row_pos]
        cols = self.col_meta if col_pos is None else self.col_meta.iloc[col_pos]
        data = pd.DataFrame(self.read(row_pos, col_pos, max_bytes), index=rows.index.copy(),
                            columns=cols.index.copy())
        if validate:
            _check_finite(self.path, data)
        return GCT(data=data, row_meta=rows, col_meta=cols)

    def iter_columns(self, cid: Sequence[str] | None = None, rid: Sequence[str] | None = None,
                     chunk_size: int = 10000, validate: bool = True, progress=None,
                     max_bytes: int = BLOCK_BYTES) -> Iterator[GCT]:
        """The columns ``cid`` (default all, file order) x rows ``rid``
        (default all) as :class:`GCT` chunks of at most ``chunk_size``
        columns, in the requested order (see :func:`iter_gctx_columns`);
        ``progress.update(n_columns, nbytes=...)`` after each chunk.

        Raises
        ------
        InputError
            Unknown or repeated ids (before the first chunk), a
            ``chunk_size`` that is not a positive integer, or (``validate``)
            NaN or inf among the values read.
        """
        if not isinstance(chunk_size, numbers.Integral) or chunk_size < 1:
            raise InputError(f"{self.path}: chunk_size must be a positive integer, got {chunk_size!r}")
        rpos, cpos = self.positions(rid, "row"), self.positions(cid, "col")
        if cpos is None:
            cpos = np.arange(self.shape[1], dtype=np.int64)
        n_rows = self.shape[0] if rpos is None else len(rpos)
        for start in range(0, len(cpos), chunk_size):
            block = self.gct(rpos, cpos[start:start + chunk_size], validate, max_bytes)
            if progress is not None:
                progress.update(block.data.shape[1], nbytes=block.data.shape[1] * n_rows * self.dtype.itemsize)
            yield block

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def __enter__(self) -> "MatrixFile":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def open_matrix(path: str | Path, convert_neg_666: bool = False) -> MatrixFile:
    """Open a GCTX (HDF5) or GCT (text, 1.2 or 1.3, gzip allowed) matrix,
    told apart by content (:func:`matrix_format`), not by name.

    Use as a context manager (``with open_matrix(p) as m: ...``); the HDF5
    file stays open until then.

    Parameters
    ----------
    path : path
    convert_neg_666 : bool
        As in :func:`read_gctx`.

    Returns
    -------
    MatrixFile

    Raises
    ------
    InputError
        As :func:`matrix_format` (missing file, neither format, with what it
        looks like), :func:`read_gctx` (GCTX layout) or :func:`read_gct`
        (GCT text).
    """
    path = Path(path)
    if matrix_format(path) == "gct":
        gct = read_gct(path, convert_neg_666=convert_neg_666)
        return MatrixFile(path, "gct", gct.row_meta, gct.col_meta, values=gct.data.to_numpy())
    h5 = _open_h5(path)
    try:
        matrix, row_meta, col_meta = _layout(h5, path, convert_neg_666)
    except BaseException:
        h5.close()
        raise
    return MatrixFile(path, "gctx", row_meta, col_meta, dataset=matrix, handle=h5)


# ---------------------------------------------------------------- GCTX (or GCT) read

def read_gctx(path: str | Path, rid: Sequence[str] | None = None, cid: Sequence[str] | None = None,
              meta_only: bool = False, validate: bool = True, convert_neg_666: bool = False) -> GCT:
    """Read a GCTX file (or a GCT text file: told apart by content), or the
    rows and columns of it that are asked for.

    Only the needed part of ``0/DATA/0/matrix`` is read with h5py: the
    requested columns, by windows of consecutive columns (h5py slices, no
    point selection), restricted to the span of the requested rows; then both
    are put in the requested order (:func:`_read_block`). A GCT text file is
    parsed whole (:func:`read_gct`) and the same selection made.

    Parameters
    ----------
    path : path
        GCTX file (layout in the module docstring) or GCT 1.2/1.3 text
        (gzip allowed), whatever the file name.
    rid, cid : sequence of str, optional
        Row (gene) and column (sample) ids to read, in the order wanted;
        all, in file order, when omitted.
    meta_only : bool
        Read only the metadata (``data`` is None).
    validate : bool
        Raise on NaN or infinite values among those read.
    convert_neg_666 : bool
        Read CMap's metadata null, ``-666`` or ``"-666"``, as missing (NaN),
        as cmapPy does by default; by default here metadata are returned as
        stored (e.g. ``pert_idose == "-666"``).

    Returns
    -------
    GCT
        ``data`` shape (len(rid) or n_rows, len(cid) or n_cols), the file's
        dtype (float32 for L1000 GCTX; float64 for GCT text);
        ``row_meta``/``col_meta`` with one column per metadata field (GCTX:
        strings decoded UTF-8 with a Latin-1 fallback, numbers as stored;
        GCT: as :func:`read_gct`), indexed by id (``rid``/``cid``; numeric ids
        become strings).

    Raises
    ------
    InputError
        If the file is missing or neither GCTX nor GCT (what it looks like is
        named: gzip-compressed GCTX, HTML page, CSV, ...); a layout part is
        missing; a metadata field's length or the matrix shape disagrees with
        the ids (``(n_cols, n_rows)`` expected on disk); ids are duplicated in
        the file or in ``rid``/``cid``; requested ids are not in the file (the
        count and up to 5 are named); or, with ``validate``, values are not
        finite (the count and the first row id and column id are named).
    """
    with open_matrix(path, convert_neg_666) as m:
        rpos, cpos = m.positions(rid, "row"), m.positions(cid, "col")
        if meta_only:
            return GCT(data=None,
                       row_meta=m.row_meta if rpos is None else m.row_meta.iloc[rpos],
                       col_meta=m.col_meta if cpos is None else m.col_meta.iloc[cpos])
        return m.gct(rpos, cpos, validate)


def iter_gctx_columns(path: str | Path, cid: Sequence[str] | None = None, rid: Sequence[str] | None = None,
                      chunk_size: int = 10000, validate: bool = True, convert_neg_666: bool = False,
                      progress=None, max_bytes: int = BLOCK_BYTES) -> Iterator[GCT]:
    """Read a GCTX (or GCT) file a block of columns at a time.

    For files too large to hold (the 978 landmark rows of the 720,216 x
    12,328 float32 level-5 matrix of CMap LINCS 2020 are 2.8 GB, all rows
    35 GB): the file is opened and the metadata read once, then each chunk
    reads only its columns and the requested rows, by h5py slices of at most
    ``max_bytes`` (:func:`_read_block`).

    Parameters
    ----------
    path : path
        GCTX file, or GCT text (parsed whole, then cut into the same chunks).
    cid : sequence of str, optional
        Column ids, in the order wanted; all columns in file order if omitted.
    rid : sequence of str, optional
        Row ids kept in every chunk; all rows if omitted.
    chunk_size : int
        Columns per chunk (the last may be smaller).
    validate, convert_neg_666 : bool
        As in :func:`read_gctx`.
    progress : biokernels.io.download.Progress, optional
        Told the columns (and bytes) of each chunk read
        (``progress.update(n_columns, nbytes=...)``), so a rule log shows
        how far a long read is.
    max_bytes : int
        Largest slab read from HDF5 at once.

    Yields
    ------
    GCT
        ``data`` shape (n_rows or len(rid), <= chunk_size); concatenating the
        chunks' ``data`` along columns gives ``read_gctx(path, rid, cid).data``.

    Raises
    ------
    InputError
        As :func:`read_gctx` (unknown ids before the first chunk), or if
        ``chunk_size`` is not a positive integer.
    """
    path = Path(path)
    if not isinstance(chunk_size, numbers.Integral) or chunk_size < 1:
        raise InputError(f"{path}: chunk_size must be a positive integer, got {chunk_size!r}")
    with open_matrix(path, convert_neg_666) as m:
        yield from m.iter_columns(cid, rid, chunk_size, validate, progress, max_bytes)


def read_gctx_meta(path: str | Path, axis: str = "col", convert_neg_666: bool = False) -> pd.DataFrame:
    """Read one axis's metadata of a GCTX file (the matrix is not read), or
    of a GCT text file (parsed whole).

    Parameters
    ----------
    path : path
        GCTX or GCT file (told apart by content).
    axis : {"col", "row"}
        ``0/META/COL`` (samples) or ``0/META/ROW`` (genes).
    convert_neg_666 : bool
        As in :func:`read_gctx`.

    Returns
    -------
    DataFrame, shape (n_ids, n_fields)
        Indexed by id (``cid`` or ``rid``), in file order.

    Raises
    ------
    InputError
        If ``axis`` is not "col" or "row", the file is missing or neither
        GCTX nor GCT, the group or its ``id`` is missing, a field's length
        differs from the ids', or ids are duplicated.
    """
    path = Path(path)
    if axis not in _AXES:
        raise InputError(f"{path}: axis must be 'col' or 'row', got {axis!r}")
    if matrix_format(path) == "gct":
        with open_matrix(path, convert_neg_666) as m:
            return m.row_meta if axis == "row" else m.col_meta
    with _open_h5(path) as h5:
        return _read_meta(h5, path, axis, convert_neg_666)


# ---------------------------------------------------------------- checks and write

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


# ---------------------------------------------------------------- GCT text

def _read_text(path: Path) -> str:
    if not path.is_file():
        raise InputError(f"{path}: expected a GCT file, found {'a folder' if path.is_dir() else 'nothing'}")
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (gzip.BadGzipFile, EOFError, OSError) as err:
            raise InputError(f"{path}: cannot gunzip: {err}") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def _is_float(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def _text_meta(block: pd.DataFrame, convert_neg_666: bool) -> pd.DataFrame:
    """String metadata -> missing for null tokens, numbers where every value is."""
    nulls = _TEXT_NULLS | ({META_NULL} if convert_neg_666 else set())
    out = {}
    for name, col in block.items():
        col = col.astype(object).mask(col.isin(nulls))
        try:
            out[name] = pd.to_numeric(col) if col.notna().any() else col.astype("str")
        except (ValueError, TypeError):
            out[name] = col.astype("str")
    return pd.DataFrame(out, index=block.index)  # no fields: RangeIndex columns, like pd.DataFrame(index=ids)


def read_gct(path: str | Path, dtype=np.float64, convert_neg_666: bool = False) -> GCT:
    """Read a GCT 1.2 or 1.3 text file (gzip allowed) with pandas.

    Parameters
    ----------
    path : path
        ``.gct`` or gzip-compressed ``.gct.gz`` (detected from the bytes),
        UTF-8 (Latin-1 accepted).
    dtype : numpy dtype
        dtype of ``data``.
    convert_neg_666 : bool
        Also read the metadata value ``-666`` as missing (cmapPy's default;
        off here, as in :func:`read_gctx`).

    Returns
    -------
    GCT
        ``data`` (n_rows x n_cols). GCT 1.3: ``row_meta``/``col_meta`` with
        the file's fields, a field being numeric when all its non-missing
        values are numbers. GCT 1.2: ``row_meta`` has the one field named in
        the header (``Description``), ``col_meta`` has no fields. Tokens such
        as ``na``, ``NA``, ``NaN``, empty (cmapPy's list) read as missing, in
        data and metadata.

    Raises
    ------
    InputError
        If line 1 is not ``#1.2``/``#1.3``; line 2 does not hold 2 (1.2) or
        4 (1.3) non-negative integers; the number of lines or of fields on a
        line disagrees with line 2 (the line number is named); an id is empty
        or duplicated (lines named); or a data value is not a number (line and
        column id named).
    """
    path = Path(path)
    text = _read_text(path)
    lines = text.split("\n")
    while lines and lines[-1].strip() == "":
        lines.pop()
    lines = [line[:-1] if line.endswith("\r") else line for line in lines]
    if lines and lines[0].startswith(_BOM):
        lines[0] = lines[0][1:]
    version = lines[0].strip() if lines else ""
    if version not in GCT_VERSIONS:
        hint = ""
        if text and matrix_format_or_none(path) == "gctx":
            hint = " (this is a GCTX (HDF5) file: read it with read_gctx or open_matrix)"
        elif text:
            hint = f" (the content is {_as_matrix(sniff(path))})"
        raise InputError(f"{path}: line 1: expected '#1.2' or '#1.3', got {version[:40]!r}{hint}")
    n_counts = 2 if version == "#1.2" else 4
    counts = lines[1].split() if len(lines) > 1 else []
    if len(counts) != n_counts or not all(c.isdigit() for c in counts):
        what = "n_rows n_cols" if n_counts == 2 else "n_rows n_cols n_row_meta n_col_meta"
        raise InputError(f"{path}: line 2: expected {n_counts} non-negative integers ({what}) for GCT "
                         f"{version[1:]}, got {lines[1][:80] if len(lines) > 1 else 'end of file'!r}")
    n_rows, n_cols, *rest = map(int, counts)
    n_rm, n_cm = rest if rest else (1, 0)
    n_lines = 3 + n_cm + n_rows
    n_fields = 1 + n_rm + n_cols
    layout = (f"line 2 says {n_rows} data row(s), {n_cols} column(s), {n_rm} row-metadata and "
              f"{n_cm} column-metadata field(s)")
    if len(lines) < n_lines:
        raise InputError(f"{path}: the file ends at line {len(lines)}, expected {n_lines} lines ({layout})")
    if len(lines) > n_lines:
        raise InputError(f"{path}: line {n_lines + 1}: unexpected line after the last data row ({layout})")
    for number, line in enumerate(lines[2:], start=3):
        got = line.count("\t") + 1
        if got != n_fields:
            raise InputError(f"{path}: line {number}: expected {n_fields} tab-separated fields "
                             f"(id, {n_rm} row-metadata, {n_cols} values), got {got} ({layout})")
    table = pd.read_csv(io.StringIO("\n".join(lines[2:])), sep="\t", header=None, dtype=str,
                        keep_default_na=False, na_filter=False, quoting=csv.QUOTE_NONE)
    header = table.iloc[0]
    col_ids = pd.Index(header.iloc[1 + n_rm:].to_list(), name="cid")
    body = table.iloc[1 + n_cm:]
    row_ids = pd.Index(body.iloc[:, 0].to_list(), name="rid")
    for axis, ids, where in (("column", col_ids, lambda k: "line 3"),
                             ("row", row_ids, lambda k: f"line {3 + n_cm + 1 + k}")):
        empty = np.flatnonzero(ids == "")
        if len(empty):
            raise InputError(f"{path}: {where(empty[0])}: empty {axis} id")
        dup = ids.duplicated(keep=False)
        if dup.any():
            first = ids[dup][0]
            places = [where(k) for k in np.flatnonzero(ids == first)]
            raise InputError(f"{path}: duplicated {axis} id {first!r} ({', '.join(places)}); "
                             f"{len(_duplicates(ids))} duplicated id(s) in all")
    for what, names, where in (("row-metadata field", list(header.iloc[1:1 + n_rm]), "line 3"),
                               ("column-metadata field", list(table.iloc[1:1 + n_cm, 0]), f"lines 4-{3 + n_cm}")):
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise InputError(f"{path}: {where}: duplicated {what} name(s) {_few(repeated)}")
    row_meta = body.iloc[:, 1:1 + n_rm].set_axis(row_ids, axis=0).set_axis(list(header.iloc[1:1 + n_rm]), axis=1)
    col_meta = (table.iloc[1:1 + n_cm, 1 + n_rm:].T.set_axis(col_ids, axis=0)
                .set_axis(list(table.iloc[1:1 + n_cm, 0]), axis=1))
    strings = body.iloc[:, 1 + n_rm:].to_numpy(dtype=object)
    is_null = np.isin(strings, list(_TEXT_NULLS))
    try:
        values = np.where(is_null, "nan", strings).astype(np.float64).astype(dtype)
    except ValueError:
        i, j = next((i, j) for (i, j), s in np.ndenumerate(strings) if not is_null[i, j] and not _is_float(s))
        raise InputError(f"{path}: line {3 + n_cm + 1 + i}, column id {col_ids[j]!r}: "
                         f"expected a number, got {strings[i, j]!r}") from None
    data = pd.DataFrame(values, index=row_ids, columns=col_ids)
    return GCT(data=data, row_meta=_text_meta(row_meta, convert_neg_666),
               col_meta=_text_meta(col_meta, convert_neg_666))


def _text_field(value, what: str, path: Path, null: str) -> str:
    if _is_missing(value):
        return null
    text = value.decode("utf-8") if isinstance(value, bytes) else str(value)
    if any(c in text for c in "\t\n\r"):
        raise InputError(f"{path}: {what}: {text[:40]!r} contains a tab or newline, which GCT cannot hold")
    return text


def write_gct(path: str | Path, gct: GCT, version: str = "1.3", float_format: str | None = None) -> Path:
    """Write a GCT 1.3 or 1.2 text file atomically (gzip if ``path`` ends in
    ``.gz``), with pandas for the data rows.

    Parameters
    ----------
    path : path
        File to create or replace.
    gct : GCT
        ``data`` with ``row_meta``/``col_meta`` indexed by the same ids.
    version : {"1.3", "1.2"}
        GCT 1.2 has no column metadata and one row field, ``Description``:
        ``row_meta`` must have no fields (``na`` is written) or just
        ``Description``, and ``col_meta`` no fields.
    float_format : str, optional
        printf-style format of data values (e.g. ``"%.4f"``, cmapPy's);
        default the shortest repr that reads back exactly.

    Returns
    -------
    Path
        ``path``.

    Notes
    -----
    Missing data and metadata are written ``NaN`` (read back as missing,
    here and by cmapPy), the
    top-left filler block ``na``. Text cannot keep metadata types: a string
    field whose values all look like numbers reads back as numbers.

    Raises
    ------
    InputError
        If ids disagree or are duplicated, data are not numeric, ``version``
        is unknown, GCT 1.2 would drop metadata, or an id, field name or value
        holds a tab or newline.
    """
    path = Path(path)
    if version not in ("1.2", "1.3"):
        raise InputError(f"{path}: version must be '1.2' or '1.3', got {version!r}")
    row_ids, col_ids = _check_gct(gct, path)
    row_meta, col_meta = gct.row_meta, gct.col_meta
    if version == "1.2":
        if len(col_meta.columns) or list(row_meta.columns) not in ([], ["Description"]):
            raise InputError(f"{path}: GCT 1.2 holds only a row 'Description'; row fields "
                             f"{list(row_meta.columns)} and {len(col_meta.columns)} column field(s) would be "
                             f"lost: use version='1.3'")
        if row_meta.columns.empty:
            row_meta = pd.DataFrame({"Description": ["na"] * len(row_ids)}, index=row_meta.index)
    for axis, meta in (("row", row_meta), ("col", col_meta)):
        for name in meta.columns:
            _field_name(name, axis, path)
    for axis, ids in (("row", row_ids), ("column", col_ids)):
        for x in ids:
            _text_field(x, f"{axis} id", path, "")
    null = "NaN"
    text_rows = pd.DataFrame(
        {k: [_text_field(v, f"row field {name!r}, id {rid!r}", path, null) for rid, v in col.items()]
         for k, (name, col) in enumerate(row_meta.items())}, index=range(len(row_ids)))
    head = [f"#{version}"]
    if version == "1.2":
        head += [f"{len(row_ids)}\t{len(col_ids)}", "\t".join(["Name", "Description", *col_ids])]
    else:
        head += ["\t".join(str(n) for n in (len(row_ids), len(col_ids), len(row_meta.columns), len(col_meta.columns))),
                 "\t".join(["id", *row_meta.columns, *col_ids])]
        for name, col in col_meta.items():
            values = [_text_field(v, f"column field {name!r}, id {cid!r}", path, null) for cid, v in col.items()]
            head.append("\t".join([name, *(["na"] * len(row_meta.columns)), *values]))
    bottom = pd.concat([pd.DataFrame({"id": list(row_ids)}), text_rows,
                        pd.DataFrame(gct.data.to_numpy(), columns=range(len(col_ids)))],
                       axis=1, ignore_index=True)
    with atomic_destination(path) as tmp:
        opener = gzip.open if path.name.endswith(".gz") else open
        with opener(tmp, "wt", encoding="utf-8", newline="") as out:
            out.write("\n".join(head) + "\n")
            bottom.to_csv(out, sep="\t", header=False, index=False, na_rep="NaN",
                          float_format=float_format, quoting=csv.QUOTE_NONE, lineterminator="\n")
    return path
