"""The self-play loop every trainer shares; a trainer adds how it picks plays and how it learns.

``bigtwo.train.ppo`` and ``bigtwo.train.dmc`` differ in three things only: how the learner picks a play from
the scores of its legal plays (``Acting``), the targets of its decisions (``targets``) and what
an update does with them (``update``). The rest is here and in ``bigtwo.train.rollout``:

- ``SelfPlay`` set-up: the variant, the run folder (``bigtwo.train.run.Run``: TensorBoard, seeds,
  threads), the ``ActionScorer`` and Adam (the learner), and the rollouts that feed it, built
  from a ``bigtwo.train.rollout.RolloutSetup`` (what they need of the run, not the loop): one
  ``RolloutWorker`` in this process (``bigtwo.train.rollout.LocalRollouts``, what ``bigtwo train``
  runs) or Ray actors that each own one (``bigtwo.train.ray.actors.RayRollouts``, ``bigtwo train --ray``);
- ``start()``: resume from the run's newest checkpoint when there is one (network, optimizer,
  the rollouts' matches, stores and leagues, random generators), start the progress bar; a run
  without a time limit says so first, and after a minute how long the rest takes (``bigtwo.train.pace``);
- ``next_update()``: count an update and set its learning rate (annealed linearly to 0 over
  ``total_timesteps`` when ``anneal_lr``);
- ``rollout()``: the rollouts' batches of finished decisions (``bigtwo.train.rollout.Batch``), joined;
- ``learn(batch)``: the algorithm's update on them. With ``overlap`` the next rollout plays
  meanwhile (the update in a second thread, on the learner's network; the rollout acts with a
  copy holding the weights from before the update, refreshed after it), so the next ``rollout()``
  is at hand; it does not when a checkpoint is due or the run ends, so a checkpoint never holds a
  rollout played but not learned from, and a resumed run is the same run;
- ``end_update(scalars, ...)``: logs (speed, actors, learner utilisation), the progress bar,
  league snapshots (sent to every rollout's league), periodic evaluations and checkpoints;
- ``finish()``: the final checkpoint and evaluation; returns the ``RunResult``.

Before anything is created, the agents the config names (``eval_opponents``, ``baselines``) are
built once (``check_agents``), so a misspelt name fails at once, not after hours of training;
the run folder's own checks (device, resume) follow in ``bigtwo.train.run.Run``. A SIGTERM or SIGINT
(``bigtwo.train.signals``) ends the loop after the update under way: the final checkpoint is written
and the evaluations still to come are skipped.

``train`` is the loop itself, the same for both algorithms and for local and Ray rollouts::

    loop = SelfPlay(cfg, rollouts)
    loop.start()
    while loop.running():
        loop.next_update()
        batch, rollout_seconds = loop.rollout()
        scalars, update_seconds = loop.learn(batch)
        loop.end_update(scalars, rollout_seconds, update_seconds, loop.algo.postfix(scalars))
    return loop.finish()
"""

from __future__ import annotations

import copy
import math
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from bigtwo.agents import make_agent
from bigtwo.env.rules.variant import Variant, load_variant
from bigtwo.train import checkpoint as ckpt
from bigtwo.train import pace, signals
from bigtwo.train.checkpoint import load_rng_state, rng_state
from bigtwo.train.config import TrainConfig
from bigtwo.train.decisions import Decisions
from bigtwo.train.episodes import Episodes
from bigtwo.train.grow import grow
from bigtwo.train.policy_agent import PolicyAgent
from bigtwo.train.rollout import Batch, LocalRollouts, RolloutSetup, RolloutsFactory, make_scorer, trainer_module
from bigtwo.train.run import Run, final_report


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
    """``SIGTERM`` or ``SIGINT`` when a signal ended the run early (``bigtwo.train.signals``), else ``None``."""
    actors: int = 1
    """Rollout workers at the end (1 in this process; the Ray actors with ``--ray``)."""
    replaced_actors: int = 0
    """Ray actors that died and were replaced during the run (``bigtwo.train.ray.actors``)."""
    rejected_batches: int = 0
    """Batches the learner refused: repeated, from a replaced actor, or of old weights (``bigtwo.train.ray.gate``)."""


