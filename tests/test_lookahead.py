"""The search that plays with the network (``bigtwo.agents.lookahead``) and what it reads of a game
(``bigtwo.agents.determinize``): a loaded guess reads exactly like the real table, the hidden hands
are never peeked, every choice is legal, and the same seed makes the same choices."""

from __future__ import annotations

import numpy as np
import pytest

from bigtwo.agents.determinize import BITS, deal_hands, read_position
from bigtwo.agents.heuristic import HeuristicAgent
from bigtwo.env import load_variant
from bigtwo.env.engine.engine import Engine


def _relative_hands(eng: Engine, g: int) -> np.ndarray:
    seat, players = int(eng.current[g]), eng.variant.players
    return np.array([eng.state.hands[g, (seat + k) % players] for k in range(players)], dtype=np.uint64)


@pytest.mark.parametrize("name", ["taiwan", "hong-kong", "japan"])
def test_a_loaded_guess_reads_exactly_like_the_real_table(name):
    """Loading what a seat's observation tells (with the true hands) into an engine gives back that
    very observation: the recent moves and the passes are rebuilt, so a network reads the same."""
    variant = load_variant(name, games=1)
    eng = Engine(variant, num_matches=32, seed=5)
    sim = Engine(variant, num_matches=1, seed=0)
    agent = HeuristicAgent(variant, seed=1)
    checked = 0
    for _ in range(45):
        obs = eng.observe().copy()
        ids, n = eng.legal_actions()
        for g in np.flatnonzero(~eng.over)[::5]:
            seen = read_position(obs[g], variant, eng.table, eng.rules.places)
            sim.set_position(
                slice(None), _relative_hands(eng, g)[None], seen.played, 0, seen.table, seen.table_seat,
                seen.passes, seen.opening, hist_action=seen.hist_action, hist_seat=seen.hist_seat,
                passed_on=seen.passed_on,
            )  # fmt: skip
            np.testing.assert_allclose(sim.observe()[0], obs[g], atol=1e-6)
            checked += 1
        acts = agent.act(obs, ids, n)
        acts[eng.over] = -1
        eng.step(acts)
    assert checked > 150


def test_guesses_keep_the_own_hand_and_deal_only_unseen_cards():
    eng = Engine("taiwan", num_matches=1, seed=2)
    for _ in range(9):
        eng.step(eng.legal_actions()[0][:, 0])
    seen = read_position(eng.observe()[0], eng.variant, eng.table, eng.rules.places)
    hands = deal_hands(np.random.default_rng(0), seen, 50)
    unseen = np.bitwise_or.reduce(BITS[seen.unseen])
    assert (hands[:, 0] == seen.hand).all()
    for row in hands:
        assert not np.bitwise_and.reduce(row[1:]) and all(int(h) & ~int(unseen) == 0 for h in row[1:])
        assert [bin(int(h)).count("1") for h in row] == seen.left.tolist()
    assert len({tuple(r) for r in hands.tolist()}) > 40  # guesses, not one deal


# ---------------------------------------------------------------- the search


def _network(name: str = "taiwan"):
    pytest.importorskip("torch")
    from bigtwo.agents.pretrained import weights_path
    from bigtwo.train.policy_agent import load_policy_agent

    return load_policy_agent(weights_path(name), name, device="cpu")


def _positions(variant_name: str, matches: int, moves: int, seed: int) -> Engine:
    eng = Engine(variant_name, num_matches=matches, seed=seed)
    agent = HeuristicAgent(eng.variant, seed=0)
    for _ in range(moves):
        ids, n = eng.legal_actions()
        acts = agent.act(eng.observe(), ids, n)
        acts[eng.over] = -1
        eng.step(acts)
    return eng


