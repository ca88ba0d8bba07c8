"""Input checks shared by the whole ``biokernels.studies.theory`` package.

Integers and reals in a range, ``eps`` against ``||omega_t||_F^2``, model
matrices and source/target pairs (every error a ``ValueError`` naming the
argument), and the rank, row-space basis and equal-singular-value test of a
source model. Imports nothing from the package.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np

__all__: list[str] = []


def _check_int(name: str, value, lo: int = 0, hi: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if value < lo or (hi is not None and value > hi):
        rng_txt = f"[{lo}, {hi}]" if hi is not None else f">= {lo}"
        raise ValueError(f"{name} must be in {rng_txt}, got {value}")
    return value


def _check_real(name: str, value, lo: float | None = None, hi: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise ValueError(f"{name} must be in [{lo}, {hi}], got {value}")
    return value


def _check_eps(eps: float, norm_t2: float) -> float:
    eps = _check_real("eps", eps, lo=0.0)
    tol = 1e-9 * max(1.0, norm_t2)
    if eps > norm_t2 + tol:
        raise ValueError(
            f"eps must satisfy 0 <= eps <= ||omega_t||_F^2 = {norm_t2}, got {eps} "
            "(eps is the squared norm of a projection of omega_t)")
    return min(eps, norm_t2)


def _check_matrix(name: str, a) -> np.ndarray:
    a = np.asarray(a, dtype=float)
    if a.ndim != 2 or a.shape[0] < 1 or a.shape[1] < 1:
        raise ValueError(f"{name} must be a non-empty 2-D array (classes, d), got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} contains non-finite values")
    return a


def _check_pair(omega_s, omega_t) -> tuple[np.ndarray, np.ndarray]:
    ws = _check_matrix("omega_s", omega_s)
    wt = _check_matrix("omega_t", omega_t)
    if ws.shape[1] != wt.shape[1]:
        raise ValueError(
            f"omega_s and omega_t must have the same input dimension d (axis 1); "
            f"got omega_s {ws.shape} and omega_t {wt.shape}")
    return ws, wt


def _source_spectrum(omega_s: np.ndarray, rtol: float = 1e-8) -> tuple[int, np.ndarray, bool]:
    """Rank, row-space basis (d x k) and 'all nonzero singular values equal'."""
    _, s, vt = np.linalg.svd(omega_s, full_matrices=False)
    if s.size == 0 or s[0] == 0.0:
        return 0, np.zeros((omega_s.shape[1], 0)), True
    k = int(np.sum(s > max(omega_s.shape) * np.finfo(float).eps * s[0]))
    equal = bool(s[k - 1] >= s[0] * (1.0 - rtol))
    return k, vt[:k].T, equal
