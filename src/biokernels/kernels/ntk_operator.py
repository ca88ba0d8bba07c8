"""The NTK Gram of (drug, cell line) pairs as a matrix-free operator.

Sample ``i = (d_i, c_i)`` of the virtual drug screen has features
``x_i = [drug_{d_i} | cell_{c_i}]`` (Radhakrishnan et al. 2023, Methods
"Details for virtual drug screening"). The NTK of :mod:`biokernels.kernels.ntk`
depends on the features only through inner products and norms, and
``<x_i, x_j> = <drug_{d_i}, drug_{d_j}> + <cell_{c_i}, cell_{c_j}>``, so
:class:`PairNTKOperator` computes any block ``K[I, J]`` on the fly and never
forms the n x n matrix: it gives blocks, column panels ``K[:, J]`` and
products ``K[rows, :] @ V`` streamed over row blocks, in memory set by a
budget in bytes, not by n.

Notes: docs/kernels_notes.md, section "Pair NTK operator (kernels/ntk_operator)".
"""

from __future__ import annotations

import numpy as np
import torch

from biokernels.kernels.ntk import B_STD, W_STD, _all_finite, _check_params, _layer1, _ntk_block_
from biokernels.kernels.operator_base import RowBlockedOperator

ArrayLike = np.ndarray | torch.Tensor


def _index(idx, size: int, device: torch.device, name: str) -> torch.Tensor:
    t = torch.as_tensor(idx, device=device)
    if t.ndim != 1 or t.dtype.is_floating_point or t.dtype == torch.bool or t.is_complex():
        raise ValueError(f"{name}: expected a 1-D int array, got {t.dtype} shape {tuple(t.shape)}")
    t = t.long()
    if t.numel() and (int(t.min()) < 0 or int(t.max()) >= size):
        raise ValueError(f"{name}: index out of range [0, {size}): min {int(t.min())}, max {int(t.max())}")
    return t


