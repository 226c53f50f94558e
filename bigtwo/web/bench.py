"""``bigtwo serve-bench``: load on the web table, on localhost only, bounded in rooms and time.

Each repeat starts a real ``bigtwo serve`` (a subprocess on 127.0.0.1, a fresh SQLite file,
agents with no pace) and opens ``rooms`` rooms at once: every room has one or two scripted
people (websocket clients that play their lowest non-pass legal play the moment it is their
turn) and agents in the other seats; a finished match is followed by the next until the time is
up. Then the server is stopped with SIGTERM and its file checked:

- every move is stored once, numbered 0, 1, ... without a gap, in every match (no lost or
  duplicated move), every match replays through the engine, each client saw every move of its
  room exactly as stored (from the first it saw to the last), and every play a client sent
  is stored once;
- printed: rooms held at once, moves per second (all seats), and the p50 / p99 latency of a
  person's move (sending the play until the state that holds it arrives), medians over repeats.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

MAX_ROOMS = 400
MAX_SECONDS = 120.0
# one scripted client makes every room and keeps every match (the check reads them all back)
BENCH_LIMITS = (
    f"rooms_per_minute={MAX_ROOMS}",
    f"rooms_per_client={MAX_ROOMS}",
    "sockets_per_client=100000",
    "connections_per_client=100000",
    "matches_per_room=1000000",
    "matches_total=100000000",
)


class Client:
    """One scripted person: plays on its turns until ``deadline``, noting what it sees."""

    def __init__(self, url: str, leader: bool) -> None:
        self.url = url
        self.leader = leader  # starts the next match
        self.seen: dict[tuple[int, int], tuple[int, str]] = {}  # (match, seq) -> (seat, cards)
        self.conflicts = 0
        self.latencies: list[float] = []
        self.errors: list[str] = []
        self.plays = 0

    async def run(self, deadline: float) -> None:
        from websockets.asyncio.client import connect

        pending: tuple[int, int, float] | None = None  # (match, seq, sent at)
        async with connect(self.url, max_size=2**22) as ws:
            while True:
                left = deadline - time.monotonic()
                if left <= 0 and pending is None:
                    return
                try:
                    raw = await asyncio.wait_for(ws.recv(), timeout=max(left, 0) + 10)
                except TimeoutError:
                    self.errors.append("no message for 10 s")
                    return
                m = json.loads(raw)
                if m["type"] == "error":
                    self.errors.append(m["message"])
                    pending = None
                    continue
                if m["type"] != "state":
                    continue
                last = m["last_move"]
                if last is not None:
                    key, value = (m["match"], last["seq"]), (last["seat"], " ".join(last["cards"]))
                    if self.seen.setdefault(key, value) != value:
                        self.conflicts += 1
                if pending is not None and (m["match"], m["seq"]) > pending[:2]:
                    self.latencies.append(time.monotonic() - pending[2])
                    pending = None
                if time.monotonic() >= deadline:
                    if pending is None:
                        return
                    continue
                if m["over"] and self.leader and m["seq"] > 0:
                    await ws.send(json.dumps({"type": "next_match"}))
                elif m["legal"] and pending is None:
                    plays = [p for p in m["legal"] if p] or [[]]
                    play = {"type": "play", "cards": " ".join(plays[0]) or "pass", "seq": m["seq"], "match": m["match"]}
                    await ws.send(json.dumps(play))
                    pending = (m["match"], m["seq"], time.monotonic())
                    self.plays += 1


def _post(url: str, body: dict[str, Any]) -> dict[str, Any]:
    headers = {"Content-Type": "application/json"}
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST", headers=headers)
    with urllib.request.urlopen(req, timeout=60) as res:
        return json.loads(res.read())


async def _play(base: str, rooms: int, seconds: float, agent: str) -> tuple[list[Client], float]:
    clients: list[Client] = []
    for i in range(rooms):
        seats = ["person", agent, "person", agent] if i % 2 else ["person", agent, agent, agent]
        body = {"variant": "japan", "seats": seats, "pace": 0, **({} if i % 2 else {"seed": i})}  # a seed: one person
        room = _post(base + "api/rooms", body)
        for k, link in enumerate(room["links"]):
            ws = link["url"].replace("http://", "ws://").replace("/?room=", "/ws/").replace("&token=", "?token=")
            clients.append(Client(ws, leader=k == 0))
    t0 = time.monotonic()
    await asyncio.gather(*(c.run(t0 + seconds) for c in clients))
    return clients, time.monotonic() - t0


def bench_once(rooms: int, seconds: float, agent: str) -> dict[str, Any]:
    """One repeat (see the module docstring): its figures and checks."""
    from bigtwo.agents.registry import make_agent
    from bigtwo.web.room import Room
    from bigtwo.web.store import Store

    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.sqlite"
        cmd = [sys.executable, "-m", "bigtwo.cli", "serve", "--port", "0", "--db", str(db), "--pace", "0"]
        cmd += [part for item in BENCH_LIMITS for part in ("--limit", item)]
        proc = subprocess.Popen([*cmd, "--away-timeout", "3600"], stdout=subprocess.PIPE, text=True)
        try:
            line = proc.stdout.readline() if proc.stdout else ""
            if "http://" not in line:
                raise ValueError(f"the server did not start: {line!r}")
            clients, elapsed = asyncio.run(_play(line.split()[2], rooms, seconds, agent))
        finally:
            proc.terminate()
            proc.communicate(timeout=60)
        store = Store(db)
        counts = store.play_counts()
        stored = store.rooms(every_match=True)
        by_room = {r.id: r for r in stored}
        gaps = sum(1 for n, lo, hi in counts.values() if lo != 0 or hi != n - 1)
        replayed = [Room.restore(r, lambda spec, v: make_agent(spec, v, seed=0), None, time.monotonic) for r in stored]
        person_plays = sum(1 for r in stored for _n, _s, plays in r.matches for p in plays if p.by == "person")
        store.close()
    moves = sum(n for n, _lo, _hi in counts.values())
    lost = 0
    for c in clients:
        room_id = c.url.split("/ws/")[1].split("?")[0]
        stored_moves = {(m, p.seq): (p.seat, p.cards) for m, _s, plays in by_room[room_id].matches for p in plays}
        norm = {k: (s, cards or "pass") for k, (s, cards) in c.seen.items()}
        # moves before the client connected or after it left are not its to see
        first, last = min(norm, default=(0, 0)), max(norm, default=(0, -1))
        lost += len({k for k in stored_moves if first <= k <= last} - set(norm))
        c.conflicts += sum(1 for k, v in norm.items() if stored_moves.get(k) != v)
    latencies = sorted(x for c in clients for x in c.latencies)
    return {
        "rooms": len(replayed),
        "clients": len(clients),
        "moves": moves,
        "moves_per_s": moves / elapsed,
        "p50_ms": 1000 * latencies[len(latencies) // 2] if latencies else float("nan"),
        "p99_ms": 1000 * latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))] if latencies else float("nan"),
        "lost": lost + gaps + abs(person_plays - sum(c.plays for c in clients)),
        "duplicated": sum(c.conflicts for c in clients),
        "person_moves_stored": person_plays,
        "person_moves_sent": sum(c.plays for c in clients),
        "errors": sum(len(c.errors) for c in clients),
    }


def run_bench(rooms: int = 40, seconds: float = 20.0, repeats: int = 3, agent: str = "greedy") -> int:
    """Run ``repeats`` repeats and print each and the medians; status 1 if a move was lost or duplicated."""
    if not 1 <= rooms <= MAX_ROOMS:
        raise ValueError(f"--rooms must be 1..{MAX_ROOMS}, got {rooms}")
    if not 1 <= seconds <= MAX_SECONDS:
        raise ValueError(f"--seconds must be 1..{MAX_SECONDS:g}, got {seconds:g}")
    if not 1 <= repeats <= 10:
        raise ValueError(f"--repeats must be 1..10, got {repeats}")
    runs = []
    for i in range(repeats):
        r = bench_once(rooms, seconds, agent)
        runs.append(r)
        print(
            f"repeat {i + 1}: {r['rooms']} rooms, {r['clients']} scripted clients, {r['moves']} moves, "
            f"{r['moves_per_s']:.0f} moves/s, person move p50 {r['p50_ms']:.1f} ms p99 {r['p99_ms']:.1f} ms, "
            f"lost {r['lost']}, duplicated {r['duplicated']}, errors {r['errors']}",
            flush=True,
        )
    med = {k: statistics.median(r[k] for r in runs) for k in ("moves_per_s", "p50_ms", "p99_ms")}
    bad = sum(r["lost"] + r["duplicated"] + r["errors"] for r in runs)
    print(
        f"serve-bench ({agent} agents, {seconds:g} s x {repeats}): rooms held {runs[0]['rooms']}, "
        f"moves/s {med['moves_per_s']:.0f}, p50 {med['p50_ms']:.1f} ms, p99 {med['p99_ms']:.1f} ms (medians); "
        f"lost or duplicated moves: {sum(r['lost'] + r['duplicated'] for r in runs)}, errors: "
        f"{sum(r['errors'] for r in runs)}"
    )
    return 1 if bad else 0
