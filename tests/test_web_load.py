"""A bounded load test of the web table under attack: a real ``bigtwo serve`` on 127.0.0.1 plays
normal rooms while hostile clients run beside them, one attack at a time and then all at once:

- ``stuck``: websockets that complete their handshake and never read, on a busy room;
- ``malformed``: clients sending oversized, binary, deeply nested and non-JSON messages;
- ``costly``: rooms of searchers at the most a web seat may ask for, and refused requests for more;
- ``replays``: replays with the coach on every move, and refused replays each with another variant.

Each phase lasts ``PHASE`` seconds and sends a bounded number of requests; the test asserts that
a normal room keeps moving (at least ``KEEP`` of its moves per second alone) and that the
server's memory stays bounded, and prints the figures (moves/s of the normal room per phase, RSS
before and after). Everything stops by itself in well under a minute."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from test_web_hostile import finished_record, moves_per_second, stuck_socket, watch_room
from web_server import Server
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

PHASE = 4.0  # seconds a phase runs
KEEP = 0.1  # the share of its moves per second alone a normal room keeps under attack
MAX_GROWTH = 120  # MiB the server may grow over the whole test


def person_room(server: Server, stop: threading.Event) -> threading.Thread:
    """A room with one scripted person (lowest legal play at once) and greedy agents, match after match."""
    room = server.room(variant="japan", seats=["person", "greedy", "greedy", "greedy"])
    room_id, token = room["links"][0]["url"].split("?room=")[1].split("&token=")

    def play() -> None:
        with connect(f"{server.ws}ws/{room_id}?token={token}", max_size=2**22) as ws:
            while not stop.is_set():
                try:
                    m = json.loads(ws.recv(timeout=1))
                except TimeoutError:
                    continue
                if m["type"] != "state":
                    continue
                if m["over"]:
                    ws.send(json.dumps({"type": "next_match"}))
                elif m["legal"]:
                    ws.send(json.dumps({"type": "play", "cards": " ".join(m["legal"][-1]) or "pass", "seq": m["seq"]}))

    t = threading.Thread(target=play, daemon=True)
    t.start()
    return t


def stuck(server: Server, stop: threading.Event) -> None:
    room = watch_room(server, pace=0.02)  # busy (about 50 state messages a second), not a second full-speed room
    socks = [stuck_socket(server, room) for _ in range(4)]
    with connect(f"{server.ws}ws/{room}") as ws:  # keep the busy room going from match to match
        while not stop.is_set():
            try:
                if json.loads(ws.recv(timeout=0.5)).get("over"):
                    ws.send(json.dumps({"type": "next_match"}))
            except TimeoutError:
                pass
    for s in socks:
        s.close()


def malformed(server: Server, stop: threading.Event) -> None:
    room = server.room(variant="japan", seats=["person", "greedy", "greedy", "greedy"])
    url = room["links"][0]["url"].replace("http://", "ws://").replace("/?room=", "/ws/").replace("&token=", "?token=")
    bad: list[str | bytes] = ["x" * 5000, b"\x00" * 3000, "[" * 3000, "{not json", '{"type": "play", "cards": 7}']
    with connect(url) as ws:
        for i in range(400):  # bounded
            if stop.is_set():
                break
            ws.send(bad[i % len(bad)])
            while json.loads(ws.recv(timeout=10))["type"] != "error":  # each refused, the socket kept
                pass
    with connect(url) as ws:  # a frame past the server's limit: the socket is closed, "message too big"
        ws.send("x" * 200_000)
        with pytest.raises(ConnectionClosed) as closed:
            while True:
                ws.recv(timeout=10)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009


def costly(server: Server, stop: threading.Event) -> None:
    for _ in range(2):
        watch_room(server, agent="search:seconds=1")
    for spec in ("search:seconds=86400", "search:simulations=1000000000", "search:threads=512"):
        status, _ = server.api("/api/rooms", {"variant": "taiwan", "seats": ["person", spec, "greedy", "greedy"]})
        assert status == 400
    stop.wait()


def replays(server: Server, stop: threading.Event) -> None:
    rec = finished_record("taiwan", seed=5)
    for i in range(2):  # the strong coach on every move of a match, left running past the phase
        body = {**rec, "info": {"n": i, "at": time.time()}}
        threading.Thread(target=server.api, args=("/api/replay?coach=1", body), daemon=True).start()
    wrong = {**rec, "games": [{**rec["games"][0], "winner": (rec["games"][0]["winner"] + 1) % 4}]}
    for i in range(40):  # bounded
        if stop.is_set():
            return
        status, _ = server.api("/api/replay?coach=1", {**wrong, "variant": {**rec["variant"], "description": f"v{i}"}})
        assert status == 400


ATTACKS: dict[str, Callable[[Server, threading.Event], None]] = {
    "stuck": stuck,
    "malformed": malformed,
    "costly": costly,
    "replays": replays,
}


def run_phase(server: Server, normal: str, attacks: list[Callable[[Server, threading.Event], None]]) -> float:
    stop = threading.Event()
    errors: list[BaseException] = []

    def guarded(attack: Callable[[Server, threading.Event], None]) -> None:
        try:
            attack(server, stop)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)

    threads = [threading.Thread(target=guarded, args=(a,), daemon=True) for a in attacks]
    for t in threads:
        t.start()
    time.sleep(0.5)
    rate = moves_per_second(server, normal, PHASE)
    stop.set()
    for t in threads:
        t.join(60)
    assert not errors, errors
    return rate


def test_normal_rooms_keep_moving_and_memory_stays_bounded_under_attack(tmp_path: Path) -> None:
    server = Server(tmp_path / "rooms.sqlite", pace=0.0, away=30.0)
    stop_people = threading.Event()
    try:
        normal = watch_room(server)
        people = person_room(server, stop_people)
        server.room(variant="taiwan", seats=["person", "strong", "greedy", "greedy"])  # torch and the network loaded
        rss_start = server.rss()
        figures: dict[str, float] = {"alone": moves_per_second(server, normal, PHASE)}
        rss: dict[str, tuple[float, float]] = {}
        for name, attack in [*ATTACKS.items(), ("all at once", None)]:
            before = server.rss()
            figures[name] = run_phase(server, normal, list(ATTACKS.values()) if attack is None else [attack])
            rss[name] = (before, server.rss())
        rss_end = server.rss()
        lines = [f"alone: {figures['alone']:.0f} moves/s, RSS {rss_start:.0f} MiB"]
        lines += [f"{n}: {figures[n]:.0f} moves/s, RSS {a:.0f} -> {b:.0f} MiB" for n, (a, b) in rss.items()]
        print("\nweb load under attack (a normal greedy room's moves/s):\n  " + "\n  ".join(lines))
        for name, rate in figures.items():
            assert rate >= KEEP * figures["alone"], (name, rate, figures)
        assert figures["alone"] > 20
        assert rss_end - rss_start < MAX_GROWTH, (rss_start, rss_end)
    finally:
        stop_people.set()
        status, out = server.stop()
    people.join(10)
    assert status == 0 and "Traceback" not in out, out
