"""The classifiers of the diffusion study (:data:`CLASSIFIERS`), chosen by
``diffusion.classifier`` with settings in ``diffusion.classifier_settings.<name>``.

The default ``svm`` is the paper's LIBSVM C-SVC on a precomputed kernel,
solved by default by the ``smo`` solver (:mod:`biokernels.solvers.svm_smo`:
LIBSVM's algorithm, compiled, warm-started and batched over tasks, agreeing
with LIBSVM within its tolerance) and with ``solver: libsvm`` by LIBSVM
itself (scikit-learn's ``SVC(kernel="precomputed", C=C)``). Its C is not
given in the paper: it is chosen per split by inner CV
(:mod:`biokernels.studies.diffusion.protocol.inner_cv`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping

from sklearn.svm import SVC

from biokernels.errors import InputError
from biokernels.registry import check, lookup
from biokernels.solvers.svm_smo import SMOSVC


#: Stopping gap of the ``smo`` solver (:mod:`biokernels.solvers.svm_smo`),
#: a tenth of LIBSVM's 1e-3: its own distance to the exact solution is then
#: an order below LIBSVM's, so its distance to LIBSVM's solution is about
#: LIBSVM's own, within LIBSVM's tolerance (tests/unit/solvers/test_svm_smo.py).
SMO_TOL = 1e-4


def svm_classifier(C: float, class_weight: str | None = None, solver: str = "smo") -> SMOSVC | SVC:
    """Classifier ``svm``: a C-SVC on a precomputed kernel, the paper's SVM
    ("the SVM", LIBSVM).

    Parameters
    ----------
    C : float > 0
        Chosen per split by inner CV (``diffusion.svm_C_grid``).
    class_weight : None or "balanced"
        None (LIBSVM's default, the paper): every protein weighs 1;
        ``"balanced"``: class c weighs n / (2 n_c) (``diffusion.
        classifier_settings.svm.class_weight``).
    solver : "smo" or "libsvm"
        ``smo`` (default): the same problem solved by LIBSVM's algorithm
        (SMO, second-order working sets), compiled, warm-started along the
        study's grids and batched over tasks (:class:`biokernels.solvers.
        svm_smo.SMOSVC`, stopping gap :data:`SMO_TOL`); ``libsvm``:
        LIBSVM itself through scikit-learn's ``SVC`` (tolerance 1e-3), the
        paper's program. The two agree within LIBSVM's tolerance
        (``diffusion.classifier_settings.svm.solver``).

    Returns
    -------
    SMOSVC or sklearn.svm.SVC, unfitted.

    Raises
    ------
    InputError
        Unknown ``solver``.
    """
    if solver == "smo":
        return SMOSVC(C=C, class_weight=class_weight, tol=SMO_TOL)
    if solver == "libsvm":
        return SVC(kernel="precomputed", C=C, class_weight=class_weight)
    raise InputError(f"diffusion.classifier_settings.svm.solver must be smo or libsvm, got {solver!r}")


#: Classifiers of the study by the config's ``diffusion.classifier`` (the
#: schema's enum lists exactly these keys, tests/unit/test_registries.py).
#: Each is a factory ``(C, **settings) -> estimator`` with ``fit(K, y)`` on
#: an (n_train, n_train) kernel and 0/1 labels and ``decision_function(K)``
#: on an (n_test, n_train) kernel (larger = class 1); C is the regularization
#: constant chosen per split by inner CV, the settings come from
#: ``diffusion.classifier_settings.<name>``. Adding a classifier is such a
#: factory plus one line here (and its name and settings in the schema).
CLASSIFIERS: dict[str, Callable] = {
    "svm": svm_classifier,
}


def make_classifier(name: str = "svm", settings: Mapping | None = None) -> Callable[[float], object]:
    """The classifier factory ``C -> unfitted estimator`` of
    :data:`CLASSIFIERS` ``[name]`` with its settings bound.

    Raises
    ------
    InputError
        Unknown ``name`` (the known ones listed) or a setting the factory
        does not take (``diffusion.classifier_settings.<name>`` named).
    """
    factory = lookup(CLASSIFIERS, name, "diffusion.classifier")
    settings = dict(settings or {})
    check(factory, settings, f"diffusion.classifier_settings.{name}", n_args=1)
    return functools.partial(factory, **settings)


def classifier_of(cfg: Mapping) -> Callable[[float], object]:
    """The classifier a job's settings configure: ``cfg["classifier"]``
    (default ``"svm"``) with ``cfg["classifier_settings"][name]`` (default
    none), via :func:`make_classifier`."""
    name = cfg.get("classifier", "svm")
    return make_classifier(name, (cfg.get("classifier_settings") or {}).get(name))


def smo_of(classifier: Callable[[float], object] | None) -> SMOSVC | None:
    """The classifier's estimator at C = 1 when it is the ``smo`` solver's
    :class:`SMOSVC` (the fast path then batches and warm-starts its fits),
    else None."""
    est = (svm_classifier if classifier is None else classifier)(1.0)
    return est if isinstance(est, SMOSVC) else None
