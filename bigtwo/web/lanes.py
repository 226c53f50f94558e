"""The web table's thinking threads: a ``Lane`` is one worker thread with a fair queue.

Jobs wait by rank, then by client: a job of rank 0 is always taken before one of rank 1, and
within a rank the clients waiting are served in turn (round robin), each client's jobs in the
order they came. So a client with many rooms, sockets or requests gets one turn a round like any
other, and its work never queues ahead of a friend's by more than one job. A job whose awaiting
coroutine is cancelled (its requester disconnected, its room deleted) is dropped from the queue
at once; a job already running cannot be stopped (a search has no hook for it) and ends with its
move, which the web's budget bounds.

The thread may run at a lower priority (``nice``, Linux: a thread's own), so that on busy cores
the event loop and the lanes with a smaller nice value come first.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from typing import Any

Job = tuple[Future, Callable[..., Any], tuple[Any, ...]]
# how the hub runs work in a lane: ``await run(lane, fn, *args, client=..., rank=...)`` (``Hub.run``)
Run = Callable[..., Awaitable[Any]]


class Lane:
    """One worker thread named ``bigtwo-NAME`` at nice ``nice``, serving a fair queue (see the
    module docstring)."""

    def __init__(self, name: str, nice: int = 0) -> None:
        self.name = name
        self.nice = nice
        self._queues: dict[int, OrderedDict[str, deque[Job]]] = {}
        self._cond = threading.Condition()
        self._stopping = False
        self._thread = threading.Thread(target=self._work, name=f"bigtwo-{name}")
        self._thread.start()

    def submit(self, fn: Callable[..., Any], *args: Any, client: str = "", rank: int = 0) -> Future:
        """Queue ``fn(*args)`` for ``client`` at ``rank``; its future (cancel it to drop the job)."""
        future: Future = Future()
        with self._cond:
            if self._stopping:
                future.cancel()
                return future
            self._queues.setdefault(rank, OrderedDict()).setdefault(client, deque()).append((future, fn, args))
            self._cond.notify()
        return future

    async def run(self, fn: Callable[..., Any], *args: Any, client: str = "", rank: int = 0) -> Any:
        """``fn(*args)`` in the lane's thread, awaited; cancelling the await drops a waiting job."""
        return await asyncio.wrap_future(self.submit(fn, *args, client=client, rank=rank))

    def waiting(self) -> int:
        """Jobs waiting (cancelled ones not yet dropped included)."""
        with self._cond:
            return sum(len(q) for queues in self._queues.values() for q in queues.values())

    def _take(self) -> Job | None:
        for rank in sorted(self._queues):
            queues = self._queues[rank]
            while queues:
                client, jobs = next(iter(queues.items()))
                job = jobs.popleft()
                if jobs:
                    queues.move_to_end(client)  # the next job of this client waits for the others' turns
                else:
                    del queues[client]
                if not job[0].cancelled():
                    return job
        return None

    def _work(self) -> None:
        with contextlib.suppress(AttributeError, OSError):
            if self.nice:
                os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), self.nice)
        while True:
            with self._cond:
                job = self._take()
                while job is None and not self._stopping:
                    self._cond.wait()
                    job = self._take()
                if job is None:
                    return
            future, fn, args = job
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = fn(*args)
            except BaseException as exc:  # noqa: BLE001 - handed to the awaiting coroutine
                future.set_exception(exc)
            else:
                future.set_result(result)

    def shutdown(self) -> None:
        """Drop every waiting job and let the thread end after the job it runs (not waited for)."""
        with self._cond:
            self._stopping = True
            for queues in self._queues.values():
                for jobs in queues.values():
                    for future, _fn, _args in jobs:
                        future.cancel()
            self._queues.clear()
            self._cond.notify_all()
