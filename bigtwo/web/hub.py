"""The web table's hub: every room of the server, their connections and drivers, the agents, the
coach and the store, the threads the thinking runs in, and the per-client limits
(``bigtwo.web.limits``).

**Threads.** The event loop never thinks: it serves pages, messages and plays. Agents choose
their plays in worker threads the hub owns, each a ``bigtwo.web.lanes.Lane`` (one thread, a fair
queue: jobs by rank, then clients in turn), each room with at most one play in flight:

| lane | nice | runs |
|---|---|---|
| ``light`` | 0 | the quick agents' plays (``LIGHT``, declared of cost ``light``: ``random``, ``greedy``, ``heuristic``): a room of them never waits behind a search |
| ``people`` | ``THINKING_NICE`` | the searchers' plays (``SEARCHERS``, declared of cost ``search``: ``search``, ``strong``; and checkpoint files) in rooms where a person is connected |
| ``watch`` | ``WATCH_NICE`` | the searchers' plays in every other room (agents only, or its people away) |
| ``coach`` | ``THINKING_NICE`` | the coach's advice on a person's turn |
| ``replay`` | ``REPLAY_NICE`` | replays with the coach's advice, one move at a time |
| ``builder`` | ``THINKING_NICE`` | building agents and coaches (loading networks) and checking a new room's form |

**The guarantee.** A room with a person connected never queues behind an agent-only room: its
searches run in their own thread, at a higher priority than the agent-only rooms' (on a busy
machine the kernel gives the ``people`` thread most of a core); rooms are served client by client
in turn, so a person's agent's move waits for at most one move of each other client whose rooms
have people in them. Each searcher is bounded by the web's budget (its declared caps:
``bigtwo.agents.registry.WEB_SECONDS``, ``WEB_SIMULATIONS``) with ``room.MAX_AGENT_THREADS`` rollout threads (one core fewer than
the engine would take: the event loop keeps one). An agent instance is only ever used in one
lane's thread (a searcher is built once for ``people`` and once for ``watch``). A search cannot
be stopped in the middle (``bigtwo.agents.search`` has no hook for it), so shutdown waits for at
most one move of each lane; queued work is dropped, and so is work whose requester is gone (a
coach request or replay whose client disconnected, a room deleted).

**What the hub holds, bounded.** ``MAX_ROOMS`` rooms, ``Limits.rooms_per_client`` of them from
one client; a room nobody is connected to, that nobody has left and that has not changed for
``room_ttl`` seconds is deleted (from memory and the store), also across restarts. The agents are shared between the
rooms that use them and built once per agent and set of rules (a variant's name and description
are no rules). Plain agents (a bare name or a checkpoint file, for a shipped variant's rules)
are always buildable, so a default room can always be made; custom ones (options, or other
rules) are at most ``MAX_AGENTS`` at once, ``Limits.agents_per_client`` for one client's rooms,
an unused one dropped for a new one, and a room that would need more is refused before anything
is built. At most ``MAX_COACHES`` coaches (least recently used dropped) and ``MAX_REPLAYS``
replays running or cached. A coach request for a position already being ranked waits for that
one (one ranking however many sockets ask). Each connection has at most ``MAX_QUEUE`` messages
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
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.websockets import WebSocket

from bigtwo.agents import spec as declared
from bigtwo.agents.base import Agent
from bigtwo.agents.pretrained import STRONG, WEB_SEARCH
from bigtwo.agents.registry import AGENT_SPECS, default_opponent, make_agent, split_spec
from bigtwo.env.envs.game import Game
from bigtwo.env.records.record import game_from_record
from bigtwo.env.rules.variant import Variant, load_variant, variant_names
from bigtwo.web.coach import Coach, Position
from bigtwo.web.lanes import Lane
from bigtwo.web.limits import Held, Limits, Rate, TooMany
from bigtwo.web.room import (
    AGENT_OPTIONS,
    DEFAULT_AWAY,
    DEFAULT_PACE,
    DEFAULT_TURN,
    MAX_AGENT_THREADS,
    PERSON,
    Room,
    RoomError,
    check_agent,
    check_unicode,
    room_setup,
)
from bigtwo.web.store import Store

MAX_ROOMS = 1000
MAX_AGENTS = 24  # distinct agents (agent and rules) held at once
MAX_COACHES = 8  # coaches (a variant's, for the coach or the replay thread)
MAX_REPLAYS = 16
MAX_QUEUE = 256  # messages waiting for one connection
SETTLE = 0.25  # seconds a change of who is connected waits to be broadcast (changes meanwhile go out as one)
SEND_TIMEOUT = 10.0  # seconds one send may block before the connection is dropped
DEFAULT_TTL = 7 * 24 * 3600.0  # seconds an idle room with nobody connected is kept
SWEEP = 30.0  # seconds between looks for idle rooms
THINKING_NICE = 5  # the people, coach and builder threads' nice value
REPLAY_NICE = 10  # the replay thread's: a replay's advice yields to live rooms and the coach
WATCH_NICE = 15  # the watch thread's: agent-only rooms' searches yield to everything else
# from the agents' declarations (bigtwo.agents.registry): whose plays take well under a millisecond (the
# light lane), and the searchers, given MAX_AGENT_THREADS rollout threads unless they ask for fewer
LIGHT = tuple(name for name, spec in AGENT_SPECS.items() if spec.cost == declared.LIGHT)
SEARCHERS = tuple(name for name, spec in AGENT_SPECS.items() if spec.cost == declared.SEARCH)


class Busy(RoomError):
    """A request the server as a whole cannot take now (HTTP 503): it is full, stopping, or the
    work ran past its time; ``retry_after``: seconds until trying again may succeed."""

    retry_after = 30


class Stopping(Busy):
    """A request cut short because the server is shutting down (HTTP 503)."""


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


class Hub:
    """Every room of the server, their connections and drivers, the agents and the store; see
    the module docstring."""

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
        self.rooms: dict[str, Room] = {}
        self.connections: dict[str, set[Connection]] = {}
        self.changed: dict[str, asyncio.Event] = {}
        self.drivers: dict[str, asyncio.Task] = {}
        self.active: dict[str, float] = {}  # room -> epoch seconds of its last change
        self.stand_ins: dict[str, dict[str, str]] = {}  # room -> {agent that cannot be built: its stand-in}
        self.creators: dict[str, str] = {}  # room -> the client that made it
        self.sockets: dict[str, int] = {}  # client -> websockets it holds open
        nice = {"light": 0, "people": THINKING_NICE, "watch": WATCH_NICE, "coach": THINKING_NICE, "replay": REPLAY_NICE}
        self.lanes = {name: Lane(name, nice.get(name, THINKING_NICE)) for name in (*nice, "builder")}
        self.agents = Agents(agent_files or {}, per_client=limits.agents_per_client)
        self._created = Rate(limits.rooms_per_minute)
        self._replaying = Held()
        self._coaching = Held()
        self._advice: dict[tuple[str, int, int], _Shared] = {}
        self._settling: dict[str, asyncio.TimerHandle] = {}
        self._creating: dict[str, int] = {}  # client -> rooms being built for it
        self._coaches: OrderedDict[str, Coach] = OrderedDict()
        self._defaults: OrderedDict[str, tuple[str, str]] = OrderedDict()
        self._replays: OrderedDict[tuple[str, int, bool], dict[str, Any]] = OrderedDict()
        self._options: dict[str, Any] | None = None
        self._options_lock = asyncio.Lock()
        self._sweeper: asyncio.Task | None = None
        self._starting: asyncio.Task | None = None
        self.replaying = 0  # replays being expanded now
        self.stopping = False  # set by ``begin_stop``: long requests end, sockets close

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
        room = self.rooms.get(room_id)
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

    def coach(self, variant: Variant, lane: str = "coach") -> Coach:
        """The coach for ``variant``'s rules that ranks in ``lane`` (``coach`` or ``replay``: an
        instance is used in one thread), built in the calling thread; at most ``MAX_COACHES`` kept."""
        key = f"{lane}\n{variant.name}\n{variant.rules_key()}"
        if key not in self._coaches:
            self._coaches[key] = Coach(variant, threads=MAX_AGENT_THREADS)
            while len(self._coaches) > MAX_COACHES:
                self._coaches.popitem(last=False)
        self._coaches.move_to_end(key)
        return self._coaches[key]

    # ------------------------------------------------------------ rooms

    def _source(self, room_id: str) -> Callable[[str, Variant], Agent]:
        subs = self.stand_ins.setdefault(room_id, {})

        def agent(spec: str, variant: Variant) -> Agent:
            spec = subs.get(spec, spec)
            return self.agents.get(spec, variant, self.lane_of(room_id, spec))

        return agent

    def load(self) -> None:
        """Every stored room, replayed to where it stood (its agents are built by ``start``). A
        room that cannot be read, replayed or shown (text no page can carry, a play the engine
        refuses, a file an older server wrote badly) is said on stderr and left in the file, never
        served: one bad room never breaks the lobby."""
        for room_id in self.store.room_ids():
            try:
                stored = self.store.load(room_id)
                check_unicode(stored.setup, "its set-up")
                room = Room.restore(
                    stored, self._source(room_id), self.store, time.monotonic, self.limits.matches_per_room
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
            self.rooms[room_id] = room
            self.active[room_id] = stored.last
            self.creators[room_id] = stored.creator
        self._prune()

    def _reserve_stored(self, room: Room) -> None:
        """Build a restored room's agents; one that cannot be built any more (a checkpoint file
        gone, a budget past the web's) is said on stderr and the room's stand-in plays it."""
        for spec in sorted({s.kind for s in room.seats if not s.person} | {room.stand_in}):
            creator = self.creators.get(room.id, "")
            try:
                self.agents.reserve(room.id, {spec}, room.variant, creator, check=False)
            except RoomError as exc:
                instead = "heuristic" if spec == room.stand_in else room.stand_in
                self.stand_ins[room.id][spec] = instead
                print(f"bigtwo serve: room {room.id}: {exc}; {instead} plays that seat", file=sys.stderr, flush=True)
                self.agents.reserve(room.id, {instead}, room.variant, creator, check=False)

    def start(self) -> None:
        """Drive every loaded room, each once its agents are built (in the builder thread: the
        server answers meanwhile), and look for idle rooms from time to time."""
        loop = asyncio.get_running_loop()
        for room_id in self.rooms:
            self.connections.setdefault(room_id, set())
            self.changed[room_id] = asyncio.Event()
        self._starting = loop.create_task(self._start_stored(list(self.rooms)))
        self._sweeper = loop.create_task(self._sweep())

    async def _start_stored(self, room_ids: list[str]) -> None:
        for room_id in room_ids:
            room = self.rooms.get(room_id)
            if room is not None:
                await self.run("builder", self._reserve_stored, room)
                self._drive(room_id)

    def _prepare(self, room_id: str, body: Any, client: str) -> dict[str, Any]:
        """A new room's checked set-up with its agents built (the builder thread's part of ``create``)."""
        setup = room_setup(
            body, self.default_agent, self.pace, self.away_timeout, self.turn_timeout, files=self.agents.files
        )
        variant = Variant().replace(**setup["variant"])
        self.agents.reserve(
            room_id, {s["kind"] for s in setup["seats"] if s["kind"] != PERSON} | {setup["stand_in"]}, variant, client
        )
        if any(s["kind"] == PERSON for s in setup["seats"]):
            self.coach(variant)  # ready before the first person asks (it loads a network)
        return setup

    async def create(self, body: Any, client: str = "") -> Room:
        """A new room from the page's form (``room.room_setup``) for ``client``; ``RoomError``
        naming a bad field, ``TooMany`` over a per-client limit, ``Busy`` when the server is full."""
        if len(self.rooms) >= MAX_ROOMS:
            self.expire(time.time())
        if len(self.rooms) >= MAX_ROOMS:
            raise Busy(f"the server holds {MAX_ROOMS} rooms, its most; idle rooms are deleted after a while")
        most = self.limits.rooms_per_client
        if sum(1 for c in self.creators.values() if c == client) + self._creating.get(client, 0) >= most:
            raise TooMany(
                f"you hold {most} rooms, the most one client may; a room nobody is in is deleted after "
                f"{self.room_ttl:g} seconds"
            )
        self._created.take(client, "creating rooms")
        room_id = secrets.token_hex(4)
        while room_id in self.rooms:
            room_id = secrets.token_hex(4)
        self._creating[client] = self._creating.get(client, 0) + 1  # counted while it is built
        try:
            setup = await self.run("builder", self._prepare, room_id, body, client, client=client)
        except BaseException:
            self.agents.release(room_id)
            raise
        finally:
            self._creating[client] -= 1
            if not self._creating[client]:
                del self._creating[client]
        if self.stopping:
            self.agents.release(room_id)
            raise Stopping("the server is stopping; create the room once it is back")
        keep = self.limits.matches_per_room
        room = Room(room_id, setup, self._source(room_id), None, time.monotonic, keep)  # dealt, nothing stored
        self.store.add_room(room_id, setup, creator=client, first_seed=room.game.seed)  # one transaction
        room.store = self.store
        self.rooms[room_id] = room
        self.active[room_id] = time.time()
        self.creators[room_id] = client
        self._drive(room_id)
        return room

    def _drive(self, room_id: str) -> None:
        self.connections.setdefault(room_id, set())
        self.changed.setdefault(room_id, asyncio.Event())
        self.drivers[room_id] = asyncio.get_running_loop().create_task(self._driver(room_id))

    async def _driver(self, room_id: str) -> None:
        """Play the room's agent turns as they come due; woken by every change to the room. A
        failure is said on stderr and retried a second later: it never ends the driver."""
        room, event = self.rooms[room_id], self.changed[room_id]
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
                spec = room.stand_in if turn.by == "stand-in" else room.seats[turn.seat].kind
                spec = self.stand_ins.get(room_id, {}).get(spec, spec)
                lane = self.lane_of(room_id, spec)  # as ``_source`` chose the agent's instance just now
                action = await self.run(lane, _choose, turn, client=self.creators.get(room_id, ""))
                moved = room.finish_agent_turn(turn, action)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - an agent that fails: say so, try again later
                print(f"bigtwo serve: room {room_id}: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
                await asyncio.sleep(1.0)
                continue
            if moved is not None:
                self.broadcast(room_id)

    def changed_room(self, room_id: str) -> None:
        """The room changed (a play, a new match, its pace): its driver looks again, and every
        connection gets its view now."""
        if room_id in self.changed:
            self.changed[room_id].set()
            self.broadcast(room_id)

    def settle(self, room_id: str) -> None:
        """Who is connected changed: the driver looks again now (a person came back), and the
        views go out within ``SETTLE`` seconds, once for every change meanwhile."""
        if room_id not in self.changed:
            return
        self.changed[room_id].set()
        if room_id not in self._settling:
            loop = asyncio.get_running_loop()
            self._settling[room_id] = loop.call_later(SETTLE, self._settled, room_id)

    def _settled(self, room_id: str) -> None:
        self._settling.pop(room_id, None)
        if room_id in self.rooms:
            self.broadcast(room_id)

    def broadcast(self, room_id: str) -> None:
        """Queue each connection of the room its own view (each seat's written once)."""
        timer = self._settling.pop(room_id, None)
        if timer is not None:
            timer.cancel()
        room = self.rooms[room_id]
        now = time.monotonic()
        self.active[room_id] = time.time()
        views: dict[int | None, str] = {}
        for conn in self.connections.get(room_id, ()):
            text = views.get(conn.seat)
            if text is None:
                text = views[conn.seat] = to_text(room.view(conn.seat, now))
            conn.send(text)

    # ------------------------------------------------------------ sockets

    def admit(self, room_id: str, seat: int | None, client: str) -> None:
        """``TooMany`` if a new websocket of ``client`` on ``seat`` of the room would pass a limit."""
        room, limits = self.rooms[room_id], self.limits
        if seat is not None and room.seats[seat].connections >= limits.sockets_per_seat:
            raise TooMany(f"this seat is open in {limits.sockets_per_seat} places already, the most a seat may be")
        if len(self.connections.get(room_id, ())) >= limits.sockets_per_room:
            raise TooMany(f"this room has {limits.sockets_per_room} connections already, the most a room may have")
        if self.sockets.get(client, 0) >= limits.sockets_per_client:
            raise TooMany(f"you hold {limits.sockets_per_client} websockets already, the most one client may")

    def opened(self, room_id: str, conn: Connection) -> None:
        """A websocket opened: counted, and the room told (see ``settle``)."""
        self.connections[room_id].add(conn)
        self.sockets[conn.client] = self.sockets.get(conn.client, 0) + 1
        self.rooms[room_id].connect(conn.seat)
        self.settle(room_id)

    def closed(self, room_id: str, conn: Connection) -> None:
        """A websocket closed (see ``opened``)."""
        conns = self.connections.get(room_id, set())
        if conn not in conns:
            return
        conns.discard(conn)
        if not conns:
            self.active[room_id] = time.time()  # the idle clock starts when the last one leaves
        left = self.sockets.get(conn.client, 1) - 1
        if left:
            self.sockets[conn.client] = left
        else:
            self.sockets.pop(conn.client, None)
        room = self.rooms.get(room_id)
        if room is not None:
            room.disconnect(conn.seat)
            self.settle(room_id)

    def expire(self, now: float) -> list[str]:
        """Delete the rooms nobody is connected to or has left, and unchanged, for ``room_ttl`` seconds."""
        gone = [
            rid
            for rid, room in self.rooms.items()
            if not self.connections.get(rid) and now - self.active.get(rid, now) >= self.room_ttl
        ]
        for rid in gone:
            task = self.drivers.pop(rid, None)
            if task is not None:
                task.cancel()
            del self.rooms[rid]
            timer = self._settling.pop(rid, None)
            if timer is not None:
                timer.cancel()
            for table in (self.connections, self.changed, self.active, self.stand_ins, self.creators):
                table.pop(rid, None)
            for key in [k for k in self._replays if k[0] == rid]:
                del self._replays[key]
            self.agents.release(rid)
            self.store.delete_room(rid)
        return gone

    def _prune(self) -> None:
        """Keep the newest ``Limits.matches_total`` finished matches of the file (see ``Store.prune``)."""
        for room_id, number in self.store.prune(self.limits.matches_total):
            room = self.rooms.get(room_id)
            if room is not None:
                room.finished.pop(number, None)

    async def _sweep(self) -> None:
        while True:
            await asyncio.sleep(min(SWEEP, max(0.2, self.room_ttl / 4)))
            gone = self.expire(time.time())
            if gone:
                print(f"bigtwo serve: deleted {len(gone)} idle room(s)", file=sys.stderr, flush=True)
            self._prune()

    # ------------------------------------------------------------ coach and replays

    async def advise(self, room: Room, seat: int | None, client: str = "") -> dict[str, Any]:
        """The coach's advice for ``seat`` on its turn (in the coach thread). A
        position already being ranked is not ranked again: every socket that asks waits for the
        one ranking. ``TooMany`` if ``client`` has ``Limits.coach_per_client`` positions being
        ranked; cancelled when the last socket waiting for it closes."""
        if seat is None:
            raise RoomError("the coach advises a seated player; spectators have no hand")
        if room.to_act != seat or room.game.is_over:
            raise RoomError("the coach advises on your turn; it is not your turn")
        position, seq = Position.of(room.game), len(room.moves)
        variant = room.variant

        async def rank() -> dict[str, Any]:
            with self._coaching.hold(client, self.limits.coach_per_client, "coach requests", retry_after=2):
                coach = await self.run("builder", self.coach, variant, client=client)
                return await self.run("coach", coach.advise_at, position, client=client)

        advice = await self._shared((room.id, room.match, seq), rank)
        if seq != len(room.moves):
            raise RoomError("the game moved on while the coach was thinking; ask again")
        return {"type": "coach", "seq": seq, **advice}

    async def _shared(self, key: tuple[str, int, int], work: Callable[[], Awaitable[Any]]) -> Any:
        """``work()`` run once for everyone awaiting ``key`` at once; cancelled when none is left."""
        shared = self._advice.get(key)
        if shared is None or shared.task.done():
            shared = self._advice[key] = _Shared(asyncio.ensure_future(work()))

            def forget(_task: asyncio.Future[Any], k: Any = key, s: _Shared = shared) -> None:
                if self._advice.get(k) is s:
                    self._advice.pop(k, None)

            shared.task.add_done_callback(forget)
        shared.waiting += 1
        try:
            return await asyncio.shield(shared.task)
        finally:
            shared.waiting -= 1
            if not shared.waiting and not shared.task.done():
                shared.task.cancel()

    async def replay(
        self, record: Any, with_coach: bool, key: tuple[str, int, bool] | None = None, client: str = ""
    ) -> dict[str, Any]:
        """A finished match's record, checked by replaying it through the engine, and each move
        expanded: ``{game, seat, cards, lead}`` plus the coach's advice (``with_coach``) for the
        seat that moved, from that seat's information at that point. The record answered is the
        engine's own (only ``seats`` and ``info`` are taken from the one given). ``key``: cache
        it (a room's finished match). At most ``MAX_REPLAYS`` at once (``Busy``) and
        ``Limits.replays_per_client`` for ``client`` (``TooMany``), each at most
        ``Limits.replay_timeout`` seconds (``Busy``); cancelling the await (the client hung up)
        stops the replay at once and frees its slot."""
        if key is not None and key in self._replays:
            self._replays.move_to_end(key)
            return self._replays[key]
        if self.replaying >= MAX_REPLAYS:
            raise Busy(f"the server is replaying {MAX_REPLAYS} records already; try again in a moment")
        with self._replaying.hold(client, self.limits.replays_per_client, "replays", retry_after=10):
            self.replaying += 1
            try:
                out = await asyncio.wait_for(self._replay(record, with_coach, client), self.limits.replay_timeout)
            except TimeoutError:
                raise Busy(
                    f"this replay took more than {self.limits.replay_timeout:g} seconds, the most one may; "
                    "replay it without the coach, or a shorter match"
                ) from None
            finally:
                self.replaying -= 1
        if key is not None:
            self._replays[key] = out
            while len(self._replays) > MAX_REPLAYS:
                self._replays.popitem(last=False)
        return out

    async def _replay(self, record: Any, with_coach: bool, client: str) -> dict[str, Any]:
        steps: list[dict[str, Any]] = []
        positions: list[Position] = []

        def note(game: Game, number: int, seat: int, cards: str) -> None:
            steps.append({"game": number, "seat": seat, "cards": cards, "lead": not game.table})
            if with_coach:
                positions.append(Position.of(game))

        def expand() -> Game:
            if not isinstance(record, dict):
                raise RoomError("send a game record: a JSON object with format, variant, seed, games, ...")
            return game_from_record(record, note)

        final = await self.run("builder", expand, client=client)
        if not final.is_over:
            raise RoomError(
                "this record's match is not over; a replay shows every hand, so only finished matches replay"
            )
        seats = record.get("seats")
        info = record.get("info")
        try:
            checked = final.to_record(seats=seats, info=info)
        except ValueError as exc:
            raise RoomError(f"game record: {exc}") from None
        if with_coach:
            coach = await self.run("builder", self.coach, final.variant, "replay", client=client)
            for step, position in zip(steps, positions, strict=True):  # one move at a time: rooms' coaches between
                if self.stopping:
                    raise Stopping("the server is stopping; ask for this replay again once it is back")
                step["coach"] = await self.run("replay", coach.advise_at, position, client=client)
        return {"record": checked, "steps": steps}

    def begin_stop(self) -> None:
        """The server is shutting down: replays end at their next move and every websocket is
        dropped, so that nothing holds up the shutdown (``stop`` follows)."""
        self.stopping = True
        for conns in self.connections.values():
            for conn in conns:
                conn.dropped.set()

    async def stop(self) -> None:
        others = [t for t in (self._sweeper, self._starting) if t is not None]
        for task in [*others, *self.drivers.values()]:
            task.cancel()
        await asyncio.gather(*self.drivers.values(), *others, return_exceptions=True)
        for lane in self.lanes.values():
            lane.shutdown()
        self.store.close()


@dataclass(eq=False)
class _Shared:
    """One piece of work many await (``Hub._shared``): its task and how many await it."""

    task: asyncio.Future
    waiting: int = 0


def _choose(turn: Any) -> int:
    return int(turn.agent.act(turn.obs, turn.ids, turn.counts)[0])
