"""A position described by what one seat knows (``bigtwo.env.Position``), ``bigtwo suggest``, a variant
printed as YAML (``bigtwo variants NAME --yaml``), and the first hour's clear errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from bigtwo.agents import make_agent
from bigtwo.cli import main
from bigtwo.env import Game, Position, load_variant
from bigtwo.env.rules.cards import card_texts

HAND = "3D 5H 9C 9D KS 2S"
PLAYED = {1: "3C 4C 5C 6C 7C JD", 2: "4H 4S 10S 10H", 3: "5S 8S"}


def test_a_position_loads_into_a_game_that_shows_the_seat_exactly_what_it_knows() -> None:
    pos = Position.parse("taiwan", hand=HAND, table="8S", table_by=3, played=PLAYED)
    assert pos.left == (6, 7, 9, 11) and pos.passes == 0 and pos.opening == -1
    games = [pos.game(seed) for seed in (0, 1)]
    for game in games:
        assert game.current_player == 0 and game.table == ["8S"] and game.table_player == 3
        assert game.cards_left == [6, 7, 9, 11] and sorted(game.hands[0]) == sorted(HAND.split())
    # other hands differ between seeds, but the seat's observation (all any agent reads) does not
    assert games[0].hands[1] != games[1].hands[1]
    assert np.array_equal(games[0].observation(0), games[1].observation(0))
    played = {card for cards in PLAYED.values() for card in cards.split()}
    for game in games:  # the hidden hands hold only cards the seat has not seen
        hidden = {card for seat in (1, 2, 3) for card in game.hands[seat]}
        assert not hidden & (played | set(HAND.split()))


def test_the_table_play_by_a_seat_further_back_means_the_seats_after_it_passed() -> None:
    pos = Position.parse("hong-kong", hand="3D 4D 5D", table="9S 9H", table_by=1, left={2: 5, 3: 6})
    assert pos.passes == 2 and pos.table_by == 1
    game = pos.game()
    assert game.passes == 2 and game.table_player == 1 and game.cards_left[2:] == [5, 6]
    assert all(len(play) in (0, 2) for play in game.legal_plays())


def test_the_history_gives_the_recent_moves_and_the_table() -> None:
    history = [(1, "6C"), (2, "pass"), (3, "9S"), (1, "pass"), (2, "JD")]
    pos = Position.parse("taiwan", hand=HAND, history=history)
    assert pos.table == tuple(pos.table) and card_texts(pos.table) == ["JD"] and pos.table_by == 2 and pos.passes == 1
    assert pos.played[1] and pos.left[1] == 12  # 6C counted as played
    game = pos.game()
    hist_seat = game.engine.state.hist_seat[0]
    assert list(hist_seat[:5]) == [2, 1, 3, 2, 1] and hist_seat[5] == -1
    passed_on = game.engine.state.passed_on[0]
    assert passed_on[2, 0] == game.encode("6C") and passed_on[1, 0] == game.encode("9S")


def test_a_first_play_must_hold_the_opening_card() -> None:
    pos = Position.parse("hong-kong", hand="3D 4C 5H 6S 8D 9D 10D JD QD KD AD 2D 2C")
    assert card_texts([pos.opening]) == ["3D"]
    assert "3D" in make_agent("heuristic", "hong-kong").choose(pos.game())
    with pytest.raises(ValueError, match="must hold 3D"):
        Position.parse("hong-kong", hand="4C 5H 6S 8D 9D 10D JD QD KD AD 2D 2C 3C")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"hand": "3D 3D"}, "more than once|twice|duplicate"),
        ({"hand": "3X"}, "hand: .*3X"),
        ({"hand": ""}, "you hold no card"),
        ({"hand": HAND, "table": "8S 9S"}, "table: .*not a play"),
        ({"hand": HAND, "table": "8S", "table_by": 4}, r"1 \(the next seat\) .. 3"),
        ({"hand": HAND, "table_by": 2}, "give table too"),
        ({"hand": HAND, "played": {1: "3D"}}, "in your hand and played by seat 1"),
        ({"hand": HAND, "played": {1: "4C", 2: "4C"}}, "played by seats 1 and 2"),
        ({"hand": HAND, "left": {1: 14}}, r"holds 1..13, got 14"),
        ({"hand": HAND, "history": [(1, "3C 4D")]}, "history"),
        ({"hand": HAND, "history": ["1:3C"]}, r"a move is \(seat, cards\)"),
    ],
)
def test_bad_positions_are_refused_naming_what_is_allowed(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Position.parse("taiwan", **kwargs)


def test_suggest_prints_the_agents_play_and_the_position_without_hidden_cards(capsys: pytest.CaptureFixture) -> None:
    args = ["suggest", "--variant", "taiwan", "--hand", HAND, "--table", "8S", "--agent", "greedy"]
    args += [f"--played={seat}={cards}" for seat, cards in PLAYED.items()]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "seat 3: 11 cards left; played 5S 8S" in out and "greedy plays: 9D" in out
    assert main([*args, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"agent": "greedy", "play": ["9D"], "pass": False}
    expected = make_agent("greedy", "taiwan").choose(
        Position.parse("taiwan", hand=HAND, table="8S", played=PLAYED).game(0)
    )
    assert expected == ["9D"]


def test_suggest_asks_the_shipped_strong_agent() -> None:
    pytest.importorskip("torch")
    pos = Position.parse("hong-kong", hand="3D 5H 9C 9D KS 2S", table="8S", played={1: "3C 4C 5C 6C 7C JD"})
    play = make_agent("strong", pos.variant, seed=0).choose(pos.game(0))
    game = pos.game(0)
    assert game.encode(play) in game.legal_actions()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--played", "one=3C"], "--played takes SEAT=CARDS"),
        (["--left", "1=x"], "--left takes SEAT=N"),
        (["--history", "1-3C"], "--history takes SEAT:CARDS"),
        (["--agent", "nobody"], "nobody"),
    ],
)
def test_suggest_refuses_bad_options(extra: list[str], message: str, capsys: pytest.CaptureFixture) -> None:
    assert main(["suggest", "--hand", HAND, "--table", "8S", *extra]) == 2
    assert re.search(message, capsys.readouterr().err)


@pytest.mark.parametrize("name", ["taiwan", "hong-kong", "japan", "online-cn", "pusoy-dos"])
def test_a_variant_printed_as_yaml_loads_back_to_the_same_rules(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    assert main(["variants", name, "--yaml"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("#") and "# Seats at the table." in text
    path = tmp_path / "house.yaml"
    path.write_text(text.replace(f"name: {name}", "name: house"), encoding="utf-8")
    assert load_variant(path) == load_variant(name, name="house")


def test_variants_yaml_needs_one_variant(capsys: pytest.CaptureFixture) -> None:
    assert main(["variants", "--yaml"]) == 2
    assert "give its name or file" in capsys.readouterr().err


def test_train_show_checks_the_values_as_the_run_would(capsys: pytest.CaptureFixture) -> None:
    assert main(["train", "--set", "variant=hongkong", "--show"]) == 2
    assert "unknown variant 'hongkong'; allowed: hong-kong" in capsys.readouterr().err
    assert main(["train", "--set", "variant=taiwan", "--show"]) == 0
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        assert main(["train", "--set", "device=cuda", "--show"]) == 2
        assert "CUDA is not available here; allowed: auto, cpu" in capsys.readouterr().err


def test_choose_with_an_observation_says_what_to_pass() -> None:
    agent = make_agent("greedy", "taiwan")
    with pytest.raises(TypeError, match=r"choose takes a Game .* got ndarray.*Position.parse.*agent.act"):
        agent.choose(Game("taiwan", seed=1).observation())  # type: ignore[arg-type]


def test_replay_of_a_yaml_file_says_what_a_record_is(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    table = tmp_path / "my-table.yaml"
    table.write_text("name: mine\nplayers: 4\n", encoding="utf-8")
    assert main(["replay", str(table)]) == 2
    err = capsys.readouterr().err
    assert "is no game record: a game record is JSON" in err and "a YAML file is a rule variant" in err
