"""Falkon-grade Nystrom kernel ridge on a matrix-free kernel operator.

Nystrom kernel ridge, ``min_a ||Y - K_nM a||^2 + lam a^T K_MM a`` (Rudi,
Carratino & Rosasco 2017), with what lets Falkon reach the exact fit at a
small ridge: centres drawn by approximate ridge leverage scores
(:func:`ridge_leverage_scores`; Rudi et al. 2018), and the system conditioned
by the Cholesky factor of K_MM (``K_MM + delta I = L L^T``, solved in
``beta = L^T a``). Two M x M float64 buffers. :func:`falkon_ridge` returns
the fit of :func:`biokernels.solvers.matrix_free.nystrom_ridge` (coefficients
on centres), so :func:`~biokernels.solvers.matrix_free.predict_pairs` uses it.

Notes: docs/ridge_notes.md, section "Falkon-grade Nystrom (solvers/falkon)".
"""

from __future__ import annotations

import math
import time

import numpy as np
import torch

from biokernels.distributed import Comm
from biokernels.kernels.ntk_operator import PairNTKOperator
from biokernels.solvers.checks import check_lam
from biokernels.solvers.matrix_free import MIN_CENTRES, _log, _nystrom_pass, _nystrom_targets, operator_pcg
from biokernels.solvers.ridge.cholesky import _cholesky_, _cholesky_solve_, _forward_solve_
from biokernels.solvers.ridge_core import NotPositiveDefiniteError

__all__ = ["falkon_bytes", "falkon_max_centres", "falkon_preconditioner", "falkon_ridge", "leverage_order",
           "ridge_leverage_scores"]

_NB = 1024  # rows of a diagonal block in the blocked factorizations and substitutions
_JITTER_TRIES = 6
EXACT = ("never", "unconverged", "always")


def falkon_bytes(m: int, c: int, block_bytes: int) -> int:
    """Bytes of :func:`falkon_ridge`'s own buffers: two M x M float64 (K_MM,
    then its factor L; H, then the conditioned system and its factor), three
    M x c float64 (K_Mn Y, the right-hand side, the coefficients), one
    operator block."""
    return 2 * m * m * 8 + 3 * m * c * 8 + block_bytes


def falkon_max_centres(budget_bytes: float, c: int) -> int:
    """The largest M whose M-dependent buffers (:func:`falkon_bytes` without the
    operator block) fit ``budget_bytes`` (at least 1): 3 GiB holds 13,474
    centres with 978 genes (the seven-buffer Nystrom of
    :func:`~biokernels.solvers.matrix_free.max_centres`: 7,377), 6 GiB 19,346."""
    a, b, k = 16.0, 24.0 * c, -float(budget_bytes)
    if k >= 0:
        return 1
    return max(1, int((-b + math.sqrt(b * b - 4 * a * k)) / (2 * a)))


def ridge_leverage_scores(op: PairNTKOperator, lam: float, *, sketch: int = 2048, seed: int = 0,
                          comm: Comm | None = None) -> torch.Tensor:
    """Approximate lam-ridge leverage scores ``tau_i = [K (K + lam I)^{-1}]_ii``.

    From a uniform sketch S of s columns: ``tau~_i = (K_ii - k_iS (K_SS +
    lam (s/n) I)^{-1} k_Si) / lam`` (Musco & Musco 2017, Sec. 3, with uniform
    weights 1/p, p = s/n), streamed over row blocks (n s^2 work, no n x s
    panel kept), clipped to [0, 1], the range of the exact scores (a small
    sketch at a small ridge overestimates). Their sum estimates the
    effective dimension ``d_eff = tr K (K + lam I)^{-1}``.

    Parameters
    ----------
    op : PairNTKOperator over the n pairs
    lam : float > 0, the absolute ridge of the fit
    sketch : int >= 1, s (at most n)
    seed : int, the sketch's sample (``torch.Generator``)
    comm : Comm, optional: each process scores its rows, then they are gathered

    Returns
    -------
    torch.Tensor float64 (n,) in [0, 1], on the operator's device.

    Raises
    ------
    ValueError
        lam not > 0, sketch not an int >= 1.
    """
    comm = comm or Comm()
    lam = check_lam(lam, interval="(0, inf)")
    if not (isinstance(sketch, (int, np.integer)) and sketch >= 1):
        raise ValueError(f"sketch must be an int >= 1, got {sketch!r}")
    n = op.n
    s = min(int(sketch), n)
    S = torch.randperm(n, generator=torch.Generator().manual_seed(int(seed)))[:s].to(op.device)
    def build():
        A = op.kernel(S, S).to(torch.float64)
        A.diagonal().add_(lam * s / n)
        return A

    R, _ = _factor(build, _entry_eps(op) * s * float(op.diag(S).mean()), "K_SS + lam (s/n) I")
    panel = op.panel(S)
    mine = comm.row_range(n)
    local = torch.empty((mine.stop - mine.start, 1), dtype=torch.float64, device=op.device)
    for blk in op.row_blocks(mine.start, mine.stop, s):
        X = torch.linalg.solve_triangular(R, panel.rows(blk).to(torch.float64).mT, upper=False)
        local[blk.start - mine.start:blk.stop - mine.start, 0] = op.diag(blk).to(torch.float64) - X.square().sum(0)
    return comm.gather_rows(local, n)[:, 0].clamp_(min=0.0).div_(lam).clamp_(max=1.0)


