"""Vector environment for self-play learning: N matches over the batched engine.

Every step takes one action per game, for that game's seat to act, and returns, per game, the
next seat to act, its observation, its legal actions (as a padded id list; the dense mask on
request) and the rewards of every seat (non-zero only on the step a game ends: that game's
payoffs). A finished match restarts in the same step (Gymnasium's ``SAME_STEP`` autoreset), so
the returned observation is already the new match's first one; ``terminations`` marks where a
match ended.

>>> venv = VectorEnv("taiwan", num_envs=8, seed=0)
>>> obs, info = venv.reset(seed=0)
>>> obs.shape, info["seat"].shape, venv.obs_version
((8, 623), (8,), 1)
>>> ids, counts = info["legal_ids"], info["legal_counts"]
>>> obs, rewards, terminations, truncations, info = venv.step(ids[:, 0])
>>> rewards.shape
(8, 4)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode

from .engine import Engine
from .variant import Variant


class VectorEnv:
    """Self-play over ``num_envs`` matches at once (all seats act through the same caller)."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(
        self, variant: Variant | str = "taiwan", num_envs: int = 64, seed: int | None = None, **overrides: Any
    ):
        from .variant import load_variant

        v = variant if isinstance(variant, Variant) else load_variant(variant)
        if overrides:
            v = v.replace(**overrides)
        self.engine = Engine(v, num_games=num_envs, seed=seed, autoreset=True)
        self.variant = v
        self.num_envs = num_envs
        self.num_players = v.players
        self.num_actions = self.engine.table.size
        self.obs_size = self.engine.obs_size
        self.obs_version = self.engine.obs_version  # bigtwo_env.observation.OBS_VERSION
        self._truncations = np.zeros(num_envs, dtype=bool)

    def _info(self) -> dict[str, np.ndarray]:
        ids, counts = self.engine.legal_actions()
        S = self.engine.state
        return {
            "seat": S.current.astype(np.int64),
            "legal_ids": ids,
            "legal_counts": counts,
            "game_over": S.game_over,
            "winner": S.winner,
        }

    def reset(self, seed: int | Sequence[int] | None = None) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Start new matches; returns ``(obs, info)`` for each game's seat to act."""
        self.engine.reset(seed)
        return self.engine.observe(), self._info()

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """``(obs, rewards (N, P), terminations, truncations, info)``; see the module docstring."""
        result = self.engine.step(actions)
        obs = self.engine.observe()
        return obs, result.payoffs, result.match_over, self._truncations, self._info()

    def action_masks(self) -> np.ndarray:
        """Dense int8 legal-action masks ``(N, num_actions)`` (costly at large N: prefer the id lists)."""
        return self.engine.legal_mask()

    def close(self) -> None:
        """Nothing to release; present for the Gymnasium vector API."""
