"""Episode bookkeeping: the learner's game results since the last log, by league opponent.

``Episodes.step`` counts every vector step and records each game that ended (the payoff and
whether the learner's seat won, under the label of the slot's opponent: ``self``, a snapshot, a
baseline name); ``scalars`` turns them into the ``charts/`` scalars a trainer logs
(``charts/episodic_payoff``, ``charts/games``, ``charts/episode_length``,
``charts/payoff_vs_<opponent>``, ``charts/win_rate_vs_<opponent>``). The per-slot step counts
(``length``) are part of a checkpoint's resume state.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np


class Episodes:
    """Game results of the learner's seats since the last log, by opponent label."""

    def __init__(self, num_envs: int) -> None:
        self.length = np.zeros(num_envs, np.int64)
        self.reset()

    def reset(self) -> None:
        self.payoffs: dict[str, list[float]] = defaultdict(list)
        self.wins: dict[str, list[float]] = defaultdict(list)
        self.lengths: list[int] = []

    def step(self, rewards: np.ndarray, game_over: np.ndarray, winner: np.ndarray, league) -> None:
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
