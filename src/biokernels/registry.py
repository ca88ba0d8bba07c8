"""Lookup in the registries at the library's extension points.

A registry is a plain dict, name -> callable, kept in the module that owns
the things it names:

* :data:`biokernels.solvers.mkl.MKL_METHODS` (``mkl_transfer.methods``);
* :data:`biokernels.io.cohorts.COHORT_READERS` (``format`` of a PIMKL cohort);
* :data:`biokernels.io.networks.NETWORK_READERS` (``format`` of a PIMKL
  network and, by the same names, ``type`` of a diffusion source: ``edgelist``,
  ``gem``, ``biogrid``);
* :data:`biokernels.io.labels.LABEL_READERS` (``label_format`` of a diffusion
  source);
* :data:`biokernels.studies.diffusion.protocol.CLASSIFIERS`
  (``diffusion.classifier``).

The config schema's enum of each of those keys equals the registry's keys
(tests/unit/test_registries.py). A callable's keyword parameters are the
entry's settings, given in the config under the same names; :func:`check`
and :func:`call` turn a wrong name into an :class:`~biokernels.errors.InputError` naming the
config field and the accepted settings (instead of Python's TypeError).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from biokernels.errors import InputError

__all__ = ["lookup", "settings_of", "check", "call"]

T = TypeVar("T")


def lookup(registry: Mapping[str, T], name: Any, field: str) -> T:
    """``registry[name]``.

    Parameters
    ----------
    registry : mapping name -> callable
    name : the requested key (from the config)
    field : str
        The config field that gave ``name``, for the message (e.g.
        ``"cohort 'GSE2034': format"``).

    Raises
    ------
    InputError
        ``name`` is not a key: the message names ``field``, the value and
        every known name.
    """
    if not isinstance(name, str) or name not in registry:
        raise InputError(f"{field}: unknown {name!r}; expected one of {sorted(registry)}")
    return registry[name]


def settings_of(func: Callable, exclude: Iterable[str] = ()) -> list[str]:
    """Names of ``func``'s parameters that a config may set: every parameter
    but ``*args``/``**kwargs`` and ``exclude`` (those the caller sets), in
    signature order."""
    skip = set(exclude)
    return [n for n, p in inspect.signature(func).parameters.items()
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and n not in skip]


def check(func: Callable, settings: Mapping[str, Any], field: str, n_args: int = 0,
          fixed: Iterable[str] = ()) -> None:
    """Check that ``settings`` can be passed to ``func`` as keyword arguments.

    Parameters
    ----------
    func : callable
        A registry entry.
    settings : mapping
        Its settings from the config.
    field : str
        The config field holding ``settings``, for messages.
    n_args : int
        Leading parameters the caller passes positionally (a path, C).
    fixed : iterable of str
        Keyword parameters the caller sets (``collapse``, ``name``, ...).

    Raises
    ------
    InputError
        A setting that is not a parameter of ``func``, or is one the caller
        sets, or a required parameter that neither gives: the field, the
        names and the accepted settings are named.
    """
    params = inspect.signature(func).parameters
    accepted = settings_of(func, exclude=[*list(params)[:n_args], *fixed])
    bad = sorted(set(settings) - set(accepted))
    if bad:
        raise InputError(f"{field}: {bad} are not settings of {getattr(func, '__name__', func)!r}; "
                         f"expected some of {accepted}")
    missing = [n for n in accepted if params[n].default is inspect.Parameter.empty and n not in settings]
    if missing:
        raise InputError(f"{field}: missing setting(s) {missing} (settings: {accepted})")


def call(func: Callable[..., T], settings: Mapping[str, Any], field: str, *args, **fixed) -> T:
    """``func(*args, **settings, **fixed)`` after :func:`check` of the settings.

    ``args`` and ``fixed`` are what the caller sets (a path, ``collapse``,
    ...); ``settings`` come from the config under ``field``. Returns what
    ``func`` returns; raises :class:`~biokernels.errors.InputError` as
    :func:`check`, and passes errors of ``func`` itself through unchanged.
    """
    check(func, settings, field, len(args), fixed)
    return func(*args, **settings, **fixed)
