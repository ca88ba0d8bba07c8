"""Shared pieces of the synthetic CMAP screen: the synthetic id formats,
the keys of the independent random streams
(:func:`biokernels.seeds.make_rng`: ``numpy.random.default_rng([seed,
STREAM, ...])``) and a stable string hash. Seeds are checked by
:func:`biokernels.seeds.check_seed`."""

from __future__ import annotations

import hashlib

PERT_ID_FORMAT = "BRD-SYN{:05d}"
CELL_ID_FORMAT = "SYN{:03d}"

# Independent random streams: numpy.random.default_rng([seed, STREAM, ...]).
_S_DRUG, _S_CELL, _S_GENE, _S_CELLSPEC, _S_VIAB, _S_VIAB_CELL, _S_VIAB_NOISE = 1, 2, 3, 4, 5, 6, 7
_S_GENEINFO, _S_CONTROLS, _S_DESIGN, _S_DRUGPICK, _S_WRITE = 11, 12, 13, 14, 15


def _stable_hash(text: str) -> int:
    """64-bit integer from the SHA-256 of ``text`` (stable across runs and
    platforms, unlike ``hash``)."""
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")
