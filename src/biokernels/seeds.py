"""Seeds and random generators: the one seed check (:func:`check_seed`)
and the one way a seed becomes a ``numpy.random.Generator``
(:func:`make_rng`, and :func:`spawn_rngs` for independent children).

A seed is a non-negative int; a stream (``make_rng(seed, 3)``) is
``numpy.random.default_rng([seed, 3])``, independent of the other streams
of the same seed, and ``make_rng(seed)`` is ``default_rng(seed)`` (the same
generator as ``default_rng([seed])``).
"""

from __future__ import annotations

from numbers import Integral

import numpy as np

from biokernels.errors import InputError

__all__ = ["check_seed", "make_rng", "spawn_rngs"]


def check_seed(seed, name: str = "seed") -> int:
    """``int(seed)``, checked a non-negative integer (a bool is refused).

    Raises
    ------
    InputError
        Not an integer, a bool, or negative (the message names ``name``).
    """
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, Integral) or seed < 0:
        raise InputError(f"{name} must be a non-negative int, got {seed!r}")
    return int(seed)


def make_rng(seed=None, *stream: int, name: str = "seed") -> np.random.Generator:
    """A ``numpy.random.Generator`` from ``seed``.

    Parameters
    ----------
    seed : None, non-negative int or numpy.random.Generator
        A Generator is returned as it is; None draws fresh entropy
        (``default_rng()``); an int gives ``default_rng(seed)``, or
        ``default_rng([seed, *stream])`` with a stream.
    *stream : non-negative ints
        Keys of an independent stream of the same seed (an int seed only).
    name : str
        Names the argument in the error message (e.g. ``random_state``).

    Raises
    ------
    InputError
        ``seed`` of another type, a negative int, or a stream with a
        Generator or None.
    """
    if isinstance(seed, np.random.Generator) or seed is None:
        if stream:
            raise InputError(f"{name}: a stream needs an int seed, got {type(seed).__name__}")
        return seed if seed is not None else np.random.default_rng()
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, Integral):
        raise InputError(f"{name}: expected None, an int or a numpy.random.Generator, "
                         f"got {type(seed).__name__}")
    seed = check_seed(seed, name)
    return np.random.default_rng([seed, *stream]) if stream else np.random.default_rng(seed)


def spawn_rngs(seed, n: int) -> list[np.random.Generator]:
    """``n`` independent generators spawned from one seed:
    ``default_rng(s)`` for each ``s`` of ``SeedSequence(seed).spawn(n)``.

    Raises
    ------
    InputError
        ``seed`` is not a non-negative int.
    """
    return [np.random.default_rng(s) for s in np.random.SeedSequence(check_seed(seed)).spawn(n)]
