"""Downloading files with checksums, local files checked the same way,
writing files atomically, and progress lines for long jobs.

Downloads stream with :mod:`urllib.request` (``http``, ``https``, ``ftp`` and
``file`` URLs, so tests can use local files) into a temporary file next to the
destination; the checksum is verified before the file is moved into place with
:func:`os.replace`, so a destination is either the old file or the complete,
verified new one, never a partial download. A file already on this machine
(:func:`link_local`) is checked against its SHA-256 when one is given and
linked, not copied. Long downloads, checksums and matrix reads report how far
they are in the rule log (:class:`Progress`).
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import os
import re
import shutil
import tempfile
import time
import urllib.error
import urllib.request
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

from biokernels.errors import InputError

_BLOCK = 1 << 20  # bytes read per step
_HEX = {"sha256": 64, "md5": 32}
PROGRESS_EVERY_S = 30.0
"""Default seconds between two progress lines."""


def human_bytes(n: float) -> str:
    """``1536`` -> ``"1.5 KiB"`` (binary prefixes, 1 decimal above bytes)."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"  # pragma: no cover


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}h{m:02d}m" if h else f"{m}m{s:02d}s" if m else f"{s}s"


class Progress:
    """How far a long job is, logged at most every ``every_s`` seconds.

    A rule script makes one with its rule logger and passes it to the long
    call (:func:`fetch`, :func:`link_local`, :func:`sha256_file`,
    :func:`biokernels.io.gctx.iter_gctx_columns`), which calls
    :meth:`update` after each block; a line such as ``download
    https://...: 1.2 GiB of 3.4 GiB (35.3%), 85.0 MiB/s, about 27s left`` is
    logged when ``every_s`` seconds have passed since the last one, and
    :meth:`finish` logs the total and the mean rate.

    Parameters
    ----------
    log : logging.Logger or None
        Receives the lines (``info``); None: nothing is logged.
    what : str
        What is being done (start of each line).
    total : int, optional
        Units expected in all (None: unknown, no percentage or time left).
    unit : str
        ``"bytes"`` (amounts shown in KiB/MiB/GiB) or a count's name
        (``"columns"``, ``"blocks"``).
    every_s : float
        Seconds between two lines (0: a line per update).
    clock : callable
        Seconds as a float (``time.monotonic``; tests pass their own).
    """

    def __init__(self, log, what: str, total: int | None = None, unit: str = "bytes",
                 every_s: float = PROGRESS_EVERY_S, clock: Callable[[], float] = time.monotonic):
        self.log, self.what, self.total, self.unit, self.every_s = log, what, total, unit, float(every_s)
        self.clock = clock
        self.done = 0
        self.nbytes = 0
        self.lines = 0
        self.start = self.last = clock()

    def _amount(self, n: float) -> str:
        return human_bytes(n) if self.unit == "bytes" else f"{int(n):,} {self.unit}"

    def _rate(self, per_s: float) -> str:
        if self.unit == "bytes":
            return f"{human_bytes(per_s)}/s"
        return f"{per_s:,.0f} {self.unit}/s" if per_s >= 100 else f"{per_s:.3g} {self.unit}/s"

    def _emit(self, text: str) -> None:
        self.lines += 1
        if self.log is not None:
            self.log.info("%s", text)

    def line(self, now: float | None = None) -> str:
        """The progress line at time ``now`` (default the clock's; nothing logged)."""
        elapsed = max((self.clock() if now is None else now) - self.start, 1e-9)
        rate = self.done / elapsed
        text = f"{self.what}: {self._amount(self.done)}"
        if self.total:
            text += f" of {self._amount(self.total)} ({100 * self.done / self.total:.1f}%)"
        if self.unit != "bytes" and self.nbytes:
            text += f", {human_bytes(self.nbytes)}"
        text += f", {self._rate(rate)}"
        if self.total and rate > 0 and self.done < self.total:
            text += f", about {_duration((self.total - self.done) / rate)} left"
        return text

    def update(self, n: int = 1, nbytes: int | None = None) -> None:
        """Add ``n`` units done (and ``nbytes`` bytes read, for count units);
        log a line when ``every_s`` seconds have passed since the last."""
        self.done += int(n)
        if nbytes is not None:
            self.nbytes += int(nbytes)
        now = self.clock()
        if now - self.last >= self.every_s:
            self.last = now
            self._emit(self.line(now))

    def finish(self) -> None:
        """Log the total done, the time taken and the mean rate."""
        elapsed = self.clock() - self.start
        text = f"{self.what}: done, {self._amount(self.done)}"
        if self.unit != "bytes" and self.nbytes:
            text += f" ({human_bytes(self.nbytes)})"
        text += f" in {_duration(elapsed)}"
        if elapsed > 0:
            text += f" ({self._rate(self.done / elapsed)})"
        self._emit(text)


