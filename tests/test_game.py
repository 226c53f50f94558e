"""The single-game view: scripted games, illegal plays, dealt hands, matches and drawing."""

from __future__ import annotations

import random

import numpy as np
import pytest
from conftest import NAMED_VARIANTS

import bigtwo.env.envs.render
from bigtwo.env import Game

# Four seats, two cards each: seat 0 opens with the 3C, seat 2 takes the trick with the 2S and
# goes out with the 5S.
SHORT = ["3C 9S", "4D 4H", "5S 2S", "6D 7D"]


def short_game() -> Game:
    return Game("taiwan", hands=SHORT, cards_per_player=2)


def snapshot(game: Game) -> tuple:
    S = game.engine.state
    return (
        tuple(a.copy() for a in S),
        game.hands,
        game.history,
        game.table,
        game.current_player,
        game.results,
    )


def same(a: tuple, b: tuple) -> bool:
    arrays_a, *rest_a = a
    arrays_b, *rest_b = b
    return all(np.array_equal(x, y) for x, y in zip(arrays_a, arrays_b, strict=True)) and rest_a == rest_b


def test_scripted_short_game() -> None:
    g = short_game()
    assert g.hands == [["3C", "9S"], ["4D", "4H"], ["5S", "2S"], ["6D", "7D"]]
    assert g.current_player == 0 and g.table == [] and g.table_player is None
    assert g.opening_card == "3C"
    assert g.legal_plays() == [["3C"]]
    assert g.payoffs is None and g.winner is None and not g.is_over
    g.play("3C")
    assert g.table == ["3C"] and g.table_kind == "single" and g.table_player == 0
    assert g.legal_plays() == [[], ["4D"], ["4H"]]
    g.play(["4h"])
    g.play("2♠")
    assert g.legal_plays() == [[]]  # nothing of seat 3 beats the 2S
    g.play("pass")
    g.play([])
    g.play("PASS")
    assert g.current_player == 2 and g.table == []  # everyone passed: seat 2 leads
    assert g.legal_plays() == [["5S"]]
    g.play("5S")
    assert g.is_over and g.current_player is None
    assert g.winner == 2
    assert g.payoffs == [-1.0, -1.0, 0.0, -2.0]
    assert g.scores == g.payoffs and g.game_number == 1
    assert g.history == [(0, ["3C"]), (1, ["4H"]), (2, ["2S"]), (3, []), (0, []), (1, []), (2, ["5S"])]
    assert [r.winner for r in g.results] == [2]
    with pytest.raises(ValueError, match="match is over"):
        g.play("9S")


def test_hands_sorted_by_variant_card_order() -> None:
    hands = ["3D 3C 3H 3S", "4D 4C 4H 4S", "5D 5C 5H 5S", "6D 6C 6H 6S"]
    assert Game("taiwan", hands=hands, cards_per_player=4).hands[0] == ["3D", "3C", "3H", "3S"]
    # Pusoy Dos ranks clubs < spades < hearts < diamonds.
    assert Game("pusoy-dos", hands=hands, cards_per_player=4).hands[0] == ["3C", "3S", "3H", "3D"]


@pytest.mark.parametrize(
    ("play", "why"),
    [
        ("9S", "the first play of the game must contain 3C"),
        ("pass", "the leader cannot pass"),
        ("4D", "not in hand: 4D"),
        ("3C 9S", "is not a play in variant 'taiwan'"),
        ("3X", "not a card: '3X'"),
        ("3C 3C", "appears twice"),
        (42, "a play is card text"),
    ],
)
def test_illegal_play_raises_and_changes_nothing(play: object, why: str) -> None:
    g = short_game()
    before = snapshot(g)
    with pytest.raises(ValueError, match=why):
        g.play(play)  # type: ignore[arg-type]
    assert same(before, snapshot(g))


