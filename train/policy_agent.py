"""A trained network as an ``Agent``: what tournaments, ``bigtwo play`` and the league play with.

``load_policy_agent(path, variant, seed)`` reads any checkpoint this package writes (a run's
``checkpoints/step_*.pt``, its ``league/snapshot_*.pt``) and returns a ``PolicyAgent``;
the package declares it as the loader of ``.pt`` and ``.pth`` files (entry points of the group
``bigtwo.agent_loaders``, read by ``agents.registry``), so ``agents.make_agent``, ``bigtwo tournament``
and ``bigtwo play --opponents runs/<run>/checkpoints/step_....pt`` accept trained agents.

The network scores plays from their features (``train.networks``), not from fixed output
slots, so an agent can play any variant with the same number of players (the observation size
depends only on that); a variant with other play rules than the training one is allowed, but
the agent has never seen it.

Modes: ``greedy`` plays the best-scored legal play (the default, for evaluation); ``sample``
draws from the softmax over the legal plays (PPO's policy as trained; the league's snapshots).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from agents.base import Agent
from bigtwo_env.observation import obs_size
from bigtwo_env.variant import Variant, load_variant

from . import checkpoint as ckpt
from .networks import ActionScorer, build_network

MODES = ("greedy", "sample")


class PolicyAgent(Agent):
    """Plays with an ``ActionScorer``; see the module docstring."""

    name = "policy"

    def __init__(
        self,
        variant: Variant,
        net: ActionScorer,
        seed: int | None = None,
        mode: str = "greedy",
        device: str | torch.device = "cpu",
        label: str | None = None,
    ) -> None:
        super().__init__(variant, seed)
        if mode not in MODES:
            raise ValueError(f"policy mode {mode!r} is not one of {', '.join(MODES)}")
        self.device = torch.device(device)
        self.net = net.to(self.device).eval()
        self.mode = mode
        self.generator = torch.Generator(device=self.device)
        self.generator.manual_seed(int(self.rng.integers(2**62)))
        if label:
            self.name = label

    @torch.no_grad()
    def act(self, obs: np.ndarray, legal_ids: np.ndarray, legal_counts: np.ndarray) -> np.ndarray:
        n = len(legal_counts)
        if n == 0:
            return np.zeros(0, np.int64)
        legal_ids = np.asarray(legal_ids)
        counts = np.asarray(legal_counts)
        out = np.where(counts > 0, legal_ids[:, 0], -1).astype(np.int64)  # one legal play: that one; none: -1
        rows = np.flatnonzero(counts > 1)
        if rows.size == 0:
            return out
        width = int(counts[rows].max())
        legal = legal_ids[rows, :width]
        scores, _ = self.net.score_arrays(np.asarray(obs, np.float32)[rows], legal, counts[rows])
        if self.mode == "greedy":
            pick = scores.argmax(dim=1)
        else:
            pick = torch.multinomial(torch.softmax(scores, dim=1), 1, generator=self.generator).squeeze(1)
        out[rows] = legal[np.arange(rows.size), pick.cpu().numpy()]
        return out

    def state_dict(self) -> dict:
        """RNG states (the weights are fixed)."""
        return {"rng": self.rng.bit_generator.state, "generator": self.generator.get_state()}

    def load_state_dict(self, state: dict) -> None:
        """Restore ``state_dict``'s RNG states."""
        self.rng.bit_generator.state = state["rng"]
        self.generator.set_state(state["generator"])


def checkpoint_variant(payload: dict) -> Variant:
    """The variant a checkpoint was trained on, rebuilt from its saved settings."""
    settings = dict(payload["variant"]["settings"])
    return load_variant("taiwan").replace(**settings)


def load_policy_agent(
    path: str | Path,
    variant: Variant | str | None = None,
    seed: int | None = None,
    mode: str = "greedy",
    device: str | None = None,
) -> PolicyAgent:
    """A ``PolicyAgent`` from a checkpoint file, to play ``variant`` (default: the one it was
    trained on). ``ValueError`` if the file is not a checkpoint or the player counts differ."""
    payload = ckpt.load(path)
    trained = checkpoint_variant(payload)
    play = trained if variant is None else load_variant(variant)
    kwargs = dict(payload["model"]["kwargs"])
    if kwargs["obs_size"] != obs_size(play.players):
        raise ValueError(
            f"{path}: trained for {trained.players} players ({trained.name}), cannot play {play.name!r} "
            f"with {play.players} players"
        )
    net = build_network(kwargs, play)
    net.load_state_dict(payload["model"]["state_dict"])
    dev = device or ("cuda" if torch.cuda.is_available() else "cpu")
    return PolicyAgent(play, net, seed=seed, mode=mode, device=dev, label=Path(path).stem)
