"""The kernel ridge service: one solve, one holdout selection (issue #17).

Every kernel ridge regression of the project goes through this module:
``(K + lam I) alpha = Y`` for a precomputed kernel matrix K (n, n) and one or
many right-hand sides Y (n, c), optionally with an intercept, exact or
iterative, in torch on the CPU or CUDA or (unblocked, numpy input) in SciPy.
The largest case is the drug screen's source model (n ~ 54k pairs, c = 978
genes; Radhakrishnan et al. 2023, Methods "Details for virtual drug
screening"), which must fit a 54k x 54k float32 Gram in memory.

``lam`` (or ``ridge``) is always the **absolute** λ added to the diagonal
(scikit-learn's ``alpha``); a ridge relative to the kernel's mean diagonal is
called ``ridge_rel`` (:func:`absolute_ridge`).

* :func:`solve_ridge`: the one solve. Exact: blocked Cholesky in place
  (:func:`cholesky_inplace`, ``overwrite=True``; extra memory
  O(n * block_size) where torch's, numpy's and scikit-learn's solvers each
  keep a second n x n copy) or, with ``block_size=None``, one LAPACK
  ``potrf`` + ``potrs`` (torch's for a tensor, SciPy's for a numpy array:
  :func:`~biokernels.solvers.ridge_core.solve_ridge_exact`). Iterative:
  preconditioned conjugate gradients (Nystrom or Jacobi preconditioner).
  ``fit_intercept=True`` centres Y (:func:`center_targets`) and returns the
  means as ``info["intercept"]``.
* :func:`predict_ridge`: ``K_test @ alpha + intercept``.
* :func:`select_ridge_holdout` (with :func:`holdout_split`): the one
  holdout selection of λ on a grid.
* :class:`NTKRidge`: kernel ridge with the NTK of
  :mod:`biokernels.kernels.ntk`, scikit-learn style.

The torch-free parts live in :mod:`biokernels.solvers.ridge_core` (for the
rules of the core environment) and are re-exported here.
"""

from __future__ import annotations

import time
from contextlib import contextmanager

import numpy as np
import torch

from biokernels.device import DEVICE_CHOICES, resolve_device
from biokernels.kernels.ntk import B_STD, W_STD, _all_finite, ntk_relu
from biokernels.solvers.ridge_core import (NotPositiveDefiniteError, absolute_ridge, center_targets, check_lam,
                                           holdout_split, ridge_scale, select_ridge_holdout, solve_ridge_exact)

__all__ = ["METHODS", "PRECONDITIONERS", "NotPositiveDefiniteError", "cholesky_inplace", "solve_ridge",
           "predict_ridge", "check_lam", "center_targets", "solve_ridge_exact", "ridge_scale", "absolute_ridge",
           "holdout_split", "select_ridge_holdout", "NTKRidge"]

ArrayLike = np.ndarray | torch.Tensor

METHODS = ("auto", "cholesky", "cg")
PRECONDITIONERS = ("nystrom", "jacobi", None)


# --------------------------------------------------------------------------- helpers


def _as_matrix(K: ArrayLike, name: str = "K", writable: bool = True) -> torch.Tensor:
    """A torch view of ``K`` sharing its memory (numpy via from_numpy; a
    read-only or negatively strided array is copied unless ``writable``)."""
    if isinstance(K, np.ndarray):
        if K.dtype not in (np.float32, np.float64):
            raise ValueError(f"{name}: expected float32 or float64, got {K.dtype}")
        if K.ndim != 2 or K.shape[0] != K.shape[1]:
            raise ValueError(f"{name}: expected a square 2-D matrix, got shape {K.shape}")
        if writable and not K.flags.writeable:
            raise ValueError(f"{name}: the array is read-only")
        if not K.flags.writeable or any(st < 0 for st in K.strides):
            K = np.array(K)
        T = torch.from_numpy(K)
    elif isinstance(K, torch.Tensor):
        T = K
        if T.dtype not in (torch.float32, torch.float64):
            raise ValueError(f"{name}: expected float32 or float64, got {T.dtype}")
    else:
        raise ValueError(f"{name}: expected a numpy array or torch tensor, got {type(K).__name__}")
    if T.ndim != 2 or T.shape[0] != T.shape[1]:
        raise ValueError(f"{name}: expected a square 2-D matrix, got shape {tuple(T.shape)}")
    return T


