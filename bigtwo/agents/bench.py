"""The search figures of ``bigtwo bench --search``: what one simulated move costs in search's rollouts.

``search_figures`` measures, median of ``repeats`` timed runs after a warm-up, one thread:

- ``heuristic_us``: one heuristic decision (``HeuristicAgent.act`` on a batch of mid-game positions
  from heuristic play, counted per position with more than one legal play), as the trainers'
  adviser and the league's heuristic opponents pay it;
- ``rollout_us``: one rollout of search's rollout kernel (``bigtwo.agents.search.rollout_state``: a game
  played out from the deal by the heuristic at every seat, each play the engine's legal list, the
  heuristic's decision and the engine's step), over ``ROLLOUT_GAMES`` games;
- ``legal_one_ns``: the engine's legal list of one position (``kernels.legal_range`` of one game), the 13-card
  hands of a fresh deal (the dearest lists: every five-card hand);
- ``play_out_ns_per_play``: the engine alone (``kernels.legal_range`` and ``kernels.step_range``) per
  play, the same games played out with the highest legal play each turn;
- ``endgame``: the exact endgame solver (``bigtwo.agents.endgame``) on endgames of 8 and 10 cards in
  all hands (``ENDGAME_CARDS``, ``endgame.endgames``: games played at random down to that many),
  per size: ms per position solved (median of the repeats), the median and largest moves tried
  per position, and microseconds per move tried; every position is solved (a budget of
  ``ENDGAME_BUDGET`` moves).

``bigtwo.cli.bench`` prints them; the ``bigtwo`` command hands this function in, as the engine's
package never imports the agents.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from bigtwo.agents.endgame import Solver, endgames
from bigtwo.agents.heuristic import HeuristicAgent
from bigtwo.agents.search import rollout_state
from bigtwo.env import Engine, load_variant
from bigtwo.env.engine import kernels
from bigtwo.env.engine.jit import njit

ROLLOUT_GAMES = 256
POSITIONS_EVERY = 3  # a batch of positions every this many steps of heuristic play
ENDGAME_CARDS = (8, 10)  # the endgames solved: cards in all hands
ENDGAME_BUDGET = 1_000_000  # moves tried per position: every one of these is solved well within it


@njit
def _legal_lists(rules, state, repeats):
    total = 0
    for _ in range(repeats):
        for g in range(state.seeds.shape[0]):
            kernels.legal_range(g, g + 1, rules, state)
            total += state.legal_n[g]
    return total


@njit
def _play_out(first, rules, state, max_steps):
    """Play every game out (``first[g]``, then the highest legal play each turn): the plays made."""
    plays = 0
    play = np.empty(1, dtype=np.int64)
    for g in range(state.seeds.shape[0]):
        play[0] = first[g]
        kernels.step_range(g, g + 1, play, rules, state, False)
        steps = 0
        while not state.over[g] and steps < max_steps:
            kernels.legal_range(g, g + 1, rules, state)
            play[0] = state.legal[g, state.legal_n[g] - 1]
            kernels.step_range(g, g + 1, play, rules, state, False)
            steps += 1
        plays += steps + 1
    return plays


def _median(run: Callable[[], tuple[float, int]], repeats: int) -> float:
    """Median seconds per unit of ``run`` (which returns its seconds and its units), after a warm-up."""
    run()
    per = []
    for _ in range(repeats):
        seconds, units = run()
        per.append(seconds / max(units, 1))
    return statistics.median(per)


def search_figures(variant: str, repeats: int, quick: bool = False) -> dict[str, Any]:
    """The figures of the module docstring for ``variant`` (``quick``: fewer positions and games)."""
    v = load_variant(variant).replace(games=1, target_score=0)
    rows = 128 if quick else 512
    games = 32 if quick else ROLLOUT_GAMES
    engine = Engine(v, num_matches=rows, seed=3)
    agent = HeuristicAgent(v)
    positions = []
    for t in range(60):
        ids, counts = engine.legal_actions()
        obs = engine.observe()
        if t % POSITIONS_EVERY == 0:
            positions.append((obs.copy(), ids.copy(), counts.copy()))
        acts = agent.act(obs, ids, counts)
        acts[engine.over] = -1
        engine.step(acts)
        if engine.over.all():
            break
    decisions = sum(int((counts > 1).sum()) for _, _, counts in positions)

    def decide() -> tuple[float, int]:
        t0 = time.perf_counter()
        for obs, ids, counts in positions:
            agent.act(obs, ids, counts)
        return time.perf_counter() - t0, decisions

    c = agent.ctx

    def dealt() -> tuple[Engine, np.ndarray]:
        e = Engine(v, num_matches=games, seed=11)
        obs, (ids, counts) = e.observe(), e.legal_actions()
        return e, agent.act(obs, ids, counts)

    def rollouts() -> tuple[float, int]:
        e, first = dealt()
        scores = np.zeros((games, e.state.legal.shape[1]))
        payoff = np.zeros(games)
        others = np.tile(c.weights, (games, 1))
        t0 = time.perf_counter()
        rollout_state(first, scores, payoff, others, e.rules, e.state, c.lookups, c.weights, 5000)
        return time.perf_counter() - t0, games

    def legal() -> tuple[float, int]:
        e, _ = dealt()
        t0 = time.perf_counter()
        _legal_lists(e.rules, e.state, 20)
        return time.perf_counter() - t0, 20 * games

    def steps() -> tuple[float, int]:
        e, first = dealt()
        t0 = time.perf_counter()
        plays = _play_out(first, e.rules, e.state, 5000)
        return time.perf_counter() - t0, plays

    solved: dict[str, dict[str, float]] = {}
    for cards in ENDGAME_CARDS:
        eng = endgames(v, cards, 16 if quick else 64, seed=5)
        at = np.flatnonzero(~eng.over)
        solver = Solver(eng, cards, ENDGAME_BUDGET)
        tried = solver.solve(eng, at)[2]

        def solve(eng: Engine = eng, at: np.ndarray = at, solver: Solver = solver) -> tuple[float, int]:
            t0 = time.perf_counter()
            solver.solve(eng, at)
            return time.perf_counter() - t0, len(at)

        per = _median(solve, repeats)
        solved[str(cards)] = {
            "positions": float(len(at)),
            "ms_per_position": per * 1e3,
            "median_moves": float(np.median(tried)),
            "most_moves": float(tried.max()),
            "us_per_move": per * len(at) / max(int(tried.sum()), 1) * 1e6,
        }
    return {
        "endgame": solved,
        "heuristic_us": _median(decide, repeats) * 1e6,
        "rollout_us": _median(rollouts, repeats) * 1e6,
        "legal_one_ns": _median(legal, repeats) * 1e9,
        "play_out_ns_per_play": _median(steps, repeats) * 1e9,
        "positions": float(decisions),
        "rollout_games": float(games),
    }
