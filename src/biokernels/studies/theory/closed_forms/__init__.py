"""Closed forms of the linear-setting theory of projection and translation.

Radhakrishnan, Ruiz Luyten, Prasad & Uhler, Nat. Commun. (2023), "Theoretical
analysis of projection and translation in the linear setting": the paper's
formulas as printed (``form="paper"``) and the true risks derived here
(``form="exact"``), in modules by statement: ``theorem1`` (projection,
Eq. 7), ``theorem2`` (baseline and translation, Eq. 8), ``corollary1`` (the
``d -> infinity`` limits), ``checks`` (the input checks the whole package
shares). The bottom layer of ``biokernels.studies.theory``: it imports
nothing from the package above it. All functions are pure and deterministic.
Setting, notation and what is true and what is not: ``docs/theory_notes.md``.
"""

from .checks import _check_int, _check_matrix, _check_pair, _check_real, _source_spectrum  # noqa: F401 (re-exported)
from .corollary1 import (corollary1_risk, corollary1a_condition, corollary1a_dR_dS, corollary1a_monotone,
                         corollary1b_decreasing_in_C, corollary1b_dR_dC, corollary1c_risk, corollary1d_risk,
                         projected_risk_limit_exact)
from .theorem1 import (epsilon, projected_regime, projected_risk, projected_risk_params, theorem1_constants,
                       theorem1_risk)
from .theorem2 import (baseline_risk, baseline_risk_params, translated_risk, translated_risk_params,
                       translation_angle_threshold)

__all__ = [
    "theorem1_constants",
    "theorem1_risk",
    "epsilon",
    "projected_regime",
    "projected_risk_params",
    "projected_risk",
    "baseline_risk_params",
    "baseline_risk",
    "translated_risk_params",
    "translated_risk",
    "translation_angle_threshold",
    "corollary1_risk",
    "corollary1c_risk",
    "corollary1d_risk",
    "corollary1a_dR_dS",
    "corollary1a_condition",
    "corollary1a_monotone",
    "corollary1b_dR_dC",
    "corollary1b_decreasing_in_C",
    "projected_risk_limit_exact",
]
