"""``Variant.worst_payoff``: a floor under one seat's payoff in one game, for every scoring.

The trainers divide rewards by it (``TrainConfig.resolved_reward_scale``), so it must hold in
play: random games of every scoring never pay a seat less, and under ``cards`` scoring a seat
that keeps its whole hand scores exactly it.
"""

from __future__ import annotations

import numpy as np
import pytest

from bigtwo.env import Engine, load_variant


def lowest_payoff(variant, games: int, seed: int) -> float:
    """The lowest payoff any seat got in ``games`` matches of uniformly random legal play."""
    eng = Engine(variant, num_matches=games, seed=seed)
    rng = np.random.default_rng(seed)
    lowest = np.inf
    while not eng.state.over.all():
        ids, counts = eng.legal_actions()
        pick = (rng.random(games) * np.maximum(counts, 1)).astype(np.int64)
        actions = np.where(eng.state.over, -1, ids[np.arange(games), pick])
        res = eng.step(actions)
        if res.game_over.any():
            lowest = min(lowest, float(res.payoffs[res.game_over].min()))
    return lowest


@pytest.mark.parametrize("scoring", ["cards", "tiered", "pairwise", "win_loss", "collect"])
@pytest.mark.parametrize(("players", "cards", "twos"), [(4, 13, 1), (3, 5, 2), (2, 3, 3)])
def test_no_game_pays_less_than_the_worst_payoff(scoring: str, players: int, cards: int, twos: int) -> None:
    variant = load_variant(
        "taiwan", scoring=scoring, players=players, cards_per_player=cards, penalty_multiplier_for_twos=twos, unit=2
    )
    assert lowest_payoff(variant, games=200, seed=players * 10 + cards) >= variant.worst_payoff


def test_worst_payoff_values_and_scaling() -> None:
    assert load_variant("taiwan").worst_payoff == -13.0
    assert load_variant("japan").worst_payoff == -39.0  # 3 x 13 cards
    assert load_variant("online-cn").worst_payoff == -39.0  # settles with 3 other seats
    assert load_variant("taiwan", scoring="win_loss").worst_payoff == -1.0
    assert load_variant("taiwan", unit=0.5, penalty_multiplier_for_twos=2).worst_payoff == -13.0
    assert load_variant("hong-kong", players=2, cards_per_player=26).worst_payoff == -26.0
    assert load_variant("hong-kong", scoring="collect").worst_payoff == -13.0
    assert load_variant("hong-kong", scoring="collect", tiers=[[10, 2], [13, 3]]).worst_payoff == -39.0
    assert load_variant("hong-kong", scoring="collect", tiers=[[10, 2], [14, 3]]).worst_payoff == -26.0


def test_cards_scoring_reaches_the_worst_payoff() -> None:
    # One card each: the opening card's holder goes out at once, the other keeps its whole hand.
    variant = load_variant("taiwan", players=2, cards_per_player=1)
    assert lowest_payoff(variant, games=50, seed=1) == variant.worst_payoff == -1.0
