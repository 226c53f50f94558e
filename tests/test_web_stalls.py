"""The web table's third hostile round: no one request, socket or stranger stalls a friend's room
(thinking shared by cost, replays and records off the shared threads and the event loop, SQLite
writes that never hold the loop)."""

from __future__ import annotations

import threading
import time

from bigtwo.web.lanes import Lane


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
        time.sleep(0.5)  # the strangers measured: expensive
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