def _new_hash(algorithm: str):
    if algorithm == "md5":
        # MD5 is a checksum here, not security (usedforsecurity: FIPS builds).
        return hashlib.md5(usedforsecurity=False)
    return hashlib.new(algorithm)


def _file_digest(path: str | Path, algorithm: str, progress: Progress | None = None) -> str:
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: expected a file to checksum, found {'a folder' if path.is_dir() else 'nothing'}")
    with open(path, "rb") as handle:
        if progress is None:
            return hashlib.file_digest(handle, lambda: _new_hash(algorithm)).hexdigest()
        digest = _new_hash(algorithm)
        while block := handle.read(_BLOCK * 8):
            digest.update(block)
            progress.update(len(block))
        progress.finish()
        return digest.hexdigest()


def sha256_file(path: str | Path, progress: Progress | None = None) -> str:
    """SHA-256 of a file's bytes, read in blocks (:func:`hashlib.file_digest`;
    8 MiB blocks reported to ``progress`` when one is given).

    Returns
    -------
    str
        64 lower-case hex digits.

    Raises
    ------
    InputError
        If ``path`` is not a file.
    """
    return _file_digest(path, "sha256", progress)


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


def _download(url: str, target: Path, algorithms: list[str], timeout: float, log=None,
              progress_every: float = PROGRESS_EVERY_S) -> dict[str, str]:
    """Stream ``url`` into ``target``; return the digests of the bytes."""
    hashes = {a: _new_hash(a) for a in algorithms}
    request = urllib.request.Request(url, headers={"User-Agent": "biokernels"})
    received = 0
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response, open(target, "wb") as out:
            length = response.headers.get("Content-Length")
            progress = Progress(log, f"download {url}", int(length) if length and length.isdigit() else None,
                                every_s=progress_every)
            while block := response.read(_BLOCK):
                out.write(block)
                received += len(block)
                for h in hashes.values():
                    h.update(block)
                progress.update(len(block))
            progress.finish()
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
          gunzip: bool = False, timeout: float = 60, log=None, progress_every: float = PROGRESS_EVERY_S) -> Path:
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
    log : logging.Logger, optional
        Receives a :class:`Progress` line (bytes received of the
        Content-Length, rate, time left) every ``progress_every`` seconds
        and one at the end.
    progress_every : float
        Seconds between two progress lines.

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
            actual = _download(url, raw, list(expected), timeout, log, progress_every)
            for algorithm, digest in expected.items():
                if actual[algorithm] != digest:
                    raise InputError(f"{url}: {algorithm} mismatch: expected {digest}, got {actual[algorithm]}")
            if gunzip:
                _gunzip(raw, part, url)
        finally:
            if gunzip:
                raw.unlink(missing_ok=True)
    return dest


def link_local(source: str | Path, dest: str | Path, sha256: str | None = None, log=None,
               progress_every: float = PROGRESS_EVERY_S) -> Path:
    """Make a file on this machine an input: check its SHA-256 when one is
    given, then link it at ``dest`` (a symbolic link to its absolute path,
    made atomically; the bytes are neither copied nor changed).

    The counterpart of :func:`fetch` for data already downloaded (e.g. the
    35 GB CMap LINCS 2020 level-5 matrix on a shared disk): the same
    checksum rule, the same readers behind ``dest``.

    Parameters
    ----------
    source : path
        The file (relative paths are taken from the working directory).
    dest : path
        Link to create or replace; missing parent folders are created.
    sha256 : str, optional
        Expected SHA-256 (64 hex digits); None: not checked.
    log : logging.Logger, optional
        Receives the checksum's :class:`Progress` lines (bytes hashed, rate,
        time left) every ``progress_every`` seconds.
    progress_every : float
        Seconds between two progress lines.

    Returns
    -------
    Path
        ``dest``.

    Raises
    ------
    InputError
        If ``source`` is missing or a folder, ``sha256`` is not 64 hex
        digits, or the file's SHA-256 differs (both digests named; ``dest``
        is then left as it was).
    """
    source, dest = Path(source).absolute(), Path(dest)
    if not source.is_file():
        raise InputError(f"{source}: expected a local file, found {'a folder' if source.is_dir() else 'nothing'}")
    expected = _expected_digests(str(source), sha256, None)
    if expected:
        progress = Progress(log, f"sha256 {source}", source.stat().st_size, every_s=progress_every)
        actual = _file_digest(source, "sha256", progress)
        if actual != expected["sha256"]:
            raise InputError(f"{source}: sha256 mismatch: expected {expected['sha256']}, got {actual}")
    if dest.is_dir() and not dest.is_symlink():
        raise InputError(f"{dest}: expected a file path to write, found a folder")
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.link")
    tmp.unlink(missing_ok=True)
    os.symlink(source, tmp)
    try:
        os.replace(tmp, dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return dest
