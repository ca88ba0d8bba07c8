"""Protein function prediction from a network with diffusion kernels: the
evaluation protocol of Sun, Ji & Ye (BMC Bioinformatics 2008), one concept
per module. For one train/test split every method (single kernels ->
rBaseline/uBaseline, eBaseline, the six formulations of
:mod:`biokernels.solvers.dkl`, SM1, Neighbor Counting, FS-Weighted
Averaging) scores the test proteins and the ROC AUC per task is recorded.

Imports only go down: ``run -> split, kernel_scale, sensitivity, sm1_eval ->
inner_cv -> scoring -> blocks, classifiers, masks``. This package re-exports
every public name (and the private ones other modules import), so
``from biokernels.studies.diffusion.protocol import evaluate_split`` works;
the reference (``reference=True``) paths stay beside their fast paths, as
they share most of their code. Notes: ``docs/diffusion_notes.md``.
"""

from biokernels.solvers.svm_smo import SMOSVC
from biokernels.studies.diffusion.protocol.blocks import KernelBlocks
from biokernels.studies.diffusion.protocol.classifiers import (CLASSIFIERS, SMO_TOL, classifier_of, make_classifier,
                                                                smo_of, svm_classifier)
from biokernels.studies.diffusion.protocol.inner_cv import choose_C
from biokernels.studies.diffusion.protocol.kernel_scale import (ScaleCandidate, choose_kernel_scale, chosen_scale,
                                                                 same_split_inputs, scale_candidates, scale_siblings)
from biokernels.studies.diffusion.protocol.masks import annotated_mask, split_masks, split_rows, target_matrix
from biokernels.studies.diffusion.protocol.run import (_eval_mask, run_sensitivity, run_sm1, run_split,
                                                       split_kernel_scale)
from biokernels.studies.diffusion.protocol.scoring import (_is_binary_precomputed_svc, _smo_block_scores,
                                                            _smo_solve, convex_start, fit_task_scores,
                                                            kernel_scores, smo_task_scores, svm_task_scores,
                                                            task_aucs, task_scores)
from biokernels.studies.diffusion.protocol.sensitivity import sensitivity_table
from biokernels.studies.diffusion.protocol.sm1_eval import evaluate_sm1, sm1_empty_tables
from biokernels.studies.diffusion.protocol.split import (FORMULATIONS, SplitResult, _kernels_to_keep,
                                                          _per_task_scores, _WarmStarts, evaluate_split)

__all__ = ["CLASSIFIERS", "FORMULATIONS", "SMOSVC", "SMO_TOL", "KernelBlocks", "ScaleCandidate", "SplitResult",
           "annotated_mask", "choose_C", "choose_kernel_scale", "chosen_scale", "classifier_of", "convex_start",
           "evaluate_sm1", "evaluate_split", "fit_task_scores", "kernel_scores", "make_classifier",
           "run_sensitivity", "run_sm1", "run_split", "same_split_inputs", "scale_candidates", "scale_siblings",
           "sensitivity_table", "split_kernel_scale",
           "sm1_empty_tables", "smo_of", "smo_task_scores", "split_masks", "split_rows", "svm_classifier",
           "svm_task_scores", "target_matrix", "task_aucs", "task_scores"]
