"""Kernel ridge past one machine's memory: solvers on a matrix-free kernel operator.

Kernel ridge ``(K + lam I) alpha = Y - mean(Y)`` (Radhakrishnan et al. 2023,
Methods, Eq. 1-2) on :class:`biokernels.kernels.ntk_operator.PairNTKOperator`,
which evaluates blocks of K on the fly, on one process or several
(:class:`biokernels.distributed.Comm`, rows split across processes):

* :func:`nystrom_ridge` (``nystrom``): ridge on the span of M centres
  (Williams & Seeger 2001; Rudi, Camoriano & Rosasco 2015); ``centres="auto"``
  doubles M until the estimated distance to the exact fit is below ``tol``.
* :func:`cg_ridge` (``cg_matrix_free``): Nystrom-preconditioned CG, exact to
  ``tol`` without the n x n buffer.
* :func:`choose_solver` (``auto``): the exact Cholesky while it fits
  ``memory_budget_gib``, beyond it ``falkon``
  (:func:`biokernels.solvers.falkon.falkon_ridge`: Nystrom with
  leverage-score centres in two M x M buffers).

Notes: docs/ridge_notes.md, section "Matrix-free solvers (solvers/matrix_free)".
"""

from __future__ import annotations

import math
import time

import numpy as np
import torch

from biokernels.distributed import Comm
from biokernels.kernels.ntk_operator import PairNTKOperator
from biokernels.solvers.ridge import _pcg, check_lam, nystrom_preconditioner_from_columns
from biokernels.solvers.ridge_core import center_targets

SOLVERS = ("auto", "cholesky", "cg", "cg_matrix_free", "nystrom", "falkon")
MIN_CENTRES = 1024


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _log(log, msg, *args) -> None:
    if log is not None:
        log.info(msg, *args)


def default_centres(n: int) -> int:
    """The starting M of ``centres="auto"``: ``ceil(sqrt(n) ln n)``, at least
    :data:`MIN_CENTRES`, at most n (Rudi, Camoriano & Rosasco 2015, Thm. 1:
    M of order sqrt(n) log n uniform centres keep kernel ridge's rate at
    lam ~ n^{-1/2})."""
    n = int(n)
    if n <= 1:
        return max(n, 0)
    return int(min(n, max(MIN_CENTRES, math.ceil(math.sqrt(n) * math.log(n)))))


def exact_bytes(n: int, c: int, itemsize: int = 4) -> int:
    """Peak bytes of the exact in-place Cholesky solve: the n x n Gram, the
    (n, c) right-hand sides in its dtype and the float64 targets."""
    return int(n) * int(n) * itemsize + int(n) * int(c) * (itemsize + 8)


def nystrom_bytes(m: int, c: int, block_bytes: int) -> int:
    """Bytes of the Nystrom solve's own buffers: seven M x M float64 (K_MM,
    H, the eigenvectors of K_MM, W, W^T H, the whitened system and its
    factor) and three M x c float64 (K_Mn Y, W^T K_Mn Y, the coefficients),
    plus one operator block."""
    return 7 * m * m * 8 + 3 * m * c * 8 + block_bytes


def max_centres(budget_bytes: float, c: int) -> int:
    """The largest M whose M-dependent buffers (:func:`nystrom_bytes` without
    the operator block, which comes on top) fit ``budget_bytes`` (at least 1):
    3 GiB holds 7,377 centres with 978 genes."""
    a, b, k = 56.0, 24.0 * c, -float(budget_bytes)
    if k >= 0:
        return 1
    return max(1, int((-b + math.sqrt(b * b - 4 * a * k)) / (2 * a)))


