"""``turn_order`` (RULES.md "Deal and seats"): each game of a match has a play order.

* ``alternate``: a scripted 4-player ``online-cn`` match (``buy_in`` 4) whose second game is
  reversed: the turn passes to seat - 1, the last-card duty falls on the seat before the one-card
  holder in that order, and the table-stakes settlement runs from the winner in that order. Every
  step and both games' payoffs are checked against the plain-Python reference and against
  numbers worked out by hand (which differ from the forward game's).
* Liability in a reversed game: the breaching seat is the one before the winner in that order.
* ``random``: the same seed gives the same directions, a batch equals single games, both
  directions come up, first games included.
* What a user sees: ``Engine.reverse``, ``Game.reversed`` / ``direction`` / ``play_order``, the
  rendered arrow, observations relative to the observer in the game's order, the AEC env's
  ``agent_selection``, ``set_position(reverse=...)`` and its bad values.
"""

from __future__ import annotations

import random
import re

import numpy as np
import pytest

import bigtwo.env
from bigtwo.env import Game
from bigtwo.env.engine import kernels as K
from bigtwo.env.engine.engine import Engine
from bigtwo.env.engine.observation import decode_observation
from bigtwo.env.rules.cards import cards_to_mask, parse_cards
from bigtwo.env.rules.variant import load_variant

try:  # tests/ may or may not be a package
    import tests.reference as reference
except ModuleNotFoundError:  # pragma: no cover - rootdir-less layout
    import reference  # type: ignore[no-redef]

# Game 1, forward (0 -> 1 -> 2 -> 3): 3D opens; seat 3 answers with its highest card when seat 0
# holds one; seat 0 goes out. Pairwise: +3 for seat 0, -1 for each other seat.
GAME_1 = ["3D KH", "4D 5H", "6D 7H", "8D 9H"]
PLAYS_1 = [(0, "3D"), (1, "5H"), (2, "7H"), (3, "9H"), (0, "KH")]
# Game 2, reversed (0 -> 3 -> 2 -> 1), led by game 1's winner.
GAME_2 = ["3C KS", "9D", "7C 8C", "4C 5C 6C"]
PLAYS_2 = [(0, "3C"), (3, "4C"), (2, "8C"), (1, "pass"), (0, "KS")]


def masks(hands: list[str]) -> np.ndarray:
    return np.array([cards_to_mask(parse_cards(h)) for h in hands], dtype=np.uint64)


def ids(cards: str) -> frozenset[int]:
    return frozenset(int(c) for c in parse_cards(cards)) if cards != "pass" else frozenset()


def play(eng: Engine, ref: reference.RefGame, seat: int, cards: str) -> np.ndarray:
    """Step the engine and the reference with the same play after checking both agree on the turn."""
    assert int(eng.current[0]) == ref.current == seat
    legal, n = eng.legal_actions()
    assert {frozenset(int(c) for c in eng.table.decode(a)) for a in legal[0, : n[0]]} == ref.legal()
    result = eng.step([eng.table.encode(cards)])
    ref.play(ids(cards))
    return result.payoffs[0].copy()


def test_alternate_reverses_order_duty_and_settlement_in_game_two() -> None:
    v = load_variant("online-cn", cards_per_player=2, games=2, buy_in=4)
    assert v.turn_order == "alternate"  # online-cn's own setting
    eng = Engine(v, 1, seed=5)
    eng.reset(seed=5, hands=[GAME_1])
    match = reference.RefMatch(v)
    game = match.new_game([ids(h) for h in GAME_1])
    assert not eng.reverse[0] and not game.reverse
    for seat, cards in PLAYS_1:
        if seat == 3:  # forward: seat 3 is before seat 0, which holds one card
            assert eng.state.duty[0] == K.DUTY_ANSWER_HIGHEST
        payoffs = play(eng, game, seat, cards)
    assert payoffs.tolist() == game.payoffs() == [3.0, -1.0, -1.0, -1.0]
    match.record(game)

    # game 2 is dealt reversed; load the scripted deal, keeping the engine's own direction
    S = eng.state
    assert eng.reverse[0] and int(eng.current[0]) == 0 and int(S.games_played[0]) == 1
    eng.set_position(
        0, masks(GAME_2), current=0, match_scores=S.match_scores[0].copy(), games_played=1, reverse=eng.reverse[0]
    )
    game = match.new_game([ids(h) for h in GAME_2])
    assert game.reverse and game.leader == 0
    # seat 1 (one card) is next after seat 0 only going forward: no duty for the lead
    assert S.duty[0] == K.DUTY_NONE
    for seat, cards in PLAYS_2:
        if seat == 2:  # seat 1 holds one card and plays after seat 2 in this game
            assert (S.duty[0], S.duty_card[0]) == (K.DUTY_ANSWER_HIGHEST, parse_cards("8C")[0])
        if seat == 1:  # seat 0 holds one card
            assert S.duty[0] == K.DUTY_ANSWER_HIGHEST
        payoffs = play(eng, game, seat, cards)
        if seat == 0 and cards == "3C":
            assert int(eng.current[0]) == 3  # seat - 1 plays next
    # seat 3 owes 2 to the winner and 1 to each of seats 1 and 2, with 3 at the table: after the
    # winner, the settlement reaches seat 2 before seat 1 (forward it would pay seat 1)
    bankroll = [v.buy_in + t for t in match.totals]
    assert bankroll == [7.0, 3.0, 3.0, 3.0]
    assert payoffs.tolist() == game.payoffs(bankroll) == [4.0, -1.0, 0.0, -3.0]
    forward = reference.RefGame(v, [ids(h) for h in GAME_2], leader=0)
    forward.hands, forward.over, forward.winner = [set(h) for h in game.hands], True, 0
    assert forward.payoffs(bankroll) == [4.0, 0.0, -1.0, -3.0]
    assert eng.state.match_over[0] and eng.over[0]
    np.testing.assert_array_equal(S.match_scores[0], [7.0, -2.0, -1.0, -4.0])


