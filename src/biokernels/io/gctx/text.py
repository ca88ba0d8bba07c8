"""GCT text matrices (Broad Institute GCT 1.2 / 1.3, as GenePattern and
cmapPy use them), plain or gzip: :func:`read_gct` and :func:`write_gct`.
The layout is described in ``docs/io_readers_notes.md``."""

from __future__ import annotations

import csv
import gzip
import io
from pathlib import Path

import numpy as np
import pandas as pd

from biokernels.errors import InputError
from biokernels.io.download import atomic_destination
from biokernels.io.gctx.common import (GCT, META_NULL, _TEXT_NULLS, _check_gct, _duplicates, _few, _field_name,
                                       _is_missing)
from biokernels.io.gctx.format import _BOM, _as_matrix, matrix_format_or_none
from biokernels.io.sniff import GCT_VERSIONS, sniff


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
