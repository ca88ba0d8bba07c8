"""Processes of one distributed solve: who am I, which rows are mine, sums and gathers.

A thin layer over ``torch.distributed`` (library): NCCL between GPUs, gloo
between CPU processes. :class:`Comm` is what the matrix-free solvers
(:mod:`biokernels.solvers.matrix_free`) talk to; ``Comm()`` with no process
group is the single-process case, where every collective is the identity, so
the same code runs on one process or many.

:func:`init_from_env` starts the process group from the environment set by
either launcher:

* ``torchrun`` (``torch.distributed.run``, library): ``RANK``,
  ``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR``, ``MASTER_PORT``;
* SLURM ``srun`` (one task per GPU): ``SLURM_PROCID``, ``SLURM_NTASKS``,
  ``SLURM_LOCALID``; ``MASTER_ADDR`` defaults to the first host of
  ``SLURM_JOB_NODELIST`` (expanded by ``scontrol show hostnames``) and
  ``MASTER_PORT`` to ``29500 + SLURM_JOB_ID % 20000``.
"""

from __future__ import annotations

import os
import subprocess
from datetime import timedelta

import torch
import torch.distributed as dist


class Comm:
    """Rank, world size and the collectives of the matrix-free solvers.

    Parameters
    ----------
    group : torch.distributed ProcessGroup or None
        None: the default group if one is initialized, else the
        single-process case (rank 0 of 1).
    """

    def __init__(self, group=None):
        self.group = group
        self.active = dist.is_available() and dist.is_initialized()
        self.rank = dist.get_rank(group) if self.active else 0
        self.world_size = dist.get_world_size(group) if self.active else 1
        self.backend = dist.get_backend(group) if self.active else None

    def __repr__(self) -> str:
        return f"Comm(rank={self.rank}, world_size={self.world_size}, backend={self.backend})"

    def row_range(self, n: int) -> slice:
        """This process's consecutive share of n rows (sizes differ by at
        most 1; rank order)."""
        q, r = divmod(int(n), self.world_size)
        start = self.rank * q + min(self.rank, r)
        return slice(start, start + q + (1 if self.rank < r else 0))

    def all_reduce_sum_(self, t: torch.Tensor) -> torch.Tensor:
        """Sum ``t`` over the processes, in place (identity on one process)."""
        if self.world_size > 1:
            dist.all_reduce(t, op=dist.ReduceOp.SUM, group=self.group)
        return t

    def gather_rows(self, local: torch.Tensor, n: int) -> torch.Tensor:
        """Concatenate every process's :meth:`row_range` share of an
        (n, ...) tensor, in rank order, on every process.

        Parameters
        ----------
        local : torch.Tensor, shape (len(row_range(n)), ...)
        n : int

        Returns
        -------
        torch.Tensor, shape (n, ...)

        Raises
        ------
        ValueError
            ``local`` is not this process's share.
        """
        mine = self.row_range(n)
        if local.shape[0] != mine.stop - mine.start:
            raise ValueError(f"gather_rows: rank {self.rank} holds {local.shape[0]} rows, its share is "
                             f"{mine.stop - mine.start} of {n}")
        if self.world_size == 1:
            return local
        q = -(-int(n) // self.world_size)  # the largest share; gloo gathers equal sizes
        pad = local.new_zeros((q,) + tuple(local.shape[1:]))
        pad[:local.shape[0]] = local
        parts = [torch.empty_like(pad) for _ in range(self.world_size)]
        dist.all_gather(parts, pad.contiguous(), group=self.group)
        out = []
        for r, p in enumerate(parts):
            q_r, rem = divmod(int(n), self.world_size)
            out.append(p[:q_r + (1 if r < rem else 0)])
        return torch.cat(out)

    def barrier(self) -> None:
        if self.world_size > 1:
            dist.barrier(group=self.group)

    def close(self) -> None:
        """Wait for every process, then leave the process group (a process
        that exits with the group's threads still running is aborted by
        gloo: "terminate called without an active exception")."""
        if self.world_size > 1 and dist.is_initialized():
            dist.barrier(group=self.group)
            dist.destroy_process_group()


def _first_slurm_host(nodelist: str) -> str:
    try:
        out = subprocess.run(["scontrol", "show", "hostnames", nodelist], capture_output=True, text=True,
                             check=True, timeout=30).stdout.split()
        return out[0]
    except (OSError, subprocess.SubprocessError, IndexError):
        return nodelist.split(",")[0].split("[")[0]


def launch_env() -> dict | None:
    """Rank, world size, local rank and rendezvous address set by torchrun
    or SLURM (see the module docstring), or None when neither launched
    several processes."""
    env = os.environ
    if "RANK" in env and "WORLD_SIZE" in env:
        return {"rank": int(env["RANK"]), "world_size": int(env["WORLD_SIZE"]),
                "local_rank": int(env.get("LOCAL_RANK", 0)), "launcher": "torchrun",
                "master_addr": env.get("MASTER_ADDR", "127.0.0.1"), "master_port": env.get("MASTER_PORT", "29500")}
    if "SLURM_PROCID" in env and int(env.get("SLURM_NTASKS", "1")) > 1:
        job = int(env.get("SLURM_JOB_ID", "0") or 0)
        return {"rank": int(env["SLURM_PROCID"]), "world_size": int(env["SLURM_NTASKS"]),
                "local_rank": int(env.get("SLURM_LOCALID", 0)), "launcher": "srun",
                "master_addr": env.get("MASTER_ADDR") or _first_slurm_host(env.get("SLURM_JOB_NODELIST", "127.0.0.1")),
                "master_port": env.get("MASTER_PORT") or str(29500 + job % 20000)}
    return None


def init_from_env(device: str = "cpu", timeout_s: float = 1800.0) -> tuple[Comm, torch.device]:
    """Join the process group a launcher set up, or stay single-process.

    Parameters
    ----------
    device : {"cpu", "cuda"}
        "cuda": each process takes GPU ``local_rank`` and the backend is
        NCCL; "cpu": gloo.
    timeout_s : float
        Collective timeout.

    Returns
    -------
    (Comm, torch.device)

    Raises
    ------
    RuntimeError
        "cuda" asked but a process's local rank has no GPU.
    """
    info = launch_env()
    if device not in ("cpu", "cuda"):
        raise ValueError(f"device: expected 'cpu' or 'cuda', got {device!r}")
    if info is None or info["world_size"] == 1:
        return Comm(), torch.device("cuda" if device == "cuda" else "cpu")
    if device == "cuda":
        if info["local_rank"] >= torch.cuda.device_count():
            raise RuntimeError(f"rank {info['rank']}: local rank {info['local_rank']} but only "
                               f"{torch.cuda.device_count()} GPU(s) visible")
        dev = torch.device("cuda", info["local_rank"])
        torch.cuda.set_device(dev)
        backend = "nccl"
    else:
        dev, backend = torch.device("cpu"), "gloo"
    if not dist.is_initialized():
        dist.init_process_group(backend, init_method=f"tcp://{info['master_addr']}:{info['master_port']}",
                                rank=info["rank"], world_size=info["world_size"],
                                timeout=timedelta(seconds=timeout_s))
    return Comm(), dev