def leverage_order(scores: torch.Tensor, seed: int = 0) -> torch.Tensor:
    """An order of the n pairs whose every prefix is a weighted sample without
    replacement, weights ``scores``: ascending ``E_i / w_i`` with E_i
    standard exponential (Efraimidis & Spirakis 2006). Pairs of weight 0
    come last. Returns int64 (n,) on the scores' device."""
    w = scores.to(torch.float64).cpu()
    E = torch.empty(w.numel(), dtype=torch.float64).exponential_(generator=torch.Generator().manual_seed(int(seed)))
    keys = torch.where(w > 0, E / w.clamp(min=np.finfo(np.float64).tiny), torch.inf)
    return torch.argsort(keys, stable=True).to(scores.device)


def _entry_eps(op) -> float:
    return float(torch.finfo(op.dtype).eps)


def _factor(build, jitter_scale: float, what: str) -> tuple[torch.Tensor, float]:
    """(L, jitter): the Cholesky factor (lower triangle, in the buffer
    ``build()`` returns) of ``build() + jitter I``, with jitter 0, then
    ``jitter_scale * 10^k`` for k = 0, ..., 5, while the factorization breaks
    down (each try rebuilds the matrix: the failed one overwrote it)."""
    tries = [0.0] + [jitter_scale * 10.0 ** k for k in range(_JITTER_TRIES)]
    for jitter in tries:
        A = build()
        A.diagonal().add_(jitter)
        try:
            _cholesky_(A, _NB)
            return A.tril_(), jitter
        except NotPositiveDefiniteError:
            del A
    raise ValueError(f"falkon: {what} is not positive definite even with {tries[-1]:.3g} added to its diagonal")


def _condition_(H: torch.Tensor, L: torch.Tensor) -> None:
    """H <- L^{-1} H L^{-T} in place, by column blocks then row blocks
    (extra memory M x block)."""
    m = H.shape[0]
    for s in range(0, m, _NB):
        e = min(s + _NB, m)
        H[:, s:e] = torch.linalg.solve_triangular(L, H[:, s:e], upper=False)
    for s in range(0, m, _NB):
        e = min(s + _NB, m)
        H[s:e, :] = torch.linalg.solve_triangular(L.mT, H[s:e, :], upper=True, left=False)


def _solve(G: torch.Tensor, rhs: torch.Tensor, k: int) -> torch.Tensor:
    """beta_k = (G_kk G_kk^T)^{-1} rhs[:k]: the system of the first k centres."""
    beta = rhs[:k].clone()
    _cholesky_solve_(G[:k, :k], beta, _NB)
    return beta


def _energy(G: torch.Tensor, d: torch.Tensor, lam: float) -> float:
    """``||K_nM L^{-T} d||_F^2 = d^T Hw d = ||G^T d||^2 - lam ||d||^2``."""
    k = d.shape[0]
    return max(float((G[:k, :k].mT @ d).square().sum()) - lam * float(d.square().sum()), 0.0)


def _inverse_frobenius2(G: torch.Tensor) -> float:
    """``||G^{-1}||_F^2`` of the lower-triangular G, by column blocks
    (``G^{-1} E`` for each block E of the identity; rows above the block are 0)."""
    m = G.shape[0]
    total = 0.0
    for s in range(0, m, _NB):
        e = min(s + _NB, m)
        E = torch.zeros((m - s, e - s), dtype=G.dtype, device=G.device)
        E[:e - s].fill_diagonal_(1.0)
        _forward_solve_(G[s:, s:], E, _NB)
        total += float(E.square().sum())
    return total


