"""The linear-setting theory of Radhakrishnan et al. 2023 (Definition 4,
Theorems 1-2, Corollary 1), in four modules by role:

* ``closed_forms``: the paper's formulas as printed and the true risks derived
  here, plus the input checks the package shares;
* ``simulation``: exact Monte-Carlo simulation of the setting and planted
  source/target pairs;
* ``sweeps``: the parameter sweeps that build the workflow's tables
  (``TABLE_COLUMNS``);
* ``figures``: one figure per table.

Imports only go down: ``figures -> sweeps -> simulation -> closed_forms``.
This package re-exports nothing: import the module that holds a function
(e.g. ``from biokernels.studies.theory import closed_forms``); each module's
``__all__`` is its public API. Notes on the paper against the truth:
``docs/theory_notes.md``.
"""