def choose_solver(n: int, c: int, memory_budget_gib: float, itemsize: int = 4) -> tuple[str, str]:
    """``solver: auto``: the exact Cholesky while :func:`exact_bytes` fits the
    budget, else ``falkon`` (:mod:`biokernels.solvers.falkon`; matrix-free CG
    is not chosen automatically: its
    iterations grow with the condition number, ~(lambda_max + lam) / lam
    before preconditioning, so a small chosen ridge can make it slower than
    the exact solve; on CPUs at lam = 1 and 44,790 pairs it did not reduce
    the residual in 3 iterations of 2-3 min).

    Parameters
    ----------
    n : int, training pairs; c : int, outputs (genes)
    memory_budget_gib : float > 0
    itemsize : int, bytes per kernel entry (4: float32)

    Returns
    -------
    (solver, reason) with solver "cholesky" or "falkon" and a sentence for the log.

    Raises
    ------
    ValueError
        A budget that is not a positive number.
    """
    if not (isinstance(memory_budget_gib, (int, float)) and memory_budget_gib > 0):
        raise ValueError(f"memory_budget_gib must be a number > 0, got {memory_budget_gib!r}")
    need = exact_bytes(n, c, itemsize) / 2**30
    if need <= memory_budget_gib:
        return "cholesky", (f"exact Cholesky: its {n} x {n} Gram and targets need {need:.2f} GiB <= the "
                            f"budget {memory_budget_gib:g} GiB")
    return "falkon", (f"Falkon-grade Nystrom (matrix-free, leverage-score centres): the exact solve would need "
                      f"{need:.2f} GiB > the budget {memory_budget_gib:g} GiB")


# --------------------------------------------------------------------------- Nystrom


def _targets(Y) -> np.ndarray:
    """Y as a 2-D array (a view: no copy), checked finite."""
    Yn = np.asarray(Y)
    if Yn.ndim == 1:
        Yn = Yn[:, None]
    if Yn.ndim != 2:
        raise ValueError(f"Y: expected shape (n,) or (n, c), got {Yn.shape}")
    if not np.isfinite(Yn).all():
        raise ValueError("Y holds NaN or infinite values")
    return Yn


def _centred_targets(Y, fit_intercept: bool) -> tuple[np.ndarray, np.ndarray | None]:
    Yn = _targets(Y)
    if not fit_intercept:
        return Yn, None
    Yc, mu = center_targets(Yn)
    return Yc, mu


def _column_means(Yn: np.ndarray) -> np.ndarray:
    """Column means in float64, as :func:`biokernels.solvers.ridge_core.center_targets`
    computes them (numpy's pairwise summation), without the centred copy."""
    return Yn.mean(axis=0, dtype=np.float64)


def _nystrom_targets(Y, n: int, fit_intercept: bool) -> tuple[np.ndarray, np.ndarray | None, float]:
    """(Y as a 2-D view, its column means or None, ||Y - mean||_F for the
    certificate), without a centred copy; ValueError unless Y has n rows."""
    Yn = _targets(Y)
    if Yn.shape[0] != n:
        raise ValueError(f"the operator has {n} pairs but Y has {Yn.shape[0]} rows")
    mu = _column_means(Yn) if fit_intercept else None
    ynorm = math.sqrt(sum(float(np.square(Yn[s:s + 65536] - (0.0 if mu is None else mu)).sum())
                          for s in range(0, n, 65536)))
    return Yn, mu, ynorm


def _pseudo_whitening(Kmm: torch.Tensor) -> torch.Tensor:
    """``W`` with ``W^T K_MM W = I_r`` on the numerically nonzero eigenspace of
    K_MM (eigenvalues ``> e_max M eps``), float64 (M, r)."""
    Kmm = 0.5 * (Kmm + Kmm.mT)
    e, V = torch.linalg.eigh(Kmm)
    keep = e > e[-1].clamp(min=0) * Kmm.shape[0] * torch.finfo(torch.float64).eps
    if not bool(keep.any()):
        raise ValueError("Nystrom: the centres' kernel matrix K_MM has rank 0")
    return V[:, keep] / e[keep].sqrt()


