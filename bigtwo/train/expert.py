"""Expert iteration: the search teaches the network it searches with, round after round.

With ``expert: lookahead:...`` and ``expert_rounds: N`` a run, before its self-play steps, plays
``N`` rounds (AlphaZero's and ExIt's loop, with ``bigtwo.agents.lookahead`` as the expert):

1. **Play.** The teacher is the ``expert`` search (a ``lookahead`` spec without ``network``:
   ``lookahead:samples=48,trust=1``) searching with a copy of the network as trained so far, its
   guesses of the hidden hands dealt at random or by the belief its ``belief`` option names
   (``expert_belief``: a file, or ``shipped``, the belief ``strong`` deals by). It
   plays every seat of ``num_envs`` matches at once (``search_decisions``) until
   ``expert_decisions`` decisions are finished, and each decision keeps what the search found
   (``LookaheadAgent.last_search``): the candidates, their mean values and paired z against the
   favourite (the network's own best play), and the seat's return. The decisions are kept in the
   run folder (``expert/round_NNN.decisions.npz``, with a key of the network's weights, the search,
   the seed and the count): a round stopped after its play, or a new run given a copy of the file
   (``RUN/expert/round_001.decisions.npz``) to relearn it with other learning fields, learns from
   them without playing again (equal keys, equal decisions).
2. **Learn.** The network learns them for ``imitate_epochs`` passes at ``expert_lr`` (``learn``):
   its scores (cross-entropy over the legal plays) towards ``expert_target``: ``play``, the best
   candidate that beats the favourite by more than ``expert_trust`` paired standard errors (the
   favourite when none does: the search's own play at its own ``trust``; a higher bar teaches
   only the overrulings the guesses agree on); or ``search``, the network's own probabilities with
   the candidates' mass shared by a softmax of their z (``search_targets``). Its value head learns
   the returns (scaled as in training) on the encoder's output taken as given: measured, letting
   the value loss reach the shared encoder lost the network 0.8 a game against its own start after
   one hong-kong round (the new value target pulled the policy's features along).
3. **Checkpoint.** The round is counted in the checkpoint (``resume["expert_round"]``): a resumed
   run goes on with the next round, never plays one twice. Each round's network is also kept as
   ``expert/round_NNN.pt`` in the run folder (a checkpoint any agent loader takes) and, with
   ``eval_deals``, measured against ``eval_opponents`` (``eval/*`` at x = the round): the curve
   over rounds.

The rounds' decisions cost CPU time, not environment steps; each round logs ``expert/*`` (the
search's plays the network matched before learning them and after, ``agreement``; the rows
searched and overruled; the loss and accuracy of the last pass; the decisions and the seconds)
at x = the round and says one line. ``init_from: shipped`` (or a file) starts the network
from trained weights instead of random ones: expert iteration improves a network, it does not
need to start from nothing.
"""

from __future__ import annotations

import copy
import dataclasses
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm import tqdm

from bigtwo.agents import pretrained
from bigtwo.agents.base import Agent
from bigtwo.agents.lookahead import LookaheadAgent
from bigtwo.agents.registry import AGENT_SPECS, split_spec
from bigtwo.agents.strong import LOOKAHEAD, NO_BELIEF
from bigtwo.arena.pool import map_in_workers, report_progress
from bigtwo.env.engine.engine import Engine
from bigtwo.env.rules.variant import Variant
from bigtwo.train import checkpoint as ckpt
from bigtwo.train.advice import NO_ADVICE, make_adviser
from bigtwo.train.belief import load_belief
from bigtwo.train.config import TrainConfig
from bigtwo.train.networks import ActionScorer, gradient_step, legal_mask, masked_log_softmax
from bigtwo.train.policy_agent import PolicyAgent, torch_threads
from bigtwo.train.rollout import make_scorer


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


SHIPPED_BELIEF = "shipped"  # expert: lookahead:...,belief=shipped: the variant's shipped belief, as strong deals


