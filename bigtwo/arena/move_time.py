"""``bigtwo move-time``: how long an agent thinks per move, as a person playing it waits.

Each agent plays ``matches`` whole matches alone in one engine (batch 1, as ``bigtwo play`` and
the web table run it), taking seat ``match % players`` in turn against ``opponents`` (default: the
heuristic), in this process. Every decision of the measured agent is timed (``act`` only; the
opponents' moves are not counted), including forced ones. One match is played first and not
counted, so that compiling and loading are not measured. The deals come from ``seed``, so every
agent meets the same positions' deals (the games drift apart once their plays differ).
``games``, the name of ``matches`` up to 0.2, is read with a ``DeprecationWarning`` until 0.3.

It prints, per agent: moves timed, median, 95th and 99th percentile and the slowest move in
milliseconds. Figures depend on the machine and its load: compare agents in one run.

>>> res = measure_move_times("taiwan", "greedy", matches=2, seed=0)
>>> res.moves > 0 and res.slowest_ms >= res.median_ms
True
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass

import numpy as np

from bigtwo.agents.base import Agent
from bigtwo.agents.registry import make_agent, make_agent_from_spec
from bigtwo.env.checks import check_count
from bigtwo.env.engine.engine import Engine
from bigtwo.env.rules.variant import Variant, load_variant

WARM_UP_MATCHES = 1
DEFAULT_MATCHES = 40  # matches timed per agent


@dataclass(frozen=True)
class MoveTimes:
    """One agent's timed decisions (milliseconds)."""

    agent: str
    times_ms: np.ndarray

    @property
    def moves(self) -> int:
        return int(self.times_ms.size)

    @property
    def median_ms(self) -> float:
        return float(np.median(self.times_ms))

    def percentile_ms(self, q: float) -> float:
        return float(np.percentile(self.times_ms, q))

    @property
    def slowest_ms(self) -> float:
        return float(self.times_ms.max())

    def to_dict(self) -> dict[str, float | int | str]:
        return {
            "agent": self.agent,
            "moves": self.moves,
            "median_ms": round(self.median_ms, 3),
            "p95_ms": round(self.percentile_ms(95), 3),
            "p99_ms": round(self.percentile_ms(99), 3),
            "slowest_ms": round(self.slowest_ms, 3),
        }


def measure_move_times(
    variant: str | Variant,
    agent: str | Agent,
    matches: int = DEFAULT_MATCHES,
    seed: int = 0,
    opponents: str = "heuristic",
    **overrides: object,
) -> MoveTimes:
    """Time every decision of ``agent`` over ``matches`` matches (see the module docstring)."""
    if "games" in overrides:  # the old name of matches (a variant's games is not timed here)
        warnings.warn(
            "measure_move_times(games=...) is now measure_move_times(matches=...); the old name is read until 0.3",
            DeprecationWarning,
            stacklevel=2,
        )
        matches = overrides.pop("games")  # type: ignore[assignment]
    matches = check_count("matches", matches)
    var = load_variant(variant, **overrides)
    me = make_agent_from_spec(agent, var, seed=seed)
    others = [make_agent(opponents, var, seed=seed + 1 + k) for k in range(var.players - 1)]
    eng = Engine(var, num_matches=1, seed=seed)
    times: list[float] = []
    for g in range(WARM_UP_MATCHES + matches):
        eng.reset(seed=seed + g)
        mine = g % var.players
        counted = g >= WARM_UP_MATCHES
        while not eng.over[0]:
            seat = int(eng.state.current[0])
            obs = eng.observe()
            ids, counts = eng.legal_actions()
            if seat == mine:
                t0 = time.perf_counter()
                action = me.act(obs, ids, counts)
                if counted:
                    times.append((time.perf_counter() - t0) * 1000)
            else:
                action = others[(seat - mine - 1) % var.players].act(obs, ids, counts)
            eng.step(action)
    if not times:
        raise ValueError("no move was timed: the agent never had to act")
    return MoveTimes(agent if isinstance(agent, str) else me.name, np.array(times))


def table(results: list[MoveTimes]) -> str:
    """A Markdown table of the results, one row per agent."""
    lines = ["| agent | moves | median ms | p95 ms | p99 ms | slowest ms |", "|---|---|---|---|---|---|"]
    for r in results:
        lines.append(
            f"| {r.agent} | {r.moves:,} | {r.median_ms:.2f} | {r.percentile_ms(95):.2f} | "
            f"{r.percentile_ms(99):.2f} | {r.slowest_ms:.2f} |"
        )
    return "\n".join(lines) + "\n"