def _nystrom_pass(op: PairNTKOperator, Yn: np.ndarray, mu, centres: torch.Tensor, comm: Comm, log, tag: str,
                  product_dtype: torch.dtype = torch.float64):
    """One streamed pass over this process's rows: H = K_Mn K_nM,
    Z = K_Mn (Y - 1 mu^T) = K_Mn Y - (K_Mn 1) mu^T (no centred copy of Y),
    tr K; all-reduced. Returns (H, Z, trK) float64. ``product_dtype``: the
    precision of each block's products (float32: twice the GEMM speed on
    CPUs, rounding of order sqrt(rows per block) eps32 per block), summed
    over blocks in float64. H's one M x M buffer is mirrored in place."""
    m = centres.numel()
    dev = op.device
    H = torch.zeros((m, m), dtype=torch.float64, device=dev)
    Z = torch.zeros((m, Yn.shape[1]), dtype=torch.float64, device=dev)
    colsum = torch.zeros(m, dtype=torch.float64, device=dev)
    trK = torch.zeros((), dtype=torch.float64, device=dev)
    panel = op.panel(centres)
    mine = comm.row_range(op.n)
    blocks = list(op.row_blocks(mine.start, mine.stop, m))
    t0, last = time.perf_counter(), time.perf_counter()
    # H is symmetric: accumulate its upper triangle by column chunks (H[:e, s:e] += Kb[:, :e]^T Kb[:, s:e]),
    # ~(1 + 1/chunks) / 2 of the full product's work, and mirror it once at the end
    nch = max(1, min(8, m // 256))
    edges = [round(m * k / nch) for k in range(nch + 1)]
    for k, blk in enumerate(blocks):
        Kb = panel.rows(blk).to(product_dtype)
        for s, e in zip(edges[:-1], edges[1:]):
            if product_dtype == torch.float64:
                H[:e, s:e].addmm_(Kb[:, :e].mT, Kb[:, s:e])
            else:
                H[:e, s:e] += Kb[:, :e].mT @ Kb[:, s:e]
        Yb = torch.as_tensor(Yn[blk], dtype=product_dtype, device=dev)
        if product_dtype == torch.float64:
            Z.addmm_(Kb.mT, Yb)
        else:
            Z += Kb.mT @ Yb
        colsum += Kb.sum(0, dtype=torch.float64)
        trK += op.diag(blk).to(torch.float64).sum()
        if log is not None and (time.perf_counter() - last > 30 or k + 1 == len(blocks)):
            last = time.perf_counter()
            _log(log, "nystrom %s: rank %d block %d/%d (rows %d-%d of its %d) after %.1f s", tag, comm.rank,
                 k + 1, len(blocks), blk.start, blk.stop, mine.stop - mine.start, last - t0)
    for s, e in zip(edges[:-1], edges[1:]):  # the lower triangle below each chunk, from the upper one
        H[e:, s:e].copy_(H[s:e, e:].mT)
    if mu is not None:
        Z.sub_(colsum[:, None] * torch.as_tensor(mu, dtype=torch.float64, device=dev)[None, :])
    for t in (H, Z, trK):
        comm.all_reduce_sum_(t)
    return H, Z, float(trK)


def _nystrom_solve(H: torch.Tensor, Z: torch.Tensor, Kmm: torch.Tensor, lam: float):
    """(a (M, c), Hw eigenvalues) of ``(W^T H W + lam I) beta = W^T Z``, ``a = W beta``."""
    W = _pseudo_whitening(Kmm)
    Hw = (W.mT @ H) @ W
    Hw.add_(Hw.mT.clone()).mul_(0.5)
    A = Hw.clone()
    A.diagonal().add_(lam)
    L, err = torch.linalg.cholesky_ex(A)
    del A
    if int(err) != 0:
        raise ValueError(f"Nystrom: W^T H W + lam I is not positive definite (lam = {lam}); increase lam")
    beta = torch.cholesky_solve(W.mT @ Z, L)
    return W @ beta, Hw


def _fit_changes(H: torch.Tensor, Z: torch.Tensor, Kmm: torch.Tensor, a: torch.Tensor, lam: float):
    """(change, error_est) of the nested fits on the first M/4, M/2 and all M
    centres, from H alone (``||K_nM d||_F^2 = tr(d^T H d)``): ``change =
    ||f_M - f_M/2|| / ||f_M||``; with ``r = change / (||f_M/2 - f_M/4|| /
    ||f_M||)``, the distance to the limit of a geometric sequence of
    doublings, ``error_est = change r / (1 - r)`` (inf when r >= 1; NaN
    when M < 4)."""
    m = a.shape[0]
    fnorm = max(float((a * (H @ a)).sum()), np.finfo(float).tiny)

    def dist(b_big, b_small, k):
        d = b_big.clone()
        d[:k] -= b_small
        return math.sqrt(max(float((d * (H[:d.shape[0], :d.shape[0]] @ d)).sum()), 0.0) / fnorm)

    h, q = m // 2, m // 4
    if h < 1:
        return float("nan"), float("nan")
    a_h, _ = _nystrom_solve(H[:h, :h], Z[:h], Kmm[:h, :h], lam)
    change = dist(a, a_h, h)
    if q < 1:
        return change, float("nan")
    a_q, _ = _nystrom_solve(H[:q, :q], Z[:q], Kmm[:q, :q], lam)
    before = dist(a_h, a_q, q)
    r = change / before if before > 0 else float("inf")
    return change, (change * r / (1.0 - r) if r < 1 else float("inf"))


def nystrom_ridge(op: PairNTKOperator, Y, lam: float, *, centres: int | str = "auto", tol: float = 0.01,
                  max_centres: int = 16384, seed: int = 0, fit_intercept: bool = True, comm: Comm | None = None,
                  log=None) -> dict:
    """Nystrom kernel ridge on the operator (module docstring).

    Parameters
    ----------
    op : PairNTKOperator over the n training pairs
    Y : array, shape (n,) or (n, c), training targets (same on every process)
    lam : float >= 0, absolute ridge (the exact solve's lam)
    centres : int or "auto"
        M, or the rule of the module docstring.
    tol : float > 0
        "auto": double M while the estimated relative distance of the
        training fit to the exact fit (module docstring) exceeds tol.
    max_centres : int, the cap of "auto"
    seed : int, the centres' sample (``torch.Generator``)
    fit_intercept : bool, fit ``Y - mean(Y)`` and return the mean
    comm : Comm, optional (default single process)
    log : logging.Logger, optional

    Returns
    -------
    dict with ``coef`` (torch float64 (M, c)), ``centres`` (torch int64 (M,),
    positions into the n pairs), ``intercept`` (float64 (c,) or None), and
    ``info`` (M, rank, traces, the certificate ``trace_bound``, the M/2
    change ``fit_change``, the estimate ``fit_error_est``, ``d_eff``,
    passes, times).

    Raises
    ------
    ValueError
        Bad lam, tol, centres or Y (shape, NaN), or a singular system.
    """
    comm = comm or Comm()
    lam = check_lam(lam)
    if not (tol > 0):
        raise ValueError(f"tol must be > 0, got {tol}")
    n = op.n
    Yn, mu, ynorm = _nystrom_targets(Y, n, fit_intercept)
    if centres == "auto":
        m = default_centres(n)
        cap = min(n, max(int(max_centres), m))
    elif isinstance(centres, (int, np.integer)) and 1 <= centres:
        m = cap = min(int(centres), n)
    else:
        raise ValueError(f"centres: expected 'auto' or an int >= 1, got {centres!r}")
    g = torch.Generator().manual_seed(int(seed))
    order = torch.randperm(n, generator=g).to(op.device)
    t0 = time.perf_counter()
    passes = []
    while True:
        J = order[:m]
        tp = time.perf_counter()
        Kmm = op.kernel(J, J).to(torch.float64)
        H, Z, trK = _nystrom_pass(op, Yn, mu, J, comm, log, f"M={m}")
        a, Hw = _nystrom_solve(H, Z, Kmm, lam)
        ev = torch.linalg.eigvalsh(Hw)
        tr_nys = float(ev.sum())
        change, error_est = _fit_changes(H, Z, Kmm, a, lam)
        rec = {"centres": m, "rank": int(ev.numel()), "trace_K": trK, "trace_nystrom": tr_nys,
               "trace_bound": max(trK - tr_nys, 0.0) / lam * ynorm if lam > 0 else float("inf"),
               "trace_bound_rel": max(trK - tr_nys, 0.0) / lam if lam > 0 else float("inf"),
               "fit_change": change, "fit_error_est": error_est, "d_eff": float((ev.clamp(min=0) / (ev.clamp(min=0) + lam)).sum()),
               "seconds": time.perf_counter() - tp}
        passes.append(rec)
        _log(log, "nystrom M=%d (rank %d): fit change M/2->M %.2e, estimated distance to the exact fit %.2e "
             "(tol %.0e), d_eff %.1f, tr(K-K~)/lam %.3g, %.1f s", m, rec["rank"], change, error_est, tol,
             rec["d_eff"], rec["trace_bound_rel"], rec["seconds"])
        if centres != "auto" or not (error_est > tol) or m >= cap:
            break
        m = min(2 * m, cap)
    info = {"method": "nystrom", "n": n, "n_rhs": int(Yn.shape[1]), "lam": lam, "centres_rule":
            "auto" if centres == "auto" else "fixed", "tol": tol, "max_centres": int(max_centres),
            "processes": comm.world_size, "device": str(op.device), "dtype": str(op.dtype).removeprefix("torch."),
            "converged": bool(not (passes[-1]["fit_error_est"] > tol)), "passes": passes, **passes[-1],
            "time_s": time.perf_counter() - t0, "intercept": mu}
    if centres == "auto" and not info["converged"]:
        _log(log, "nystrom: the estimated distance to the exact fit is still %.2e > tol %.0e at the cap of %d "
             "centres; raise max_centres for a closer fit", passes[-1]["fit_error_est"], tol, cap)
    return {"coef": a, "centres": J, "intercept": mu, "info": info}


# --------------------------------------------------------------------------- CG


def cg_ridge(op: PairNTKOperator, Y, lam: float, *, tol: float = 1e-5, max_iter: int = 200, precond_rank: int = 500,
             seed: int = 0, fit_intercept: bool = True, comm: Comm | None = None, log=None) -> dict:
    """Matrix-free preconditioned CG for ``(K + lam I) alpha = Y - mean(Y)``.

    Parameters
    ----------
    op : PairNTKOperator over the n training pairs
    Y : array (n,) or (n, c)
    lam : float > 0
    tol : float > 0, stop a column at relative residual <= tol (recursive
        residual, :func:`biokernels.solvers.ridge._pcg`)
    max_iter : int >= 1
    precond_rank : int >= 0, columns of the Nystrom preconditioner (0: none)
    seed, fit_intercept, comm, log : as :func:`nystrom_ridge`

    Returns
    -------
    dict with ``coef`` (torch (n, c), the operator's dtype), ``intercept``,
    ``info`` (iterations, converged, residual history, times).

    Raises
    ------
    ValueError
        Bad arguments or Y.
    """
    comm = comm or Comm()
    lam = check_lam(lam)
    if not (tol > 0):
        raise ValueError(f"tol must be > 0, got {tol}")
    if not (isinstance(max_iter, (int, np.integer)) and max_iter >= 1):
        raise ValueError(f"max_iter must be an int >= 1, got {max_iter!r}")
    n = op.n
    Yc, mu = _centred_targets(Y, fit_intercept)
    if Yc.shape[0] != n:
        raise ValueError(f"the operator has {n} pairs but Y has {Yc.shape[0]} rows")
    t0 = time.perf_counter()
    mine = comm.row_range(n)
    precond, pinfo = None, {"rank": 0}
    if precond_rank:
        s = min(int(precond_rank), n)
        idx = torch.randperm(n, generator=torch.Generator().manual_seed(int(seed)))[:s].to(op.device)
        panel = op.panel(idx)
        local = torch.cat([panel.rows(b).clone() for b in op.row_blocks(mine.start, mine.stop, s)]) \
            if mine.stop > mine.start else torch.empty((0, s), dtype=op.dtype, device=op.device)
        precond, pinfo = nystrom_preconditioner_from_columns(comm.gather_rows(local, n), idx, lam, op.dtype,
                                                             work_dtype=op.dtype)
        del local
        if pinfo.get("rank"):
            # preconditioned condition number <~ (d_min + lam) / lam (Frangella, Tropp & Udell 2023, Thm. 5.1,
            # d_min the smallest kept Nystrom eigenvalue, about the first one not captured); CG needs about
            # sqrt(kappa) / 2 ln(2 / tol) iterations (Saad 2003, Thm. 6.29)
            kappa = (pinfo["eig_min"] + lam) / lam if lam > 0 else float("inf")
            pinfo["kappa_estimate"] = kappa
            pinfo["iterations_estimate"] = math.ceil(0.5 * math.sqrt(kappa) * math.log(2 / tol))
            _log(log, "cg: Nystrom preconditioner of rank %d, condition number ~%.3g, ~%d iterations expected "
                 "for tol %.0e", pinfo["rank"], kappa, pinfo["iterations_estimate"], tol)
    t1 = time.perf_counter()
    B = torch.as_tensor(Yc, dtype=op.dtype, device=op.device)
    if fit_intercept:
        del Yc  # the centred float64 copy; B holds the right-hand sides

    alpha, cg_info = operator_pcg(op, B, lam, precond, tol, int(max_iter), comm, log, "cg")
    info = {"method": "cg_matrix_free", "n": n, "n_rhs": int(B.shape[1]), "lam": lam, **cg_info,
            "preconditioner": {"name": "nystrom", **pinfo} if precond else None, "precond_s": t1 - t0,
            "processes": comm.world_size, "device": str(op.device),
            "dtype": str(op.dtype).removeprefix("torch."), "time_s": time.perf_counter() - t0, "intercept": mu}
    return {"coef": alpha, "intercept": mu, "info": info}


def operator_pcg(op, B: torch.Tensor, lam: float, precond, tol: float, max_iter: int, comm: Comm, log,
                 tag: str) -> tuple[torch.Tensor, dict]:
    """``(K + lam I) alpha = B`` by :func:`biokernels.solvers.ridge._pcg` on the
    operator, each product ``K P`` split over the processes' rows and gathered.

    B (n, c) on every process; ``precond`` a callable ``R -> P^{-1} R`` or
    None; ``tag`` names the solver in the log. Returns (alpha (n, c), info
    with ``iterations``, ``converged``, ``history``, ``residual_max``,
    ``cg_s``); a run that stops at ``max_iter`` is logged as not converged."""
    n = op.n
    mine = comm.row_range(n)
    t1 = time.perf_counter()

    def matvec(P: torch.Tensor) -> torch.Tensor:
        return comm.gather_rows(op.matmul(P.contiguous(), rows=mine), n)

    def progress(it, res, active):
        _log(log, "%s iteration %d: max relative residual %.3e, %d of %d columns active, %.1f s", tag, it, res,
             active, B.shape[1], time.perf_counter() - t1)

    alpha, it, history, converged, rel = _pcg(matvec, lam, B, precond, tol, int(max_iter), callback=progress)
    _sync(op.device)
    info = {"iterations": it, "converged": converged, "history": history,
            "residual_max": float(rel.max()) if rel.numel() else 0.0, "cg_s": time.perf_counter() - t1}
    if not converged:
        _log(log, "%s: not converged after %d iterations (max relative residual %.3e > tol %.0e)", tag, it,
             info["residual_max"], tol)
    return alpha, info


# --------------------------------------------------------------------------- predict


def predict_pairs(op: PairNTKOperator, fit: dict, test_pairs, *, comm: Comm | None = None) -> np.ndarray:
    """Predictions ``K(test, columns) @ coef + intercept`` for new pairs of the
    operator's drugs and cells, streamed over blocks of test pairs.

    Parameters
    ----------
    op : the training operator
    fit : a result of :func:`nystrom_ridge` (columns = its centres) or
        :func:`cg_ridge` (columns = all training pairs)
    test_pairs : (drug_index, cell_index), int arrays (m,)
    comm : Comm, optional: each process predicts its share of the test
        pairs, then they are gathered

    Returns
    -------
    numpy float64 array (m, c)
    """
    comm = comm or Comm()
    td, tc = op._pairs_arg(None, test_pairs, "test_pairs")  # checked once: ints, in range, equal lengths
    m = td.numel()
    coef = fit["coef"]
    panel = op.panel(fit.get("centres"))
    mine = comm.row_range(m)
    out = torch.empty((mine.stop - mine.start, coef.shape[1]), dtype=torch.float64, device=op.device)
    b = op.block_rows(panel.m)
    for s in range(mine.start, mine.stop, b):
        e = min(s + b, mine.stop)
        Kb = panel.rows(slice(0, e - s), row_pairs=(td[s:e], tc[s:e]))
        out[s - mine.start:e - mine.start] = Kb.to(coef.dtype) @ coef
    P = comm.gather_rows(out, m).cpu().numpy()
    return P if fit["intercept"] is None else P + fit["intercept"]
