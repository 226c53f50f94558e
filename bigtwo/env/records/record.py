"""Game records: one JSON format for a match, written by the web server (``/api/rooms/ID/record``,
``/api/rooms/ID/records.jsonl``, ``bigtwo serve --export``) and ``bigtwo tournament --records`` /
``--save-games``, read by ``Game.from_record``, ``bigtwo replay``, the web page's replay and the
supervised-learning loader ``bigtwo.env.records.dataset``.

A record holds everything needed to replay a match through the engine, and what came of it:

| field | what |
|---|---|
| ``format``, ``version`` | ``"bigtwo-record"``, ``1`` |
| ``variant`` | every rule setting (``Variant.to_dict()``: name, players, scoring, ...) |
| ``seed`` | the match's seed; games dealt by the engine come from it |
| ``first_deal`` | ``"seed"`` (the first game was dealt from the seed) or ``"given"`` (its hands were set) |
| ``seats`` | optional: who sat where, one label per seat (``["you", "strong", ...]``) |
| ``info`` | optional: any JSON object (room id, dates, the tournament's deal and rotation) |
| ``games`` | the games played, in order; each ``{number, deal, plays, winner, payoffs}`` |
| ``scores`` | per-seat match scores so far |
| ``over`` | whether the match is over |

A game's ``deal`` is each seat's hand as dealt (card text, ``"3C 4D ..."``), ``plays`` every
turn in order as ``[seat, cards]`` with ``"pass"`` for a pass, ``winner`` the seat that went
out and ``payoffs`` the per-seat payoffs (both ``null`` for a game still being played). Cards are
written rank then suit (``10S``, ``AH``; see ``bigtwo.env.rules.cards``).

Many records go in a JSON Lines file (``.jsonl``): one record per line, compact
(``record_line``, ``write_records``); ``read_records`` reads either kind of file, ``record_at``
picks one by its line index.

Reading a record replays it: every play goes through the engine, and the deals, turns, winners
and payoffs must be those the engine gives, or ``ValueError`` says which game and play differ.

>>> from bigtwo.env.envs.game import Game
>>> g = Game("taiwan", seed=5)
>>> for _ in range(6):
...     g.play(g.legal_plays()[-1])
>>> rec = g.to_record(seats=["ann", "bob", "cy", "dee"])
>>> rec["format"], rec["seed"], len(rec["games"][0]["plays"])
('bigtwo-record', 5, 6)
>>> again = Game.from_record(rec)
>>> again.to_record(seats=["ann", "bob", "cy", "dee"]) == rec
True
>>> rec["games"][0]["plays"][0][0] = 3
>>> Game.from_record(rec)
Traceback (most recent call last):
ValueError: record game 1, play 1: seat 3 is written as playing, but seat 0 is to act
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bigtwo.env.checks import is_whole
from bigtwo.env.engine.seeds import SEED_RANGE, is_seed
from bigtwo.env.rules.variant import stored_variant

if TYPE_CHECKING:
    from bigtwo.env.envs.game import Game

RECORD_FORMAT = "bigtwo-record"
RECORD_VERSION = 1
FIELDS = ("format", "version", "variant", "seed", "first_deal", "seats", "info", "games", "scores", "over")


def _play_text(cards: list[str]) -> str:
    return " ".join(cards) if cards else "pass"


def game_to_record(game: Game, seats: list[str] | None = None, info: dict[str, Any] | None = None) -> dict[str, Any]:
    """``game`` (a ``bigtwo.env.envs.game.Game``) as a record; see the module docstring."""
    if seats is not None and (len(seats) != game.players or not all(isinstance(s, str) for s in seats)):
        raise ValueError(f"seats must be {game.players} labels (text), one per seat; got {seats!r}")
    games = []
    deals = game.deals
    for result, deal in zip(game.results, deals, strict=False):
        games.append(
            {
                "number": result.number,
                "deal": [" ".join(hand) for hand in deal],
                "plays": [[seat, _play_text(cards)] for seat, cards in result.history],
                "winner": result.winner,
                "payoffs": list(result.payoffs),
            }
        )
    if not game.is_over:
        games.append(
            {
                "number": game.game_number,
                "deal": [" ".join(hand) for hand in deals[-1]],
                "plays": [[seat, _play_text(cards)] for seat, cards in game.history],
                "winner": None,
                "payoffs": None,
            }
        )
    record: dict[str, Any] = {
        "format": RECORD_FORMAT,
        "version": RECORD_VERSION,
        "variant": game.variant.to_dict(),
        "seed": game.seed,
        "first_deal": "given" if game.first_deal_given else "seed",
    }
    if seats is not None:
        record["seats"] = list(seats)
    if info is not None:
        if not isinstance(info, dict):
            raise ValueError(f"info must be a JSON object (a dict), got {info!r}")
        record["info"] = info
    record.update(games=games, scores=game.scores, over=game.is_over)
    return record


NOT_A_RECORD = (
    "a game record is JSON, a .json file of one record or a .jsonl file of one record a line, as "
    "`bigtwo tournament --records FILE.jsonl`, `Game.to_record` and the web table's export write them"
)


def _yaml_hint(path: Path) -> str:
    """A pointer for a YAML file given where a record is expected (a variant or a training config)."""
    if path.suffix.lower() not in (".yaml", ".yml"):
        return ""
    return (
        "; a YAML file is a rule variant (bigtwo play --variant FILE) or a training config (bigtwo train --config FILE)"
    )


def read_record(path: str | Path) -> dict[str, Any]:
    """The record in the JSON file ``path``; ``ValueError`` naming the file if it is no JSON object."""
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read game record {str(p)!r}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{str(p)!r} is no game record: {NOT_A_RECORD}{_yaml_hint(p)} (JSON: {exc})") from None
    if not isinstance(data, dict):
        raise ValueError(f"game record {str(p)!r} must hold a JSON object, got {type(data).__name__}")
    return data


def record_line(record: dict[str, Any]) -> str:
    """``record`` as one line of JSON Lines: compact, keys in the record's order, no newline."""
    return json.dumps(record, separators=(",", ":"))