def test_third_game_of_alternate_is_forward_again() -> None:
    v = load_variant("online-cn", cards_per_player=3, games=3)
    eng = Engine(v, 8, seed=11)
    rng = random.Random(0)
    seen: set[tuple[int, bool]] = set()
    while not eng.over.all():
        legal, n = eng.legal_actions()
        actions = np.array([legal[g, rng.randrange(n[g])] if n[g] else -1 for g in range(8)])
        eng.step(actions)
        for g in np.flatnonzero(~eng.over):
            seen.add((int(eng.state.games_played[g]), bool(eng.reverse[g])))
    assert seen == {(0, False), (1, True), (2, False)}


def test_liability_in_a_reversed_game_falls_on_the_seat_before_the_winner() -> None:
    """Seat 0 leads with seat 3 (next in a reversed game) on one card, breaks the rule (a low
    single when its highest is due) and seat 3 goes out: seat 0 is liable."""
    v = load_variant("online-cn")
    hands = ["3C 4C", "8S 9S", "6H 7H", "5S"]
    eng = Engine(v, 1, seed=0)
    eng.set_position(0, masks(hands), current=0, reverse=True)
    assert (eng.state.duty[0], eng.state.duty_card[0]) == (K.DUTY_LEAD_HIGHEST, parse_cards("4C")[0])
    ref = reference.RefGame(v, [ids(h) for h in hands], leader=0, reverse=True)
    play(eng, ref, 0, "3C")
    assert eng.state.breach[0, 3]  # flagged on the one-card seat
    payoffs = play(eng, ref, 3, "5S")
    assert ref.liable_seat() == 0
    # pairwise before liability: seat 3 +5, seat 0 +1, seats 1 and 2 -3; seat 0 pays it all
    assert payoffs.tolist() == ref.payoffs() == [-5.0, 0.0, 0.0, 5.0]
    # forward, seat 1 is next after seat 0 and holds two cards: no duty, no liability
    fwd = Engine(v, 1, seed=0)
    fwd.set_position(0, masks(hands), current=0)
    assert fwd.state.duty[0] == K.DUTY_NONE
    fwd.step([fwd.table.encode("3C")])
    assert int(fwd.current[0]) == 1 and not fwd.state.breach[0].any()


def test_random_directions_are_seeded_and_batch_equals_singles() -> None:
    v = load_variant("taiwan", cards_per_player=3, games=6, turn_order="random")
    seeds = list(range(100, 124))

    def directions(eng: Engine, rng: random.Random) -> list[list[bool]]:
        """Each game's direction, per match, playing random legal moves."""
        n = eng.num_matches
        out: list[list[bool]] = [[bool(eng.reverse[g])] for g in range(n)]
        while not eng.over.all():
            legal, counts = eng.legal_actions()
            actions = np.array([legal[g, rng.randrange(counts[g])] if counts[g] else -1 for g in range(n)])
            result = eng.step(actions)
            for g in np.flatnonzero(result.game_over & ~result.match_over):
                out[g].append(bool(eng.reverse[g]))
        return out

    batch = directions(Engine(v, len(seeds), seed=seeds), random.Random(1))
    assert batch == directions(Engine(v, len(seeds), seed=seeds), random.Random(1))  # same seed, same draws
    # the draw depends on the game's seed and deal number only, not on the play or the batch
    singles = [directions(Engine(v, 1, seed=s), random.Random(g))[0] for g, s in enumerate(seeds)]
    assert singles == batch
    firsts = [d[0] for d in batch]
    assert any(firsts) and not all(firsts)  # first games are drawn too
    flat = [x for d in batch for x in d]
    assert 0.3 < np.mean(flat) < 0.7 and len(flat) == 6 * len(seeds)
    assert Game(v, seed=seeds[3]).reversed == batch[3][0]  # the single-game view deals alike


