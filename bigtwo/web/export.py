"""The web table's games as game records: ``bigtwo serve --export FILE.jsonl``.

Every finished match of every room in the server's SQLite file (``bigtwo.web.store``) is
replayed through the engine (from its stored record, or from its seed and plays where the file
keeps no record) and written as one JSON line, the
format of ``bigtwo tournament --records`` (``bigtwo.env.records.record``): ``seats`` the seats' names,
``info`` ``{room, match, people}`` (``people``: the seats a person held). Rooms go oldest first,
matches in order. A match still being played is left out (its record would show every hand), so
the file never holds a hand that is still hidden; a running server's file may be read (SQLite's
WAL lets one reader beside the writer). A stored match the engine cannot replay is said on
stderr and its room left out. The running server answers the same records per room at
``GET /api/rooms/ID/records.jsonl`` (the matches it keeps). The server keeps a bounded history
(``bigtwo serve --limit matches_per_room=N``, ``matches_total=N``): export the records you want
to keep from time to time; the export holds every match the file still has.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bigtwo.env.envs.game import Game
from bigtwo.env.records.record import game_from_record, record_line
from bigtwo.env.rules.variant import stored_variant
from bigtwo.web.room import match_record
from bigtwo.web.store import Store, StoredRoom


def room_records(stored: StoredRoom, store: Store | None = None) -> Iterator[dict[str, Any]]:
    """The records of a stored room's finished matches, in order: those ``store`` keeps as
    records (``stored.kept``), each checked by replaying it through the engine, then those
    stored as plays; ``ValueError`` naming the match the engine does not accept."""
    for number in stored.kept:
        record = None if store is None else store.record(stored.id, number)
        if record is None:
            continue
        try:
            game_from_record(record)
        except ValueError as exc:
            raise ValueError(f"room {stored.id} match {number}: stored record: {exc}") from None
        yield record
    variant = stored_variant(stored.setup["variant"], "stored room's variant")
    names = [s["name"] for s in stored.setup["seats"]]
    kinds = [s["kind"] for s in stored.setup["seats"]]
    for number, seed, plays in stored.matches:
        game = Game(variant, seed=seed)
        for p in plays:
            if game.is_over or p.seat != game.current_player:
                raise ValueError(f"room {stored.id} match {number}: stored play {p.seq} does not follow the game")
            try:
                game.play(p.cards)
            except ValueError as exc:
                raise ValueError(f"room {stored.id} match {number}: stored play {p.seq}: {exc}") from None
        if game.is_over:
            yield match_record(game, stored.id, number, names, kinds)


def export_records(db: str | Path, out: str | Path) -> int:
    """Write every finished match in the server file ``db`` to ``out`` as JSON Lines (see the
    module docstring); returns how many records were written. ``ValueError`` for a ``db`` that
    is no file (the export makes none) or an ``out`` that cannot be written."""
    db_path, out_path = Path(db), Path(out)
    if not db_path.is_file():
        raise ValueError(f"--db {str(db_path)!r} is no file; give the SQLite file bigtwo serve keeps its rooms in")
    if out_path.is_dir():
        raise ValueError(f"--export must be a file to write (games.jsonl), but {str(out_path)!r} is a folder")
    store = Store(db_path)
    written = 0
    try:
        out_path.parent.mkdir(parents=True, exist_ok=True)
        with out_path.open("w", encoding="utf-8", newline="\n") as handle:
            for room_id in store.room_ids():
                try:
                    lines = [record_line(r) for r in room_records(store.load(room_id), store)]
                except (ValueError, KeyError, TypeError) as exc:
                    print(f"bigtwo serve --export: room {room_id} left out: {exc}", file=sys.stderr)
                    continue
                handle.writelines(line + "\n" for line in lines)
                written += len(lines)
    except OSError as exc:
        raise ValueError(f"cannot write records to {str(out_path)!r}: {exc}") from None
    finally:
        store.db.close()
    return written


__all__ = ["export_records", "room_records"]