def _pass_and_solve(op, Yn, mu, J, lam, comm, log, product_dtype):
    """One pass and the conditioned solve for the centres J: (coef, record,
    L, G), L and G the factors of K_MM (+ jitter) and of the conditioned
    system."""
    m = J.numel()
    tp = time.perf_counter()
    mean_diag = float(op.diag(J).to(torch.float64).mean())
    L, jitter = _factor(lambda: op.kernel(J, J).to(torch.float64), _entry_eps(op) * m * mean_diag, "K_MM")
    H, Z, trK = _nystrom_pass(op, Yn, mu, J, comm, log, f"M={m}", product_dtype)
    _condition_(H, L)
    tr_nys = float(H.diagonal().sum())
    H.diagonal().add_(lam)
    try:  # eigenvalues >= lam in exact arithmetic: a breakdown is rounding swamping lam
        _cholesky_(H, _NB)
    except NotPositiveDefiniteError as err:
        raise ValueError(f"falkon: the conditioned system L^-1 H L^-T + lam I broke down in float64 ({err}); "
                         f"lam = {lam} is too small for the kernel's precision ({op.dtype})") from None
    G = H.tril_()
    rhs = torch.linalg.solve_triangular(L, Z, upper=False)
    del Z
    beta = _solve(G, rhs, m)
    fnorm = max(_energy(G, beta, lam), np.finfo(float).tiny)

    def dist(big, k):
        d = big.clone()
        d[:k] -= _solve(G, rhs, k)
        return math.sqrt(_energy(G, d, lam) / fnorm)

    h, q = m // 2, m // 4
    change = dist(beta, h) if h >= 1 else float("nan")
    if q >= 1:
        before = dist(_solve(G, rhs, h), q)
        r = change / before if before > 0 else float("inf")
        error_est = change * r / (1.0 - r) if r < 1 else float("inf")
    else:
        error_est = float("nan")
    if m == op.n and jitter == 0.0:
        error_est = 0.0  # every sample a centre, no jitter: Nystrom kernel ridge is kernel ridge
    d_eff = m - lam * _inverse_frobenius2(G)
    coef = torch.linalg.solve_triangular(L.mT, beta, upper=True)
    rec = {"centres": m, "rank": m, "jitter": jitter, "trace_K": trK, "trace_nystrom": tr_nys,
           "trace_bound_rel": max(trK - tr_nys, 0.0) / lam, "fit_change": change, "fit_error_est": error_est,
           "d_eff": float(d_eff), "seconds": time.perf_counter() - tp}
    return coef, rec, L, G


def falkon_preconditioner(op: PairNTKOperator, J: torch.Tensor, L: torch.Tensor, G: torch.Tensor, lam: float,
                          comm: Comm | None = None):
    """``apply(R) = (K~ + lam I)^{-1} R``, the Nystrom kernel ``K~ = K_nM
    K_MM^{-1} K_Mn`` of the centres J as a preconditioner of ``K + lam I``.

    Woodbury: ``(K~ + lam I)^{-1} = (I - K_nM (H + lam K_MM)^{-1} K_Mn) /
    lam``, and ``H + lam K_MM = L G G^T L^T`` with the factors of
    :func:`falkon_ridge`'s solve. Since ``K~ <= K``, the preconditioned
    eigenvalues lie in ``[1, 1 + ||K - K~||_2 / lam]`` (Diaz et al. 2023,
    "Robust, randomized preconditioning for kernel ridge regression",
    Sec. 2). One application streams the panel ``K_nM`` twice (``4 n M c``
    flops in the operator's dtype, the M x M solves in float64); R (n, c)
    in the operator's dtype, the same on every process."""
    comm = comm or Comm()
    panel = op.panel(J)
    mine = comm.row_range(op.n)
    blocks = list(op.row_blocks(mine.start, mine.stop, J.numel()))

    def apply(R: torch.Tensor) -> torch.Tensor:
        U = torch.zeros((J.numel(), R.shape[1]), dtype=torch.float64, device=R.device)
        for blk in blocks:
            U += (panel.rows(blk).mT @ R[blk]).to(torch.float64)
        comm.all_reduce_sum_(U)
        W = torch.linalg.solve_triangular(L, U, upper=False)
        _cholesky_solve_(G, W, _NB)
        W = torch.linalg.solve_triangular(L.mT, W, upper=True).to(R.dtype)
        out = torch.empty((mine.stop - mine.start, R.shape[1]), dtype=R.dtype, device=R.device)
        for blk in blocks:
            out[blk.start - mine.start:blk.stop - mine.start] = R[blk] - panel.rows(blk) @ W
        return comm.gather_rows(out, op.n).div_(lam)

    return apply


