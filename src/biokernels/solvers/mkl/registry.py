"""The registry of MKL methods: :data:`MKL_METHODS` and :func:`make_mkl`.

Adding a method: its file in this package (a subclass of
:class:`~biokernels.solvers.mkl.base.MKLMethod` implementing
``_learn_weights``) and one line in :data:`MKL_METHODS`. Its name is then a
value of the config's ``mkl_transfer.methods`` (the schema's enum must list
it: tests/unit/test_registries.py), its ``__init__`` arguments are its
settings ``mkl_transfer.learners.<name lowercased>_<argument>``, and
tests/unit/solvers/test_mkl_contract.py checks it.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping

from biokernels.errors import InputError
from biokernels.solvers.mkl.base import MKLMethod
from biokernels.solvers.mkl.cka import CKA
from biokernels.solvers.mkl.easymkl import EasyMKL
from biokernels.solvers.mkl.fheuristic import FHeuristic
from biokernels.solvers.mkl.pwmk import PWMK

__all__ = ["MKL_METHODS", "make_mkl"]

#: The MKL methods by name: the values of ``mkl_transfer.methods`` (the
#: config schema's enum lists exactly these keys). Each value is an
#: :class:`MKLMethod` subclass; its constructor's keyword arguments are the
#: method's settings (:func:`make_mkl`), its ``default_learner`` the
#: classifier the transfer study pairs it with.
MKL_METHODS: dict[str, type[MKLMethod]] = {
    "CKA": CKA,                  # Cortes, Mohri & Rostamizadeh 2012
    "EasyMKL": EasyMKL,          # Aiolli & Donini 2015 (biokernels.solvers.easymkl)
    "FHeuristic": FHeuristic,    # Qiu & Lane 2009
    "PWMK": PWMK,                # Tanabe et al. 2008
}


def make_mkl(method: str, settings: Mapping | None = None, **fixed):
    """An unfitted MKL method of :data:`MKL_METHODS`, built from its settings.

    A method's settings are the entries ``<method lowercased>_<argument>`` of
    ``settings`` (the config's flat ``mkl_transfer.learners``), passed as
    ``<argument>`` to its class: ``easymkl_lam`` -> ``EasyMKL(lam=...)``,
    ``pwmk_delta`` / ``pwmk_cv`` -> ``PWMK(delta=..., cv=...)``. Other
    entries (e.g. the classifiers' ``svc_C``, ``komd_lam``) are not the
    method's and are ignored; arguments not given keep the class defaults.

    Parameters
    ----------
    method : str
        A key of :data:`MKL_METHODS`.
    settings : mapping, optional
        Flat settings, e.g. ``{"easymkl_lam": 0.1, "pwmk_cv": 3}``.
    **fixed
        Arguments set by the caller, not by config (e.g. ``psd_tol=None``
        when the kernels were checked already); ``settings`` cannot set them.

    Returns
    -------
    MKLMethod
        ``MKL_METHODS[method](**arguments)``, unfitted.

    Raises
    ------
    InputError
        Unknown ``method`` (the known ones are listed), or a setting that is
        not an argument of the method's class or is one of ``fixed`` (the
        ``learners`` entry and the accepted ones are named).
    """
    if method not in MKL_METHODS:
        raise InputError(f"methods: unknown MKL method {method!r}; expected one of {list(MKL_METHODS)}")
    cls = MKL_METHODS[method]
    prefix = method.lower() + "_"
    kwargs = {k[len(prefix):]: v for k, v in (settings or {}).items() if k.startswith(prefix)}
    accepted = [p for p in inspect.signature(cls).parameters if p not in fixed]
    bad = sorted(set(kwargs) - set(accepted))
    if bad:
        raise InputError(f"learners: {[prefix + b for b in bad]} set no argument of {method} "
                         f"(its settings are {[prefix + a for a in accepted]})")
    return cls(**kwargs, **fixed)
