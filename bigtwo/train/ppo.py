"""PPO self-play on the vector env: one network for every seat, trained on each seat's own decisions.

Reads top to bottom, CleanRL style: how a play is picked (``Acting``), the advantages along each
seat's decisions (``targets``, run where the rollout ran) and the PPO epochs (``update``). What
every trainer shares (set-up, resume, the rollout, snapshots, evaluations, checkpoints, the final
evaluation) is ``bigtwo.train.loop``, and the rollout itself ``bigtwo.train.rollout.RolloutWorker``: the same
three functions run in ``bigtwo train`` and, spread over Ray actors, in ``bigtwo train --ray``.

- **Acting.** Each step, every slot's seat to act is either the learner (all seats in self-play
  slots; the learner's one seat against league opponents) or an opponent agent. The learner's
  rows go through the network in one batch: it scores only their legal plays
  (``bigtwo.train.networks``), the padding is ``-inf`` before the softmax, and a play is sampled.
- **Trajectories.** ``DecisionStore`` links each decision to the same seat's next decision in
  the same slot, and credits every seat the payoff it receives when its game ends (on whatever
  step that is). GAE runs along these per-seat chains: a decision's next value is its seat's
  next decision's value; the last decision of an episode (a match: SAME_STEP autoreset starts a
  new one in the step that ended it, and the chains are cut there) bootstraps from nothing.
  A decision whose seat has not acted again before the rollout ends is carried to the next
  rollout, where it finishes (the usual bootstrap from a rollout's last state, per seat).
- **Critic.** The value reads the seat's observation through the policy's encoder, or with
  ``critic: global`` a critic network of its own reads the global state (every hand) recorded with
  each decision (PerfectDou); the policy's scores never see it.
- **Loss.** Clipped surrogate + (clipped) value loss - entropy bonus, as in PPO2/CleanRL; with
  ``hands_coef`` > 0 plus that weight times the hands head's cross-entropy (``hand_loss``): from the
  policy's encoder of the seat's own observation, which other seat holds each card the seat has not
  seen, the answer read off the global state recorded with each decision.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import torch

from bigtwo.train.config import TrainConfig
from bigtwo.train.decisions import Decisions, DecisionStore, gae
from bigtwo.train.networks import ActionScorer, gradient_step, legal_mask, masked_log_softmax

SNAPSHOT_MODE = "sample"  # league snapshots sample from their policy, as the learner does
STORE_SLACK = 1  # decisions per seat carried beyond num_steps per slot
SCORE_STD = 0.01  # initial scale of the scorer's output layer


class Acting:
    """Sample a play from the softmax over the legal plays' scores (padding is -inf)."""

    def __init__(self, net: ActionScorer, cfg: TrainConfig, seed: int, device: torch.device) -> None:
        self.net = net
        self.sampler = torch.Generator(device=device).manual_seed(seed)  # the learner's action sampling
        self.generators: dict[str, Any] = {"sampler": self.sampler}

    def __call__(
        self,
        obs: np.ndarray,
        legal: np.ndarray,
        counts: np.ndarray,
        advised: np.ndarray | None = None,
        state: np.ndarray | None = None,
    ) -> tuple[np.ndarray, ...]:
        scores, value = self.net.score_arrays(obs, legal, counts, advised, state)
        logp_all = torch.log_softmax(scores, dim=1)  # padding is -inf: probability 0
        pick = torch.multinomial(logp_all.exp(), 1, generator=self.sampler)
        logp = logp_all.gather(1, pick).squeeze(1)
        return pick.squeeze(1).cpu().numpy(), logp.cpu().numpy(), value.cpu().numpy()


def targets(store: DecisionStore, cfg: TrainConfig) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Advantages and returns along each seat's decision chain (GAE); which decisions are finished."""
    n = store.size
    advantages, returns, finished = gae(
        store.reward[:n], store.done[:n], store.next[:n], store.value[:n], cfg.gamma, cfg.gae_lambda
    )
    return {"advantages": advantages, "returns": returns}, finished


def hand_loss(logits: torch.Tensor, state: torch.Tensor) -> tuple[torch.Tensor, float]:
    """The hands head's mean cross-entropy over the cards some other place holds, and how often its
    likeliest place is the holder. ``logits`` ``(B, 52, P-1)`` (``ActionScorer.hand_logits``: per card,
    a score per other place), ``state`` the decisions' global states from the deciding seat's view
    (place 0: that seat; the other places' ``hands``, numbers ``52..52 P``, are the target).

    >>> logits = torch.zeros(1, 52, 3); state = torch.zeros(1, 721); state[0, 52 + 5] = 1.0
    >>> loss, acc = hand_loss(logits, state)   # one card held by place 1, three places alike
    >>> round(loss.item(), 4), acc
    (1.0986, 1.0)
    """
    places = logits.shape[2]
    held = state[:, 52 : 52 * (places + 1)].reshape(len(state), places, 52).transpose(1, 2)  # (B, 52, P-1)
    known = held.sum(2) > 0  # (B, 52): cards another place holds (its own, played or undealt ones are not asked)
    logits = logits.float()
    # the log-sum-exp over the few places, place by place: torch's reductions over so short an axis are slow
    each = logits.unbind(2)
    top = functools.reduce(torch.maximum, each).detach()
    lse = top + torch.log(functools.reduce(torch.add, [torch.exp(x - top) for x in each]))
    picked = (logits * held).sum(2)  # the holder's score (0 where no other place holds the card)
    with torch.no_grad():  # right: the holder is the first place of the highest score (argmax's choice)
        first = torch.zeros_like(known)
        right = torch.zeros_like(known)
        held_by = held.unbind(2)
        for x, h in zip(each, held_by, strict=True):
            here = (x == top) & ~first
            right |= here & (h > 0)
            first |= here
        right = right[known]
        accuracy = float(right.float().mean()) if right.numel() else 0.0
    return (lse - picked)[known].sum() / known.sum().clamp(min=1), accuracy


