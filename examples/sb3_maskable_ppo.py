"""Stable-Baselines3: sb3-contrib's ``MaskablePPO`` on ``bigtwo/BigTwo-v1`` against heuristic opponents.

    pip install -e ".[sb3]"     # stable-baselines3 and sb3-contrib
    # past random play, about 2 minutes on 2 cores:
    python examples/sb3_maskable_ppo.py --opponents none --timesteps 2048 --episodes 100
    # 10,000 learner moves against heuristics (the default), about 10 minutes:
    python examples/sb3_maskable_ppo.py --save ppo_bigtwo.zip

How long: SB3's MLP policy scores all ~20,000 actions at every move, and the opponents play
inside each env step one move at a time, so it trains at tens of learner moves a second on a
2-core CPU. Measured on 2 cores shared with other jobs (load 3-5; median of 3 runs of 2,048
moves): about 39 moves/s against random play and 16 against heuristics, and several times
slower under heavier load (docs/results.md). 200,000 moves would take hours. The kit's own trainer
(``bigtwo train``) scores only the legal plays and trains on batched self-play at 66-73k
env-steps/s on the same cores.

The Gymnasium env seats one learner against fixed opponents (``bigtwo.env.envs.gym_env``). Its
observation is a ``Dict`` of the observation vector and the ~20,000-wide action mask; SB3's
policies should not read the mask as an input, so ``LearnerView`` passes on only the vector,
and ``MaskablePPO`` takes the mask from the env's ``action_masks()`` method instead (found through
the wrappers with ``get_wrapper_attr``, as sb3-contrib expects). Invalid actions then get zero
probability, so the learner never plays an illegal card.

``evaluate`` plays a policy for ``episodes`` matches on seeded deals (the same deals for every
policy it is given, so two policies are compared on the same cards) and returns the mean
reward, the learner's payoff per match. ``random_policy`` is the yardstick: a uniformly random
legal play. What this example reaches and how fast, next to the kit's own trainer
(``bigtwo train``), is in the docs' training page (docs/training.md).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium
import numpy as np

import bigtwo.env  # noqa: F401  (registers bigtwo/BigTwo-v1)
from bigtwo.env.envs.gym_env import ENV_ID
from bigtwo.env.rules.variant import load_variant

Policy = Callable[[np.ndarray, np.ndarray], int]  # (observation, legal mask) -> action id
PPO_SETTINGS: dict[str, Any] = {"n_steps": 512, "batch_size": 128, "n_epochs": 4, "learning_rate": 1e-3}


class LearnerView(gymnasium.ObservationWrapper):
    """The env with only the observation vector as the observation; the mask stays reachable
    through ``action_masks()``."""

    def __init__(self, env: gymnasium.Env) -> None:
        super().__init__(env)
        self.observation_space = env.observation_space["observation"]

    def observation(self, observation: dict[str, np.ndarray]) -> np.ndarray:
        return observation["observation"]

    def action_masks(self) -> np.ndarray:
        return self.env.get_wrapper_attr("action_masks")()


def make_env(variant: str = "taiwan", opponents: Any = "heuristic", seat: int | str = "random") -> LearnerView:
    """``bigtwo/BigTwo-v1`` for ``MaskablePPO``: one learner (at a random seat each match by default)
    against ``opponents`` (an agent name or ``None`` for random play)."""
    return LearnerView(gymnasium.make(ENV_ID, variant=variant, opponents=opponents, seat=seat, illegal_action="raise"))


def train(
    variant: str = "taiwan",
    opponents: Any = "heuristic",
    timesteps: int = 10_000,
    seed: int = 0,
    verbose: int = 0,
    **ppo: Any,
) -> Any:
    """A ``MaskablePPO`` with an MLP policy trained for ``timesteps`` learner moves. ``ppo``
    overrides its settings; the defaults here (``PPO_SETTINGS``: shorter rollouts, fewer epochs
    and a higher learning rate than SB3's) learn past random play within 2,048 moves."""
    try:
        from sb3_contrib import MaskablePPO
    except ImportError:
        raise ValueError("this example needs sb3-contrib: pip install 'bigtwo[sb3]'") from None
    settings = {**PPO_SETTINGS, **ppo}
    model = MaskablePPO("MlpPolicy", make_env(variant, opponents), seed=seed, verbose=verbose, device="cpu", **settings)
    model.learn(total_timesteps=timesteps)
    return model


def model_policy(model: Any) -> Policy:
    """The trained model's most likely legal play."""

    def act(observation: np.ndarray, mask: np.ndarray) -> int:
        action, _ = model.predict(observation, action_masks=mask, deterministic=True)
        return int(action)

    return act


def random_policy(seed: int = 0) -> Policy:
    """A uniformly random legal play."""
    rng = np.random.default_rng(seed)

    def act(observation: np.ndarray, mask: np.ndarray) -> int:
        return int(rng.choice(np.flatnonzero(mask)))

    return act


def evaluate(
    policy: Policy, variant: str = "taiwan", opponents: Any = "heuristic", episodes: int = 200, seed: int = 0
) -> float:
    """Mean reward (the learner's payoff per match) of ``policy`` over ``episodes`` seeded matches,
    the learner in every seat in turn."""
    players = load_variant(variant).players
    envs = [make_env(variant, opponents, seat=seat) for seat in range(players)]
    total = 0.0
    for episode in range(episodes):
        env = envs[episode % players]
        obs, _ = env.reset(seed=seed + episode)
        done = False
        while not done:
            obs, reward, done, _, _ = env.step(policy(obs, env.action_masks()))
            total += float(reward)
    return total / episodes


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--variant", default="taiwan", help="variant name or YAML file (default: taiwan)")
    p.add_argument("--opponents", default="heuristic", help="agent name for the other seats, or 'none' for random play")
    p.add_argument(
        "--timesteps", type=int, default=10_000, help="learner moves to train for (default 10000: minutes, not hours)"
    )
    p.add_argument("--episodes", type=int, default=500, help="matches to evaluate on (default 500)")
    p.add_argument("--seed", type=int, default=0, help="seed of the training and of the evaluation deals (default 0)")
    p.add_argument("--save", metavar="FILE", help="save the trained model (SB3's .zip)")
    args = p.parse_args(argv)
    opponents = None if args.opponents.lower() == "none" else args.opponents
    t0 = time.perf_counter()
    model = train(args.variant, opponents, args.timesteps, args.seed, verbose=1)
    seconds = time.perf_counter() - t0
    print(f"trained {args.timesteps} learner moves in {seconds:.0f} s ({args.timesteps / seconds:.0f} moves/s)")
    if args.save:
        model.save(args.save)
        print(f"saved {args.save}")
    mine = evaluate(model_policy(model), args.variant, opponents, args.episodes, seed=10**6 + args.seed)
    base = evaluate(random_policy(args.seed), args.variant, opponents, args.episodes, seed=10**6 + args.seed)
    print(f"mean payoff per match over {args.episodes} matches: MaskablePPO {mine:+.3f}, random legal play {base:+.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
