"""Checked text tables of the DepMap readers: a file whose bytes do not match
its name (gzip without ``.gz``, an HTML page, an Excel workbook, a
tab-separated ``.csv``) is refused with what it looks like
(:func:`biokernels.io.sniff.sniff`) and what to do
(:func:`check_table_file`); the shared parsing helpers of the readers."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from biokernels.errors import InputError
from biokernels.io.opener import open_binary
from biokernels.io.sniff import sniff


#: Strings read as a missing value in the PRISM files (R writes ``NA``).
NA_STRINGS = ("", "NA", "NaN", "nan", "NULL", "null", "None")


#: Content kinds (biokernels.io.sniff.KINDS) a table may have: separated
#: text, or one column without separator ("text").
_TABLE_KINDS = ("csv", "tsv", "ssv", "text")


def table_separator(path) -> str:
    """The field separator a table's name implies: tab for ``.tsv`` / ``.txt``
    (optionally ``.gz``), else comma."""
    return "\t" if re.search(r"\.(tsv|txt)(\.gz)?$", str(path)) else ","


def check_table_file(path, what: str = "a table") -> str:
    """Check that ``path`` is a text table whose bytes match its name; return
    its separator (:func:`table_separator`).

    What the file holds is told from its first 64 KiB (decompressed for
    gzip) by :func:`biokernels.io.sniff.sniff`. The readers take the
    separator from the name, so a mismatch would otherwise surface as a
    confusing parse or decoding error; they decompress by content
    (:func:`biokernels.io.opener.open_binary`), so a gzip stream damaged past
    its first 64 KiB is an :class:`InputError` when it is met.

    Raises
    ------
    InputError
        Missing, a folder or empty; gzip bytes without ``.gz`` (rename it, or
        ``gunzip: true`` for a download) or ``.gz`` without gzip bytes; damaged
        gzip; anything but separated text (a ZIP or Excel workbook, HTML or
        XML page, HDF5, Parquet, JSON, GEO or GCT file, binary data, ...); not
        UTF-8; a header separated by tabs (or semicolons) in a ``.csv`` name
        or by commas in a ``.tsv`` one. The message names the file, what it
        looks like and what to do.
    """
    p = Path(path)
    content = sniff(p)
    if content.kind == "missing":
        raise InputError(f"{p}: {what} not found")
    if content.kind == "folder":
        raise InputError(f"{p}: expected {what} file, found a folder")
    sep = table_separator(p)
    if content.kind == "empty":
        raise InputError(f"{p}: empty file, expected {what} with a header ({content.what})")
    body = content
    if content.kind == "gzip":
        if not p.name.endswith(".gz"):
            raise InputError(f"{p}: looks like gzip-compressed data but its name does not end in .gz; rename it "
                             f"{p.name}.gz (a local file) or set gunzip: true on its download")
        if content.inner is None:
            raise InputError(f"{p}: {content}")
        body = content.inner
    elif p.name.endswith(".gz"):
        raise InputError(f"{p}: named .gz but not gzip data (it looks like {content}); rename it without .gz")
    if body.kind == "empty":
        raise InputError(f"{p}: empty file once decompressed, expected {what} with a header")
    if body.kind not in _TABLE_KINDS:
        raise InputError(f"{p}: expected {what} as {'tab' if sep == chr(9) else 'comma'}-separated text, but it "
                         f"looks like {body}")
    if body.not_utf8:
        raise InputError(f"{p}: not UTF-8 text ({body.not_utf8}); save it as UTF-8")
    if sep == "," and body.delimiter in ("\t", ";"):
        if body.delimiter == ";":
            raise InputError(f"{p}: the header is semicolon-separated ({body.what}) but the name says "
                             "comma-separated; save it comma-separated (or as .tsv)")
        raise InputError(f"{p}: the header is tab-separated but the name says comma-separated; rename it "
                         f"{re.sub(r'[.]csv', '.tsv', p.name) if '.csv' in p.name else p.name + '.tsv'}")
    if sep == "\t" and body.delimiter == ",":
        raise InputError(f"{p}: the header is comma-separated but the name says tab-separated; rename it to .csv")
    return sep


def _read_text_table(path, what: str, **kw) -> tuple[pd.DataFrame, str]:
    """``pandas.read_csv`` of a checked table, all fields as stripped strings
    ('' when empty); errors as :class:`InputError` naming the file."""
    sep = check_table_file(path, what)
    try:
        with open_binary(path) as fh:    # a truncated or corrupt gzip: InputError (biokernels.io.opener)
            table = pd.read_csv(fh, sep=sep, dtype=str, keep_default_na=False, encoding="utf-8", compression=None,
                                **kw)
    except pd.errors.EmptyDataError as e:
        raise InputError(f"{path}: empty file, expected {what} with a header") from e
    except pd.errors.ParserError as e:
        raise InputError(f"{path}: cannot parse as a {'tab' if sep == chr(9) else 'comma'}-separated table "
                         f"(a row with more fields than the header?): {e}") from None
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start}); save it as UTF-8") from None
    if not isinstance(table.index, pd.RangeIndex):
        raise InputError(f"{path}: the data rows have one more field than the header "
                         f"({len(table.columns)} column names); expected one value per column")
    for c in table.columns:
        table[c] = table[c].str.strip()
    return table, sep


def _need_columns(table: pd.DataFrame, path, columns: Sequence[str], layout: str) -> None:
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise InputError(f"{path}: column(s) {missing} missing; expected the {layout} layout with "
                         f"{list(columns)}, found {list(table.columns)[:12]}")


def _line(i: int) -> int:
    """File line of data row ``i`` (0-based) of a table with one header line."""
    return int(i) + 2


def _cell_regex(cell_pattern: str) -> re.Pattern:
    """``cell_pattern`` compiled; an InputError unless it has exactly one group."""
    try:
        rx = re.compile(cell_pattern)
    except (re.error, TypeError) as e:
        raise InputError(f"cell_pattern {cell_pattern!r}: not a regular expression ({e})") from None
    if rx.groups != 1:
        raise InputError(f"cell_pattern {cell_pattern!r}: expected exactly one group, got {rx.groups}")
    return rx
