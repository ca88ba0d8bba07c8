"""CKA: centred-kernel-alignment weights (Cortes, Mohri & Rostamizadeh, JMLR 13:795-828, 2012).

:class:`CKA` maximises the centred alignment of ``Σ μ_k K_k`` with yy' over
``μ >= 0, ||μ||₂ = 1`` (Proposition 9), solved by :func:`cka_weights` as a
non-negative least-squares problem. As MKLpy 0.6's ``CKA`` except that the
weights are constrained non-negative (MKLpy's ``M⁻¹a`` is not) and duplicate
kernels share their weight. Paired with an SVC (MKLpy's default learner).
"""

from __future__ import annotations

import numpy as np
import scipy.optimize

from biokernels.errors import InputError
from biokernels.solvers.mkl.alignment import centered_alignment_terms
from biokernels.solvers.mkl.base import MKLMethod

__all__ = ["CKA", "cka_weights"]


def cka_weights(M: np.ndarray, a: np.ndarray, ridge_rel: float = 1e-12) -> np.ndarray:
    """Solve ``v* = argmin_{v >= 0} v'Mv - 2 v'a`` and return ``μ = v*/||v*||₂``.

    This is the alignment-maximising combination of Cortes et al. (2012),
    Proposition 9: ``max_{||μ||₂ = 1, μ >= 0} ρ(Σ μ_k K_k^c, yy')``. Because
    M is the Gram matrix of the vectorised centred kernels and ``a`` lies in
    its range, ``v'Mv - 2v'a = ||R v - c||² - const`` with ``M = R'R``,
    ``R'c = a``, which is a non-negative least-squares problem solved exactly
    by Lawson-Hanson (``scipy.optimize.nnls``, with a ridge ``ridge_rel ·
    tr(M)/P · ||v||²`` for robustness), then refined on the active set S by the
    minimum-norm solution of ``M_SS v_S = a_S``. When M is singular
    (duplicate or linearly dependent kernels) the optimum is not unique; the
    minimum-norm one shares the weight between copies instead of giving it
    to an arbitrary one (MKLpy's ``M⁻¹a`` fails there).

    Parameters
    ----------
    M : ndarray (P, P), a : ndarray (P,)
    ridge_rel : float, >= 0
        Relative Tikhonov term: a multiple of M's mean diagonal ``tr(M)/P``
        (the absolute term is ``ridge_rel · tr(M)/P``).

    Returns
    -------
    ndarray (P,), float64, non-negative with unit L2 norm.

    Raises
    ------
    InputError
        If ``v* = 0`` (no non-negative combination is positively aligned
        with the labels: every ``a_k <= 0``).
    """
    P = a.shape[0]
    evals, evecs = np.linalg.eigh(M)
    keep = evals > max(evals.max(), 0.0) * 1e-10          # M is accurate to ~1e-14 relative
    R = (np.sqrt(evals[keep])[:, None] * evecs[:, keep].T)            # M ≈ R'R
    c = (evecs[:, keep].T @ a) / np.sqrt(evals[keep])                   # R'c = a on range(M)
    if ridge_rel > 0:
        r = np.sqrt(ridge_rel * max(np.trace(M), np.finfo(float).tiny) / P)
        R = np.vstack([R, r * np.eye(P)])
        c = np.concatenate([c, np.zeros(P)])
    v, _ = scipy.optimize.nnls(R, c)
    # Refine on the active set S: Lawson-Hanson stops at a tolerance coarser than
    # the tiny ridge, so take the exact minimum-norm solution of M_SS v_S = a_S
    # (pseudo-inverse; equal weights for duplicate kernels); kept when positive.
    S = v > 0
    if S.any():
        vS = np.linalg.lstsq(M[np.ix_(S, S)], a[S], rcond=1e-10)[0]
        if (vS > 0).all():
            v = np.zeros(P)
            v[S] = vS
    nrm = np.linalg.norm(v)
    if not nrm > 0:
        raise InputError(f"CKA: no non-negative kernel combination is aligned with the labels "
                         f"(centred alignments a = {np.round(a, 6).tolist()})")
    return v / nrm


class CKA(MKLMethod):
    """Centered kernel alignment weights (Cortes, Mohri & Rostamizadeh, JMLR 2012).

    ``weights_ = v*/||v*||₂`` with ``v* = argmin_{v >= 0} v'Mv - 2v'a``
    (Proposition 9; M, a from :func:`centered_alignment_terms`), the
    non-negative combination of maximal centred alignment with yy'.

    Differences from MKLpy 0.6 ``CKA``: MKLpy returns ``M⁻¹a / ||M⁻¹a||``
    without the constraint μ >= 0 (weights can be negative, giving an
    indefinite combined kernel), and fails (singular M) for duplicate
    kernels. The two agree whenever ``M⁻¹a >= 0``.

    Parameters
    ----------
    psd_tol : float or None, default 1e-8
    ridge_rel : float, default 1e-12
        Relative ridge of the weight problem; see :func:`cka_weights`.

    Attributes
    ----------
    weights_ : ndarray (P,), non-negative, unit L2 norm (as in the paper and
        MKLpy: ``weight_norm = "l2"``)
    alignment_matrix_ : ndarray (P, P) — M
    target_alignment_ : ndarray (P,) — a
    classes_, n_kernels_, n_train_

    Raises
    ------
    InputError (in fit)
        Invalid kernels/labels (:meth:`MKLMethod.fit`), or no positively
        aligned combination.
    """

    weight_norm = "l2"

    def __init__(self, psd_tol: float | None = 1e-8, ridge_rel: float = 1e-12):
        self.psd_tol = psd_tol
        self.ridge_rel = ridge_rel

    def _learn_weights(self, Ks, y):
        M, a = centered_alignment_terms(Ks, y)
        self.alignment_matrix_, self.target_alignment_ = M, a
        return cka_weights(M, a, self.ridge_rel)