def write_records(path: str | Path, records: Iterable[dict[str, Any]]) -> int:
    """Write ``records`` to ``path`` as JSON Lines, one per line (folders made as needed);
    returns how many were written."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with p.open("w", encoding="utf-8", newline="\n") as out:
        for record in records:
            out.write(record_line(record) + "\n")
            n += 1
    return n


def is_lines_file(path: str | Path) -> bool:
    """Whether ``path`` names a JSON Lines file of records (``.jsonl``), not one JSON record."""
    return Path(path).suffix.lower() == ".jsonl"


def read_records(path: str | Path) -> Iterator[dict[str, Any]]:
    """The records in ``path``, in order: every line of a ``.jsonl`` file (blank lines skipped),
    or the one record of a ``.json`` file. Each is checked by ``check_record``; ``ValueError``
    naming the file and line of the first that is not a record."""
    p = Path(path)
    if not is_lines_file(p):
        yield check_record(read_record(p))
        return
    try:
        handle = p.open(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"cannot read game records {str(p)!r}: {exc}") from None
    with handle:
        try:
            for index, line in enumerate(handle):
                if not line.strip():
                    continue
                try:
                    yield check_record(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise ValueError(
                        f"{str(p)!r} line {index + 1} is no game record: {NOT_A_RECORD} (JSON: {exc})"
                    ) from None
                except ValueError as exc:
                    raise ValueError(f"{str(p)!r} line {index + 1} (record {index}): {exc}") from None
        except UnicodeDecodeError as exc:
            raise ValueError(f"cannot read game records {str(p)!r}: {exc}") from None


def record_at(path: str | Path, index: int = 0) -> dict[str, Any]:
    """Record ``index`` of ``path``: its line index in a ``.jsonl`` file (0 for the first line),
    0 for a ``.json`` file; ``ValueError`` saying which indexes the file has."""
    if not is_whole(index) or index < 0:
        raise ValueError(f"a record's index is a whole number 0 or more, got {index!r}")
    p = Path(path)
    if not is_lines_file(p):
        if index != 0:
            raise ValueError(f"{str(p)!r} holds one record (index 0), not record {index}")
        return check_record(read_record(p))
    count = 0
    try:
        with p.open(encoding="utf-8") as handle:
            for i, line in enumerate(handle):
                count = i + 1
                if i == index:
                    try:
                        return check_record(json.loads(line))
                    except (json.JSONDecodeError, ValueError) as exc:
                        raise ValueError(f"{str(p)!r} line {i + 1} (record {i}): {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read game records {str(p)!r}: {exc}") from None
    held = f"records 0..{count - 1}" if count else "no records"
    raise ValueError(f"{str(p)!r} has {held} (one a line); there is no record {index}")


def write_record(path: str | Path, record: dict[str, Any]) -> Path:
    """Write ``record`` as JSON to ``path`` (folders made as needed); returns the path."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return p


def _need(ok: bool, message: str) -> None:
    if not ok:
        raise ValueError(message)


