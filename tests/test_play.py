"""The terminal game driven by scripted input: bad input, whole games, EOF, quit, the command."""

from __future__ import annotations

import io
import sys

import pytest

from agents.base import RandomAgent
from agents.play import TerminalGame
from bigtwo_cli import main
from bigtwo_env import load_variant


class ScriptedReader:
    """Gives ``script`` line by line, then ``then`` for ever (``None``: end of input)."""

    def __init__(self, script: list[str], then: str | None = "1") -> None:
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


def _game(script, seed=4, then="1", **kw) -> tuple[TerminalGame, io.StringIO, ScriptedReader]:
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
        "99",  # no such legal-play number
        "0",
        "1 2",  # several numbers
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
        "One number at a time",
        "appears twice",
        "You cannot",
        "is not a play",
        "legal plays:",
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
    assert "seed 2" in text and "legal plays:" in text and "Goodbye" in text


def test_whole_game_played_from_hints_against_heuristic():
    pytest.importorskip("agents.heuristic")
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
            return last.rsplit("[number ", 1)[1].split()[0] + "\n"

    tg = TerminalGame("taiwan", opponents="heuristic", seed=9, stdin=HintFollower(), stdout=out, games=2)
    assert tg.run() == 0
    text = out.getvalue()
    assert "Final scores (2 games)" in text and "Seat 1 (heuristic) plays" in text and "You play" in text
