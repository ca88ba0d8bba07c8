"""The one check of a regularisation constant ``lam`` (:func:`check_lam`),
shared by the kernel ridge service (absolute λ >= 0), DKL (λ > 0) and
EasyMKL/KOMD (λ in [0, 1])."""

from __future__ import annotations

import math

from biokernels.errors import InputError

__all__ = ["check_lam", "LAM_INTERVALS"]

#: The intervals a ``lam`` may be checked against, with the words of the
#: error message: ``[0, inf)`` (a ridge: the absolute λ added to a kernel's
#: diagonal), ``(0, inf)`` (strictly positive, e.g. DKL's λ) and ``[0, 1]``
#: (EasyMKL's and KOMD's λ).
LAM_INTERVALS = {
    "[0, inf)": ">= 0 and finite",
    "(0, inf)": "> 0 and finite",
    "[0, 1]": "in [0, 1]",
}


def check_lam(lam, name: str = "lam", interval: str = "[0, inf)") -> float:
    """``float(lam)``, checked to lie in ``interval`` (finite).

    Parameters
    ----------
    lam : number
    name : str
        Names the value in the error message.
    interval : one of :data:`LAM_INTERVALS`, default ``"[0, inf)"``

    Raises
    ------
    InputError
        Not a number, NaN, infinite or outside ``interval`` (the message
        names ``name``, e.g. ``lam must be >= 0 and finite, got -1.0``).
    """
    if interval not in LAM_INTERVALS:
        raise ValueError(f"interval: expected one of {list(LAM_INTERVALS)}, got {interval!r}")
    words = LAM_INTERVALS[interval]
    try:
        value = float(lam)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a number {words}, got {lam!r}") from None
    if interval == "[0, 1]":
        ok = 0.0 <= value <= 1.0
    elif interval == "(0, inf)":
        ok = math.isfinite(value) and value > 0
    else:
        ok = math.isfinite(value) and value >= 0
    if not ok:
        raise InputError(f"{name} must be {words}, got {value}")
    return value
