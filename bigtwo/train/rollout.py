"""Rollouts: a batch of engine matches played by the policy and its league, the learner's finished
decisions handed out with their training targets; and what builds them.

The learner (``bigtwo.train.loop.SelfPlay``) tells its rollouts what they need of the run in one small
``RolloutSetup`` (config, variant, its network, device, reward scale, run folder and id, where
to print), and takes its batches through the ``Rollouts`` protocol. Two implement it:
``LocalRollouts`` (one ``RolloutWorker`` in this process, sharing the learner's network: what
``bigtwo train`` runs) and ``bigtwo.train.ray.actors.RayRollouts`` (a ``RolloutWorker`` inside each Ray
actor, with a copy of the network that the learner's weights overwrite before each rollout:
``bigtwo train --ray``). Both are built from a ``RolloutSetup``, so neither knows the loop.

The factories both sides share live here too: ``trainer_module`` (the module of an ``algo``:
``bigtwo.train.ppo`` or ``bigtwo.train.dmc``) and ``make_scorer`` (the ``ActionScorer`` a config describes).

``RolloutWorker`` is the one rollout of every trainer. A worker owns:

- a ``VectorEnv`` of ``num_envs`` matches (``copy=False``: each step's arrays are read, or copied
  into the store, before the next step);
- the league of those matches (``bigtwo.train.league``): past snapshots and baseline agents play
  their rows inside the worker;
- the ``DecisionStore`` of the learner's decisions, with the unfinished ones carried from one
  rollout to the next, and the episode bookkeeping (``bigtwo.train.episodes``);
- the algorithm's acting (``Acting`` of ``bigtwo.train.ppo`` or ``bigtwo.train.dmc``: how a play is picked
  from the scores, with its own random generator).

``play(choose)`` is ``num_steps`` vector steps: the learner's rows with more than one legal play
go to ``choose``, which returns the pick (an index into each row's legal list) and the
log-probability and value recorded with it; a single legal play is no decision and is played
without asking. Opponents' rows go to their league agents. Each seat's payoff is credited to
its pending decision, and slots whose match ended draw new opponents.

``collect()`` is what a learner asks for: ``play``, then the algorithm's targets over the store
(GAE for PPO, Monte-Carlo returns for DMC), the finished decisions taken out as a ``Batch``
(``decisions.Decisions`` with the steps played, the games' results and where it comes from), and
the rest carried. ``state_dict`` / ``load_state_dict`` are the worker's part of a checkpoint's
resume state (matches, store, league, random generators, per-slot game lengths).

>>> trainer_module("dmc").__name__, trainer_module("dmc").SCORE_STD
('bigtwo.train.dmc', 1.0)
>>> trainer_module("a2c")
Traceback (most recent call last):
...
ValueError: unknown algo 'a2c'; allowed: ppo, dmc
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol

import numpy as np
import torch

from bigtwo.env.engine.observation import obs_size
from bigtwo.env.engine.state import state_size
from bigtwo.env.envs.vector import VectorEnv
from bigtwo.env.rules.variant import Variant
from bigtwo.train.advice import make_adviser
from bigtwo.train.checkpoint import env_state, load_env_state, load_rng_state, rng_state, tensors_to_arrays
from bigtwo.train.config import ALGOS, TrainConfig
from bigtwo.train.decisions import Decisions, DecisionStore
from bigtwo.train.episodes import Episodes
from bigtwo.train.league import League
from bigtwo.train.networks import ActionScorer, action_features

# (obs, legal ids, legal counts, the adviser's slots or None, the global states or None) of the learner's
# deciding rows -> (pick, log-probability, value); the global states only when the critic reads them
Choose = Callable[
    [np.ndarray, np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None],
    tuple[np.ndarray, np.ndarray, np.ndarray],
]


def trainer_module(algo: str) -> ModuleType:
    """The trainer module of ``algo`` (``bigtwo.train.ppo`` or ``bigtwo.train.dmc``): its ``Acting``,
    ``targets``, ``update`` and settings (``SNAPSHOT_MODE``, ``STORE_SLACK``, ``SCORE_STD``)."""
    if algo not in ALGOS:
        raise ValueError(f"unknown algo {algo!r}; allowed: {', '.join(ALGOS)}")
    return importlib.import_module(f"{__package__}.{algo}")


def critic_size(cfg: TrainConfig, players: int) -> int:
    """Numbers of the global state the critic reads: ``state_size(players)`` with ``critic: global``,
    else 0 (the value reads the observation)."""
    return state_size(players) if cfg.critic == "global" else 0


def kept_state_size(cfg: TrainConfig, players: int) -> int:
    """Numbers of the global state each decision keeps: ``state_size(players)`` where the critic reads
    it or the hands head learns from it (``hands_coef``), else 0."""
    return state_size(players) if cfg.critic == "global" or cfg.hands_coef > 0 else 0


def make_scorer(cfg: TrainConfig, variant: Variant) -> ActionScorer:
    """The freshly initialised ``ActionScorer`` the config describes, for ``variant``'s observation
    and plays, its output layer scaled as ``cfg.algo``'s trainer wants (``SCORE_STD``), its passes in
    the config's ``precision``."""
    return ActionScorer(
        obs_size(variant.players),
        action_features(variant),
        cfg.hidden_size,
        cfg.state_layers,
        cfg.pair_size,
        cfg.pair_layers,
        score_std=trainer_module(cfg.algo).SCORE_STD,
        advice=cfg.advice,
        adviser=make_adviser(cfg.advice, variant),
        precision=cfg.precision,
        critic_size=critic_size(cfg, variant.players),
        hand_places=variant.players - 1 if cfg.hands_coef > 0 else 0,
        hand_after=cfg.hand_after,
    )


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
class Batch:
    """One rollout's finished decisions and where they come from (what a learner takes)."""

    decisions: Decisions
    steps: int
    """Environment steps the rollout played."""
    episodes: dict[str, Any]
    """The games that ended in it (``Episodes.results``)."""
    waiting: int
    """Decisions carried to the next rollout (unfinished)."""
    seconds: float
    """Wall time of the rollout, targets included."""
    actor: str = "local"
    """The actor that played it (``bigtwo.train.ray.gate``: a learner takes each actor's batches once, in order)."""
    seq: int = 0
    """The actor's rollout number: 1, 2, ... (0 for the trainer's own worker)."""
    version: int = 0
    """The weights version it acted with (the learner's update count when they were sent)."""
    extra: dict[str, float] = field(default_factory=dict)


