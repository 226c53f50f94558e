"""Deep Monte-Carlo self-play (DouZero style): a Q network over (state, legal play) pairs.

Reads top to bottom like ``bigtwo.train.ppo``, which it mirrors: how a play is picked (``Acting``), the
Monte-Carlo targets (``targets``) and the regression epochs (``update``); the shared rest (set-up,
resume, the rollout, snapshots, evaluations, checkpoints, the final evaluation) is ``bigtwo.train.loop``
and ``bigtwo.train.rollout``, locally or on Ray actors alike.

- **Acting.** The learner scores each legal play of its decisions with ``Q(state, play)`` (the
  ``ActionScorer``'s scores: only legal plays are ever scored) and plays the best one, or with
  probability ``epsilon`` a uniformly random legal play. A single legal play is no decision and
  is not recorded.
- **Targets.** A decision's target is the return its seat gets from it to the end of the episode
  (undiscounted: the seat's game payoff, scaled by ``reward_scale``), or with ``dmc_lambda`` below 1
  the lambda-return, which mixes in the scores of the seat's later plays: the decisions of a seat
  are linked in the ``DecisionStore`` as for PPO, and only decisions whose episode has ended
  are trained on; the others wait in the store for later rollouts.
- **Loss.** Mean squared error between ``Q(state, played)`` and the target, computed on the
  played action alone (one scored pair per decision), ``dmc_epochs`` passes per batch.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from bigtwo.train.config import TrainConfig
from bigtwo.train.decisions import Decisions, DecisionStore, gae, mc_returns
from bigtwo.train.networks import ActionScorer, gradient_step

SNAPSHOT_MODE = "greedy"  # league snapshots play their best-scored play
STORE_SLACK = 16  # decisions per seat carried beyond num_steps per slot (waiting for their return)
SCORE_STD = 1.0  # initial scale of the scorer's output layer


class Acting:
    """The best-scored legal play, or with probability ``epsilon`` a uniformly random one."""

    def __init__(self, net: ActionScorer, cfg: TrainConfig, seed: int, device: torch.device) -> None:
        self.net, self.epsilon = net, cfg.epsilon  # acting is NumPy (play_scores): no device
        self.explore = np.random.default_rng([seed, 3])  # epsilon-greedy draws
        self.generators: dict[str, Any] = {"explore": self.explore}

    def __call__(
        self,
        obs: np.ndarray,
        legal: np.ndarray,
        counts: np.ndarray,
        advised: np.ndarray | None = None,
        state: np.ndarray | None = None,  # no global critic here (TrainConfig refuses it for dmc)
    ) -> tuple[np.ndarray, ...]:
        q = self.net.play_scores(obs, legal, counts, advised)  # no autograd, no value: the scores alone
        n = len(counts)
        pick = q.argmax(axis=1)
        random_pick = (self.explore.random(n) * counts).astype(np.int64)
        pick = np.where(self.explore.random(n) < self.epsilon, random_pick, pick)
        q_pick = q[np.arange(n), pick]
        return pick, np.zeros(n, np.float32), q_pick


def targets(store: DecisionStore, cfg: TrainConfig) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Each decision's target; which decisions have one: those whose episode has ended (the others wait).

    The target is the return to the episode's end, or with ``dmc_lambda`` below 1 the lambda-return
    ``G[d] = reward[d] + (1 - lambda) Q[next] + lambda G[next]`` over the seat's later decisions, ``Q[next]``
    the score the next decision's play had when it was made (``value`` in the store). Both wait for the
    episode's end, so the same decisions train either way."""
    n = store.size
    returns, finished = mc_returns(store.reward[:n], store.done[:n], store.next[:n])
    if cfg.dmc_lambda < 1.0:
        # GAE's returns with gamma 1 are the lambda-returns; on decisions whose episode has ended
        # every later link is known, so none is cut short
        _, returns, _ = gae(store.reward[:n], store.done[:n], store.next[:n], store.value[:n], 1.0, cfg.dmc_lambda)
    return {"returns": returns}, finished


def update(
    net: ActionScorer,
    optimizer: torch.optim.Optimizer,
    batch: Decisions,
    cfg: TrainConfig,
    shuffle: np.random.Generator,
    device: torch.device,
) -> dict[str, float]:
    """Regression of Q(state, played) on the return; returns the scalars to log."""
    returns = batch.targets["returns"]
    net.train()
    losses: list[float] = []
    q_means: list[float] = []
    for _epoch in range(cfg.dmc_epochs):
        order = shuffle.permutation(batch.size)
        for start in range(0, len(order), cfg.minibatch_size):
            idx = order[start : start + cfg.minibatch_size]
            played = batch.played(idx)[:, None]  # score the played pair only
            q, _ = net(
                torch.as_tensor(batch.obs[idx], device=device),
                torch.as_tensor(played, device=device),
                torch.ones(len(idx), dtype=torch.int64, device=device),
                torch.as_tensor(played_advice(batch, idx), device=device) if net.advice_size else None,
            )
            target = torch.as_tensor(returns[idx], device=device)
            loss = ((q.squeeze(1) - target) ** 2).mean()
            gradient_step(optimizer, loss, net, cfg.max_grad_norm)
            losses.append(loss.item())
            q_means.append(q.mean().item())

    scalars = {"charts/decisions_trained": float(batch.size)}
    if losses:
        scalars.update(
            {
                "losses/value": float(np.mean(losses)),
                "losses/q_mean": float(np.mean(q_means)),
                "losses/target_mean": float(returns.mean()),
            }
        )
    return scalars


def played_advice(batch: Decisions, idx: np.ndarray) -> np.ndarray:
    """The advised slot when only the played pair is scored: 0 where the play was the adviser's, else -1."""
    return np.where(batch.pick[idx] == batch.advised[idx], 0, -1).astype(np.int64)


def postfix(scalars: dict[str, float]) -> dict[str, str]:
    """What the progress bar shows of an update."""
    return {"loss": f"{scalars.get('losses/value', 0):.4f}"}
