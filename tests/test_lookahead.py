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
