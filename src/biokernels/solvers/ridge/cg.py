"""Preconditioned conjugate gradients for ``(K + lam I) X = B``.

The iterative path of :func:`~biokernels.solvers.ridge.solve_ridge` and of
the matrix-free solver: block PCG with one independent CG per column sharing
the matrix products (Hestenes & Stiefel 1952; Saad 2003, Alg. 9.1), and the
randomized Nystrom preconditioner (Frangella, Tropp & Udell 2023, Eq. 5.3).
"""

from __future__ import annotations

import torch

from biokernels.solvers.ridge.tensors import _one_thread

__all__ = ["nystrom_preconditioner_from_columns"]


def _nystrom_preconditioner(A: torch.Tensor, lam: float, rank: int, seed: int):
    """Randomized Nystrom preconditioner of the formed matrix ``A`` from a
    seeded column subsample (see :func:`nystrom_preconditioner_from_columns`)."""
    n = A.shape[0]
    s = min(rank, n)
    g = torch.Generator().manual_seed(int(seed))
    idx = torch.randperm(n, generator=g)[:s].to(A.device)
    return nystrom_preconditioner_from_columns(A.index_select(1, idx), idx, lam, A.dtype)


def nystrom_preconditioner_from_columns(C: torch.Tensor, idx: torch.Tensor, lam: float, dtype: torch.dtype,
                                        work_dtype: torch.dtype = torch.float64):
    """Randomized Nystrom preconditioner of ``K + lam I`` from the columns
    ``C = K[:, idx]`` (Frangella, Tropp & Udell 2023, Eq. 5.3, with the
    landmark Nystrom approximation ``K[:, S] K[S, S]^+ K[S, :] = U diag(d) U^T``
    of Williams & Seeger 2001):
    ``P^{-1} = (d_min + lam) U (diag(d) + lam)^{-1} U^T + (I - U U^T)``.

    Parameters
    ----------
    C : torch.Tensor, shape (n, s)
    idx : torch.Tensor, shape (s,), the column positions (``C[idx]`` is ``K[S, S]``)
    lam : float >= 0
    dtype : torch dtype of the stored basis U (n, rank)
    work_dtype : torch dtype of the (n, s) products (float64; the matrix-free
        solver passes float32 to halve their memory: a preconditioner only
        needs to be close, CG corrects the rest); the s x s
        eigen-decompositions are float64 either way

    Returns
    -------
    (apply, info): ``apply(R)`` maps (n, c) to (n, c), or None when the
    subsample has rank 0; info has ``rank``, ``eig_max``, ``eig_min``.
    """
    s = C.shape[1]
    C = C.to(work_dtype)
    W = C[idx].to(torch.float64)
    W = 0.5 * (W + W.mT)
    with _one_thread(C.device):
        ev, V = torch.linalg.eigh(W)
    keep = ev > ev[-1].clamp(min=0) * s * torch.finfo(dtype).eps
    if not bool(keep.any()):
        return None, {"rank": 0}
    B = C @ (V[:, keep] / ev[keep].sqrt()).to(work_dtype)  # Nystrom approx = B B^T
    del C
    with _one_thread(B.device):
        ev2, Q = torch.linalg.eigh((B.mT @ B).to(torch.float64))
    keep2 = ev2 > ev2[-1] * s * torch.finfo(dtype).eps
    d = ev2[keep2]
    U = (B @ (Q[:, keep2] / d.sqrt()).to(work_dtype)).to(dtype)  # orthonormal columns
    del B
    scale = ((d[0] + lam) / (d + lam) - 1.0).to(dtype)

    def apply(R: torch.Tensor) -> torch.Tensor:
        return R + U @ (scale[:, None] * (U.mT @ R))

    return apply, {"rank": int(d.numel()), "eig_max": float(d[-1]), "eig_min": float(d[0])}


def _pcg(A, lam: float, B: torch.Tensor, precond, tol: float, max_iter: int, callback=None):
    """Preconditioned CG for ``(A + lam I) X = B``, one independent CG per
    column sharing the matrix products; columns leave the working set once
    their relative residual is <= tol (Hestenes & Stiefel 1952; Saad 2003,
    Alg. 9.1). ``A`` is a tensor or a callable ``P -> A @ P`` (a matrix-free
    operator); ``callback(iteration, max_rel_residual, active_columns)`` is
    called after every iteration."""
    n, c = B.shape
    X = torch.zeros_like(B)
    bnorm = torch.linalg.vector_norm(B, dim=0)
    cols = torch.arange(c, device=B.device)
    active = bnorm > 0
    bn = torch.where(active, bnorm, torch.ones_like(bnorm))
    cols, R, bn = cols[active], B[:, active].clone(), bn[active]
    Zr = precond(R) if precond else R.clone()
    P = Zr.clone()
    rz = (R * Zr).sum(0)
    history, it = [], 0
    final = torch.zeros(c, dtype=B.dtype, device=B.device)  # relative residual per column
    final[cols] = torch.linalg.vector_norm(R, dim=0) / bn
    while cols.numel() and it < max_iter:
        it += 1
        if callable(A):
            AP = A(P)
            if lam:
                AP.add_(P, alpha=lam)
        else:
            AP = torch.addmm(P, A, P, beta=lam) if lam else A @ P
        alpha = rz / (P * AP).sum(0)
        X.index_add_(1, cols, P * alpha)
        R.sub_(AP * alpha)
        rel = torch.linalg.vector_norm(R, dim=0) / bn
        final[cols] = rel
        history.append(float(rel.max()))
        if callback is not None:
            callback(it, history[-1], int(cols.numel()))
        done = rel <= tol
        if bool(done.any()):
            keep = ~done
            cols, R, P, rz, bn = cols[keep], R[:, keep], P[:, keep], rz[keep], bn[keep]
            if not cols.numel():
                break
        Zr = precond(R) if precond else R
        rz_new = (R * Zr).sum(0)
        P = Zr + (rz_new / rz) * P
        rz = rz_new
    return X, it, history, bool(cols.numel() == 0), final
