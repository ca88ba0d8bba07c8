"""Kernel-target alignment, plain and centred: the terms CKA and FHeuristic weight by.

:func:`kernel_alignment` is Cristianini et al. (NIPS 2001), centred as in
Cortes, Mohri & Rostamizadeh (JMLR 13:795-828, 2012);
:func:`centered_alignment_terms` gives the M and a of that paper's
Proposition 9 (:class:`~biokernels.solvers.mkl.CKA`). Inputs are checked
kernels (float64) and ±1 labels.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["centered_alignment_terms", "kernel_alignment"]


def _center(K: np.ndarray) -> np.ndarray:
    """H K H with H = I - 11'/n (Cortes et al. 2012, Eq. 1), as a new array."""
    Kc = K - K.mean(axis=0, keepdims=True)
    Kc -= Kc.mean(axis=1, keepdims=True)
    return Kc


def centered_alignment_terms(Ks: Sequence[np.ndarray], y_pm: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """M and a of Cortes, Mohri & Rostamizadeh (JMLR 13:795-828, 2012), Proposition 9.

    ``M_kl = <K_k^c, K_l^c>_F`` and ``a_k = <K_k^c, y y'>_F`` with ``K^c = H K H``.
    (``<K^c, yy'> = <K^c, (yy')^c>`` since H is a projection, so the target need
    not be centred.)

    Parameters
    ----------
    Ks : sequence of P ndarrays (n, n), float64 (validated)
    y_pm : ndarray (n,), ±1

    Returns
    -------
    M : ndarray (P, P), symmetric PSD
    a : ndarray (P,)

    Notes
    -----
    Memory: the P centred kernels are held at once (P n² floats); time
    O(P² n²).
    """
    Kc = [_center(K) for K in Ks]
    P = len(Kc)
    M = np.empty((P, P))
    a = np.empty(P)
    for k in range(P):
        a[k] = float(y_pm @ Kc[k] @ y_pm)
        for l in range(k + 1):
            M[k, l] = M[l, k] = float(np.vdot(Kc[k], Kc[l]))
    return M, a


def kernel_alignment(K: np.ndarray, y_pm: np.ndarray, centered: bool = False) -> float:
    """Kernel-target alignment ``<K, yy'>_F / (||K||_F ||yy'||_F)``.

    Cristianini et al. (NIPS 2001); with ``centered=True`` K is replaced by
    H K H (Cortes et al. 2012). ``||yy'||_F = n`` for ±1 labels. Returns 0 for
    a zero kernel.
    """
    if centered:
        K = _center(K)
    nrm = float(np.linalg.norm(K))
    if nrm == 0:
        return 0.0
    return float(y_pm @ K @ y_pm) / (nrm * y_pm.shape[0])