def expert_belief(spec: str, variant: Variant) -> Path | None:
    """The belief file the ``expert`` search deals its guesses by (its ``belief`` option): a file
    written by ``bigtwo belief``, ``shipped`` for the one shipped for ``variant`` (the belief
    ``strong`` deals by), or ``none`` (the default): at random among the unseen cards. ``ValueError``
    naming the option for a file that does not load for ``variant``'s rules, or ``shipped`` where
    none is shipped.

    >>> from bigtwo.env import load_variant
    >>> expert_belief("lookahead:samples=8", load_variant("taiwan")) is None
    True
    >>> expert_belief("lookahead:belief=shipped", load_variant("hong-kong", scoring="collect")).name
    'hong-kong.pt'
    """
    given = expert_options(spec).get("belief")
    if given is None or str(given).lower() == NO_BELIEF:
        return None
    if str(given).lower() == SHIPPED_BELIEF:
        path = pretrained.belief_path(variant)
        if path is None:
            raise ValueError(
                f"field 'expert' has bad value {spec!r}: no belief is shipped for {variant.name}; "
                f"allowed: belief=FILE (written by bigtwo belief) or belief={NO_BELIEF}"
            )
        return path
    path = Path(str(given)).expanduser()
    try:
        load_belief(path, variant)
    except ValueError as exc:
        raise ValueError(f"field 'expert' has bad value {spec!r}: {exc}") from None
    return path


Z_CAP = 30.0  # a paired z of guesses that all agree is infinite: kept finite for the softmax


@dataclasses.dataclass
class SearchDecisions:
    """The search's decisions of a round (rows: decisions with more than one legal play), with what
    it found: each searched row's candidates (their slots in the legal list, the favourite first,
    ``-1`` padded; all ``-1`` for a row decided without search, e.g. a play that ends the game),
    their mean values and paired z against the favourite, and the seat's return (its scaled payoffs
    to the end of its match). One field a column; a round's ``.npz`` (``save_decisions``) keeps each
    under its field's name."""

    obs: np.ndarray  # float32 (n, obs)
    legal: np.ndarray  # int64 (n, W): each row's legal plays, 0-padded
    counts: np.ndarray  # int64 (n,)
    advised: np.ndarray  # int64 (n,): the adviser's slot (NO_ADVICE without an adviser)
    pick: np.ndarray  # int64 (n,): the slot of the search's play
    slots: np.ndarray  # int64 (n, K): the candidates' slots, favourite first, -1 padded
    means: np.ndarray  # float32 (n, K): each candidate's mean value over the guesses (payoff units)
    z: np.ndarray  # float32 (n, K): each candidate's paired z against the favourite (0 for the favourite)
    returns: np.ndarray  # float32 (n,): the seat's scaled payoffs to the end of its match

    @property
    def size(self) -> int:
        return len(self.counts)

    def take(self, rows: np.ndarray) -> SearchDecisions:
        """The decisions at ``rows``, in that order."""
        return SearchDecisions(**{f.name: getattr(self, f.name)[rows] for f in dataclasses.fields(self)})

    @classmethod
    def join(cls, parts: list[SearchDecisions]) -> SearchDecisions:
        """``parts`` one after the other (the legal lists padded to the widest)."""
        width = max(p.legal.shape[1] for p in parts)
        joined = {
            f.name: np.concatenate([_pad(p.legal, width) if f.name == "legal" else getattr(p, f.name) for p in parts])
            for f in dataclasses.fields(cls)
        }
        return cls(**joined)


