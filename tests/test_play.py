"""The terminal game driven by scripted input: bad input, whole games, EOF, quit, the command."""

from __future__ import annotations

import io
import sys

import pytest

from bigtwo.agents.base import RandomAgent
from bigtwo.agents.play import TerminalGame
from bigtwo.cli import main
from bigtwo.env import load_variant


class ScriptedReader:
    """Gives ``script`` line by line, then ``then`` for ever (``None``: end of input)."""

    def __init__(self, script: list[str], then: str | None = "#1") -> None:
        self.script = list(script)
        self.then = then
        self.calls = 0

    def readline(self) -> str:
        self.calls += 1
        if self.calls > 5000:
            raise AssertionError("the game never ended")
        if self.script:
            line = self.script.pop(0)
            return line(self) if callable(line) else line + "\n"
        return "" if self.then is None else self.then + "\n"


def _illegal_in_hand(tg: TerminalGame) -> str:
    """Text of a play made of the human's own cards that is not legal now (or 'pass' when leading)."""
    g = tg.game
    for c in tg.hand_ids(tg.seat):
        action = g.action_table.encode([c])
        if g.explain_illegal(action) is not None:
            return tg.cards([c])
    return "pass"


def _not_a_play(tg: TerminalGame) -> str:
    """Two of the human's cards of different ranks: never a play."""
    hand = tg.hand_ids(tg.seat)
    other = next(c for c in hand if c // 4 != hand[0] // 4)
    return tg.cards([hand[0], other])


def _game(script, seed=4, then="#1", **kw) -> tuple[TerminalGame, io.StringIO, ScriptedReader]:
    out = io.StringIO()
    reader = ScriptedReader(script, then)
    kw.setdefault("opponents", "random")
    kw.setdefault("hint", RandomAgent(load_variant("taiwan"), seed=0))
    tg = TerminalGame("taiwan", seed=seed, stdin=reader, stdout=out, **kw)
    return tg, out, reader


def test_bad_input_then_play_to_the_end():
    holder: dict[str, TerminalGame] = {}
    script = [
        "",  # empty line
        "3X",  # malformed card
        "Q",  # too short to be a card
        "foo",  # unknown command
        "#99",  # no such legal-play number
        "#0",
        "#1 #2",  # several list numbers
        "#x",  # not a list number
        "99",  # no such card of the hand
        ",",  # only a comma
        " , ",
        "²",  # a digit that is not an ASCII number
        "3C 3C",  # a card twice
        lambda r: _illegal_in_hand(holder["tg"]) + "\n",  # own cards, but not legal now
        "3D 4S",  # not a play (or not in hand)
        lambda r: _not_a_play(holder["tg"]) + "\n",
        "list",
        "help",
        "hint",
        "hand",
    ]
    tg, out, _ = _game(script)
    holder["tg"] = tg
    assert tg.run() == 0
    text = out.getvalue()
    for expected in (
        "Type a play such as",
        "bad suit 'X'",
        "Unknown command 'foo'",
        "No play number 99",
        "No play number 0",
        "One list number at a time",
        "is no list number",
        "No card number 99",
        "not a card: '²'",
        "appears twice",
        "You cannot",
        "is not a play",
        "legal plays (type #N",
        "How to play a turn",
        "hint (random):",
        "Final scores",
    ):
        assert expected in text, expected
    assert "Traceback" not in text
    assert "Goodbye" not in text


def test_hand_is_sorted_and_numbered():
    tg, out, _ = _game([], then=None)
    tg.run()
    line = next(x for x in out.getvalue().splitlines() if x.startswith("your hand"))
    cards = [item.split(":")[1] for item in line.split(": ", 1)[1].split()]
    order = [tg._order[int(tg.game.action_table.decode(tg.game.action_table.encode(c))[0])] for c in cards]
    assert order == sorted(order) and len(cards) == 13
    assert line.split(": ", 1)[1].split()[0].startswith("1:")


def test_eof_mid_game_leaves_cleanly():
    tg, out, _ = _game(["list"], then=None)
    assert tg.run() == 0
    assert "Goodbye" in out.getvalue() and not tg.game.is_over


def test_quit_command():
    tg, out, _ = _game(["quit"])
    assert tg.run() == 0
    assert "Goodbye" in out.getvalue()


def test_opponents_moves_and_tricks_are_printed():
    tg, out, _ = _game([], seat=2, opponents="random,random,random")
    tg.run()
    text = out.getvalue()
    assert "Seat 0 (random) plays" in text or "Seat 1 (random) plays" in text
    assert "wins the trick" in text and "this trick:" in text and "cards left:" in text


def test_match_of_several_games_three_players_symbols():
    tg, out, _ = _game([], games=2, players=3, seat=1, symbols=True)
    assert tg.run() == 0
    text = out.getvalue()
    assert "=== game 1 over" in text and "=== game 2 over" in text
    assert "match scores:" in text and "Final scores (2 games)" in text
    assert any(s in text for s in "♦♣♥♠")


def test_cards_typed_as_text_are_played():
    def play_lowest_cards(r: ScriptedReader) -> str:
        g = holder["tg"].game
        legal = [a for a in g.legal_actions() if a != 0]
        if not legal:
            return "pass\n"
        return " ".join(str(c) for c in g.action_table.decode(int(legal[0]))).lower() + "\n"

    holder: dict[str, TerminalGame] = {}
    tg, out, _ = _game([play_lowest_cards] * 400)
    holder["tg"] = tg
    assert tg.run() == 0
    assert "You play" in out.getvalue()


def test_bad_options():
    with pytest.raises(ValueError, match="opponents"):
        TerminalGame("taiwan", opponents="random,random", stdin=io.StringIO(), stdout=io.StringIO())
    with pytest.raises(ValueError, match="seat"):
        TerminalGame("taiwan", opponents="random", seat=4, stdin=io.StringIO(), stdout=io.StringIO())


def test_hint_without_agent_is_a_message():
    tg, out, _ = _game(["hint"], then=None, hint="no-such-agent")
    assert tg.run() == 0
    assert "No hint" in out.getvalue()


def test_cli_play(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.StringIO("help\nlist\n"))
    assert main(["play", "--opponents", "random", "--seed", "2", "--hint", "random"]) == 0
    text = capsys.readouterr().out
    assert "seed 2" in text and "legal plays (type #N" in text and "Goodbye" in text


def test_whole_game_played_from_hints_against_heuristic():
    pytest.importorskip("bigtwo.agents.heuristic")
    out = io.StringIO()

    class HintFollower:
        """Types 'hint', then the number the hint names."""

        def __init__(self) -> None:
            self.asked = False
            self.calls = 0

        def readline(self) -> str:
            self.calls += 1
            assert self.calls < 2000
            if not self.asked:
                self.asked = True
                return "hint\n"
            self.asked = False
            last = [x for x in out.getvalue().splitlines() if "hint (heuristic)" in x][-1]
            return "#" + last.rsplit(", or #", 1)[1].split()[0] + "\n"

    tg = TerminalGame("taiwan", opponents="heuristic", seed=9, stdin=HintFollower(), stdout=out, games=2)
    assert tg.run() == 0
    text = out.getvalue()
    assert "Final scores (2 games)" in text and "Seat 1 (heuristic) plays" in text and "You play" in text


# ---------------------------------------------------------------- a new user's first hour (issue 12)


def test_plain_numbers_are_cards_of_the_hand():
    """``1 2`` plays the cards numbered 1 and 2 in the shown hand, never an item of the legal list."""
    holder: dict[str, TerminalGame] = {}
    typed: list[tuple[str, str]] = []  # (what was typed, the cards it names)

    def type_positions(r: ScriptedReader) -> str:
        tg = holder["tg"]
        plays = [int(a) for a in tg.game.legal_actions() if a != 0]
        if not plays:
            return "pass\n"
        text = tg.typed(plays[-1])  # the strongest legal play, by its cards' numbers
        hand = tg.hand_ids(tg.seat)
        typed.append((text, tg.cards([hand[int(n) - 1] for n in text.split()])))
        return text + "\n"

    tg, out, _ = _game([type_positions] * 400)
    holder["tg"] = tg
    assert tg.run() == 0
    text = out.getvalue()
    assert typed and all(n.isdigit() for t, _ in typed for n in t.split())
    played = [line for line in text.splitlines() if line.startswith("You play ")]
    assert len(played) == len(typed)
    for (_, cards), line in zip(typed, played, strict=True):
        assert line.startswith(f"You play {cards} (")
    assert "You cannot" not in text and "Final scores" in text


def test_hand_numbers_mix_with_cards_and_refuse_what_is_not_there():
    tg, out, _ = _game(["0", "14", "1 1", "quit"])
    assert tg.run() == 0
    text = out.getvalue()
    assert "No card number 0: your hand's cards are numbered 1..13" in text
    assert "No card number 14" in text and "appears twice" in text
    assert tg.game.legal_actions().tolist() and not tg.game.results  # nothing was played by the refusals


def test_help_explains_the_numbers():
    tg, out, _ = _game(["help", "list", "quit"])
    tg.run()
    text = out.getvalue()
    assert "1 2          play the cards numbered 1 and 2 in your hand" in text
    assert "#N           play number N of the legal list" in text
    assert "legal plays (type #N to play number N):" in text and "  #1  " in text


def test_hint_says_what_to_type_and_typing_it_plays_the_hint():
    out = io.StringIO()

    class HintTyper:
        """Types 'hint', then exactly what the hint says to type."""

        def __init__(self) -> None:
            self.asked = False
            self.calls = 0

        def readline(self) -> str:
            self.calls += 1
            assert self.calls < 2000
            self.asked = not self.asked
            if self.asked:
                return "hint\n"
            last = [x for x in out.getvalue().splitlines() if "hint (heuristic)" in x][-1]
            return last.split("[type ", 1)[1].split(", or #")[0] + "\n"

    tg = TerminalGame("taiwan", opponents="heuristic", seed=9, stdin=HintTyper(), stdout=out)
    assert tg.run() == 0
    text = out.getvalue()
    assert "You play" in text and "Final scores" in text and "You cannot" not in text


def test_a_forced_pass_does_not_wait_for_the_human():
    holder: dict[str, TerminalGame] = {}
    waited_on_forced = []

    class Reader(ScriptedReader):
        def readline(self) -> str:
            waited_on_forced.append(holder["tg"].game.legal_actions().tolist() == [0])
            return super().readline()

    out = io.StringIO()
    tg = TerminalGame(
        "taiwan", opponents="heuristic", seed=4, stdin=Reader([], then="#1"), stdout=out, hint="random", games=3
    )
    holder["tg"] = tg
    assert tg.run() == 0
    text = out.getvalue()
    assert "passing for you" in text  # announced
    assert not any(waited_on_forced)
    forced = [i for i, line in enumerate(text.splitlines()) if "passing for you" in line]
    assert all(text.splitlines()[i + 1] == "You pass." for i in forced)


def test_a_checkpoint_opponent_is_named_by_its_file_name(tmp_path):
    from bigtwo.agents.registry import register_loader, unregister_loader

    register_loader(".rnd", lambda path, variant, seed: RandomAgent(variant, seed=seed))
    try:
        path = tmp_path / "runs" / "taiwan__ppo__1__20250101" / "checkpoints" / "step_000100.rnd"
        path.parent.mkdir(parents=True)
        path.write_text("x")
        tg, out, _ = _game([], opponents=str(path))
        assert tg.run() == 0
    finally:
        unregister_loader(".rnd")
    text = out.getvalue()
    assert "Seat 1 (step_000100.rnd) plays" in text
    assert text.count(str(path)) == 3  # once per opponent, in the start-up text
    assert f"seat 1 (step_000100.rnd): {path}" in text
