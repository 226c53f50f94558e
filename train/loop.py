"""The self-play loop every trainer shares; a trainer adds how it picks plays and how it learns.

``train.ppo`` and ``train.dmc`` differ in two things only: how the learner picks a play from
the scores of its legal plays, and what an update does with the recorded decisions. The rest
of their loop is ``SelfPlay``:

- **set-up**: the variant, the run folder (``train.run.Run``: TensorBoard, seeds, threads),
  the vector env, the ``ActionScorer``, Adam, the league and the ``DecisionStore``;
- ``start(**generators)``: register the trainer's own random generators, resume from the run's
  newest checkpoint when there is one, start the progress bar;
- ``next_update()``: count an update and set its learning rate (annealed linearly to 0 over
  ``total_timesteps`` when ``anneal_lr``);
- ``rollout(choose)``: ``num_steps`` vector steps. The learner's rows with more than one legal
  play go to ``choose``, which returns the pick (an index into each row's legal list) and the
  log-probability and value recorded with it; a single legal play is no decision and is played
  without asking. Opponents' rows go to their league agents. Each seat's payoff is credited to
  its pending decision, and slots whose match ended draw new opponents;
- ``end_update(scalars, ...)``: logs, the progress bar, league snapshots, periodic evaluations
  and checkpoints, each on its schedule;
- ``finish()``: the final checkpoint and evaluation; returns the ``RunResult``.

Before anything is created, the agents the config names (``eval_opponents``, ``baselines``) are
built once (``check_agents``), so a misspelt name fails at once, not after hours of training;
the run folder's own checks (device, resume) follow in ``train.run.Run``. A SIGTERM or SIGINT
(``train.signals``) ends the loop after the update under way: the final checkpoint is written
and the evaluations still to come are skipped.

A trainer reads top to bottom (CleanRL style) around these calls::

    loop = SelfPlay(cfg, "ppo", snapshot_mode="sample")
    loop.start(sampler=sampler)
    while loop.running():
        lr = loop.next_update()
        rollout_seconds = loop.rollout(choose)
        ...  # advantages and gradient steps on loop.store
        loop.end_update(scalars, rollout_seconds, update_seconds, postfix)
    return loop.finish()
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from bigtwo_env.variant import load_variant
from bigtwo_env.vector import VectorEnv

from . import signals
from .checkpoint import env_state, load_env_state, load_rng_state, rng_state, tensors_to_arrays
from .config import TrainConfig
from .episodes import Episodes
from .league import League, make_baseline
from .networks import ActionScorer, action_features
from .policy_agent import PolicyAgent
from .run import Run, final_report
from .storage import DecisionStore

# (obs, legal ids, legal counts) of the learner's deciding rows -> (pick, log-probability, value)
Choose = Callable[[np.ndarray, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]]


@dataclass
class View:
    """What the trainer sees of the vector env before acting."""

    obs: np.ndarray
    seat: np.ndarray
    legal: np.ndarray
    counts: np.ndarray


def view(venv: VectorEnv, obs: np.ndarray | None = None) -> View:
    """The current observation, seat to act and legal lists of every slot."""
    ids, counts = venv.engine.legal_actions()
    obs = venv.engine.observe() if obs is None else obs
    return View(obs, venv.engine.state.current.astype(np.int64), ids, counts)


@dataclass
class RunResult:
    """What a finished (or time-limited) run reports."""

    run_dir: Path
    checkpoint: Path
    global_step: int
    seconds: float
    steps_per_second: float
    evaluations: dict = field(default_factory=dict)
    stopped_by: str | None = None
    """``SIGTERM`` or ``SIGINT`` when a signal ended the run early (``train.signals``), else ``None``."""


def check_agents(cfg: TrainConfig, variant) -> None:
    """Build every agent ``eval_opponents`` and (when the league plays them) ``baselines`` name once;
    ``ValueError`` naming the field and the name that is not an agent."""
    fields = ["eval_opponents"] + (["baselines"] if cfg.league_baselines > 0 else [])
    for name in fields:
        for agent in getattr(cfg, name):
            try:
                make_baseline(agent, variant, seed=0)
            except ValueError as exc:
                raise ValueError(f"field {name!r} has bad value {agent!r}: {exc}") from None


class SelfPlay:
    """Set-up, resume, rollouts, schedules and the end of a self-play run; see the module docstring.

    ``snapshot_mode``: how league snapshots play (``sample`` from their policy, or ``greedy``).
    ``store_slack``: decisions per seat that the store holds beyond ``num_steps`` per slot
    (decisions of unfinished episodes carried from one rollout to the next).
    ``score_std``: the initial scale of the scorer's output layer (see ``ActionScorer``)."""

    def __init__(
        self, cfg: TrainConfig, algo: str, *, snapshot_mode: str, store_slack: int = 1, score_std: float = 0.01
    ) -> None:
        self.cfg, self.algo = cfg, algo
        self.variant = load_variant(cfg.variant, **cfg.variant_settings)
        check_agents(cfg, self.variant)
        self.run = Run(cfg, self.variant)  # run folder, TensorBoard, seeds, threads, determinism
        self.device = self.run.device
        self.scale = cfg.resolved_reward_scale(self.variant)
        # copy=False: each step's arrays are read (or copied into the store) before the next step
        self.venv = VectorEnv(self.variant, num_envs=cfg.num_envs, seed=cfg.seed, copy=False)
        players = self.variant.players
        self.net = ActionScorer(
            self.venv.obs_size,
            action_features(self.variant),
            cfg.hidden_size,
            cfg.state_layers,
            cfg.pair_size,
            cfg.pair_layers,
            score_std=score_std,
        ).to(self.device)
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=cfg.lr, eps=cfg.adam_eps)
        self.league = League(
            self.variant,
            cfg.num_envs,
            (cfg.league_self, cfg.league_past, cfg.league_baselines),
            cfg.baselines,
            cfg.max_snapshots,
            cfg.seed,
            snapshot_mode=snapshot_mode,
            device=str(self.device),
            root=self.run.dir,
        )
        self.store = DecisionStore(
            cfg.num_envs, players, self.venv.obs_size, capacity=cfg.num_envs * (cfg.num_steps + store_slack * players)
        )
        self.shuffle = np.random.default_rng([cfg.seed, 2])  # minibatch order
        self.generators: dict[str, Any] = {"shuffle": self.shuffle}
        self.episodes = Episodes(cfg.num_envs)
        self.global_step, self.update, self.lr = 0, 0, cfg.lr

    # ------------------------------------------------------------ start

    def start(self, **generators: Any) -> None:
        """Register the trainer's random generators (saved in checkpoints), resume from the
        newest checkpoint if the run has one, and start the schedules and the progress bar."""
        self.generators.update(generators)
        saved = self.run.load_resume()
        if saved is not None:
            self.net.load_state_dict(saved["model"]["state_dict"])
            res = saved["resume"]
            self.optimizer.load_state_dict(res["optimizer"])
            load_env_state(self.venv, tensors_to_arrays(res["env"]))
            self.store.load_state_dict(tensors_to_arrays(res["store"]))
            self.league.load_state_dict(res["league"])
            load_rng_state(res["rng"], **self.generators)
            self.episodes.length[:] = res["episode_length"].numpy()
            self.global_step, self.update = int(saved["global_step"]), int(saved["update"])
        cfg = self.cfg
        self.next_checkpoint = self._next_multiple(cfg.checkpoint_every)
        self.next_eval = self._next_multiple(cfg.eval_every)
        self.next_snapshot = self._next_multiple(cfg.snapshot_every) if cfg.league_past > 0 else math.inf
        self.last_checkpoint = self.run.resume_from
        self.view: View = view(self.venv)
        self.run.progress(self.global_step)
        self.start_time, self.start_step = time.time(), self.global_step

    def _next_multiple(self, every: int) -> float:
        return (self.global_step // every + 1) * every if every > 0 else math.inf

    # ------------------------------------------------------------ the loop

    def running(self) -> bool:
        """Whether the run has steps and time left, and no signal asked it to stop."""
        return self.global_step < self.cfg.stop_step and not self.run.out_of_time() and signals.requested() is None

    def next_update(self) -> float:
        """Count an update and set its learning rate on the optimizer; returns it."""
        cfg = self.cfg
        self.update += 1
        self.lr = cfg.lr * (1.0 - self.global_step / cfg.total_timesteps) if cfg.anneal_lr else cfg.lr
        for group in self.optimizer.param_groups:
            group["lr"] = self.lr
        return self.lr

    def rollout(self, choose: Choose) -> float:
        """``num_steps`` vector steps, the learner's decisions recorded per (slot, seat); returns
        the seconds it took."""
        t0 = time.time()
        self.net.eval()
        league, store, v = self.league, self.store, self.view
        for _ in range(self.cfg.num_steps):
            learner = league.learner_rows(v.seat)
            rows = np.flatnonzero(learner & (v.counts > 1))  # a single legal play is no decision
            actions = v.legal[:, 0].astype(np.int64)  # that single play, where there is one
            if rows.size:
                legal, counts = v.legal[rows], v.counts[rows]
                pick, logprob, value = choose(v.obs[rows], legal, counts)
                actions[rows] = legal[np.arange(rows.size), pick]
                store.record(rows, v.seat[rows], v.obs[rows], legal, counts, pick, logprob, value)
            for agent, opp_rows in league.opponent_groups(learner):
                actions[opp_rows] = agent.act(v.obs[opp_rows], v.legal[opp_rows], v.counts[opp_rows])
            obs, rewards, ended, _, info = self.venv.step(actions)
            store.credit(rewards * self.scale, ended)  # each seat's payoff to its pending decision
            self.episodes.step(rewards, info["game_over"], info["winner"], league)
            league.draw(np.flatnonzero(ended))  # new matches: new opponents
            v = View(obs, info["seat"], info["legal_ids"], info["legal_counts"])
            self.global_step += self.cfg.num_envs
        self.view = v
        return time.time() - t0

    def end_update(
        self, scalars: dict[str, float], rollout_seconds: float, update_seconds: float, postfix: dict[str, str]
    ) -> None:
        """Log the update's ``scalars`` (with speed, learning rate and the league's game results),
        move the progress bar, then take snapshots, evaluate and checkpoint when due."""
        cfg, run = self.cfg, self.run
        sps = (self.global_step - self.start_step) / max(time.time() - self.start_time, 1e-9)
        scalars = {
            **scalars,
            "charts/learning_rate": self.lr,
            "charts/sps": sps,
            "charts/rollout_seconds": rollout_seconds,
            "charts/update_seconds": update_seconds,
            **self.episodes.scalars(),
        }
        self.episodes.reset()
        run.log(scalars, self.global_step)
        run.advance(cfg.num_envs * cfg.num_steps, {"sps": f"{sps:,.0f}", **postfix})

        if self.global_step >= self.next_snapshot:
            self.league.add_snapshot(self.global_step, run.snapshot(self.payload()))
            self.next_snapshot = self._next_multiple(cfg.snapshot_every)
        if self.global_step >= self.next_eval and signals.requested() is None:
            evals = run.evaluate(self.agent(), self.global_step, cfg.eval_deals)
            if evals:
                run.say(
                    f"step {self.global_step:,}: "
                    + ", ".join(
                        f"vs {k} {e.mean_payoff:+.2f} [{e.ci_low:+.2f}, {e.ci_high:+.2f}] (them {e.opponent_mean_payoff:+.2f})"
                        for k, e in evals.items()
                    )
                )
            self.next_eval = self._next_multiple(cfg.eval_every)
        if self.global_step >= self.next_checkpoint:
            self.last_checkpoint = self.save_checkpoint()
            self.next_checkpoint = self._next_multiple(cfg.checkpoint_every)

    # ------------------------------------------------------------ checkpoints, agent, the end

    def payload(self) -> dict[str, Any]:
        """The policy part of a checkpoint (what league snapshots hold)."""
        return self.run.payload(self.algo, self.net, self.global_step, self.update)

    def save_checkpoint(self) -> Path:
        """A resumable checkpoint: the policy plus optimizer, env, store, league and RNG states."""
        resume = {
            "optimizer": self.optimizer.state_dict(),
            "env": env_state(self.venv),
            "store": self.store.state_dict(),
            "league": self.league.state_dict(),
            "rng": rng_state(**self.generators),
            "episode_length": self.episodes.length,
        }
        return self.run.save(self.payload(), resume)

    def agent(self) -> PolicyAgent:
        """The current network as an agent that plays its best-scored play (for evaluations)."""
        return PolicyAgent(self.variant, copy.deepcopy(self.net), seed=self.cfg.seed, mode="greedy", device=self.device)

    def finish(self) -> RunResult:
        """Checkpoint the final step (unless just done), evaluate (unless a signal stopped the run),
        print where the files are."""
        run, step = self.run, self.global_step
        stopped_by = signals.requested()
        seconds = time.time() - self.start_time
        sps = (step - self.start_step) / max(seconds, 1e-9)
        if self.last_checkpoint is None or not str(self.last_checkpoint).endswith(f"step_{step:012d}.pt"):
            self.last_checkpoint = self.save_checkpoint()
        signals.release()  # the work is saved: a signal during the final evaluation acts as usual
        if run.bar is not None:
            run.bar.close()
        evals = final_report(
            run,
            self.algo,
            self.agent(),
            self.last_checkpoint,
            step,
            step - self.start_step,
            seconds,
            sps,
            stopped_by=stopped_by,
        )
        run.close()
        return RunResult(run.dir, self.last_checkpoint, step, seconds, sps, evals, stopped_by)


def run_training(cfg: TrainConfig) -> RunResult:
    """Run the trainer ``cfg.algo`` names (``train.ppo`` or ``train.dmc``); returns its ``RunResult``.
    A SIGTERM or SIGINT meanwhile ends it early with a final checkpoint (``train.signals``).

    This is what ``bigtwo train`` runs once the config is read (``train.load_config``)."""
    if cfg.algo == "ppo":
        from .ppo import train
    else:
        from .dmc import train
    with signals.stop_requests():
        return train(cfg)
