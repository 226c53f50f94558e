"""The worker pool: chunks played in spawned processes, and the signals that end a run with them.

Workers are ``multiprocessing`` 'spawn' processes (agents are built there from their names or
paths). A worker leaves Ctrl-C to the parent, reports progress through a queue, and exits by
itself if its parent dies (``kill -9``). While a run is inside ``signals_end_the_run``, SIGTERM
unwinds like Ctrl-C (``KeyboardInterrupt``), so the workers are ended on the way out
(``end_workers``).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from queue import Empty
from typing import Any

from bigtwo.arena.chunk import ChunkResult, play_chunk
from bigtwo.arena.deals import Chunk
from bigtwo.env.checks import usable_cores


def default_workers() -> int:
    """min(2, usable CPU cores)."""
    return max(1, min(2, usable_cores()))


class _Stop(KeyboardInterrupt):
    """SIGTERM arrived: unwind like Ctrl-C, so the workers are ended on the way out."""


@contextlib.contextmanager
def signals_end_the_run() -> Iterator[None]:
    """While inside, SIGTERM raises ``_Stop`` (SIGINT raises ``KeyboardInterrupt`` as always), so
    the ``finally`` clauses that end the worker processes run; only in the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: object) -> None:
        raise _Stop(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


_PROGRESS: Any = None  # in a worker process: the queue its chunks report progress to


def _start_worker(progress: Any, parent: int) -> None:
    """A worker leaves Ctrl-C to the parent (which ends it), reports progress to ``progress``,
    and exits if the parent dies without ending it (``kill -9``)."""
    global _PROGRESS
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _PROGRESS = progress

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


def _worker_chunk(chunk: Chunk) -> ChunkResult:
    """``play_chunk`` in a worker, telling the parent of its progress."""
    return play_chunk(chunk, report=report_progress if _PROGRESS is not None else None)


def end_workers(pool: ProcessPoolExecutor) -> None:
    """Stop ``pool`` now: drop the chunks not started, end the running workers, and wait for the
    pool's manager thread to wind down. Left running, that thread closes its wake-up pipe while
    the interpreter's exit hook writes to it (a race inside ``concurrent.futures``, seen on 3.11), which
    printed an ``OSError`` traceback after an interrupted run."""
    manager = getattr(pool, "_executor_manager_thread", None)  # forgotten by shutdown(wait=False)
    terminate = getattr(pool, "terminate_workers", None)  # Python 3.14
    if terminate is not None:
        pool.shutdown(wait=False, cancel_futures=True)
        terminate()
    else:
        procs = list((getattr(pool, "_processes", None) or {}).values())  # gone after shutdown
        pool.shutdown(wait=False, cancel_futures=True)
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.join(10)
            if proc.is_alive():
                proc.kill()
    if manager is not None and manager is not threading.current_thread():
        manager.join(10)


def report_progress(n: int) -> None:
    """In a worker started by ``map_in_workers``: move the parent's bar by ``n`` (elsewhere: nothing)."""
    if _PROGRESS is not None:
        _PROGRESS.put(n)


def map_in_workers(
    fn: Callable[[Any], Any],
    items: list[Any],
    workers: int,
    bar: Any,
    done: Callable[[int, Any], object] | None = None,
) -> list[Any]:
    """``[fn(item) for item in items]``, the calls made in ``workers`` spawned processes (``fn`` a
    module-level function; it moves the parent's ``bar`` with ``report_progress``), and
    ``done(index, result)`` told of each as it finishes; on an error, Ctrl-C or SIGTERM the
    workers are ended before this returns."""
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    pool = ProcessPoolExecutor(
        max_workers=max(1, min(workers, len(items))),
        mp_context=ctx,
        initializer=_start_worker,
        initargs=(queue, os.getpid()),
    )
    results: dict[int, Any] = {}
    try:
        pending = {pool.submit(fn, item): i for i, item in enumerate(items)}
        while pending:
            with contextlib.suppress(Empty):
                bar.update(queue.get(timeout=0.2))
            for fut in [f for f in pending if f.done()]:
                i = pending.pop(fut)
                results[i] = fut.result()  # a worker's error is raised here
                if done is not None:
                    done(i, results[i])
    except BaseException:
        end_workers(pool)
        raise
    finally:
        pool.shutdown(wait=True)
        while True:  # what the workers said last
            try:
                bar.update(queue.get_nowait())
            except (Empty, OSError, ValueError):
                break
        queue.close()
        queue.join_thread()
    return [results[i] for i in range(len(items))]


def play_in_workers(
    chunks: list[Chunk], workers: int, bar: Any, done: Callable[[ChunkResult], object] | None = None
) -> dict[int, ChunkResult]:
    """Every chunk played by ``workers`` spawned processes, the bar moving as they report, and
    ``done(result)`` told of each chunk as it finishes; on an error, Ctrl-C or SIGTERM the
    workers are ended before this returns."""
    results = map_in_workers(
        _worker_chunk, chunks, workers, bar, done=None if done is None else lambda _i, result: done(result)
    )
    return {c.index: r for c, r in zip(chunks, results, strict=True)}


__all__ = [
    "default_workers",
    "end_workers",
    "map_in_workers",
    "play_in_workers",
    "report_progress",
    "signals_end_the_run",
]