def search_decisions(
    teacher: Agent,
    variant: Variant,
    advice: str,
    scale: float,
    seed: int,
    decisions: int,
    num_envs: int,
    progress: Callable[[int], None] | None = None,
) -> SearchDecisions:
    """At least ``decisions`` finished decisions of ``teacher`` playing every seat of ``num_envs``
    matches at once (``Engine`` seeded with ``seed``), each with what its search found
    (``LookaheadAgent.last_search``) and its return; ``progress(n)`` after each step that finished
    decisions. Same seed, same decisions. Any other agent (``strong:search=rollouts``, a heuristic)
    teaches its plays alone: its rows have no candidates, so ``learn`` teaches its ``pick``."""
    eng = Engine(variant, num_matches=num_envs, seed=seed, autoreset=True)
    adviser = make_adviser(advice, variant)
    K = max(getattr(teacher, "top_k", 1), 1)
    steps: list[SearchDecisions] = []  # each step's decisions (their returns filled once their matches end)
    returns: list[float] = []  # per recorded decision: its seat's scaled payoffs so far in its match
    seats: list[int] = []  # per recorded decision: the seat that made it
    pending: list[list[int]] = [[] for _ in range(num_envs)]  # each match's decisions still open
    done: list[int] = []  # the decisions whose match ended
    finished = 0
    while finished < decisions:
        obs = eng.observe().copy()
        seat = eng.current.copy()
        ids, n = eng.legal_actions()
        acts = np.asarray(teacher.act(obs, ids, n))
        many = np.flatnonzero(n > 1)
        if many.size:
            w = int(n[many].max())
            legal = np.where(np.arange(w)[None, :] < n[many, None], ids[many, :w], 0).astype(np.int64)
            found = {s.row: s for s in getattr(teacher, "last_search", ())}
            slots = np.full((many.size, K), -1, np.int64)
            means = np.full((many.size, K), np.nan, np.float32)
            z = np.full((many.size, K), np.nan, np.float32)
            for i, g in enumerate(many):
                s = found.get(int(g))
                if s is None or len(s.candidates) > K:  # unsearched, or the endgame's every play: the play alone
                    continue
                c = len(s.candidates)
                slots[i, :c] = [int(np.flatnonzero(legal[i, : n[g]] == a)[0]) for a in s.candidates]
                means[i, :c], z[i, :c] = s.means, np.clip(np.nan_to_num(s.z), -Z_CAP, Z_CAP)
            advised = (
                np.full(many.size, NO_ADVICE, np.int64) if adviser is None else adviser.picks(obs[many], legal, n[many])
            )
            steps.append(
                SearchDecisions(
                    obs=obs[many],
                    legal=legal,
                    counts=n[many].astype(np.int64),
                    advised=advised,
                    pick=np.argmax(legal == acts[many, None], axis=1).astype(np.int64),
                    slots=slots,
                    means=means,
                    z=z,
                    returns=np.zeros(many.size, np.float32),
                )
            )
            for g in many:
                pending[g].append(len(returns))
                returns.append(0.0)
                seats.append(int(seat[g]))
        result = eng.step(acts)
        for g in np.flatnonzero(result.game_over):  # each game's payoff counts for every decision of its match
            for d in pending[g]:
                returns[d] += float(result.payoffs[g, seats[d]]) * scale
        ended = np.flatnonzero(result.match_over)
        for g in ended:
            done.extend(pending[g])
            pending[g] = []
        if ended.size:
            finished = len(done)
            if progress is not None:
                progress(finished)
    keep = np.sort(np.asarray(done, np.int64))  # the decisions whose match ended, in play order
    return dataclasses.replace(SearchDecisions.join(steps).take(keep), returns=np.asarray(returns, np.float32)[keep])


@dataclasses.dataclass
class Part:
    """One worker's share of a round's play: the network's weights, the run's fields, its seed."""

    weights: dict[str, torch.Tensor]
    cfg: TrainConfig
    variant: Variant
    scale: float
    seed: int
    decisions: int
    belief: Path | None = None  # the file the search deals its guesses by (expert_belief)


def part_seed(seed: int, part: int) -> int:
    """The seed of a round's ``part``-th worker (the round's own seed for the first)."""
    return seed + 7_919 * part


