"""Objectives of the LS-MMDT transform step, computed from scratch.

The dual ``g(alpha)`` (Rodner et al. 2013, Eq. 6), the primal (Eq. 1 with
``p = 2``) and the projected gradient of ``g`` (Eq. 8; the KKT residual).
The solver (:mod:`~biokernels.solvers.mmdt.solver`) never calls them in its
loop; they check it (strong duality, ``PG = 0`` at the optimum). Notation and
derivations: ``docs/mmdt_notes.md``.
"""

from __future__ import annotations

import numpy as np

from biokernels.errors import InputError
from biokernels.solvers.mmdt.validation import _check_matrix, _check_transform_problem, _signs

__all__ = [
    "transform_dual_objective",
    "transform_primal_objective",
    "transform_projected_gradient",
]


def _check_offset(offset, shape) -> np.ndarray:
    if offset is None:
        return np.zeros(shape)
    off = np.asarray(offset, dtype=np.float64)
    if off.shape != shape or not np.all(np.isfinite(off)):
        raise InputError(f"offset: expected finite values of shape {shape}, got {off.shape}")
    return off


def transform_dual_objective(alpha, H, Xt, y_idx, C, offset=None) -> float:
    """Dual objective ``g(alpha)`` of the transform step (Eq. 6), from scratch.

    ``g = 1/2 ||W||_F^2 + lambda/2 ||alpha||^2 - sum(alpha)`` with
    ``W = H^T B`` (Eq. 11), ``B = (alpha * T) Xt`` (Eq. 12),
    ``||W||_F^2 = trace(R B B^T)``, ``R = H H^T``, ``lambda = 1 / (2 C)``.

    Parameters
    ----------
    alpha : array, shape (m, n)
        Dual variables, ``alpha[i, j]`` for hyperplane i and target example j.
    H : array, shape (m, D)
        Source hyperplanes (rows).
    Xt : array, shape (n, Dt)
        Target examples (already augmented if a bias is wanted).
    y_idx : int array, shape (n,)
        Class index (row of ``H``) of each target example.
    C : float
        ``C_T`` (``C~`` of the paper), > 0.
    offset : array, shape (m, n), optional
        Scores ``h_i^T W0 x~_j`` of a prior transform ``W0`` (regulariser
        ``||W - W0||_F^2``); then ``e^T alpha`` becomes
        ``sum_l alpha_l (1 - t_l offset_l)``. Default 0 (the paper's Eq. 6).

    Returns
    -------
    float

    Raises
    ------
    InputError
        On inconsistent shapes, NaN values or ``C <= 0``.
    """
    H, Xt, y_idx, C = _check_transform_problem(H, Xt, y_idx, C)
    alpha = np.asarray(alpha, dtype=np.float64)
    if alpha.shape != (H.shape[0], Xt.shape[0]):
        raise InputError(f"alpha: expected shape {(H.shape[0], Xt.shape[0])}, got {alpha.shape}")
    T = _signs(y_idx, H.shape[0])
    off = _check_offset(offset, alpha.shape)
    B = (alpha * T) @ Xt
    R = H @ H.T
    wsq = float(np.sum(R * (B @ B.T)))
    return (0.5 * wsq + 0.25 / C * float(np.sum(alpha ** 2))
            - float(np.sum(alpha * (1.0 - T * off))))


def transform_primal_objective(W, H, Xt, y_idx, C, W0=None) -> float:
    """Primal objective of the transform step (Eq. 1 with ``p = 2``).

    ``1/2 ||W - W0||_F^2 + C sum_{i,j} max(0, 1 - t_ij h_i^T W x~_j)^2``
    (``W0 = 0``: the paper's Eq. 1). At the optimum it equals ``-g(alpha*)``
    (strong duality).

    Parameters
    ----------
    W : array, shape (D, Dt)
        The whole transform (``W0`` included).
    H : array, shape (m, D)
    Xt : array, shape (n, Dt)
    y_idx : int array, shape (n,)
    C : float, > 0
    W0 : array, shape (D, Dt), optional
        Prior transform (default 0).

    Returns
    -------
    float

    Raises
    ------
    InputError
        On inconsistent shapes, NaN values or ``C <= 0``.
    """
    H, Xt, y_idx, C = _check_transform_problem(H, Xt, y_idx, C)
    W = _check_matrix(W, "W")
    if W.shape != (H.shape[1], Xt.shape[1]):
        raise InputError(f"W: expected shape {(H.shape[1], Xt.shape[1])}, got {W.shape}")
    S = H @ W @ Xt.T
    xi = np.maximum(0.0, 1.0 - _signs(y_idx, H.shape[0]) * S)
    dW = W if W0 is None else W - np.asarray(W0, dtype=np.float64)
    return 0.5 * float(np.sum(dW ** 2)) + C * float(np.sum(xi ** 2))


def transform_projected_gradient(alpha, H, Xt, y_idx, C, offset=None) -> np.ndarray:
    """Projected gradient of ``g`` at ``alpha`` (KKT residual; 0 at the optimum).

    ``PG_l = grad_l g`` if ``alpha_l > 0``, ``min(grad_l g, 0)`` if ``alpha_l = 0``,
    with ``grad_l g = t_l h_i^T W x~_j + lambda alpha_l - 1`` (Eq. 8).

    Parameters
    ----------
    alpha : array, shape (m, n)
    H : array, shape (m, D)
    Xt : array, shape (n, Dt)
    y_idx : int array, shape (n,)
    C : float, > 0
    offset : array, shape (m, n), optional
        Prior-transform scores (see :func:`transform_dual_objective`).

    Returns
    -------
    ndarray, shape (m, n)

    Raises
    ------
    InputError
        On inconsistent shapes, NaN values or ``C <= 0``.
    """
    H, Xt, y_idx, C = _check_transform_problem(H, Xt, y_idx, C)
    alpha = np.asarray(alpha, dtype=np.float64)
    T = _signs(y_idx, H.shape[0])
    off = _check_offset(offset, alpha.shape)
    B = (alpha * T) @ Xt
    G = T * ((H @ H.T) @ (B @ Xt.T) + off) + 0.5 / C * alpha - 1.0
    return np.where(alpha > 0, G, np.minimum(G, 0.0))
