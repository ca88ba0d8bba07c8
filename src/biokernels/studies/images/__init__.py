"""The transfer paper's image experiments (Radhakrishnan et al. 2023, Fig.
2a-c, Fig. 3a-b, SI Figs. S2-S6), on other images: projection and
translation of Laplace, NTK and CNTK classifiers. Modules, imports going
down: run (one job per experiment) → protocol (predictors, curves) →
tasks (splits) → data (image sets) and models (kernels, regressors);
figures (tables and plots of each panel, over laws: the log2 fits). Notes: docs/images_notes.md.
Import the modules themselves: the package imports nothing, so that
``data`` and ``tasks`` (numpy and scipy only) load without torch."""
