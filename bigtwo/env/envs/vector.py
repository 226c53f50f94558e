"""Vector environment for self-play learning: N matches over the batched engine.

Every step takes one action per game, for that game's seat to act, and returns, per game, the
next seat to act, its observation, its legal actions (as a padded id list; the dense mask on
request) and the rewards of every seat (non-zero only on the step a game ends: that game's
payoffs). A finished match restarts in the same step (Gymnasium's ``SAME_STEP`` autoreset), so
the returned observation is already the new match's first one; ``terminations`` marks where a
match ended.

``copy`` (default ``True``, as in Gymnasium's vector envs): every array returned by ``reset`` and
``step`` (observations, rewards, terminations, truncations and the arrays in ``info``) is a fresh
copy the caller may keep. ``copy=False`` returns the engine's own buffers instead, which the next
step overwrites: faster for a loop that reads each step's arrays before the next (copy what you
keep). Measured with ``bigtwo bench``'s vector loop (taiwan, random legal play, two runs on two
shared cores): copying costs 7-11% of the steps per second at 1 and 64 games, 8-18% at 1,024
and 4,096.

Privileged state for a centralised critic: ``global_state()`` is each game's whole deal and game
so far (``bigtwo.env.engine.state``), laid out from the seat to act (the seat whose observation ``reset``
or ``step`` just returned: that seat first, then the others in play order), ``(N, state_size)``
float32, copied like the observations. It is computed only when called, so a loop that never
asks never pays for it. It shows every hand: feed it to a critic, never to the policy.

>>> venv = VectorEnv("taiwan", num_envs=8, seed=0)
>>> obs, info = venv.reset(seed=0)
>>> obs.shape, info["seat"].shape, venv.obs_version
((8, 623), (8,), 1)
>>> ids, counts = info["legal_ids"], info["legal_counts"]
>>> obs, rewards, terminations, truncations, info = venv.step(ids[:, 0])
>>> rewards.shape
(8, 4)
>>> venv.global_state().shape, venv.state_size
((8, 721), 721)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode

from bigtwo.env.checks import check_count
from bigtwo.env.engine.engine import Engine
from bigtwo.env.rules.variant import DEFAULT_VARIANT, Variant, load_variant


class VectorEnv:
    """Self-play over ``num_envs`` matches at once (all seats act through the same caller)."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(
        self,
        variant: Variant | str = DEFAULT_VARIANT,
        num_envs: int = 64,
        seed: int | None = None,
        copy: bool = True,
        **overrides: Any,
    ):
        check_count("num_envs", num_envs)
        v = variant if isinstance(variant, Variant) else load_variant(variant)
        if overrides:
            v = v.replace(**overrides)
        self.engine = Engine(v, num_matches=num_envs, seed=seed, autoreset=True)
        self.variant = v
        self.num_envs = num_envs
        self.num_players = v.players
        self.num_actions = self.engine.table.size
        self.obs_size = self.engine.obs_size
        self.state_size = self.engine.state_size  # global_state's width (bigtwo.env.engine.state.state_size)
        if not isinstance(copy, (bool, np.bool_)):
            raise ValueError(f"copy must be True or False, got {copy!r}")
        self.copy = bool(copy)
        self.obs_version = self.engine.obs_version  # bigtwo.env.engine.observation.OBS_VERSION
        self.state_version = self.engine.state_version  # bigtwo.env.engine.state.STATE_VERSION
        self._truncations = np.zeros(num_envs, dtype=bool)

    def _info(self) -> dict[str, np.ndarray]:
        ids, counts = self.engine.legal_actions()
        S = self.engine.state
        info = {"legal_ids": ids, "legal_counts": counts, "game_over": S.game_over, "winner": S.winner}
        if self.copy:
            info = {key: value.copy() for key, value in info.items()}
        return {"seat": S.current.astype(np.int64), **info}

    def reset(self, seed: int | Sequence[int] | None = None) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Start new matches; returns ``(obs, info)`` for each game's seat to act."""
        self.engine.reset(seed)
        return self._own(self.engine.observe()), self._info()

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """``(obs, rewards (N, P), terminations, truncations, info)``; see the module docstring."""
        result, obs = self.engine.step_observe(actions)  # the step, legal lists and observations in one kernel call
        own = self._own
        return own(obs), own(result.payoffs), own(result.match_over), own(self._truncations), self._info()

    def _own(self, array: np.ndarray) -> np.ndarray:
        """``array`` as the caller's: a copy, unless ``copy=False``."""
        return array.copy() if self.copy else array

    def global_state(self, seats: np.ndarray | None = None) -> np.ndarray:
        """Privileged state ``(N, state_size)`` float32 for a centralised critic (``bigtwo.env.engine.state``):
        every hand and the game so far, row ``g`` laid out from ``seats[g]`` (default: each game's
        seat to act, the seat of the observation just returned; ``state.ABSOLUTE`` for seat order).
        A copy unless ``copy=False``. Privileged: never an input to the acting policy."""
        return self._own(self.engine.global_state(seats))

    def action_masks(self) -> np.ndarray:
        """Dense int8 legal-action masks ``(N, num_actions)`` (costly at large N: prefer the id lists)."""
        return self.engine.legal_mask()

    def close(self) -> None:
        """Nothing to release; present for the Gymnasium vector API."""
