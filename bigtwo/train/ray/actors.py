"""Rollout actors on Ray: ``bigtwo train --ray local|auto|ADDRESS`` with the same config as locally.

One learner (this process: the network, Adam, the run folder, TensorBoard, checkpoints and
evaluations; on its GPU when ``device: auto`` finds one) is fed by ``ray_actors`` Ray actors. Each
actor (``RolloutActor``, ``ray_actor_cpus`` CPUs) owns a ``bigtwo.train.rollout.RolloutWorker``: its share
of the ``num_envs`` matches (split evenly), their league (past snapshots and baseline agents
play inside the actor), its decision store and a CPU copy of the network. The rollout and the
update are the very functions ``bigtwo train`` runs (``bigtwo.train.rollout``, ``bigtwo.train.ppo`` /
``bigtwo.train.dmc``); only where the rollout runs differs.

**An update.** The learner puts its weights in Ray's object store once (the broadcast) and asks
every actor for one rollout with them; each actor loads the weights, plays ``num_steps`` steps,
computes its decisions' targets and returns its finished decisions as one ``Batch`` tagged with
its id, rollout number and the weights version. The learner takes the batches that pass the
``bigtwo.train.ray.gate.BatchGate`` (each live actor's next batch, of the weights just sent), joins them in
actor order and runs the update. Rollouts and updates alternate: ``charts/learner_utilisation``
is the learner's share of the wall time, ``charts/actors`` the live actors,
``charts/sps`` env-steps per second; the progress bar shows all three.

**Faults.** An actor that dies (its node lost, ``ray.kill``, a crash) fails its call; it is
replaced at once by a fresh actor in its place (a new id: ``<slot>.<incarnation>``, a new seed, new
matches, the league's current snapshots) and training goes on with the batches of the others;
its half-played matches and unfinished decisions are lost, and nothing it sent is taken after it
is replaced. League snapshots travel to the actors as dicts, so actors on other machines need no
shared folder. A checkpoint holds every actor's state (matches, store, league, generators) under
``resume.workers``; killing the driver (which ends its actors) and resuming the run restarts the
actors from the newest checkpoint: only the steps since it are lost. A run's checkpoints resume
with ``--ray`` and the same ``ray_actors`` (a local run's resume without it).

Actor names are ``bigtwo-rollout-<run id>-<slot>.<incarnation>`` (``ray list actors`` shows them).
"""

from __future__ import annotations

import contextlib
import io
import sys
from typing import Any

import numpy as np
import ray
import torch
from ray.exceptions import RayActorError

from bigtwo.env.rules.variant import load_variant
from bigtwo.train import checkpoint as ckpt
from bigtwo.train.config import make_config
from bigtwo.train.ray.gate import BatchGate
from bigtwo.train.rollout import Batch, RolloutSetup, RolloutWorker, make_scorer


def actor_seed(seed: int, slot: int, incarnation: int) -> int:
    """The seed of the actor in ``slot`` (its ``incarnation``-th, from 0): distinct for every actor."""
    return int(np.random.SeedSequence([int(seed), 0x5A7, slot, incarnation]).generate_state(1)[0])


def pack(obj: Any) -> bytes:
    """``obj`` (a resume state, snapshot dicts) as ``torch.save`` bytes: Ray's own pickling of torch
    tensors fails on some dtypes (``uint64``, which the engine's state holds), ``torch.save`` does not."""
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    return buffer.getvalue()


def unpack(data: bytes) -> Any:
    """What ``pack`` packed (tensors and plain values only: ``weights_only``)."""
    return torch.load(io.BytesIO(data), weights_only=True)


def split(num_envs: int, actors: int) -> list[int]:
    """``num_envs`` matches split as evenly as possible between ``actors``, the larger shares first.

    >>> split(512, 3)
    [171, 171, 170]
    """
    return [len(part) for part in np.array_split(np.arange(num_envs), actors)]


