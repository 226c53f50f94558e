"""A learned belief over the hidden hands: which other seat holds each card a seat has not seen.

A search deals guesses of the hidden hands (``bigtwo.agents.determinize``). Uniformly, each unseen
card goes to each other seat in proportion to the cards it holds; but the game says more: a seat
that passed on a low pair probably holds no higher pair, a seat that led its lowest single kept its
pairs. A *belief* reads the seat's observation (only what the seat may know) and gives, for each
other seat and each unseen card, the probability that the seat holds it; the search then deals
guesses that follow it (``deal_hands(..., holders=...)``).

``fit_belief`` learns one by supervised learning on positions of games an agent plays at every
seat (usually the network the search will run: its games are the ones the belief will be asked
about); the answer of each position is read off the privileged global state. It is measured before
it is trusted: ``fit_belief`` reports the held-out cross-entropy and accuracy beside the uniform
deal's (each seat in proportion to its cards). ``bigtwo belief`` runs it and saves the file that
``lookahead:belief=FILE`` (and ``strong:belief=FILE``) reads.

>>> from bigtwo.env import load_variant
>>> belief, report = fit_belief(load_variant("taiwan"), "greedy", positions=2_000, epochs=1, seed=0)
>>> belief.holders(np.zeros((2, belief.obs_size), np.float32)).shape, report["positions"]
((2, 3, 52), 2000)
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from bigtwo.env.engine.engine import Engine
from bigtwo.env.engine.observation import obs_size, part_slices
from bigtwo.env.rules.variant import Variant, stored_variant
from bigtwo.train.networks import layer_init, mlp
from bigtwo.train.policy_agent import rule_differences, torch_threads
from bigtwo.train.ppo import hand_loss

FORMAT = "bigtwo-belief-1"  # the file's kind and version


class BeliefNet(nn.Module):
    """An MLP from a seat's observation to ``(52, P-1)`` scores: per card, a softmax over the other
    places (relative seats 1..P-1) of holding it."""

    threads: int | None = 1  # torch threads of ``holders`` (a search's small pass; see PolicyAgent.scores_threads)

    def __init__(self, obs_size: int, players: int, hidden_size: int = 256, layers: int = 2) -> None:
        super().__init__()
        self.obs_size, self.players = obs_size, players
        self.kwargs = dict(obs_size=obs_size, players=players, hidden_size=hidden_size, layers=layers)
        self.body = mlp(obs_size, hidden_size, layers)
        self.out = layer_init(nn.Linear(hidden_size if layers else obs_size, 52 * (players - 1)), std=0.01)
        self.left = part_slices(players)["cards_left_fraction"]

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.out(self.body(obs)).view(len(obs), 52, self.players - 1)

    @torch.no_grad()
    def holders(self, obs: np.ndarray) -> np.ndarray:
        """``(B, P-1, 52)`` float64: for each row, other place and card, the probability that the place
        holds the card (0 for a place with no cards; rows of cards the seat has seen are arbitrary)."""
        x = torch.as_tensor(np.asarray(obs, np.float32))
        empty = x[:, self.left][:, 1:] <= 0  # (B, P-1): places with no cards hold none
        with torch_threads(self.threads):  # the softmax too: a pool of busy cores stalled it (5 ms a call)
            logits = self(x).masked_fill(empty[:, None, :], float("-inf"))
            return torch.softmax(logits.double(), dim=2).nan_to_num(0.0).transpose(1, 2).numpy()


def uniform_holders(obs: np.ndarray, players: int) -> np.ndarray:
    """The uniform deal's belief, ``(B, P-1, 52)``: each other place in proportion to the cards it holds."""
    left = np.asarray(obs, np.float64)[:, part_slices(players)["cards_left_fraction"]][:, 1:]
    share = left / np.maximum(left.sum(1, keepdims=True), 1e-12)
    return np.repeat(share[:, :, None], 52, axis=2)


def collect_positions(
    variant: Variant, agent_spec: str, positions: int, seed: int, num_matches: int = 256
) -> tuple[np.ndarray, np.ndarray]:
    """Observations and global states ``(positions, obs_size)``, ``(positions, state_size)`` of the seat
    to act, from games ``agent_spec`` plays at every seat (one position a decision, every decision)."""
    from bigtwo.agents import make_agent

    eng = Engine(variant, num_matches=num_matches, seed=seed, autoreset=True)
    agent = make_agent(agent_spec, variant, seed=seed)
    obs_rows: list[np.ndarray] = []
    state_rows: list[np.ndarray] = []
    have = 0
    while have < positions:
        ids, n = eng.legal_actions()
        obs = eng.observe().copy()
        asked = np.flatnonzero(n > 1)  # positions where the seat has a choice: where a search runs
        obs_rows.append(obs[asked])  # indexing copies
        state_rows.append(eng.global_state()[asked])
        have += asked.size
        eng.step(agent.act(obs, ids, n))
    return np.concatenate(obs_rows)[:positions], np.concatenate(state_rows)[:positions]


