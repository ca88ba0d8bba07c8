"""FHeuristic: alignment-proportional weights (Qiu & Lane, IEEE/ACM TCBB 6:190-199, 2009).

:class:`FHeuristic` weights each kernel by its kernel-target alignment with
the labels (:func:`~biokernels.solvers.mkl.kernel_alignment`), as MKLpy 0.6's
``FHeuristic`` (uncentred by default). Paired with an SVC (MKLpy's default
learner).
"""

from __future__ import annotations

import numpy as np

from biokernels.errors import InputError
from biokernels.solvers.mkl.alignment import kernel_alignment
from biokernels.solvers.mkl.base import MKLMethod

__all__ = ["FHeuristic"]


class FHeuristic(MKLMethod):
    """Alignment-proportional weights (Qiu & Lane, IEEE/ACM TCBB 6:190-199, 2009).

    ``weights_[r] = A_r / Σ_s A_s`` with ``A_r`` the kernel-target alignment of
    kernel r (:func:`kernel_alignment`). MKLpy's ``FHeuristic`` uses the
    uncentred alignment, which is >= 0 for PSD kernels (``y'Ky >= 0``); that is
    the default. With ``centered=True`` negative alignments are clipped to 0.

    Parameters
    ----------
    centered : bool, default False
    psd_tol : float or None, default 1e-8

    Attributes
    ----------
    weights_ : ndarray (P,), non-negative, sums to 1
    alignments_ : ndarray (P,)

    Raises
    ------
    InputError (in fit)
        Invalid inputs (:meth:`MKLMethod.fit`), or every alignment <= 0.
    """

    def __init__(self, centered: bool = False, psd_tol: float | None = 1e-8):
        self.centered = centered
        self.psd_tol = psd_tol

    def _learn_weights(self, Ks, y):
        A = np.array([kernel_alignment(K, y, self.centered) for K in Ks])
        self.alignments_ = A
        w = np.maximum(A, 0.0)
        if not w.sum() > 0:
            raise InputError(f"FHeuristic: no kernel is positively aligned with the labels "
                             f"(alignments {np.round(A, 6).tolist()})")
        return w / w.sum()
