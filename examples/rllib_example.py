"""RLlib on our environment: PPO of RLlib's current API stack trained on the PettingZoo env, then
played in a bigtwo tournament.

    python -m examples.rllib_example                       3 iterations on taiwan, then 100 deals vs random
    python -m examples.rllib_example --iterations 20 --deals 500 --opponent heuristic

Run from the repository's root (``examples/`` is not installed with the package);
``tests/test_ray.py`` runs it.

Proof that the environment works in the ecosystem's own trainer, not a trainer of ours: the AEC
env (``bigtwo.env.env``) goes through RLlib's own PettingZoo wrapper
(``ray.rllib.env.wrappers.pettingzoo_env.PettingZooEnv``, an AEC -> ``MultiAgentEnv`` adapter),
all four seats map to one shared policy (self-play with parameter sharing), and the policy is
RLlib's action-masking PPO module (``ActionMaskingTorchRLModule`` from RLlib's examples, on
RLModule/Learner/EnvRunner: the new API stack). Needs the ``ray`` extra (``ray[rllib]``).

**The one adaptation.** RLlib's masking module wants observations as
``{"observations": ..., "action_mask": float 0/1}``; ours are
``{"observation": float32, "action_mask": int8}`` (PettingZoo's classic-games naming, int8 to keep
the 19,895-wide mask small). ``MaskedObservations`` is a PettingZoo wrapper that renames the key
and casts the mask, nothing else; the AEC API (turns, rewards at game end, dead steps) is
RLlib's wrapper's business. No parallel API is needed: Big Two is turn based, and RLlib's AEC
wrapper steps one seat at a time. RLlib's env pre-check is switched off
(``disable_env_checking``): it steps random actions regardless of the mask, and our env refuses
an illegal play with a ``ValueError`` naming it.

**Playing it.** ``RLlibAgent`` wraps the trained module as a bigtwo ``Agent``: for a batch of
rows it builds each row's dense mask from its legal ids, runs the module's inference forward
pass and plays the best-scored legal play. So it sits at a tournament table like any agent
(``arena.run_tournament``, with ``workers=1``: it is an object, not a name).

The network here is RLlib's default MLP with a dense 19,895-way head (RLlib's module knows
nothing of our legal-plays-only scorer), so it learns slowly: a few iterations show the
pipeline works and the agent plays only legal plays; ``bigtwo train`` is the way to a strong
agent.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import Any

import gymnasium
import numpy as np
import torch
from pettingzoo.utils import BaseWrapper
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule
from ray.tune.registry import register_env

import bigtwo.env
from bigtwo.agents.base import Agent
from bigtwo.arena import TournamentResult, run_tournament
from bigtwo.env.rules.variant import Variant, load_variant

ENV_NAME = "bigtwo_masked"
POLICY = "shared"  # every seat plays the one policy


class MaskedObservations(BaseWrapper):
    """The AEC env with observations as RLlib's masking module reads them:
    ``{"observations": float32 vector, "action_mask": float32 0/1}``."""

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        self._spaces = {}
        for agent in env.possible_agents:
            space = env.observation_space(agent)
            mask = space["action_mask"]
            self._spaces[agent] = gymnasium.spaces.Dict(
                {
                    "observations": space["observation"],
                    "action_mask": gymnasium.spaces.Box(0.0, 1.0, shape=mask.shape, dtype=np.float32),
                }
            )

    def observation_space(self, agent: str) -> gymnasium.spaces.Space:
        return self._spaces[agent]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        obs = super().observe(agent)
        return {"observations": obs["observation"], "action_mask": obs["action_mask"].astype(np.float32)}


def make_env(env_config: dict[str, Any]) -> PettingZooEnv:
    """The env RLlib's env runners build: ours, masked for RLlib, through RLlib's PettingZoo wrapper."""
    return PettingZooEnv(MaskedObservations(bigtwo.env.env(variant=env_config.get("variant", "taiwan"))))


@dataclass
class Settings:
    """The example's knobs (small by default: a few iterations on 2 CPU cores)."""

    variant: str = "taiwan"
    hidden: int = 64
    batch: int = 512
    """Env steps (all seats) per training iteration."""
    minibatch: int = 128
    epochs: int = 2
    lr: float = 3e-4
    seed: int = 0