def fit_belief(
    variant: Variant,
    agent_spec: str,
    positions: int = 200_000,
    epochs: int = 6,
    seed: int = 0,
    hidden_size: int = 256,
    layers: int = 2,
    lr: float = 1e-3,
    batch_size: int = 1024,
    held_out: float = 0.1,
    progress: bool = False,
) -> tuple[BeliefNet, dict[str, Any]]:
    """A ``BeliefNet`` learned on ``positions`` positions of ``agent_spec``'s games at every seat, and
    its report: held-out cross-entropy (nats per card another seat holds) and accuracy (its likeliest
    place is the holder), the uniform deal's beside them, positions and seconds."""
    torch.manual_seed(seed)
    start = time.perf_counter()
    obs, state = collect_positions(variant, agent_spec, positions, seed)
    P = variant.players
    net = BeliefNet(obs_size(P), P, hidden_size, layers)
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(obs))
    cut = max(1, int(len(obs) * held_out))
    test, train = order[:cut], order[cut:]
    x, s = torch.as_tensor(obs), torch.as_tensor(state)
    optimizer = torch.optim.Adam(net.parameters(), lr=lr)
    steps = epochs * math.ceil(len(train) / batch_size)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda i: 1.0 - i / max(steps, 1))
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=steps, desc="belief", unit="batch")
    net.train()
    for _ in range(epochs):
        for at in range(0, len(train), batch_size):
            idx = torch.as_tensor(train[at : at + batch_size])
            loss, _ = hand_loss(net(x[idx]), s[idx])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            schedule.step()
            if bar is not None:
                bar.update()
        rng.shuffle(train)
    if bar is not None:
        bar.close()
    net.eval()
    with torch.no_grad():
        t = torch.as_tensor(test)
        ce, accuracy = hand_loss(net(x[t]), s[t])
        flat = torch.log(torch.as_tensor(uniform_holders(obs[test], P)).clamp(min=1e-12)).float().transpose(1, 2)
        ce0, accuracy0 = hand_loss(flat, s[t])
    report = {
        "variant": variant.name,
        "agent": agent_spec,
        "positions": int(len(obs)),
        "held_out": int(cut),
        "cross_entropy": round(float(ce), 4),
        "accuracy": round(float(accuracy), 4),
        "uniform_cross_entropy": round(float(ce0), 4),
        "uniform_accuracy": round(float(accuracy0), 4),
        "seconds": round(time.perf_counter() - start, 1),
        "seed": seed,
    }
    return net, report


def save_belief(net: BeliefNet, variant: Variant, report: dict[str, Any], path: str | Path) -> Path:
    """Write the belief, its rules and its report to ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(
        {"format": FORMAT, "kwargs": net.kwargs, "state_dict": net.state_dict(), "variant": variant.to_dict(),
         "report": report},
        path,
    )  # fmt: skip
    return path


def describe_beliefs(folder: Path) -> list[str]:
    """The beliefs in ``folder`` (``bigtwo ladder --list``, after the networks): a heading, then per
    file its variant, size and ``describe_belief``; nothing when there is none."""
    from bigtwo.agents.pretrained import SUFFIX

    paths = sorted(folder.glob(f"*{SUFFIX}"))
    if not paths:
        return []
    lines = [f"beliefs (the lookahead deals its guesses by them) in {folder}:"]
    for path in paths:
        lines.append(f"{path.stem} ({path.stat().st_size / 1e6:.2f} MB)")
        lines += [f"  {line}" for line in describe_belief(path)]
    return lines


def describe_belief(path: str | Path) -> list[str]:
    """What made the belief file at ``path`` (``bigtwo ladder --list``): its positions, agent and seed,
    and its held-out figures beside the uniform deal's; one line saying why for a file it cannot read."""
    try:
        saved = torch.load(Path(path), map_location="cpu", weights_only=True)
        report = saved["report"]
        return [
            f"learned on {int(report['positions']):,} positions of {report['agent']}'s games (seed {report['seed']}, "
            f"{float(report['seconds']) / 60:.1f} min): held out, cross-entropy {float(report['cross_entropy']):.3f} "
            f"nats a card (uniform deal {float(report['uniform_cross_entropy']):.3f}), likeliest holder right "
            f"{100 * float(report['accuracy']):.1f}% (uniform {100 * float(report['uniform_accuracy']):.1f}%)"
        ]
    except Exception as exc:  # a damaged or foreign file: say so, the listing goes on
        return [f"not readable as a belief ({type(exc).__name__}): write one with bigtwo belief"]


def load_belief(path: str | Path, variant: Variant) -> BeliefNet:
    """The belief saved at ``path``; ``ValueError`` naming what is wrong for a file that is not one or
    whose rules are not ``variant``'s."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"belief file {str(path)!r} does not exist; allowed: a file written by bigtwo belief")
    try:
        saved = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:
        raise ValueError(
            f"belief file {str(path)!r} cannot be read ({type(exc).__name__}); it is damaged or not a belief"
        ) from exc
    if not isinstance(saved, dict) or saved.get("format") != FORMAT:
        raise ValueError(f"{str(path)!r} is not a belief file (format {FORMAT!r}); write one with bigtwo belief")
    learned = stored_variant(saved.get("variant") or {}, f"belief file {str(path)!r}")
    diffs = rule_differences(learned, variant)  # the rules of play: a game paid otherwise is played alike
    if diffs:
        raise ValueError(
            f"belief file {str(path)!r} was learned on the rules of {learned.name!r}, not on those of "
            f"{variant.name!r} ({'; '.join(diffs)}); allowed: a belief learned on these rules of play"
        )
    net = BeliefNet(**saved["kwargs"])
    net.load_state_dict(saved["state_dict"])
    net.eval()
    net.report = saved.get("report", {})
    return net
