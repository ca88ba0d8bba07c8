"""Checksummed, atomic downloads (biokernels.io.download), with file:// URLs only."""

import gzip
import hashlib
import os

import pytest

from biokernels.io.download import fetch, md5_file, sha256_file
from biokernels.errors import InputError

PAYLOAD = b"gene\tscore\nTP53\t1.5\n" * 1000


@pytest.fixture
def source(tmp_path):
    src = tmp_path / "src" / "table.tsv"
    src.parent.mkdir()
    src.write_bytes(PAYLOAD)
    return src


def _out_dir(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    return out


def test_digest_helpers_match_known_vectors(tmp_path):
    # FIPS 180-2 / RFC 1321 test vectors for b"abc".
    f = tmp_path / "abc"
    f.write_bytes(b"abc")
    assert sha256_file(f) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert md5_file(f) == "900150983cd24fb0d6963f7d28e17f72"
    with pytest.raises(InputError, match="expected a file to checksum"):
        sha256_file(tmp_path / "nothing")


def test_good_checksums(tmp_path, source):
    out = _out_dir(tmp_path)
    dest = fetch(source.as_uri(), out / "sub" / "table.tsv",
                 sha256=hashlib.sha256(PAYLOAD).hexdigest().upper(), md5=hashlib.md5(PAYLOAD).hexdigest())
    assert dest == out / "sub" / "table.tsv" and dest.read_bytes() == PAYLOAD
    assert [p.name for p in dest.parent.iterdir()] == ["table.tsv"]  # no temporary left
    umask = os.umask(0)
    os.umask(umask)
    assert dest.stat().st_mode & 0o777 == 0o666 & ~umask  # a new file's mode, not mkstemp's 0o600


def test_bad_checksum_leaves_nothing(tmp_path, source):
    out = _out_dir(tmp_path)
    wrong = "0" * 64
    actual = hashlib.sha256(PAYLOAD).hexdigest()
    with pytest.raises(InputError, match=rf"{source.as_uri()}: sha256 mismatch: expected {wrong}, got {actual}"):
        fetch(source.as_uri(), out / "table.tsv", sha256=wrong)
    assert list(out.iterdir()) == []
    # an existing destination is left untouched
    old = out / "table.tsv"
    old.write_bytes(b"old")
    with pytest.raises(InputError, match="md5 mismatch"):
        fetch(source.as_uri(), old, md5="f" * 32)
    assert old.read_bytes() == b"old" and [p.name for p in out.iterdir()] == ["table.tsv"]


def test_gunzip_verifies_the_compressed_bytes(tmp_path, source):
    packed = tmp_path / "src" / "table.tsv.gz"
    packed.write_bytes(gzip.compress(PAYLOAD))
    out = _out_dir(tmp_path)
    digest = sha256_file(packed)
    dest = fetch(packed.as_uri(), out / "table.tsv", sha256=digest, gunzip=True)
    assert dest.read_bytes() == PAYLOAD and [p.name for p in out.iterdir()] == ["table.tsv"]
    # the checksum of the decompressed bytes is not the one asked for
    with pytest.raises(InputError, match="sha256 mismatch"):
        fetch(packed.as_uri(), out / "again.tsv", sha256=sha256_file(source), gunzip=True)
    # not gzip: clear error, nothing left
    with pytest.raises(InputError, match="cannot gunzip the download"):
        fetch(source.as_uri(), out / "plain.tsv", sha256=sha256_file(source), gunzip=True)
    assert [p.name for p in out.iterdir()] == ["table.tsv"]


def test_existing_valid_file_is_kept(tmp_path, source):
    out = _out_dir(tmp_path)
    dest = out / "table.tsv"
    dest.write_bytes(PAYLOAD)
    os.utime(dest, ns=(1_000_000_000, 1_000_000_000))
    inode = dest.stat().st_ino
    source.unlink()  # a download would now fail: success proves none was tried
    assert fetch(source.as_uri(), dest, sha256=hashlib.sha256(PAYLOAD).hexdigest()) == dest
    assert dest.stat().st_mtime_ns == 1_000_000_000 and dest.stat().st_ino == inode


def test_existing_invalid_file_is_replaced(tmp_path, source):
    out = _out_dir(tmp_path)
    dest = out / "table.tsv"
    dest.write_bytes(b"stale")
    fetch(source.as_uri(), dest, md5=hashlib.md5(PAYLOAD).hexdigest())
    assert dest.read_bytes() == PAYLOAD


def test_missing_source_and_bad_arguments(tmp_path):
    out = _out_dir(tmp_path)
    url = (tmp_path / "nope.tsv").as_uri()
    with pytest.raises(InputError, match=rf"cannot download {url}: .*No such file"):
        fetch(url, out / "x.tsv")
    with pytest.raises(InputError, match="cannot download notascheme://x"):
        fetch("notascheme://x", out / "x.tsv")
    with pytest.raises(InputError, match=r"expected sha256 as 64 hex digits, got 'abc'"):
        fetch(url, out / "x.tsv", sha256="abc")
    assert list(out.iterdir()) == []


# --------------------------------------------------------------------------- issue #18: local files, progress

def test_link_local_checks_the_sha256_when_given_and_links(tmp_path, source, monkeypatch):
    from biokernels.io.download import link_local

    good = hashlib.sha256(PAYLOAD).hexdigest()
    dest = tmp_path / "resources" / "local" / "gctx"
    assert link_local(source, dest, sha256=good) == dest
    assert dest.is_symlink() and os.readlink(dest) == str(source) and dest.read_bytes() == PAYLOAD
    # no sha256: linked unchecked; a relative path is made absolute
    monkeypatch.chdir(source.parent)
    link_local("table.tsv", tmp_path / "unchecked")
    assert os.readlink(tmp_path / "unchecked") == str(source)
    # a wrong sha256 names both digests and leaves the existing link as it was
    with pytest.raises(InputError, match=rf"table.tsv: sha256 mismatch: expected {'0' * 64}, got {good}"):
        link_local(source, dest, sha256="0" * 64)
    assert os.readlink(dest) == str(source)
    with pytest.raises(InputError, match="expected a local file, found nothing"):
        link_local(tmp_path / "missing.gctx", tmp_path / "x")
    with pytest.raises(InputError, match="expected sha256 as 64 hex digits"):
        link_local(source, tmp_path / "y", sha256="abc")
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()


def test_progress_lines_of_downloads_and_checksums(tmp_path, source, caplog):
    import logging

    from biokernels.io.download import Progress, human_bytes, link_local

    log = logging.getLogger("test_download_progress")
    with caplog.at_level(logging.INFO, logger="test_download_progress"):
        fetch(source.as_uri(), tmp_path / "a.tsv", sha256=hashlib.sha256(PAYLOAD).hexdigest(), log=log,
              progress_every=0)
    lines = [r.getMessage() for r in caplog.records]
    # one 1 MiB read holds the 20,000-byte file (19.5 KiB): one line for it (every_s 0), then the summary
    assert lines[0].startswith(f"download {source.as_uri()}: 19.5 KiB of 19.5 KiB (100.0%), ")
    assert lines[-1].startswith(f"download {source.as_uri()}: done, 19.5 KiB in ")
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="test_download_progress"):
        link_local(source, tmp_path / "b", sha256=hashlib.sha256(PAYLOAD).hexdigest(), log=log, progress_every=0)
    assert [r.getMessage().split(":")[0] for r in caplog.records] == [f"sha256 {source}"] * 2
    # the rate and time left, on a clock the test drives: 3 of 10 MiB after 2 s
    t = iter([0.0, 2.0, 2.0])
    p = Progress(None, "x", total=10 << 20, every_s=1, clock=lambda: next(t))
    p.update(3 << 20)
    assert p.lines == 1 and p.line(2.0) == "x: 3.0 MiB of 10.0 MiB (30.0%), 1.5 MiB/s, about 5s left"
    assert [human_bytes(n) for n in (0, 1023, 1024, 1536, 5 << 30)] == ["0 B", "1023 B", "1.0 KiB", "1.5 KiB",
                                                                         "5.0 GiB"]