def _is_c_or_f(T: torch.Tensor) -> bool:
    return T.is_contiguous() or T.mT.is_contiguous()


def _check_block(block_size) -> int:
    if not (isinstance(block_size, (int, np.integer)) and block_size >= 1):
        raise ValueError(f"block_size must be an int >= 1, got {block_size!r}")
    return int(block_size)


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


@contextmanager
def _one_thread(device: torch.device):
    """Run small dense LAPACK calls (eigh of a few hundred rows) on one CPU
    thread: on a loaded 2-core machine MKL's threaded ``syevd`` was measured
    10-30x slower than single-threaded (threads spin on busy cores)."""
    if device.type != "cpu":
        yield
        return
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(old)


# --------------------------------------------------------------------------- Cholesky


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


def _cholesky_solve_(A: torch.Tensor, Y: torch.Tensor, nb: int) -> None:
    """In place ``Y <- (L L^T)^{-1} Y`` with L the lower triangle of A
    (blocked forward then backward substitution)."""
    n = A.shape[0]
    starts = list(range(0, n, nb))
    for k in starts:  # L z = y
        e = min(k + nb, n)
        L11 = torch.tril(A[k:e, k:e])
        Y[k:e] = torch.linalg.solve_triangular(L11, Y[k:e], upper=False)
        if e < n:
            Y[e:].addmm_(A[e:, k:e], Y[k:e], alpha=-1.0)
    for k in reversed(starts):  # L^T x = z
        e = min(k + nb, n)
        if e < n:
            Y[k:e].addmm_(A[e:, k:e].mT, Y[e:], alpha=-1.0)
        L11 = torch.tril(A[k:e, k:e])
        Y[k:e] = torch.linalg.solve_triangular(L11.mT, Y[k:e], upper=True)


# --------------------------------------------------------------------------- CG


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


# --------------------------------------------------------------------------- solve