def test_illegal_answers_name_the_reason() -> None:
    g = Game("taiwan", hands=["3C 4C", "5D 9S", "4S 4H", "6D 7D"], cards_per_player=2)
    g.play("3C")
    g.play("5D")
    before = snapshot(g)
    with pytest.raises(ValueError, match="seat 2 cannot play 4S: it does not beat single 5D"):
        g.play("4S")
    with pytest.raises(ValueError, match=r"seat 2 cannot play 4H 4S: the table holds 1 card\(s\) \(5D\)"):
        g.play("4S 4H")
    with pytest.raises(ValueError, match="seat 2 cannot play 5D: not in hand"):
        g.play("5D")
    assert same(before, snapshot(g))
    assert g.explain_illegal(g.encode("4S")) == "it does not beat single 5D"
    assert g.explain_illegal(0) is None and g.is_legal(0)


@pytest.mark.parametrize(
    ("hands", "why"),
    [
        (["3C 9S", "4D 4H", "5S 2S"], "hands must give 4 seats"),
        (["3C 9S", "4D", "5S 2S", "6D 7D"], "seat 1 has 1 cards, the variant deals 2"),
        (["3C 9S", "4D 3C", "5S 2S", "6D 7D"], r"3C dealt to more than one seat"),
        (["3C 9S", "4D 4Z", "5S 2S", "6D 7D"], "not a card: '4Z'"),
        ("3C 9S 4D 4H", "hands must be a list of 4 hands"),
        (["3C 9S", 7, "5S 2S", "6D 7D"], "seat 1: a hand is card text"),
    ],
)
def test_bad_hands(hands: object, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        Game("taiwan", hands=hands, cards_per_player=2)  # type: ignore[arg-type]


def test_failed_reset_changes_nothing() -> None:
    g = Game("taiwan", seed=5, games=3)
    before = snapshot(g)
    with pytest.raises(ValueError, match="more than one seat"):
        g.reset(seed=9, hands=[g.hands[0]] * 4)
    assert same(before, snapshot(g))


def test_seed_and_hands_as_text_ids_or_masks() -> None:
    assert Game("taiwan", seed=3).hands == Game("taiwan", seed=3).hands
    assert Game("taiwan", seed=3).hands != Game("taiwan", seed=4).hands
    by_ids = Game("taiwan", hands=[[1, 27], [4, 6], [11, 51], [12, 16]], cards_per_player=2)
    assert by_ids.hands == short_game().hands
    masks = np.array([sum(1 << c for c in h) for h in ([1, 27], [4, 6], [11, 51], [12, 16])], np.uint64)
    assert Game("taiwan", hands=masks, cards_per_player=2).hands == short_game().hands


def test_bad_variant_and_seed() -> None:
    with pytest.raises(ValueError, match="unknown variant 'mars'; allowed: hong-kong"):
        Game("mars")
    with pytest.raises(ValueError, match="field 'players' has bad value 5"):
        Game("taiwan", players=5)
    with pytest.raises(ValueError, match=r"seed -1 is not allowed: a seed is an integer 0\.\.2\*\*64-1"):
        Game("taiwan", seed=-1)


def test_match_of_several_games() -> None:
    rng = random.Random(0)
    g = Game("taiwan", seed=11, games=3, cards_per_player=3)
    numbers = []
    while not g.is_over:
        numbers.append(g.game_number)
        g.play(rng.choice(g.legal_plays()))
        if not g.is_over and g.winner is not None:
            assert g.history == [] or g.history[0][0] == g.results[-1].winner  # the winner leads
    assert sorted(set(numbers)) == [1, 2, 3] and g.game_number == 3
    assert [r.number for r in g.results] == [1, 2, 3]
    totals = np.sum([r.payoffs for r in g.results], axis=0)
    assert np.allclose(totals, g.scores)
    assert g.payoffs == list(g.results[-1].payoffs) and g.winner == g.results[-1].winner
    assert g.history == g.results[-1].history


def test_random_games_every_variant_finish() -> None:
    rng = random.Random(1)
    for name in NAMED_VARIANTS:
        g = Game(name, seed=rng.randrange(1000))
        while not g.is_over:
            g.play(rng.choice(g.legal_plays()))
        assert g.winner is not None and len(g.payoffs or []) == 4
        assert g.hands[g.winner] == []


def test_text_and_html_show_the_cards() -> None:
    g = short_game()
    g.play("3C")
    text = str(g)
    for hand in g.hands:
        assert " ".join(hand) in text
    assert "table: 3C (single) by seat 0" in text
    assert "> seat 1" in text and "seat 1 to play" in text
    html = g._repr_html_()
    assert "4♥" in html and "9♠" in html and "2♠" in html and "3♣" in html
    assert 'color:#c62828">4♦' in html  # diamonds and hearts in red
    assert 'color:#212121">9♠' in html
    assert "seat 1" in html
    assert repr(g) == "Game('taiwan', game 1 of 1, seat 1 to play)"
    hidden = bigtwo.env.envs.render.render_text(g, viewer=1)
    assert "4D 4H" in hidden and "9S" not in hidden and "(hidden)" in hidden
    for play in ("4H", "2S", "pass", "pass", "pass", "5S"):
        g.play(play)
    assert "over: seat 2 won; payoffs -1, -1, 0, -2" in str(g)
    with pytest.raises(ValueError, match="names must give 4 labels"):
        bigtwo.env.envs.render.render_text(g, names=["a"])
    with pytest.raises(ValueError, match=r"viewer must be a seat 0..3, -1 \(no hand\) or None, got 4"):
        bigtwo.env.envs.render.render_html(g, viewer=4)


@pytest.mark.parametrize("action", [999999, 5, 0, np.int64(5)])
def test_a_number_given_to_play_points_to_play_action(action: object) -> None:
    g = short_game()
    before = snapshot(g)
    with pytest.raises(ValueError, match=rf"got the number {int(action)}: .*call game\.play_action\({int(action)}\)"):
        g.play(action)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"ids 0\.\.19894; game\.legal_actions\(\) lists the legal ones"):
        g.encode(action)  # type: ignore[arg-type]
    assert same(before, snapshot(g))
    with pytest.raises(ValueError, match="a play is card text") as refused:
        g.play(True)  # type: ignore[arg-type]
    assert "play_action" not in str(refused.value)  # a bool is no action id
    g.play_action(g.encode("3C"))  # the way the error points to plays the id
    assert g.history == [(0, ["3C"])]