class RolloutWorker:
    """A batch of matches, its league and store; see the module docstring.

    ``net`` is the network it acts with (the learner's own in ``bigtwo train``; a copy in a Ray
    actor). ``seed`` seeds the matches, the league and the acting generator; ``root`` is the run
    folder (league snapshots given by path are read from it)."""

    def __init__(
        self,
        cfg: TrainConfig,
        variant: Variant,
        net: ActionScorer,
        *,
        seed: int,
        num_envs: int,
        device: torch.device,
        root: str | Path,
        scale: float,
    ) -> None:
        self.cfg, self.variant, self.net, self.num_envs, self.scale = cfg, variant, net, num_envs, scale
        self.algo = trainer_module(cfg.algo)
        self.venv = VectorEnv(variant, num_envs=num_envs, seed=seed, copy=False)
        self.league = League(
            variant,
            num_envs,
            (cfg.league_self, cfg.league_past, cfg.league_baselines),
            cfg.baselines,
            cfg.max_snapshots,
            seed,
            snapshot_mode=self.algo.SNAPSHOT_MODE,
            device=str(device),
            root=root,
            per_rollout=cfg.snapshots_per_rollout,
        )
        players = variant.players
        slack = self.algo.STORE_SLACK
        # each decision's global state, for a critic that reads it or the hands head's targets
        self.state_size = kept_state_size(cfg, players)
        self.store = DecisionStore(
            num_envs,
            players,
            self.venv.obs_size,
            capacity=num_envs * (cfg.num_steps + slack * players),
            state_size=self.state_size,
        )
        self.episodes = Episodes(num_envs)
        self.acting = self.algo.Acting(net, cfg, seed, device)
        self.adviser = make_adviser(cfg.advice, variant)  # the adviser's choice goes with each decision
        self.view: View = view(self.venv)

    @property
    def generators(self) -> dict[str, Any]:
        """The acting's random generators by name (saved in checkpoints)."""
        return self.acting.generators

    def play(self, choose: Choose | None = None) -> float:
        """``num_steps`` vector steps, the learner's decisions recorded per (slot, seat) and those
        of a single legal play made without asking; returns the seconds it took."""
        t0 = time.time()
        choose = self.acting if choose is None else choose
        self.net.eval()
        league, store, v = self.league, self.store, self.view
        league.next_rollout()
        for _ in range(self.cfg.num_steps):
            learner = league.learner_rows(v.seat)
            rows = np.flatnonzero(learner & (v.counts > 1))  # a single legal play is no decision
            actions = v.legal[:, 0].astype(np.int64)  # that single play, where there is one
            if rows.size:
                obs, legal, counts = v.obs[rows], v.legal[rows], v.counts[rows]
                advised = None if self.adviser is None else self.adviser.picks(obs, legal, counts)
                # the global state of each deciding row, from its seat's view, where it is kept
                state = self.venv.engine.global_state()[rows] if self.state_size else None
                pick, logprob, value = choose(obs, legal, counts, advised, state)
                actions[rows] = legal[np.arange(rows.size), pick]
                store.record(rows, v.seat[rows], obs, legal, counts, pick, logprob, value, advised, state)
            for agent, opp_rows in league.opponent_groups(learner):
                # the engine's own arrays: act without the input checks (a twentieth of a rollout's time)
                actions[opp_rows] = agent.act_unchecked(v.obs[opp_rows], v.legal[opp_rows], v.counts[opp_rows])
            obs, rewards, ended, _, info = self.venv.step(actions)
            store.credit(rewards * self.scale, ended)  # each seat's payoff to its pending decision
            self.episodes.step(rewards, info["game_over"], info["winner"], league)
            league.draw(np.flatnonzero(ended))  # new matches: new opponents
            v = View(obs, info["seat"], info["legal_ids"], info["legal_counts"])
        self.view = v
        return time.time() - t0

    def collect(self) -> Batch:
        """A rollout (``play``), then the algorithm's targets; the finished decisions come out as a
        ``Batch`` and the unfinished ones wait in the store for the next rollout."""
        t0 = time.time()
        self.play()
        targets, finished = self.algo.targets(self.store, self.cfg)
        decisions = self.store.take(np.flatnonzero(finished), targets)
        self.store.compact(~finished)
        results = self.episodes.results()
        self.episodes.reset()
        steps = self.num_envs * self.cfg.num_steps
        return Batch(decisions, steps, results, self.store.size, time.time() - t0)

    def set_weights(self, state_dict: dict[str, torch.Tensor]) -> None:
        """Act with these weights from now on (the learner's, broadcast after each update)."""
        self.net.load_state_dict(state_dict)

    # ------------------------------------------------------------ checkpoints

    def state_dict(self) -> dict[str, Any]:
        """Matches, store, league, random generators (this process's torch one included) and the
        per-slot game lengths."""
        return {
            "env": env_state(self.venv),
            "store": self.store.state_dict(),
            "league": self.league.state_dict(),
            "rng": rng_state(**self.generators),
            "episode_length": self.episodes.length.copy(),
        }

    def load_state_dict(self, state: dict[str, Any], snapshots: dict[str, dict] | None = None) -> None:
        """Restore ``state_dict`` (tensors or arrays); ``snapshots``: league snapshot payloads by
        path, for a worker that cannot read the run folder (else the files are read)."""
        load_env_state(self.venv, tensors_to_arrays(state["env"]))
        self.store.load_state_dict(tensors_to_arrays(state["store"]))
        self.league.load_state_dict(state["league"], snapshots)
        load_rng_state(state["rng"], **self.generators)
        self.episodes.length[:] = np.asarray(tensors_to_arrays(state["episode_length"]))
        self.view = view(self.venv)


