"""Adaptive diffusion kernel learning with the KL-divergence criterion.

Sun, Ji & Ye, BMC Bioinformatics 9:162 (2008): the KL criterion and targets
(Eq. 10-13), Theorems 1-2, the convex forms (Eq. 26, 34) and the six
formulations of Table 1, solved in the eigenbasis of the graph Laplacian.
Modules, imports going down: ``estimator`` (:class:`DiffusionKernelLearning`)
-> ``newton`` (the "fast" projected Newton solver) and ``slsqp`` (the paper's
SQP, the common starting point) -> ``objective`` (objective, gradient,
Hessian, KKT residual, checks); ``formulations`` (Table 1). Notation, what
"unconstrained" means and why, and the solvers: ``docs/diffusion_notes.md``.
"""

from biokernels.solvers.dkl.estimator import DiffusionKernelLearning
from biokernels.solvers.dkl.formulations import FORMULATIONS, Formulation
from biokernels.solvers.dkl.objective import dkl_gradient, dkl_hessian, dkl_objective, kkt_residual, target_energy

__all__ = [
    "FORMULATIONS",
    "Formulation",
    "target_energy",
    "dkl_objective",
    "dkl_gradient",
    "dkl_hessian",
    "kkt_residual",
    "DiffusionKernelLearning",
]
