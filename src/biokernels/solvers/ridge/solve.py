"""The one kernel ridge solve of the project, and its predictions.

:func:`solve_ridge` solves ``(K + lam I) alpha = Y`` (absolute ``lam``)
exactly by blocked or unblocked Cholesky or iteratively by preconditioned CG,
in torch on the CPU or CUDA or in SciPy for numpy input, optionally with an
intercept; :func:`predict_ridge` computes ``K_test @ alpha + intercept``.
"""

from __future__ import annotations

import time

import numpy as np
import torch

from biokernels.kernels.ntk import _all_finite
from biokernels.solvers.ridge.cg import _nystrom_preconditioner, _pcg
from biokernels.solvers.ridge.cholesky import _cholesky_, _cholesky_solve_
from biokernels.solvers.ridge.tensors import ArrayLike, _as_matrix, _check_block, _is_c_or_f, _sync
from biokernels.solvers.ridge_core import NotPositiveDefiniteError, center_targets, check_lam, solve_ridge_exact

__all__ = ["METHODS", "PRECONDITIONERS", "solve_ridge", "predict_ridge"]

METHODS = ("auto", "cholesky", "cg")
PRECONDITIONERS = ("nystrom", "jacobi", None)


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
