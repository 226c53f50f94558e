"""Where the web server keeps its rooms: one SQLite file (the standard ``sqlite3``), so nothing is
lost on a restart.

| table | one row per | columns |
|---|---|---|
| ``rooms`` | room | ``id``, ``created`` (epoch seconds), ``setup`` (JSON: variant settings, seats with their tokens' hashes, pace, away time), ``creator`` (a hash of the creating client's address: its live rooms count against its limit across restarts) |
| ``matches`` | match of a room | ``room``, ``number`` (1, 2, ...), ``seed``, ``started``, ``record`` (the finished match's game record as JSON, written when the next match starts; ``NULL`` for the match being played) |
| ``plays`` | turn of a match | ``room``, ``match``, ``seq`` (0, 1, ... within the match), ``seat``, ``cards`` (``"3C 3D"``, ``"pass"``), ``by`` (``person``, ``agent``, ``stand-in``), ``at`` |

Each write is one transaction (``BEGIN IMMEDIATE`` ... ``COMMIT``), committed before anyone is
told of it, so the file is consistent whenever the server stops, even by ``kill -9``: a new room is stored with its first match
(``add_room``), a finished match's record with the next match's start and the trimming of the
room's history (``add_match``). ``(room, match, seq)`` is the primary key, so a play can never be
stored twice. The journal is WAL (readers do not block the writer).

**Bounded history, bounded start-up.** ``add_match(keep=N)`` keeps a room's last ``N`` finished
matches and deletes older ones with their plays; ``prune(total)`` keeps the newest ``total``
finished matches of the whole file. A restarted server reads each room's set-up and the plays of
its current match only (``load``), whatever the history: finished matches are records, read when
asked for (``record``).

The file holds no seat's token, only its SHA-256 (``add_room`` drops the set-up's plain
``tokens``), and is made readable by its owner only (mode 0600, with its WAL and shared-memory
files). ``delete_room`` forgets a room and everything played in it (the expiry of idle rooms).
Files of earlier versions gain the new columns when opened.

**Another connection holding the file.** A write waits at most ``BUSY_TIMEOUT`` seconds for
another connection's write lock (a backup, a second server on the same file, ``sqlite3`` in a
shell). A write that finds the file locked is handed, in order, to the store's writer thread,
which retries it (``RETRY`` seconds apart, doubling to ``RETRY_MOST``) until the lock is free,
and the writes after it follow it there meanwhile: the event loop never waits on the lock, and
the server says so on stderr, one line when the file is found locked and one when the writes
waiting are written. ``prune`` is skipped while the file is locked (the next sweep prunes);
``close`` waits up to ``CLOSE_WAIT`` seconds for the writes still waiting.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS rooms (
    id TEXT PRIMARY KEY,
    created REAL NOT NULL,
    setup TEXT NOT NULL,
    creator TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS matches (
    room TEXT NOT NULL REFERENCES rooms(id),
    number INTEGER NOT NULL,
    seed TEXT NOT NULL,  -- text: a seed may pass SQLite's signed 64-bit integers
    started REAL NOT NULL,
    record TEXT,  -- the finished match's game record (JSON); NULL while it is the room's current match
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
BUSY_TIMEOUT = 0.05  # seconds a write waits for another connection's lock before the writer thread takes it
RETRY = 0.05  # seconds between the writer thread's tries, doubling up to RETRY_MOST
RETRY_MOST = 1.0
OPEN_TIMEOUT = 5.0  # seconds opening the file (its schema) waits for another connection's lock
CLOSE_WAIT = 10.0  # seconds ``close`` waits for the writes still waiting
ADDED = {"rooms": {"creator": "TEXT NOT NULL DEFAULT ''"}, "matches": {"record": "TEXT"}}  # columns of later versions


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
    """A room as stored: its set-up, the matches to replay (each ``(number, seed, plays)``, oldest
    first: the current one, or every one with ``load(..., every_match=True)``) and the numbers
    of its finished matches kept as records (``kept``)."""

    id: str
    created: float
    setup: dict[str, Any]
    matches: list[tuple[int, int, list[StoredPlay]]]  # (number, seed, plays)
    last: float = 0.0  # epoch seconds of its last stored change (set-up, match or play)
    creator: str = ""
    kept: list[int] = field(default_factory=list)  # finished matches whose records are stored


class Store:
    """The SQLite file at ``path`` (``":memory:"`` for none); see the module docstring."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            os.close(os.open(self.path, os.O_CREAT | os.O_RDWR, 0o600))
        self.db = sqlite3.connect(self.path, timeout=OPEN_TIMEOUT, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("PRAGMA foreign_keys=ON")
        self.db.executescript(SCHEMA)
        self._migrate()
        self.db.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT * 1000)}")
        self.private()
        self._lock = threading.RLock()  # one thread at a time on the connection
        self._waiting: deque[tuple[Callable[[], Any], str]] = deque()  # writes for the writer thread, in order
        self._writer: threading.Thread | None = None
        self._locked_since = 0.0

    def _write(self, work: Callable[[], Any], what: str) -> Any:
        """``work()`` as one transaction: now, or, if another connection holds the file's write
        lock (or writes wait already), by the writer thread once it is free (``None`` answered)."""
        with self._lock:
            if not self._waiting:
                try:
                    return self._transaction(work)
                except sqlite3.OperationalError as exc:
                    if not _locked(exc):
                        raise
                self._locked_since = time.monotonic()
                _say(f"the file {self.path} is locked by another connection; {what} and the writes after it wait")
            self._waiting.append((work, what))
            if self._writer is None:
                self._writer = threading.Thread(target=self._write_waiting, name="bigtwo-store", daemon=True)
                self._writer.start()
        return None

    def _transaction(self, work: Callable[[], Any]) -> Any:
        self.db.execute("BEGIN IMMEDIATE")  # the write lock now, or ``database is locked`` now
        try:
            out = work()
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")
        return out

    def _write_waiting(self) -> None:
        """The writer thread: the waiting writes in order, each retried until the lock is free."""
        pause, written = RETRY, 0
        while True:
            with self._lock:
                if not self._waiting:
                    self._writer = None
                    waited = time.monotonic() - self._locked_since
                    _say(f"the file {self.path} is free again after {waited:.1f} s; {written} waiting writes written")
                    return
                work, what = self._waiting[0]
                try:
                    self._transaction(work)
                except sqlite3.OperationalError as exc:
                    if not _locked(exc):
                        self._waiting.popleft()
                        _say(f"{what} could not be written: {exc}")
                        continue
                except sqlite3.Error as exc:
                    self._waiting.popleft()
                    _say(f"{what} could not be written: {exc}")
                    continue
                else:
                    self._waiting.popleft()
                    written += 1
                    pause = RETRY
                    continue
            time.sleep(pause)
            pause = min(2 * pause, RETRY_MOST)

    def waiting(self) -> int:
        """Writes waiting for another connection's lock (the writer thread's)."""
        with self._lock:
            return len(self._waiting)

    def private(self) -> None:
        """The file and its WAL and shared-memory files readable and writable by their owner only."""
        if self.path == ":memory:":
            return
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.chmod(self.path + suffix, 0o600)

    def _migrate(self) -> None:
        """Add the columns of later versions to a file an earlier version wrote."""
        for table, columns in ADDED.items():
            have = {row[1] for row in self.db.execute(f"PRAGMA table_info({table})")}
            for name, kind in columns.items():
                if name not in have:
                    self.db.execute(f"ALTER TABLE {table} ADD COLUMN {name} {kind}")

    def add_room(
        self,
        room_id: str,
        setup: dict[str, Any],
        created: float | None = None,
        creator: str = "",
        first_seed: int | None = None,
    ) -> None:
        """Store a new room's set-up, without its plain ``tokens``, and with ``first_seed`` its
        first match too, in one transaction (a room is never stored without its match)."""
        kept = {k: v for k, v in setup.items() if k != "tokens"}
        now = time.time() if created is None else created

        def work() -> None:
            self.db.execute(
                "INSERT INTO rooms (id, created, setup, creator) VALUES (?, ?, ?, ?)",
                (room_id, now, json.dumps(kept), creator),
            )
            if first_seed is not None:
                self.db.execute(
                    "INSERT INTO matches (room, number, seed, started) VALUES (?, 1, ?, ?)",
                    (room_id, str(first_seed), now),
                )

        self._write(work, f"room {room_id}'s set-up")

    def delete_room(self, room_id: str) -> None:
        """Forget a room: its set-up, matches and plays, in one transaction."""

        def work() -> None:
            self.db.execute("DELETE FROM plays WHERE room = ?", (room_id,))
            self.db.execute("DELETE FROM matches WHERE room = ?", (room_id,))
            self.db.execute("DELETE FROM rooms WHERE id = ?", (room_id,))

        self._write(work, f"the deletion of room {room_id}")

    def add_match(
        self,
        room_id: str,
        number: int,
        seed: int,
        finished: dict[str, Any] | None = None,
        keep: int | None = None,
    ) -> None:
        """Store the start of a room's match ``number`` dealt from ``seed``, in one transaction
        with ``finished``, the record of match ``number - 1``, and the deletion of the room's
        finished matches before its last ``keep``."""
        started = time.time()

        def work() -> None:
            if finished is not None:
                self._archive(room_id, number - 1, finished)
            self.db.execute(
                "INSERT INTO matches (room, number, seed, started) VALUES (?, ?, ?, ?)",
                (room_id, number, str(seed), started),
            )
            if keep is not None:
                self._forget(room_id, number - 1 - keep)

        self._write(work, f"room {room_id}'s match {number}")

    def archive(self, room_id: str, number: int, record: dict[str, Any], keep: int | None = None) -> None:
        """Store the record of a room's finished match ``number`` (a file of an earlier version,
        whose finished matches have none) and trim the room's history to ``keep`` matches."""

        def work() -> None:
            self._archive(room_id, number, record)
            if keep is not None:
                self._forget(room_id, number - keep)

        self._write(work, f"room {room_id}'s record of match {number}")

    def _archive(self, room_id: str, number: int, record: dict[str, Any]) -> None:
        self.db.execute(
            "UPDATE matches SET record = ? WHERE room = ? AND number = ?", (json.dumps(record), room_id, number)
        )

    def _forget(self, room_id: str, through: int) -> None:
        """Delete the room's matches numbered ``through`` and below, with their plays."""
        if through >= 1:
            self.db.execute("DELETE FROM plays WHERE room = ? AND match <= ?", (room_id, through))
            self.db.execute("DELETE FROM matches WHERE room = ? AND number <= ?", (room_id, through))

    def prune(self, total: int) -> list[tuple[str, int]]:
        """Keep the newest ``total`` finished matches of the whole file, deleting older ones with
        their plays (never a room's current match); the ``(room, match)`` deleted (none while the
        file is locked by another connection: the next call prunes)."""

        def work() -> list[tuple[str, int]]:
            old = self.db.execute(
                "SELECT room, number FROM matches WHERE record IS NOT NULL ORDER BY started DESC, room, number "
                "LIMIT -1 OFFSET ?",
                (max(0, total),),
            ).fetchall()
            for room_id, number in old:
                self.db.execute("DELETE FROM plays WHERE room = ? AND match = ?", (room_id, number))
                self.db.execute("DELETE FROM matches WHERE room = ? AND number = ?", (room_id, number))
            return [(str(r), int(n)) for r, n in old]

        with self._lock:
            if self._waiting:
                return []
            try:
                return list(self._transaction(work))
            except sqlite3.OperationalError as exc:
                if not _locked(exc):
                    raise
                return []

    def add_play(self, room_id: str, match: int, seq: int, seat: int, cards: str, by: str) -> None:
        """Store one turn; ``sqlite3.IntegrityError`` if that ``seq`` is stored already (said on
        stderr instead if the write waited for another connection's lock)."""
        row = (room_id, match, seq, seat, cards, by, time.time())
        self._write(
            lambda: self.db.execute(
                "INSERT INTO plays (room, match, seq, seat, cards, by, at) VALUES (?, ?, ?, ?, ?, ?, ?)", row
            ),
            f"room {room_id}'s play {seq}",
        )

    def record(self, room_id: str, number: int) -> dict[str, Any] | None:
        """The stored record of a room's finished match, ``None`` if it has none (any more)."""
        with self._lock:
            row = self.db.execute(
                "SELECT record FROM matches WHERE room = ? AND number = ? AND record IS NOT NULL", (room_id, number)
            ).fetchone()
        return None if row is None else json.loads(row[0])

    def room_ids(self) -> list[str]:
        """Every stored room's id, oldest room first."""
        with self._lock:
            return [r[0] for r in self.db.execute("SELECT id FROM rooms ORDER BY created, id")]

    def rooms(self, every_match: bool = False) -> list[StoredRoom]:
        """Every stored room (``load``), oldest first; a room that cannot be read raises."""
        return [self.load(room_id, every_match) for room_id in self.room_ids()]

    def load(self, room_id: str, every_match: bool = False) -> StoredRoom:
        """One stored room: its set-up and the plays of the matches that have no record (its
        current one), or of ``every_match``; ``ValueError`` (or ``KeyError``) if it cannot be read."""
        with self._lock:
            return self._load(room_id, every_match)

    def _load(self, room_id: str, every_match: bool) -> StoredRoom:
        row = self.db.execute("SELECT created, setup, creator FROM rooms WHERE id = ?", (room_id,)).fetchone()
        if row is None:
            raise KeyError(f"no room {room_id!r} in the file")
        created, setup_text, creator = row
        setup = json.loads(setup_text)
        if not isinstance(setup, dict):
            raise ValueError(f"room {room_id}: its set-up is not a JSON object")
        matches, kept = [], []
        last = float(created)
        rows = self.db.execute(
            "SELECT number, seed, started, record IS NOT NULL FROM matches WHERE room = ? ORDER BY number", (room_id,)
        ).fetchall()
        for number, seed, started, archived in rows:
            last = max(last, float(started))
            if archived and not every_match:
                kept.append(int(number))
                continue
            plays = [
                StoredPlay(*row)
                for row in self.db.execute(
                    "SELECT seq, seat, cards, by, at FROM plays WHERE room = ? AND match = ? ORDER BY seq",
                    (room_id, number),
                )
            ]
            matches.append((int(number), int(seed), plays))
            last = max([last, *(p.at for p in plays)])
        return StoredRoom(room_id, float(created), setup, matches, last, str(creator), kept)

    def play_counts(self) -> dict[tuple[str, int], tuple[int, int, int]]:
        """``(room, match) -> (plays, lowest seq, highest seq)``: what the load benchmark checks."""
        with self._lock:
            rows = self.db.execute(
                "SELECT room, match, COUNT(*), MIN(seq), MAX(seq) FROM plays GROUP BY room, match"
            ).fetchall()
        return {(r, int(m)): (int(n), int(lo), int(hi)) for r, m, n, lo, hi in rows}

    def integrity(self) -> str:
        """SQLite's own check of the file: ``"ok"`` when it is sound."""
        with self._lock:
            return str(self.db.execute("PRAGMA integrity_check").fetchone()[0])

    def close(self) -> None:
        """Write the waiting writes (up to ``CLOSE_WAIT`` seconds), the WAL back into the file, and close it."""
        writer = self._writer
        if writer is not None:
            writer.join(CLOSE_WAIT)
        with self._lock:
            if self._waiting:
                _say(f"{len(self._waiting)} writes still waited for another connection's lock and are lost")
                self._waiting.clear()
            try:
                self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            finally:
                self.db.close()


def _locked(exc: sqlite3.OperationalError) -> bool:
    """Whether ``exc`` is SQLite's "database is locked" (another connection holds the write lock)."""
    return "locked" in str(exc) or "busy" in str(exc)


def _say(line: str) -> None:
    print(f"bigtwo serve: store: {line}", file=sys.stderr, flush=True)
