"""Stopping a training run from outside: SIGTERM and SIGINT (Ctrl-C) end it with a checkpoint.

While ``stop_requests()`` is active (``train.loop.run_training`` runs every trainer inside it),
the first SIGTERM or SIGINT does not kill the process: it is recorded, the trainer finishes the
update it is in, writes a final checkpoint, skips the evaluations still to come and returns
(``RunResult.stopped_by``); ``bigtwo train`` then exits with ``128 + the signal number`` (143 for
SIGTERM, 130 for SIGINT), as a shell reports a process ended by that signal. A second signal
acts as it would without this module (SIGINT raises ``KeyboardInterrupt``, SIGTERM ends the
process): the last checkpoint written stays intact, since every write is atomic. Training spawns
no processes (evaluations play in-process), so nothing is left running either way.

Handlers can only be set from the main thread; elsewhere ``stop_requests()`` changes nothing and
``requested()`` stays ``None``.

>>> with stop_requests():
...     requested() is None
True
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

SIGNALS = (signal.SIGTERM, signal.SIGINT)

_received: list[int] = []  # the first signal of the active stop_requests(), if any


def requested() -> str | None:
    """The name of the signal that asked the run to stop (``SIGTERM``, ``SIGINT``), or ``None``."""
    return signal.Signals(_received[0]).name if _received else None


@contextmanager
def stop_requests() -> Iterator[None]:
    """Record the first SIGTERM/SIGINT instead of dying; restore the previous handlers on exit."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    # a signal the parent set to be ignored (``nohup``, a background job) stays ignored
    previous = {sig: signal.getsignal(sig) for sig in SIGNALS if signal.getsignal(sig) is not signal.SIG_IGN}

    def handle(signum: int, frame: FrameType | None) -> None:
        _received.append(signum)
        for sig, old in previous.items():  # a second signal acts as it always does
            signal.signal(sig, old)

    _received.clear()
    for sig in previous:
        signal.signal(sig, handle)
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