def test_lookahead_plays_legal_plays_the_same_for_the_same_seed_and_overrules_its_network(monkeypatch):
    """Every choice is a legal play; the same seed makes the same choices; and the search is no
    copy of its network: on some positions it plays another of the network's top plays."""
    from bigtwo.agents.lookahead import LookaheadAgent

    monkeypatch.delenv("BIGTWO_PRETRAINED_DIR", raising=False)
    net = _network()
    eng = _positions("taiwan", 24, 6, seed=4)
    obs, (ids, n) = eng.observe().copy(), eng.legal_actions()
    first = LookaheadAgent(eng.variant, net, seed=3, samples=8).act(obs, ids, n)
    again = LookaheadAgent(eng.variant, net, seed=3, samples=8).act(obs, ids, n)
    assert first.tolist() == again.tolist()
    assert all(a in ids[g, : n[g]] for g, a in enumerate(first))
    alone = net.act(obs, ids, n)
    assert (first != alone).any(), "the search never departed from its network"


def test_the_searchs_scores_alone_are_the_networks_scores(monkeypatch):
    """The play-outs ask the shipped (advised) network for scores alone (``values=False``, its
    quicker pass): the very scores of the full pass, its values left NaN."""
    monkeypatch.delenv("BIGTWO_PRETRAINED_DIR", raising=False)
    net = _network("hong-kong")
    eng = _positions("hong-kong", 32, 5, seed=2)
    obs, (ids, n) = eng.observe().copy(), eng.legal_actions()
    rows = np.flatnonzero(n > 0)
    full, values = net.evaluate(obs[rows], ids[rows], n[rows])
    alone, none = net.evaluate(obs[rows], ids[rows], n[rows], values=False)
    assert np.array_equal(full, alone) and np.isfinite(values).all() and np.isnan(none).all()


def test_lookahead_with_a_value_head_reads_it_and_refuses_a_network_without_one(monkeypatch):
    """``plies >= 0`` reads the network's value head at the leaves; a network whose critic read the
    global state has none there, and the search says so instead of guessing (``plies=-1`` plays it)."""
    torch = pytest.importorskip("torch")
    from bigtwo.agents.lookahead import LookaheadAgent
    from bigtwo.env.engine.state import state_size
    from bigtwo.train.networks import ActionScorer, action_features
    from bigtwo.train.policy_agent import PolicyAgent

    monkeypatch.delenv("BIGTWO_PRETRAINED_DIR", raising=False)
    eng = _positions("taiwan", 6, 5, seed=2)
    obs, (ids, n) = eng.observe().copy(), eng.legal_actions()
    valued = LookaheadAgent(eng.variant, _network(), seed=0, samples=4, plies=0)
    assert all(a in ids[g, : n[g]] for g, a in enumerate(valued.act(obs, ids, n)))
    torch.manual_seed(0)
    blind = ActionScorer(obs.shape[1], action_features(eng.variant), 16, 1, 8, critic_size=state_size(4))
    policy = PolicyAgent(eng.variant, blind, device="cpu")
    assert np.isnan(policy.values(obs)).all()
    with pytest.raises(ValueError, match="no value head of the observation.*plies=-1"):
        LookaheadAgent(eng.variant, policy, seed=0, samples=4, plies=0).act(obs, ids, n)
    played_out = LookaheadAgent(eng.variant, policy, seed=0, samples=4, plies=-1).act(obs, ids, n)
    assert all(a in ids[g, : n[g]] for g, a in enumerate(played_out))


def test_lookahead_by_name_takes_its_declared_options_and_the_scratch_network(monkeypatch):
    pytest.importorskip("torch")
    from bigtwo.agents import make_agent

    monkeypatch.delenv("BIGTWO_PRETRAINED_DIR", raising=False)
    agent = make_agent("lookahead:samples=4,top_k=2,trust=2", "taiwan", seed=0)
    assert repr(agent) == "lookahead('taiwan', samples=4, top_k=2, trust=2)" and agent.provenance is not None
    for bad, said in [("plies=-2", "plies must be an integer >= -1"), ("samples=0", "samples must be a positive")]:
        with pytest.raises(ValueError, match=said):
            make_agent(f"lookahead:{bad}", "taiwan")
    with pytest.raises(ValueError, match="no from-scratch network for variant 'japan'.*taiwan"):
        make_agent("lookahead:network=scratch", "japan")
    scratch = make_agent("lookahead:network=scratch,samples=4", "taiwan", seed=0)
    assert "--config scratch" in scratch.provenance["sessions"][0]["command"]
