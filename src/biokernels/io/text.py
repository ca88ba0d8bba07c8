"""The shared text layer of the readers: a checked text opener and a
tab-separated table reader.

:func:`open_text` opens a text input (plain, gzip or a zip member, told by
its bytes) after checking that its name promises no other layout and that
it is text (:func:`biokernels.io.sniff.sniff`); :func:`read_table` reads a
tab-separated file as strings. Both open the file with
:func:`biokernels.io.opener.open_binary`, so a damaged compressed stream is
an :class:`~biokernels.errors.InputError` naming the file.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

import pandas as pd

from biokernels.errors import InputError
from biokernels.io.opener import open_binary
from biokernels.io.sniff import sniff

__all__ = ["open_text", "read_table"]


def read_table(path: str | Path, header: bool = True) -> pd.DataFrame:
    """Read a tab-separated file as strings (pandas), turning parser errors
    into :class:`InputError` naming the file and line.

    Raises
    ------
    InputError
        If the path is not a file, the file is empty, a line has more
        fields than the header, or the file (gzip, bzip2, xz or a one-file
        zip, told by its bytes) is truncated or corrupt
        (:func:`biokernels.io.opener.open_binary`).
    """
    if not Path(path).is_file():
        raise InputError(f"{path}: expected a tab-separated file, found {'a folder' if Path(path).is_dir() else 'nothing'}")
    try:
        with open_binary(path) as fh:    # gzip, bzip2, xz or a one-file zip by content; damage: InputError
            data = fh.read()
        table = pd.read_csv(io.BytesIO(data), sep="\t", dtype=str, keep_default_na=False,
                            header=0 if header else None, encoding="utf-8", compression=None)
    except pd.errors.EmptyDataError:
        raise InputError(f"{path}: the file is empty (expected a tab-separated table)") from None
    except pd.errors.ParserError as err:
        raise InputError(f"{path}: cannot parse as a tab-separated table: {err}".strip()) from None
    _check_field_counts(path, data, table.shape[1])
    return table


def _check_field_counts(path, data: bytes, n_columns: int) -> None:
    """InputError naming the first line with fewer fields than the table has
    columns (pandas pads such a line with empty fields): a file cut short, or
    a ragged table. Blank lines are skipped, as pandas skips them."""
    lines = data.split(b"\n")
    ends_cleanly = not lines[-1].strip()
    short = [i for i, line in enumerate(lines) if line.strip() and line.count(b"\t") < n_columns - 1]
    if not short:
        return
    i = short[0]
    fields = lines[i].count(b"\t") + 1
    if i == len(lines) - 1 and not ends_cleanly:
        raise InputError(f"{path}: the last line ({i + 1}) has {fields} of {n_columns} fields and no line end: "
                         "the file looks truncated; fetch or copy it again")
    raise InputError(f"{path}: line {i + 1} has {fields} of {n_columns} fields ({len(short)} such line(s)); "
                     "expected every line to have all the columns")


#: File-name endings that promise an uncompressed text file.
_TEXT_SUFFIXES = (".txt", ".tsv", ".tab", ".tab2", ".tab3", ".gaf", ".obo", ".csv", ".sif")
#: File-name endings that promise a compressed layout.
_COMPRESSED_SUFFIXES = {".gz": "gzip", ".zip": "zip", ".bz2": "bzip2", ".xz": "xz"}
#: Content kinds (biokernels.io.sniff.KINDS) that are a compressed layer.
_LAYERS = ("gzip", "zip", "bzip2", "xz", "zstd")
#: Content kinds no text reader here can read: not text at all, or an HTML
#: page or Git LFS pointer saved in place of the data (refused with what they
#: look like and what to do).
_REFUSED = ("excel", "hdf5", "parquet", "npy", "pickle", "binary", "utf16", "unreadable", "html", "git_lfs")


@contextlib.contextmanager
def open_text(path: str | Path, what: str, member: str | None = None) -> Iterator[TextIO]:
    """Open a text input for reading (UTF-8), plain or gzip-compressed (told
    by its first bytes, not its name) or, for a zip archive, one member.

    The name must not promise another layout: a ``.gz`` (``.zip``) file
    must be gzip (zip), and a compressed file must not be named as plain
    text (``.txt``, ``.tsv``, ``.gaf``, ``.obo``, ``.tab3``, ...); a name
    without such an ending (a download named by its checksum) is read by
    its content.

    Parameters
    ----------
    path : path
    what : str
        What the file should be, for messages (e.g. ``"a GAF 2.x file"``).
    member : str, optional
        The member to read in a zip archive (needed when it holds several).

    Yields
    ------
    TextIO
        The decompressed text, line by line.

    Raises
    ------
    InputError
        If the path is missing or a folder, the file is empty or not text
        (binary, Excel, HDF5, an HTML page, a Git LFS pointer, ...: what it
        looks like is said, by
        :func:`biokernels.io.sniff.sniff`), bzip2/xz/zstd-compressed, named
        as another layout than its content (what
        it looks like and what to do are said), a zip archive without
        ``member`` (its members listed), or ``member`` is not in it; while
        reading, a truncated or corrupt gzip or zip member (the lines read
        before the damage are said: :func:`biokernels.io.opener.guard`).
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: expected {what}, found {'a folder' if path.is_dir() else 'nothing'}")
    if path.stat().st_size == 0:
        raise InputError(f"{path}: the file is empty (expected {what})")
    looks = sniff(path, member)
    if looks.body.kind in _REFUSED:
        raise InputError(f"{path}: expected {what}, found {looks}")
    kind = looks.kind if looks.kind in _LAYERS else "none"
    name = path.name.lower()
    promised = next((k for s, k in _COMPRESSED_SUFFIXES.items() if name.endswith(s)), None)
    if promised and promised != kind:
        fix = (f"rename it without {path.suffix}" if kind == "none" else
               f"rename it to end in {next(s for s, k in _COMPRESSED_SUFFIXES.items() if k == kind)}")
        raise InputError(f"{path}: named {path.suffix} but not {promised}-compressed: it looks like {looks}; "
                         f"{fix}, or give {what}")
    if kind != "none" and name.endswith(_TEXT_SUFFIXES):
        raise InputError(f"{path}: named as plain text ({path.suffix}) but {kind}-compressed ({looks}); rename it "
                         f"to {path.name}{'.gz' if kind == 'gzip' else '.zip' if kind == 'zip' else ''} "
                         f"or decompress it")
    if kind in ("bzip2", "xz", "zstd"):
        raise InputError(f"{path}: {kind}-compressed, which is not read here; decompress it (or gzip it) "
                         f"and give {what}")
    with contextlib.ExitStack() as stack:
        raw = stack.enter_context(open_binary(path, None if kind == "none" else kind, member))
        buffered = raw if isinstance(raw, io.BufferedReader) else io.BufferedReader(raw)
        head = buffered.peek(4096)[:4096]
        if b"\x00" in head:
            raise InputError(f"{path}: a binary file, not text (expected {what})")
        yield stack.enter_context(io.TextIOWrapper(buffered, encoding="utf-8", newline=""))
