"""PIMKL study (Manica, Cadow, Mathis & Rodriguez Martinez 2019, "PIMKL:
Pathway-Induced Multiple Kernel Learning", npj Syst. Biol. Appl. 5:8;
Sections 3.1-3.2, Supplementary Algorithms S1 and S2). Pure library (no
Snakemake), one concept per module:

* :mod:`.data` - the network and cohorts of a source, the weight tables;
* :mod:`.model` - one PIMKL fit, its lambda path, the inner grid, the SVM baselines;
* :mod:`.s1` - Algorithm S1 (cross-validation on one cohort);
* :mod:`.signatures` - signature significance and correlation across cohorts;
* :mod:`.s2` - Algorithm S2 (random splits of a large cohort, transfer);
* :mod:`.sensitivity` - controls: random gene sets, modelling-choice sensitivity.

docs/pimkl_notes.md describes the pieces in full.
"""

from biokernels.studies.pimkl.protocol.data import NETWORK_DEFAULTS, load_cohort, load_network, read_weights
from biokernels.studies.pimkl.protocol.model import (AGGREGATIONS, CLASSIFIERS, CRITERIA, EASYMKL_LAMS, METHODS,
                                                     _check_fit_predict_inputs, _choose_easymkl_lam, _inner_kernels,
                                                     _score, _sub, fit_predict, fit_predict_path, svm_baselines)
from biokernels.studies.pimkl.protocol.s1 import S1Result, _check_two_classes, _inner_splits, cv_splits, run_s1
from biokernels.studies.pimkl.protocol.signatures import (median_signature, signature_correlation, signature_tests,
                                                          significance_table)
from biokernels.studies.pimkl.protocol.s2 import S2Result, run_s2, s2_splits
from biokernels.studies.pimkl.protocol.sensitivity import SENSITIVITY_VARIANTS, random_gene_sets, run_sensitivity

__all__ = [
    "NETWORK_DEFAULTS", "load_network", "load_cohort", "read_weights",
    "EASYMKL_LAMS", "CRITERIA", "CLASSIFIERS", "AGGREGATIONS", "METHODS", "fit_predict", "fit_predict_path",
    "svm_baselines",
    "cv_splits", "S1Result", "run_s1",
    "median_signature", "signature_tests", "significance_table", "signature_correlation",
    "S2Result", "s2_splits", "run_s2",
    "random_gene_sets", "SENSITIVITY_VARIANTS", "run_sensitivity",
]
