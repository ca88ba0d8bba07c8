"""IDX files (LeCun's MNIST format; Fashion-MNIST uses it too), plain or
compressed, and the Fashion-MNIST set read from a folder of its four files.

Format (http://yann.lecun.com/exdb/mnist/, "FILE FORMATS"): a big-endian
magic ``0x0000TTDD`` (TT the element type, 0x08 = unsigned byte; DD the number
of dimensions), DD big-endian uint32 sizes, then the elements in C order. No
maintained PyPI reader exists (``idx2numpy`` last released 2020); this one is
numpy's ``frombuffer`` with the header checked.

Fashion-MNIST's payload hashes (:data:`FASHION_MNIST_SHA256`) are of the
decompressed IDX bytes, so the same data packed by Zalando and by Debian's
``dataset-fashion-mnist`` (recompressed, other gzip headers) both pass.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from biokernels.errors import InputError
from biokernels.io.opener import open_binary

__all__ = ["read_idx", "read_fashion_mnist", "FASHION_MNIST_FILES", "FASHION_MNIST_SHA256"]

_TYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: np.dtype(">i2"), 0x0C: np.dtype(">i4"),
          0x0D: np.dtype(">f4"), 0x0E: np.dtype(">f8")}

#: split -> (images file, labels file), as Zalando and Debian name them.
FASHION_MNIST_FILES = {
    "train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
    "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"),
}
#: sha256 of each file's decompressed IDX payload (read off Debian's
#: dataset-fashion-mnist 0.0~git20200523.55506a9-1: 60,000 + 10,000 images).
FASHION_MNIST_SHA256 = {
    "train-images-idx3-ubyte.gz": "c59f468a2f672dc815687fe0f83887768d799fd8a3f3276145d20f83aa44d888",
    "train-labels-idx1-ubyte.gz": "bad3541b69d912435c50bb6ba87bec294ff4f6a2e1246121d8633921760443d9",
    "t10k-images-idx3-ubyte.gz": "5b4141f0afbad91edebe8549f8fcffe087ea10ca49f1dbef5c9a5cd8815ce37b",
    "t10k-labels-idx1-ubyte.gz": "0402a96d92fd2663957122ceb108a494c5af83dab82d92729df917d7dec38c34",
}


def read_idx(path: str | Path, sha256: str | None = None) -> np.ndarray:
    """The array of one IDX file (gzip or plain), in its stored dtype.

    Raises InputError naming the file for a missing file, a bad magic number,
    a truncated or overlong payload, or (with ``sha256``) a payload whose
    hash differs.
    """
    with open_binary(path) as fh:
        data = fh.read()
    if sha256 is not None:
        got = hashlib.sha256(data).hexdigest()
        if got != sha256:
            raise InputError(f"{path}: sha256 of the decompressed IDX data is {got}, expected {sha256} "
                             "(a different or damaged file)")
    if len(data) < 4 or data[0] != 0 or data[1] != 0 or data[2] not in _TYPES or data[3] == 0:
        raise InputError(f"{path}: not an IDX file (expected magic bytes 00 00 <type> <ndim>, "
                         f"got {data[:4].hex(' ') or 'nothing'})")
    ndim, dtype = data[3], np.dtype(_TYPES[data[2]])
    header = 4 + 4 * ndim
    if len(data) < header:
        raise InputError(f"{path}: IDX header truncated ({len(data)} bytes, need {header})")
    shape = tuple(int(v) for v in np.frombuffer(data, dtype=">u4", count=ndim, offset=4))
    need = header + int(np.prod(shape)) * dtype.itemsize
    if len(data) != need:
        raise InputError(f"{path}: IDX payload of shape {shape} needs {need} bytes, the file has {len(data)} "
                         "(truncated or not an IDX file)")
    return np.frombuffer(data, dtype=dtype, offset=header).reshape(shape).astype(dtype.newbyteorder("="))


def read_fashion_mnist(folder: str | Path, split: str, verify: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Images (n, 28, 28) uint8 and labels (n,) int64 of split "train" or "test".

    Raises InputError for a missing folder or file, a failed hash (``verify``),
    or images and labels of different counts or labels outside 0-9.
    """
    if split not in FASHION_MNIST_FILES:
        raise ValueError(f"split: expected one of {list(FASHION_MNIST_FILES)}, got {split!r}")
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(f"{folder}: no such folder (expected the four Fashion-MNIST files; on Debian: "
                         "apt install dataset-fashion-mnist, then /usr/share/datasets/fashion-mnist)")
    names = FASHION_MNIST_FILES[split]
    arrays = [read_idx(folder / n, FASHION_MNIST_SHA256[n] if verify else None) for n in names]
    images, labels = arrays[0], arrays[1].astype(np.int64)
    if images.ndim != 3 or labels.ndim != 1 or images.shape[0] != labels.shape[0]:
        raise InputError(f"{folder}: {names[0]} has shape {images.shape} but {names[1]} {labels.shape}; "
                         "expected (n, h, w) images and n labels")
    if labels.size and (labels.min() < 0 or labels.max() > 9):
        raise InputError(f"{folder / names[1]}: labels outside 0-9")
    return images, labels
