"""Opening input files, plain or compressed, with one meaning for a damaged
compressed stream: the bottom layer every reader of :mod:`biokernels.io`
opens its files with (or wraps a decompressing stream it opened itself in,
with :func:`guard`).

A decompression error met anywhere in the file (a truncated download, corrupt
data: :data:`DECOMPRESSION_ERRORS`) becomes one
:class:`~biokernels.errors.InputError` naming the file (and ZIP member), the
error, the lines and bytes of content read before it, and what to do.
Compression is told from the file's first bytes (:func:`compression_of`),
never from its name, unless the caller names it; a reader that must also
check that a name matches its content does so before opening (e.g.
:func:`biokernels.io.text.open_text`). Details: docs/io_readers_notes.md.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import re
import zipfile
import zlib
from pathlib import Path

from biokernels.errors import InputError

__all__ = ["COMPRESSIONS", "DECOMPRESSION_ERRORS", "compression_of", "guard", "open_binary", "open_text"]

#: Compressed layers read here: name -> opener of a binary decompressing stream.
COMPRESSIONS = {"gzip": gzip.open, "bzip2": bz2.open, "xz": lzma.open, "zip": None}
#: What the decompressors raise on a truncated or corrupt stream
#: (``gzip.BadGzipFile`` and bz2's "Invalid data stream" are OSErrors).
DECOMPRESSION_ERRORS = (EOFError, OSError, zlib.error, lzma.LZMAError, zipfile.BadZipFile)
_PIECE = 1 << 16
_REDO = "the file is truncated or corrupt (an interrupted download or copy?); fetch or copy it again"


def compression_of(path: str | Path) -> str | None:
    """The compression of the file at ``path`` by its first bytes: ``"gzip"``,
    ``"bzip2"``, ``"xz"``, ``"zip"``, or None (plain)."""
    with open(path, "rb") as fh:
        head = fh.read(6)
    if head[:2] == b"\x1f\x8b":
        return "gzip"
    if re.match(rb"BZh[1-9]", head[:4]):
        return "bzip2"
    if head == b"\xfd7zXZ\x00":
        return "xz"
    if head[:4] == b"PK\x03\x04":
        return "zip"
    return None


class _Guarded(io.RawIOBase):
    """A decompressing stream whose errors become :class:`InputError`; counts
    the bytes and lines it has handed out."""

    def __init__(self, stream, where: str, layer: str):
        super().__init__()
        self._stream = stream
        self._read = getattr(stream, "readinto1", None) or stream.readinto
        self._where = where
        self._layer = layer
        self.bytes_read = 0
        self.lines_read = 0

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        try:  # one read of the decompressor (readinto1): little is lost from the count when the error comes
            n = self._read(memoryview(b)[:_PIECE])
        except DECOMPRESSION_ERRORS as err:
            raise InputError(
                f"{self._where}: the {self._layer}-compressed data cannot be decompressed to its end "
                f"({type(err).__name__}: {err}) after {self.lines_read:,} complete line(s) "
                f"({self.bytes_read:,} bytes) of content were read: {_REDO}") from None
        if n:
            self.bytes_read += n
            self.lines_read += memoryview(b)[:n].tobytes().count(b"\n")
        return n

    def close(self) -> None:
        if not self.closed:
            try:
                self._stream.close()
            finally:
                super().close()


def guard(stream, path: str | Path, layer: str, member: str | None = None) -> io.BufferedReader:
    """Wrap a binary decompressing stream (a ``gzip.GzipFile``, a ZIP
    member, ...) so that any of :data:`DECOMPRESSION_ERRORS` raised while
    reading it becomes an :class:`InputError` naming ``path`` (and
    ``member``), the error, the lines and bytes read before it, and what to
    do. Closing the result closes ``stream``."""
    where = f"{path} (member {member})" if member is not None else str(path)
    return io.BufferedReader(_Guarded(stream, where, layer), buffer_size=1 << 16)


def open_binary(path: str | Path, compression: str | None = "infer", member: str | None = None):
    """Open a file for binary reading, decompressed.

    Parameters
    ----------
    path : path
    compression : {"infer", "gzip", "bzip2", "xz", "zip", None}
        ``"infer"``: by the first bytes (:func:`compression_of`); None: plain.
    member : str, optional
        The member of a ZIP archive to read (needed when it holds several).

    Returns
    -------
    binary file object
        The plain file, or a buffered decompressing stream (:func:`guard`).

    Raises
    ------
    InputError
        The path is missing or a folder; a damaged ZIP archive, one of
        several members without ``member``, or no such member; and, while
        reading, a truncated or corrupt compressed stream (the file, the
        lines and bytes read and what to do are named).
    ValueError
        An unknown ``compression``.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: expected a file, found {'a folder' if path.is_dir() else 'nothing'}")
    if compression == "infer":
        compression = compression_of(path)
    if compression is None:
        return open(path, "rb")
    if compression not in COMPRESSIONS:
        raise ValueError(f"compression {compression!r}: expected one of {['infer', *COMPRESSIONS, None]}")
    if compression != "zip":
        return guard(COMPRESSIONS[compression](path, "rb"), path, compression)
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, EOFError, OSError) as err:
        raise InputError(f"{path}: a damaged zip archive ({err}); {_REDO}") from None
    names = [n for n in zf.namelist() if not n.endswith("/")]
    if member is None and len(names) != 1:
        zf.close()
        raise InputError(f"{path}: a zip archive of {len(names)} files; name the one to read (the zip member "
                         f"setting), e.g. {names[:3]}")
    member = member if member is not None else names[0]
    if member not in names:
        zf.close()
        near = [n for n in names if member.lower().split("-")[0] in n.lower()][:3] or names[:3]
        raise InputError(f"{path}: the zip archive has no member {member!r} ({len(names)} files, e.g. {near})")
    try:
        stream = zf.open(member)
    except (zipfile.BadZipFile, NotImplementedError, RuntimeError, OSError) as err:
        zf.close()
        raise InputError(f"{path}: member {member} of the zip archive cannot be read ({err}); {_REDO}") from None
    zf.close()  # the member stream keeps its own reference to the open file
    return guard(stream, path, "zip", member)


def open_text(path: str | Path, compression: str | None = "infer", member: str | None = None,
              encoding: str = "utf-8", errors: str = "strict", newline: str | None = None) -> io.TextIOWrapper:
    """:func:`open_binary`, decoded (``encoding``, ``errors`` and ``newline``
    as for :class:`io.TextIOWrapper`); raises as :func:`open_binary`, and
    ``UnicodeDecodeError`` while reading bytes that are not ``encoding``
    when ``errors="strict"``."""
    return io.TextIOWrapper(open_binary(path, compression, member), encoding=encoding, errors=errors,
                            newline=newline)
