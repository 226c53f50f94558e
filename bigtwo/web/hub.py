"""The web table's hub: every room of the server (one ``HostedRoom`` each: the room, its
connections, its driver, its stand-ins), the clients (one ``Client`` each), the agents, the
coach (``bigtwo.web.coaching``), the replays (``bigtwo.web.replays``) and the store, the threads the thinking runs in, and the per-client limits
(``bigtwo.web.limits``).

**Threads.** The event loop never thinks: it serves pages, messages and plays. Agents choose
their plays in worker threads the hub owns, each a ``bigtwo.web.lanes.Lane`` (one thread, a fair
queue: jobs by rank, then clients in turn), each room with at most one play in flight:

| lane | nice | runs |
|---|---|---|
| ``light`` | 0 | the quick agents' plays (``LIGHT``, declared of cost ``light``: ``random``, ``greedy``, ``heuristic``): a room of them never waits behind a search |
| ``people`` | ``THINKING_NICE`` | the searchers' plays (``SEARCHERS``, declared of cost ``search``: ``search``, ``strong``; and checkpoint files) in rooms where a person is connected; clients whose plays cost under ``EXPRESS`` seconds have an express thread too |
| ``watch`` | ``WATCH_NICE`` | the searchers' plays in every other room (agents only, or its people away) |
| ``coach`` | ``THINKING_NICE`` | the coach's advice on a person's turn |
| ``replay`` | ``REPLAY_NICE`` | replays: the record through the engine, the coach's advice one move at a time, the answer's JSON |
| ``builder`` | ``THINKING_NICE`` | building agents and coaches (loading networks) and checking a new room's form |

**The guarantee.** A room with a person connected never queues behind an agent-only room: its
searches run in their own thread, at a higher priority than the agent-only rooms' (on a busy
machine the kernel gives the ``people`` thread most of a core); rooms are served client by client
by the thinking time each has used (``bigtwo.web.lanes``), and a client whose moves are cheap has
the ``people`` lane's express thread, so a person's quick agents never wait for a stranger's
long search; an expensive agent's owner waits instead. Each searcher is bounded by the web's budget (its declared caps:
``bigtwo.agents.registry.WEB_SECONDS``, ``WEB_SIMULATIONS``) with ``bigtwo.web.forms.MAX_AGENT_THREADS`` rollout threads (one core fewer than
the engine would take: the event loop keeps one). An agent instance is only ever used in one
lane's thread (a searcher is built once for ``people`` and once for ``watch``). A search cannot
be stopped in the middle (``bigtwo.agents.search`` has no hook for it), so shutdown waits for at
most one move of each lane; queued work is dropped, and so is work whose requester is gone (a
coach request or replay whose client disconnected, a room deleted).

**What the hub holds, bounded.** ``MAX_ROOMS`` rooms, ``Limits.rooms_per_client`` of them from
one client; a room nobody is connected to, that nobody has left and that has not changed for
``room_ttl`` seconds is deleted (its whole record, its cached replays, its claim on agents, and its rows of the store), also across restarts. The agents are shared between the
rooms that use them and built once per agent and set of rules (a variant's name and description
are no rules). Plain agents (a bare name or a checkpoint file, for a shipped variant's rules)
are always buildable, so a default room can always be made; custom ones (options, or other
rules) are at most ``MAX_AGENTS`` at once, ``Limits.agents_per_client`` for one client's rooms,
an unused one dropped for a new one, and a room that would need more is refused before anything
is built. At most ``coaching.MAX_COACHES`` coaches (least recently used dropped) and
``replays.MAX_REPLAYS`` replays running or cached. A coach request for a position already being ranked waits for that
one (one ranking however many sockets ask). A room has at most ``Limits.sockets_per_room`` spectators, one client
at most a quarter of them (``spectators_per_client``); a seat's own link is always let in, up to
``Limits.sockets_per_seat`` sockets. Each connection has at most ``MAX_QUEUE`` messages
waiting; a socket that stops reading (its queue full, or one send blocked ``SEND_TIMEOUT``
seconds) is dropped, its seat counted away. A change of who is connected is broadcast once per
``SETTLE`` seconds at most (the new socket gets its view at once), and each view is written once
per seat, so a broadcast costs one message per socket.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import sqlite3
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.websockets import WebSocket

from bigtwo.agents import spec as declared
from bigtwo.agents.base import Agent
from bigtwo.agents.pretrained import STRONG, WEB_SEARCH
from bigtwo.agents.registry import AGENT_SPECS, default_opponent, make_agent, split_spec
from bigtwo.env.rules.variant import Variant, load_variant, variant_names
from bigtwo.web.coaching import Coaching
from bigtwo.web.forms import (
    AGENT_OPTIONS,
    DEFAULT_AWAY,
    DEFAULT_PACE,
    DEFAULT_TURN,
    MAX_AGENT_THREADS,
    RoomError,
    check_agent,
    check_unicode,
    room_setup,
)
from bigtwo.web.lanes import Lane
from bigtwo.web.limits import RESERVE, Busy, Limits, Rate, Stopping, TooMany, kept_for_newcomers
from bigtwo.web.replays import Replays
from bigtwo.web.room import Room
from bigtwo.web.states import SeatState
from bigtwo.web.store import Store

MAX_ROOMS = 1000
MAX_AGENTS = 24  # distinct agents (agent and rules) held at once
MAX_QUEUE = 256  # messages waiting for one connection
SETTLE = 0.25  # seconds a change of who is connected waits to be broadcast (changes meanwhile go out as one)
SEND_TIMEOUT = 10.0  # seconds one send may block before the connection is dropped
DEFAULT_TTL = 7 * 24 * 3600.0  # seconds an idle room with nobody connected is kept
SWEEP = 30.0  # seconds between looks for idle rooms
THINKING_NICE = 5  # the people, coach and builder threads' nice value
REPLAY_NICE = 10  # the replay thread's: a replay's advice yields to live rooms and the coach
WATCH_NICE = 15  # the watch thread's: agent-only rooms' searches yield to everything else
EXPRESS = 0.25  # seconds per move under which a client's plays in attended rooms take the express thread
# from the agents' declarations (bigtwo.agents.registry): whose plays take well under a millisecond (the
# light lane), and the searchers, given MAX_AGENT_THREADS rollout threads unless they ask for fewer
LIGHT = tuple(name for name, spec in AGENT_SPECS.items() if spec.cost == declared.LIGHT)
SEARCHERS = tuple(name for name, spec in AGENT_SPECS.items() if spec.cost == declared.SEARCH)


def to_text(message: dict[str, Any]) -> str:
    """A message as the JSON text a socket sends."""
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False)


@dataclass(eq=False)
class Connection:
    """One open websocket: its seat (``None``: spectator), its client (``limits.client_id``), its
    bounded queue of outgoing messages (JSON text), and ``dropped``, set when it is to be closed
    (it stopped reading)."""

    ws: WebSocket
    seat: int | None
    client: str = ""
    queue: asyncio.Queue = field(default_factory=lambda: asyncio.Queue(MAX_QUEUE))
    dropped: asyncio.Event = field(default_factory=asyncio.Event)

    def send(self, message: dict[str, Any] | str) -> None:
        """Queue ``message`` (a dict, or its text: a broadcast writes each view once); a full queue
        drops the connection instead of growing."""
        try:
            self.queue.put_nowait(message if isinstance(message, str) else to_text(message))
        except asyncio.QueueFull:
            self.dropped.set()

    async def write(self) -> None:
        """Send the queued messages in order until the socket closes or blocks ``SEND_TIMEOUT`` seconds."""
        try:
            while True:
                text = await self.queue.get()
                await asyncio.wait_for(self.ws.send_text(text), SEND_TIMEOUT)
        except Exception:  # noqa: BLE001 - a closed or stuck socket: the connection ends
            self.dropped.set()


def spectators_per_client(limits: Limits) -> int:
    """The spectator sockets one client may hold on one room: a quarter of the room's
    ``sockets_per_room`` places (8 of 32), so that one stranger never takes them all."""
    return max(1, limits.sockets_per_room // 4)


def quick(spec: str) -> bool:
    """Whether agent ``spec`` plays in well under a millisecond (the ``light`` lane's)."""
    return spec.split(":")[0].strip().lower() in LIGHT


class Agents:
    """The agents the rooms play with, shared and bounded (see the module docstring); thread-safe.
    ``files``: checkpoint files by the name a seat gives (``bigtwo serve --agent-file``). Each
    agent is built once per lane that plays it (``lanes_of``): an instance is used in one thread."""

    def __init__(self, files: Mapping[str, Path], most: int = MAX_AGENTS, per_client: int = 6) -> None:
        self.files = dict(files)
        self.most = most
        self.per_client = per_client
        self._built: OrderedDict[tuple[str, str], dict[str, Agent]] = OrderedDict()  # (spec, rules) -> lane -> agent
        self._users: dict[tuple[str, str], set[str]] = {}
        self._clients: dict[str, str] = {}  # room -> the client that made it
        self._shipped: set[str] | None = None
        self._lock = threading.RLock()

    def lanes_of(self, spec: str) -> tuple[str, ...]:
        """The lanes that play ``spec``: ``light`` for a quick agent, else ``people`` and ``watch``."""
        return ("light",) if spec not in self.files and quick(spec) else ("people", "watch")

    def plain(self, key: tuple[str, str]) -> bool:
        """Whether ``(spec, rules)`` is a plain agent: a bare name or a checkpoint file, for the
        rules of a shipped variant. Plain agents are always built (there are few of them)."""
        spec, rules = key
        if self._shipped is None:
            self._shipped = {load_variant(name).rules_key() for name in variant_names()}
        return rules in self._shipped and (spec in self.files or ":" not in spec)

    def _build(self, spec: str, variant: Variant) -> Agent:
        check_agent(spec, self.files)  # a stored room's agent too: a name, or a file the server was given
        name, options = split_spec(spec) if spec not in self.files else (spec, {})
        extra: dict[str, Any] = {"threads": MAX_AGENT_THREADS} if name in SEARCHERS and "threads" not in options else {}
        if name == STRONG and not set(options) - {"threads", "top_k", "trust"}:
            extra["search"] = WEB_SEARCH  # the cheaper search on the web table unless a client asks otherwise
        return make_agent(self.files.get(spec, spec), variant, seed=0, **extra)

    def reserve(
        self, room_id: str, specs: set[str], variant: Variant, client: str | None = None, check: bool = True
    ) -> None:
        """Build (in the calling thread) the agents ``specs`` for ``variant`` that are not built
        yet, for room ``room_id`` made by ``client``; ``RoomError`` (nothing built) if the hub
        would hold more than ``most`` custom agents, ``TooMany`` if ``client``'s rooms would use
        more than ``per_client`` (not ``check``ed for a stored room: it is counted, never
        refused), or naming an agent that cannot be built."""
        rules = variant.rules_key()
        keys = {(s, rules) for s in specs}
        with self._lock:  # held briefly: the event loop's ``get`` takes it too
            missing = [k for k in sorted(keys) if k not in self._built]
            custom = [k for k in missing if not self.plain(k)]
            busy = [k for k in self._built if self._users.get(k) and not self.plain(k)]
            if len(busy) + len(custom) > self.most:
                raise RoomError(
                    f"the server holds {self.most} different custom agents, its most; seat plain agents (names "
                    f"without options) or agents other rooms use (such as "
                    f"{', '.join(sorted({k[0] for k in self._built}))})"
                )
            if client is not None and check:
                mine = {
                    k
                    for k, users in self._users.items()
                    if not self.plain(k) and any(self._clients.get(r) == client for r in users)
                }
                wanted = mine | {k for k in keys if not self.plain(k)}
                if len(wanted) > self.per_client:
                    raise TooMany(
                        f"your rooms would use {len(wanted)} different custom agents (with options, or for "
                        f"rules of no shipped variant); one client's rooms may use at most {self.per_client}: "
                        "seat plain agents or ones your rooms use already"
                    )
        built: dict[tuple[str, str], dict[str, Agent]] = {}
        for key in missing:  # built without the lock: it takes up to seconds (a network to load)
            try:
                built[key] = {lane: self._build(key[0], variant) for lane in self.lanes_of(key[0])}
            except ValueError as exc:
                raise RoomError(f"seat agent {key[0]!r}: {exc}") from None
        with self._lock:
            free = [k for k in self._built if not self._users.get(k) and k not in built and not self.plain(k)]
            held = sum(1 for k in self._built if not self.plain(k)) + sum(1 for k in built if not self.plain(k))
            for key in free[: max(0, held - self.most)]:
                del self._built[key]
                self._users.pop(key, None)
            for key, copies in built.items():
                self._built.setdefault(key, copies)
            for key in keys:
                self._users.setdefault(key, set()).add(room_id)
            if client is not None:
                self._clients[room_id] = client

    def get(self, spec: str, variant: Variant, lane: str | None = None) -> Agent:
        """The agent ``spec`` for ``variant`` that plays in ``lane`` (default its first; built now
        if no room reserved it)."""
        lane = lane or self.lanes_of(spec)[0]
        key = (spec, variant.rules_key())
        with self._lock:
            agent = self._built.get(key, {}).get(lane)
            if agent is not None:
                self._built.move_to_end(key)
                return agent
        agent = self._build(spec, variant)
        with self._lock:
            return self._built.setdefault(key, {}).setdefault(lane, agent)

    def release(self, room_id: str) -> None:
        """Room ``room_id`` is gone: its agents may be dropped for others."""
        with self._lock:
            for users in self._users.values():
                users.discard(room_id)
            self._clients.pop(room_id, None)

    def __len__(self) -> int:
        return len(self._built)


@dataclass(eq=False)
class HostedRoom:
    """Everything the hub holds of one room, in one place: ``Hub.expire`` drops the whole record,
    so no piece of a deleted room is left behind. Made in the event loop (``Hub.load``,
    ``Hub.create``)."""

    room: Room
    creator: str  # the client that made it (``limits.client_id``; "" for a room of an older file)
    active: float  # epoch seconds of its last change, or of its last connection closing
    connections: set[Connection] = field(default_factory=set)
    changed: asyncio.Event = field(default_factory=asyncio.Event)  # set on every change: the driver looks again
    driver: asyncio.Task | None = None  # plays its agents' turns (``Hub._driver``), once its agents are built
    stand_ins: dict[str, str] = field(default_factory=dict)  # an agent that cannot be built -> who plays it
    settling: asyncio.TimerHandle | None = None  # a broadcast waiting ``SETTLE`` seconds (``Hub.settle``)

    def close(self) -> None:
        """Stop its driver and its waiting broadcast (the room is being deleted)."""
        if self.driver is not None:
            self.driver.cancel()
        if self.settling is not None:
            self.settling.cancel()


@dataclass
class Client:
    """What the hub holds of one client (``limits.client_id``) beyond its rooms: dropped from
    ``Hub.clients`` once it holds nothing (``Client.idle``)."""

    sockets: int = 0  # websockets it holds open
    creating: int = 0  # rooms being built for it now

    @property
    def idle(self) -> bool:
        return not self.sockets and not self.creating


class Hub:
    """Every room of the server (``rooms``: one ``HostedRoom`` each), their connections and
    drivers, the clients (``clients``), the agents, the coach, the replays and the store; see the
    module docstring."""

    def __init__(
        self,
        store: Store,
        pace: float = DEFAULT_PACE,
        away_timeout: float = DEFAULT_AWAY,
        turn_timeout: float = DEFAULT_TURN,
        room_ttl: float = DEFAULT_TTL,
        agent_files: Mapping[str, Path] | None = None,
        limits: Limits | None = None,
    ) -> None:
        self.store = store
        self.limits = limits = limits or Limits()
        self.pace = pace
        self.away_timeout = away_timeout
        self.turn_timeout = turn_timeout
        self.room_ttl = room_ttl
        self.rooms: dict[str, HostedRoom] = {}
        self.clients: dict[str, Client] = {}
        nice = {"light": 0, "people": THINKING_NICE, "watch": WATCH_NICE, "coach": THINKING_NICE, "replay": REPLAY_NICE}
        self.lanes = {
            name: Lane(name, nice.get(name, THINKING_NICE), EXPRESS if name == "people" else None)
            for name in (*nice, "builder")
        }
        self.agents = Agents(agent_files or {}, per_client=limits.agents_per_client)
        self.coaching = Coaching(self.run, limits)
        self.replays = Replays(self.run, self.coaching.coach, limits, self.coaching.kept)
        self._created = Rate(limits.rooms_per_minute)
        self._defaults: OrderedDict[str, tuple[str, str]] = OrderedDict()
        self._options: dict[str, Any] | None = None
        self._options_lock = asyncio.Lock()
        self._sweeper: asyncio.Task | None = None
        self._starting: asyncio.Task | None = None
        self.stopping = False  # set by ``begin_stop``: long requests end, sockets close

    def room(self, room_id: str) -> Room | None:
        """The room ``room_id``, ``None`` if the server has none of that id."""
        hosted = self.rooms.get(room_id)
        return None if hosted is None else hosted.room

    def connections_of(self, room_id: str) -> set[Connection]:
        """The open websockets of room ``room_id`` (none for a room the server does not have)."""
        hosted = self.rooms.get(room_id)
        return set() if hosted is None else hosted.connections

    def _client(self, client: str) -> Client:
        return self.clients.setdefault(client, Client())

    def _let_go(self, client: str) -> None:
        """Drop ``client``'s record once it holds nothing."""
        if client in self.clients and self.clients[client].idle:
            del self.clients[client]

    # ------------------------------------------------------------ threads

    async def run(self, lane: str, fn: Callable[..., Any], *args: Any, client: str = "", rank: int = 0) -> Any:
        """``fn(*args)`` in the lane's thread, queued for ``client`` at ``rank``; the event loop
        serves on meanwhile, and cancelling the await drops the job if it has not begun."""
        return await self.lanes[lane].run(fn, *args, client=client, rank=rank)

    def lane_of(self, room_id: str, spec: str) -> str:
        """The lane that plays agent ``spec`` in room ``room_id`` now: ``light`` for a quick agent,
        ``people`` where a person is connected, else ``watch``."""
        if spec not in self.agents.files and quick(spec):
            return "light"
        room = self.room(room_id)
        return "people" if room is not None and room.attended else "watch"

    # ------------------------------------------------------------ the lobby's choices

    def default_agent(self, variant: Variant) -> str:
        """The variant's default seat agent and stand-in (``strong`` where shipped), found once per rules."""
        return self._default(variant)[0]

    def _default(self, variant: Variant) -> tuple[str, str]:
        key = f"{variant.name}\n{variant.rules_key()}"
        if key not in self._defaults:
            self._defaults[key] = default_opponent(variant)  # loads the shipped weights to be sure they load
            while len(self._defaults) > 64:
                self._defaults.popitem(last=False)
        return self._defaults[key]

    def _read_options(self) -> dict[str, Any]:
        variants = []
        for name in variant_names():
            v = load_variant(name)
            default, why = self._default(v)
            variants.append(
                {"name": name, "players": v.players, "description": v.description, "default": default, "why": why}
            )
        return {
            "variants": variants,
            "agents": [*AGENT_OPTIONS, *self.agents.files],
            "pace": self.pace,
            "away_timeout": self.away_timeout,
            "turn_timeout": self.turn_timeout,
        }

    async def options(self) -> dict[str, Any]:
        """What ``GET /api/options`` answers, read once per server (in the builder thread: it loads
        every shipped network)."""
        async with self._options_lock:
            if self._options is None:
                self._options = await self.run("builder", self._read_options)
        return self._options

    # ------------------------------------------------------------ rooms

    def _source(self, room_id: str, stand_ins: dict[str, str]) -> Callable[[str, Variant], Agent]:
        """How room ``room_id`` gets its agents: shared (``Agents``), ``stand_ins`` playing for
        those that cannot be built, each from the lane that plays it now (``lane_of``)."""

        def agent(spec: str, variant: Variant) -> Agent:
            spec = stand_ins.get(spec, spec)
            return self.agents.get(spec, variant, self.lane_of(room_id, spec))

        return agent

    def load(self) -> None:
        """Every stored room, replayed to where it stood (its agents are built by ``start``). A
        room that cannot be read, replayed or shown (text no page can carry, a play the engine
        refuses, a file an older server wrote badly) is said on stderr and left in the file, never
        served: one bad room never breaks the lobby."""
        for room_id in self.store.room_ids():
            stand_ins: dict[str, str] = {}
            try:
                stored = self.store.load(room_id)
                check_unicode(stored.setup, "its set-up")
                room = Room.restore(
                    stored, self._source(room_id, stand_ins), self.store, time.monotonic, self.limits.matches_per_room
                )
                for shown in (room.summary(), room.view(None)):
                    json.dumps(shown, ensure_ascii=False).encode("utf-8")
            except (ValueError, KeyError, TypeError, AttributeError, IndexError, sqlite3.Error) as exc:
                print(
                    f"bigtwo serve: room {room_id} cannot be restored ({type(exc).__name__}: {exc}); "
                    "it is left in the file and not served",
                    file=sys.stderr,
                    flush=True,
                )
                continue
            self.rooms[room_id] = HostedRoom(room, stored.creator, stored.last, stand_ins=stand_ins)
        self._prune()

    def _reserve_stored(self, hosted: HostedRoom) -> None:
        """Build a restored room's agents; one that cannot be built any more (a checkpoint file
        gone, a budget past the web's) is said on stderr and the room's stand-in plays it."""
        room, creator = hosted.room, hosted.creator
        for spec in sorted({s.kind for s in room.seats if not s.person} | {room.stand_in}):
            try:
                self.agents.reserve(room.id, {spec}, room.variant, creator, check=False)
            except RoomError as exc:
                instead = "heuristic" if spec == room.stand_in else room.stand_in
                hosted.stand_ins[spec] = instead
                print(f"bigtwo serve: room {room.id}: {exc}; {instead} plays that seat", file=sys.stderr, flush=True)
                self.agents.reserve(room.id, {instead}, room.variant, creator, check=False)

    def start(self) -> None:
        """Drive every loaded room, each once its agents are built (in the builder thread: the
        server answers meanwhile), and look for idle rooms from time to time."""
        loop = asyncio.get_running_loop()
        self._starting = loop.create_task(self._start_stored(list(self.rooms)))
        self._sweeper = loop.create_task(self._sweep())

    async def _start_stored(self, room_ids: list[str]) -> None:
        for room_id in room_ids:
            hosted = self.rooms.get(room_id)
            if hosted is not None:
                await self.run("builder", self._reserve_stored, hosted)
                self._drive(hosted)

    def _prepare(self, room_id: str, body: Any, client: str) -> dict[str, Any]:
        """A new room's checked set-up with its agents built (the builder thread's part of ``create``)."""
        setup = room_setup(
            body, self.default_agent, self.pace, self.away_timeout, self.turn_timeout, files=self.agents.files
        )
        variant = Variant().replace(**setup["variant"])
        agents = {s["kind"] for s in setup["seats"] if s["kind"] != SeatState.PERSON} | {setup["stand_in"]}
        self.agents.reserve(room_id, agents, variant, client)
        if any(s["kind"] == SeatState.PERSON for s in setup["seats"]):
            self.coaching.coach(variant)  # ready before the first person asks (it loads a network)
        return setup

    async def create(self, body: Any, client: str = "") -> Room:
        """A new room from the page's form (``bigtwo.web.forms.room_setup``) for ``client``;
        ``RoomError`` naming a bad field, ``TooMany`` over a per-client limit, ``Busy`` when the
        server is full."""
        if len(self.rooms) >= MAX_ROOMS:
            self.expire(time.time())
        if len(self.rooms) >= MAX_ROOMS:
            raise Busy(f"the server holds {MAX_ROOMS} rooms, its most; idle rooms are deleted after a while")
        most = self.limits.rooms_per_client
        creating = self.clients[client].creating if client in self.clients else 0
        held = sum(1 for h in self.rooms.values() if h.creator == client) + creating
        if kept_for_newcomers(len(self.rooms), MAX_ROOMS, held, 1):
            raise Busy(
                f"the server is nearly full: its last {MAX_ROOMS // RESERVE} rooms are kept for clients with none"
            )
        if held >= most:
            raise TooMany(
                f"you hold {most} rooms, the most one client may; a room nobody is in is deleted after "
                f"{self.room_ttl:g} seconds"
            )
        self._created.take(client, "creating rooms")
        room_id = secrets.token_hex(4)
        while room_id in self.rooms:
            room_id = secrets.token_hex(4)
        self._client(client).creating += 1  # counted while it is built
        try:
            setup = await self.run("builder", self._prepare, room_id, body, client, client=client)
        except BaseException:
            self.agents.release(room_id)
            raise
        finally:
            self.clients[client].creating -= 1
            self._let_go(client)
        if self.stopping:
            self.agents.release(room_id)
            raise Stopping("the server is stopping; create the room once it is back")
        keep = self.limits.matches_per_room
        stand_ins: dict[str, str] = {}
        room = Room(room_id, setup, self._source(room_id, stand_ins), None, time.monotonic, keep)  # dealt, not stored
        self.store.add_room(room_id, setup, creator=client, first_seed=room.game.seed)  # one transaction
        room.store = self.store
        hosted = self.rooms[room_id] = HostedRoom(room, client, time.time(), stand_ins=stand_ins)
        self._drive(hosted)
        return room

    def _drive(self, hosted: HostedRoom) -> None:
        hosted.driver = asyncio.get_running_loop().create_task(self._driver(hosted))

    async def _driver(self, hosted: HostedRoom) -> None:
        """Play the room's agent turns as they come due; woken by every change to the room. A
        failure is said on stderr and retried a second later: it never ends the driver."""
        room, event = hosted.room, hosted.changed
        while True:
            event.clear()
            now = time.monotonic()
            due = room.agent_due(now)
            if due is None or due > now:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(event.wait(), None if due is None else due - now)
                continue
            try:
                turn = room.agent_turn(now)
                if turn is None:
                    continue
                spec = room.stand_in if turn.by == SeatState.STAND_IN else room.seats[turn.seat].kind
                spec = hosted.stand_ins.get(spec, spec)
                lane = self.lane_of(room.id, spec)  # as ``_source`` chose the agent's instance just now
                action = await self.run(lane, _choose, turn, client=hosted.creator)
                moved = room.finish_agent_turn(turn, action)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - an agent that fails: say so, try again later
                print(f"bigtwo serve: room {room.id}: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
                await asyncio.sleep(1.0)
                continue
            if moved is not None:
                self.broadcast(room.id)

    def changed_room(self, room_id: str) -> None:
        """The room changed (a play, a new match, its pace): its driver looks again, and every
        connection gets its view now."""
        hosted = self.rooms.get(room_id)
        if hosted is not None:
            hosted.changed.set()
            self.broadcast(room_id)

    def settle(self, room_id: str) -> None:
        """Who is connected changed: the driver looks again now (a person came back), and the
        views go out within ``SETTLE`` seconds, once for every change meanwhile."""
        hosted = self.rooms.get(room_id)
        if hosted is None:
            return
        hosted.changed.set()
        if hosted.settling is None:
            hosted.settling = asyncio.get_running_loop().call_later(SETTLE, self._settled, room_id)

    def _settled(self, room_id: str) -> None:
        hosted = self.rooms.get(room_id)
        if hosted is not None:
            hosted.settling = None
            self.broadcast(room_id)

    def broadcast(self, room_id: str) -> None:
        """Queue each connection of the room its own view (each seat's written once)."""
        hosted = self.rooms[room_id]
        if hosted.settling is not None:
            hosted.settling.cancel()
            hosted.settling = None
        now = time.monotonic()
        hosted.active = time.time()
        views: dict[int | None, str] = {}
        for conn in hosted.connections:
            text = views.get(conn.seat)
            if text is None:
                text = views[conn.seat] = to_text(hosted.room.view(conn.seat, now))
            conn.send(text)

    # ------------------------------------------------------------ sockets

    def admit(self, room_id: str, seat: int | None, client: str) -> None:
        """``TooMany`` if a new websocket of ``client`` on ``seat`` of the room would pass a limit.
        A seat's own sockets (opened with its token) count against ``sockets_per_seat`` only, never
        against the spectators: no crowd of watchers can lock a player out of their seat.
        Spectators have ``sockets_per_room`` places, one client at most ``spectators_per_client``."""
        hosted, limits = self.rooms[room_id], self.limits
        if seat is not None and hosted.room.seats[seat].connections >= limits.sockets_per_seat:
            raise TooMany(f"this seat is open in {limits.sockets_per_seat} places already, the most a seat may be")
        if seat is None:
            watching = [c for c in hosted.connections if c.seat is None]
            if len(watching) >= limits.sockets_per_room:
                raise TooMany(
                    f"this room has {limits.sockets_per_room} spectators already, the most a room may have "
                    "(a seat's link is always let in)"
                )
            most = spectators_per_client(limits)
            if sum(1 for c in watching if c.client == client) >= most:
                raise TooMany(f"you watch this room from {most} sockets already, the most one client may")
        if client in self.clients and self.clients[client].sockets >= limits.sockets_per_client:
            raise TooMany(f"you hold {limits.sockets_per_client} websockets already, the most one client may")

    def opened(self, room_id: str, conn: Connection) -> None:
        """A websocket opened: counted, and the room told (see ``settle``)."""
        hosted = self.rooms[room_id]
        hosted.connections.add(conn)
        self._client(conn.client).sockets += 1
        hosted.room.connect(conn.seat)
        self.settle(room_id)

    def closed(self, room_id: str, conn: Connection) -> None:
        """A websocket closed (see ``opened``)."""
        hosted = self.rooms.get(room_id)
        if hosted is None or conn not in hosted.connections:
            return
        hosted.connections.discard(conn)
        if not hosted.connections:
            hosted.active = time.time()  # the idle clock starts when the last one leaves
        if conn.client in self.clients:
            self.clients[conn.client].sockets -= 1
            self._let_go(conn.client)
        hosted.room.disconnect(conn.seat)
        self.settle(room_id)

    def expire(self, now: float) -> list[str]:
        """Delete the rooms nobody is connected to or has left, and unchanged, for ``room_ttl``
        seconds: each one's record, its cached replays, its agents' claim and its stored rows."""
        gone = [rid for rid, h in self.rooms.items() if not h.connections and now - h.active >= self.room_ttl]
        for rid in gone:
            self.rooms.pop(rid).close()
            self.replays.forget(rid)
            self.agents.release(rid)
            self.store.delete_room(rid)
        return gone

    def _prune(self) -> None:
        """Keep the newest ``Limits.matches_total`` finished matches of the file (see ``Store.prune``)."""
        for room_id, number in self.store.prune(self.limits.matches_total):
            room = self.room(room_id)
            if room is not None:
                room.finished.pop(number, None)

    async def _sweep(self) -> None:
        while True:
            await asyncio.sleep(min(SWEEP, max(0.2, self.room_ttl / 4)))
            gone = self.expire(time.time())
            if gone:
                print(f"bigtwo serve: deleted {len(gone)} idle room(s)", file=sys.stderr, flush=True)
            self._prune()

    # ------------------------------------------------------------ shutdown

    def begin_stop(self) -> None:
        """The server is shutting down: replays end at their next move and every websocket is
        dropped, so that nothing holds up the shutdown (``stop`` follows)."""
        self.stopping = self.replays.stopping = True
        for hosted in self.rooms.values():
            for conn in hosted.connections:
                conn.dropped.set()

    async def stop(self) -> None:
        others = [t for t in (self._sweeper, self._starting) if t is not None]
        drivers = [h.driver for h in self.rooms.values() if h.driver is not None]
        for task in [*others, *drivers]:
            task.cancel()
        await asyncio.gather(*drivers, *others, return_exceptions=True)
        for lane in self.lanes.values():
            lane.shutdown()
        self.store.close()


def _choose(turn: Any) -> int:
    return int(turn.agent.act(turn.obs, turn.ids, turn.counts)[0])
