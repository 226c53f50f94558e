"""Deep Monte-Carlo self-play (DouZero style): a Q network over (state, legal play) pairs.

Reads top to bottom like ``train.ppo``, which it mirrors: per update a rollout, Monte-Carlo
targets, regression epochs and logs; the shared rest (set-up, resume, the rollout loop,
snapshots, evaluations, checkpoints, the final evaluation) is ``train.loop.SelfPlay``.

- **Acting.** The learner scores each legal play of its decisions with ``Q(state, play)`` (the
  ``ActionScorer``'s scores: only legal plays are ever scored) and plays the best one, or with
  probability ``epsilon`` a uniformly random legal play. A single legal play is no decision and
  is not recorded.
- **Targets.** A decision's target is the return its seat gets from it to the end of the episode
  (undiscounted: the seat's game payoff, scaled by ``reward_scale``): the decisions of a seat
  are linked in the ``DecisionStore`` as for PPO, and only decisions whose episode has ended
  are trained on; the others wait in the store for later rollouts.
- **Loss.** Mean squared error between ``Q(state, played)`` and the target, computed on the
  played action alone (one scored pair per decision), ``dmc_epochs`` passes per batch.
"""

from __future__ import annotations

import time

import numpy as np
import torch

from .config import TrainConfig
from .loop import RunResult, SelfPlay
from .storage import mc_returns


def train(cfg: TrainConfig) -> RunResult:
    loop = SelfPlay(cfg, "dmc", snapshot_mode="greedy", store_slack=16, score_std=1.0)
    net, optimizer, store, device = loop.net, loop.optimizer, loop.store, loop.device
    explore = np.random.default_rng([cfg.seed, 3])  # epsilon-greedy draws
    loop.start(explore=explore)

    def choose(obs: np.ndarray, legal: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, ...]:
        """The best-scored legal play, or with probability ``epsilon`` a uniformly random one."""
        q, _ = net.score_arrays(obs, legal, counts)
        n = len(counts)
        pick = q.argmax(dim=1).cpu().numpy()
        random_pick = (explore.random(n) * counts).astype(np.int64)
        pick = np.where(explore.random(n) < cfg.epsilon, random_pick, pick)
        q_pick = q[torch.arange(n), torch.as_tensor(pick, device=device)].cpu().numpy()
        return pick, np.zeros(n, np.float32), q_pick

    while loop.running():
        loop.next_update()
        # 1. rollout: epsilon-greedy on Q over the legal plays; the learner's decisions recorded
        rollout_seconds = loop.rollout(choose)

        # 2. Monte-Carlo targets: each decision's return to its episode's end
        n = store.size
        returns, finished = mc_returns(store.reward[:n], store.done[:n], store.next[:n])
        train_idx = np.flatnonzero(finished)

        # 3. regression of Q(state, played) on the return
        t0 = time.time()
        net.train()
        losses: list[float] = []
        q_means: list[float] = []
        for _epoch in range(cfg.dmc_epochs):
            order = loop.shuffle.permutation(train_idx)
            for start in range(0, len(order), cfg.minibatch_size):
                idx = order[start : start + cfg.minibatch_size]
                played = store.played(idx)[:, None]  # score the played pair only
                q, _ = net(
                    torch.as_tensor(store.obs[idx], device=device),
                    torch.as_tensor(played, device=device),
                    torch.ones(len(idx), dtype=torch.int64, device=device),
                )
                target = torch.as_tensor(returns[idx], device=device)
                loss = ((q.squeeze(1) - target) ** 2).mean()
                optimizer.zero_grad()
                loss.backward()
                if cfg.max_grad_norm > 0:
                    torch.nn.utils.clip_grad_norm_(net.parameters(), cfg.max_grad_norm)
                optimizer.step()
                losses.append(loss.item())
                q_means.append(q.mean().item())
        store.compact(~finished)  # decisions of unfinished episodes wait for their return
        update_seconds = time.time() - t0

        # 4. logs, then snapshots, evaluation and checkpoints when due
        scalars = {
            "charts/decisions_trained": float(len(train_idx)),
            "charts/decisions_waiting": float(store.size),
        }
        if losses:
            scalars.update(
                {
                    "losses/value": float(np.mean(losses)),
                    "losses/q_mean": float(np.mean(q_means)),
                    "losses/target_mean": float(returns[train_idx].mean()),
                }
            )
        loop.end_update(scalars, rollout_seconds, update_seconds, {"loss": f"{scalars.get('losses/value', 0):.4f}"})

    return loop.finish()
