"""Advice: a hand-written agent's choice as an input of the network (``advice: heuristic:weights=cards``).

An MLP over the observation has to rediscover, from millions of games, what the heuristic's
planner computes exactly (how a hand splits into the fewest plays, which cards keep control).
With ``advice`` set, every decision first asks the adviser agent what it would play, and the
network's (state, play) scorer sees one more input per legal play: 1 for the adviser's choice,
0 for the others (``bigtwo.train.networks.ActionScorer``, ``advice_size`` 1). The network can then
follow the adviser from its first updates and learns where to depart from it: the policy is
still the network's own (it picks every play, and nothing forces it to take the advice), and
its cost per move is the network's plus one heuristic decision (~0.05 ms).

The adviser's choice is computed where the observation is: in the rollouts (stored with each
decision, so the PPO epochs do not recompute it), in ``PolicyAgent`` at play time (the
network's ``score_arrays`` asks its ``adviser``), and for the warm start's teacher data. A
checkpoint records the adviser's spec in the network's ``kwargs`` (``advice``), so loading it
builds the same adviser; the adviser sees only the acting seat's observation, like any agent.

>>> import numpy as np
>>> from bigtwo.env.engine.engine import Engine
>>> from bigtwo.env import load_variant
>>> adviser = Adviser("greedy", load_variant("taiwan"))
>>> eng = Engine("taiwan", num_matches=3, seed=1)
>>> ids, counts = eng.legal_actions()
>>> picks = adviser.picks(eng.observe(), ids, counts)
>>> picks.dtype, bool(((picks >= 0) & (picks < counts)).all())
(dtype('int64'), True)
"""

from __future__ import annotations

import numpy as np

from bigtwo.agents import make_agent
from bigtwo.env.rules.variant import Variant

NO_ADVICE = -1  # an advised slot that matches no legal play


class Adviser:
    """The agent ``spec`` names (``bigtwo.agents.make_agent``), asked for its choice among each row's legal
    plays; ``ValueError`` for a name that is not an agent."""

    def __init__(self, spec: str, variant: Variant) -> None:
        self.spec = spec
        self.agent = make_agent(spec, variant, seed=0)

    def picks(self, obs: np.ndarray, legal: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """The adviser's play as a position in each row's legal list, int64 ``(B,)``
        (``NO_ADVICE`` where a row has no legal play)."""
        counts = np.asarray(counts)
        action = np.asarray(self.agent.act_unchecked(obs, legal, counts))  # the engine's own arrays
        hit = (np.asarray(legal) == action[:, None]) & (np.arange(legal.shape[1])[None, :] < counts[:, None])
        return np.where(hit.any(axis=1), hit.argmax(axis=1), NO_ADVICE).astype(np.int64)


def make_adviser(spec: str, variant: Variant) -> Adviser | None:
    """An ``Adviser`` for ``spec``, or ``None`` for ``""`` (no advice)."""
    return Adviser(spec, variant) if spec else None
