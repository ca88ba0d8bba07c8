"""Blocked Cholesky factorisation in place and the blocked substitutions.

The exact path of :func:`~biokernels.solvers.ridge.solve_ridge`: a
right-looking blocked Cholesky (Golub & Van Loan 2013, Sec. 4.2.9) that
overwrites the lower triangle of ``K`` with extra memory O(n * block_size),
and forward/backward substitution by blocks on the factor.
"""

from __future__ import annotations

import torch

from biokernels.solvers.ridge.tensors import ArrayLike, _as_matrix, _check_block, _is_c_or_f
from biokernels.solvers.ridge_core import NotPositiveDefiniteError

__all__ = ["cholesky_inplace"]


def _cholesky_(A: torch.Tensor, nb: int, offset: float = 0.0) -> None:
    n = A.shape[0]
    for b, k in enumerate(range(0, n, nb)):
        e = min(k + nb, n)
        A11 = A[k:e, k:e]
        low = torch.tril(A11)
        sym = low + torch.tril(A11, -1).mT  # from the lower triangle only
        L11, info = torch.linalg.cholesky_ex(sym)
        info = int(info)
        if info != 0 or not bool(torch.isfinite(L11).all()):
            row = k + info - 1 if info > 0 else k
            msg = (f"matrix is not positive definite: the leading minor of order {row + 1} "
                   f"(row {row}, in diagonal block {b} = rows [{k}, {e})) is not positive")
            if offset:
                msg += f" after adding lam = {offset} to the diagonal; increase lam"
            raise NotPositiveDefiniteError(msg)
        A11.copy_(L11)
        if e == n:
            break
        A21 = A[e:, k:e]
        # L21 = A21 L11^{-T}: solve X L11^T = A21
        L21 = torch.linalg.solve_triangular(L11.mT, A21, upper=True, left=False)
        A21.copy_(L21)
        # trailing update A22 -= L21 L21^T, lower part, one column panel at a time
        for j in range(e, n, nb):
            je = min(j + nb, n)
            A[j:, j:je].addmm_(L21[j - e:], L21[j - e:je - e].mT, alpha=-1.0)


def cholesky_inplace(K: ArrayLike, block_size: int = 2048) -> ArrayLike:
    """Blocked Cholesky factorization ``K = L L^T`` overwriting K's lower triangle.

    Right-looking blocked algorithm (Golub & Van Loan, Matrix Computations,
    4th ed., Alg. 4.2.10 in block form): for each diagonal block,
    ``torch.linalg.cholesky_ex`` (LAPACK/cuSOLVER potrf) on the block, a
    triangular solve (trsm) for the panel below it, and in-place GEMM
    updates ``addmm_`` of the trailing lower triangle, one column panel at a
    time. Only the lower triangle is read. Extra memory is
    O(n * block_size): no n x n temporary.

    Parameters
    ----------
    K : numpy.ndarray or torch.Tensor, shape (n, n), float32 or float64
        Symmetric positive definite; C- or F-contiguous; CPU or CUDA tensor.
        Overwritten: on return its lower triangle (with the diagonal) holds
        L; in the strictly upper triangle the parts inside the diagonal
        blocks are zero and the rest keeps the input values (use
        ``torch.tril`` / ``numpy.tril`` for L alone).
    block_size : int
        Rows of a diagonal block (>= 1).

    Returns
    -------
    The same object K (for chaining).

    Raises
    ------
    ValueError
        K not square, not float32/float64, not C/F-contiguous, read-only.
    NotPositiveDefiniteError
        K not positive definite (the message names the row and the diagonal
        block where the factorization broke down); a ValueError.

    Source: blocked Cholesky (Golub & Van Loan 2013, Sec. 4.2.9); LAPACK
    potrf via torch.linalg (library).
    """
    nb = _check_block(block_size)
    T = _as_matrix(K)
    if not _is_c_or_f(T):
        raise ValueError("K: expected a C- or F-contiguous matrix")
    _cholesky_(T, nb)
    return K


def _forward_solve_(A: torch.Tensor, Y: torch.Tensor, nb: int) -> None:
    """In place ``Y <- L^{-1} Y`` with L the lower triangle of A (blocked
    forward substitution on views of A: no copy beyond one diagonal block,
    so A may be a non-contiguous block of a larger factor)."""
    n = A.shape[0]
    for k in range(0, n, nb):
        e = min(k + nb, n)
        Y[k:e] = torch.linalg.solve_triangular(torch.tril(A[k:e, k:e]), Y[k:e], upper=False)
        if e < n:
            Y[e:].addmm_(A[e:, k:e], Y[k:e], alpha=-1.0)


def _cholesky_solve_(A: torch.Tensor, Y: torch.Tensor, nb: int) -> None:
    """In place ``Y <- (L L^T)^{-1} Y`` with L the lower triangle of A
    (blocked forward then backward substitution)."""
    n = A.shape[0]
    starts = list(range(0, n, nb))
    _forward_solve_(A, Y, nb)  # L z = y
    for k in reversed(starts):  # L^T x = z
        e = min(k + nb, n)
        if e < n:
            Y[k:e].addmm_(A[e:, k:e].mT, Y[e:], alpha=-1.0)
        L11 = torch.tril(A[k:e, k:e])
        Y[k:e] = torch.linalg.solve_triangular(L11.mT, Y[k:e], upper=True)