class RolloutActor:
    """A ``RolloutWorker`` in a Ray actor; built from the run's config dict (see the module docstring)."""

    def __init__(
        self,
        config: dict[str, Any],
        actor_id: str,
        seed: int,
        num_envs: int,
        root: str,
        scale: float,
        snapshots: bytes,
        state: bytes | None = None,
    ) -> None:
        """``snapshots``: the league's ``(step, path, payload)`` list, and ``state``: a resume state, both ``pack``ed."""
        cfg = make_config(config, source="the learner's config")
        torch.set_num_threads(max(1, int(cfg.ray_actor_cpus)))
        variant = load_variant(cfg.variant, **cfg.variant_settings)
        net = make_scorer(cfg, variant)
        self.worker = RolloutWorker(
            cfg, variant, net, seed=seed, num_envs=num_envs, device=torch.device("cpu"), root=root, scale=scale
        )
        self.id, self.seq = actor_id, 0
        league = unpack(snapshots)
        self.payloads = {path: payload for _, path, payload in league}
        if state is not None:
            self.worker.load_state_dict(unpack(state), self.payloads)
        else:
            for step, path, payload in league:
                self.worker.league.add_snapshot(step, path, payload)

    def collect(self, weights: dict[str, torch.Tensor], version: int) -> Batch:
        """One rollout acting with ``weights`` (version ``version``), tagged with this actor's id and number."""
        self.worker.set_weights(weights)
        self.seq += 1
        batch = self.worker.collect()
        batch.actor, batch.seq, batch.version = self.id, self.seq, version
        return batch

    def add_snapshot(self, step: int, path: str, payload: dict[str, Any]) -> None:
        """A league snapshot (its checkpoint dict), for this actor's league."""
        self.payloads[path] = payload
        self.worker.league.add_snapshot(step, path, payload)
        kept = {p for _, p, _ in self.worker.league.snapshots}
        self.payloads = {p: v for p, v in self.payloads.items() if p in kept}

    def state_dict(self) -> dict[str, Any]:
        return self.worker.state_dict()


