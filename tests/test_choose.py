"""One position, one call: ``agent.choose(game)`` gives the play of the seat to act, for every agent.

What card-game RL users ask first ("load a trained agent and get its move for this position"):
no batch axes to build, the game left as it was, and clear errors for a finished match, another
variant's agent and an unbatched call to ``act``.
"""

from __future__ import annotations

import numpy as np
import pytest

from bigtwo.agents import make_agent
from bigtwo.env import Game

HANDS = [
    "3C 4D 5H 6S 7C 8D 9H 10S JC QD KH AS 2C",
    "3D 4H 5S 6C 7D 8H 9S 10C JD QH KS AC 2D",
    "3H 4S 5C 6D 7H 8S 9C 10D JH QS KC AD 2H",
    "3S 4C 5D 6H 7S 8C 9D 10H JS QC KD AH 2S",
]
AGENTS = ["random", "greedy", "heuristic", "search:simulations=8", "strong:simulations=0", "strong:simulations=8"]


def _position() -> Game:
    game = Game("taiwan", seed=3)
    game.reset(hands=HANDS)
    for cards in ["3C", "4H", "5C", []]:
        game.play(cards)
    return game


@pytest.mark.parametrize("spec", AGENTS)
def test_every_agent_chooses_a_legal_play_for_a_given_position_and_leaves_it_alone(spec: str) -> None:
    if spec.startswith("strong"):
        pytest.importorskip("torch")
    game = _position()
    before = (game.hands, game.history, game.current_player)
    agent = make_agent(spec, game.variant, seed=0)
    cards = agent.choose(game)
    assert (game.hands, game.history, game.current_player) == before  # not changed
    assert cards in game.legal_plays()
    action = make_agent(spec, game.variant, seed=0).choose_action(game)
    assert game.cards_of(action) == cards  # the same play as an id, from the same seed
    game.play(cards)  # and it plays


def test_a_checkpoint_chooses_like_the_batch_call(trained_run) -> None:
    from bigtwo.train.checkpoint import latest_checkpoint

    path = latest_checkpoint(trained_run)
    game = _position()
    agent = make_agent(str(path), game.variant, seed=0)
    legal = np.asarray(game.legal_actions())
    batch = int(agent.act(game.observation()[None], legal[None], np.array([legal.size]))[0])
    assert agent.choose(game) == game.cards_of(batch)


def test_choose_refuses_a_finished_match_and_another_variants_agent() -> None:
    game = Game("taiwan", seed=1)
    greedy = make_agent("greedy", "taiwan")
    while not game.is_over:
        game.play(greedy.choose(game))
    with pytest.raises(ValueError, match="the match is over"):
        greedy.choose(game)
    with pytest.raises(ValueError, match="make the agent for the game's variant"):
        make_agent("greedy", "hong-kong").choose(Game("taiwan", seed=1))


def test_act_given_one_unbatched_position_points_to_choose() -> None:
    game = _position()
    legal = np.asarray(game.legal_actions())
    with pytest.raises(ValueError, match=r"act takes a batch.*use agent\.choose\(game\)"):
        make_agent("heuristic", game.variant).act(game.observation(), legal, legal.size)
