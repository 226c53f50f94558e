"""A trained network as an ``Agent``: what tournaments, ``bigtwo play`` and the league play with.

``load_policy_agent(path, variant, seed)`` reads any checkpoint this package writes (a run's
``checkpoints/step_*.pt``, its ``league/snapshot_*.pt``) and returns a ``PolicyAgent``;
the package declares it as the loader of ``.pt`` and ``.pth`` files (entry points of the group
``bigtwo.agent_loaders``, read by ``bigtwo.agents.loaders``), so ``bigtwo.agents.make_agent``, ``bigtwo tournament``
and ``bigtwo play --opponents runs/<run>/checkpoints/step_....pt`` accept trained agents.

The network scores plays from their features (``bigtwo.train.networks``), not from fixed output
slots, so an agent can play any variant with the same number of players (the observation size
depends only on that); a variant with other play rules than the training one is allowed, but
the agent has never seen it. ``same_rules=True`` refuses such a variant instead (``ValueError``
naming the fields that differ, from ``rule_differences``): the shipped ``strong`` agents
(``bigtwo.agents.pretrained``) load that way. The agent's ``provenance`` is the checkpoint's record of
what made it (``bigtwo.train.provenance``; ``None`` for a checkpoint from before provenance records).

Modes: ``greedy`` plays the best-scored legal play (the default, for evaluation); ``sample``
draws from the softmax over the legal plays (PPO's policy as trained; the league's snapshots).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import torch

from bigtwo.agents.base import Agent
from bigtwo.env.engine.observation import OBS_VERSION, obs_size
from bigtwo.env.rules.variant import DEFAULT_VARIANT, Variant, load_variant, stored_variant
from bigtwo.train import checkpoint as ckpt
from bigtwo.train.networks import ActionScorer, build_network

MODES = ("greedy", "sample")
NOT_RULES = ("name", "description", "seating", "straights_preset")  # naming, and seat labels when shown
# How a finished game is paid: an agent plays the same plays under any of these (it was tuned to
# the scoring it trained on, which its provenance records), so they never make rules differ.
PAYOFF_FIELDS = ("scoring", "unit", "tiers", "buy_in", "rake", "penalty_multiplier_for_twos", "games", "target_score")


@contextmanager
def torch_threads(threads: int | None) -> Iterator[None]:
    """Run the block with ``threads`` torch threads (None: as set), then restore the setting."""
    before = torch.get_num_threads()
    if threads is None or threads == before:
        yield
        return
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


class PolicyAgent(Agent):
    """Plays with an ``ActionScorer``; see the module docstring."""

    name = "policy"
    unlisted = ("label",)  # its name, not an option
    provenance: dict[str, Any] | None = None  # set by load_policy_agent from the checkpoint
    # what the value head's output is in payoff units: the run's reward scale (set by load_policy_agent
    # from the checkpoint's config: its ``reward_scale``, or 1 / the trained variant's worst payoff)
    value_scale: float = 1.0
    # whether the value head was trained on the observation: not for a global critic's network (its value
    # reads every hand) nor a DMC one (its Q values are the scores; its value head never learned)
    has_values: bool = True
    # a belief over the hidden hands loaded beside the network (load_policy_agent's ``belief``): what a
    # search on this network deals its guesses by (bigtwo.train.belief.BeliefNet); None: at random
    belief: Any = None
    # torch threads for ``scores`` (None: torch's setting). Search sets 1: a one-position forward
    # gains nothing from more, and idle torch threads spinning after it slow the rollouts' threads
    # (measured: strong's median move 12.4 -> 8.5 ms, slowest 53 -> 46 ms, on 2 cores).
    scores_threads: int | None = None

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
        scores = self.net.play_scores(np.asarray(obs, np.float32)[rows], legal, counts[rows])
        if self.mode == "greedy":
            pick = scores.argmax(axis=1)
        else:
            probs = torch.softmax(torch.from_numpy(scores), dim=1)
            pick = torch.multinomial(probs, 1, generator=self.generator).squeeze(1).numpy()
        out[rows] = legal[np.arange(rows.size), pick]
        return out

    @torch.no_grad()
    def scores(self, obs: np.ndarray, legal_ids: np.ndarray, legal_counts: np.ndarray) -> np.ndarray:
        """The network's score (logit) of every legal play, float64 ``(B, L)``, ``-inf`` beyond each
        row's count: what ``act`` takes the best of, and what search ranks its candidates by."""
        obs, legal_ids, counts = self.check_inputs(obs, legal_ids, legal_counts)
        out = np.full(legal_ids.shape, -np.inf)
        rows = np.flatnonzero(counts > 0)
        if rows.size:
            width = int(counts[rows].max())
            with torch_threads(self.scores_threads):
                s, _ = self.net.score_arrays(np.asarray(obs, np.float32)[rows], legal_ids[rows, :width], counts[rows])
            out[rows, :width] = s.double().cpu().numpy()
        return out

    @torch.no_grad()
    def evaluate(
        self, obs: np.ndarray, legal_ids: np.ndarray, legal_counts: np.ndarray, values: bool = True
    ) -> tuple[np.ndarray, np.ndarray]:
        """The network's scores of each row's legal plays (float64 ``(B, L)``, ``-inf`` beyond each
        row's count; every count at least 1) and its value of each row's observation in payoff units
        (its value head's output divided by ``value_scale``; NaN for a network whose critic read the
        global state, which playing never has, and for a DMC network, whose value head never learned:
        ``has_values``). ``values=False``: the scores alone (the values NaN), by the network's
        quicker ``play_scores`` (the same scores): a search's play-outs. Unchecked: for engines' own
        arrays (search)."""
        counts = np.asarray(legal_counts)
        width = max(int(counts.max()), 1) if counts.size else 1
        out = np.full((len(counts), np.asarray(legal_ids).shape[1]), -np.inf)
        legal = np.asarray(legal_ids)[:, :width]
        with torch_threads(self.scores_threads):
            if not values:
                out[:, :width] = self.net.play_scores(np.asarray(obs, np.float32), legal, counts)
                return out, np.full(len(counts), np.nan)
            s, v = self.net.score_arrays(np.asarray(obs, np.float32), legal, counts)
        out[:, :width] = s.double().cpu().numpy()
        if not self.has_values:
            return out, np.full(len(counts), np.nan)
        return out, v.double().cpu().numpy() / self.value_scale

    @torch.no_grad()
    def values(self, obs: np.ndarray) -> np.ndarray:
        """The value head's estimate of each observation's game payoff for its seat, float64 ``(B,)``
        (payoff units: divided by ``value_scale``); NaN for a network with a global critic or trained
        by DMC (``has_values``)."""
        with torch_threads(self.scores_threads):
            x = torch.as_tensor(np.asarray(obs, np.float32), device=self.device)
            if self.net.critic_size or not self.has_values:
                return np.full(len(x), np.nan)
            v = self.net.value(self.net.state_encoder(x)).squeeze(-1)
        return v.double().cpu().numpy() / self.value_scale

    def state_dict(self) -> dict:
        """RNG states (the weights are fixed)."""
        return {"rng": self.rng.bit_generator.state, "generator": self.generator.get_state()}

    def load_state_dict(self, state: dict) -> None:
        """Restore ``state_dict``'s RNG states."""
        self.rng.bit_generator.state = state["rng"]
        self.generator.set_state(state["generator"])