def test_fixed_never_reverses() -> None:
    eng = Engine(load_variant("taiwan", cards_per_player=2, games=4), 16, seed=0)
    rng = random.Random(2)
    while not eng.over.all():
        assert not eng.reverse.any()
        legal, n = eng.legal_actions()
        eng.step(np.array([legal[g, rng.randrange(n[g])] if n[g] else -1 for g in range(16)]))


def test_observation_is_relative_in_the_games_order() -> None:
    hands = ["3C 4C 5C", "6D", "7H 8H", "9S 10S QS KS"]
    played = masks(["", "", "", "JS"])
    eng = Engine(load_variant("taiwan"), 1, seed=0)
    table = eng.table.encode("JS")
    eng.set_position(0, masks(hands), played, current=2, table_action=table, table_seat=3, reverse=True)
    seen = decode_observation(eng.observe(seats=np.array([2]))[0], 4)
    # from seat 2, reversed: relative seats 0, 1, 2, 3 are seats 2, 1, 0, 3
    np.testing.assert_allclose(seen["cards_left_fraction"] * 13, [2, 1, 3, 4])
    assert seen["table_seat"] == 3  # seat 3 played the JS: three places on from seat 2
    eng.set_position(0, masks(hands), played, current=2, table_action=table, table_seat=3, passes=2)
    seen = decode_observation(eng.observe(seats=np.array([2]))[0], 4)
    np.testing.assert_allclose(seen["cards_left_fraction"] * 13, [2, 4, 3, 1])
    assert seen["table_seat"] == 1


def test_game_shows_the_direction() -> None:
    v = load_variant("online-cn", games=2)
    game = Game(v, seed=4)
    assert not game.reversed and game.direction == "counterclockwise" and game.play_order() == [0, 1, 2, 3]
    assert "play order ↺ counterclockwise: seat 0 → seat 1 → seat 2 → seat 3" in str(game)
    while game.game_number == 1:
        game.play(game.legal_plays()[-1])
    assert game.reversed and game.engine.reverse[0]
    assert game.direction == "clockwise" and game.play_order(2) == [2, 1, 0, 3]
    line = "play order ↻ clockwise (reversed this game): seat 0 → seat 3 → seat 2 → seat 1"
    assert line in str(game) and line in game._repr_html_()
    with pytest.raises(ValueError, match="first must be a seat 0..3"):
        game.play_order(4)


def test_aec_agent_selection_follows_the_reversed_order() -> None:
    env = bigtwo.env.env("online-cn", games=2, cards_per_player=4)
    env.reset(seed=3)
    raw = env.unwrapped
    steps = []  # (game reversed, seat to act next - seat that acted) within a game
    for agent in env.agent_iter():
        obs, _reward, termination, truncation, _info = env.last()
        if termination or truncation:
            env.step(None)
            continue
        seat = raw.possible_agents.index(agent)
        assert seat == int(raw.engine.current[0])
        number, reversed_game = raw.game.game_number, raw.game.reversed
        env.step(int(np.flatnonzero(obs["action_mask"])[-1]))
        if not raw.engine.over[0] and raw.game.game_number == number:
            steps.append((reversed_game, (int(raw.engine.current[0]) - seat) % 4))
    # a play or pass hands the turn on (a trick won by passes goes to the seat after the last
    # passer too); 0: a 2 ended the trick and its player leads again
    assert {d for rev, d in steps if rev} == {3} or {d for rev, d in steps if rev} == {0, 3}
    assert {d for rev, d in steps if not rev} in ({1}, {0, 1})


@pytest.mark.parametrize("bad", ["yes", 1, [1, 0], np.array([0.5])])
def test_set_position_rejects_a_bad_reverse(bad: object) -> None:
    eng = Engine("taiwan", 1, seed=0)
    with pytest.raises(ValueError, match="reverse must be True/False"):
        eng.set_position(0, masks(["3C", "4C", "5C", "6C"]), reverse=bad)  # type: ignore[arg-type]


def test_variants_listing_shows_the_setting() -> None:
    assert re.search(r"\n  turn_order +alternate(\n|$)", load_variant("online-cn").describe())
    assert re.search(r"\n  turn_order +fixed(\n|$)", load_variant("taiwan").describe())
    assert re.search(r"\n  jqka2_suited +no_play(\n|$)", load_variant("taiwan").describe())
