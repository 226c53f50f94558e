"""The web table's third hostile round: no one request, socket or stranger stalls a friend's room
(thinking shared by cost, replays and records off the shared threads and the event loop, SQLite
writes that never hold the loop)."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import play_agent
from web_server import Server, states_until
from websockets.sync.client import connect

from bigtwo.agents.registry import make_agent
from bigtwo.env.envs.game import Game
from bigtwo.env.rules.variant import load_variant
from bigtwo.web.lanes import Lane

pytestmark = pytest.mark.exclusive  # timing of a real server: no other test runs beside it (conftest)


def test_a_strangers_long_jobs_never_hold_a_friends_quick_ones() -> None:
    """Three strangers keep a lane busy with 0.4 s jobs; a friend's quick jobs, one at a time
    like a room's moves, each wait milliseconds (the express thread), not a stranger's job."""
    lane = Lane("test", express=0.1)
    stop = threading.Event()

    def stranger(client: str) -> None:
        while not stop.is_set():
            lane.submit(time.sleep, 0.4, client=client).result(timeout=30)

    threads = [threading.Thread(target=stranger, args=(f"s{i}",)) for i in range(3)]
    try:
        for t in threads:
            t.start()
        time.sleep(1.0)  # every stranger measured (a first job counts as cheap): expensive
        waits = []
        for _ in range(6):
            began = time.perf_counter()
            lane.submit(time.sleep, 0.005, client="friend").result(timeout=30)
            waits.append(time.perf_counter() - began)
            time.sleep(0.05)  # the room's pace
        assert max(waits) < 0.3, waits  # a stranger's job is 0.4 s: the friend never waited for one
        assert lane.cost("s0") > 0.3 and lane.cost("friend") < 0.1
    finally:
        stop.set()
        for t in threads:
            t.join(10)
        lane.shutdown()


def test_a_lane_shares_time_by_cost_not_by_job() -> None:
    """Queued together, a client that has used more thinking time waits for one that has used
    less: an expensive client's second job goes after the cheap client's jobs."""
    lane = Lane("test")
    gate = threading.Event()
    order: list[str] = []
    try:
        lane.submit(time.sleep, 0.2, client="costly").result(timeout=10)  # it has used 0.2 s
        blocker = lane.submit(gate.wait)
        jobs = [lane.submit(order.append, f"costly{i}", client="costly") for i in range(2)]
        jobs += [lane.submit(order.append, f"cheap{i}", client="cheap") for i in range(3)]
        gate.set()
        for job in [blocker, *jobs]:
            job.result(timeout=10)
        assert order == ["cheap0", "cheap1", "cheap2", "costly0", "costly1"], order
    finally:
        lane.shutdown()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    s = Server(tmp_path_factory.mktemp("stalls") / "rooms.sqlite", pace=0.0, away=30.0)
    yield s
    s.stop()


def timed(server: Server, path: str, body: Any = None) -> tuple[float, int]:
    began = time.perf_counter()
    status, _ = server.api(path, body)
    return time.perf_counter() - began, status


def test_a_locked_store_file_never_holds_the_loop_or_drops_a_socket(tmp_path: Path) -> None:
    """Another connection holds the file's write lock (``BEGIN IMMEDIATE``) for 3 s: rooms are
    still made in well under the old 5 s busy wait, a room of agents plays on with its watcher's
    socket kept, the waiting writes are written once the lock is free, and the server says so
    in one line each, no traceback."""
    db = tmp_path / "rooms.sqlite"
    s = Server(db, pace=0.0, away=30.0)
    try:
        room = s.room(variant="japan", seats=["heuristic"] * 4, pace=0.2)["room"]
        control, status = timed(
            s, "/api/rooms", {"variant": "japan", "seats": ["person", "greedy", "greedy", "greedy"]}
        )
        assert status == 200
        holder = sqlite3.connect(db, isolation_level=None)
        with connect(f"{s.ws}ws/{room}", max_size=2**22) as ws:
            holder.execute("BEGIN IMMEDIATE")
            try:
                took, status = timed(
                    s, "/api/rooms", {"variant": "japan", "seats": ["person", "greedy", "greedy", "greedy"]}
                )
                lobby, _ = timed(s, "/api/rooms")
                seen = [m["seq"] for m in states_until(ws, time.monotonic() + 1.5)]
            finally:
                holder.execute("COMMIT")
                holder.close()
            print(
                f"\ncreate while the file is locked: {1000 * took:.0f} ms (unlocked {1000 * control:.0f} ms); lobby {1000 * lobby:.0f} ms"
            )
            assert status == 200 and took < max(1.0, 5 * control), (took, control)
            assert lobby < 1.0, lobby
            assert len(set(seen)) > 1  # the room played on, its watcher's socket kept
            ws.send(json.dumps({"type": "pace", "seconds": 0}))  # the socket still answers
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and "free again" not in "".join(s._out):
            time.sleep(0.2)
    finally:
        _, out = s.stop()
    assert "is locked by another connection" in out and "free again" in out, out[-2000:]
    assert "Traceback" not in out, out[-4000:]
    with sqlite3.connect(db) as con:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert con.execute("SELECT COUNT(*) FROM rooms").fetchone()[0] == 3


def long_record(games: int = 30) -> dict[str, Any]:
    """A finished match of ``games`` games (random seats): seconds of the engine to replay."""
    game = Game(load_variant("taiwan").replace(games=games), seed=1)
    agent = make_agent("random", game.variant, seed=0)
    while not game.is_over:
        play_agent(game, agent)
    return json.loads(json.dumps(game.to_record(seats=["a", "b", "c", "d"])))


def test_a_strangers_long_replays_never_hold_a_friends_room_and_repeat_from_the_cache(server: Server) -> None:
    """Two strangers replay a long record each (no coach): a friend's new room (built in the
    builder thread, where the coach is fetched too) is made as fast as without them, and the
    same record sent again is answered from the cache."""
    rec = long_record()
    form = {"variant": "japan", "seats": ["person", "greedy", "greedy", "greedy"]}
    server.room(**form)  # the coach's network loaded once
    control, status = timed(server, "/api/rooms", form)
    assert status == 200
    done: list[tuple[int, float]] = []

    def stranger(i: int) -> None:
        began = time.perf_counter()
        status, _ = server.api("/api/replay", {**rec, "info": {"n": i}}, source="127.0.0.2")
        done.append((status, time.perf_counter() - began))

    threads = [threading.Thread(target=stranger, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    time.sleep(0.3)  # both replays running
    took, status = timed(server, "/api/rooms", form)
    for t in threads:
        t.join(120)
    assert status == 200 and [s for s, _ in done] == [200, 200], done
    print(
        f"\na friend's create beside two long replays: {1000 * took:.0f} ms (alone {1000 * control:.0f} ms); replays {done}"
    )
    assert took < max(1.5, 5 * control), (took, control, done)
    again, status = timed(server, "/api/replay", {**rec, "info": {"n": 0}})
    assert status == 200 and again < min(t for _, t in done) / 3, (again, done)


async def _bodies(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from bigtwo.web import export
    from bigtwo.web.hub import Hub
    from bigtwo.web.limits import TooMany
    from bigtwo.web.store import Store

    hub = Hub(Store(db), room_ttl=60.0)
    hub.start()
    try:
        form = {"variant": "japan", "settings": {"players": 3, "games": 1}, "pace": 0, "seats": ["greedy"] * 3}
        room = await hub.create(form, client="a")
        for _ in range(2000):  # the agents play the match out
            if room.game.is_over:
                break
            await asyncio.sleep(0.01)
        assert room.game.is_over
        built: list[str] = []
        gate = threading.Event()
        real = export.match_record

        def spy(*args: Any) -> dict[str, Any]:
            built.append(threading.current_thread().name)
            gate.wait(10)
            return real(*args)

        monkeypatch.setattr(export, "match_record", spy)
        bodies = export.Bodies()
        first = [asyncio.ensure_future(bodies.record(room, 1, "stranger")) for _ in range(2)]
        await asyncio.sleep(0.2)  # both being built, in threads: the loop answers meanwhile
        with pytest.raises(TooMany):
            await bodies.records(room, "stranger")  # a third at once from the same client
        gate.set()
        one, two = await asyncio.gather(*first)
        assert one == two and json.loads(one) == room.record(1)
        again = await bodies.record(room, 1, "friend")
        lines = await bodies.records(room, "friend")
        assert again is (await bodies.record(room, 1, "stranger"))  # cached: the same bytes, not built again
        assert lines is (await bodies.records(room, "friend")) and json.loads(lines) == room.record(1)
        assert len(built) == 3 and threading.main_thread().name not in built, built
    finally:
        for hosted in hub.rooms.values():
            hosted.close()
        for lane in hub.lanes.values():
            lane.shutdown()


def test_record_bodies_are_built_off_the_loop_cached_and_limited_per_client(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``GET record`` and ``records.jsonl`` bodies: built in a worker thread (never the event
    loop's), each once (then the cached bytes, whoever asks), at most two at once per client."""
    asyncio.run(_bodies(tmp_path / "rooms.sqlite", monkeypatch))