def check_obs_version(payload: dict, who: str, remedy: str = "retrain it (`bigtwo train`)") -> None:
    """``ValueError`` unless the checkpoint ``payload`` was trained on this package's observation
    version (``OBS_VERSION``; a checkpoint from before versions were recorded read version 0):
    its network reads another vector and would play blind. ``remedy`` says what to do instead.

    >>> check_obs_version({"obs_version": 0}, "old.pt")
    Traceback (most recent call last):
    ...
    ValueError: old.pt: trained on observation version 0, but this bigtwo observes version 1 (see bigtwo.env.engine.observation's version history), which its network cannot read; retrain it (`bigtwo train`)
    """
    version = payload.get("obs_version")
    if version == OBS_VERSION:
        return
    seen = "version 0 (no version recorded: from before versions)" if version is None else f"version {version}"
    raise ValueError(
        f"{who}: trained on observation {seen}, but this bigtwo observes version {OBS_VERSION} "
        f"(see bigtwo.env.engine.observation's version history), which its network cannot read; {remedy}"
    )


def checkpoint_variant(payload: dict) -> Variant:
    """The variant a checkpoint was trained on, rebuilt from its saved settings."""
    return stored_variant(payload["variant"]["settings"], "checkpoint variant", base=load_variant(DEFAULT_VARIANT))


