"""The transfer paper's image experiments (Radhakrishnan et al. 2023, Fig.
2a-c, Fig. 3a-b, SI Figs. S2-S6), on other images: projection and
translation of Laplace, NTK and CNTK classifiers. Modules, imports going
down: run (one job per experiment) → protocol (predictors, curves, laws) →
tasks (splits) → data (image sets) and models (kernels, regressors);
figures (tables and plots of each panel). Notes: docs/images_notes.md."""

from biokernels.studies.images.run import kernel_settings, run_classes, run_projection, run_translation

__all__ = ["run_projection", "run_classes", "run_translation", "kernel_settings"]