def play_round(
    net: ActionScorer, cfg: TrainConfig, variant: Variant, scale: float, seed: int, bar: Any
) -> SearchDecisions:
    """The round's decisions: ``cfg.expert_workers`` parts of ``expert_decisions / expert_workers``
    decisions, each searched on its own matches (``part_seed``) in its own process (one part: in
    this one), joined in part order; ``bar`` counts the finished decisions."""
    workers = cfg.expert_workers
    weights = {k: v.detach().cpu().clone() for k, v in net.state_dict().items()}
    share = -(-cfg.expert_decisions // workers)
    belief = expert_belief(cfg.expert, variant)
    parts = [Part(weights, cfg, variant, scale, part_seed(seed, w), share, belief) for w in range(workers)]
    if workers == 1:
        return _play_part(parts[0], bar.update)
    return SearchDecisions.join(map_in_workers(_play_part, parts, workers, bar))


def _play_part(part: Part, report: Callable[[int], object] = report_progress) -> SearchDecisions:
    """One part of a round's play (``play_round``): the ``expert`` search on a copy of the weights,
    ``report`` told of each newly finished decision count."""
    net = make_scorer(part.cfg, part.variant)
    net.load_state_dict(part.weights)
    policy = PolicyAgent(part.variant, net.eval(), seed=part.seed, device="cpu")
    policy.value_scale = part.scale
    policy.scores_threads = 1
    options = expert_options(part.cfg.expert)
    options.pop("belief", None)
    belief = None if part.belief is None else load_belief(part.belief, part.variant)
    teacher = LookaheadAgent(part.variant, policy, seed=part.seed, belief=belief, **options)
    told = 0

    def advance(n: int) -> None:
        nonlocal told
        n = min(n, part.decisions)
        if n > told:
            report(n - told)
            told = n

    with torch_threads(1):
        return search_decisions(
            teacher, part.variant, part.cfg.advice, part.scale, seed=part.seed, decisions=part.decisions,
            num_envs=part.cfg.num_envs, progress=advance,
        )  # fmt: skip


def round_key(net: ActionScorer, cfg: TrainConfig, variant: Variant, seed: int) -> str:
    """What a round's decisions follow from, as one digest (``bigtwo.train.checkpoint.digest``): the
    network searched (its weights), the search, the seed, the count, the matches at once, the
    workers, the adviser, the variant's rules and the belief the guesses follow (its weights).
    Equal keys, equal decisions."""
    fields = {"expert": cfg.expert, "decisions": cfg.expert_decisions, "num_envs": cfg.num_envs, "seed": seed,
              "workers": cfg.expert_workers, "advice": cfg.advice, "rules": repr(variant), "weights": net.state_dict()}  # fmt: skip
    belief = expert_belief(cfg.expert, variant)
    if belief is not None:  # the belief's own weights: another file under the same name, other guesses
        fields["belief"] = torch.load(belief, map_location="cpu", weights_only=True)
    return ckpt.digest(fields)


def save_decisions(path: Path, data: SearchDecisions, key: str) -> None:
    """Write ``data`` to ``path`` (compressed ``.npz``, whole or not at all: ``atomic_write``) with its ``key``."""
    ckpt.atomic_write(path, lambda out: np.savez_compressed(out, key=np.array(key), **dataclasses.asdict(data)))


def load_decisions(path: Path, key: str) -> SearchDecisions | None:
    """The decisions kept at ``path`` if they were played under ``key``; ``None`` when there are none,
    they follow from something else, or the file cannot be read (the round plays again)."""
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as saved:
            if str(saved["key"]) != key:
                return None
            return SearchDecisions(**{f.name: saved[f.name] for f in dataclasses.fields(SearchDecisions)})
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, EOFError):
        return None


def _pad(legal: np.ndarray, width: int) -> np.ndarray:
    """``legal`` 0-padded to ``width`` columns."""
    out = np.zeros((len(legal), width), np.int64)
    out[:, : legal.shape[1]] = legal
    return out


def search_targets(
    prior: torch.Tensor, slots: torch.Tensor, z: torch.Tensor, pick: torch.Tensor, tau: float
) -> torch.Tensor:
    """What ``expert_target: search`` teaches, ``(B, L)`` over each row's legal slots: ``prior`` (the
    probabilities of the network the round searched with, 0 beyond each row's count), with the
    mass it gives the searched candidates (``slots``, -1 padded) shared among them by a softmax
    of their paired z against the favourite over ``tau``; a row without candidates learns its
    ``pick`` alone (a play that ends the game, or the endgame's every play).

    >>> prior = torch.tensor([[0.5, 0.3, 0.2]])
    >>> t = search_targets(prior, torch.tensor([[0, 1]]), torch.tensor([[0.0, 2.0]]), torch.tensor([1]), 1.0)
    >>> [round(x, 3) for x in t[0].tolist()]
    [0.095, 0.705, 0.2]
    >>> search_targets(prior, torch.tensor([[-1, -1]]), torch.zeros(1, 2), torch.tensor([2]), 1.0).tolist()
    [[0.0, 0.0, 1.0]]
    """
    valid = slots >= 0
    at = slots.clamp(min=0)
    mass = (prior.gather(1, at) * valid).sum(1, keepdim=True)
    share = torch.softmax((z / tau).masked_fill(~valid, -torch.inf), dim=1).nan_to_num(0.0)
    target = prior.clone()
    target.scatter_(1, at, torch.where(valid, mass * share, prior.gather(1, at)))
    searched = valid.any(1, keepdim=True)
    alone = torch.nn.functional.one_hot(pick, prior.shape[1]).to(prior.dtype)
    return torch.where(searched, target, alone)