def rule_differences(trained: Variant, play: Variant) -> list[str]:
    """``"field: trained value (trained) vs value (here)"`` for each rule field in which ``play``
    differs from ``trained`` (everything but ``NOT_RULES`` and ``PAYOFF_FIELDS``); empty when the
    plays and their order are the same.

    >>> rule_differences(load_variant("taiwan"), load_variant("taiwan", players=3))
    ['players: 4 (trained) vs 3 (here)']
    >>> rule_differences(load_variant("hong-kong", scoring="collect"), load_variant("hong-kong"))
    []
    """
    names = [f.name for f in dataclasses.fields(trained) if f.name not in NOT_RULES + PAYOFF_FIELDS]
    a, b = trained.to_dict(), play.to_dict()
    return [
        f"{n}: {a.get(n)!r} (trained) vs {b.get(n)!r} (here)" for n in names if getattr(trained, n) != getattr(play, n)
    ]


def load_policy_agent(
    path: str | Path,
    variant: Variant | str | None = None,
    seed: int | None = None,
    mode: str = "greedy",
    device: str | None = None,
    *,
    same_rules: bool = False,
    label: str | None = None,
    belief: str | Path | None = None,
) -> PolicyAgent:
    """A ``PolicyAgent`` from a checkpoint file, to play ``variant`` (default: the one it was
    trained on), named ``label`` (default: the file's stem). ``ValueError`` if the file is not a
    checkpoint, it reads another observation version (``check_obs_version``), the player counts
    differ, or (``same_rules``) any rule differs. ``belief``: a belief file (``bigtwo.train.belief``)
    for the same rules, loaded as the agent's ``belief`` (what a search on it deals its guesses by)."""
    payload = ckpt.load(path)
    who = f"{label} ({path})" if label else str(path)
    agent = policy_agent_from_payload(
        payload, who, variant, seed, mode, device, same_rules=same_rules, label=label or Path(path).stem
    )
    if belief is not None:
        from bigtwo.train.belief import load_belief

        agent.belief = load_belief(Path(str(belief)).expanduser(), agent.variant)
    return agent


def policy_agent_from_payload(
    payload: dict,
    who: str,
    variant: Variant | str | None = None,
    seed: int | None = None,
    mode: str = "greedy",
    device: str | None = None,
    *,
    same_rules: bool = False,
    label: str | None = None,
) -> PolicyAgent:
    """``load_policy_agent`` on a checkpoint's dict already read (``who`` names it in errors)."""
    check_obs_version(payload, who)
    trained = checkpoint_variant(payload)
    play = trained if variant is None else load_variant(variant)
    diffs = rule_differences(trained, play) if same_rules else []
    if diffs:
        raise ValueError(
            f"{who}: trained on other rules than this {play.name!r} variant ({'; '.join(diffs)}); "
            "it plays only the rules it was trained on"
        )
    kwargs = dict(payload["model"]["kwargs"])
    if kwargs["obs_size"] != obs_size(play.players):
        raise ValueError(
            f"{who}: trained for {trained.players} players ({trained.name}), cannot play {play.name!r} "
            f"with {play.players} players"
        )
    net = build_network(kwargs, play)
    net.load_state_dict(payload["model"]["state_dict"])
    dev = device or ("cuda" if torch.cuda.is_available() else "cpu")
    agent = PolicyAgent(play, net, seed=seed, mode=mode, device=dev, label=label or Path(who).stem)
    agent.provenance = payload.get("provenance")
    scale = float((payload.get("config") or {}).get("reward_scale") or 0.0)
    agent.value_scale = scale if scale > 0 else 1.0 / -trained.worst_payoff
    algo = (payload.get("config") or {}).get("algo", "ppo")
    agent.has_values = not net.critic_size and algo != "dmc"
    return agent
