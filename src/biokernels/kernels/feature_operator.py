"""``K[i, j] = k(x_i, x_j)`` over n feature rows, never formed: the
interface of :class:`biokernels.kernels.ntk_operator.PairNTKOperator`
(``n``, ``dtype``, ``device``, ``kernel``, ``diag``, ``row_blocks``,
``panel``, ``matmul``) for any kernel callable on rows, so that the
matrix-free solvers of :mod:`biokernels.solvers.matrix_free` (Nyström, CG)
serve the images study as they serve the drug screen.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from biokernels.kernels.operator_base import RowBlockedOperator

__all__ = ["FeatureKernelOperator"]


class FeatureKernelOperator(RowBlockedOperator):
    """Kernel operator on the rows of ``X`` (n, p).

    ``kernel(A, B)`` returns the (len(A), len(B)) block as a tensor; it is
    called on rows of X on ``device`` and cast to ``dtype``. ``diag`` (an
    optional callable on rows -> (len,) tensor) gives ``k(x, x)`` without
    blocks (e.g. 1 for a Laplace kernel); otherwise it is read off diagonal
    blocks. ``block_bytes`` bounds one row block (rows × columns × itemsize).
    Raises ValueError for X not 2-D or not finite, or a bad dtype.
    """

    def __init__(self, X, kernel: Callable, *, diag: Callable | None = None, dtype: torch.dtype = torch.float32,
                 device=None, block_bytes: int = 256 * 2**20):
        if dtype not in (torch.float32, torch.float64):
            raise ValueError(f"dtype must be torch.float32 or torch.float64, got {dtype}")
        self.dtype, self.device = dtype, torch.device(device) if device is not None else torch.device("cpu")
        X = torch.as_tensor(np.asarray(X) if not isinstance(X, torch.Tensor) else X, device=self.device)
        if X.ndim != 2:
            raise ValueError(f"X: expected a 2-D array (n, p), got shape {tuple(X.shape)}")
        if not torch.isfinite(X).all():
            raise ValueError("X holds NaN or infinite values")
        self.X, self._k, self._diag = X.contiguous(), kernel, diag
        self.block_bytes = int(block_bytes)

    @property
    def n(self) -> int:
        return int(self.X.shape[0])

    def _rows(self, rows) -> torch.Tensor:
        if rows is None:
            return self.X
        if isinstance(rows, slice):
            return self.X[rows]
        return self.X[torch.as_tensor(rows, device=self.device)]

    def kernel(self, rows, cols, **_) -> torch.Tensor:
        """The block ``K[rows, cols]`` (positions, a slice or None for all)."""
        return self._k(self._rows(rows), self._rows(cols)).to(self.dtype)

    def kernel_rows(self, Z, cols=None) -> torch.Tensor:
        """``k(Z, X[cols])`` for new rows Z (e.g. test rows)."""
        Z = torch.as_tensor(Z, device=self.device)
        return self._k(Z, self._rows(cols)).to(self.dtype)

    def diag(self, rows=None) -> torch.Tensor:
        """``k(x_i, x_i)`` of ``rows``."""
        R = self._rows(rows)
        if self._diag is not None:
            return torch.as_tensor(self._diag(R), device=self.device).to(self.dtype)
        b = max(1, min(1024, R.shape[0]))
        return torch.cat([self._k(R[s:s + b], R[s:s + b]).diagonal().to(self.dtype)
                          for s in range(0, R.shape[0], b)])

    def panel(self, cols) -> "_Panel":
        """``K[:, cols]`` evaluated block of rows by block of rows."""
        return _Panel(self, cols)

    def _full_rows(self, blk: slice) -> torch.Tensor:
        return self.kernel(blk, None)


class _Panel:
    def __init__(self, op: FeatureKernelOperator, cols):
        self.op, self.C = op, op._rows(cols)
        self.m = int(self.C.shape[0])

    def rows(self, rows: slice, **_) -> torch.Tensor:
        return self.op._k(self.op.X[rows], self.C).to(self.op.dtype)