class PairNTKOperator(RowBlockedOperator):
    """``K[i, j] = NTK(x_i, x_j)`` over n (drug, cell line) pairs, never formed.

    Parameters
    ----------
    D : array-like, shape (n_drugs, p_d)
        Drug features (the project uses unit-norm fingerprints).
    C : array-like, shape (n_cells, p_c)
        Cell-line features (unit-norm centred control profiles).
    pairs : pair of int arrays, each shape (n,)
        ``(drug_index, cell_index)`` of the n samples (rows of D and C).
    w_std, b_std, fan_in : float
        Kernel parameters of :func:`biokernels.kernels.ntk.ntk_relu`.
    dtype : torch.float32 or torch.float64
        Precision of the kernel evaluation (float32 is the storage precision
        of the source model; solvers accumulate in float64).
    device : torch.device or str, optional
        Default: the CPU.
    block_bytes : int
        Budget of one row block's scratch: a block of b rows against m
        columns holds ``3 * b * m`` entries (the block and two scratch
        buffers), so ``b = block_bytes // (3 * m * itemsize)`` (at least 1).
    gram_budget_bytes : int
        Cache the drug Gram (``n_drugs^2`` entries) when it fits this budget;
        otherwise drug inner products are GEMMs of the gathered features.

    Raises
    ------
    ValueError
        Features not 2-D or not finite, indices not 1-D ints or out of
        range, drug and cell index lengths differ, bad kernel parameters or
        dtype.

    Source: inner products of concatenated features; NTK of
    :mod:`biokernels.kernels.ntk` (Jacot et al. 2018; Arora et al. 2019,
    Eq. 8-10). The design of streaming kernel blocks through products with
    many right-hand sides follows Falkon (Meanti et al. 2020, Sec. 3) and
    KeOps' matrix-free reductions (Charlier et al. 2021).
    """

    _buffers = 3  # a block and two scratch blocks

    def __init__(self, D: ArrayLike, C: ArrayLike, pairs, *, w_std: float = W_STD, b_std: float = B_STD,
                 fan_in: float | None = None, dtype: torch.dtype = torch.float32, device=None,
                 block_bytes: int = 256 * 2**20, gram_budget_bytes: int = 1 * 2**30):
        self.w2, self.b2, self.fan_in = _check_params(w_std, b_std, fan_in)
        if dtype not in (torch.float32, torch.float64):
            raise ValueError(f"dtype must be torch.float32 or torch.float64, got {dtype}")
        if not (isinstance(block_bytes, (int, np.integer)) and block_bytes >= 1):
            raise ValueError(f"block_bytes must be an int >= 1, got {block_bytes!r}")
        self.dtype, self.device = dtype, torch.device(device) if device is not None else torch.device("cpu")
        self.block_bytes = int(block_bytes)
        feats = []
        for A, name in ((D, "D (drug features)"), (C, "C (cell features)")):
            if isinstance(A, np.ndarray) and not A.flags.writeable:
                A = np.array(A)  # torch warns on read-only arrays (the features are small: copy)
            T = torch.as_tensor(A, dtype=dtype, device=self.device)
            if T.ndim != 2:
                raise ValueError(f"{name}: expected a 2-D array, got shape {tuple(T.shape)}")
            if not _all_finite(T):
                raise ValueError(f"{name} holds NaN or infinite values")
            feats.append(T.contiguous())
        self.D, self.C = feats
        if not (isinstance(pairs, (tuple, list)) and len(pairs) == 2):
            raise ValueError("pairs: expected (drug_index, cell_index), two int arrays")
        self.pd = _index(pairs[0], self.D.shape[0], self.device, "pairs (drug index)")
        self.pc = _index(pairs[1], self.C.shape[0], self.device, "pairs (cell index)")
        if self.pd.shape != self.pc.shape:
            raise ValueError(f"pairs: drug and cell index lengths differ ({self.pd.numel()} vs {self.pc.numel()})")
        self.Gc = self.C @ self.C.T
        itemsize = torch.finfo(dtype).bits // 8
        self.Gd = self.D @ self.D.T if self.D.shape[0] ** 2 * itemsize <= gram_budget_bytes else None
        sq_d = self.Gd.diagonal() if self.Gd is not None else self.D.square().sum(1)
        self.sq_d, self.sq_c = sq_d.clone(), self.Gc.diagonal().clone()
        self._all_columns = None

    # ------------------------------------------------------------------ basics

    @property
    def n(self) -> int:
        """Number of samples (pairs)."""
        return int(self.pd.numel())

    def _s_diag(self, d: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        return _layer1(self.sq_d[d] + self.sq_c[c], self.w2, self.b2, self.fan_in)

    def diag(self, rows: ArrayLike | slice | None = None) -> torch.Tensor:
        """``K[i, i]`` of the pairs ``rows`` (positions into the n pairs;
        default all), shape (len(rows),), in closed form: ``NTK(x, x) =
        b^2 + w^2 S(x, x)`` (theta = 0 in the module formula of
        :mod:`biokernels.kernels.ntk`)."""
        d, c = self._take(rows)
        return self._s_diag(d, c) * self.w2 + self.b2

    def _take(self, rows) -> tuple[torch.Tensor, torch.Tensor]:
        if rows is None:
            return self.pd, self.pc
        if isinstance(rows, slice):
            return self.pd[rows], self.pc[rows]
        r = _index(rows, self.n, self.device, "rows")
        return self.pd[r], self.pc[r]

    def _drug_ip(self, d_rows: torch.Tensor, d_cols: torch.Tensor, out: torch.Tensor) -> None:
        if self.Gd is not None:
            torch.index_select(self.Gd.index_select(0, d_rows), 1, d_cols, out=out)
        else:
            torch.mm(self.D.index_select(0, d_rows), self.D.index_select(0, d_cols).T, out=out)
            # a drug against itself gets exactly its squared norm (a GEMM may differ in the last bit, and
            # the NTK's sqrt(S_xx S_zz - S^2) turns that into sqrt(eps) on the diagonal)
            same = d_rows[:, None] == d_cols[None, :]
            out.copy_(torch.where(same, self.sq_d[d_rows][:, None], out))

    # ------------------------------------------------------------------ blocks

    def kernel(self, rows, cols, *, row_pairs=None, col_pairs=None) -> torch.Tensor:
        """The block ``K[rows, cols]`` (positions into the n pairs), or of
        other pairs of the same drugs and cells given as ``row_pairs`` /
        ``col_pairs`` = ``(drug_index, cell_index)`` (e.g. test pairs).

        Returns
        -------
        torch.Tensor, shape (len(rows), len(cols)), the operator's dtype and
        device. Memory: the block plus two scratch blocks of its size.
        """
        rd, rc = self._pairs_arg(rows, row_pairs, "row_pairs")
        cd, cc = self._pairs_arg(cols, col_pairs, "col_pairs")
        out = torch.empty((rd.numel(), cd.numel()), dtype=self.dtype, device=self.device)
        t1, t2 = torch.empty_like(out), torch.empty_like(out)
        self._fill(out, rd, rc, cd, cc, self._s_diag(rd, rc), self._s_diag(cd, cc), t1, t2)
        return out

    def _pairs_arg(self, pos, pairs, name):
        if pairs is None:
            return self._take(pos)
        if not (isinstance(pairs, (tuple, list)) and len(pairs) == 2):
            raise ValueError(f"{name}: expected (drug_index, cell_index)")
        d = _index(pairs[0], self.D.shape[0], self.device, f"{name} (drug index)")
        c = _index(pairs[1], self.C.shape[0], self.device, f"{name} (cell index)")
        if d.shape != c.shape:
            raise ValueError(f"{name}: drug and cell index lengths differ ({d.numel()} vs {c.numel()})")
        return d, c

    def _fill(self, out, rd, rc, cd, cc, sx, sz, t1, t2) -> None:
        """``out <- NTK`` of rows (rd, rc) against columns (cd, cc); t1, t2
        scratch of out's shape."""
        self._drug_ip(rd, cd, out)
        torch.index_select(self.Gc.index_select(0, rc), 1, cc, out=t1)
        out.add_(t1)
        _ntk_block_(out, sx, sz, self.w2, self.b2, self.fan_in, t1, t2)

    def panel(self, cols) -> "ColumnPanel":
        """A :class:`ColumnPanel` for the fixed columns ``cols`` (e.g.
        Nystrom centres), which evaluates ``K[rows, cols]`` block by block."""
        return ColumnPanel(self, cols)

    def _full_rows(self, blk: slice) -> torch.Tensor:
        """``K[blk, :]`` for :meth:`matmul`, from one panel of all columns
        (kept: CG calls matmul once per iteration)."""
        if self._all_columns is None:
            self._all_columns = self.panel(None)
        return self._all_columns.rows(blk)


class ColumnPanel:
    """``K[:, J]`` for fixed columns J, evaluated block of rows by block of
    rows (see :meth:`PairNTKOperator.panel`); the column-side data (indices,
    layer-1 norms) are prepared once.

    Parameters
    ----------
    op : PairNTKOperator
    cols : int array (m,) of positions into the operator's pairs, or None
        for all n columns.
    """

    def __init__(self, op: PairNTKOperator, cols):
        self.op = op
        self.cd, self.cc = op._take(cols)
        self.sz = op._s_diag(self.cd, self.cc)
        self.m = int(self.cd.numel())
        b = op.block_rows(self.m)
        self._buf = torch.empty(3 * min(b, op.n) * self.m, dtype=op.dtype, device=op.device)

    def rows(self, rows: slice, *, row_pairs=None) -> torch.Tensor:
        """``K[rows, J]`` (a view of a reused buffer: consume it before the
        next call), shape (len(rows), m).

        ``row_pairs`` = ``(drug_index, cell_index)`` evaluates other pairs
        (test pairs) against the same columns; then ``rows`` only sets the
        block size, and must match ``len(row_pairs[0])``.
        """
        op = self.op
        if row_pairs is None:
            rd, rc = op.pd[rows], op.pc[rows]
        else:
            rd, rc = op._pairs_arg(None, row_pairs, "row_pairs")
        b = rd.numel()
        need = 3 * b * self.m
        if need > self._buf.numel():
            self._buf = torch.empty(need, dtype=op.dtype, device=op.device)
        out, t1, t2 = (self._buf[k * b * self.m:(k + 1) * b * self.m].view(b, self.m) for k in range(3))
        op._fill(out, rd, rc, self.cd, self.cc, op._s_diag(rd, rc), self.sz, t1, t2)
        return out


__all__ = ["PairNTKOperator", "ColumnPanel"]
