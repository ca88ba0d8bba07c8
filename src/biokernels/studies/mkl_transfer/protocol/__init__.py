"""Transfer versus multiple kernel learning (SI Fig. S7 of Radhakrishnan,
Ruiz Luyten, Prasad & Uhler, "Transfer learning with kernel methods", Nat.
Commun. 2023, Methods "Comparison with multiple kernel learning approaches"):
each MKL method learns weights of three base kernels on a binary source task;
on each target the MKL baseline, the transfer-learned kernel and the
translation (Definition 2) are compared on held-out target samples.

* :mod:`.models` - the base kernels and the translated kernel predictor;
* :mod:`.runner` - the comparison, its summary table and figure;
* :mod:`.tasks` - the digit-corruption, image-pair and drug-viability task builders.

docs/mkl_transfer_notes.md gives the study's choices in full. Outputs are
tidy DataFrames: accuracies (target, method, model, accuracy, seed, n_train,
n_test, ridge_rel) and weights (target, method, kernel, weight, seed).
"""

from biokernels.studies.mkl_transfer.protocol.models import (KERNEL_NAMES, RIDGE_REL_GRID, KernelSpec, base_kernels,
                                                             krr_coefficients, loo_ridge_rel, resolve_kernel_spec,
                                                             translate)
from biokernels.studies.mkl_transfer.protocol.runner import (METHODS, MODELS, plot_accuracies, run_transfer,
                                                             summarize, transfer_options)
from biokernels.studies.mkl_transfer.protocol.tasks import digit_tasks, image_pair_tasks, viability_tasks

__all__ = ["METHODS", "MODELS", "KERNEL_NAMES", "RIDGE_REL_GRID", "KernelSpec", "resolve_kernel_spec",
           "base_kernels", "krr_coefficients", "loo_ridge_rel", "translate", "run_transfer", "digit_tasks", "image_pair_tasks",
           "viability_tasks", "summarize", "plot_accuracies"]
