"""The web table's thinking threads: a ``Lane`` is one worker thread (two with an express one)
serving a fair queue.

Jobs wait by rank, then by the thinking time their client has used: a job of rank 0 is always
taken before one of rank 1, and within a rank the client that has used the least time (its
measured seconds, ``GRAIN`` apart counting as equal; equals served in turn, round robin) goes
first, each client's jobs in the order they came. A client that comes back after a pause starts
level with the least-served client waiting, never behind on credit it banked while away. So an
expensive agent's owner waits for the cheap ones' moves, and a client with many rooms, sockets or
requests gets its share of time like any other, not a share per job. A job whose awaiting
coroutine is cancelled (its requester disconnected, its room deleted) is dropped from the queue
at once; a job already running cannot be stopped (a search has no hook for it) and ends with its
move, which the web's budget bounds.

**The express thread.** A search cannot be interrupted, so a cheap job queued behind an
expensive one that is running waits for all of it. A lane made with ``express`` seconds has a
second thread that takes only the jobs of clients whose measured cost per job is at most that
(a client's cost: its last job's seconds, or more while its earlier expensive ones decay by
``DECAY`` a job): a friend's quick moves never wait for a stranger's long search, only for other
quick jobs. A client not yet measured counts as cheap for one job.

The threads may run at a lower priority (``nice``, Linux: a thread's own), so that on busy cores
the event loop and the lanes with a smaller nice value come first.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from typing import Any

Job = tuple[Future, Callable[..., Any], tuple[Any, ...]]
# how the hub runs work in a lane: ``await run(lane, fn, *args, client=..., rank=...)`` (``Hub.run``)
Run = Callable[..., Awaitable[Any]]

GRAIN = 0.01  # seconds of thinking time that count as equal (equals are served in turn)
DECAY = 0.75  # a client's measured cost per job: max(this job's seconds, DECAY x the one before)
MAX_CLIENTS = 4096  # clients whose cost a lane remembers (the least recently seen forgotten)


class Lane:
    """One worker thread named ``bigtwo-NAME`` at nice ``nice`` (and with ``express`` seconds a
    second one, ``bigtwo-NAME-express``, for the clients whose jobs cost at most that), serving a
    fair queue (see the module docstring)."""

    def __init__(self, name: str, nice: int = 0, express: float | None = None) -> None:
        self.name = name
        self.nice = nice
        self.express = express
        self._queues: dict[int, OrderedDict[str, deque[Job]]] = {}
        self._used: dict[str, float] = {}  # seconds used, by client (absent: level with the floor)
        self._floor = 0.0  # the least time used among the clients served, never decreasing
        self._cost: OrderedDict[str, float] = OrderedDict()  # measured seconds per job, by client
        self._cond = threading.Condition()
        self._stopping = False
        self._threads = [threading.Thread(target=self._work, args=(False,), name=f"bigtwo-{name}")]
        if express is not None:
            self._threads.append(threading.Thread(target=self._work, args=(True,), name=f"bigtwo-{name}-express"))
        for thread in self._threads:
            thread.start()

    def submit(self, fn: Callable[..., Any], *args: Any, client: str = "", rank: int = 0) -> Future:
        """Queue ``fn(*args)`` for ``client`` at ``rank``; its future (cancel it to drop the job)."""
        future: Future = Future()
        with self._cond:
            if self._stopping:
                future.cancel()
                return future
            if not any(client in queues for queues in self._queues.values()):
                self._used[client] = max(self._used.get(client, 0.0), self._floor)  # no banked credit
            self._queues.setdefault(rank, OrderedDict()).setdefault(client, deque()).append((future, fn, args))
            self._cond.notify_all()
        return future

    async def run(self, fn: Callable[..., Any], *args: Any, client: str = "", rank: int = 0) -> Any:
        """``fn(*args)`` in the lane's thread, awaited; cancelling the await drops a waiting job."""
        return await asyncio.wrap_future(self.submit(fn, *args, client=client, rank=rank))

    def waiting(self) -> int:
        """Jobs waiting (cancelled ones not yet dropped included)."""
        with self._cond:
            return sum(len(q) for queues in self._queues.values() for q in queues.values())

    def cost(self, client: str) -> float:
        """``client``'s measured seconds per job (0 before its first)."""
        with self._cond:
            return self._cost.get(client, 0.0)

    def _take(self, express: bool) -> tuple[str, Job] | None:
        """The next job for a thread (``express``: only cheap clients'), with its client."""
        for rank in sorted(self._queues):
            queues = self._queues[rank]
            while True:
                ready = [
                    c for c in queues if not express or self.express is None or self._cost.get(c, 0.0) <= self.express
                ]
                if not ready:
                    break
                least = min(self._used.get(c, self._floor) for c in ready)
                client = next(c for c in ready if self._used.get(c, self._floor) < least + GRAIN)
                self._floor = max(self._floor, least)
                jobs = queues[client]
                job = jobs.popleft()
                if jobs:
                    queues.move_to_end(client)  # equals: the next job of this client waits for the others'
                else:
                    del queues[client]
                if not queues:
                    del self._queues[rank]
                if not job[0].cancelled():
                    return client, job
        return None

    def _measured(self, client: str, seconds: float) -> None:
        """A job of ``client`` took ``seconds``: its time used and its cost per job."""
        with self._cond:
            self._used[client] = self._used.get(client, self._floor) + seconds
            self._cost[client] = max(seconds, DECAY * self._cost.get(client, 0.0))
            self._cost.move_to_end(client)
            while len(self._cost) > MAX_CLIENTS:
                self._cost.popitem(last=False)
            if len(self._used) > MAX_CLIENTS:  # those level with the floor are as good as absent
                waiting = {c for queues in self._queues.values() for c in queues}
                for c in [c for c, used in self._used.items() if used <= self._floor and c not in waiting]:
                    del self._used[c]

    def _work(self, express: bool) -> None:
        with contextlib.suppress(AttributeError, OSError):
            if self.nice:
                os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), self.nice)
        while True:
            with self._cond:
                taken = self._take(express)
                while taken is None and not self._stopping:
                    self._cond.wait()
                    taken = self._take(express)
                if taken is None:
                    return
            client, (future, fn, args) = taken
            if not future.set_running_or_notify_cancel():
                continue
            began = time.perf_counter()
            try:
                result = fn(*args)
            except BaseException as exc:  # noqa: BLE001 - handed to the awaiting coroutine
                future.set_exception(exc)
            else:
                future.set_result(result)
            finally:
                self._measured(client, time.perf_counter() - began)

    def shutdown(self) -> None:
        """Drop every waiting job and let the threads end after the jobs they run (not waited for)."""
        with self._cond:
            self._stopping = True
            for queues in self._queues.values():
                for jobs in queues.values():
                    for future, _fn, _args in jobs:
                        future.cancel()
            self._queues.clear()
            self._cond.notify_all()
