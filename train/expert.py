"""Expert iteration: the search teaches the network it searches with, round after round.

With ``expert: lookahead:...`` and ``expert_rounds: N`` a run, before its self-play steps, plays
``N`` rounds (AlphaZero's and ExIt's loop, with ``bigtwo.agents.lookahead`` as the expert):

1. **Play.** The teacher is the ``expert`` search (a ``lookahead`` spec without ``network``:
   ``lookahead:samples=16,trust=1``) searching with a copy of the network as trained so far. It
   plays every seat of ``num_envs`` matches (the warm start's self-play:
   ``bigtwo.train.imitation.teacher_decisions``) until ``expert_decisions`` decisions are finished.
2. **Learn.** The network learns them for ``imitate_epochs`` passes at ``expert_lr``
   (``bigtwo.train.imitation.imitate``): its scores towards the search's play (cross-entropy over
   the legal plays) and its value head towards the game's payoff (scaled as in training), so the
   next round searches with a better prior and a value trained on the search's own games. The
   value loss trains the value head alone (``value_reads_policy=False``): measured, letting it
   reach the shared encoder too lost the network 0.8 a game against its own start after one
   hong-kong round (the new value target pulled the policy's features along).
3. **Checkpoint.** The round is counted in the checkpoint (``resume["expert_round"]``): a resumed
   run goes on with the next round, never plays one twice. Each round's network is also kept as
   ``expert/round_NNN.pt`` in the run folder (a checkpoint any agent loader takes) and, with
   ``eval_deals``, measured against ``eval_opponents`` (``eval/*`` at x = the round): the curve
   over rounds.

The rounds' decisions cost CPU time, not environment steps; each round logs ``expert/*`` (the
search's plays the network matched before learning them, its accuracy after, the decisions and
the seconds) at step 0 and says one line; ``expert/matched_after`` is the same agreement measured
again after learning (``agreement``, the network in eval mode on the round's decisions). ``init_from: shipped`` (or a file) starts the network
from trained weights instead of random ones: expert iteration improves a network, it does not
need to start from nothing.
"""

from __future__ import annotations

import copy
import time
from typing import Any

import numpy as np
import torch

from bigtwo.agents.lookahead import LookaheadAgent
from bigtwo.agents.registry import AGENT_SPECS, LOOKAHEAD, split_spec
from bigtwo.env.rules.variant import Variant
from bigtwo.train.config import TrainConfig
from bigtwo.train.imitation import imitate, teacher_decisions
from bigtwo.train.networks import ActionScorer
from bigtwo.train.policy_agent import PolicyAgent


def expert_options(spec: str) -> dict[str, Any]:
    """The search options of the ``expert`` field's ``lookahead`` spec, checked against its
    declaration; ``ValueError`` for another agent or for a network option (the run's network is
    the one searched).

    >>> expert_options("lookahead:samples=8,trust=1")
    {'samples': 8, 'trust': 1}
    >>> expert_options("strong")
    Traceback (most recent call last):
    ...
    ValueError: field 'expert' has bad value 'strong': the expert is a lookahead search (e.g. lookahead:samples=16,trust=1)
    """
    name, options = split_spec(spec)
    if name != LOOKAHEAD:
        raise ValueError(
            f"field 'expert' has bad value {spec!r}: the expert is a {LOOKAHEAD} search (e.g. {LOOKAHEAD}:samples=16,trust=1)"
        )
    decl = AGENT_SPECS[LOOKAHEAD]
    try:
        checked = decl.check_options(options)
    except ValueError as exc:
        raise ValueError(f"field 'expert' has bad value {spec!r}: {exc}") from None
    other = sorted(k for k in checked if decl.option(k).part != "search")
    if other:
        searched = ", ".join(o.name for o in decl.options if o.part == "search")
        raise ValueError(
            f"field 'expert' has bad value {spec!r}: {', '.join(other)} is not a search option (the run's own "
            f"network is searched); allowed: {searched}"
        )
    return checked


def expert_round(
    net: ActionScorer, cfg: TrainConfig, variant: Variant, scale: float, device: torch.device, round_index: int
) -> dict[str, float]:
    """One round (see the module docstring) on ``net``, in place; returns its ``expert/*`` scalars."""
    t0 = time.time()
    seed = cfg.seed + 40_000 + round_index
    policy = PolicyAgent(variant, copy.deepcopy(net).cpu().eval(), seed=seed, device="cpu")
    policy.value_scale = scale
    policy.scores_threads = 1
    teacher = LookaheadAgent(variant, policy, seed=seed, **expert_options(cfg.expert))
    data = teacher_decisions(cfg, variant, scale, seed=seed, teacher=teacher, decisions=cfg.expert_decisions)
    before = agreement(net, data, device)
    scalars = imitate(net, data, cfg, lr=cfg.expert_lr, seed=seed, device=device, value_reads_policy=False)
    out = {f"expert/{k.split('/', 1)[1]}": v for k, v in scalars.items()}
    out["expert/matched_before"] = before
    out["expert/matched_after"] = agreement(net, data, device)
    out["expert/round"] = float(round_index + 1)
    out["expert/seconds"] = time.time() - t0
    return out


@torch.no_grad()
def agreement(net: ActionScorer, data: Any, device: torch.device, batch: int = 4096) -> float:
    """How often ``net``'s best-scored play is the teacher's in ``data`` (before it learns them)."""
    net.eval()
    hits = 0
    for start in range(0, data.size, batch):
        idx = np.arange(start, min(start + batch, data.size))
        b = data.batch(idx)
        counts = torch.as_tensor(b["counts"].astype(np.int64), device=device)
        advice = torch.as_tensor(b["advised"], device=device) if net.advice_size else None
        obs = torch.as_tensor(data.obs[idx], device=device)
        scores, _ = net(obs, torch.as_tensor(b["legal"].astype(np.int64), device=device), counts, advice)
        hits += int((scores.argmax(1).cpu().numpy() == data.pick[idx]).sum())
    return hits / max(data.size, 1)