class RayRollouts:
    """The rollout actors of a run, their faults and their checkpoint state (``bigtwo.train.rollout.Rollouts``),
    built from the learner's ``RolloutSetup``."""

    def __init__(self, setup: RolloutSetup, address: str = "local") -> None:
        cfg = self.cfg = setup.cfg
        self.setup = setup
        have = ray.cluster_resources().get("CPU", 0.0)
        need = cfg.ray_actors * cfg.ray_actor_cpus
        if need > have:
            raise ValueError(
                f"ray_actors {cfg.ray_actors} x ray_actor_cpus {cfg.ray_actor_cpus:g} needs {need:g} CPUs, "
                f"but the Ray cluster has {have:g}; lower either field (--set ray_actors=N) or add nodes"
            )
        self.sizes = split(cfg.num_envs, cfg.ray_actors)
        self.actor_class = ray.remote(num_cpus=cfg.ray_actor_cpus, max_restarts=0)(RolloutActor)
        self.gate = BatchGate()
        self.actors: list[Any] = [None] * cfg.ray_actors
        self.ids: list[str] = [""] * cfg.ray_actors
        self.incarnation = [0] * cfg.ray_actors
        self.pending: list[dict[str, Any] | None] = [None] * cfg.ray_actors  # states to resume from
        self.snapshots: list[tuple[int, str, dict[str, Any]]] = []  # the league's, newest max_snapshots
        self.replaced = 0
        self.resume_flags = f" --ray {address}"  # what the final report's resume line adds

    # ------------------------------------------------------------ actors

    def _spawn(self, slot: int) -> Any:
        """Start the actor of ``slot`` (from its pending resume state, else afresh)."""
        setup, inc = self.setup, self.incarnation[slot]
        actor_id = f"{slot}.{inc}"
        handle = self.actor_class.options(name=f"bigtwo-rollout-{setup.run_id}-{actor_id}").remote(
            self.cfg.to_dict(),
            actor_id,
            actor_seed(self.cfg.seed, slot, inc),
            self.sizes[slot],
            str(setup.run_dir),
            setup.scale,
            pack([list(s) for s in self.snapshots]),
            None if self.pending[slot] is None else pack(self.pending[slot]),
        )
        self.pending[slot] = None
        self.actors[slot], self.ids[slot] = handle, actor_id
        self.gate.open(actor_id)
        return handle

    def _actor(self, slot: int) -> Any:
        return self.actors[slot] if self.actors[slot] is not None else self._spawn(slot)

    def _replace(self, slot: int, exc: BaseException) -> None:
        """The actor of ``slot`` died: nothing more is taken from it; a fresh one takes its place."""
        old = self.ids[slot]
        if isinstance(exc, RayActorError) and exc.actor_init_failed:  # our error, not a fault: say it
            raise RuntimeError(f"rollout actor {old} could not start: {exc}") from exc
        self.gate.close(old)
        with contextlib.suppress(Exception):  # already gone
            ray.kill(self.actors[slot], no_restart=True)
        self.incarnation[slot] += 1
        self.replaced += 1
        self.actors[slot] = None
        self._spawn(slot)
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        self.setup.say(
            f"rollout actor {old} died ({reason[:160]}); replaced by {self.ids[slot]}, its matches start afresh"
        )

    # ------------------------------------------------------------ the loop's calls

    def collect(self, net: torch.nn.Module, version: int) -> list[Batch]:
        weights = ray.put({k: v.detach().cpu() for k, v in net.state_dict().items()})  # the broadcast
        while True:
            calls = [self._actor(slot).collect.remote(weights, version) for slot in range(len(self.actors))]
            batches = []
            for slot, call in enumerate(calls):
                try:
                    batch = ray.get(call)
                except RayActorError as exc:
                    self._replace(slot, exc)
                    continue
                ok, why = self.gate.accept(batch, version)
                if ok:
                    batches.append(batch)
                else:
                    print(f"refused a rollout batch: {why}", file=sys.stderr)
            if batches:
                return batches

    def add_snapshot(self, step: int, path: str, payload: dict[str, Any]) -> None:
        if self.cfg.max_snapshots <= 0:
            return
        self.snapshots = [*self.snapshots, (step, path, payload)][-self.cfg.max_snapshots :]
        ref = ray.put(payload)
        calls = [(slot, self._actor(slot).add_snapshot.remote(step, path, ref)) for slot in range(len(self.actors))]
        for slot, call in calls:
            try:
                ray.get(call)
            except RayActorError as exc:
                self._replace(slot, exc)  # the new actor starts with the snapshots, this one included

    def state_dict(self) -> dict[str, Any]:
        states = []
        for slot in range(len(self.actors)):
            while True:
                try:
                    state = ray.get(self._actor(slot).state_dict.remote())
                    break
                except RayActorError as exc:
                    self._replace(slot, exc)
            states.append({**state, "incarnation": self.incarnation[slot]})
        return {"workers": states}

    def load_state_dict(self, resume: dict[str, Any]) -> None:
        workers = resume.get("workers")
        if workers is None:
            raise ValueError("this checkpoint was written by a run without Ray: resume it without --ray")
        if len(workers) != len(self.actors):
            raise ValueError(
                f"this checkpoint holds {len(workers)} rollout actors, the config asks for {len(self.actors)}: "
                f"resume it with --set ray_actors={len(workers)}"
            )
        saved = workers[0]["league"]["snapshots"]
        self.snapshots = [(int(s["step"]), s["path"], ckpt.load(self.setup.run_dir / s["path"])) for s in saved]
        for slot, state in enumerate(workers):
            self.incarnation[slot] = int(state["incarnation"])
            self.pending[slot] = state

    def scalars(self) -> dict[str, float]:
        return {
            "charts/actors": float(sum(a is not None for a in self.actors)),
            "charts/actors_replaced": float(self.replaced),
            "charts/batches_rejected": float(self.gate.rejected),
        }

    def close(self) -> None:
        for slot, actor in enumerate(self.actors):
            if actor is not None:
                with contextlib.suppress(Exception):  # already gone
                    ray.kill(actor, no_restart=True)
                self.actors[slot] = None
