"""Replays on the web table: a finished match's record checked by the engine and expanded move by
move, with the coach's advice on each move if asked (``GET /api/rooms/{room}/replay``, ``POST
/api/replay`` of ``bigtwo.web.app``).

The record is replayed through the engine in the ``replay`` lane, never the ``builder`` lane a
room's coach is fetched from (a record the engine refuses, or a match not over, is a
``RoomError``); the coach (``bigtwo.web.coaching``) advises each move there too, one move at a
time, so other clients' replays get their turns between (the lane serves the client that has
used the least time first: a client replaying long records waits for the others). The answer
is serialised to JSON there as well, so the event loop only sends bytes. At most
``MAX_REPLAYS`` run at once (``Busy``) and ``Limits.replays_per_client`` for one client
(``TooMany``), each at most ``Limits.replay_timeout`` seconds (``Busy``); cancelling the await
(the client hung up) stops a replay at once and frees its slot, and a stopping server ends each
at its next move (``Stopping``). Answers are cached as their JSON bytes: a room's finished match
by ``(room, match, coach)``, forgotten with its room, and a record sent by its SHA-256 and
``coach``; at most ``MAX_REPLAYS`` of them and ``MAX_CACHED`` bytes in all (least recently used
dropped).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable
from typing import Any

from bigtwo.env.envs.game import Game
from bigtwo.env.records.record import game_from_record
from bigtwo.env.rules.variant import Variant
from bigtwo.web.coach import Coach, Position
from bigtwo.web.export import Cache
from bigtwo.web.forms import RoomError
from bigtwo.web.lanes import Run
from bigtwo.web.limits import Busy, Held, Limits, Stopping

MAX_REPLAYS = 16  # replays running at once, and replays cached
MAX_CACHED = 64 * 1024 * 1024  # bytes of replays cached

ReplayKey = tuple[str, int, bool]  # a room's finished match: (room, match, with the coach); ("#" digest, 0, coach)


class Replays:
    """The replays running and the rooms' replays cached; see the module docstring. ``run``: the
    hub's way to run work in a lane (``Hub.run``); ``coach(variant, lane)``: a coach to build in
    the calling thread (``Coaching.coach``); ``kept(variant, lane)``: one built already, or
    ``None`` (``Coaching.kept``)."""

    def __init__(
        self,
        run: Run,
        coach: Callable[[Variant, str], Coach],
        limits: Limits,
        kept: Callable[[Variant, str], Coach | None] = lambda variant, lane: None,
    ) -> None:
        self.run = run
        self.coach = coach
        self.kept = kept
        self.limits = limits
        self.running = 0  # replays being expanded now
        self.stopping = False  # set by the hub's ``begin_stop``: replays end at their next move
        self._cached = Cache(MAX_REPLAYS, MAX_CACHED)
        self._held = Held()  # replays running, by client

    async def replay(self, record: Any, with_coach: bool, key: ReplayKey | None = None, client: str = "") -> bytes:
        """A finished match's record, checked by replaying it through the engine, and each move
        expanded: ``{game, seat, cards, lead}`` plus the coach's advice (``with_coach``) for the
        seat that moved, from that seat's information at that point, as JSON bytes. The record
        answered is the engine's own (only ``seats`` and ``info`` are taken from the one given).
        ``key``: the room's finished match it is (else the record's digest keys the cache). At
        most ``MAX_REPLAYS`` at once (``Busy``) and ``Limits.replays_per_client`` for ``client``
        (``TooMany``), each at most ``Limits.replay_timeout`` seconds (``Busy``); cancelling the
        await (the client hung up) stops the replay at once and frees its slot."""
        if key is None:
            key = ("#" + _digest(record), 0, with_coach)
        cached = self._cached.get(key)
        if cached is not None:
            return cached
        if self.running >= MAX_REPLAYS:
            raise Busy(f"the server is replaying {MAX_REPLAYS} records already; try again in a moment")
        with self._held.hold(client, self.limits.replays_per_client, "replays", retry_after=10):
            self.running += 1
            try:
                out = await asyncio.wait_for(self._expand(record, with_coach, client), self.limits.replay_timeout)
            except TimeoutError:
                raise Busy(
                    f"this replay took more than {self.limits.replay_timeout:g} seconds, the most one may; "
                    "replay it without the coach, or a shorter match"
                ) from None
            finally:
                self.running -= 1
        self._cached.put(key, out)
        return out

    def forget(self, room_id: str) -> None:
        """Room ``room_id`` is gone: its cached replays are dropped."""
        self._cached.drop(lambda key: key[0] == room_id)

    async def _expand(self, record: Any, with_coach: bool, client: str) -> bytes:
        """``replay``'s work: the record through the engine, then the coach on each move."""
        steps: list[dict[str, Any]] = []
        positions: list[Position] = []

        def note(game: Game, number: int, seat: int, cards: str) -> None:
            steps.append({"game": number, "seat": seat, "cards": cards, "lead": not game.table})
            if with_coach:
                positions.append(Position.of(game))

        def expand() -> tuple[Game, dict[str, Any]]:
            if not isinstance(record, dict):
                raise RoomError("send a game record: a JSON object with format, variant, seed, games, ...")
            final = game_from_record(record, note)
            if not final.is_over:
                raise RoomError(
                    "this record's match is not over; a replay shows every hand, so only finished matches replay"
                )
            try:
                return final, final.to_record(seats=record.get("seats"), info=record.get("info"))
            except ValueError as exc:
                raise RoomError(f"game record: {exc}") from None

        final, checked = await self.run("replay", expand, client=client)
        if with_coach:
            coach = self.kept(final.variant, "replay") or await self.run(
                "builder", self.coach, final.variant, "replay", client=client
            )
            for step, position in zip(steps, positions, strict=True):  # one move at a time: rooms' coaches between
                if self.stopping:
                    raise Stopping("the server is stopping; ask for this replay again once it is back")
                step["coach"] = await self.run("replay", coach.advise_at, position, client=client)
        return await self.run("replay", _json, {"record": checked, "steps": steps}, client=client)


def _json(value: Any) -> bytes:
    """``value`` as the JSON bytes of the answer (as Starlette's ``JSONResponse`` writes them)."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")


def _digest(record: Any) -> str:
    """A sent record's SHA-256, of its canonical JSON (the same record, the same digest)."""
    try:
        text = json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(record)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