# ---------------------------------------------------------------- what the learner talks to


@dataclass(frozen=True)
class RolloutSetup:
    """What rollouts need of a run, handed to them by the learner (``bigtwo.train.loop.SelfPlay``)."""

    cfg: TrainConfig
    variant: Variant
    net: ActionScorer
    """The learner's network (``LocalRollouts`` acts with it; Ray actors act with copies of its weights)."""
    device: torch.device
    """The learner's device."""
    scale: float
    """The reward scale (``TrainConfig.resolved_reward_scale``)."""
    run_dir: Path
    """The run folder (league snapshots given by path are read from it)."""
    run_id: str
    """The run's id (Ray actors are named after it)."""
    say: Callable[[str], None] = print
    """Where a line for the user goes (under the progress bar)."""


class Rollouts(Protocol):
    """Where the learner's batches come from: ``LocalRollouts`` or ``bigtwo.train.ray.actors.RayRollouts``."""

    resume_flags: str
    """What ``bigtwo train --resume RUN_DIR`` needs besides to resume the run (``--ray ADDRESS``)."""

    def collect(self, net: torch.nn.Module, version: int) -> list[Batch]:
        """One rollout of every worker, acting with ``net``'s weights (version ``version``)."""
        ...

    def add_snapshot(self, step: int, path: str, payload: dict[str, Any]) -> None:
        """A league snapshot for every worker's league."""
        ...

    def state_dict(self) -> dict[str, Any]:
        """The workers' part of a checkpoint's resume state."""
        ...

    def load_state_dict(self, resume: dict[str, Any]) -> None:
        """Restore what ``state_dict`` saved (from a checkpoint's ``resume``)."""
        ...

    def scalars(self) -> dict[str, float]:
        """What to log about the workers (``charts/actors`` and the like)."""
        ...

    def close(self) -> None: ...