def test_play_action_checks_the_id() -> None:
    g = short_game()
    before = snapshot(g)
    for bad, why in ((-1, "out of range 0..19894"), (10**6, "out of range"), (2.5, "integer id"), (True, "integer id")):
        with pytest.raises(ValueError, match=why):
            g.play_action(bad)  # type: ignore[arg-type]
    assert same(before, snapshot(g))
    g.play_action(g.encode("3C"))
    assert g.history == [(0, ["3C"])]


def test_an_agent_plays_a_whole_game_through_play_action() -> None:
    from conftest import play_agent

    from bigtwo.agents.base import RandomAgent

    game = Game("taiwan", seed=3)
    agent = RandomAgent(game.variant, seed=0)
    moves = 0
    while not game.is_over:
        seat = game.current_player
        before = len(game.hands[seat])
        played = play_agent(game, agent)
        assert len(game.hands[seat]) == before - len(played)
        moves += 1
    assert game.winner is not None and moves == len(game.history)
    with pytest.raises(ValueError, match="over"):
        game.play_action(0)


@pytest.mark.parametrize("form", ["text", "masks"])
def test_a_bad_deal_is_refused_alike_by_the_engine_and_the_game(form: str) -> None:
    """One check of a given deal (``engine.check_deal``): the same words from ``Engine.reset`` (for
    match 0 of the batch) and ``Game``, cards named in the variant's order (pusoy-dos: C < S < H < D)."""
    from bigtwo.env.engine.engine import Engine
    from bigtwo.env.rules.cards import RANKS, cards_to_mask, parse_cards

    hands = [[rank + suit for rank in RANKS] for suit in "DCHS"]  # one suit per seat
    hands[3][:2] = ["3D", "3C"]  # seat 3 also holds seat 0's 3D and seat 1's 3C
    given = (
        [" ".join(h) for h in hands]
        if form == "text"
        else np.array([cards_to_mask(parse_cards(h)) for h in hands], np.uint64)
    )
    why = "3C 3D dealt to more than one seat"  # by card id the 3D comes first
    with pytest.raises(ValueError, match=f"^{why}$"):
        Game("pusoy-dos", hands=given)
    with pytest.raises(ValueError, match=f"^match 0: {why}$"):
        Engine("pusoy-dos", seed=1).reset(hands=given[None] if form == "masks" else given)
    with pytest.raises(ValueError, match="^seat 0 has 12 cards, the variant deals 13$"):
        Game("pusoy-dos", hands=[" ".join(h[1:] if seat == 0 else h) for seat, h in enumerate(hands)])


