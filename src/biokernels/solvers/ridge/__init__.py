"""The kernel ridge service: one solve, one holdout selection.

Every kernel ridge regression of the project goes through this package:
``(K + lam I) alpha = Y`` for a precomputed kernel K and one or many
right-hand sides, ``lam`` always the absolute ridge (``ridge_rel`` is relative
to the mean diagonal: :func:`absolute_ridge`). Modules, imports going down:
``estimator`` (:class:`NTKRidge`) -> ``solve`` (:func:`solve_ridge`,
:func:`predict_ridge`) -> ``cholesky`` (blocked, in place) and ``cg``
(preconditioned CG, Nystrom preconditioner) -> ``tensors``. The torch-free
parts (:func:`select_ridge_holdout`, :func:`holdout_split`, the SciPy exact
solve, the checks) live in :mod:`biokernels.solvers.ridge_core` and are
re-exported here. Scope and design: ``docs/ridge_notes.md``.
"""

from biokernels.solvers.ridge.cg import _pcg, nystrom_preconditioner_from_columns  # noqa: F401 (re-exported)
from biokernels.solvers.ridge.cholesky import cholesky_inplace
from biokernels.solvers.ridge.estimator import NTKRidge
from biokernels.solvers.ridge.solve import METHODS, PRECONDITIONERS, predict_ridge, solve_ridge
from biokernels.solvers.ridge_core import (NotPositiveDefiniteError, absolute_ridge, center_targets, check_lam,
                                           holdout_split, ridge_scale, select_ridge_holdout, solve_ridge_exact)

__all__ = ["METHODS", "PRECONDITIONERS", "NotPositiveDefiniteError", "cholesky_inplace", "solve_ridge",
           "predict_ridge", "check_lam", "center_targets", "solve_ridge_exact", "ridge_scale", "absolute_ridge",
           "holdout_split", "select_ridge_holdout", "NTKRidge"]
