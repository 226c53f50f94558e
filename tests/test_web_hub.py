"""The web table's hub in process, without a server: what it holds of a room and of a client."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections import deque
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")

from bigtwo.web.hub import Connection, Hub  # noqa: E402 - after the skip: the web extra
from bigtwo.web.room import Room  # noqa: E402
from bigtwo.web.store import Store  # noqa: E402

# three-player japan ships no network: its default agent and coach are the heuristic (no torch)
FORM = {"variant": "japan", "settings": {"players": 3, "games": 1}, "pace": 0}


def traces(obj: Any, room_id: str, room: Room, path: str = "hub", seen: set[int] | None = None) -> list[str]:
    """Where in ``obj`` (the hub, and everything of ``bigtwo.web`` it holds, at any depth) the room
    is named: its id as a key or value (alone or in a tuple key) or the ``Room`` itself."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return []
    seen.add(id(obj))
    if obj is room or (isinstance(obj, str) and obj == room_id):
        return [path]
    found: list[str] = []
    if isinstance(obj, dict):
        for key, value in list(obj.items()):
            found += traces(key, room_id, room, f"{path} key {key!r}", seen)
            found += traces(value, room_id, room, f"{path}[{key!r}]", seen)
    elif isinstance(obj, (list, tuple, set, frozenset, deque)):
        for i, item in enumerate(list(obj)):
            found += traces(item, room_id, room, f"{path}[{i}]", seen)
    elif type(obj).__module__.startswith("bigtwo.web") and hasattr(obj, "__dict__"):
        for name, value in vars(obj).items():
            found += traces(value, room_id, room, f"{path}.{name}", seen)
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for f in dataclasses.fields(obj):
            found += traces(getattr(obj, f.name), room_id, room, f"{path}.{f.name}", seen)
    return found


class Socket:
    """A websocket nobody reads: the hub only queues messages for it."""


async def _expiring(db: Path) -> None:
    hub = Hub(Store(db), room_ttl=60.0)
    hub.start()
    try:
        idle = await hub.create({**FORM, "seats": ["greedy"] * 3, "seed": 4}, client="a")
        kept = await hub.create({**FORM, "seats": ["person", "greedy", "greedy"]}, client="b")
        for _ in range(2000):  # the agents play the idle room's match out (pace 0, one game)
            if idle.game.is_over:
                break
            await asyncio.sleep(0.01)
        assert idle.game.is_over
        await hub.replays.replay(idle.record(1), False, key=(idle.id, 1, False))  # cached
        watcher = Connection(Socket(), None, "a")  # type: ignore[arg-type]
        hub.opened(idle.id, watcher)  # a spectator came and went: a settling broadcast, counts
        hub.closed(idle.id, watcher)
        person = Connection(Socket(), 0, "b")  # type: ignore[arg-type]
        hub.opened(kept.id, person)  # connected: never idle
        driver = hub.rooms[idle.id].driver
        assert traces(hub, idle.id, idle) and traces(hub, kept.id, kept)

        assert hub.expire(time.time() + 61.0) == [idle.id]

        assert traces(hub, idle.id, idle) == []
        assert idle.id not in hub.store.room_ids() and hub.room(idle.id) is None
        assert "a" not in hub.clients  # its socket closed and its rooms are gone: nothing of it is held
        await asyncio.sleep(0)
        assert driver is not None and driver.cancelled()
        assert hub.room(kept.id) is kept and traces(hub, kept.id, kept)  # the room with a person stays
        assert hub.clients["b"].sockets == 1
        hub.closed(kept.id, person)
        assert "b" not in hub.clients
    finally:  # not ``hub.stop()``: in this test its gather of the drivers never returns (to look into)
        for task in asyncio.all_tasks() - {asyncio.current_task()}:
            task.cancel()
        for lane in hub.lanes.values():
            lane.shutdown()
        hub.store.close()


def test_expiring_a_room_leaves_no_trace_of_it_in_the_hub(tmp_path: Path) -> None:
    asyncio.run(_expiring(tmp_path / "rooms.sqlite"))
