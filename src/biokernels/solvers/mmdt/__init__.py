"""LS-MMDT: max-margin domain transforms with an implicit low-rank transform.

Rodner, Hoffman, Donahue, Darrell & Saenko 2013 (the LS-MMDT transform
solver, Eqs. 2-15) inside the MMDT alternation of Hoffman et al., ICLR 2013.
Modules, imports going down: ``estimator`` (:class:`MMDT`) ->
``hyperplanes`` (the one-vs-rest SVM step) and ``solver``
(:func:`solve_transform`, the transform step) -> ``objective`` (dual, primal,
projected gradient) -> ``validation`` (checks, :func:`augment`). The compiled
coordinate loop is :mod:`biokernels.solvers.mmdt_numba`. Sources, notation,
equations and what is not implemented: ``docs/mmdt_notes.md``.
"""

from biokernels.solvers.mmdt.estimator import MMDT
from biokernels.solvers.mmdt.hyperplanes import ovr_squared_hinge_svm
from biokernels.solvers.mmdt.objective import (transform_dual_objective, transform_primal_objective,
                                               transform_projected_gradient)
from biokernels.solvers.mmdt.solver import (BACKENDS, SOLVERS, TransformConvergenceWarning, TransformResult,
                                            solve_transform)
from biokernels.solvers.mmdt.validation import augment

__all__ = [
    "MMDT",
    "TransformResult",
    "augment",
    "solve_transform",
    "transform_dual_objective",
    "transform_primal_objective",
    "transform_projected_gradient",
    "ovr_squared_hinge_svm",
    "SOLVERS",
    "BACKENDS",
    "TransformConvergenceWarning",
]