def build_config(s: Settings) -> PPOConfig:
    """RLlib PPO on the new API stack: one shared masked module for every seat, sampled in-process."""
    register_env(ENV_NAME, make_env)
    spec = RLModuleSpec(module_class=ActionMaskingTorchRLModule, model_config={"fcnet_hiddens": [s.hidden, s.hidden]})
    return (
        PPOConfig()
        .api_stack(enable_rl_module_and_learner=True, enable_env_runner_and_connector_v2=True)
        # RLlib's env pre-check steps random actions ignoring the mask; ours refuses illegal plays
        .environment(ENV_NAME, env_config={"variant": s.variant}, disable_env_checking=True)
        .framework("torch")
        .env_runners(num_env_runners=0, num_envs_per_env_runner=1)
        .multi_agent(policies={POLICY}, policy_mapping_fn=lambda agent_id, *args, **kwargs: POLICY)
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={POLICY: spec}))
        .training(
            train_batch_size_per_learner=s.batch,
            minibatch_size=s.minibatch,
            num_epochs=s.epochs,
            lr=s.lr,
        )
        .debugging(seed=s.seed)
    )


def train_rllib(iterations: int, s: Settings) -> tuple[Any, list[dict[str, Any]]]:
    """Build the algorithm and train it ``iterations`` times; returns it and each iteration's result."""
    algo = build_config(s).build_algo()
    return algo, [algo.train() for _ in range(iterations)]


class RLlibAgent(Agent):
    """A trained RLlib masking module as a bigtwo ``Agent``: the best-scored legal play of each row."""

    name = "rllib-ppo"

    def __init__(self, variant: Variant, module: Any, seed: int | None = None) -> None:
        super().__init__(variant, seed)
        self.module = module

    @torch.no_grad()
    def act(self, obs: np.ndarray, legal_ids: np.ndarray, legal_counts: np.ndarray) -> np.ndarray:
        n = len(legal_counts)
        out = np.full(n, -1, np.int64)
        rows = np.flatnonzero(legal_counts > 0)
        if rows.size == 0:
            return out
        mask = np.zeros((rows.size, self.table.size), np.float32)
        width = legal_ids.shape[1]
        valid = np.arange(width)[None, :] < legal_counts[rows, None]
        r, c = np.nonzero(valid)
        mask[r, legal_ids[rows][r, c]] = 1.0
        batch = {Columns.OBS: {"observations": torch.as_tensor(obs[rows]), "action_mask": torch.as_tensor(mask)}}
        logits = self.module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS]
        out[rows] = logits.argmax(dim=1).cpu().numpy()
        return out


def play(agent: Agent, variant: Variant, opponent: str, deals: int, seed: int) -> TournamentResult:
    """A duplicate tournament: ``agent`` at one seat, copies of ``opponent`` at the others."""
    entries: list[Agent | str] = [agent] + [opponent] * (variant.players - 1)
    return run_tournament(variant, entries, deals=deals, seed=seed, workers=1, progress=False)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m examples.rllib_example", description=__doc__.splitlines()[0])
    p.add_argument("--iterations", type=int, default=3, help="RLlib training iterations (default 3)")
    p.add_argument("--deals", type=int, default=100, help="tournament deals afterwards (default 100)")
    p.add_argument("--opponent", default="random", help="the agent at the other seats (default random)")
    p.add_argument("--variant", default="taiwan")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if args.iterations < 1 or args.deals < 1:
        p.error("--iterations and --deals must be at least 1")
    import ray

    from bigtwo.arena.cluster import connect

    s = Settings(variant=args.variant, seed=args.seed)
    with connect("local"):
        algo, results = train_rllib(args.iterations, s)
        for i, r in enumerate(results, 1):
            runners = r.get("env_runners", {})
            print(
                f"iteration {i}: {int(runners.get('num_env_steps_sampled_lifetime', 0)):,} env steps, "
                f"episode return mean {runners.get('episode_return_mean', float('nan')):+.3f}"
            )
        agent = RLlibAgent(load_variant(args.variant), algo.get_module(POLICY), seed=args.seed)
        print(play(agent, agent.variant, args.opponent, args.deals, args.seed).table())
        algo.stop()
    del ray
    return 0


if __name__ == "__main__":
    sys.exit(main())
