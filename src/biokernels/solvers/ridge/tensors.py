"""Torch views and small utilities shared by the ridge solvers.

``_as_matrix`` turns a numpy array or torch tensor into a square float torch
matrix sharing its memory (or rejects it, naming the argument); the others
check block sizes and memory layouts, synchronise CUDA for timings and run
small LAPACK calls on one CPU thread.
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np
import torch

__all__ = ["ArrayLike"]

ArrayLike = np.ndarray | torch.Tensor


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
    thread: on a loaded machine MKL's threaded ``syevd`` is much slower than
    single-threaded (threads spin on busy cores; ``docs/ridge_notes.md``)."""
    if device.type != "cpu":
        yield
        return
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(old)