@pytest.mark.parametrize("first", [True, 1.0, -1, 4, "0"])
def test_play_order_refuses_what_is_no_seat(first: object) -> None:
    with pytest.raises(ValueError, match=r"first must be a seat 0\.\.3, got "):
        Game("taiwan", seed=1).play_order(first)  # type: ignore[arg-type]


def fresh_observation(game: Game, seat: int) -> np.ndarray:
    """``seat``'s observation computed by the engine now, never a kept one."""
    return game.engine.observe(np.array([seat]), np.empty((1, game.engine.obs_size), np.float32))[0]


@pytest.mark.parametrize("variant", ["taiwan", "hong-kong"])
def test_observation_is_what_the_engine_computes_at_every_step(variant: str) -> None:
    """The observation kept from a play's own kernel call is the one the engine computes, for every
    seat, through matches of several games; each call returns a new array."""
    game, rng = Game(variant, seed=5, games=2), random.Random(5)
    for _ in range(3):
        while not game.is_over:
            for seat in range(game.players):
                assert np.array_equal(game.observation(seat), fresh_observation(game, seat))
            first = game.observation()
            first[:] = -7.0  # a caller's copy: writing to it changes nothing the game keeps
            assert np.array_equal(game.observation(), fresh_observation(game, game.current_player))
            game.play_action(rng.choice(list(game.legal_actions())))
        game.reset(rng.randrange(1000))


def test_observation_follows_changes_made_through_the_engine() -> None:
    """A kept observation is not served once the engine's state changed by another way in (its
    own ``step``, ``reset`` or ``set_position``)."""
    game = Game("taiwan", seed=3)
    game.play_action(int(game.legal_actions()[-1]))
    seat = game.current_player
    game.engine.step(game.legal_actions()[-1:].astype(np.int64))
    assert game.current_player != seat
    assert np.array_equal(game.observation(seat), fresh_observation(game, seat))
    game.play_action(int(game.legal_actions()[0]))
    seat = game.current_player
    game.engine.reset(11)
    assert np.array_equal(game.observation(seat), fresh_observation(game, seat))
    game.play_action(int(game.legal_actions()[0]))
    seat = game.current_player
    game.engine.set_position(0, game.engine.state.hands[:1].copy(), current=seat)
    assert np.array_equal(game.observation(seat), fresh_observation(game, seat))


@pytest.mark.parametrize("seat", [-1, 4, 1.5, "0", True])
def test_observation_refuses_what_is_no_seat(seat: object) -> None:
    with pytest.raises(ValueError, match=r"seat must be a seat number 0\.\.3"):
        Game("taiwan", seed=0).observation(seat)  # type: ignore[arg-type]
