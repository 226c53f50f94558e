"""The agent interface: choose one legal action per game from what the seat to act can see.

An agent is built for one variant (``make_agent(name, variant, seed=...)``) and acts for many
games at once. It gets only the observations (see ``bigtwo_env.observation``) and the legal
action ids of the seats to act, never the engine's hidden state, so it cannot peek.

>>> import numpy as np
>>> from bigtwo_env.engine import Engine
>>> eng = Engine("taiwan", num_games=3, seed=0)
>>> agent = RandomAgent(eng.variant, seed=0)
>>> ids, counts = eng.legal_actions()
>>> actions = agent.act(eng.observe(), ids, counts)
>>> bool(all(a in ids[g, :counts[g]] for g, a in enumerate(actions)))
True
"""

from __future__ import annotations

import numpy as np

from bigtwo_env.actions import action_table
from bigtwo_env.variant import Variant


class Agent:
    """Base class: subclasses implement ``act``."""

    name = "agent"

    def __init__(self, variant: Variant, seed: int | None = None) -> None:
        self.variant = variant
        self.table = action_table(variant)
        self.rng = np.random.default_rng(seed)

    def act(self, obs: np.ndarray, legal_ids: np.ndarray, legal_counts: np.ndarray) -> np.ndarray:
        """One action id per row: ``obs`` (B, D) float32, ``legal_ids`` (B, L) sorted ids valid up
        to ``legal_counts`` (B,). Returns int64 (B,), each from its row's legal ids, or -1 for a
        row with none (a finished game, which sits the step out)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.variant.name!r})"


class RandomAgent(Agent):
    """A uniformly random legal play (pass included when legal)."""

    name = "random"

    def act(self, obs: np.ndarray, legal_ids: np.ndarray, legal_counts: np.ndarray) -> np.ndarray:
        picks = (self.rng.random(len(legal_counts)) * legal_counts).astype(np.int64)
        actions = legal_ids[np.arange(len(legal_counts)), picks].astype(np.int64)
        actions[legal_counts == 0] = -1  # finished games sit the step out
        return actions
