"""The web table's limits: what one client may hold or ask for, the timeouts at the door and the
bounds on history, so that no client can fill the server or starve the others.

A client is the network a connection comes from (``network_of``): its IPv4 address, or its
``/ipv4_prefix`` network when that is under 32, and its IPv6 ``/ipv6_prefix`` network (a /64
holds billions of addresses, all one client); behind a reverse proxy named with ``bigtwo serve
--proxy ADDR``, the network of the address that proxy gives in ``X-Forwarded-For``. The server
knows a client by a hash of that network (``client_id``), which is also what the store keeps of a
room's creator, so a client's rooms count against its limit across restarts. The last
``1/RESERVE`` of the server's rooms and of its connections are kept for newcomers
(``kept_for_newcomers``): a client that holds a room already, or ``NEWCOMER_CONNECTIONS``
connections, is refused them (503), so that many clients together cannot fill the server. A request over a per-client
limit is refused with HTTP 429 and a ``Retry-After`` header (a websocket before its handshake,
the same way; a coach request on an open socket with an ``error`` message that has
``retry_after``), before anything is built. Every limit is set with ``bigtwo serve --limit
NAME=VALUE`` (repeatable):

| name | default | what |
|---|---|---|
| ``rooms_per_minute`` | 10 | rooms one client may create (or try to: a refused form counts) in any 60 seconds |
| ``rooms_per_client`` | 40 | rooms one client's creations may hold at once (of the server's 1,000) |
| ``agents_per_client`` | 6 | custom agents (options, or rules no shipped variant has) one client's rooms may hold; plain agents of shipped variants are always buildable |
| ``sockets_per_seat`` | 4 | websockets open on one seat |
| ``sockets_per_room`` | 32 | spectators' websockets open on one room, one client's at most a quarter of them (a seat's own link is always let in, up to ``sockets_per_seat``) |
| ``sockets_per_client`` | 64 | websockets one client may hold open |
| ``replays_per_client`` | 2 | replays one client may have running at once (of the server's 16) |
| ``coach_per_client`` | 2 | coach positions one client may have being ranked at once |
| ``connections`` | 512 | TCP connections the server holds at once (HTTP and websockets; also kept under the open-file limit) |
| ``connections_per_client`` | 64 | TCP connections from one client (not applied to the ``--proxy``) |
| ``ipv4_prefix`` | 32 | the bits of an IPv4 address that name a client (24: a /24 network is one client) |
| ``ipv6_prefix`` | 64 | the bits of an IPv6 address that name a client (a /64 network is one client) |
| ``header_timeout`` | 10 | seconds a connection has to send a request's headers, from opening or from its last response |
| ``body_timeout`` | 30 | seconds a request has to send its body |
| ``keep_alive`` | 5 | seconds an idle keep-alive connection is kept between requests |
| ``replay_timeout`` | 300 | seconds a replay may run before it is stopped (HTTP 503) |
| ``matches_per_room`` | 20 | finished matches whose records a room keeps (older ones are deleted, with their plays) |
| ``matches_total`` | 20000 | finished matches the whole file keeps (the oldest deleted first) |

>>> Limits.parse(["rooms_per_minute=30", "body_timeout=2.5"]).rooms_per_minute
30
>>> Limits.parse(["rooms=3"])
Traceback (most recent call last):
ValueError: --limit 'rooms=3': unknown limit 'rooms'; limits are: agents_per_client, body_timeout, coach_per_client, connections, connections_per_client, header_timeout, ipv4_prefix, ipv6_prefix, keep_alive, matches_per_room, matches_total, replay_timeout, replays_per_client, rooms_per_client, rooms_per_minute, sockets_per_client, sockets_per_room, sockets_per_seat
"""

from __future__ import annotations

import functools
import hashlib
import ipaddress
import math
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, fields, replace
from typing import Any

from bigtwo.web.forms import RoomError
from bigtwo.web.room import MAX_KEPT

WINDOW = 60.0  # seconds of the rate limits' window
RETRY_COUNT = 30  # seconds a refusal by a count (rooms, sockets, agents held) says to wait
RESERVE = 8  # the last 1/RESERVE of the server's rooms and connections are kept for newcomers
NEWCOMER_CONNECTIONS = 8  # connections a client may hold and still be a newcomer (a browser opens up to 6)


class TooMany(RoomError):
    """A request over a limit (HTTP 429): the message says which limit, ``retry_after`` (seconds)
    when trying again may succeed."""

    def __init__(self, message: str, retry_after: float = RETRY_COUNT) -> None:
        super().__init__(message)
        self.retry_after = max(1, math.ceil(retry_after))


class Busy(RoomError):
    """A request the server as a whole cannot take now (HTTP 503): it is full, stopping, or the
    work ran past its time; ``retry_after``: seconds until trying again may succeed."""

    retry_after = 30


class Stopping(Busy):
    """A request cut short because the server is shutting down (HTTP 503)."""


