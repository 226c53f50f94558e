"""Checks of plain values that every layer takes from users: counts, whole numbers, seats and CPU cores.

One home for the questions asked of a setting before it is used (is ``deals`` a positive
integer? how many cores may this process use?), so that the engine, the agents, the arena, the
trainers and the web table accept and refuse the same values with the same words. Seeds have
their own module (``bigtwo.env.engine.seeds``).

A count is a positive ``int`` or NumPy integer, and never a bool: YAML's ``true`` and Python's
``True`` are no count, although ``True == 1``.

>>> is_count(3), is_count(0), is_count(True), is_count(2.0)
(True, False, False, False)
>>> check_count("deals", 2000)
2000
>>> check_count("deals", "many")
Traceback (most recent call last):
...
ValueError: deals must be a positive integer, got 'many'
>>> check_count("threads", 0, "rollout threads")
Traceback (most recent call last):
...
ValueError: threads must be a positive integer (rollout threads), got 0
"""

from __future__ import annotations

import math
import os
from typing import Any, TypeGuard

import numpy as np


def is_whole(value: object) -> TypeGuard[int | np.integer[Any]]:
    """An ``int`` or NumPy integer, and not a bool."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def is_finite_number(value: object) -> bool:
    """An ``int``, ``float`` or NumPy number that is finite, and not a bool.

    >>> is_finite_number(0.5), is_finite_number(3), is_finite_number(float("nan")), is_finite_number(True)
    (True, True, False, False)
    """
    return (
        isinstance(value, (int, float, np.integer, np.floating))
        and not isinstance(value, (bool, np.bool_))
        and math.isfinite(value)
    )


def is_seat(value: object, players: int) -> bool:
    """A whole number from 0 to ``players - 1``: a seat at a table of ``players``.

    >>> is_seat(3, 4), is_seat(4, 4), is_seat(True, 4), is_seat(1.0, 4)
    (True, False, False, False)
    """
    return is_whole(value) and bool(0 <= value < players)


def is_count(value: object) -> TypeGuard[int | np.integer[Any]]:
    """A whole number >= 1 (see the module docstring)."""
    return is_whole(value) and bool(value >= 1)


def check_count(name: str, value: object, meaning: str = "") -> int:
    """``value`` as an ``int`` if it is a count; ``ValueError`` naming ``name`` (and what it
    means, in brackets, when given) otherwise."""
    if not is_count(value):
        what = f" ({meaning})" if meaning else ""
        raise ValueError(f"{name} must be a positive integer{what}, got {value!r}")
    return int(value)


def usable_cores() -> int:
    """CPU cores this process may use (its affinity where the system tells it, else all)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


__all__ = ["check_count", "is_count", "is_seat", "is_whole", "usable_cores"]