def solve_ridge(K: ArrayLike, Y: ArrayLike, lam: float, method: str = "auto", *, fit_intercept: bool = False,
                overwrite: bool = False, block_size: int | None = 2048, tol: float = 1e-6, max_iter: int = 500,
                exact_max_n: int = 60000, preconditioner: str | None = "nystrom", precond_rank: int = 500,
                seed: int = 0, check_residual: bool = False) -> tuple[ArrayLike, dict]:
    """Solve the kernel ridge system ``(K + lam I) alpha = Y`` (the project's one kernel ridge solve).

    Parameters
    ----------
    K : numpy.ndarray or torch.Tensor, shape (n, n), float32 or float64
        Symmetric positive semi-definite kernel matrix, on the CPU or CUDA;
        the computation runs in K's dtype on K's device.
    Y : array-like, shape (n,) or (n, c)
        Right-hand sides (converted to K's dtype and device).
    lam : float
        Absolute ridge, ``lam >= 0`` (scikit-learn's ``alpha``; a ridge
        relative to mean(diag K) is converted by :func:`absolute_ridge`).
    method : {"auto", "cholesky", "cg"}
        ``"cholesky"``: exact, by :func:`cholesky_inplace` and blocked
        triangular solves (or unblocked, ``block_size=None``). ``"cg"``:
        preconditioned conjugate gradients, one CG per column sharing each
        ``K @ P`` product. ``"auto"``: Cholesky for ``n <= exact_max_n``,
        else CG.
    fit_intercept : bool
        Solve for ``Y - mean(Y)`` (column means in float64 on the host,
        before the conversion to K's dtype: :func:`center_targets`) and
        return the means as ``info["intercept"]``; predict
        ``K_test @ alpha + intercept`` (:func:`predict_ridge`).
    overwrite : bool
        Cholesky only: factor K in place (lam is added to its diagonal; with
        blocks its lower triangle becomes L, so K is destroyed). Otherwise K
        is copied first (a second n x n buffer). CG never modifies K.
    block_size : int or None
        Block of the Cholesky factorization and substitutions. None: one
        unblocked LAPACK ``potrf`` + ``potrs`` (``torch.linalg.cholesky_ex``
        and ``torch.cholesky_solve`` for a tensor; SciPy's ``cho_factor`` and
        ``cho_solve`` for a numpy K, :func:`solve_ridge_exact`), which keeps
        L in a second n x n buffer.
    tol : float
        CG: stop a column when ``||y - (K + lam I) a|| <= tol ||y||`` (by the
        recursively updated residual).
    max_iter : int
        CG: most iterations.
    exact_max_n : int
        ``"auto"``: largest n solved by Cholesky.
    preconditioner : {"nystrom", "jacobi", None}
        CG: ``"nystrom"``, the randomized Nystrom preconditioner of Frangella,
        Tropp & Udell 2023 (Eq. 5.3) from the top eigenpairs of K on
        ``precond_rank`` random columns; ``"jacobi"``, ``diag(K) + lam``.
    precond_rank : int
        Columns sampled for the Nystrom preconditioner.
    seed : int
        Seed of that sample.
    check_residual : bool
        Also compute the true residual (one more ``K @ alpha``, about one
        CG iteration); Cholesky only when K is intact (``overwrite=False``).
        Without it CG reports its recursively updated residuals.

    Returns
    -------
    alpha : same kind as K (numpy array or torch tensor), shape like Y
    info : dict
        ``method``, ``dtype``, ``device``, ``n``, ``n_rhs``, ``lam``,
        ``intercept`` (numpy float64, shape (c,) or 0-d for a 1-D Y; None
        without ``fit_intercept``),
        ``time_s`` (and its parts: Cholesky ``factor_s``, ``substitution_s``;
        CG ``precond_s``, ``cg_s``), ``iterations`` (CG: the largest over columns; Cholesky:
        0), ``converged``, ``residual_norms`` (numpy (c,), relative residuals
        ``||y - (K + lam I) alpha|| / ||y||`` of the (centred) Y; None for
        Cholesky without ``check_residual``), ``residual_kind`` ("true" or
        "recursive"), ``residual_max``, ``preconditioner`` (CG: name, rank
        and extreme eigenvalues of the Nystrom approximation) and
        ``history`` (CG: the largest relative residual of the working
        columns per iteration); ``backend`` ("scipy") on SciPy's path.

    Raises
    ------
    ValueError
        ``lam < 0`` or not finite; K not square/float/2-D; Y of the wrong
        rows or dimensions; NaN or inf in K or Y; unknown ``method`` or
        ``preconditioner``.
    NotPositiveDefiniteError
        Cholesky breakdown (K + lam I not positive definite; the message
        names the row where it can); a ValueError.

    Source: kernel ridge regression (Radhakrishnan et al. 2023, Methods
    Eq. 1-2); agrees with ``sklearn.kernel_ridge.KernelRidge(
    kernel="precomputed", alpha=lam)`` (without intercept) and, with
    ``fit_intercept`` and a linear kernel on centred features, with
    ``sklearn.linear_model.Ridge(alpha=lam, fit_intercept=True)``. CG:
    Hestenes & Stiefel 1952; preconditioner: Frangella, Tropp & Udell 2023.
    """
    t0 = time.perf_counter()
    if method not in METHODS:
        raise ValueError(f"method: expected one of {METHODS}, got {method!r}")
    if preconditioner not in PRECONDITIONERS:
        raise ValueError(f"preconditioner: expected one of {PRECONDITIONERS}, got {preconditioner!r}")
    lam = check_lam(lam)
    nb = None if block_size is None else _check_block(block_size)
    if not (isinstance(max_iter, (int, np.integer)) and max_iter >= 1):
        raise ValueError(f"max_iter must be an int >= 1, got {max_iter!r}")
    if not (tol > 0):
        raise ValueError(f"tol must be > 0, got {tol}")
    intercept = None
    if fit_intercept:
        Y, intercept = center_targets(Y.detach().cpu().numpy() if isinstance(Y, torch.Tensor) else Y)
    was_numpy = isinstance(K, np.ndarray)
    A = _as_matrix(K, writable=False)
    n = A.shape[0]
    if method == "auto":
        method = "cholesky" if n <= exact_max_n else "cg"
    if method == "cholesky" and nb is None and was_numpy:
        alpha, info = solve_ridge_exact(K, Y, lam, overwrite=overwrite)
        info["intercept"] = intercept
        info.update(residual_norms=None, residual_kind=None, residual_max=None, preconditioner=None, history=[])
        if check_residual and not overwrite:
            Y0 = np.asarray(Y, dtype=K.dtype).reshape(n, -1)
            res = Y0 - (K @ alpha.reshape(n, -1) + lam * alpha.reshape(n, -1))
            bnorm = np.linalg.norm(Y0, axis=0)
            info["residual_norms"] = np.linalg.norm(res, axis=0) / np.where(bnorm > 0, bnorm, 1.0)
            info["residual_kind"] = "true"
            info["residual_max"] = float(np.max(info["residual_norms"])) if info["residual_norms"].size else 0.0
        info["time_s"] = time.perf_counter() - t0
        return alpha, info
    Yt = torch.as_tensor(Y)
    y1d = Yt.ndim == 1
    if Yt.ndim not in (1, 2):
        raise ValueError(f"Y: expected shape (n,) or (n, c), got {tuple(Yt.shape)}")
    if Yt.shape[0] != n:
        raise ValueError(f"K has {n} rows but Y has {Yt.shape[0]}")
    Yt = Yt.to(dtype=A.dtype, device=A.device, copy=True).contiguous()
    if y1d:
        Yt = Yt[:, None]
    if not _all_finite(Yt):
        raise ValueError("Y holds NaN or infinite values")
    if not _all_finite(A):
        raise ValueError("K holds NaN or infinite values")

    info = {"method": method, "dtype": str(A.dtype).removeprefix("torch."), "device": str(A.device), "n": n,
            "n_rhs": int(Yt.shape[1]), "lam": lam, "intercept": intercept, "iterations": 0, "converged": True,
            "residual_norms": None, "residual_kind": None, "residual_max": None, "preconditioner": None,
            "history": []}
    if method == "cholesky":
        if overwrite and (nb is None or _is_c_or_f(A)):
            F = A
        else:
            F = A.clone(memory_format=torch.contiguous_format)
        F.diagonal().add_(lam)
        t1 = time.perf_counter()
        if nb is None:
            L, err = torch.linalg.cholesky_ex(F)
            err = int(err)
            if err != 0 or not bool(torch.isfinite(L).all()):
                where = f"the leading minor of order {err} (row {err - 1}) is not positive" if err > 0 else \
                    "the factor is not finite"
                raise NotPositiveDefiniteError(f"matrix is not positive definite: {where} after adding lam = {lam} "
                                               f"to the diagonal; increase lam")
        else:
            _cholesky_(F, nb, offset=lam)
        _sync(A.device)
        t2 = time.perf_counter()
        if nb is None:
            Yt = torch.cholesky_solve(Yt, L)
            del L
        else:
            _cholesky_solve_(F, Yt, nb)
        _sync(A.device)
        info["factor_s"], info["substitution_s"] = t2 - t1, time.perf_counter() - t2
        alpha = Yt
        if check_residual and F is not A:
            del F
            Y0 = torch.as_tensor(Y).to(dtype=A.dtype, device=A.device).reshape(n, -1)
            res = Y0 - torch.addmm(alpha, A, alpha, beta=lam)
            bnorm = torch.linalg.vector_norm(Y0, dim=0)
            info["residual_norms"] = (torch.linalg.vector_norm(res, dim=0)
                                      / torch.where(bnorm > 0, bnorm, torch.ones_like(bnorm))).cpu().numpy()
            info["residual_kind"] = "true"
    else:
        precond, pinfo = None, {}
        t1 = time.perf_counter()
        if preconditioner == "nystrom":
            precond, pinfo = _nystrom_preconditioner(A, lam, precond_rank, seed)
        elif preconditioner == "jacobi":
            dinv = 1.0 / (A.diagonal() + lam)
            if not bool((dinv > 0).all()) or not bool(torch.isfinite(dinv).all()):
                raise ValueError("jacobi preconditioner: diag(K) + lam must be > 0")
            precond = lambda R: R * dinv[:, None]  # noqa: E731
        _sync(A.device)
        t2 = time.perf_counter()
        alpha, it, history, converged, rel = _pcg(A, lam, Yt, precond, tol, max_iter)
        _sync(A.device)
        info["precond_s"], info["cg_s"] = t2 - t1, time.perf_counter() - t2
        info.update(iterations=it, converged=converged, history=history, residual_kind="recursive",
                    preconditioner={"name": preconditioner, **pinfo} if preconditioner else None)
        if check_residual:
            res = Yt - torch.addmm(alpha, A, alpha, beta=lam)
            bnorm = torch.linalg.vector_norm(Yt, dim=0)
            rel = torch.linalg.vector_norm(res, dim=0) / torch.where(bnorm > 0, bnorm, torch.ones_like(bnorm))
            info["residual_kind"] = "true"
        info["residual_norms"] = rel.cpu().numpy()
    if info["residual_norms"] is not None:
        info["residual_max"] = float(np.max(info["residual_norms"])) if info["residual_norms"].size else 0.0
    _sync(A.device)
    info["time_s"] = time.perf_counter() - t0
    out = alpha[:, 0] if y1d else alpha
    if was_numpy:
        out = out.cpu().numpy()
    return out, info


