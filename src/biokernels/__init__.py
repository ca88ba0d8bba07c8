"""biokernels: kernel methods for biology, the library behind the workflow.

Pure functions and small scikit-learn-style estimators; no Snakemake imports.
Layers, imports only going down:

- ``studies/<study>/``: one package per study (drug_screen, depmap,
  mkl_transfer, theory, diffusion, pimkl, mmdt);
- ``synth`` (generators of the embedded default data) and ``features``
  (molecular fingerprints), shared by studies, tests and benchmarks;
- ``io`` (file formats), ``kernels``, ``solvers``;
- ``errors``, ``config``, ``device``, ``logs``, ``metrics``, ``stats``,
  ``scaling``, ``plotting``, ``report``.
"""

__version__ = "0.1.0"