def update(
    net: ActionScorer,
    optimizer: torch.optim.Optimizer,
    batch: Decisions,
    cfg: TrainConfig,
    shuffle: np.random.Generator,
    device: torch.device,
) -> dict[str, float]:
    """PPO epochs over the finished decisions; returns the scalars to log."""
    advantages, returns = batch.targets["advantages"], batch.targets["returns"]
    net.train()
    names = ("policy", "value", "entropy", "approx_kl", "clipfrac", "hands", "hands_accuracy")
    stats: dict[str, list[float]] = {k: [] for k in names}
    for _epoch in range(cfg.update_epochs):
        order = shuffle.permutation(batch.size)
        for start in range(0, len(order), cfg.minibatch_size):
            idx = order[start : start + cfg.minibatch_size]
            b = batch.batch(idx)
            counts = torch.as_tensor(b["counts"].astype(np.int64), device=device)
            hands = cfg.hands_coef > 0 and net.hand_places > 0
            scores, new_value, hand_logits = net.forward_hands(
                torch.as_tensor(b["obs"], device=device),
                torch.as_tensor(b["legal"].astype(np.int64), device=device),
                counts,
                torch.as_tensor(b["advised"], device=device) if net.advice_size else None,
                torch.as_tensor(b["state"], device=device) if net.critic_size else None,
                hands=hands,
            )
            valid = legal_mask(counts, scores.shape[1])
            logp_all = masked_log_softmax(scores, valid)
            pick = torch.as_tensor(b["pick"].astype(np.int64), device=device)
            new_logp = logp_all.gather(1, pick[:, None]).squeeze(1)
            entropy = -(logp_all.exp() * logp_all).sum(1)
            log_ratio = new_logp - torch.as_tensor(b["logprob"], device=device)
            ratio = log_ratio.exp()
            with torch.no_grad():
                stats["approx_kl"].append(((ratio - 1) - log_ratio).mean().item())
                stats["clipfrac"].append(((ratio - 1.0).abs() > cfg.clip_coef).float().mean().item())

            mb_adv = torch.as_tensor(advantages[idx], device=device)
            if cfg.norm_adv and len(idx) > 1:
                mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
            pg_loss = torch.max(
                -mb_adv * ratio, -mb_adv * torch.clamp(ratio, 1 - cfg.clip_coef, 1 + cfg.clip_coef)
            ).mean()

            mb_ret = torch.as_tensor(returns[idx], device=device)
            old_value = torch.as_tensor(b["value"], device=device)
            if cfg.clip_vloss:
                clipped = old_value + torch.clamp(new_value - old_value, -cfg.clip_coef, cfg.clip_coef)
                v_loss = 0.5 * torch.max((new_value - mb_ret) ** 2, (clipped - mb_ret) ** 2).mean()
            else:
                v_loss = 0.5 * ((new_value - mb_ret) ** 2).mean()
            ent = entropy.mean()
            loss = pg_loss - cfg.ent_coef * ent + cfg.vf_coef * v_loss
            if hand_logits is not None:
                h_loss, h_acc = hand_loss(hand_logits, torch.as_tensor(b["state"], device=device))
                loss = loss + cfg.hands_coef * h_loss
                stats["hands"].append(h_loss.item())
                stats["hands_accuracy"].append(h_acc)

            gradient_step(optimizer, loss, net, cfg.max_grad_norm)
            stats["policy"].append(pg_loss.item())
            stats["value"].append(v_loss.item())
            stats["entropy"].append(ent.item())
        if cfg.target_kl > 0 and stats["approx_kl"] and np.mean(stats["approx_kl"][-4:]) > cfg.target_kl:
            break

    scalars = {f"losses/{k}": float(np.mean(x)) for k, x in stats.items() if x}
    scalars["charts/decisions_trained"] = float(batch.size)
    scalars["losses/explained_variance"] = explained_variance(returns - advantages, returns)
    return scalars


def postfix(scalars: dict[str, float]) -> dict[str, str]:
    """What the progress bar shows of an update."""
    return {"kl": f"{scalars.get('losses/approx_kl', 0):.4f}"}


def explained_variance(y_pred: np.ndarray, y_true: np.ndarray) -> float:
    """1 - Var(y_true - y_pred) / Var(y_true) (nan when y_true is constant or empty)."""
    var = np.var(y_true) if y_true.size else 0.0
    return float("nan") if var == 0 else float(1 - np.var(y_true - y_pred) / var)
