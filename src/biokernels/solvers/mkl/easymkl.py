"""EasyMKL as a registered MKL method: the adapter over :mod:`biokernels.solvers.easymkl`.

EasyMKL (Aiolli & Donini, Neurocomputing 2015) lives in its own package
(it is also the MKL step of PIMKL, with its KOMD classifier, a λ path and
compiled loops: ``docs/easymkl_notes.md``). :class:`EasyMKL` here is that
class, unchanged in behaviour and numbers, declared an :class:`MKLMethod`:
weights sum to 1, paired with KOMD (MKLpy's default learner for EasyMKL).
"""

from __future__ import annotations

from biokernels.solvers.easymkl import EasyMKL as _EasyMKL
from biokernels.solvers.mkl.base import MKLMethod

__all__ = ["EasyMKL"]


class EasyMKL(_EasyMKL, MKLMethod):
    """:class:`biokernels.solvers.easymkl.EasyMKL` under the :class:`MKLMethod` contract.

    Its own ``fit`` is kept (it also trains ``komd_`` on the combined kernel,
    checks the kernels in their given dtype and has :meth:`fit_path`), so
    :meth:`_learn_weights` is not used; parameters, attributes and errors are
    those of :class:`biokernels.solvers.easymkl.EasyMKL` (``weights_`` sums to
    1; ``combine`` raises NotFittedError before fit, InputError for bad kernels).
    """

    weight_norm = "l1"
    default_learner = "komd"
