"""Connecting to a Ray cluster: what ``--ray local|auto|ADDRESS`` means for every command that takes it.

    bigtwo tournament --ray local ...        start a Ray cluster on this machine for the run
    bigtwo tournament --ray auto ...         join the cluster this machine belongs to (``ray start``)
    bigtwo train --ray 10.0.0.5:6379 ...     join the cluster at that head node
    bigtwo train --ray ray://10.0.0.5:10001  through Ray Client

Ray is the optional extra ``ray`` (``pip install 'bigtwo[ray]'``); nothing imports it unless
``--ray`` is given, so the engine, the agents and ``bigtwo train`` run without it. Every node of a
cluster needs bigtwo installed (the same version; ``pip install 'bigtwo[ray]'`` on each), since
the actors and tasks import it there. ``connect`` starts or joins the cluster and leaves it as it
found it: a cluster this process started (``local``) is shut down at the end, a Ray session
already open in this process (``ray.init`` called before, as the tests do) is used and kept.

``play_chunks`` runs a tournament's chunks of deals as Ray tasks (one CPU each): each chunk's
result depends only on its own deals and seeds, so the tournament is the same as the local run
(``bigtwo.arena.tournament``); a task whose worker dies is retried by Ray and plays the same again.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

ADDRESS = re.compile(r"^(local|auto|(ray://)?[A-Za-z0-9.\-_\[\]:]+:\d{1,5})$")
ALLOWED = "local (a cluster on this machine), auto (the cluster of `ray start`), HOST:PORT or ray://HOST:PORT"


def check_address(address: str) -> str:
    """``address`` if it is one ``--ray`` allows, else ``ValueError`` saying what is allowed.

    >>> check_address("10.0.0.5:6379")
    '10.0.0.5:6379'
    >>> check_address("cluster")
    Traceback (most recent call last):
    ...
    ValueError: --ray has bad value 'cluster'; allowed: local (a cluster on this machine), auto (the cluster of `ray start`), HOST:PORT or ray://HOST:PORT
    """
    if not isinstance(address, str) or not ADDRESS.match(address):
        raise ValueError(f"--ray has bad value {address!r}; allowed: {ALLOWED}")
    return address


def need_ray() -> None:
    """``ValueError`` naming the ``ray`` extra when Ray is not installed."""
    try:
        found = importlib.util.find_spec("ray") is not None
    except (ImportError, ValueError):  # a module set to None in sys.modules, or a broken install
        found = False
    if not found:
        raise ValueError("--ray needs Ray, which is not installed; install the ray extra: pip install 'bigtwo[ray]'")


@contextlib.contextmanager
def connect(address: str) -> Iterator[None]:
    """Inside: a Ray session on the cluster ``address`` names (see the module docstring)."""
    check_address(address)
    need_ray()
    import ray

    if ray.is_initialized():
        yield
        return
    options: dict[str, Any] = {"include_dashboard": False, "logging_level": logging.WARNING}
    try:
        if address == "local":
            ray.init(**options)
        else:
            ray.init(address=address, **options)
    except ConnectionError as exc:
        raise ValueError(f"--ray {address}: cannot reach a Ray cluster there ({exc})") from None
    try:
        yield
    finally:
        ray.shutdown()


def play_chunks(chunks: Sequence[Any], play: Callable[[Any], Any], report: Callable[[int], object]) -> dict[int, Any]:
    """``play(chunk)`` for every chunk as a Ray task; results by ``chunk.index``. ``report(deals)`` is
    told of each chunk that finishes; an error, Ctrl-C or SIGTERM cancels the tasks left."""
    import ray

    task = ray.remote(num_cpus=1)(play)
    pending = {task.remote(chunk): chunk for chunk in chunks}
    results: dict[int, Any] = {}
    try:
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1, timeout=0.5)
            for ref in done:
                chunk = pending.pop(ref)
                results[chunk.index] = ray.get(ref)  # a chunk's error is raised here
                report(len(chunk.deal_seeds))
    except BaseException:
        for ref in pending:
            with contextlib.suppress(Exception):
                ray.cancel(ref, force=True)
        raise
    return results
