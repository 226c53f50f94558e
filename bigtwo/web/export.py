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

**The running server's bodies** (``Bodies``): ``GET /api/rooms/ID/record`` and
``records.jsonl`` are read (a kept match's record from the file) and serialised in a worker
thread, never on the event loop, and cached as their bytes: a match's record by room and match,
a room's ``records.jsonl`` by room and the matches it keeps; at most ``MAX_BODIES`` bodies and
``MAX_CACHED`` bytes (least recently used dropped). At most ``MAX_BUILDING`` are built at once
(``Busy``, 503) and ``BODIES_PER_CLIENT`` for one client (``TooMany``, 429); a cached body is
answered at once, whoever asks.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections import OrderedDict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from bigtwo.env.envs.game import Game
from bigtwo.env.records.record import game_from_record, record_line
from bigtwo.env.rules.variant import stored_variant
from bigtwo.web.forms import RoomError
from bigtwo.web.limits import Busy, Held
from bigtwo.web.room import Room, match_record
from bigtwo.web.store import Store, StoredRoom

MAX_BODIES = 64  # record bodies cached
MAX_CACHED = 64 * 1024 * 1024  # bytes of record bodies cached
MAX_BUILDING = 4  # record bodies being built at once
BODIES_PER_CLIENT = 2  # record bodies one client may have being built at once


class Cache:
    """Answers kept as their bytes by key: at most ``most`` of them and ``size`` bytes in all,
    the least recently used dropped (``bigtwo.web.replays`` keeps its replays in one too)."""

    def __init__(self, most: int, size: int) -> None:
        self.most = most
        self.size = size
        self.bodies: OrderedDict[Any, bytes] = OrderedDict()
        self.held = 0  # bytes kept

    def get(self, key: Any) -> bytes | None:
        body = self.bodies.get(key)
        if body is not None:
            self.bodies.move_to_end(key)
        return body

    def put(self, key: Any, body: bytes) -> None:
        if len(body) > self.size:
            return
        self.drop(lambda k: k == key)
        self.bodies[key] = body
        self.held += len(body)
        while len(self.bodies) > self.most or self.held > self.size:
            self.held -= len(self.bodies.popitem(last=False)[1])

    def drop(self, which: Callable[[Any], bool]) -> None:
        """Forget the bodies whose key ``which`` names."""
        for key in [k for k in self.bodies if which(k)]:
            self.held -= len(self.bodies.pop(key))


class Bodies:
    """The running server's record bodies, built in a worker thread and cached; see the module
    docstring."""

    def __init__(self) -> None:
        self._cached = Cache(MAX_BODIES, MAX_CACHED)
        self._held = Held()
        self.building = 0

    async def record(self, room: Room, match: int, client: str = "") -> bytes:
        """Match ``match``'s record as JSON bytes; ``RoomError`` as ``Room.record`` says."""
        if not 1 <= match <= room.match:
            raise RoomError(f"room {room.id} has matches 1..{room.match}, not {match}")
        if match == room.match and not room.game.is_over:
            raise RoomError(f"match {match} is still being played; its record (every hand) is shown once it is over")
        build = self._current(room) if match == room.match else lambda: room.record(match)
        return await self._body((room.id, "record", match), lambda: _json(build()), client)

    async def records(self, room: Room, client: str = "") -> bytes:
        """The records of the finished matches the room keeps, one JSON line each, as bytes."""
        kept = sorted(room.finished)
        current = self._current(room) if room.match and room.game.is_over else None

        def build() -> bytes:
            lines = []
            for m in kept:
                try:
                    lines.append(record_line(room.record(m)) + "\n")
                except RoomError:  # deleted from the store meanwhile (its history bound)
                    continue
            if current is not None:
                lines.append(record_line(current()) + "\n")
            return "".join(lines).encode("utf-8")

        key = (room.id, "records", room.match, current is not None, tuple(kept))
        return await self._body(key, build, client)

    @staticmethod
    def _current(room: Room) -> Callable[[], dict[str, Any]]:
        """The room's current match's record, to build in another thread: its game and seats
        taken now (a new match deals a new game; this one stays as it is)."""
        game, match, room_id = room.game, room.match, room.id
        names, kinds = [s.name for s in room.seats], [s.kind for s in room.seats]
        return lambda: match_record(game, room_id, match, names, kinds)

    async def _body(self, key: tuple[Any, ...], build: Callable[[], bytes], client: str) -> bytes:
        cached = self._cached.get(key)
        if cached is not None:
            return cached
        if self.building >= MAX_BUILDING:
            raise Busy(f"the server is writing {MAX_BUILDING} records already; try again in a moment")
        with self._held.hold(client, BODIES_PER_CLIENT, "record downloads", retry_after=2):
            self.building += 1
            try:
                body = await asyncio.to_thread(build)
            finally:
                self.building -= 1
        self._cached.put(key, body)
        return body


def _json(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")


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


__all__ = ["Bodies", "Cache", "export_records", "room_records"]