def test_a_friends_turn_does_not_wait_for_strangers_attended_rooms_of_long_searches(server: Server) -> None:
    """Three strangers each keep an attended room of ``search:seconds=1`` agents thinking (a
    scripted person playing); a friend's turn against three ``strong`` waits well under a second
    (it waited 2 s beside one such stranger, 4-5 s beside three: one stranger's search a move)."""
    from test_web_attacker import person_turns

    body = {"variant": "taiwan", "seats": ["person", "strong", "strong", "strong"], "pace": 0}
    _, friend = server.api("/api/rooms", body, source="127.0.7.1")
    alone = sorted(person_turns(server, friend, 2.0, "127.0.7.1"))
    costly = {"variant": "taiwan", "seats": ["person", *["search:seconds=1"] * 3], "pace": 0}
    stop = time.monotonic() + 9.0
    rooms = [server.api("/api/rooms", costly, source=f"127.0.7.{10 + i}")[1] for i in range(3)]

    def stranger(i: int) -> None:
        person_turns(server, rooms[i], stop - time.monotonic(), f"127.0.7.{10 + i}")

    threads = [threading.Thread(target=stranger, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    time.sleep(2.5)  # the strangers' searches measured: each a second
    beside = sorted(person_turns(server, friend, 6.0, "127.0.7.1"))
    for t in threads:
        t.join(30)
    median = beside[len(beside) // 2]
    print(
        f"\nperson+3 strong turn: alone median {1000 * alone[len(alone) // 2]:.0f} ms; beside 3 strangers' "
        f"attended search:seconds=1 rooms median {1000 * median:.0f} ms, worst {1000 * beside[-1]:.0f} ms "
        f"over {len(beside)} turns"
    )
    assert len(beside) >= 5 and median < 1.0, (alone, beside)