def trusted_picks(data: SearchDecisions, trust: float) -> np.ndarray:
    """The slot ``expert_target: play`` teaches in each row: the best mean among the candidates whose
    paired z over the favourite exceeds ``trust``, else the favourite; a row without candidates
    keeps the search's play.

    >>> d = SearchDecisions(np.zeros((2, 1), np.float32), np.zeros((2, 3), np.int64), np.full(2, 3), np.zeros(2, np.int64),
    ...     np.array([2, 0]), np.array([[0, 2, 1], [-1, -1, -1]]), np.array([[0.0, 1.5, 2.0], [np.nan] * 3], np.float32),
    ...     np.array([[0.0, 2.5, 1.2], [0.0] * 3], np.float32), np.zeros(2, np.float32))
    >>> trusted_picks(d, 1.0).tolist(), trusted_picks(d, 2.0).tolist(), trusted_picks(d, 3.0).tolist()
    ([1, 0], [2, 0], [0, 0])
    """
    searched = data.slots[:, 0] >= 0
    beats = (data.slots >= 0) & (data.z > trust)
    best = np.argmax(np.where(beats, data.means, -np.inf), axis=1)
    chosen = np.where(beats.any(axis=1), best, 0)
    return np.where(searched, data.slots[np.arange(data.size), chosen], data.pick).astype(np.int64)


def learn(
    net: ActionScorer, data: SearchDecisions, cfg: TrainConfig, seed: int, device: torch.device
) -> dict[str, float]:
    """Train ``net`` on a round's ``data`` for ``cfg.imitate_epochs`` passes (Adam at ``cfg.expert_lr``):
    its scores towards ``cfg.expert_target`` (``search_targets`` of the network as it was before
    this round, or the search's play alone) and its value head alone towards the returns (the
    encoder's output taken as given; see the module docstring). Returns the last pass's
    ``expert/*`` scalars (loss, value loss, accuracy: how often its best play is the search's)."""
    prior_net = copy.deepcopy(net).eval()
    taught = trusted_picks(data, cfg.expert_trust)
    optimizer = torch.optim.Adam(net.parameters(), lr=cfg.expert_lr, eps=cfg.adam_eps)
    shuffle = np.random.default_rng([seed, 5])
    stats: dict[str, list[float]] = {}
    for _epoch in range(cfg.imitate_epochs):
        stats = {"loss": [], "value": [], "accuracy": []}
        net.train()
        order = shuffle.permutation(data.size)
        for start in range(0, data.size, cfg.minibatch_size):
            idx = order[start : start + cfg.minibatch_size]
            b = _tensors(data, idx, device, net.advice_size > 0)
            b["taught"] = torch.as_tensor(taught[idx], device=device)
            scores, _ = net(b["obs"], b["legal"], b["counts"], b["advised"])
            valid = legal_mask(b["counts"], scores.shape[1])
            logp = masked_log_softmax(scores, valid)
            if cfg.expert_target == "search":
                with torch.no_grad():
                    prior_scores, _ = prior_net(b["obs"], b["legal"], b["counts"], b["advised"])
                    prior = torch.softmax(prior_scores, dim=1).masked_fill(~valid, 0.0)
                    target = search_targets(prior, b["slots"], b["z"], b["pick"], cfg.expert_tau)
                policy_loss = -(target * logp).sum(1).mean()
            else:
                policy_loss = -logp.gather(1, b["taught"][:, None]).mean()
            value = net.value(net.state_encoder(b["obs"]).detach()).squeeze(-1)
            value_loss = 0.5 * ((value - b["returns"]) ** 2).mean()
            loss = policy_loss + cfg.vf_coef * value_loss
            gradient_step(optimizer, loss, net, cfg.max_grad_norm)
            stats["loss"].append(loss.item())
            stats["value"].append(value_loss.item())
            stats["accuracy"].append((scores.argmax(1) == b["taught"]).float().mean().item())
    net.eval()
    return {f"expert/{k}": float(np.mean(v)) for k, v in stats.items() if v}


