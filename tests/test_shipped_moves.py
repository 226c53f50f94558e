"""Every shipped network plays bit for bit as it did before the code was reorganised.

``tests/data/shipped-moves.json`` holds, for each shipped network file, the greedy action ids it
chose at every step of 8 fixed hong-kong/taiwan/... matches (60 steps each), and ``strong``'s
(the search on the network, seeded) on 2 matches of hong-kong and taiwan (12 steps). They were
written by :func:`moves` below on the code before the restructure (issue: one copy of each
module), and any later change to the engine, the observation, the networks' forward pass or
``strong``'s search that changes a move fails here. A deliberate change of play rewrites the file:
``python tests/test_shipped_moves.py`` (and says why in the commit).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
MOVES = ROOT / "tests" / "data" / "shipped-moves.json"
PRETRAINED = ROOT / "bigtwo" / "agents" / "pretrained"


def play(agent: Any, seed: int, matches: int, steps: int) -> list[list[int]]:
    """The actions ``agent`` takes for every seat of ``matches`` matches of its variant, step by step."""
    from bigtwo.env.engine.engine import Engine

    engine = Engine(agent.variant, num_matches=matches, seed=seed)
    moves = []
    for _ in range(steps):
        actions = agent.act(engine.observe(), *engine.legal_actions())
        moves.append([int(a) for a in np.asarray(actions)])
        engine.step(actions)
    return moves


def networks() -> list[str]:
    """The shipped network files (the beliefs are no players), relative to the repository root."""
    return sorted(
        path.relative_to(ROOT).as_posix() for path in PRETRAINED.rglob("*.pt") if path.parent.name != "belief"
    )


def moves(key: str) -> list[list[int]]:
    """The moves of one entry of the file: a network file's path, or ``strong:VARIANT``."""
    from bigtwo.agents import make_agent
    from bigtwo.train.policy_agent import load_policy_agent

    if key.startswith("strong:"):
        return play(make_agent("strong", key.split(":", 1)[1], seed=5), seed=2026, matches=2, steps=12)
    return play(load_policy_agent(ROOT / key), seed=2026, matches=8, steps=60)


def _recorded() -> dict[str, list[list[int]]]:
    return json.loads(MOVES.read_text(encoding="utf-8"))


def test_the_file_covers_every_shipped_network() -> None:
    keys = _recorded()
    assert {k for k in keys if not k.startswith("strong:")} == set(networks())


@pytest.mark.parametrize("key", sorted(_recorded()))
def test_each_shipped_network_plays_as_before(key: str) -> None:
    pytest.importorskip("torch")
    assert moves(key) == _recorded()[key]


if __name__ == "__main__":  # rewrite the file after a deliberate change of play
    written = {p: moves(p) for p in networks()}
    written |= {f"strong:{v}": moves(f"strong:{v}") for v in ("hong-kong", "taiwan")}
    MOVES.write_text(json.dumps(written), encoding="utf-8")
    sys.exit(0)
