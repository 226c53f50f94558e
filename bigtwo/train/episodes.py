"""Episode bookkeeping: the learner's game results since the last log, by league opponent.

``Episodes.step`` counts every vector step and records each game that ended (the payoff and
whether the learner's seat won, under the label of the slot's opponent: ``self``, a snapshot, a
baseline name); ``scalars`` turns them into the ``charts/`` scalars a trainer logs
(``charts/episodic_payoff``, ``charts/games``, ``charts/episode_length``,
``charts/payoff_vs_<opponent>``, ``charts/win_rate_vs_<opponent>``). The per-slot step counts
(``length``) are part of a checkpoint's resume state. ``results`` and ``add`` carry the games of
one rollout to the learner that logs them (from Ray actors, for one).
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from bigtwo.train.league import League


class Episodes:
    """Game results of the learner's seats since the last log, by opponent label."""

    def __init__(self, num_envs: int) -> None:
        self.length = np.zeros(num_envs, np.int64)
        self.reset()

    def reset(self) -> None:
        self.payoffs: dict[str, list[float]] = defaultdict(list)
        self.wins: dict[str, list[float]] = defaultdict(list)
        self.lengths: list[int] = []

    def step(self, rewards: np.ndarray, game_over: np.ndarray, winner: np.ndarray, league: League) -> None:
        """Count one step; record the games that ended (``rewards`` as the env reports them) under
        their opponent's label (before the league draws the slots' next opponents)."""
        self.length += 1
        ended = np.flatnonzero(game_over)
        if len(ended) == 0:
            return
        labels = league.labels(ended)
        for e, label in zip(ended.tolist(), labels, strict=True):
            seats = range(rewards.shape[1]) if label == "self" else [int(league.learner_seat[e])]
            for s in seats:
                self.payoffs[label].append(float(rewards[e, s]))
                self.wins[label].append(float(winner[e] == s))
            self.lengths.append(int(self.length[e]))
            self.length[e] = 0

    def results(self) -> dict[str, Any]:
        """The games recorded since ``reset``: payoffs and wins by label, game lengths (plain lists)."""
        return {"payoffs": dict(self.payoffs), "wins": dict(self.wins), "lengths": list(self.lengths)}

    def add(self, results: dict[str, Any]) -> None:
        """Record the games of another ``results`` (a rollout's) as if they had ended here."""
        for label, values in results["payoffs"].items():
            self.payoffs[label].extend(values)
        for label, values in results["wins"].items():
            self.wins[label].extend(values)
        self.lengths.extend(results["lengths"])

    def scalars(self) -> dict[str, float]:
        out: dict[str, float] = {}
        every = [p for v in self.payoffs.values() for p in v]
        if every:
            out["charts/episodic_payoff"] = float(np.mean(every))
            out["charts/games"] = float(len(self.lengths))
            out["charts/episode_length"] = float(np.mean(self.lengths))
        for label, values in self.payoffs.items():
            out[f"charts/payoff_vs_{label}"] = float(np.mean(values))
            out[f"charts/win_rate_vs_{label}"] = float(np.mean(self.wins[label]))
        return out
