"""Opening GEO files (plain or gzip, gzip recognised by its magic bytes:
downloads are stored without extension), saying what a wrong file looks
like (:func:`biokernels.io.sniff.sniff`), and splitting GEO's tab-separated
lines."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator
from pathlib import Path

from biokernels.errors import InputError
from biokernels.io.opener import open_binary
from biokernels.io.sniff import Content, describe_content, sniff


_GZIP_MAGIC = b"\x1f\x8b"


#: Content kinds (biokernels.io.sniff.KINDS) that cannot be a GEO text table
#: once gzip is undone: refused with what they look like.
_NOT_TEXT_TABLES = frozenset({"empty", "html", "xml", "zip", "excel", "binary", "gzip", "bzip2", "xz", "zstd",
                              "hdf5", "parquet", "npy", "pickle", "git_lfs", "json", "utf16"})


def _looks(path: Path) -> Content:
    """What the file holds once gzip is undone (the readers here decompress
    gzip, nothing else): :func:`biokernels.io.sniff.sniff`."""
    content = sniff(path)
    return content.inner if content.kind == "gzip" and content.inner is not None else content


def _head(path: Path, n: int = 4096) -> tuple[bool, bytes]:
    """(is gzip, the first ``n`` bytes of the content, decompressed)."""
    with open(path, "rb") as fh:
        raw = fh.read(n)
    if raw[:2] != _GZIP_MAGIC:
        return False, raw
    with open_binary(path, "gzip") as fh:     # damaged gzip: InputError (biokernels.io.opener)
        return True, fh.read(n)


def _open_binary(path: str | Path, what: str) -> tuple[io.BufferedIOBase, bytes]:
    """Open a plain or gzip file as a binary handle; gzip is recognised by its
    magic bytes (downloads are stored without extension). Returns the handle
    and the head of the content (for messages). A truncated or corrupt gzip
    stream raises :class:`InputError` wherever it is met while reading
    (:func:`biokernels.io.opener.open_binary`)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: expected {what}, found {'a folder' if path.is_dir() else 'nothing'}")
    is_gz, head = _head(path)
    if path.suffix == ".gz" and not is_gz:
        raise InputError(f"{path}: named .gz but not gzip-compressed; it looks like {describe_content(path)} "
                         f"(expected {what})")
    return open_binary(path, "gzip" if is_gz else None), head


def _open_text(path: str | Path, what: str) -> tuple[io.TextIOBase, bytes]:
    """As :func:`_open_binary`, decoded as UTF-8 (errors replaced, universal newlines)."""
    raw, head = _open_binary(path, what)
    return io.TextIOWrapper(raw, encoding="utf-8", errors="replace", newline=None), head


def _split(line: str) -> list[str]:
    """One tab-separated line of a GEO file, quotes removed (csv rules)."""
    return next(csv.reader([line], delimiter="\t", quotechar='"'))


def _lines(fh: Iterable[str]) -> Iterator[tuple[int, str]]:
    for n, line in enumerate(fh, start=1):
        yield n, line.rstrip("\r\n")
