"""Downloading files with checksums, and writing files atomically.

Downloads stream with :mod:`urllib.request` (``http``, ``https``, ``ftp`` and
``file`` URLs, so tests can use local files) into a temporary file next to the
destination; the checksum is verified before the file is moved into place with
:func:`os.replace`, so a destination is either the old file or the complete,
verified new one, never a partial download.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import os
import re
import shutil
import tempfile
import urllib.error
import urllib.request
import zlib
from collections.abc import Iterator
from pathlib import Path

from biokernels.errors import InputError

_BLOCK = 1 << 20  # bytes read per step
_HEX = {"sha256": 64, "md5": 32}


def _new_hash(algorithm: str):
    if algorithm == "md5":
        # MD5 is a checksum here, not security (usedforsecurity: FIPS builds).
        return hashlib.md5(usedforsecurity=False)
    return hashlib.new(algorithm)


def _file_digest(path: str | Path, algorithm: str) -> str:
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: expected a file to checksum, found {'a folder' if path.is_dir() else 'nothing'}")
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, lambda: _new_hash(algorithm)).hexdigest()


def sha256_file(path: str | Path) -> str:
    """SHA-256 of a file's bytes, read in blocks (:func:`hashlib.file_digest`).

    Returns
    -------
    str
        64 lower-case hex digits.

    Raises
    ------
    InputError
        If ``path`` is not a file.
    """
    return _file_digest(path, "sha256")


def md5_file(path: str | Path) -> str:
    """MD5 of a file's bytes (as published by GEO, figshare, Zenodo), read in
    blocks (:func:`hashlib.file_digest`).

    Returns
    -------
    str
        32 lower-case hex digits.

    Raises
    ------
    InputError
        If ``path`` is not a file.
    """
    return _file_digest(path, "md5")


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_destination(dest: str | Path) -> Iterator[Path]:
    """Give a temporary path next to ``dest``; move it onto ``dest`` on success.

    The temporary file is created in ``dest``'s folder (so :func:`os.replace`
    is an atomic rename on the same file system) and gets the permissions a
    newly created file would get (``0o666`` less the umask). If the ``with``
    block raises, the temporary file is removed and ``dest`` is left as it
    was.

    Yields
    ------
    Path
        An empty temporary file to write (it may be overwritten or truncated).
    """
    dest = Path(dest)
    if dest.is_dir():
        raise InputError(f"{dest}: expected a file path to write, found a folder")
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".part")
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        os.chmod(tmp, 0o666 & ~_current_umask())
        os.replace(tmp, dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _expected_digests(url: str, sha256: str | None, md5: str | None) -> dict[str, str]:
    expected = {}
    for algorithm, value in (("sha256", sha256), ("md5", md5)):
        if value is None:
            continue
        digest = str(value).strip().lower()
        if not re.fullmatch(rf"[0-9a-f]{{{_HEX[algorithm]}}}", digest):
            raise InputError(f"{url}: expected {algorithm} as {_HEX[algorithm]} hex digits, got {value!r}")
        expected[algorithm] = digest
    return expected


def _download(url: str, target: Path, algorithms: list[str], timeout: float) -> dict[str, str]:
    """Stream ``url`` into ``target``; return the digests of the bytes."""
    hashes = {a: _new_hash(a) for a in algorithms}
    request = urllib.request.Request(url, headers={"User-Agent": "biokernels"})
    received = 0
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response, open(target, "wb") as out:
            length = response.headers.get("Content-Length")
            while block := response.read(_BLOCK):
                out.write(block)
                received += len(block)
                for h in hashes.values():
                    h.update(block)
    except urllib.error.HTTPError as err:
        raise InputError(f"cannot download {url}: HTTP {err.code} {err.reason}") from None
    except urllib.error.URLError as err:
        raise InputError(f"cannot download {url}: {err.reason}") from None
    except (OSError, ValueError) as err:  # timeouts, resets, unknown URL types
        raise InputError(f"cannot download {url}: {err}") from None
    if length is not None and length.isdigit() and int(length) != received:
        raise InputError(f"cannot download {url}: incomplete, got {received} of {length} bytes")
    return {a: h.hexdigest() for a, h in hashes.items()}


def _gunzip(source: Path, target: Path, url: str) -> None:
    try:
        with gzip.open(source, "rb") as src, open(target, "wb") as out:
            shutil.copyfileobj(src, out, _BLOCK)
    except (gzip.BadGzipFile, EOFError, zlib.error) as err:
        raise InputError(f"{url}: cannot gunzip the download: {err}") from None


def fetch(url: str, dest: str | Path, sha256: str | None = None, md5: str | None = None,
          gunzip: bool = False, timeout: float = 60) -> Path:
    """Download ``url`` to ``dest`` atomically, verifying its checksum.

    The bytes stream (1 MiB blocks, :func:`urllib.request.urlopen`) into a
    temporary file in ``dest``'s folder while being hashed; on a checksum
    mismatch the temporary file is removed and ``dest`` is untouched.
    With ``gunzip`` the checksum is that of the downloaded (compressed) bytes,
    as published, and the verified download is decompressed to ``dest``.

    Parameters
    ----------
    url : str
        ``http(s)://``, ``ftp://`` or ``file://`` URL.
    dest : path
        File to create or replace; missing parent folders are created.
    sha256, md5 : str, optional
        Expected hex digest(s) of the downloaded bytes; both are checked when
        both are given.
    gunzip : bool
        Decompress the (verified) gzip download into ``dest``.
    timeout : float
        Seconds to wait for the connection and for each read.

    Returns
    -------
    Path
        ``dest``.

    Notes
    -----
    If ``dest`` already exists and matches every given checksum (and
    ``gunzip`` is false), nothing is downloaded and ``dest`` is not touched.
    Without a checksum, or with ``gunzip`` (the checksum describes the
    compressed bytes, which are not kept), an existing ``dest`` cannot be
    verified and is downloaded again.

    Raises
    ------
    InputError
        If a checksum is not hex of the right length, the URL cannot be opened
        or read (missing file, HTTP error, timeout; the URL and reason are
        named), the download is shorter than its Content-Length, a checksum
        does not match (the URL, expected and actual digests are named), or
        the download is not valid gzip when ``gunzip`` is set.
    """
    dest = Path(dest)
    expected = _expected_digests(url, sha256, md5)
    if expected and not gunzip and dest.is_file():
        if all(_file_digest(dest, a) == d for a, d in expected.items()):
            return dest
    with atomic_destination(dest) as part:
        raw = part if not gunzip else part.with_name(part.name + ".gz")
        try:
            actual = _download(url, raw, list(expected), timeout)
            for algorithm, digest in expected.items():
                if actual[algorithm] != digest:
                    raise InputError(f"{url}: {algorithm} mismatch: expected {digest}, got {actual[algorithm]}")
            if gunzip:
                _gunzip(raw, part, url)
        finally:
            if gunzip:
                raw.unlink(missing_ok=True)
    return dest
