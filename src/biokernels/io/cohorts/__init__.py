"""Expression cohorts with a 5-year relapse label (PIMKL, Manica et al. 2019,
Section 3.1 and Supplementary Table S1), one module per layout:
:mod:`~biokernels.io.cohorts.tsv`, genefu :mod:`~biokernels.io.cohorts.vdxs`,
scikit-survival's GSE7390 :mod:`~biokernels.io.cohorts.arff` and a GEO series
matrix (:mod:`~biokernels.io.cohorts.geo_series`); the label, probe collapse
and missing-value check they share are in :mod:`~biokernels.io.cohorts.common`.
Each returns ``X`` (samples x genes, float64), ``y`` (0/1 int64 like ``X``)
and counts; nothing is dropped silently.

**Registry** (:data:`COHORT_READERS`): the config's cohort ``format`` -> its
``load_<format>_cohort`` reader, called with the cohort entry's other keys as
keyword arguments and keyword-only ``collapse`` and ``name``. Adding a layout
is such a function plus one registry line (and its keys in the config
schema's ``pimkl_cohort``).
"""

from __future__ import annotations

from biokernels.io.cohorts.arff import load_arff_cohort, read_arff_cohort
from biokernels.io.cohorts.common import COLLAPSE_METHODS, FIVE_YEARS_DAYS, collapse_probes, five_year_labels
from biokernels.io.cohorts.geo_series import (FIVE_YEARS, GEO_NAN_POLICIES, geo_settings_problems,
                                              load_geo_series_matrix_cohort, read_geo_cohort)
from biokernels.io.cohorts.tsv import load_tsv_cohort, read_cohort, read_expression_tsv, read_labels_tsv
from biokernels.io.cohorts.vdxs import load_vdxs_cohort, read_vdxs_cohort

__all__ = ["COHORT_READERS", "COLLAPSE_METHODS", "FIVE_YEARS", "FIVE_YEARS_DAYS", "GEO_NAN_POLICIES",
           "collapse_probes", "five_year_labels", "geo_settings_problems", "load_arff_cohort",
           "load_geo_series_matrix_cohort", "load_tsv_cohort", "load_vdxs_cohort", "read_arff_cohort", "read_cohort",
           "read_expression_tsv", "read_geo_cohort", "read_labels_tsv", "read_vdxs_cohort"]

#: Cohort layouts by the config's ``format`` (the schema's ``pimkl_cohort``
#: enum lists exactly these keys, tests/unit/test_registries.py). Each reader
#: takes the cohort entry's other keys as keyword arguments, plus keyword-only
#: ``collapse`` (the probe collapse of microarray layouts) and ``name`` (for
#: messages), and returns ``X`` (DataFrame samples x genes, float64), ``y``
#: (Series int64 0/1 aligned with ``X``) and ``counts`` (a dict with
#: ``has_probes``: bool, and ``cna`` when the layout has copy numbers).
COHORT_READERS = {
    "tsv": load_tsv_cohort,      # samples x genes TSV + labels TSV (the generated default)
    "vdxs": load_vdxs_cohort,    # genefu vdxs (GSE2034 / GSE5327)
    "arff": load_arff_cohort,    # scikit-survival GSE7390 ARFF
    "geo_series_matrix": load_geo_series_matrix_cohort,  # GEO series matrix + GPL annotation (Table S1)
}
