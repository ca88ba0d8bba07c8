"""KOMD and EasyMKL on precomputed kernels.

KOMD (Aiolli, Da San Martino & Sperduti, ICANN 2008) finds the two closest
points of the class hulls with a quadratic regulariser; EasyMKL (Aiolli &
Donini, Neurocomputing 2015; the MKL step of PIMKL) weights P kernels by one
KOMD problem on their sum. Modules, imports going down: ``estimator``
(:class:`EasyMKL`) -> ``komd`` (:class:`KOMD`) -> ``dual``
(:func:`komd_dual`, the QP by SMO and an exact polish) and ``kernel_sums``
(:func:`weighted_kernel_sum`). The compiled loops are
:mod:`biokernels.solvers.easymkl_numba`. Problem (1), classifier (2),
weights (3), the solver, the backends and the differences from MKLpy 0.6:
``docs/easymkl_notes.md``.
"""

from biokernels.solvers.easymkl.dual import BACKENDS, komd_dual
from biokernels.solvers.easymkl.estimator import EasyMKL
from biokernels.solvers.easymkl.kernel_sums import weighted_kernel_sum
from biokernels.solvers.easymkl.komd import KOMD

__all__ = ["komd_dual", "KOMD", "EasyMKL", "BACKENDS", "weighted_kernel_sum"]