def check_agents(cfg: TrainConfig, variant: Variant) -> None:
    """Build every agent ``eval_opponents`` and (when the league plays them) ``baselines`` name once;
    ``ValueError`` naming the field and the name that is not an agent."""
    fields = (
        ["eval_opponents"]
        + (["baselines"] if cfg.league_baselines > 0 else [])
        + (["imitate"] if cfg.imitate else [])
        + (["advice"] if cfg.advice else [])
    )
    if cfg.expert:
        from bigtwo.train.expert import expert_belief

        expert_belief(cfg.expert, variant)  # the search's options, and the belief file it names
    for name in fields:
        value = getattr(cfg, name)
        for agent in [value] if isinstance(value, str) else value:
            try:
                make_agent(agent, variant, seed=0)
            except ValueError as exc:
                raise ValueError(f"field {name!r} has bad value {agent!r}: {exc}") from None


class SelfPlay:
    """Set-up, resume, rollouts, schedules and the end of a self-play run; see the module docstring.

    ``rollouts`` builds the rollouts from a ``RolloutSetup`` (the learner's network, run folder
    and device are set up by then): ``LocalRollouts`` or a ``bigtwo.train.ray.actors.RayRollouts`` maker."""

    def __init__(self, cfg: TrainConfig, rollouts: RolloutsFactory = LocalRollouts) -> None:
        self.cfg, self.algo_name = cfg, cfg.algo
        self.algo = trainer_module(cfg.algo)
        self.variant = load_variant(cfg.variant, **cfg.variant_settings)
        check_agents(cfg, self.variant)
        self.run = Run(cfg, self.variant)  # run folder, TensorBoard, seeds, threads, determinism
        self.device = self.run.device
        self.scale = cfg.resolved_reward_scale(self.variant)
        self.net = make_scorer(cfg, self.variant).to(self.device)
        # what the rollouts act with: the learner's network, or (overlap) a copy that the update
        # running beside the rollout does not touch
        self.acting_net = copy.deepcopy(self.net) if cfg.overlap else self.net
        self.pending: tuple[list[Batch], float] | None = None  # (overlap) the next rollout, played
        # fused: one kernel for every parameter's step (3.5x faster than the per-tensor loop on the CPU)
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=cfg.lr, eps=cfg.adam_eps, fused=True)
        self.shuffle = np.random.default_rng([cfg.seed, 2])  # minibatch order
        self.episodes = Episodes(0)  # the games the rollouts report, logged per update
        self.global_step, self.update, self.lr = 0, 0, cfg.lr
        self.expert_round = 0  # expert iteration: rounds done (bigtwo.train.expert)
        self.rejected = 0
        run = self.run
        self.rollouts = rollouts(
            RolloutSetup(cfg, self.variant, self.acting_net, self.device, self.scale, run.dir, run.run_id, run.say)
        )

    # ------------------------------------------------------------ start

    def start(self) -> None:
        """Resume from the newest checkpoint if the run has one, and start the schedules and the
        progress bar."""
        saved = self.run.load_resume()
        if saved is not None:
            self.net.load_state_dict(saved["model"]["state_dict"])
            res = saved["resume"]
            self.optimizer.load_state_dict(res["optimizer"])
            self.rollouts.load_state_dict(res)
            load_rng_state(res["rng"], shuffle=self.shuffle)
            self.global_step, self.update = int(saved["global_step"]), int(saved["update"])
            self.expert_round = int(res.get("expert_round", 0))
        cfg = self.cfg
        note = pace.no_limit_note(cfg, self.global_step, self.run.dir)
        if note is not None:  # a run that may go on for hours says so before anything else
            self.run.notice(note)
        self.pace_due = note is not None  # and, after a minute of training, how long the rest takes
        if saved is None and cfg.init_from:
            self.init_weights()
        if saved is None and cfg.imitate:
            self.imitate()
        self.expert_rounds()
        self.next_checkpoint = self._next_multiple(cfg.checkpoint_every)
        self.next_eval = self._next_multiple(cfg.eval_every)
        self.next_snapshot = self._next_multiple(cfg.snapshot_every) if cfg.league_past > 0 else math.inf
        self.last_checkpoint = self.run.resume_from
        self.run.progress(self.global_step)
        self.start_time, self.start_step = time.time(), self.global_step
        self.update_seconds_total = 0.0
        self._sync_acting()

    def imitate(self) -> None:
        """The warm start (``bigtwo.train.imitation``): the network learns ``cfg.imitate``'s plays first;
        logged at step 0 and said in one line."""
        from bigtwo.train.imitation import warm_start

        scalars = warm_start(self.net, self.cfg, self.variant, self.scale, self.device)
        self.run.log(scalars, 0)
        accuracy = scalars.get("imitation/accuracy", math.nan)
        matched = "" if math.isnan(accuracy) else f", {accuracy:.1%} of its plays matched"
        self.run.say(
            f"warm start: {scalars['imitation/decisions']:,.0f} decisions of {self.cfg.imitate}{matched}, "
            f"{scalars['imitation/seconds']:.0f} s"
        )

    def init_weights(self) -> None:
        """Start from ``cfg.init_from``'s weights (``shipped``: the variant's shipped network), grown where
        the run's network is larger (``bigtwo.train.grow``); ``ValueError`` when it cannot start from them."""
        from bigtwo.agents import pretrained
        from bigtwo.train import checkpoint as ckpt

        source = self.cfg.init_from
        path = pretrained.weights_path(self.variant) if source == "shipped" else Path(source).expanduser()
        if not path.is_file():
            raise ValueError(
                f"field 'init_from' has bad value {source!r}: no such file; allowed: shipped or a .pt file"
            )
        payload = ckpt.load(path)
        try:  # a larger network here starts as the file's, grown (bigtwo.train.grow)
            grown = grow(payload["model"]["state_dict"], payload["model"]["kwargs"], self.net)
        except ValueError as e:
            raise ValueError(f"field 'init_from' names {path}, whose network this run's cannot start from: {e}") from e
        how = f", grown: {grown}; it plays as the file did" if grown else ""
        self.run.say(f"starting from the weights of {path} ({int(payload.get('global_step', 0)):,} steps{how})")

    def expert_rounds(self) -> None:
        """Expert iteration's rounds still to play (``bigtwo.train.expert``), each checkpointed; stops
        early when the time limit passes or a signal asks."""
        if not self.cfg.expert or self.expert_round >= self.cfg.expert_rounds:
            return
        from bigtwo.train.expert import expert_round

        while self.expert_round < self.cfg.expert_rounds and not self.run.out_of_time() and signals.requested() is None:
            scalars = expert_round(
                self.net, self.cfg, self.variant, self.scale, self.device, self.expert_round, self.run.dir / "expert"
            )
            self.expert_round += 1
            self.run.log(scalars, self.expert_round)
            self.run.say(
                f"expert round {self.expert_round}/{self.cfg.expert_rounds}: {scalars['expert/decisions']:,.0f} "
                f"decisions of {self.cfg.expert}, the network matched {scalars['expert/matched_before']:.1%} of its "
                f"plays before and {scalars['expert/matched_after']:.1%} after, {scalars['expert/seconds']:.0f} s"
            )
            self._sync_acting()
            self.last_checkpoint = self.save_checkpoint()
            # each round's network kept apart (the checkpoint is rewritten at step 0 every round), and
            # measured against eval_opponents: the curve over rounds (logged at x = the round)
            ckpt.atomic_save(self.payload(), self.run.dir / "expert" / f"round_{self.expert_round:03d}.pt")
            evals = self.run.evaluate(self.agent(), self.expert_round, self.cfg.eval_deals)
            if evals:
                self.run.say(
                    f"after round {self.expert_round}: "
                    + ", ".join(
                        f"vs {k} margin {e.margin:+.2f} [{e.margin_ci_low:+.2f}, {e.margin_ci_high:+.2f}]"
                        for k, e in evals.items()
                    )
                )

    def _next_multiple(self, every: int) -> float:
        return (self.global_step // every + 1) * every if every > 0 else math.inf

    # ------------------------------------------------------------ the loop

    def running(self) -> bool:
        """Whether the run has steps and time left, and no signal asked it to stop (or, with
        ``overlap``, a rollout played during the last update waits to be learned from)."""
        return self.pending is not None or self._going_on()

    def _going_on(self) -> bool:
        return self.global_step < self.cfg.stop_step and not self.run.out_of_time() and signals.requested() is None

    def next_update(self) -> float:
        """Count an update and set its learning rate on the optimizer; returns it."""
        cfg = self.cfg
        self.update += 1
        self.lr = cfg.lr * (1.0 - self.global_step / cfg.total_timesteps) if cfg.anneal_lr else cfg.lr
        for group in self.optimizer.param_groups:
            group["lr"] = self.lr
        return self.lr

    def rollout(self) -> tuple[Decisions, float]:
        """The rollouts' batches of this update, joined (in worker order), and the seconds it took
        (with ``overlap``, those played during the last update); their steps are counted and their
        games recorded for the logs."""
        batches, seconds = self.pending if self.pending is not None else self._play()
        self.pending = None
        for b in batches:
            self.global_step += b.steps
            self.episodes.add(b.episodes)
        self.waiting = sum(b.waiting for b in batches)
        self.steps_this_update = sum(b.steps for b in batches)
        self.last_batches = batches  # for benchmarks/ray_bench.py: each worker's own time
        return Decisions.concat([b.decisions for b in batches]), seconds

    def _play(self) -> tuple[list[Batch], float]:
        t0 = time.time()
        batches = self.rollouts.collect(self.acting_net, self.update - 1)
        return batches, time.time() - t0

    def learn(self, batch: Decisions) -> tuple[dict[str, float], float]:
        """The algorithm's update on ``batch``: its scalars and seconds. With ``overlap``, the next
        rollout plays meanwhile (unless a checkpoint is due or the run ends after this update)."""

        def update() -> tuple[dict[str, float], float]:
            t0 = time.time()
            scalars = self.algo.update(self.net, self.optimizer, batch, self.cfg, self.shuffle, self.device)
            return scalars, time.time() - t0

        if self.cfg.overlap and self.global_step < self.next_checkpoint and self._going_on():
            with ThreadPoolExecutor(max_workers=1, thread_name_prefix="bigtwo-update") as pool:
                learning = pool.submit(update)
                try:
                    self.pending = self._play()
                finally:
                    result = learning.result()  # waits for the update (and raises what it raised)
        else:
            result = update()
        self._sync_acting()
        return result

    def _sync_acting(self) -> None:
        """The rollouts act with the learner's weights from now on (with ``overlap``, a copy)."""
        if self.acting_net is not self.net:
            self.acting_net.load_state_dict(self.net.state_dict())

    def end_update(
        self, scalars: dict[str, float], rollout_seconds: float, update_seconds: float, postfix: dict[str, str]
    ) -> None:
        """Log the update's ``scalars`` (with speed, learning rate and the league's game results),
        move the progress bar, then take snapshots, evaluate and checkpoint when due."""
        cfg, run = self.cfg, self.run
        elapsed = max(time.time() - self.start_time, 1e-9)
        sps = (self.global_step - self.start_step) / elapsed
        self.update_seconds_total += update_seconds
        utilisation = self.update_seconds_total / elapsed  # the learner's share of the wall time
        workers = self.rollouts.scalars()
        scalars = {
            **scalars,
            "charts/learning_rate": self.lr,
            "charts/sps": sps,
            "charts/rollout_seconds": rollout_seconds,
            "charts/update_seconds": update_seconds,
            "charts/learner_utilisation": utilisation,
            "charts/decisions_waiting": float(self.waiting),
            **workers,
            **self.episodes.scalars(),
        }
        self.episodes.reset()
        run.log(scalars, self.global_step)
        shown = {"sps": f"{sps:,.0f}", "actors": f"{workers['charts/actors']:.0f}", "learner": f"{utilisation:.0%}"}
        run.advance(self.steps_this_update, {**shown, **postfix})
        if self.pace_due and elapsed >= pace.PACE_AFTER_SECONDS:
            run.notice(pace.pace_note(self.global_step, cfg.stop_step, self.global_step - self.start_step, elapsed))
            self.pace_due = False

        if self.global_step >= self.next_snapshot:
            payload = self.payload()
            self.rollouts.add_snapshot(self.global_step, run.snapshot(payload), payload)
            self.next_snapshot = self._next_multiple(cfg.snapshot_every)
        if self.global_step >= self.next_eval and signals.requested() is None:
            evals = run.evaluate(self.agent(), self.global_step, cfg.eval_deals)
            if evals:
                trained = run.last_time
                run.say(
                    f"step {self.global_step:,} ({trained['time/wall_minutes']:.1f} min, "
                    f"{trained['time/cpu_minutes']:.1f} CPU min): "
                    + ", ".join(
                        f"vs {k} {e.mean_payoff:+.2f} (them {e.opponent_mean_payoff:+.2f}, margin "
                        f"{e.margin:+.2f} [{e.margin_ci_low:+.2f}, {e.margin_ci_high:+.2f}])"
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
        return self.run.payload(self.algo_name, self.net, self.global_step, self.update)

    def save_checkpoint(self) -> Path:
        """A resumable checkpoint: the policy plus the optimizer, the learner's random generators
        and the rollouts' state (matches, stores, leagues, their generators)."""
        resume = {
            "optimizer": self.optimizer.state_dict(),
            **self.rollouts.state_dict(),
            "expert_round": self.expert_round,
        }
        resume["rng"] = {**resume.get("rng", {}), **rng_state(shuffle=self.shuffle)}
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
            self.algo_name,
            self.agent(),
            self.last_checkpoint,
            step,
            step - self.start_step,
            seconds,
            sps,
            stopped_by=stopped_by,
            resume_flags=self.rollouts.resume_flags,
        )
        workers = self.rollouts.scalars()
        self.rollouts.close()
        run.close()
        return RunResult(
            run.dir,
            self.last_checkpoint,
            step,
            seconds,
            sps,
            evals,
            stopped_by,
            actors=int(workers["charts/actors"]),
            replaced_actors=int(workers.get("charts/actors_replaced", 0)),
            rejected_batches=int(workers.get("charts/batches_rejected", 0)),
        )


def train(cfg: TrainConfig, rollouts: RolloutsFactory = LocalRollouts) -> RunResult:
    """Self-play with the algorithm ``cfg.algo`` names: per update a rollout (the finished decisions
    and their targets), the algorithm's update on them, then logs, snapshots, evaluations and
    checkpoints when due."""
    loop = SelfPlay(cfg, rollouts)
    try:
        loop.start()
        while loop.running():
            loop.next_update()
            # 1. rollout: num_steps vector steps per worker, the learner's finished decisions with their targets
            batch, rollout_seconds = loop.rollout()
            # 2. the update: PPO epochs (bigtwo.train.ppo) or Q regression (bigtwo.train.dmc); with overlap, the
            #    next rollout plays meanwhile
            scalars, update_seconds = loop.learn(batch)
            # 3. logs, then snapshots, evaluation and checkpoints when due
            loop.end_update(scalars, rollout_seconds, update_seconds, loop.algo.postfix(scalars))
        return loop.finish()
    finally:
        loop.rollouts.close()


def run_training(cfg: TrainConfig, ray: str | None = None) -> RunResult:
    """Run the trainer ``cfg.algo`` names (``bigtwo.train.ppo`` or ``bigtwo.train.dmc``); returns its ``RunResult``.
    ``ray``: ``None`` trains in this process; ``local``, ``auto`` or a cluster address trains with
    ``cfg.ray_actors`` rollout actors on that Ray cluster (``bigtwo.train.ray.actors``; needs the ``ray``
    extra). A SIGTERM or SIGINT meanwhile ends it early with a final checkpoint (``bigtwo.train.signals``).

    This is what ``bigtwo train [--ray ADDRESS]`` runs once the config is read (``bigtwo.train.config.load_config``)."""
    with signals.stop_requests():
        if ray is None:
            return train(cfg)
        from bigtwo.arena.cluster import connect
        from bigtwo.train.ray.actors import RayRollouts

        with connect(ray):
            return train(cfg, lambda setup: RayRollouts(setup, address=ray))