def _tensors(data: SearchDecisions, idx: np.ndarray, device: torch.device, advised: bool) -> dict[str, Any]:
    """Rows ``idx`` of ``data`` as tensors on ``device``, the legal lists cut to the widest row."""
    counts = data.counts[idx]
    width = max(int(counts.max()), 1)

    def put(x: np.ndarray) -> torch.Tensor:
        return torch.as_tensor(np.ascontiguousarray(x), device=device)

    return {
        "obs": put(data.obs[idx]),
        "legal": put(data.legal[idx, :width]),
        "counts": put(counts),
        "advised": put(data.advised[idx]) if advised else None,
        "pick": put(data.pick[idx]),
        "slots": put(data.slots[idx]),
        "z": put(data.z[idx]),
        "returns": put(data.returns[idx]),
    }


def expert_round(
    net: ActionScorer,
    cfg: TrainConfig,
    variant: Variant,
    scale: float,
    device: torch.device,
    round_index: int,
    folder: Path | None = None,
) -> dict[str, float]:
    """One round (see the module docstring) on ``net``, in place; returns its ``expert/*`` scalars.
    With ``folder`` the round's decisions are kept there (``round_NNN.decisions.npz``) and a round
    that finds its own (the same network, search, seed and count) learns from them without playing."""
    t0 = time.time()
    seed = cfg.seed + 40_000 + round_index
    key = round_key(net, cfg, variant, seed)
    kept = None if folder is None else folder / f"round_{round_index + 1:03d}.decisions.npz"
    data = load_decisions(kept, key) if kept is not None else None
    if data is None:
        with tqdm(
            total=cfg.expert_decisions, desc=f"expert round {round_index + 1}", unit="decision", leave=False,
            disable=not cfg.progress,
        ) as bar:  # fmt: skip
            data = play_round(net, cfg, variant, scale, seed, bar)
        if kept is not None:
            save_decisions(kept, data, key)
    played = time.time() - t0
    before = agreement(net, data, device)
    out = learn(net, data, cfg, seed=seed, device=device)
    out["expert/decisions"] = float(data.size)
    out["expert/searched"] = float((data.slots[:, 0] >= 0).mean()) if data.size else 0.0
    out["expert/overruled"] = float((data.pick != data.slots[:, 0]).mean()) if data.size else 0.0
    out["expert/matched_before"] = before
    out["expert/matched_after"] = agreement(net, data, device)
    out["expert/round"] = float(round_index + 1)
    out["expert/play_seconds"] = played
    out["expert/seconds"] = time.time() - t0
    return out


@torch.no_grad()
def best_plays(net: ActionScorer, data: SearchDecisions, device: torch.device, batch: int = 4096) -> np.ndarray:
    """``net``'s best-scored slot in each row of ``data`` (scored on ``device``, ``batch`` rows at a time)."""
    net.eval()
    best = np.empty(data.size, np.int64)
    for start in range(0, data.size, batch):
        idx = np.arange(start, min(start + batch, data.size))
        b = _tensors(data, idx, device, net.advice_size > 0)
        best[idx] = net(b["obs"], b["legal"], b["counts"], b["advised"])[0].argmax(1).cpu().numpy()
    return best


def agreement(net: ActionScorer, data: SearchDecisions, device: torch.device, batch: int = 4096) -> float:
    """How often ``net``'s best-scored play is the search's in ``data``."""
    return float((best_plays(net, data, device, batch) == data.pick).sum()) / max(data.size, 1)


def departures(before: ActionScorer, after: ActionScorer, data: SearchDecisions, batch: int = 4096) -> dict[str, float]:
    """How a learned network ``after`` moved from the network ``before`` it on decisions ``data`` it
    did not learn from (another seed's round): ``departures``, the share of rows whose teacher's
    play is not ``before``'s best-scored play; ``reproduced``, the share of those where ``after``'s
    best play is the teacher's; ``changed``, the share of the other rows where ``after`` left
    ``before``'s play. A network that learned where the teacher departs reproduces much and changes
    little; one that cannot tell those positions from its inputs changes many plays for the few
    it reproduces (docs/experiments.md#distill-strong)."""
    old, new = (best_plays(net, data, next(net.parameters()).device, batch) for net in (before, after))
    left = old != data.pick
    return {
        "departures": float(left.mean()) if data.size else 0.0,
        "reproduced": float((new[left] == data.pick[left]).mean()) if left.any() else 0.0,
        "changed": float((new[~left] != old[~left]).mean()) if (~left).any() else 0.0,
    }
