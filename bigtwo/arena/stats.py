"""The statistics every arena report uses: a mean over deals with its 95% interval, and margins.

The deal, not the game, is the unit: the rotations of one deal share its cards, so a deal's
games are summarised first (payoff per game over its rotations) and the interval is taken over
deals (see ``bigtwo.arena.tournament`` for what each statistic means).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

Z95 = 1.959963984540054  # two-sided 95% normal quantile


def mean_ci(values: Sequence[float] | np.ndarray) -> tuple[float, float | None, float | None]:
    """``(mean, low, high)``: the mean of per-deal values and its normal 95% interval,
    ``mean ± 1.96 * sd / sqrt(n)`` with the sample sd (``n - 1``); no interval when ``n < 2``.

    >>> mean, low, high = mean_ci([1.0, 2.0, 3.0, 4.0])
    >>> mean, round(low, 4), round(high, 4)
    (2.5, 1.2348, 3.7652)
    """
    x = np.asarray(values, dtype=np.float64)
    n = x.size
    if n == 0:
        return math.nan, None, None
    mean = float(x.mean())
    if n < 2:
        return mean, None, None
    half = Z95 * float(x.std(ddof=1)) / math.sqrt(n)
    return mean, mean - half, mean + half


def table_margins(per_game: np.ndarray) -> np.ndarray:
    """``(deals, P)``: each table position's payoff per game in a deal (``per_game``) less the
    mean payoff per game of the deal's other positions (``margin`` in the module docstring).

    >>> table_margins(np.array([[3.0, -1.0, -1.0, -1.0]])).tolist()
    [[4.0, -1.3333333333333333, -1.3333333333333333, -1.3333333333333333]]
    """
    p = per_game.shape[1]
    others = (per_game.sum(axis=1, keepdims=True) - per_game) / (p - 1)
    return per_game - others


__all__ = ["Z95", "mean_ci", "table_margins"]
