"""Stopping a training run from outside: SIGTERM and SIGINT (Ctrl-C) end it with a checkpoint.

While ``stop_requests()`` is active (``bigtwo.train.loop.run_training`` runs every trainer inside it),
the first SIGTERM or SIGINT does not kill the process: it is recorded, the trainer finishes the
update it is in, writes a final checkpoint, skips the evaluations still to come and returns
(``RunResult.stopped_by``); ``bigtwo train`` then exits with ``128 + the signal number`` (143 for
SIGTERM, 130 for SIGINT), as a shell reports a process ended by that signal. A second signal,
or any signal once the final checkpoint is written (``release``: the final evaluation is then
under way), acts as it would without this module (SIGINT raises ``KeyboardInterrupt``, SIGTERM
ends the process): the last checkpoint stays intact, since every write is atomic. Training
spawns no processes (evaluations play in-process), so nothing is left running either way.

Handlers can only be set from the main thread; elsewhere ``stop_requests()`` changes nothing and
``requested()`` stays ``None``.

>>> with stop_requests():
...     requested() is None
True
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

SIGNALS = (signal.SIGTERM, signal.SIGINT)

_received: list[int] = []  # the first signal inside the active stop_requests(), if any
# the handlers stop_requests() replaced, until they are back (what signal.getsignal returns)
_previous: dict[int, Callable[[int, FrameType | None], Any] | int | signal.Handlers | None] = {}


def requested() -> str | None:
    """The name of the signal that asked the run to stop (``SIGTERM``, ``SIGINT``), or ``None``."""
    return signal.Signals(_received[0]).name if _received else None


def release() -> None:
    """Give the signals their previous handlers back now (the run's final checkpoint is written:
    from here on, e.g. in the final evaluation, a signal acts as it always does)."""
    while _previous:
        sig, old = _previous.popitem()
        signal.signal(sig, old)


def _record(signum: int, frame: FrameType | None) -> None:
    _received.append(signum)
    release()  # a second signal acts as it always does


@contextmanager
def stop_requests() -> Iterator[None]:
    """Record the first SIGTERM/SIGINT instead of dying; restore the previous handlers on exit."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _received.clear()
    for sig in SIGNALS:
        old = signal.getsignal(sig)
        if old is not signal.SIG_IGN:  # a signal the parent ignores (``nohup``, a background job) stays ignored
            _previous[sig] = old
            signal.signal(sig, _record)
    try:
        yield
    finally:
        release()
        _received.clear()