RolloutsFactory = Callable[[RolloutSetup], Rollouts]
"""What ``bigtwo.train.loop.train`` builds its rollouts with: ``LocalRollouts``, or a ``RayRollouts`` maker."""


class LocalRollouts:
    """One ``RolloutWorker`` in this process, acting with the learner's own network (``bigtwo train``).
    Its checkpoint layout is the resume keys ``env``, ``store``, ``league``, ``rng``, ``episode_length``."""

    resume_flags = ""

    def __init__(self, setup: RolloutSetup) -> None:
        cfg = setup.cfg
        self.worker = RolloutWorker(
            cfg,
            setup.variant,
            setup.net,
            seed=cfg.seed,
            num_envs=cfg.num_envs,
            device=setup.device,
            root=setup.run_dir,
            scale=setup.scale,
        )

    def collect(self, net: torch.nn.Module, version: int) -> list[Batch]:
        batch = self.worker.collect()
        batch.version = version
        return [batch]

    def add_snapshot(self, step: int, path: str, payload: dict[str, Any]) -> None:
        self.worker.league.add_snapshot(step, path)  # the file is at hand: read it like a resume would

    def state_dict(self) -> dict[str, Any]:
        return self.worker.state_dict()

    def load_state_dict(self, resume: dict[str, Any]) -> None:
        if "workers" in resume:
            raise ValueError(
                f"this checkpoint was written by a run on Ray ({len(resume['workers'])} rollout actors): "
                "resume it with --ray"
            )
        self.worker.load_state_dict(resume)

    def scalars(self) -> dict[str, float]:
        return {"charts/actors": 1.0}

    def close(self) -> None:
        pass
