"""Seeds: what the engine and every environment take as a seed, checked in one place.

A seed is a Python ``int`` (or a NumPy integer) from 0 to ``MAX_SEED`` = 2**64 - 1: the engine
keeps one unsigned 64-bit deal seed per game, and NumPy's generators take every such int.
``None`` draws fresh entropy. A batch of N games (``Engine``, ``VectorEnv``) seeded with one int
``s`` gives game ``g`` the seed ``s + g``, so there ``s`` may be at most ``2**64 - N``: no game's
seed wraps round onto another's. A batch may instead get one seed per game (a sequence or an
integer array of N seeds). ``Engine``, ``Game``, ``VectorEnv`` and the AEC and Gymnasium
environments all check their seeds here, so they accept and refuse the same ones.

Anything else (a negative int, 2**64 or more, a float such as ``1.0``, text, a bool) raises
``ValueError`` naming the seed and what is allowed.

>>> check_seed(7), check_seed(None)
(7, None)
>>> seed_array(2**64 - 2, 2).tolist()
[18446744073709551614, 18446744073709551615]
>>> check_seed(-1)
Traceback (most recent call last):
...
ValueError: seed -1 is not allowed: a seed is an integer 0..2**64-1 (or None for fresh entropy)
>>> seed_array(2**64 - 1, 2)
Traceback (most recent call last):
...
ValueError: seed 18446744073709551615 is too large for 2 games: game g gets seed + g, so the seed must be 0..2**64-2
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import SupportsIndex, cast, overload

import numpy as np

from bigtwo.env.checks import is_whole

MAX_SEED = 2**64 - 1
SEED_RANGE = "0..2**64-1"  # MAX_SEED as the messages write it
ALLOWED = f"a seed is an integer {SEED_RANGE} (or None for fresh entropy)"


def is_seed(value: object) -> bool:
    """A whole number (not a bool) from 0 to ``MAX_SEED``: a seed where ``None`` is not allowed
    (a game record's, which names the deals it holds).

    >>> is_seed(0), is_seed(2**64 - 1), is_seed(2**64), is_seed(-1), is_seed(True), is_seed(None)
    (True, True, False, False, False, False)
    """
    return is_whole(value) and bool(0 <= value <= MAX_SEED)


@overload
def check_seed(seed: None) -> None: ...
@overload
def check_seed(seed: int) -> int: ...
@overload
def check_seed(seed: object) -> int | None: ...
def check_seed(seed: object) -> int | None:
    """``seed`` as a Python int in ``0..MAX_SEED``, or ``None``; ``ValueError`` naming it otherwise."""
    if seed is None:
        return None
    if isinstance(seed, (bool, np.bool_)):
        raise ValueError(f"seed {seed!r} is not allowed: {ALLOWED}")
    try:
        # ints and NumPy integers; not floats, text or arrays (TypeError, answered below: hence the cast)
        value = operator.index(cast(SupportsIndex, seed))
    except TypeError:
        raise ValueError(f"seed {seed!r} is not allowed: {ALLOWED}") from None
    if not 0 <= value <= MAX_SEED:
        raise ValueError(f"seed {value} is not allowed: {ALLOWED}")
    return value


def draw_seed(rng: np.random.Generator) -> int:
    """A seed drawn from ``rng`` (0..2**63-1): how an env seeded once deals each later ``reset()``
    and seeds the opponents it built.

    >>> draw_seed(np.random.default_rng(0)) == draw_seed(np.random.default_rng(0))
    True
    """
    return int(rng.integers(2**63))


def seed_array(seed: int | Sequence[int] | np.ndarray | None, n: int) -> np.ndarray:
    """The ``n`` per-game deal seeds (uint64) of a batch: ``seed + g`` for one int, the given ones
    for a sequence of ``n``, fresh entropy for ``None``. ``ValueError`` naming the bad seed."""
    if seed is None:
        return np.random.SeedSequence().generate_state(n, dtype=np.uint64)
    if isinstance(seed, (Sequence, np.ndarray)) and not isinstance(seed, (str, bytes)):
        if len(seed) != n:
            raise ValueError(f"seed must be an int or {n} seeds (one per game), got {len(seed)} seeds: {seed!r}")
        return np.array([check_seed(s) for s in np.asarray(seed, dtype=object).tolist()], dtype=np.uint64)
    first = check_seed(seed)
    assert first is not None
    if first + n - 1 > MAX_SEED:
        raise ValueError(
            f"seed {first} is too large for {n} games: game g gets seed + g, so the seed must be 0..2**64-{n}"
        )
    return (np.uint64(first) + np.arange(n, dtype=np.uint64)).astype(np.uint64)
