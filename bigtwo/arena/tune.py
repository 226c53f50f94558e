"""Tune the heuristic's weights for a variant and its scoring: coordinate search on duplicate deals.

It lives in the arena, not beside the heuristic in ``agents``: tuning is playing tournaments, and
the agents never import the arena (that would make the two packages a circle).

``bigtwo tune --variant hong-kong --rule scoring=collect`` starts from ``DEFAULT_WEIGHTS`` (or
``start``) and, in each of ``rounds`` rounds, visits the weights in order. For each weight it
tries a few other values, each in one seat against ``players - 1`` copies of the opponents'
weights (``DEFAULT_WEIGHTS`` unless ``opponents`` is given), on the same ``deals`` duplicate
deals of ``seed`` (``bigtwo.arena.tournament``: every deal in every seat rotation). The best value is
kept when it scores more than ``min_gain`` a game above the current weights there. The values:

* a whole-number weight (``WHOLE``: a rank, a number of plays or cards): ``v - 2 .. v + 2``;
* a weight at 0: ``ZERO_STEPS`` (without the negative one for ``NON_NEGATIVE`` weights);
* any other: ``v`` times each of ``FACTORS``.

The heuristic is deterministic, so the same deals make every comparison paired, and the same
arguments give the same weights. Candidates are played by ``workers`` processes (the result
does not depend on how many). The weights found are printed as a YAML list
(``heuristic:weights=[...]`` takes them), and ``HeuristicAgent(weights=...)`` and the search's
rollouts use them; ``bigtwo.agents.heuristic.WEIGHT_SETS`` ships the sets this command made.

>>> from bigtwo.agents.heuristic import DEFAULT_WEIGHTS
>>> steps = candidate_values(DEFAULT_WEIGHTS)
>>> steps[Weight.LOW_RANK], steps[Weight.CTRL_BONUS]
([3.0, 4.0, 6.0, 7.0], [0.1, 0.3, 1.0])
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bigtwo.agents.heuristic import HeuristicAgent
from bigtwo.agents.heuristic.weights import NAMES, NUM_WEIGHTS, Weight, weight_set
from bigtwo.arena.pool import end_workers
from bigtwo.arena.tournament import run_tournament
from bigtwo.env.checks import check_count
from bigtwo.env.engine.seeds import check_seed
from bigtwo.env.rules.variant import Variant, load_variant

FACTORS = (0.5, 0.75, 1.33, 2.0)  # a real weight's candidates: its value times each
ZERO_STEPS = (0.1, 0.3, 1.0, -0.1)  # a weight at 0: these
WHOLE = frozenset({Weight.CASH_AT, Weight.LOW_RANK, Weight.END_AT, Weight.PRESS_AT})  # stepped by -2 .. +2
NON_NEGATIVE = frozenset({Weight.CTRL_BONUS})  # never below 0
DEFAULT_DEALS = 3000
DEFAULT_SEED = 101
DEFAULT_ROUNDS = 3
DEFAULT_MIN_GAIN = 0.05


@dataclass
class TuneResult:
    """The weights found, their payoff a game against the opponents, and one line per weight visited."""

    weights: np.ndarray
    payoff: float
    start_payoff: float
    steps: list[str] = field(default_factory=list)


def candidate_values(weights: np.ndarray) -> list[list[float]]:
    """The values tried for each weight, from the current ``weights`` (see the module docstring)."""
    out = []
    for i, v in enumerate(np.asarray(weights, dtype=np.float64)):
        if i in WHOLE:
            vals = sorted({v - 2, v - 1, v + 1, v + 2})
        elif v == 0:
            vals = [x for x in ZERO_STEPS if x >= 0 or i not in NON_NEGATIVE]
        else:
            vals = [v * f for f in FACTORS]
        out.append([float(x) for x in vals])
    return out


def payoff_against(variant: Variant, weights: np.ndarray, opponents: np.ndarray, deals: int, seed: int) -> float:
    """Payoff a game of one heuristic seat with ``weights`` against copies with ``opponents``, on
    ``deals`` duplicate deals of ``seed``."""
    seat = HeuristicAgent(variant, weights=weights)
    others = [HeuristicAgent(variant, weights=opponents) for _ in range(variant.players - 1)]
    result = run_tournament(variant, [seat, *others], deals=deals, seed=seed, workers=1, progress=False, rating=False)
    return float(result.stats[0].mean_payoff)


def _payoff_job(job: tuple[Variant, list[float], list[float], int, int]) -> float:
    variant, weights, opponents, deals, seed = job
    return payoff_against(variant, np.array(weights), np.array(opponents), deals, seed)


def tune_weights(
    variant: Variant | str,
    *,
    start: np.ndarray | None = None,
    opponents: np.ndarray | None = None,
    deals: int = DEFAULT_DEALS,
    seed: int = DEFAULT_SEED,
    rounds: int = DEFAULT_ROUNDS,
    min_gain: float = DEFAULT_MIN_GAIN,
    workers: int = 2,
    progress: bool = True,
    log: Callable[[str], Any] | None = None,
    **overrides: Any,
) -> TuneResult:
    """Coordinate search of the heuristic's weights (see the module docstring). ``overrides``
    change the variant's fields (``scoring="collect"``); ``log`` gets each weight's line as it
    is decided."""
    var = load_variant(variant, **overrides)
    deals = check_count("deals", deals, "duplicate deals per candidate")
    rounds = check_count("rounds", rounds, "passes over the weights")
    workers = check_count("workers", workers, "processes playing the candidates")
    if seed is None:
        raise ValueError("seed must be given: every candidate plays the same deals of one seed")
    seed = check_seed(seed)
    if not isinstance(min_gain, (int, float)) or isinstance(min_gain, bool) or not min_gain >= 0:
        raise ValueError(f"min_gain must be a number >= 0 (payoff a game), got {min_gain!r}")
    best = weight_set(start)  # checked: a set's name or NUM_WEIGHTS finite numbers (a copy)
    opp = weight_set(opponents)

    pool = None
    if workers > 1:
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"))

    def play(candidates: list[np.ndarray]) -> list[float]:
        jobs = [(var, w.tolist(), opp.tolist(), deals, seed) for w in candidates]
        return list(pool.map(_payoff_job, jobs)) if pool is not None else [_payoff_job(j) for j in jobs]

    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=rounds * NUM_WEIGHTS, desc="tune", unit="weight", leave=False)
    try:
        base = play([best])[0]
        result = TuneResult(best, base, base)
        for r in range(rounds):
            for i in range(NUM_WEIGHTS):
                values = candidate_values(best)[i]
                candidates = []
                for x in values:
                    w = best.copy()
                    w[i] = x
                    candidates.append(w)
                scores = play(candidates)
                j = int(np.argmax(scores))
                line = f"round {r + 1} weight {i} {NAMES[i]}: {best[i]:g} {base:+.3f}; " + ", ".join(
                    f"{x:g} {s:+.3f}" for x, s in zip(values, scores, strict=True)
                )
                if scores[j] > base + min_gain:
                    best, base = candidates[j], scores[j]
                    line += f" -> {values[j]:g}"
                result.steps.append(line)
                if log is not None:
                    log(line)
                if bar is not None:
                    bar.update(1)
    except BaseException:
        if pool is not None:
            end_workers(pool)
            pool = None
        raise
    finally:
        if pool is not None:
            pool.shutdown(wait=True)
        if bar is not None:
            bar.close()
    result.weights, result.payoff = best, base
    return result