def predict_ridge(K_test: ArrayLike, alpha: ArrayLike, intercept=None) -> np.ndarray:
    """Kernel ridge predictions ``K_test @ alpha + intercept`` as float64 numpy.

    The product runs in alpha's dtype on alpha's device (``K_test`` is
    converted), is then converted to float64 on the host, and the intercept
    (float64, from ``info["intercept"]`` of :func:`solve_ridge`) is added.

    Parameters
    ----------
    K_test : numpy.ndarray or torch.Tensor, shape (m, n)
        Kernel between the test and the training samples.
    alpha : numpy.ndarray or torch.Tensor, shape (n,) or (n, c)
    intercept : None, float or array (c,)

    Returns
    -------
    numpy.ndarray float64, shape (m,) or (m, c) like alpha's columns.

    Raises
    ------
    ValueError
        ``K_test`` is not 2-D with n columns.
    """
    a = torch.as_tensor(alpha)
    Kt = torch.as_tensor(K_test)
    if Kt.ndim != 2 or Kt.shape[1] != a.shape[0]:
        raise ValueError(f"K_test: expected shape (m, {a.shape[0]}), got {tuple(Kt.shape)}")
    P = (Kt.to(dtype=a.dtype, device=a.device) @ a).to(torch.float64).cpu().numpy()
    return P if intercept is None else P + intercept