@dataclass(frozen=True)
class Limits:
    """The server's limits; see the module docstring for each."""

    rooms_per_minute: int = 10
    rooms_per_client: int = 40
    agents_per_client: int = 6
    sockets_per_seat: int = 4
    sockets_per_room: int = 32
    sockets_per_client: int = 64
    replays_per_client: int = 2
    coach_per_client: int = 2
    connections: int = 512
    connections_per_client: int = 64
    ipv4_prefix: int = 32
    ipv6_prefix: int = 64
    header_timeout: float = 10.0
    body_timeout: float = 30.0
    keep_alive: float = 5.0
    replay_timeout: float = 300.0
    matches_per_room: int = MAX_KEPT
    matches_total: int = 20000

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            whole = f.type in (int, "int")
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 or math.isinf(value):
                raise ValueError(f"limit {f.name} must be a positive {'integer' if whole else 'number'}, got {value!r}")
            if whole and int(value) != value:
                raise ValueError(f"limit {f.name} must be a positive integer, got {value!r}")
        for name, bits in (("ipv4_prefix", 32), ("ipv6_prefix", 128)):
            if getattr(self, name) > bits:
                raise ValueError(f"limit {name} must be 1..{bits} (bits of an address), got {getattr(self, name)}")

    @classmethod
    def parse(cls, items: Iterable[str], base: Limits | None = None) -> Limits:
        """``base`` (the defaults) with ``NAME=VALUE`` items (``bigtwo serve --limit``) applied;
        ``ValueError`` naming an unknown limit or a bad value."""
        types = {f.name: f.type for f in fields(cls)}
        changes: dict[str, Any] = {}  # each an int or a float, as its field is
        for item in items:
            name, sep, text = item.partition("=")
            name = name.strip()
            if not sep or name not in types:
                why = f"unknown limit {name!r}" if sep else "write NAME=VALUE"
                raise ValueError(f"--limit {item!r}: {why}; limits are: {', '.join(sorted(types))}")
            whole = types[name] in (int, "int")
            try:
                changes[name] = int(text) if whole else float(text)
            except ValueError:
                raise ValueError(
                    f"--limit {item!r}: {name} must be a positive {'integer' if whole else 'number'}"
                ) from None
        return replace(base or cls(), **changes)


@functools.lru_cache(maxsize=4096)
def network_of(address: str, limits: Limits) -> str:
    """The client an address is (see the module docstring): an IPv4 address itself, or its
    ``ipv4_prefix`` network when that is under 32; an IPv6 address's ``ipv6_prefix`` network (an
    IPv4 address mapped into IPv6 as IPv4); anything else (no address) as it is."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    bits = limits.ipv4_prefix if ip.version == 4 else limits.ipv6_prefix
    if bits >= ip.max_prefixlen:
        return str(ip)
    return str(ipaddress.ip_network(f"{ip}/{bits}", strict=False))


def kept_for_newcomers(total: int, most: int, held: int, newcomer: int) -> bool:
    """Whether a client holding ``held`` of something the server holds ``total`` of (at most
    ``most``) is refused one more: the last ``1/RESERVE`` are kept for clients holding fewer
    than ``newcomer``."""
    return held >= newcomer and total >= most - most // RESERVE


def client_id(address: str) -> str:
    """What the server keeps of a client's address or network (``network_of``): a short hash (the
    same across restarts)."""
    return hashlib.sha256(f"bigtwo-client\n{address}".encode("utf-8", "backslashreplace")).hexdigest()[:16]


class Rate:
    """At most ``most`` events per client in any ``window`` seconds (a sliding window)."""

    def __init__(self, most: int, window: float = WINDOW, clock: Callable[[], float] = time.monotonic) -> None:
        self.most = most
        self.window = window
        self.clock = clock
        self._times: dict[str, deque[float]] = {}

    def take(self, client: str, what: str) -> None:
        """Count one event of ``client``; ``TooMany`` (counting nothing) if it has had ``most``
        in the window already."""
        now = self.clock()
        times = self._times.setdefault(client, deque())
        while times and times[0] <= now - self.window:
            times.popleft()
        if len(times) >= self.most:
            raise TooMany(
                f"{what}: at most {self.most} every {self.window:g} seconds from one client",
                times[0] + self.window - now,
            )
        times.append(now)
        if len(self._times) > 10_000:  # forget clients whose window is empty
            self._times = {c: t for c, t in self._times.items() if t and t[-1] > now - self.window}


class Held:
    """How many of something each client holds at once (replays running, coach positions)."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    @contextmanager
    def hold(self, client: str, most: int, what: str, retry_after: float = 5.0) -> Iterator[None]:
        """Hold one for ``client`` while the block runs; ``TooMany`` if it holds ``most`` already."""
        if self.counts.get(client, 0) >= most:
            raise TooMany(f"{what}: at most {most} at once from one client", retry_after)
        self.counts[client] = self.counts.get(client, 0) + 1
        try:
            yield
        finally:
            left = self.counts[client] - 1
            if left:
                self.counts[client] = left
            else:
                del self.counts[client]
