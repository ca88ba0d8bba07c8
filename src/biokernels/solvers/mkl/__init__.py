"""One-step multiple kernel learning: CKA, EasyMKL, FHeuristic, PWMK, and a classifier on their combination.

Source: the MKLpy methods that Radhakrishnan et al. 2023 compare with kernel
translation (Nat. Commun., Methods "Comparison with multiple kernel learning
approaches", SI Fig. S7); each method follows its paper, and MKLpy 0.6 where
the paper leaves a choice open (deviations listed per class).

Modules: ``base`` (:class:`MKLMethod`, the contract: ``fit(Ks, y)`` on P
(n, n) kernels and two labels, ``weights_`` (P,), ``combine``), one file per
method (``cka``, ``easymkl``, ``fheuristic``, ``pwmk``; ``alignment`` holds
the alignment terms), ``registry`` (:data:`MKL_METHODS`, :func:`make_mkl`),
``classifier`` (:class:`MKLClassifier`). Bad kernels or labels raise
:class:`biokernels.errors.InputError` naming the kernel index. Notes:
docs/mkl_transfer_notes.md, section "MKL methods (solvers/mkl)".
"""

from biokernels.solvers.easymkl import KOMD
from biokernels.solvers.mkl.alignment import centered_alignment_terms, kernel_alignment
from biokernels.solvers.mkl.base import MKLMethod
from biokernels.solvers.mkl.cka import CKA, cka_weights
from biokernels.solvers.mkl.classifier import MKLClassifier
from biokernels.solvers.mkl.easymkl import EasyMKL
from biokernels.solvers.mkl.fheuristic import FHeuristic
from biokernels.solvers.mkl.pwmk import PWMK
from biokernels.solvers.mkl.registry import MKL_METHODS, make_mkl

__all__ = ["MKLMethod", "CKA", "FHeuristic", "PWMK", "EasyMKL", "KOMD", "MKLClassifier", "MKL_METHODS", "make_mkl",
           "centered_alignment_terms", "cka_weights", "kernel_alignment"]
