"""The greedy agent: always the lowest legal play (the lowest action id that is not pass).

Action ids are sorted by size, then strength, so this leads the weakest single it may and
answers with the cheapest play that beats the table. It passes only when pass is its one legal
action. Vectorised over the batch; deterministic (``seed`` is accepted and unused).

>>> import numpy as np
>>> from bigtwo.env.engine.engine import Engine
>>> eng = Engine("taiwan", num_matches=2, seed=0)
>>> ids, n = eng.legal_actions()
>>> a = GreedyAgent(eng.variant).act(eng.observe(), ids, n)
>>> bool((a == np.where(ids[:, 0] == 0, ids[:, 1], ids[:, 0])).all())
True
"""

from __future__ import annotations

import numpy as np

from bigtwo.agents.base import Agent


class GreedyAgent(Agent):
    """Lowest legal play; pass only when nothing else is legal (-1 where no action is legal)."""

    name = "greedy"

    def act(self, obs: np.ndarray, legal_ids: np.ndarray, legal_counts: np.ndarray) -> np.ndarray:
        ids = np.asarray(legal_ids)
        counts = np.asarray(legal_counts)
        rows = np.arange(len(counts))
        if ids.shape[1] == 0:
            return np.full(len(counts), -1, dtype=np.int64)
        second = ids[rows, np.minimum(1, ids.shape[1] - 1)]
        pick = np.where((ids[:, 0] == 0) & (counts > 1), second, ids[:, 0]).astype(np.int64)
        return np.where(counts > 0, pick, -1)