def falkon_ridge(op: PairNTKOperator, Y, lam: float, *, centres: int | str = "auto", tol: float = 0.01,
                 max_centres: int = 16384, sketch: int = 2048, seed: int = 0, fit_intercept: bool = True,
                 product_dtype: torch.dtype = torch.float64, exact: str = "never", cg_tol: float = 1e-3,
                 cg_max_iter: int = 100, comm: Comm | None = None, log=None) -> dict:
    """Nystrom kernel ridge with leverage-score centres, conditioned by K_MM's
    Cholesky factor (module docstring; derivation in docs/ridge_notes.md),
    and optionally the exact kernel ridge by CG preconditioned with it.

    One streamed pass accumulates ``H = K_Mn K_nM`` and ``Z = K_Mn Y``
    (:func:`~biokernels.solvers.matrix_free._nystrom_pass`); then
    ``Hw = L^{-1} H L^{-T}`` in place, ``G G^T = Hw + lam I`` in place,
    ``beta = (G G^T)^{-1} L^{-1} Z`` and ``a = L^{-T} beta``. Leading blocks of
    L and G are the factors of the first k centres, so the fits on the first
    M/2 and M/4 centres, and their distances ``||K_nM (a_M - a_k)||``, come
    from the same factors: ``fit_error_est`` extrapolates them as in
    :func:`~biokernels.solvers.matrix_free.nystrom_ridge`.

    Parameters
    ----------
    op : PairNTKOperator over the n training pairs
    Y : array (n,) or (n, c), training targets (same on every process)
    lam : float > 0, absolute ridge (the exact solve's lam)
    centres : int or "auto"
        M, or "auto": M starts at twice the estimated effective dimension
        (the sum of :func:`ridge_leverage_scores`; at least
        :data:`~biokernels.solvers.matrix_free.MIN_CENTRES`) and doubles
        while ``fit_error_est > tol``, within ``max_centres``. An estimate
        that cannot be formed (NaN: fewer than 4 centres) counts as not
        converged.
    tol : float > 0
    max_centres : int >= 1, the cap of "auto"
    sketch : int >= 1, columns of the leverage-score sketch
    seed : int, the sketch and the centres' order
    fit_intercept : bool, fit ``Y - mean(Y)`` and return the mean
    product_dtype : torch.float64 or torch.float32, the precision of the
        pass's block products (summed over blocks in float64)
    exact : {"never", "unconverged", "always"}
        Then solve the exact ``(K + lam I) alpha = Y - mean`` by CG
        (:func:`biokernels.solvers.ridge._pcg`, iterates in the operator's
        dtype) preconditioned by :func:`falkon_preconditioner` of the last
        centres: never, only when the Nystrom fit's estimate stayed above
        ``tol`` at the cap, or always.
    cg_tol : float > 0, the CG's relative residual per output
    cg_max_iter : int >= 1
    comm : Comm, optional
    log : logging.Logger, optional

    Returns
    -------
    dict with ``coef`` (torch float64 (M, c)), ``centres`` (int64 (M,)),
    ``intercept`` (float64 (c,) or None), ``info`` (as nystrom_ridge's, plus
    ``d_eff_leverage``, ``jitter``, ``sketch``, ``leverage_s``). After CG:
    ``coef`` (n, c) in the operator's dtype, ``centres`` None (every training
    pair), ``info["method"] = "falkon+cg"`` with ``iterations``,
    ``history``, ``residual_max`` and ``converged`` (the CG's); the Nystrom
    passes stay in ``info["passes"]``.

    Raises
    ------
    ValueError
        Bad lam, tol, centres, sketch, exact, cg settings or Y; a
        factorization that fails even with jitter.
    """
    comm = comm or Comm()
    lam = check_lam(lam, interval="(0, inf)")
    if not (tol > 0):
        raise ValueError(f"tol must be > 0, got {tol}")
    if product_dtype not in (torch.float32, torch.float64):
        raise ValueError(f"product_dtype must be torch.float32 or torch.float64, got {product_dtype}")
    if exact not in EXACT:
        raise ValueError(f"exact: expected one of {EXACT}, got {exact!r}")
    if not (cg_tol > 0) or not (isinstance(cg_max_iter, (int, np.integer)) and cg_max_iter >= 1):
        raise ValueError(f"cg_tol must be > 0 and cg_max_iter an int >= 1, got {cg_tol!r}, {cg_max_iter!r}")
    n = op.n
    Yn, mu, ynorm = _nystrom_targets(Y, n, fit_intercept)
    t0 = time.perf_counter()
    scores = ridge_leverage_scores(op, lam, sketch=sketch, seed=seed, comm=comm)
    d_eff_lev = float(scores.sum())
    order = leverage_order(scores, seed + 1)
    t_lev = time.perf_counter() - t0
    _log(log, "falkon: leverage scores from a %d-column sketch in %.1f s; estimated d_eff %.1f",
         min(int(sketch), n), t_lev, d_eff_lev)
    if centres == "auto":
        cap = min(n, max(1, int(max_centres)))
        m = min(cap, max(MIN_CENTRES, math.ceil(2 * d_eff_lev)))
    elif isinstance(centres, (int, np.integer)) and centres >= 1:
        m = cap = min(int(centres), n)
    else:
        raise ValueError(f"centres: expected 'auto' or an int >= 1, got {centres!r}")
    passes = []
    while True:
        J = order[:m]
        coef, rec, L, G = _pass_and_solve(op, Yn, mu, J, lam, comm, log, product_dtype)
        rec["trace_bound"] = rec["trace_bound_rel"] * ynorm
        passes.append(rec)
        _log(log, "falkon M=%d: fit change M/2->M %.2e, estimated distance to the exact fit %.2e (tol %.0e), "
             "d_eff %.1f, jitter %.2g, %.1f s", m, rec["fit_change"], rec["fit_error_est"], tol, rec["d_eff"],
             rec["jitter"], rec["seconds"])
        if centres != "auto" or rec["fit_error_est"] <= tol or m >= cap:
            break
        del coef, L, G  # before the next pass allocates its own
        m = min(2 * m, cap)
    info = {"method": "falkon", "n": n, "n_rhs": int(Yn.shape[1]), "lam": lam,
            "centres_rule": "auto" if centres == "auto" else "fixed", "centre_sampling": "ridge leverage scores",
            "sketch": min(int(sketch), n), "d_eff_leverage": d_eff_lev, "leverage_s": t_lev, "tol": tol,
            "max_centres": int(max_centres), "product_dtype": str(product_dtype).removeprefix("torch."),
            "processes": comm.world_size, "device": str(op.device), "dtype": str(op.dtype).removeprefix("torch."),
            "converged": bool(passes[-1]["fit_error_est"] <= tol), "passes": passes, **passes[-1],
            "time_s": time.perf_counter() - t0, "intercept": mu}
    if exact == "always" or (exact == "unconverged" and not info["converged"]):
        _log(log, "falkon: the Nystrom fit's estimated distance to the exact fit is %.2e (tol %.0e): solving the "
             "exact system by CG preconditioned with the Nystrom kernel of its %d centres", info["fit_error_est"],
             tol, m)
        alpha, cg_info = _exact_by_cg(op, Yn, mu, J, L, G, lam, cg_tol, int(cg_max_iter), comm, log)
        info.update({"method": "falkon+cg", "nystrom_converged": info["converged"], **cg_info,
                     "time_s": time.perf_counter() - t0})
        return {"coef": alpha, "centres": None, "intercept": mu, "info": info}
    if centres == "auto" and not info["converged"]:
        _log(log, "falkon: the estimated distance to the exact fit is still %.2e > tol %.0e at the cap of %d "
             "centres; raise max_centres (and the memory budget) for a closer fit, or set exact",
             passes[-1]["fit_error_est"], tol, cap)
    return {"coef": coef, "centres": J, "intercept": mu, "info": info}


def _exact_by_cg(op, Yn, mu, J, L, G, lam, tol, max_iter, comm, log):
    """(alpha (n, c), info) of ``(K + lam I) alpha = Y - mean`` by CG with the
    Falkon preconditioner of the centres J."""
    n = op.n
    B = torch.empty((n, Yn.shape[1]), dtype=op.dtype, device=op.device)
    for s in range(0, n, 65536):  # centred by blocks: no float64 copy of Y
        B[s:s + 65536] = torch.as_tensor(Yn[s:s + 65536] - (0.0 if mu is None else mu), dtype=op.dtype)
    alpha, info = operator_pcg(op, B, lam, falkon_preconditioner(op, J, L, G, lam, comm), tol, max_iter, comm, log,
                               "falkon cg")
    return alpha, {**info, "cg_tol": tol}
