"""What every matrix-free kernel operator shares: its size, and the split of
its rows into blocks that fit a memory budget (``block_bytes``). Subclasses
set ``n``, ``dtype``, ``block_bytes``, ``_buffers`` (the blocks of a row
block's size held at once) and ``_full_rows`` (one row block of K); the
streamed product :meth:`RowBlockedOperator.matmul` is shared."""

from __future__ import annotations

import torch

__all__ = ["RowBlockedOperator"]


class RowBlockedOperator:
    """Base of :class:`~biokernels.kernels.ntk_operator.PairNTKOperator` and
    :class:`~biokernels.kernels.feature_operator.FeatureKernelOperator`."""

    _buffers = 1

    @property
    def n(self) -> int:  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    @property
    def shape(self) -> tuple[int, int]:
        return self.n, self.n

    @property
    def itemsize(self) -> int:
        return torch.finfo(self.dtype).bits // 8

    def block_rows(self, m: int) -> int:
        """Rows per block against m columns within ``block_bytes``."""
        return max(1, self.block_bytes // max(1, self._buffers * m * self.itemsize))

    def row_blocks(self, start: int = 0, stop: int | None = None, m: int | None = None):
        """Yield ``slice`` objects of consecutive rows in ``[start, stop)``,
        each of :meth:`block_rows` ``(m)`` rows (m: the column count, default n)."""
        stop = self.n if stop is None else stop
        b = self.block_rows(self.n if m is None else m)
        for s in range(start, stop, b):
            yield slice(s, min(s + b, stop))

    def matmul(self, V: torch.Tensor, rows: slice | None = None, out: torch.Tensor | None = None,
               col_chunk: int | None = None) -> torch.Tensor:
        """``K[rows, :] @ V`` streamed over row blocks, never forming more than
        one block of K. V (n, c) on the operator's device, any float dtype (the
        products run in V's dtype); ``rows`` consecutive rows (default all: one
        process's share in a distributed product). Returns (len(rows), c).
        Raises ValueError for V of the wrong shape."""
        if V.ndim != 2 or V.shape[0] != self.n:
            raise ValueError(f"V: expected shape ({self.n}, c), got {tuple(V.shape)}")
        rows = rows or slice(0, self.n)
        r0, r1 = rows.start or 0, self.n if rows.stop is None else rows.stop
        if out is None:
            out = torch.empty((r1 - r0, V.shape[1]), dtype=V.dtype, device=V.device)
        for blk in self.row_blocks(r0, r1):
            out[blk.start - r0:blk.stop - r0] = self._full_rows(blk).to(V.dtype) @ V
        return out

    def _full_rows(self, blk: slice) -> torch.Tensor:  # pragma: no cover - every subclass defines it
        """``K[blk, :]``, one row block against every column."""
        raise NotImplementedError
