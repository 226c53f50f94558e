"""Where the web server keeps its rooms: one SQLite file (the standard ``sqlite3``), so nothing is
lost on a restart.

| table | one row per | columns |
|---|---|---|
| ``rooms`` | room | ``id``, ``created`` (epoch seconds), ``setup`` (JSON: variant settings, seats with their tokens' hashes, pace, away time) |
| ``matches`` | match of a room | ``room``, ``number`` (1, 2, ...), ``seed``, ``started`` |
| ``plays`` | turn of a match | ``room``, ``match``, ``seq`` (0, 1, ... within the match), ``seat``, ``cards`` (``"3C 3D"``, ``"pass"``), ``by`` (``person``, ``agent``, ``stand-in``), ``at`` |

Each write is one transaction, committed before anyone is told of it, so the file is consistent
whenever the server stops; ``(room, match, seq)`` is the primary key, so a play can never be
stored twice. The journal is WAL (readers do not block the writer). A restarted server reads
every room back and replays each match's plays through the engine (``bigtwo.web.room``).

The file holds no seat's token, only its SHA-256 (``add_room`` drops the set-up's plain
``tokens``), and is made readable by its owner only (mode 0600, with its WAL and shared-memory
files). ``delete_room`` forgets a room and everything played in it (the expiry of idle rooms).
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS rooms (
    id TEXT PRIMARY KEY,
    created REAL NOT NULL,
    setup TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS matches (
    room TEXT NOT NULL REFERENCES rooms(id),
    number INTEGER NOT NULL,
    seed TEXT NOT NULL,  -- text: a seed may pass SQLite's signed 64-bit integers
    started REAL NOT NULL,
    PRIMARY KEY (room, number)
);
CREATE TABLE IF NOT EXISTS plays (
    room TEXT NOT NULL,
    match INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    seat INTEGER NOT NULL,
    cards TEXT NOT NULL,
    by TEXT NOT NULL,
    at REAL NOT NULL,
    PRIMARY KEY (room, match, seq),
    FOREIGN KEY (room, match) REFERENCES matches(room, number)
);
"""


@dataclass(frozen=True)
class StoredPlay:
    """One stored turn."""

    seq: int
    seat: int
    cards: str
    by: str
    at: float


@dataclass(frozen=True)
class StoredRoom:
    """A room as stored: its set-up and each match's seed and plays, oldest first."""

    id: str
    created: float
    setup: dict[str, Any]
    matches: list[tuple[int, int, list[StoredPlay]]]  # (number, seed, plays)
    last: float = 0.0  # epoch seconds of its last stored change (set-up, match or play)


class Store:
    """The SQLite file at ``path`` (``":memory:"`` for none); see the module docstring."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            os.close(os.open(self.path, os.O_CREAT | os.O_RDWR, 0o600))
        self.db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("PRAGMA foreign_keys=ON")
        self.db.executescript(SCHEMA)
        self.private()

    def private(self) -> None:
        """The file and its WAL and shared-memory files readable and writable by their owner only."""
        if self.path == ":memory:":
            return
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.chmod(self.path + suffix, 0o600)

    def add_room(self, room_id: str, setup: dict[str, Any], created: float | None = None) -> None:
        """Store a new room's set-up, without its plain ``tokens``."""
        kept = {k: v for k, v in setup.items() if k != "tokens"}
        with self.db:
            self.db.execute(
                "INSERT INTO rooms (id, created, setup) VALUES (?, ?, ?)",
                (room_id, time.time() if created is None else created, json.dumps(kept)),
            )

    def delete_room(self, room_id: str) -> None:
        """Forget a room: its set-up, matches and plays, in one transaction."""
        with self.db:
            self.db.execute("DELETE FROM plays WHERE room = ?", (room_id,))
            self.db.execute("DELETE FROM matches WHERE room = ?", (room_id,))
            self.db.execute("DELETE FROM rooms WHERE id = ?", (room_id,))

    def add_match(self, room_id: str, number: int, seed: int) -> None:
        """Store the start of a room's match ``number`` dealt from ``seed``."""
        with self.db:
            self.db.execute(
                "INSERT INTO matches (room, number, seed, started) VALUES (?, ?, ?, ?)",
                (room_id, number, str(seed), time.time()),
            )

    def add_play(self, room_id: str, match: int, seq: int, seat: int, cards: str, by: str) -> None:
        """Store one turn; ``sqlite3.IntegrityError`` if that ``seq`` is stored already."""
        with self.db:
            self.db.execute(
                "INSERT INTO plays (room, match, seq, seat, cards, by, at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (room_id, match, seq, seat, cards, by, time.time()),
            )

    def rooms(self) -> list[StoredRoom]:
        """Every stored room with its matches and plays, oldest room first."""
        out = []
        for room_id, created, setup in self.db.execute("SELECT id, created, setup FROM rooms ORDER BY created, id"):
            out.append(self.room(room_id, created, json.loads(setup)))
        return out

    def room(self, room_id: str, created: float, setup: dict[str, Any]) -> StoredRoom:
        """One stored room (see ``rooms``)."""
        matches = []
        last = float(created)
        rows = self.db.execute(
            "SELECT number, seed, started FROM matches WHERE room = ? ORDER BY number", (room_id,)
        ).fetchall()
        for number, seed, started in rows:
            last = max(last, float(started))
            plays = [
                StoredPlay(*row)
                for row in self.db.execute(
                    "SELECT seq, seat, cards, by, at FROM plays WHERE room = ? AND match = ? ORDER BY seq",
                    (room_id, number),
                )
            ]
            matches.append((int(number), int(seed), plays))
            last = max([last, *(p.at for p in plays)])
        return StoredRoom(room_id, float(created), setup, matches, last)

    def play_counts(self) -> dict[tuple[str, int], tuple[int, int, int]]:
        """``(room, match) -> (plays, lowest seq, highest seq)``: what the load benchmark checks."""
        rows = self.db.execute("SELECT room, match, COUNT(*), MIN(seq), MAX(seq) FROM plays GROUP BY room, match")
        return {(r, int(m)): (int(n), int(lo), int(hi)) for r, m, n, lo, hi in rows}

    def integrity(self) -> str:
        """SQLite's own check of the file: ``"ok"`` when it is sound."""
        return str(self.db.execute("PRAGMA integrity_check").fetchone()[0])

    def close(self) -> None:
        """Write the WAL back into the file and close it."""
        try:
            self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            self.db.close()
