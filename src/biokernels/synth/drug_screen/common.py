"""Shared pieces of the synthetic CMAP screen: the synthetic id formats,
the independent random streams (``numpy.random.default_rng([seed, STREAM,
...])``), the seed check and a stable string hash."""

from __future__ import annotations

import hashlib

import numpy as np

PERT_ID_FORMAT = "BRD-SYN{:05d}"
CELL_ID_FORMAT = "SYN{:03d}"

# Independent random streams: numpy.random.default_rng([seed, STREAM, ...]).
_S_DRUG, _S_CELL, _S_GENE, _S_CELLSPEC, _S_VIAB, _S_VIAB_CELL, _S_VIAB_NOISE = 1, 2, 3, 4, 5, 6, 7
_S_GENEINFO, _S_CONTROLS, _S_DESIGN, _S_DRUGPICK, _S_WRITE = 11, 12, 13, 14, 15


def _check_seed(seed) -> int:
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    return int(seed)


def _stable_hash(text: str) -> int:
    """64-bit integer from the SHA-256 of ``text`` (stable across runs and
    platforms, unlike ``hash``)."""
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")


def _rng(seed: int, *stream: int) -> np.random.Generator:
    return np.random.default_rng([seed, *stream])
