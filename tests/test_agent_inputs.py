"""Agents' ``act`` inputs are checked once, in the ``Agent`` base class (issue 12): a wrong shape,
count, dtype or value is a ``ValueError`` naming it, for every agent, never a crash or a silent
other move."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from bigtwo.agents import Agent, make_agent
from bigtwo.env import load_variant
from bigtwo.env.engine.engine import Engine
from bigtwo.env.engine.observation import obs_size

TAIWAN = load_variant("taiwan")
NAMES = ["random", "greedy", "heuristic", "search:simulations=8"]


def _position(num_matches: int = 3, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    eng = Engine(TAIWAN, num_matches=num_matches, seed=seed)
    ids, counts = eng.legal_actions()
    return eng.observe().copy(), ids.copy(), counts.copy()


def _policy_agent() -> Agent:
    torch = pytest.importorskip("torch")
    from bigtwo.env.engine.observation import obs_size
    from bigtwo.train.networks import ActionScorer, action_features
    from bigtwo.train.policy_agent import PolicyAgent

    torch.manual_seed(0)
    net = ActionScorer(obs_size(4), action_features(TAIWAN), hidden_size=16, pair_size=8)
    return PolicyAgent(TAIWAN, net, seed=0)


def _agents() -> list[Agent]:
    return [make_agent(n, TAIWAN, seed=0) for n in NAMES]


def _bad_inputs():
    obs, ids, counts = _position()
    nan = obs.copy()
    nan[1, 5] = np.nan
    big = obs.copy()
    big[0, 0] = 2.0
    over = counts.copy()
    over[2] = ids.shape[1] + 100
    neg = counts.copy()
    neg[0] = -1
    out_of_table = ids.copy()
    out_of_table[1, 0] = 10**6
    negative_id = ids.copy()
    negative_id[0, 0] = -5
    return [
        ("width", (obs[:, :300], ids, counts), f"obs must have shape \\(B, {obs_size(4)}\\) for 4 players"),
        ("rows", (obs[:2], ids, counts), "obs must have shape"),
        ("nan", (nan, ids, counts), "obs must hold the engine's values \\(slot 5: 0..1\\); row 1 holds nan"),
        ("above one", (big, ids, counts), "obs must hold the engine's values \\(slot 0: 0..1\\); row 0 holds 2.0"),
        ("text", (obs.astype(str), ids, counts), "obs must be real numbers"),
        ("counts past the width", (obs, ids, over), f"legal_counts must be 0..{ids.shape[1]}.*row 2"),
        ("negative count", (obs, ids, neg), "legal_counts must be 0..*row 0 has -1"),
        ("float counts", (obs, ids, counts.astype(float)), "legal_counts must be integers of shape \\(B,\\)"),
        ("counts 2-D", (obs, ids, counts[:, None]), "legal_counts must be integers of shape"),
        ("float ids", (obs, ids.astype(np.float64) + 0.5, counts), "legal_ids must be integers of shape \\(B, L\\)"),
        ("ids 1-D", (obs, ids[:, 0], counts), "legal_ids must be integers of shape"),
        ("id past the table", (obs, out_of_table, counts), "legal_ids must be action ids 0..*row 1 holds 1000000"),
        ("negative id", (obs, negative_id, counts), "legal_ids must be action ids.*row 0 holds -5"),
    ]


@pytest.mark.parametrize("case", _bad_inputs(), ids=lambda c: c[0])
def test_every_agent_refuses_bad_inputs_by_name(case):
    _, args, message = case
    for agent in [*_agents(), _policy_agent()]:
        with pytest.raises(ValueError, match=message):
            agent.act(*args)


def test_good_inputs_still_play_and_padding_is_not_checked():
    obs, ids, counts = _position(num_matches=4, seed=3)
    padded = ids.copy()
    for g, n in enumerate(counts):
        padded[g, n:] = -1  # padding beyond the counts may hold anything
    for agent in [*_agents(), _policy_agent()]:
        for legal in (ids, padded):
            actions = agent.act(obs, legal, counts)
            assert all(a in ids[g, : counts[g]] for g, a in enumerate(actions)), agent
        assert agent.act(obs[:0], ids[:0], counts[:0]).shape == (0,)


def test_an_agent_of_ones_own_is_checked_too():
    class Lowest(Agent):
        name = "lowest"

        def act(self, obs, legal_ids, legal_counts):
            return np.where(legal_counts > 0, legal_ids[:, 0], -1)

    obs, ids, counts = _position()
    assert (Lowest(TAIWAN).act(obs, ids, counts) == ids[:, 0]).all()
    with pytest.raises(ValueError, match="legal_counts must be 0.."):
        Lowest(TAIWAN).act(obs, ids, counts + 100)
    assert Lowest.act.__name__ == "act" and Lowest.act.checks_inputs


def test_heuristic_scores_are_checked():
    obs, ids, counts = _position()
    with pytest.raises(ValueError, match="legal_counts"):
        make_agent("heuristic", TAIWAN).scores(obs, ids, counts + 100)


@pytest.mark.parametrize("name", ["heuristic", "search:simulations=8"])
def test_counts_past_the_width_are_an_error_not_a_segfault(name):
    """Before the check this crashed the interpreter (a compiled kernel read past the array)."""
    code = f"""
