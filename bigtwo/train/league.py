"""The league: who sits at each match slot's other seats.

Each of the vector env's ``num_envs`` slots plays, match after match, against one opponent
drawn (when its match ends) with weights ``league_self : league_past : league_baselines``:

- **self**: every seat is the current policy, and every seat's decisions are trained on;
- **past**: a snapshot of the policy, taken every ``snapshot_every`` environment steps (the
  newest ``max_snapshots`` are kept), at every seat but one; while there is none yet, self.
  With ``snapshots_per_rollout`` k > 0, each rollout (``next_rollout``) draws k of the kept
  snapshots and the past matches that start in it draw among those k: every snapshot with a
  match to play costs a network pass at every step, so with 8 kept the past matches (10% of them)
  took two thirds of a DMC rollout's time, and with k = 1 a step plays about two;
- **baseline**: an agent from ``bigtwo.agents.make_agent`` (``random``, ``greedy``, ``heuristic``...),
  drawn uniformly from ``baselines``, at every seat but one.

Against past snapshots and baselines the learner holds one seat (drawn uniformly per match)
and only that seat's decisions are recorded for training. Snapshots are written to
``runs/<run>/league/snapshot_<step>.pt`` (policy-only checkpoints: ``bigtwo tournament`` reads
them too) and play by sampling from their policy (PPO) or greedily (DMC).

``opponent[e]`` codes: 0 = self, ``1 .. B`` = baseline ``b - 1``, ``B + 1 + j`` = snapshot ``j``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from bigtwo.agents import make_agent
from bigtwo.agents.base import Agent
from bigtwo.env.rules.variant import Variant

if TYPE_CHECKING:
    from bigtwo.train.policy_agent import PolicyAgent

SELF = 0


class League:
    """Opponent and learner seat of every match slot; see the module docstring."""

    def __init__(
        self,
        variant: Variant,
        num_envs: int,
        weights: tuple[float, float, float],
        baselines: list[str],
        max_snapshots: int,
        seed: int,
        snapshot_mode: str = "sample",
        device: str = "cpu",
        root: str | Path = ".",
        per_rollout: int = 0,
    ) -> None:
        self.variant = variant
        self.num_envs = num_envs
        self.players = variant.players
        w = np.asarray(weights, np.float64)
        self.weights = w / w.sum()
        self.baseline_names = list(baselines) if w[2] > 0 else []
        self.baselines = [make_agent(n, variant, seed=seed * 7919 + i) for i, n in enumerate(self.baseline_names)]
        self.max_snapshots = max_snapshots
        self.per_rollout = per_rollout
        self.active = np.zeros(0, np.int64)  # the snapshots this rollout's past matches draw from (per_rollout)
        self.snapshot_mode = snapshot_mode
        self.device = device
        self.root = Path(root)
        self.snapshots: list[tuple[int, str, Any]] = []  # (step, path, PolicyAgent), oldest first
        self.rng = np.random.default_rng([seed, 0x1EA6])
        self.opponent = np.zeros(num_envs, np.int64)
        self.learner_seat = np.zeros(num_envs, np.int64)
        self.draw(np.arange(num_envs))

    # ------------------------------------------------------------ drawing opponents

    def draw(self, slots: np.ndarray) -> None:
        """Draw a new opponent and learner seat for ``slots`` (their matches just started)."""
        k = len(slots)
        if k == 0:
            return
        kind = self.rng.choice(3, size=k, p=self.weights)
        b = self.rng.integers(0, max(len(self.baselines), 1), size=k)
        if self.per_rollout and len(self.active):
            j = self.active[self.rng.integers(0, len(self.active), size=k)]
        else:
            j = self.rng.integers(0, max(len(self.snapshots), 1), size=k)
        seat = self.rng.integers(0, self.players, size=k)
        opp = np.zeros(k, np.int64)
        if self.baselines:
            opp = np.where(kind == 2, 1 + b, opp)
        if self.snapshots:
            opp = np.where(kind == 1, 1 + len(self.baselines) + j, opp)
        self.opponent[slots] = opp
        self.learner_seat[slots] = seat

    def next_rollout(self) -> None:
        """A rollout starts: with ``per_rollout`` set, draw the snapshots its new past matches play."""
        n = len(self.snapshots)
        if self.per_rollout and n:
            self.active = np.sort(self.rng.choice(n, size=min(self.per_rollout, n), replace=False))

    def learner_rows(self, seats: np.ndarray) -> np.ndarray:
        """Bool (N,): the seat to act in each slot is the learner."""
        return (self.opponent == SELF) | (seats == self.learner_seat)

    def opponent_groups(self, learner: np.ndarray) -> list[tuple[Agent, np.ndarray]]:
        """``(agent, rows)`` for every opponent with rows to act (rows where not ``learner``)."""
        rows = np.flatnonzero(~learner)
        if len(rows) == 0:
            return []
        codes = self.opponent[rows]
        out = []
        for code in np.unique(codes).tolist():
            out.append((self.agent(code), rows[codes == code]))
        return out

    def agent(self, code: int) -> Agent:
        """The agent behind an opponent code (not ``SELF``)."""
        nb = len(self.baselines)
        return self.baselines[code - 1] if code <= nb else self.snapshots[code - 1 - nb][2]

    def labels(self, slots: np.ndarray) -> list[str]:
        """The opponent of each of ``slots``: ``self``, ``past`` or a baseline's name (for logs)."""
        labels = ["self", *self.baseline_names] + ["past"] * len(self.snapshots)
        return [labels[c] for c in self.opponent[slots].tolist()]

    # ------------------------------------------------------------ snapshots

    def _snapshot_agent(self, path: str, payload: dict | None, seed: int | None) -> PolicyAgent:
        """The agent of a snapshot: from its ``payload`` when given, else read from ``root / path``."""
        from bigtwo.train.policy_agent import load_policy_agent, policy_agent_from_payload

        if payload is None:
            return load_policy_agent(
                self.root / path, self.variant, seed=seed, mode=self.snapshot_mode, device=self.device
            )
        return policy_agent_from_payload(
            payload, str(path), self.variant, seed=seed, mode=self.snapshot_mode, device=self.device
        )

    def add_snapshot(self, step: int, path: str | Path, payload: dict | None = None) -> None:
        """Add the policy saved at ``path`` (relative to ``root``, the run folder) after ``step`` env
        steps (``payload``: that file's dict, for a league that cannot read the run folder, such as
        a Ray actor's on another machine); drop the oldest past the cap.
        Slots playing a dropped snapshot switch to the oldest one left."""
        if self.max_snapshots <= 0:
            return
        seed = int(self.rng.integers(2**31))
        agent = self._snapshot_agent(str(path), payload, seed)
        nb = len(self.baselines)
        self.snapshots.append((step, str(path), agent))
        if len(self.snapshots) > self.max_snapshots:
            self.snapshots.pop(0)
            past = self.opponent > nb
            self.opponent[past] = np.maximum(self.opponent[past] - 1, nb + 1)
            self.active = np.unique(np.maximum(self.active - 1, 0))

    # ------------------------------------------------------------ checkpoints

    def state_dict(self) -> dict[str, Any]:
        """Slots, RNG states, snapshot list (paths; the files hold the weights)."""
        return {
            "opponent": self.opponent.copy(),
            "learner_seat": self.learner_seat.copy(),
            "rng": self.rng.bit_generator.state,
            "active": self.active.copy(),
            "snapshots": [{"step": s, "path": p, "agent": a.state_dict()} for s, p, a in self.snapshots],
            "baselines": [getattr(a, "rng", None) and a.rng.bit_generator.state for a in self.baselines],
        }

    def load_state_dict(self, state: dict[str, Any], payloads: dict[str, dict] | None = None) -> None:
        """Restore ``state_dict``, reloading the snapshot files (or taking their dicts from
        ``payloads``, by path, where given)."""
        self.snapshots = []
        for snap in state["snapshots"]:
            agent = self._snapshot_agent(snap["path"], (payloads or {}).get(snap["path"]), None)
            agent.load_state_dict(snap["agent"])
            self.snapshots.append((int(snap["step"]), snap["path"], agent))
        self.opponent = np.asarray(state["opponent"], np.int64).copy()
        self.learner_seat = np.asarray(state["learner_seat"], np.int64).copy()
        self.rng.bit_generator.state = state["rng"]
        self.active = np.asarray(state.get("active", ()), np.int64).copy()  # absent: a checkpoint from before
        for baseline, rng_state in zip(self.baselines, state["baselines"], strict=False):
            if rng_state and getattr(baseline, "rng", None) is not None:
                baseline.rng.bit_generator.state = rng_state
