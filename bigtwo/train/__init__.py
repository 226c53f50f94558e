"""``bigtwo.train``: self-play trainers for Big Two (PPO and Deep Monte-Carlo), with a league, checkpoints
and duplicate-tournament evaluation. Needs the ``train`` extra (torch, tensorboard); importing
this package itself imports no torch: the training API below is loaded on first use.

    from bigtwo.train import load_config, run_training
    result = run_training(load_config("default", ["total_timesteps=20000", "num_envs=16"]))

    bigtwo train                                   default config: PPO on taiwan, ~7-16 min on 2 CPU cores
    bigtwo train --config dmc --set num_envs=256   another config, fields overridden
    bigtwo train --resume runs/<run_name>          continue a run from its newest checkpoint
    bigtwo train --ray local                       the same config with rollout actors on Ray (the ray extra)
    bigtwo train --fields                          every config field, its default, description and allowed values
    tensorboard --logdir runs                      watch the runs

| module | job |
|---|---|
| ``config`` | ``TrainConfig``: every hyperparameter declared once with its default, range and description; YAML loading, ``--set`` overrides |
| ``networks`` | ``ActionScorer``: a state encoder and a (state, play) scorer run on the legal plays only |
| ``decisions`` | ``DecisionStore``: the learner's decisions linked per (match slot, seat); GAE and MC returns; ``Decisions``, the rows a learner trains on |
| ``loop`` | ``SelfPlay`` and ``train``: the one loop of every trainer (set-up, resume, rollouts, update, schedules, the end); ``run_training`` |
| ``rollout`` | ``RolloutWorker``: matches, league and store, the one rollout (in this process, or in each Ray actor); ``RolloutSetup``, the ``Rollouts`` protocol and ``LocalRollouts``; ``trainer_module`` and ``make_scorer`` |
| ``ray`` | ``bigtwo train --ray``: rollout actors on Ray feeding the learner, faults, checkpoints (``ray.actors``), the batch gate (``ray.gate``); the ``ray`` extra |
| ``ppo`` | PPO self-play: how it picks plays (``Acting``), its targets (GAE) and its update, top to bottom |
| ``dmc`` | Deep Monte-Carlo self-play (DouZero style): its picks, Monte-Carlo targets and regression |
| ``league`` | opponents per match slot: the current policy, past snapshots, baseline agents |
| ``advice`` | a hand-written agent's choice as one more input per legal play (``advice``) |
| ``imitation`` | the warm start: before self-play the network learns a teacher agent's plays (``imitate``) |
| ``expert`` | expert iteration: a search, searching with the network, teaches it round after round (``expert``) |
| ``grow`` | a bigger network started from a smaller one's weights, playing as it did (``init_from``) |
| ``pair_scores`` | the scorer's pair layer in one pass (the fused CPU kernel): every legal play's score |
| ``belief`` | a learned belief over the hidden hands, for the searches' deals (``bigtwo belief``) |
| ``run`` | the run folder, TensorBoard, progress bar, periodic and final evaluation |
| ``episodes`` | episode bookkeeping: the learner's game results per league opponent, game lengths |
| ``pace`` | what a run without a time limit says of how long it takes |
| ``provenance`` | what each checkpoint records of its making: command, seed, steps, training time, code version |
| ``export`` | a finished run's checkpoint as a policy-only file for the shipped ``strong`` agent (``python -m bigtwo.train.export``) |
| ``checkpoint`` | checkpoint layout and resume state (env, RNGs, which config changes resume allows), atomic writes, ``weights_only`` loading verified by checksum and layout, the newest intact checkpoint of a run |
| ``policy_agent`` | ``PolicyAgent`` and ``load_policy_agent`` (the ``.pt`` loader ``bigtwo.agents.make_agent`` finds by entry point) |
| ``signals`` | SIGTERM and SIGINT end a run with a final checkpoint (exit status 128 + the signal) |
| ``bench`` | the training figure of ``bigtwo bench --train``: how fast a config trains here |
| ``exploit`` | approximate exploitability: a best response trained against 3 frozen copies of an agent (``bigtwo benchmark --exploit-minutes``) |

The ``bigtwo train`` subcommand is ``bigtwo.cli.train``.

TensorBoard scalars: ``losses/policy``, ``losses/value``, ``losses/entropy``, ``losses/approx_kl``,
``losses/clipfrac``, ``losses/explained_variance`` (PPO; DMC logs ``losses/value`` and
``losses/q_mean``), ``charts/sps``, ``charts/actors``, ``charts/learner_utilisation`` (the update's share of the wall time; on Ray also ``charts/actors_replaced``, ``charts/batches_rejected``), ``charts/episodic_payoff`` (the learner's seats' payoff per
game), ``charts/payoff_vs_<opponent>`` and ``charts/win_rate_vs_<opponent>`` per league opponent,
``charts/episode_length``, ``charts/learning_rate``, and from the periodic evaluation
``eval/<opponent>/mean_payoff``, ``ci_low``, ``ci_high``, ``win_rate``, ``opponent_mean_payoff``.
In pure self-play ``charts/episodic_payoff`` averages every seat, so it only shows how many cards
the losers keep (game length, style), not strength: watch the ``eval/`` scalars for that.

Measured on this project's machine (2 CPU cores shared with other jobs, no GPU, torch 2.13):

| what | figure |
|---|---|
| PPO throughput, default config (128x2 encoder, 64 scorer, 512 envs), 1 torch thread | ~30k env steps/s idle; 11-15k with other jobs running |
| the same with 2 torch threads | ~45k idle; 5-6k with other jobs running (hence 1 thread by default) |
| DMC throughput, same network | ~80k env steps/s idle; 45-55k with other jobs running |
| PPO throughput, strong config (256x2 encoder, 128 scorer, 1,024 envs, 2 threads, heuristic in the league) | 29,270 env steps/s over a 91-minute run |
| legal plays only vs a dense ~19,900-wide head, batch 1024 | see ``bigtwo.train.networks`` (``python -m benchmarks.dense_head``) |

See ``bigtwo/configs/train/default.yaml`` and ``bigtwo/configs/train/strong.yaml`` for the measured runs and their evaluations.
Outside the package, run from the repository: ``python -m benchmarks.ray_bench`` (training env-steps/s
locally and on 1 and 2 Ray actors), ``python -m benchmarks.dense_head`` (the legal-plays-only network
against a dense head) and ``python -m examples.rllib_example`` (RLlib's PPO on the PettingZoo env with
action masking, played in a tournament).
"""

from __future__ import annotations

from bigtwo.layout import second_name

if __name__ != "bigtwo.train":  # ``import train`` from the repository root
    raise second_name(__name__, "bigtwo.train")

from typing import TYPE_CHECKING

from bigtwo.env.lazy import lazy_attributes

if TYPE_CHECKING:
    from bigtwo.train.config import TrainConfig, config_names, load_config, make_config
    from bigtwo.train.loop import RunResult, run_training
    from bigtwo.train.policy_agent import PolicyAgent, load_policy_agent

# The training API, loaded on first use so that ``import bigtwo.train`` (and ``bigtwo`` start-up) imports no torch.
_LAZY = {
    "TrainConfig": ".config",
    "config_names": ".config",
    "load_config": ".config",
    "make_config": ".config",
    "RunResult": ".loop",
    "run_training": ".loop",
    "PolicyAgent": ".policy_agent",
    "load_policy_agent": ".policy_agent",
}

__getattr__ = lazy_attributes(__name__, _LAZY)


__all__ = [
    "PolicyAgent",
    "RunResult",
    "TrainConfig",
    "config_names",
    "load_config",
    "load_policy_agent",
    "make_config",
    "run_training",
]
