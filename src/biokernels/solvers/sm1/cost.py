"""Cost model of SM1: memory and time of a fit estimated before building it
(:func:`sm1_cost`), and whether the fits of a split keep to a budget
(:func:`sm1_fits`), so a workflow can skip SM1 on a network that is too
large, with a logged reason.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["sm1_cost", "sm1_fits"]


# Calibrated on this project's 2-core machine with cvxpy 1.9 + Clarabel 0.11
# (measurements: docs/diffusion_notes.md): interior-point iterations, effective
# sparse-LDL rate, bytes of peak memory per non-zero of the conic data (cvxpy
# canonicalisation + Clarabel), and the interpreter's baseline.
_ITERATIONS = 30
_FLOPS_PER_SECOND = 3e8
_BYTES_PER_NNZ = 250
_BASE_BYTES = 200 * 2 ** 20
# The elementwise form of diagonal factors with a basis (the diffusion kernels'
# default): its KKT system factors as one dense front of the basis and the
# training examples, (m + n_train)³ / 3 flops per iteration; 20 iterations at
# 1.5e9 flop/s is within 0.7-5x of the measured times (an over-estimate at the
# small sizes; docs/diffusion_notes.md).
_ITERATIONS_ELEMENTWISE = 20
_FLOPS_PER_SECOND_ELEMENTWISE = 1.5e9


def _is_count(value, least: int) -> bool:
    """Whether ``value`` is an integer (a whole float too) >= ``least``."""
    if isinstance(value, (bool, np.bool_)):
        return False
    if isinstance(value, (int, np.integer)):
        return value >= least
    return (isinstance(value, (float, np.floating)) and math.isfinite(value)
            and float(value).is_integer() and value >= least)


def sm1_cost(n_train: int, n_kernels: int, rank, basis_dim: int | None = None,
             diagonal: bool = False) -> dict:
    """Rough memory and time of one SM1 fit (before building it).

    Model (interior-point method on the cone program of :class:`SM1`):

    * conic data non-zeros: ``Σ_i n_train r_i`` without a basis; with a
      basis of ``m`` columns ``n_train m + Σ_i (r_i if diagonal else m r_i)``;
    * per-iteration factorisation work: each cone row couples to all the
      variables it reads, so ``Σ_i r_i n_train²`` flops without a basis,
      ``m n_train² + Σ_i r_i m²`` with one and full factors, plus
      ``n_train³ / 3`` for the dense α block; time = 30 iterations at 3e8
      flop/s, memory = 200 MiB + 250 bytes per non-zero + the dense α block:
      constants measured with cvxpy 1.9 and Clarabel 0.11 on 2 CPU cores
      (within a factor ~2);
    * diagonal factors with a basis (:class:`SM1`'s default elementwise
      form): one dense front of ``m + n_train``, ``(m + n_train)³ / 3``
      flops per iteration, 20 iterations at 1.5e9 flop/s (measured with
      Clarabel 0.11 and faer on this project's machine: within 0.7-5x from
      the Ligand to the von Mering size; see docs/diffusion_notes.md), memory
      as above with the dense front.

    Parameters
    ----------
    n_train : int
        Number of training proteins.
    n_kernels : int
        Number of kernels p.
    rank : int or sequence of int
        Columns ``r_i`` of each factor (the numerical rank of the training
        block, <= n_train, or the kept spectrum size with a diagonal factor).
    basis_dim : int, optional
        Columns ``m`` of a shared basis (``SM1.fit_factors(basis=...)``).
    diagonal : bool
        Whether the factors are diagonal (with a basis).

    Returns
    -------
    dict
        ``nnz`` (int), ``flops_per_iteration`` (float), ``memory_bytes``
        (int), ``seconds`` (float, estimated wall time).

    Raises
    ------
    ValueError
        If a size is not an integer >= 1, a rank not an integer >= 0, or
        ``rank`` has the wrong length.
    """
    for name, value in (("n_train", n_train), ("n_kernels", n_kernels), ("basis_dim", basis_dim)):
        if value is not None and not _is_count(value, 1):
            raise ValueError(f"sm1_cost: {name} must be an integer >= 1, got {value!r}")
    r_in = np.asarray(rank)
    if r_in.ndim > 1 or not all(_is_count(v, 0) for v in r_in.ravel().tolist()):
        raise ValueError(f"sm1_cost: rank must be an integer >= 0 or one per kernel, got {rank!r}")
    ranks = np.broadcast_to(r_in.astype(np.int64), (int(n_kernels),)) \
        if r_in.ndim == 0 else r_in.astype(np.int64)
    if ranks.size != n_kernels:
        raise ValueError(f"sm1_cost: need n_train, n_kernels >= 1 and {n_kernels} ranks >= 0; got "
                         f"n_train={n_train}, n_kernels={n_kernels}, rank={rank}")
    n = float(n_train)
    if basis_dim is None:
        if diagonal:
            raise ValueError("sm1_cost: diagonal factors need a basis (basis_dim)")
        nnz = float(np.sum(ranks)) * n
        flops = float(np.sum(ranks)) * n * n
    else:
        m = float(basis_dim)
        if m < 1:
            raise ValueError(f"sm1_cost: basis_dim must be >= 1, got {basis_dim}")
        nnz = n * m + (float(np.sum(ranks)) if diagonal else m * float(np.sum(ranks)))
        if diagonal:
            nnz += 6.0 * m + n_kernels * m        # m 3-dim cones and the p linear rows
            flops = (m + n) ** 3 / 3.0
            memory = _BASE_BYTES + _BYTES_PER_NNZ * nnz + 8.0 * (m + n) ** 2
            return {"nnz": int(nnz), "flops_per_iteration": flops, "memory_bytes": int(memory),
                    "seconds": _ITERATIONS_ELEMENTWISE * flops / _FLOPS_PER_SECOND_ELEMENTWISE}
        flops = m * n * n + float(np.sum(ranks)) * m * m
    flops += n ** 3 / 3.0
    memory = _BASE_BYTES + _BYTES_PER_NNZ * nnz + 8.0 * n * n
    return {"nnz": int(nnz), "flops_per_iteration": flops, "memory_bytes": int(memory),
            "seconds": _ITERATIONS * flops / _FLOPS_PER_SECOND}


def sm1_fits(n_train: int, n_kernels: int, rank, basis_dim: int | None = None,
             diagonal: bool = False, max_memory_bytes: float = 4 * 2 ** 30,
             max_seconds: float = 600.0, n_fits: int = 1) -> tuple[bool, str]:
    """Whether SM1 fits are expected to fit a memory and time budget.

    Parameters
    ----------
    n_train, n_kernels, rank, basis_dim, diagonal
        As :func:`sm1_cost`.
    max_memory_bytes : float
        Memory budget of one fit, bytes (default 4 GiB).
    max_seconds : float
        Time budget of all ``n_fits`` fits together, seconds (default 600).
    n_fits : int
        Number of fits of this size (SM1 is single-task: one per task and
        split), >= 1.

    Returns
    -------
    (ok, reason) : tuple of bool and str
        ``reason`` states the estimate and the budget, fit for a log line.

    Raises
    ------
    ValueError
        As :func:`sm1_cost`, or ``n_fits`` not an integer >= 1, or a budget
        not a finite number > 0.
    """
    if not _is_count(n_fits, 1):
        raise ValueError(f"n_fits: expected an integer >= 1, got {n_fits!r}")
    for name, value in (("max_memory_bytes", max_memory_bytes), ("max_seconds", max_seconds)):
        if not (isinstance(value, (int, float, np.integer, np.floating)) and math.isfinite(value)
                and value > 0):
            raise ValueError(f"sm1_fits: {name} must be a finite number > 0, got {value!r}")
    est = sm1_cost(n_train, n_kernels, rank, basis_dim=basis_dim, diagonal=diagonal)
    total = est["seconds"] * int(n_fits)
    desc = (f"SM1 estimate for n_train={n_train}, p={n_kernels}: {est['nnz']:,} conic non-zeros, "
            f"~{est['memory_bytes'] / 2 ** 30:.2f} GiB, ~{est['seconds']:.0f} s per fit"
            + (f", ~{total:.0f} s for {int(n_fits)} fits" if int(n_fits) > 1 else ""))
    problems = []
    if est["memory_bytes"] > max_memory_bytes:
        problems.append(f"memory over the {max_memory_bytes / 2 ** 30:.2f} GiB budget")
    if total > max_seconds:
        problems.append(f"time over the {max_seconds:.0f} s budget")
    if problems:
        return False, f"{desc}: skipped ({'; '.join(problems)})"
    budget = f"{max_memory_bytes / 2 ** 30:.2f} GiB, {max_seconds:.0f} s"
    return True, f"{desc}: within budget ({budget})"
