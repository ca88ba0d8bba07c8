"""EigenPro 2: kernel regression by preconditioned minibatch SGD.

Source: Ma & Belkin 2017 ("Diving into the shallows", EigenPro) and 2019
("Kernel machines that adapt to GPUs", EigenPro 2), the solver the transfer
paper used for its ImageNet32 source models (Radhakrishnan et al. 2023,
Methods "Details for projection experiments"). The step size is the optimal
minibatch step of Ma, Bassily & Belkin 2018, ``η = m / (β + (m − 1) λ_{q+1})``.
The preconditioner's derivation in the coefficient space: docs/images_notes.md,
section "EigenPro".

Solves ``(K + λ I) α = Y`` for any kernel callable ``kernel(A, B) -> (len(A),
len(B))`` tensor, forming one ``m × n`` block of K per step (never K itself).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch

from biokernels.solvers.checks import check_lam

__all__ = ["eigenpro_ridge", "eigenpro_predict"]


def _preconditioner(K_SS: torch.Tensor, top_q: int) -> dict:
    """Top-q eigensystem of K_SS / s and the coefficient-space correction M."""
    s = K_SS.shape[0]
    lam, V = torch.linalg.eigh(K_SS.double() / s)
    lam, V = lam.flip(0), V.flip(1)
    q = max(0, min(int(top_q), s - 1))
    lam_next = float(lam[q].clamp_min(torch.finfo(torch.float64).tiny))
    c = 1.0 - lam_next / lam[:q]
    Vq = V[:, :q]
    M = (Vq * (c / (s * lam[:q]))) @ Vq.T
    diag_P = torch.diagonal(K_SS).double() - (Vq * Vq * (c * s * lam[:q])).sum(1)
    beta = float(diag_P.max())
    return {"M": M, "q": q, "lam_next": lam_next, "beta": beta, "lam_top": float(lam[0])}


def _step(m: int, pre: dict) -> float:
    """The optimal step of a batch of m rows, ``m / (β + (m − 1) λ_{q+1})``
    (a short last batch gets its own)."""
    return m / (pre["beta"] + (m - 1) * pre["lam_next"])


def eigenpro_ridge(kernel: Callable, X: torch.Tensor, Y, *, lam: float = 0.0, subsample: int = 2000,
                   top_q: int = 100, batch: int | None = None, max_batch: int = 4096, epochs: int = 10,
                   tol: float = 0.0, stop_accuracy: float | None = None, seed: int = 0,
                   log: Callable[[str], None] | None = None) -> dict:
    """Fit ``α`` of ``(K + λ I) α = Y`` by EigenPro 2.

    Parameters: ``X`` (n, ...) rows the kernel takes (a tensor: its dtype and
    device are used); ``Y`` (n, c) or (n,); ``subsample`` s rows (seeded) give
    the top ``top_q`` eigenpairs; ``batch`` m (default: the critical batch
    β/λ_{q+1}, capped by ``max_batch`` and n); at most ``epochs`` passes,
    stopping early when the epoch's running relative residual ≤ ``tol`` or its
    running argmax accuracy ≥ ``stop_accuracy``.

    Returns a dict: ``alpha`` (n, c) tensor, ``eta``, ``batch``, ``q``,
    ``epochs`` run, ``history`` (per epoch: running residual, accuracy).
    Raises ValueError for bad λ, sizes or settings.
    """
    lam = check_lam(lam)
    n = X.shape[0]
    Yt = torch.as_tensor(np.asarray(Y) if not isinstance(Y, torch.Tensor) else Y, dtype=X.dtype, device=X.device)
    Yt = Yt[:, None] if Yt.ndim == 1 else Yt
    if Yt.shape[0] != n:
        raise ValueError(f"X has {n} rows but Y has {Yt.shape[0]}")
    if int(subsample) < 2 or int(epochs) < 1 or int(max_batch) < 1:
        raise ValueError("subsample must be >= 2, epochs and max_batch >= 1")
    gen = np.random.default_rng(seed)
    s = min(int(subsample), n)
    idx_S = torch.as_tensor(np.sort(gen.choice(n, s, replace=False)), device=X.device)
    pos_S = torch.full((n,), -1, dtype=torch.long, device=X.device)
    pos_S[idx_S] = torch.arange(s, device=X.device)
    K_SS = kernel(X[idx_S], X[idx_S]).to(torch.float64)
    K_SS.diagonal().add_(lam)
    pre = _preconditioner(K_SS, top_q)
    M = pre["M"].to(X.dtype)
    m_crit = max(1, math.floor(pre["beta"] / pre["lam_next"]))
    m = int(min(batch or m_crit, max_batch, n))
    eta = _step(m, pre)
    alpha = torch.zeros_like(Yt)
    y_norm = float(torch.linalg.norm(Yt)) or 1.0
    labels = Yt.argmax(1) if Yt.shape[1] > 1 else None
    history = []
    for epoch in range(int(epochs)):
        order = torch.as_tensor(gen.permutation(n), device=X.device)
        res2, hits = 0.0, 0
        for start in range(0, n, m):
            B = order[start:start + m]
            K_B = kernel(X[B], X).to(X.dtype)
            pred = K_B @ alpha + lam * alpha[B]
            r = pred - Yt[B]
            res2 += float((r * r).sum())
            if labels is not None:
                hits += int((pred.argmax(1) == labels[B]).sum())
            K_SB = K_B[:, idx_S].T.clone()
            inS = pos_S[B] >= 0
            if lam and bool(inS.any()):
                K_SB[pos_S[B][inS], torch.nonzero(inS).flatten()] += lam
            step = _step(len(B), pre) / len(B)
            alpha[B] -= step * r
            alpha[idx_S] += step * (M @ (K_SB @ r))
        rel = math.sqrt(res2) / y_norm
        acc = hits / n if labels is not None else float("nan")
        history.append({"epoch": epoch + 1, "running_residual": rel, "running_accuracy": acc})
        if log:
            log(f"EigenPro epoch {epoch + 1}: running relative residual {rel:.3g}, accuracy {acc:.4f}")
        if rel <= tol or (stop_accuracy is not None and acc >= stop_accuracy):
            break
    return {"alpha": alpha, "eta": eta, "batch": m, "critical_batch": m_crit, "q": pre["q"],
            "subsample": s, "lam_next": pre["lam_next"], "beta": pre["beta"],
            "epochs": len(history), "history": history}


def eigenpro_predict(kernel: Callable, X_train: torch.Tensor, alpha: torch.Tensor, X_new: torch.Tensor,
                     block: int = 2048) -> torch.Tensor:
    """``K(X_new, X_train) α`` in row blocks of ``block``: (len(X_new), c)."""
    out = [kernel(X_new[i:i + block], X_train).to(alpha.dtype) @ alpha for i in range(0, X_new.shape[0], block)]
    return torch.cat(out) if out else alpha.new_zeros((0, alpha.shape[1]))
