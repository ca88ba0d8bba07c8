"""biokernels: kernel methods for biology, the library behind the workflow.

Pure functions and small scikit-learn-style estimators; no Snakemake imports.
Subpackages: ``io`` (file formats), ``kernels``, ``solvers``, ``synth``
(generators of the embedded default data); modules ``theory``, ``device``,
``plotting``.
"""

__version__ = "0.1.0"
