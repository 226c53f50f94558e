"""The coach on the web table: a seated person's advice on their turn, and the coaches kept.

The hub asks ``Coaching.advise`` for a seat's advice (the ``coach`` message of a room's
websocket). The position is copied out of the room (``bigtwo.web.coach.Position``) and ranked in
the ``coach`` lane; the coach itself is built (a network loaded) in the ``builder`` lane, and
once built is taken at once, never queued there behind a room's set-up or anything else. A
position already being ranked is not ranked again: every socket that asks for it waits for the
one ranking, which is cancelled when the last of them closes. One client has at most
``Limits.coach_per_client`` positions being ranked (``TooMany``). Coaches are kept per lane and
rules (``coach`` for rooms, ``replay`` for ``bigtwo.web.replays``: an instance is used in one
thread), at most ``MAX_COACHES``, the least recently used dropped.
"""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from bigtwo.env.rules.variant import Variant
from bigtwo.web.coach import Coach, Position
from bigtwo.web.forms import MAX_AGENT_THREADS, RoomError
from bigtwo.web.lanes import Run
from bigtwo.web.limits import Held, Limits
from bigtwo.web.room import Room

MAX_COACHES = 8  # coaches (a variant's, for the coach or the replay thread)


@dataclass(eq=False)
class _Shared:
    """One piece of work many await (``Coaching._shared``): its task and how many await it."""

    task: asyncio.Future
    waiting: int = 0


class Coaching:
    """The coaches and the advice being ranked; see the module docstring. ``run``: the hub's way
    to run work in a lane (``Hub.run``)."""

    def __init__(self, run: Run, limits: Limits) -> None:
        self.run = run
        self.limits = limits
        self._coaches: OrderedDict[str, Coach] = OrderedDict()
        self._ranking: dict[tuple[str, int, int], _Shared] = {}  # (room, match, seq) -> its ranking
        self._held = Held()  # positions being ranked, by client
        self._lock = threading.Lock()  # the coaches kept: the builder thread and the event loop

    @staticmethod
    def _key(variant: Variant, lane: str) -> str:
        return f"{lane}\n{variant.name}\n{variant.rules_key()}"

    def kept(self, variant: Variant, lane: str = "coach") -> Coach | None:
        """The coach for ``variant``'s rules that ranks in ``lane`` if it is built, else ``None``."""
        key = self._key(variant, lane)
        with self._lock:
            if key in self._coaches:
                self._coaches.move_to_end(key)
                return self._coaches[key]
        return None

    def coach(self, variant: Variant, lane: str = "coach") -> Coach:
        """The coach for ``variant``'s rules that ranks in ``lane`` (``coach`` or ``replay``: an
        instance is used in one thread), built in the calling thread; at most ``MAX_COACHES`` kept."""
        kept = self.kept(variant, lane)
        if kept is not None:
            return kept
        built = Coach(variant, threads=MAX_AGENT_THREADS)  # without the lock: it loads a network
        with self._lock:
            coach = self._coaches.setdefault(self._key(variant, lane), built)
            while len(self._coaches) > MAX_COACHES:
                self._coaches.popitem(last=False)
        return coach

    async def advise(self, room: Room, seat: int | None, client: str = "") -> dict[str, Any]:
        """The coach's advice for ``seat`` on its turn (in the coach thread). A
        position already being ranked is not ranked again: every socket that asks waits for the
        one ranking. ``TooMany`` if ``client`` has ``Limits.coach_per_client`` positions being
        ranked; cancelled when the last socket waiting for it closes."""
        if seat is None:
            raise RoomError("the coach advises a seated player; spectators have no hand")
        if room.to_act != seat or room.game.is_over:
            raise RoomError("the coach advises on your turn; it is not your turn")
        position, seq = Position.of(room.game), len(room.moves)
        variant = room.variant

        async def rank() -> dict[str, Any]:
            with self._held.hold(client, self.limits.coach_per_client, "coach requests", retry_after=2):
                coach = self.kept(variant) or await self.run("builder", self.coach, variant, client=client)
                return await self.run("coach", coach.advise_at, position, client=client)

        advice = await self._shared((room.id, room.match, seq), rank)
        if seq != len(room.moves):
            raise RoomError("the game moved on while the coach was thinking; ask again")
        return {"type": "coach", "seq": seq, **advice}

    async def _shared(self, key: tuple[str, int, int], work: Callable[[], Awaitable[Any]]) -> Any:
        """``work()`` run once for everyone awaiting ``key`` at once; cancelled when none is left."""
        shared = self._ranking.get(key)
        if shared is None or shared.task.done():
            shared = self._ranking[key] = _Shared(asyncio.ensure_future(work()))

            def forget(_task: asyncio.Future[Any], k: Any = key, s: _Shared = shared) -> None:
                if self._ranking.get(k) is s:
                    self._ranking.pop(k, None)

            shared.task.add_done_callback(forget)
        shared.waiting += 1
        try:
            return await asyncio.shield(shared.task)
        finally:
            shared.waiting -= 1
            if not shared.waiting and not shared.task.done():
                shared.task.cancel()
