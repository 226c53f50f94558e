"""Step through a game record in the terminal (``bigtwo replay FILE``, in ``bigtwo.cli.replay``).

    bigtwo replay games.jsonl --game 12          # record 12 (its line index) of a tournament's --records
    bigtwo replay match.json --seat 0 --all      # a web record, only seat 0's hand shown, printed at once

The record (``bigtwo.env.records.record``: a ``.json`` file, or one line of a ``.jsonl`` file picked by
``--game``, 0 for the first line) is replayed through the engine first, so a record the engine
does not agree with is refused before anything is shown. Then the table is drawn by
``bigtwo.env.envs.render`` and every play follows, numbered, with the seat's label (the record's
``seats``) and its cards; a new table is drawn when a game of the match ends. In a terminal each
play waits for Enter (``q`` then Enter stops) and the table is drawn again after it; with
``--all``, or when stdin is no terminal (a pipe, a test), the whole match is printed at once, the
table at each game's start and at the end. ``--seat S`` shows only seat S's hand, as that player saw the
game; by default every hand is shown (a record is written once its hands may be seen).

Bad input (a missing file, no record, a record index or seat out of range, a damaged record)
exits with status 2 and one line saying what is wrong and what is allowed.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from bigtwo.env.envs.game import Game


def _plays_of(record: dict[str, Any], seat: int | None) -> tuple[Game, list[tuple[int, int, str, str]]]:
    """The record replayed, and ``(game number, seat, cards, table drawn before the play)`` for
    each play; ``ValueError`` if the engine does not agree with it."""
    from bigtwo.env.envs.render import render_text
    from bigtwo.env.records.record import game_from_record

    frames: list[tuple[int, int, str, str]] = []
    names = _labels(record)

    def before(game: Game, number: int, acting: int, cards: str) -> None:
        frames.append((number, acting, cards, render_text(game, names=names, viewer=seat)))

    return game_from_record(record, before), frames


def _labels(record: dict[str, Any]) -> list[str] | None:
    seats = record.get("seats")
    return [str(s) for s in seats] if isinstance(seats, list) else None


def _header(path: Path, index: int, record: dict[str, Any]) -> str:
    variant = record["variant"].get("name", "?")
    lines = [f"{path.name} record {index}: {variant}, seed {record['seed']}, {len(record['games'])} game(s)"]
    if record.get("seats"):
        lines.append("seats: " + ", ".join(f"{s} {name}" for s, name in enumerate(record["seats"])))
    info = record.get("info")
    if isinstance(info, dict) and info:
        lines.append("info: " + ", ".join(f"{k} {v}" for k, v in info.items()))
    return "\n".join(lines)


def replay(
    path: str | Path,
    index: int = 0,
    seat: int | None = None,
    step: bool = False,
    out: TextIO | None = None,
    ask: Callable[[], str] = input,
) -> int:
    """Print record ``index`` of ``path`` (see the module docstring); with ``step``, wait for
    ``ask()`` (a line: Enter, or ``q`` to stop) after each play. Returns how many plays were shown."""
    from bigtwo.env.checks import is_seat
    from bigtwo.env.envs.render import render_text
    from bigtwo.env.records.record import record_at

    out = sys.stdout if out is None else out
    record = record_at(path, index)
    players = record["variant"].get("players", 4)
    if seat is not None and not is_seat(seat, players):
        raise ValueError(f"--seat must be a seat 0..{players - 1} of this record's variant, got {seat}")
    final, frames = _plays_of(record, seat)
    names = _labels(record) or [f"seat {s}" for s in range(players)]
    print(_header(Path(path), index, record), file=out)
    shown, number = 0, 0
    for i, (game_number, acting, cards, table) in enumerate(frames):
        if game_number != number:
            if number:
                _game_over(record, number, names, out)
            number = game_number
            print(f"\n{table}\n", file=out)
        print(f"{i + 1:4d}. {names[acting]} (seat {acting}): {cards}", file=out, flush=True)
        shown += 1
        if step:
            if i + 1 < len(frames) and frames[i + 1][0] == game_number:
                print(f"\n{frames[i + 1][3]}\n", file=out)
            if ask().strip().lower() in ("q", "quit"):
                return shown
    if number:
        _game_over(record, number, names, out)
    print(f"\n{render_text(final, names=names, viewer=seat)}", file=out)
    return shown


def _game_over(record: dict[str, Any], number: int, names: list[str], out: TextIO) -> None:
    game = record["games"][number - 1]
    if game.get("winner") is None:
        print(f"game {number} not finished (the record ends here)", file=out)
        return
    payoffs = ", ".join(f"{names[s]} {p:+g}" if p else f"{names[s]} 0" for s, p in enumerate(game["payoffs"]))
    print(f"game {number} over: {names[game['winner']]} won; payoffs {payoffs}", file=out)


__all__ = ["replay"]