import numpy as np
from bigtwo.agents import make_agent
from bigtwo.env.engine.engine import Engine
eng = Engine("taiwan", num_matches=2, seed=0)
ids, counts = eng.legal_actions()
try:
    make_agent({name!r}, "taiwan", seed=0).act(eng.observe(), ids, np.full(2, ids.shape[1] + 5000))
except ValueError as exc:
    print("refused:", exc)
"""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "refused: legal_counts must be 0.." in run.stdout


@pytest.mark.parametrize(
    "spec, message",
    [
        ("search:simulations=true", "simulations must be a positive integer.*got True"),
        ("search:simulations=0", "simulations must be a positive integer"),
        ("search:simulations=1.5", "simulations must be a positive integer"),
        ("search:top_k=true", "top_k must be a positive integer.*got True"),
        ("search:seconds=true", "seconds must be a positive finite number.*got True"),
        ("search:seconds=.inf", "seconds must be a positive finite number"),
        ("search:seconds=.nan", "seconds must be a positive finite number"),
        (
            "heuristic:weights=abc",
            r"weights must be a set's name \(default, .*\), a mapping of weight names to values or 23 finite numbers, got 'abc'",
        ),
        ("heuristic:weights=.nan", "weights must be .* 23 finite numbers, got nan"),
        ("search:weights=[1]", r"or 23 finite numbers, got \[1\]"),
        ("search:opponent_weights=abc", r"weights must be a set's name \(default, collect, cards\)"),
        (
            "search:opponent_weights=default+abc",
            r"weights must be a set's name \(default, .*\), a mapping of weight names to values or 23 finite numbers, got 'abc'",
        ),
        ("search:opponent_weights=[[1]]", r"or 23 finite numbers, got \[1\]"),
    ],
)
def test_agent_options_are_validated(spec, message):
    with pytest.raises(ValueError, match=message):
        make_agent(spec, TAIWAN)


def test_agents_take_observations_with_match_scores() -> None:
    """Later games of a match observe signed match scores (outside 0..1): still valid inputs."""
    variant = load_variant("taiwan", games=3)
    eng = Engine(variant, num_matches=8, seed=5)
    rng = np.random.default_rng(5)
    while not (eng.state.games_played >= 1).all():
        ids, n = eng.legal_actions()
        pick = (rng.random(8) * np.maximum(n, 1)).astype(np.int64)
        eng.step(np.where(eng.state.games_played >= 1, -1, ids[np.arange(8), pick]))
    obs = eng.observe()
    assert obs.min() < 0  # the losers' match scores
    ids, n = eng.legal_actions()
    for name in ("random", "greedy", "heuristic"):
        acts = make_agent(name, variant, seed=0).act(obs, ids, n)
        assert all(a in ids[g, : n[g]] for g, a in enumerate(acts))
