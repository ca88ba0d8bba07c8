"""biokernels: kernel methods for biology, the library behind the workflow.

Pure functions and small scikit-learn-style estimators; no Snakemake imports.
Layers, imports only going down:

- ``studies/<study>/``: one package per study (drug_screen, depmap,
  mkl_transfer, theory, diffusion, pimkl, mmdt);
- ``synth`` (generators of the embedded default data) and ``features``
  (molecular fingerprints), shared by studies, tests and benchmarks;
- ``io`` (file formats), ``kernels``, ``solvers``;
- ``errors``, ``registry``, ``device``, ``logs``, ``metrics``, ``stats``,
  ``scaling``, ``plotting``.

``config`` (the workflow config's cross-field checks) and ``config_docs``
sit on top: they know every study's settings and the generators' defaults.
``report`` (paper versus reproduction) reads only result tables.
"""

__version__ = "0.1.0"
