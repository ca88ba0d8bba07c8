"""IDX reading (io/idx.py): written by hand here, read back; damage named;
Fashion-MNIST's published counts on the real files when Debian's package is
installed."""

from __future__ import annotations

import gzip
import hashlib
import struct
from pathlib import Path

import numpy as np
import pytest

from biokernels.errors import InputError
from biokernels.io.idx import FASHION_MNIST_FILES, read_fashion_mnist, read_idx

DEBIAN = Path("/usr/share/datasets/fashion-mnist")


def _idx_bytes(a: np.ndarray) -> bytes:
    code = {np.uint8: 0x08, np.int32: 0x0C}[a.dtype.type]
    head = bytes([0, 0, code, a.ndim]) + struct.pack(f">{a.ndim}I", *a.shape)
    return head + a.astype(a.dtype.newbyteorder(">")).tobytes()


@pytest.mark.parametrize("packed", [False, True])
def test_round_trip(tmp_path, packed):
    a = np.arange(2 * 3 * 4, dtype=np.int32).reshape(2, 3, 4) - 5
    data = _idx_bytes(a)
    path = tmp_path / ("a.idx.gz" if packed else "a.idx")
    path.write_bytes(gzip.compress(data) if packed else data)
    out = read_idx(path, sha256=hashlib.sha256(data).hexdigest())
    assert out.dtype == np.int32 and np.array_equal(out, a)


@pytest.mark.parametrize("damage, match", [
    (lambda d: d[:-3], "truncated"),
    (lambda d: b"\x01" + d[1:], "not an IDX file"),
    (lambda d: d[:6], "header truncated"),
    (lambda d: d + b"\x00", "needs"),
])
def test_damage_is_named(tmp_path, damage, match):
    path = tmp_path / "bad.idx"
    path.write_bytes(damage(_idx_bytes(np.zeros((3, 2, 2), dtype=np.uint8))))
    with pytest.raises(InputError, match=match) as e:
        read_idx(path)
    assert "bad.idx" in str(e.value)


def test_a_different_file_fails_its_hash(tmp_path):
    path = tmp_path / "a.idx"
    path.write_bytes(_idx_bytes(np.zeros(4, dtype=np.uint8)))
    with pytest.raises(InputError, match="sha256"):
        read_idx(path, sha256="0" * 64)


def test_missing_folder_says_where_to_get_the_files(tmp_path):
    with pytest.raises(InputError, match="dataset-fashion-mnist"):
        read_fashion_mnist(tmp_path / "nope", "train")


@pytest.mark.skipif(not DEBIAN.is_dir(), reason="Debian's dataset-fashion-mnist is not installed")
@pytest.mark.parametrize("split, n", [("train", 60000), ("test", 10000)])
def test_real_fashion_mnist(split, n):
    # Zalando's README: 60,000 training and 10,000 test images, 28x28,
    # 10 classes in equal numbers.
    images, labels = read_fashion_mnist(DEBIAN, split)
    assert images.shape == (n, 28, 28) and images.dtype == np.uint8
    assert np.array_equal(np.bincount(labels), np.full(10, n // 10))
    assert set(FASHION_MNIST_FILES[split]) <= {p.name for p in DEBIAN.iterdir()}
