"""The web table's hub: every room of the server, their connections and drivers, the agents, the
coach and the store, and the threads the thinking runs in.

**Threads.** The event loop never thinks: it serves pages, messages and plays. Agents choose
their plays in worker threads the hub owns, one thread a lane, each room with at most one play
in flight, so a lane serves its rooms in turn:

| lane | runs |
|---|---|
| ``light`` | the quick agents' plays (``LIGHT``, declared of cost ``light``: ``random``, ``greedy``, ``heuristic``): a room of them never waits behind a search |
| ``heavy`` | the searchers' plays (``SEARCHERS``, declared of cost ``search``: ``search``, ``strong``) and checkpoint files', each within the web's budget (their declared caps: ``bigtwo.agents.registry.WEB_SECONDS``, ``WEB_SIMULATIONS``) and with ``room.MAX_AGENT_THREADS`` rollout threads (one core fewer than the engine would take: the event loop keeps one) |
| ``coach`` | the coach's advice and replays with advice, one move at a time, so a long replay never holds up a room |
| ``builder`` | building agents and coaches (loading networks) and checking a new room's form |

The heavy, coach and builder threads run at a lower priority (nice ``THINKING_NICE``), so on
busy cores the event loop and the quick rooms come first. An agent instance is only ever used
in its lane's one thread. A search cannot be stopped in the
middle (``bigtwo.agents.search`` has no hook for it), so shutdown waits for at most one move of each
lane, which the web's budget bounds (about a second); queued work is dropped.

**What the hub holds, bounded.** ``MAX_ROOMS`` rooms; a room nobody is connected to and that has
not changed for ``room_ttl`` seconds is deleted (from memory and the store), also across
restarts. The agents are shared between the rooms that use them and built once per agent and
set of rules (a variant's name and description are no rules): at most ``MAX_AGENTS`` at once, an
unused one dropped for a new one, and a room that would need more is refused before anything is
built. At most ``MAX_COACHES`` coaches (least recently used dropped) and ``MAX_REPLAYS`` cached
replays. Each connection has at most ``MAX_QUEUE`` messages waiting; a socket that stops reading
(its queue full, or one send blocked ``SEND_TIMEOUT`` seconds) is dropped, its seat counted away.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.websockets import WebSocket

from bigtwo.agents import spec as declared
from bigtwo.agents.base import Agent
from bigtwo.agents.registry import AGENT_SPECS, default_opponent, make_agent, split_spec
from bigtwo.env.envs.game import Game
from bigtwo.env.records.record import game_from_record
from bigtwo.env.rules.variant import Variant, load_variant, variant_names
from bigtwo.web.coach import Coach, Position
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
    room_setup,
)
from bigtwo.web.store import Store

MAX_ROOMS = 1000
MAX_AGENTS = 24  # distinct agents (agent and rules) held at once
MAX_COACHES = 4
MAX_REPLAYS = 16
MAX_QUEUE = 256  # messages waiting for one connection
SEND_TIMEOUT = 10.0  # seconds one send may block before the connection is dropped
DEFAULT_TTL = 7 * 24 * 3600.0  # seconds an idle room with nobody connected is kept
SWEEP = 30.0  # seconds between looks for idle rooms
THINKING_NICE = 5  # the heavy, coach and builder threads' nice value
# from the agents' declarations (bigtwo.agents.registry): whose plays take well under a millisecond (the
# light lane), and the searchers, given MAX_AGENT_THREADS rollout threads unless they ask for fewer
LIGHT = tuple(name for name, spec in AGENT_SPECS.items() if spec.cost == declared.LIGHT)
SEARCHERS = tuple(name for name, spec in AGENT_SPECS.items() if spec.cost == declared.SEARCH)


class Stopping(RoomError):
    """A request cut short because the server is shutting down (HTTP 503)."""


@dataclass(eq=False)
class Connection:
    """One open websocket: its seat (``None``: spectator), its bounded queue of outgoing messages,
    and ``dropped``, set when it is to be closed (it stopped reading)."""

    ws: WebSocket
    seat: int | None
    queue: asyncio.Queue = field(default_factory=lambda: asyncio.Queue(MAX_QUEUE))
    dropped: asyncio.Event = field(default_factory=asyncio.Event)

    def send(self, message: dict[str, Any]) -> None:
        """Queue ``message``; a full queue drops the connection instead of growing."""
        try:
            self.queue.put_nowait(message)
        except asyncio.QueueFull:
            self.dropped.set()

    async def write(self) -> None:
        """Send the queued messages in order until the socket closes or blocks ``SEND_TIMEOUT`` seconds."""
        try:
            while True:
                message = await self.queue.get()
                await asyncio.wait_for(self.ws.send_json(message), SEND_TIMEOUT)
        except Exception:  # noqa: BLE001 - a closed or stuck socket: the connection ends
            self.dropped.set()


class Agents:
    """The agents the rooms play with, shared and bounded (see the module docstring); thread-safe.
    ``files``: checkpoint files by the name a seat gives (``bigtwo serve --agent-file``)."""

    def __init__(self, files: Mapping[str, Path], most: int = MAX_AGENTS) -> None:
        self.files = dict(files)
        self.most = most
        self._built: OrderedDict[tuple[str, str], Agent] = OrderedDict()
        self._users: dict[tuple[str, str], set[str]] = {}
        self._lock = threading.RLock()

    def _build(self, spec: str, variant: Variant) -> Agent:
        check_agent(spec, self.files)  # a stored room's agent too: a name, or a file the server was given
        name, options = split_spec(spec) if spec not in self.files else (spec, {})
        extra = {"threads": MAX_AGENT_THREADS} if name in SEARCHERS and "threads" not in options else {}
        return make_agent(self.files.get(spec, spec), variant, seed=0, **extra)

    def reserve(self, room_id: str, specs: set[str], variant: Variant) -> None:
        """Build (in the calling thread) the agents ``specs`` for ``variant`` that are not built
        yet, for room ``room_id``; ``RoomError`` (nothing built) if the hub would hold more than
        ``most``, or naming an agent that cannot be built."""
        rules = variant.rules_key()
        with self._lock:  # held briefly: the event loop's ``get`` takes it too
            missing = [(s, rules) for s in sorted(specs) if (s, rules) not in self._built]
            free = [k for k in self._built if not self._users.get(k)]
            if len(self._built) - len(free) + len(missing) > self.most:
                raise RoomError(
                    f"the server holds {self.most} different agents, its most; seat agents that other rooms use "
                    f"(such as {', '.join(sorted({k[0] for k in self._built}))})"
                )
        built = {}
        for key in missing:  # built without the lock: it takes up to seconds (a network to load)
            try:
                built[key] = self._build(key[0], variant)
            except ValueError as exc:
                raise RoomError(f"seat agent {key[0]!r}: {exc}") from None
        with self._lock:
            free = [k for k in self._built if not self._users.get(k) and k not in built]
            for key in free[: max(0, len(self._built) + len(built) - self.most)]:
                del self._built[key]
                self._users.pop(key, None)
            for key, agent in built.items():
                self._built.setdefault(key, agent)
            for s in specs:
                self._users.setdefault((s, rules), set()).add(room_id)

    def get(self, spec: str, variant: Variant) -> Agent:
        """The agent ``spec`` for ``variant`` (built now if no room reserved it)."""
        key = (spec, variant.rules_key())
        with self._lock:
            agent = self._built.get(key)
            if agent is not None:
                self._built.move_to_end(key)
                return agent
        agent = self._build(spec, variant)
        with self._lock:
            return self._built.setdefault(key, agent)

    def release(self, room_id: str) -> None:
        """Room ``room_id`` is gone: its agents may be dropped for others."""
        with self._lock:
            for users in self._users.values():
                users.discard(room_id)

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
    ) -> None:
        self.store = store
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
        self.lanes = {
            name: ThreadPoolExecutor(
                1, thread_name_prefix=f"bigtwo-{name}", initializer=None if name == "light" else _lower_priority
            )
            for name in ("light", "heavy", "coach", "builder")
        }
        self.agents = Agents(agent_files or {})
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

    async def run(self, lane: str, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` in the lane's thread; the event loop serves on meanwhile."""
        return await asyncio.get_running_loop().run_in_executor(self.lanes[lane], fn, *args)

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

    def coach(self, variant: Variant) -> Coach:
        """The coach for ``variant``'s rules (built in the calling thread; at most ``MAX_COACHES`` kept)."""
        key = f"{variant.name}\n{variant.rules_key()}"
        if key not in self._coaches:
            self._coaches[key] = Coach(variant, threads=MAX_AGENT_THREADS)
            while len(self._coaches) > MAX_COACHES:
                self._coaches.popitem(last=False)
        self._coaches.move_to_end(key)
        return self._coaches[key]

    # ------------------------------------------------------------ rooms

    def _source(self, room_id: str) -> Callable[[str, Variant], Agent]:
        subs = self.stand_ins.setdefault(room_id, {})
        return lambda spec, variant: self.agents.get(subs.get(spec, spec), variant)

    def load(self) -> None:
        """Every stored room, replayed to where it stood (its agents are built by ``start``)."""
        for stored in self.store.rooms():
            try:
                room = Room.restore(stored, self._source(stored.id), self.store, time.monotonic)
            except (ValueError, KeyError, TypeError) as exc:
                print(
                    f"bigtwo serve: room {stored.id} cannot be restored ({exc}); it is left in the file",
                    file=sys.stderr,
                )
                continue
            self.rooms[stored.id] = room
            self.active[stored.id] = stored.last

    def _reserve_stored(self, room: Room) -> None:
        """Build a restored room's agents; one that cannot be built any more (a checkpoint file
        gone, a budget past the web's) is said on stderr and the room's stand-in plays it."""
        for spec in sorted({s.kind for s in room.seats if not s.person} | {room.stand_in}):
            try:
                self.agents.reserve(room.id, {spec}, room.variant)
            except RoomError as exc:
                instead = "heuristic" if spec == room.stand_in else room.stand_in
                self.stand_ins[room.id][spec] = instead
                print(f"bigtwo serve: room {room.id}: {exc}; {instead} plays that seat", file=sys.stderr, flush=True)
                self.agents.reserve(room.id, {instead}, room.variant)

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

    def _prepare(self, room_id: str, body: Any) -> dict[str, Any]:
        """A new room's checked set-up with its agents built (the builder thread's part of ``create``)."""
        setup = room_setup(
            body, self.default_agent, self.pace, self.away_timeout, self.turn_timeout, files=self.agents.files
        )
        variant = Variant().replace(**setup["variant"])
        self.agents.reserve(
            room_id, {s["kind"] for s in setup["seats"] if s["kind"] != PERSON} | {setup["stand_in"]}, variant
        )
        if any(s["kind"] == PERSON for s in setup["seats"]):
            self.coach(variant)  # ready before the first person asks (it loads a network)
        return setup

    async def create(self, body: Any) -> Room:
        """A new room from the page's form (``room.room_setup``); ``RoomError`` naming a bad field."""
        if len(self.rooms) >= MAX_ROOMS:
            self.expire(time.time())
        if len(self.rooms) >= MAX_ROOMS:
            raise RoomError(f"the server holds {MAX_ROOMS} rooms, its most; idle rooms are deleted after a while")
        room_id = secrets.token_hex(4)
        while room_id in self.rooms:
            room_id = secrets.token_hex(4)
        try:
            setup = await self.run("builder", self._prepare, room_id, body)
        except BaseException:
            self.agents.release(room_id)
            raise
        self.store.add_room(room_id, setup)
        room = Room(room_id, setup, self._source(room_id), self.store, time.monotonic)
        self.rooms[room_id] = room
        self.active[room_id] = time.time()
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
                lane = "light" if spec.split(":")[0].strip().lower() in LIGHT else "heavy"
                action = await self.run(lane, _choose, turn)
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
        if room_id in self.changed:
            self.changed[room_id].set()
            self.broadcast(room_id)

    def broadcast(self, room_id: str) -> None:
        """Queue each connection of the room its own view."""
        room = self.rooms[room_id]
        now = time.monotonic()
        self.active[room_id] = time.time()
        views: dict[int | None, dict[str, Any]] = {}
        for conn in self.connections.get(room_id, ()):
            if conn.seat not in views:
                views[conn.seat] = room.view(conn.seat, now)
            conn.send(views[conn.seat])

    def expire(self, now: float) -> list[str]:
        """Delete the rooms nobody is connected to that have not changed for ``room_ttl`` seconds."""
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
            for table in (self.connections, self.changed, self.active, self.stand_ins):
                table.pop(rid, None)
            for key in [k for k in self._replays if k[0] == rid]:
                del self._replays[key]
            self.agents.release(rid)
            self.store.delete_room(rid)
        return gone

    async def _sweep(self) -> None:
        while True:
            await asyncio.sleep(min(SWEEP, max(0.2, self.room_ttl / 4)))
            gone = self.expire(time.time())
            if gone:
                print(f"bigtwo serve: deleted {len(gone)} idle room(s)", file=sys.stderr, flush=True)

    # ------------------------------------------------------------ coach and replays

    async def advise(self, room: Room, seat: int | None) -> dict[str, Any]:
        """The coach's advice for ``seat`` on its turn (in the coach thread)."""
        if seat is None:
            raise RoomError("the coach advises a seated player; spectators have no hand")
        if room.to_act != seat or room.game.is_over:
            raise RoomError("the coach advises on your turn; it is not your turn")
        position, seq = Position.of(room.game), len(room.moves)
        coach = await self.run("builder", self.coach, room.variant)
        advice = await self.run("coach", coach.advise_at, position)
        if seq != len(room.moves):
            raise RoomError("the game moved on while the coach was thinking; ask again")
        return {"type": "coach", "seq": seq, **advice}

    async def replay(self, record: Any, with_coach: bool, key: tuple[str, int, bool] | None = None) -> dict[str, Any]:
        """A finished match's record, checked by replaying it through the engine, and each move
        expanded: ``{game, seat, cards, lead}`` plus the coach's advice (``with_coach``) for the
        seat that moved, from that seat's information at that point. The record answered is the
        engine's own (only ``seats`` and ``info`` are taken from the one given). ``key``: cache
        it (a room's finished match)."""
        if key is not None and key in self._replays:
            self._replays.move_to_end(key)
            return self._replays[key]
        if self.replaying >= MAX_REPLAYS:
            raise RoomError(f"the server is replaying {MAX_REPLAYS} records already; try again in a moment")
        self.replaying += 1
        try:
            out = await self._replay(record, with_coach)
        finally:
            self.replaying -= 1
        if key is not None:
            self._replays[key] = out
            while len(self._replays) > MAX_REPLAYS:
                self._replays.popitem(last=False)
        return out

    async def _replay(self, record: Any, with_coach: bool) -> dict[str, Any]:
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

        final = await self.run("builder", expand)
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
            coach = await self.run("builder", self.coach, final.variant)
            for step, position in zip(steps, positions, strict=True):  # one move at a time: rooms' coaches between
                if self.stopping:
                    raise Stopping("the server is stopping; ask for this replay again once it is back")
                step["coach"] = await self.run("coach", coach.advise_at, position)
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
            lane.shutdown(wait=False, cancel_futures=True)
        self.store.close()


def _lower_priority() -> None:
    """The calling thread at nice ``THINKING_NICE`` (Linux: a thread's own priority), so that when
    the cores are busy the event loop and the quick agents come first."""
    with contextlib.suppress(AttributeError, OSError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), THINKING_NICE)


def _choose(turn: Any) -> int:
    return int(turn.agent.act(turn.obs, turn.ids, turn.counts)[0])