def check_record(record: Any) -> dict[str, Any]:
    """``record`` if its fields have the right shapes (the replay checks the rest); ``ValueError``
    naming the first field that does not, and what it must be."""
    _need(isinstance(record, dict), f"a game record is a JSON object, got {type(record).__name__}")
    unknown = sorted(set(record) - set(FIELDS))
    _need(not unknown, f"game record: unknown field {unknown[:1]}; fields are: {', '.join(FIELDS)}")
    _need(
        record.get("format") == RECORD_FORMAT,
        f"game record: format must be {RECORD_FORMAT!r}, got {record.get('format')!r}",
    )
    _need(
        record.get("version") == RECORD_VERSION,
        f"game record: version {record.get('version')!r} is not one this code reads (it reads {RECORD_VERSION})",
    )
    _need(isinstance(record.get("variant"), dict), "game record: variant must be an object of rule settings")
    seed = record.get("seed")
    _need(is_seed(seed), f"game record: seed must be an integer {SEED_RANGE}, got {seed!r}")
    _need(
        record.get("first_deal") in ("seed", "given"),
        f"game record: first_deal must be 'seed' or 'given', got {record.get('first_deal')!r}",
    )
    games = record.get("games")
    _need(isinstance(games, list) and len(games) > 0, "game record: games must be a non-empty list")
    for i, g in enumerate(games, 1):
        _need(isinstance(g, dict), f"game record: game {i} must be an object")
        for key in ("deal", "plays"):
            _need(isinstance(g.get(key), list), f"game record: game {i} needs a list {key!r}")
        for j, play in enumerate(g["plays"], 1):
            _need(
                isinstance(play, list) and len(play) == 2 and isinstance(play[0], int) and isinstance(play[1], str),
                f"game record: game {i}, play {j} must be [seat, cards] such as [0, '3C 3D'] or [1, 'pass']; "
                f"got {play!r}",
            )
    return record


def game_from_record(
    record: dict[str, Any] | str | Path, before_play: Callable[[Game, int, int, str], None] | None = None
) -> Game:
    """Replay ``record`` (a dict or a JSON file's path) through the engine; see the module docstring.
    ``before_play(game, number, seat, cards)``, if given, sees each play of game ``number`` just
    before it is made (the web's replay expands a record move by move with it)."""
    from bigtwo.env.envs.game import Game

    if isinstance(record, (str, Path)):
        record = read_record(record)
    check_record(record)
    try:
        variant = stored_variant(record["variant"], "stored variant")
    except (TypeError, ValueError) as exc:
        raise ValueError(f"game record: variant: {exc}") from None
    games = record["games"]
    given = record["first_deal"] == "given"
    try:
        game = Game(variant, seed=record["seed"], hands=games[0]["deal"] if given else None)
    except ValueError as exc:
        raise ValueError(f"game record game 1: deal: {exc}") from None
    for i, g in enumerate(games, 1):
        where = f"record game {i}"
        _need(not game.is_over, f"{where}: the match was already over after game {i - 1}")
        dealt = [" ".join(hand) for hand in game.deals[-1]]
        if [" ".join(sorted(h.split())) for h in g["deal"]] != [" ".join(sorted(h.split())) for h in dealt]:
            raise ValueError(f"{where}: the deal written is not the one the engine deals from seed {record['seed']}")
        for j, (seat, cards) in enumerate(g["plays"], 1):
            to_act = game.current_player
            _need(
                seat == to_act and game.game_number == i,
                f"{where}, play {j}: seat {seat} is written as playing, but "
                + (f"seat {to_act} is to act" if game.game_number == i else f"game {i} was already over"),
            )
            if before_play is not None:
                before_play(game, i, seat, cards)
            try:
                game.play(cards)
            except ValueError as exc:
                raise ValueError(f"{where}, play {j}: {exc}") from None
        finished = len(game.results) >= i
        if g.get("winner") is None:
            _need(not finished, f"{where}: the game is over after its plays, but no winner is written")
            _need(i == len(games), f"{where}: an unfinished game must be the record's last")
            continue
        _need(finished, f"{where}: a winner is written, but the game is not over after its plays")
        result = game.results[i - 1]
        _need(g["winner"] == result.winner, f"{where}: winner {g['winner']!r} written, the engine says {result.winner}")
        payoffs = g.get("payoffs")
        _need(
            isinstance(payoffs, list)
            and len(payoffs) == len(result.payoffs)
            and all(
                isinstance(x, (int, float)) and math.isclose(x, y)
                for x, y in zip(payoffs, result.payoffs, strict=False)
            ),
            f"{where}: payoffs {payoffs!r} written, the engine says {list(result.payoffs)}",
        )
    return game