# --------------------------------------------------------------------------- estimator


class NTKRidge:
    """Kernel ridge regression with the one-hidden-layer ReLU NTK (with bias).

    Parameters
    ----------
    lam : float
        Absolute ridge ``lam >= 0`` (scikit-learn's ``alpha``).
    w_std, b_std, fan_in : float
        Kernel parameters of :func:`biokernels.kernels.ntk.ntk_relu`
        (defaults sqrt(2), 1, None).
    solver : {"auto", "cholesky", "cg"}
        ``method`` of :func:`solve_ridge`.
    fit_intercept : bool
        Fit ``Y - mean(Y)`` and add the mean back when predicting
        (``fit_intercept`` of :func:`solve_ridge`).
    device : {"auto", "cpu", "cuda"}
        See :func:`biokernels.device.resolve_device` (``fit``; ``fit_gram``
        computes on the Gram's device).
    dtype : torch.float32 or torch.float64
        Precision of ``fit``'s Gram and solve.
    solver_params : dict, optional
        More keyword arguments of :func:`solve_ridge` (``tol``,
        ``block_size``, ``preconditioner``, ...).

    Attributes
    ----------
    X_fit_ : torch.Tensor, shape (n, p), or None after ``fit_gram``
    dual_coef_ : torch.Tensor, shape (n, c)
    intercept_ : numpy float64 array, shape (c,) or 0-d for a 1-D Y, or
        None without ``fit_intercept``
    solve_info_ : dict, the ``info`` of :func:`solve_ridge`

    Source: kernel ridge regression with the NTK (Radhakrishnan et al. 2023,
    Methods "Details for virtual drug screening"); agrees with
    ``sklearn.kernel_ridge.KernelRidge(kernel="precomputed", alpha=lam)``
    given the same kernel.
    """

    def __init__(self, lam: float = 1.0, w_std: float = W_STD, b_std: float = B_STD,
                 fan_in: float | None = None, solver: str = "auto", device: str = "auto",
                 dtype: torch.dtype = torch.float64, solver_params: dict | None = None,
                 fit_intercept: bool = False):
        self.lam = lam
        self.w_std = w_std
        self.b_std = b_std
        self.fan_in = fan_in
        self.solver = solver
        self.device = device
        self.dtype = dtype
        self.solver_params = solver_params
        self.fit_intercept = fit_intercept

    def _kernel(self, A, B=None) -> torch.Tensor:
        return ntk_relu(A, B, w_std=self.w_std, b_std=self.b_std, fan_in=self.fan_in,
                        device=self.device_, dtype=self.dtype)

    def _solve(self, K, Y, overwrite: bool) -> None:
        self._y_was_1d = np.ndim(Y) == 1
        alpha, info = solve_ridge(K, Y, self.lam, method=self.solver, overwrite=overwrite,
                                  fit_intercept=self.fit_intercept, **(self.solver_params or {}))
        alpha = torch.as_tensor(alpha)
        self.dual_coef_ = alpha[:, None] if alpha.ndim == 1 else alpha
        self.intercept_ = info["intercept"]
        self.solve_info_ = info

    def fit(self, X: ArrayLike, Y: ArrayLike) -> "NTKRidge":
        """Fit on dense features.

        Parameters
        ----------
        X : array-like, shape (n, p)
        Y : array-like, shape (n,) or (n, c)

        Returns
        -------
        self

        Raises
        ------
        ValueError
            From :func:`ntk_relu` or :func:`solve_ridge` (sample counts
            differ, ``lam < 0``, NaN, not positive definite, ...).
        """
        if self.device not in DEVICE_CHOICES and not isinstance(self.device, torch.device):
            raise ValueError(f"device: expected one of {DEVICE_CHOICES}, got {self.device!r}")
        self.device_ = resolve_device(self.device) if isinstance(self.device, str) else self.device
        K = self._kernel(X)
        self.X_fit_ = torch.as_tensor(X, dtype=self.dtype, device=self.device_)
        if self.X_fit_.ndim == 1:
            self.X_fit_ = self.X_fit_[:, None]
        self._solve(K, Y, overwrite=True)
        return self

    def fit_gram(self, K: ArrayLike, Y: ArrayLike, overwrite: bool = False) -> "NTKRidge":
        """Fit on a precomputed kernel matrix (e.g. from
        :func:`biokernels.kernels.ntk.ntk_relu_indexed`).

        Parameters
        ----------
        K : numpy.ndarray or torch.Tensor, shape (n, n)
        Y : array-like, shape (n,) or (n, c)
        overwrite : bool
            Let the Cholesky solver factor K in place (K is destroyed).

        Returns
        -------
        self

        Raises
        ------
        ValueError
            From :func:`solve_ridge`.
        """
        self.X_fit_ = None
        self._solve(K, Y, overwrite=overwrite)
        self.device_ = self.dual_coef_.device
        return self

    def _check_fitted(self) -> None:
        if not hasattr(self, "dual_coef_"):
            raise ValueError("NTKRidge is not fitted; call fit(X, Y) or fit_gram(K, Y) first")

    def _out(self, Kt: torch.Tensor) -> np.ndarray:
        P = predict_ridge(Kt, self.dual_coef_, getattr(self, "intercept_", None))
        return P[:, 0] if self._y_was_1d else P

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Predict ``NTK(X, X_fit_) @ dual_coef_ + intercept_`` (:func:`predict_ridge`).

        Parameters
        ----------
        X : array-like, shape (m, p)

        Returns
        -------
        numpy.ndarray float64, shape (m,) or (m, c) like the Y given to fit.

        Raises
        ------
        ValueError
            Not fitted, or fitted by ``fit_gram`` (use ``predict_gram``).
        """
        self._check_fitted()
        if self.X_fit_ is None:
            raise ValueError("NTKRidge was fitted on a Gram matrix; use predict_gram(K_test_train)")
        return self._out(self._kernel(X, self.X_fit_))

    def predict_gram(self, K_test_train: ArrayLike) -> np.ndarray:
        """Predict ``K_test_train @ dual_coef_ + intercept_`` (:func:`predict_ridge`).

        Parameters
        ----------
        K_test_train : numpy.ndarray or torch.Tensor, shape (m, n)
            Kernel between test and training samples.

        Returns
        -------
        numpy.ndarray float64, shape (m,) or (m, c) like the Y given to fit.

        Raises
        ------
        ValueError
            Not fitted, or ``n`` differs from the training size.
        """
        self._check_fitted()
        Kt = torch.as_tensor(K_test_train)
        n = self.dual_coef_.shape[0]
        if Kt.ndim != 2 or Kt.shape[1] != n:
            raise ValueError(f"K_test_train: expected shape (m, {n}), got {tuple(Kt.shape)}")
        return self._out(Kt)
