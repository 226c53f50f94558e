"""Warm start by imitation: before self-play, the network learns a teacher agent's plays.

A network that starts from random weights spends its first millions of steps learning what any
hand-written agent already knows (lead low singles, keep the 2s, break no pair needlessly).
With ``imitate: heuristic:weights=cards`` a run first watches the teacher play
``imitate_decisions`` decisions against itself (every seat the teacher, on the vector env the
rollouts use), then trains the network on them for ``imitate_epochs`` passes:

- **PPO**: cross-entropy of the scores (a softmax over each decision's legal plays) towards the
  teacher's play, plus ``vf_coef`` times the value's squared error towards the decision's
  Monte-Carlo return (the seat's game payoff, scaled as in training). The policy starts as the
  teacher and the critic as the teacher's value, so the first PPO updates refine a sensible
  policy instead of a random one.
- **DMC**: Deep Monte-Carlo's own regression of Q(state, teacher's play) on that return.

Then reinforcement learning goes on as usual from those weights (the optimizer's state is
reset, so the warm start's step sizes do not carry over). A resumed run never imitates again:
the checkpoint already holds the warm-started weights. The teacher's decisions cost CPU time
(the heuristic takes ~20 us a decision), not environment steps of the run; the run logs them as
``imitation/*`` and prints one line with the decisions, the accuracy and the seconds.

>>> import torch
>>> from bigtwo.env import load_variant
>>> from bigtwo.train.config import TrainConfig
>>> from bigtwo.train.rollout import make_scorer
>>> cfg = TrainConfig(num_envs=32, imitate="greedy", imitate_decisions=600, imitate_epochs=2, minibatch_size=256)
>>> variant = load_variant("taiwan")
>>> net = make_scorer(cfg, variant)
>>> data = teacher_decisions(cfg, variant, scale=0.1, seed=3)
>>> data.size >= 600
True
>>> scalars = imitate(net, data, cfg, lr=3e-3, seed=3, device=torch.device("cpu"))
>>> 0.0 <= scalars["imitation/accuracy"] <= 1.0
True
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np
import torch

from bigtwo.agents import make_agent
from bigtwo.agents.base import Agent
from bigtwo.env.rules.variant import Variant
from bigtwo.train.config import TrainConfig
from bigtwo.train.decisions import Decisions, mc_returns
from bigtwo.train.dmc import played_advice
from bigtwo.train.networks import ActionScorer, gradient_step, legal_mask, masked_log_softmax
from bigtwo.train.rollout import RolloutWorker


def teacher_decisions(
    cfg: TrainConfig,
    variant: Variant,
    scale: float,
    seed: int,
    teacher: Agent | None = None,
    decisions: int | None = None,
) -> Decisions:
    """At least ``decisions`` (default ``cfg.imitate_decisions``) finished decisions of ``teacher``
    (default: the agent ``cfg.imitate`` names) playing every seat (``cfg.num_envs`` matches at once),
    each with its return (``targets["returns"]``: the seat's scaled payoffs to the end of its match);
    ``pick`` is the teacher's play in each legal list."""
    if teacher is None:
        teacher = make_agent(cfg.imitate, variant, seed=seed)
    wanted = cfg.imitate_decisions if decisions is None else decisions
    self_play = dataclasses.replace(cfg, league_self=1.0, league_past=0.0, league_baselines=0.0, num_steps=64)
    net = torch.nn.Identity()  # never called: the teacher picks every play
    worker = RolloutWorker(
        self_play,
        variant,
        net,  # type: ignore[arg-type]
        seed=seed,
        num_envs=cfg.num_envs,
        device=torch.device("cpu"),
        root=".",
        scale=scale,
    )

    def choose(
        obs: np.ndarray, legal: np.ndarray, counts: np.ndarray, advised: np.ndarray | None, state: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        action = np.asarray(teacher.act(obs, legal, counts))
        pick = np.argmax(legal == action[:, None], axis=1)
        zeros = np.zeros(len(counts), np.float32)
        return pick, zeros, zeros

    parts: list[Decisions] = []
    total = 0
    while total < wanted:
        worker.play(choose)
        store = worker.store
        n = store.size
        returns, finished = mc_returns(store.reward[:n], store.done[:n], store.next[:n])
        idx = np.flatnonzero(finished)
        parts.append(store.take(idx, {"returns": returns}))
        store.compact(~finished)
        total += idx.size
    return Decisions.concat(parts)


def imitate(
    net: ActionScorer,
    data: Decisions,
    cfg: TrainConfig,
    lr: float,
    seed: int,
    device: torch.device,
    value_reads_policy: bool = True,
) -> dict[str, float]:
    """Train ``net`` on the teacher's decisions ``data`` for ``cfg.imitate_epochs`` passes (its own
    Adam at ``lr``); returns the last pass's ``imitation/*`` scalars (loss, value loss, accuracy:
    how often the network's best-scored play is the teacher's). ``value_reads_policy=False`` (PPO):
    the value loss trains the value head alone, on the encoder's output taken as given, so that a
    trained policy is moved only by the teacher's plays (a new value target would otherwise pull
    the shared encoder; expert iteration on a trained network)."""
    optimizer = torch.optim.Adam(net.parameters(), lr=lr, eps=cfg.adam_eps)
    shuffle = np.random.default_rng([seed, 5])
    returns = data.targets["returns"]
    dmc = cfg.algo == "dmc"
    net.train()
    stats: dict[str, list[float]] = {}
    for _epoch in range(cfg.imitate_epochs):
        stats = {"loss": [], "value": [], "accuracy": []}
        order = shuffle.permutation(data.size)
        for start in range(0, len(order), cfg.minibatch_size):
            idx = order[start : start + cfg.minibatch_size]
            target = torch.as_tensor(returns[idx], device=device)
            pick = torch.as_tensor(data.pick[idx].astype(np.int64), device=device)
            obs = torch.as_tensor(data.obs[idx], device=device)
            if dmc:  # Deep Monte-Carlo: Q(state, teacher's play) towards its return
                played = torch.as_tensor(data.played(idx)[:, None], device=device)
                advice = torch.as_tensor(played_advice(data, idx), device=device) if net.advice_size else None
                q, _ = net(obs, played, torch.ones(len(idx), dtype=torch.int64, device=device), advice)
                value_loss = ((q.squeeze(1) - target) ** 2).mean()
                loss = value_loss
                accuracy = float("nan")
            else:  # PPO: the policy towards the teacher's play, the critic towards the return
                b = data.batch(idx)
                counts = torch.as_tensor(b["counts"].astype(np.int64), device=device)
                advice = torch.as_tensor(b["advised"], device=device) if net.advice_size else None
                scores, value = net(obs, torch.as_tensor(b["legal"].astype(np.int64), device=device), counts, advice)
                if not value_reads_policy:
                    value = net.value(net.state_encoder(obs).detach()).squeeze(-1)
                logp = masked_log_softmax(scores, legal_mask(counts, scores.shape[1]))
                policy_loss = -logp.gather(1, pick[:, None]).mean()
                value_loss = 0.5 * ((value - target) ** 2).mean()
                loss = policy_loss + cfg.vf_coef * value_loss
                accuracy = (scores.argmax(1) == pick).float().mean().item()
            gradient_step(optimizer, loss, net, cfg.max_grad_norm)
            stats["loss"].append(loss.item())
            stats["value"].append(value_loss.item())
            stats["accuracy"].append(accuracy)
    out = {f"imitation/{k}": float(np.mean(v)) for k, v in stats.items() if v}
    out["imitation/decisions"] = float(data.size)
    return out


def warm_start(
    net: ActionScorer, cfg: TrainConfig, variant: Variant, scale: float, device: torch.device
) -> dict[str, float]:
    """``teacher_decisions`` then ``imitate`` (at ``cfg.lr``, seeded from ``cfg.seed``); the
    scalars include ``imitation/seconds``."""
    t0 = time.time()
    data = teacher_decisions(cfg, variant, scale, seed=cfg.seed + 30_000)
    scalars = imitate(net, data, cfg, lr=cfg.lr, seed=cfg.seed, device=device)
    scalars["imitation/seconds"] = time.time() - t0
    return scalars
