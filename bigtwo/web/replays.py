"""Replays on the web table: a finished match's record checked by the engine and expanded move by
move, with the coach's advice on each move if asked (``GET /api/rooms/{room}/replay``, ``POST
/api/replay`` of ``bigtwo.web.app``).

The record is replayed through the engine in the ``builder`` lane (a record the engine refuses,
or a match not over, is a ``RoomError``); the coach (``bigtwo.web.coaching``) advises each
move in the ``replay`` lane, one move at a time, so rooms' coaches get their turns between. At
most ``MAX_REPLAYS`` run at once (``Busy``) and ``Limits.replays_per_client`` for one client
(``TooMany``), each at most ``Limits.replay_timeout`` seconds (``Busy``); cancelling the await
(the client hung up) stops a replay at once and frees its slot, and a stopping server ends each
at its next move (``Stopping``). A room's finished match is cached by ``(room, match, coach)``,
at most ``MAX_REPLAYS`` of them (least recently used dropped), and forgotten with its room.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from bigtwo.env.envs.game import Game
from bigtwo.env.records.record import game_from_record
from bigtwo.env.rules.variant import Variant
from bigtwo.web.coach import Coach, Position
from bigtwo.web.forms import RoomError
from bigtwo.web.lanes import Run
from bigtwo.web.limits import Busy, Held, Limits, Stopping

MAX_REPLAYS = 16  # replays running at once, and room replays cached

ReplayKey = tuple[str, int, bool]  # a room's finished match: (room, match, with the coach)


class Replays:
    """The replays running and the rooms' replays cached; see the module docstring. ``run``: the
    hub's way to run work in a lane (``Hub.run``); ``coach(variant, lane)``: a coach to build in
    the calling thread (``Coaching.coach``)."""

    def __init__(self, run: Run, coach: Callable[[Variant, str], Coach], limits: Limits) -> None:
        self.run = run
        self.coach = coach
        self.limits = limits
        self.running = 0  # replays being expanded now
        self.stopping = False  # set by the hub's ``begin_stop``: replays end at their next move
        self._cached: OrderedDict[ReplayKey, dict[str, Any]] = OrderedDict()
        self._held = Held()  # replays running, by client

    async def replay(
        self, record: Any, with_coach: bool, key: ReplayKey | None = None, client: str = ""
    ) -> dict[str, Any]:
        """A finished match's record, checked by replaying it through the engine, and each move
        expanded: ``{game, seat, cards, lead}`` plus the coach's advice (``with_coach``) for the
        seat that moved, from that seat's information at that point. The record answered is the
        engine's own (only ``seats`` and ``info`` are taken from the one given). ``key``: cache
        it (a room's finished match). At most ``MAX_REPLAYS`` at once (``Busy``) and
        ``Limits.replays_per_client`` for ``client`` (``TooMany``), each at most
        ``Limits.replay_timeout`` seconds (``Busy``); cancelling the await (the client hung up)
        stops the replay at once and frees its slot."""
        if key is not None and key in self._cached:
            self._cached.move_to_end(key)
            return self._cached[key]
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
        if key is not None:
            self._cached[key] = out
            while len(self._cached) > MAX_REPLAYS:
                self._cached.popitem(last=False)
        return out

    def forget(self, room_id: str) -> None:
        """Room ``room_id`` is gone: its cached replays are dropped."""
        for key in [k for k in self._cached if k[0] == room_id]:
            del self._cached[key]

    async def _expand(self, record: Any, with_coach: bool, client: str) -> dict[str, Any]:
        """``replay``'s work: the record through the engine, then the coach on each move."""
        steps: list[dict[str, Any]] = []
        positions: list[Position] = []

        def note(game: Game, number: int, seat: int, cards: str) -> None:
            steps.append({"game": number, "seat": seat, "cards": cards, "lead": not game.table})
            if with_coach:
                positions.append(Position.of(game))

        def expand() -> Game:
            if not isinstance(record, dict):
                raise RoomError("send a game record: a JSON object with format, variant, seed, games, ...")
            return game_from_record(record, note)

        final = await self.run("builder", expand, client=client)
        if not final.is_over:
            raise RoomError(
                "this record's match is not over; a replay shows every hand, so only finished matches replay"
            )
        seats = record.get("seats")
        info = record.get("info")
        try:
            checked = final.to_record(seats=seats, info=info)
        except ValueError as exc:
            raise RoomError(f"game record: {exc}") from None
        if with_coach:
            coach = await self.run("builder", self.coach, final.variant, "replay", client=client)
            for step, position in zip(steps, positions, strict=True):  # one move at a time: rooms' coaches between
                if self.stopping:
                    raise Stopping("the server is stopping; ask for this replay again once it is back")
                step["coach"] = await self.run("replay", coach.advise_at, position, client=client)
        return {"record": checked, "steps": steps}
