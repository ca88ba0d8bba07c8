"""Reading a GCTX (or GCT) matrix, whichever the file holds
(:func:`matrix_format`): one open file (:class:`MatrixFile`,
:func:`open_matrix`), the whole or a part of it (:func:`read_gctx`), its
columns a block at a time (:func:`iter_gctx_columns`) or one axis's
metadata (:func:`read_gctx_meta`)."""

from __future__ import annotations

import numbers
from collections.abc import Iterator, Sequence
from pathlib import Path

import h5py
import numpy as np
import pandas as pd

from biokernels.errors import InputError
from biokernels.io.gctx.blocks import (BLOCK_BYTES, _check_finite, _layout, _open_h5, _positions, _read_block,
                                       _read_meta)
from biokernels.io.gctx.common import _AXES, GCT, MATRIX
from biokernels.io.gctx.format import matrix_format
from biokernels.io.gctx.text import read_gct


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
        GCTX file (layout in docs/io_readers_notes.md) or GCT 1.2/1.3 text
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
