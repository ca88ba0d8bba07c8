"""SM1: kernel weights by the 1-norm soft-margin SVM criterion, solved as a QCQP
(Lanckriet et al., JMLR 2004, Sec. 4; Sun, Ji & Ye 2008 call it SM1 and solve
it with MOSEK; here a second-order-cone program in cvxpy, Clarabel by default).

Modules, imports only going down: ``estimator`` (:class:`SM1`) -> ``forms``
(the cone programs), ``inputs`` (:func:`psd_factor`, label and trace
checks), ``options`` (tolerances, :func:`default_solver`); ``cost``
(:func:`sm1_cost`, :func:`sm1_fits`) stands alone. This package re-exports
their public names (and the solver options, which tests adjust). The
derivation of the QCQP and the cost model's calibration:
``docs/diffusion_notes.md``.
"""

from biokernels.solvers.sm1.cost import sm1_cost, sm1_fits
from biokernels.solvers.sm1.estimator import SM1
from biokernels.solvers.sm1.inputs import psd_factor
from biokernels.solvers.sm1.options import (_DEFAULT_GAP, _DEFAULT_OPTS, _FALLBACK_OPTS, _TIGHT_GAP, _VALUE_ATOL,
                                            _VALUE_RTOL, default_solver)

__all__ = ["SM1", "psd_factor", "sm1_cost", "sm1_fits", "default_solver"]
