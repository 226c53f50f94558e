"""The web table's ASGI app (Starlette): the page, a small JSON API and one websocket per seat.

| route | what |
|---|---|
| ``GET /`` | the page (``page/index.html``); ``/?room=ID&token=T`` opens a seat, ``/?room=ID`` watches, ``/?replay=ID&match=N`` replays |
| ``GET /static/...`` | the page's JavaScript and CSS |
| ``GET /api/options`` | variants, agent names and each variant's default agent (``strong`` where shipped) |
| ``POST /api/rooms`` | create a room: ``{variant or yaml, settings, seats: ["person", "strong", ...], names, pace, away_timeout}``; answers each person seat's link |
| ``GET /api/rooms`` | the rooms (public: names, variant, state) |
| ``GET /api/rooms/ID/record?match=N`` | a finished match's game record (``bigtwo_env.record``) |
| ``GET /api/rooms/ID/replay?match=N&coach=1`` | the record expanded move by move through the engine, with the coach's advice per move |
| ``POST /api/replay?coach=1`` | the same for a record sent as the body (a file the page opened) |
| ``WS /ws/ID?token=T`` | a seat (with its token) or a spectator (without) |

**Websocket messages.** The server sends ``{"type": "state", ...}`` (``Room.view``: what that
seat may see) after every change, ``{"type": "coach", ...}`` when asked, and ``{"type":
"error", "message": ...}`` for a refused request, which changes nothing. A client sends JSON
objects: ``{"type": "play", "cards": "3C 3D" | "pass", "seq": N}`` (``seq``: the plays it has
seen, optional), ``{"type": "coach"}``, ``{"type": "next_match"}``, ``{"type": "pace",
"seconds": x}``. Every state message is queued per connection and sent in order.

Agents choose their plays in one worker thread (the event loop keeps serving), one room driver
task per room waits for each agent play to come due (``Room.agent_due``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket, WebSocketDisconnect

from agents.base import Agent
from agents.registry import AGENTS, default_opponent, make_agent
from bigtwo_env.game import Game
from bigtwo_env.record import game_from_record
from bigtwo_env.variant import Variant, load_variant, variant_names, yaml_mapping

from .coach import Coach
from .room import DEFAULT_AWAY, DEFAULT_PACE, PERSON, Room, RoomError
from .store import Store

PAGE = Path(str(resources.files("bigtwo_web") / "page"))
MESSAGE_TYPES = ("play", "coach", "next_match", "pace")
MAX_MESSAGE = 4096  # bytes a client message may have
MAX_ROOMS = 1000


@dataclass(eq=False)
class Connection:
    """One open websocket: its seat (``None``: spectator) and its queue of outgoing messages."""

    ws: WebSocket
    seat: int | None
    queue: asyncio.Queue = field(default_factory=asyncio.Queue)


class Hub:
    """Every room of the server, their connections and drivers, the agents and the store."""

    def __init__(self, store: Store, pace: float = DEFAULT_PACE, away_timeout: float = DEFAULT_AWAY) -> None:
        self.store = store
        self.pace = pace
        self.away_timeout = away_timeout
        self.rooms: dict[str, Room] = {}
        self.connections: dict[str, set[Connection]] = {}
        self.changed: dict[str, asyncio.Event] = {}
        self.drivers: dict[str, asyncio.Task] = {}
        self.thinker = ThreadPoolExecutor(1, thread_name_prefix="bigtwo-agents")
        self._agents: dict[tuple[str, str], Agent] = {}
        self._coaches: dict[str, Coach] = {}
        self._options: dict[str, Any] | None = None
        self._options_lock = asyncio.Lock()

    # ------------------------------------------------------------ the lobby's choices

    def _read_options(self) -> dict[str, Any]:
        variants = []
        for name in variant_names():
            v = load_variant(name)
            default, why = default_opponent(v)  # loads the shipped weights to be sure they load
            variants.append(
                {"name": name, "players": v.players, "description": v.description, "default": default, "why": why}
            )
        return {
            "variants": variants,
            "agents": [*AGENTS, "strong"],
            "pace": self.pace,
            "away_timeout": self.away_timeout,
        }

    async def options(self) -> dict[str, Any]:
        """What ``GET /api/options`` answers, read once per server: the variants and the shipped
        weights do not change while it runs, and reading them means loading every shipped network
        (about a second here), which runs in a worker thread so that the rooms play on meanwhile."""
        async with self._options_lock:
            if self._options is None:
                self._options = await asyncio.to_thread(self._read_options)
        return self._options

    # ------------------------------------------------------------ agents

    def agent(self, spec: str, variant: Variant) -> Agent:
        """The agent ``spec`` for ``variant``, built once and shared by the rooms."""
        key = (spec, repr(variant))
        if key not in self._agents:
            self._agents[key] = make_agent(spec, variant, seed=0)
        return self._agents[key]

    def coach(self, variant: Variant) -> Coach:
        key = repr(variant)
        if key not in self._coaches:
            self._coaches[key] = Coach(variant)
        return self._coaches[key]

    # ------------------------------------------------------------ rooms

    def load(self) -> None:
        """Every stored room, replayed to where it stood."""
        for stored in self.store.rooms():
            self.rooms[stored.id] = Room.restore(stored, self.agent, self.store, time.monotonic)

    def start(self) -> None:
        for room_id in self.rooms:
            self._drive(room_id)

    def create(self, body: dict[str, Any]) -> Room:
        """A new room from the page's form (see the module docstring); ``RoomError`` naming a bad field."""
        if len(self.rooms) >= MAX_ROOMS:
            raise RoomError(f"the server holds {MAX_ROOMS} rooms, its most")
        known = {"variant", "yaml", "settings", "seats", "names", "pace", "away_timeout", "seed"}
        unknown = sorted(set(body) - known)
        if unknown:
            raise RoomError(f"unknown field {unknown[0]!r}; fields are: {', '.join(sorted(known))}")
        settings = body.get("settings") or {}
        if not isinstance(settings, dict):
            raise RoomError(f"settings must be an object of variant fields, got {settings!r}")
        if body.get("yaml"):
            if not isinstance(body["yaml"], str):
                raise RoomError("yaml must be the text of a variant file")
            data = yaml_mapping(body["yaml"], "the variant file")
            data.setdefault("name", "custom")
            variant = Variant().replace(**data, **settings)
        else:
            name = body.get("variant", "taiwan")
            if name not in variant_names():
                raise RoomError(f"unknown variant {name!r}; allowed: {', '.join(variant_names())} (or send yaml)")
            variant = load_variant(name, **settings)
        seats = body.get("seats")
        if seats is None:
            seats = [PERSON] + [default_opponent(variant)[0]] * (variant.players - 1)
        if not isinstance(seats, list):
            raise RoomError("seats must be a list: 'person' or an agent name per seat")
        for spec in seats:
            if spec != PERSON:
                try:
                    self.agent(str(spec), variant)
                except ValueError as exc:
                    raise RoomError(f"seat agent {spec!r}: {exc}") from None
        seed = body.get("seed")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63):
            raise RoomError(f"seed must be an integer 0..2**63-1, got {seed!r}")
        setup = Room.setup_for(
            variant,
            seats,
            names=body.get("names"),
            pace=body.get("pace", self.pace),
            away_timeout=body.get("away_timeout", self.away_timeout),
            stand_in=default_opponent(variant)[0],
            seed=seed,
        )
        room_id = secrets.token_hex(4)
        while room_id in self.rooms:
            room_id = secrets.token_hex(4)
        self.store.add_room(room_id, setup)
        room = Room(room_id, setup, self.agent, self.store, time.monotonic)
        self.rooms[room_id] = room
        self._drive(room_id)
        return room

    def _drive(self, room_id: str) -> None:
        self.connections.setdefault(room_id, set())
        self.changed[room_id] = asyncio.Event()
        self.drivers[room_id] = asyncio.get_running_loop().create_task(self._driver(room_id))

    async def _driver(self, room_id: str) -> None:
        """Play the room's agent turns as they come due; woken by every change to the room."""
        room, event = self.rooms[room_id], self.changed[room_id]
        loop = asyncio.get_running_loop()
        while True:
            event.clear()
            now = time.monotonic()
            due = room.agent_due(now)
            if due is None or due > now:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(event.wait(), None if due is None else due - now)
                continue
            turn = room.agent_turn(now)
            if turn is None:
                continue
            try:
                action = await loop.run_in_executor(self.thinker, _choose, turn)
                moved = room.finish_agent_turn(turn, action)
            except ValueError as exc:  # an agent that fails: say so in the room, try again later
                print(f"room {room_id}: {exc}", file=sys.stderr)
                await asyncio.sleep(1.0)
                continue
            if moved is not None:
                self.broadcast(room_id)

    def changed_room(self, room_id: str) -> None:
        self.changed[room_id].set()
        self.broadcast(room_id)

    def broadcast(self, room_id: str) -> None:
        """Queue each connection of the room its own view."""
        room = self.rooms[room_id]
        now = time.monotonic()
        views: dict[int | None, dict[str, Any]] = {}
        for conn in self.connections.get(room_id, ()):
            if conn.seat not in views:
                views[conn.seat] = room.view(conn.seat, now)
            conn.queue.put_nowait(views[conn.seat])

    async def stop(self) -> None:
        for task in self.drivers.values():
            task.cancel()
        for task in self.drivers.values():
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self.thinker.shutdown(wait=True)
        self.store.close()


def _choose(turn: Any) -> int:
    return int(turn.agent.act(turn.obs, turn.ids, turn.counts)[0])


# ---------------------------------------------------------------- replays


def replay(record: dict[str, Any], coach: Coach | None = None) -> dict[str, Any]:
    """A finished match's record, checked by replaying it through the engine, and each move
    expanded: ``{game, seat, cards, lead}`` plus the coach's advice (``coach``) for the seat
    that moved, from that seat's information at that point."""
    final = game_from_record(record)
    if not final.is_over:
        raise RoomError("this record's match is not over; a replay shows every hand, so only finished matches replay")
    game = Game(
        final.variant, seed=record["seed"], hands=record["games"][0]["deal"] if final.first_deal_given else None
    )
    steps = []
    for number, g in enumerate(record["games"], 1):
        for seat, cards in g["plays"]:
            step: dict[str, Any] = {"game": number, "seat": seat, "cards": cards, "lead": not game.table}
            if coach is not None:
                step["coach"] = coach.advise(game)
            game.play(cards)
            steps.append(step)
    return {"record": record, "steps": steps}


# ---------------------------------------------------------------- the app


def create_app(db: str | Path = "bigtwo-web.sqlite", pace: float = DEFAULT_PACE, away_timeout: float = DEFAULT_AWAY):
    """The ASGI app, its rooms kept in the SQLite file ``db``; ``pace`` and ``away_timeout`` are
    new rooms' defaults (seconds)."""
    hub = Hub(Store(db), pace, away_timeout)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette):
        hub.load()
        hub.start()
        yield
        await hub.stop()

    async def page(request: Request) -> Response:
        return FileResponse(PAGE / "index.html")

    def error(message: str, status: int = 400) -> JSONResponse:
        return JSONResponse({"error": message}, status_code=status)

    async def options(request: Request) -> Response:
        return JSONResponse(await hub.options())

    async def read_json(request: Request) -> Any:
        raw = await request.body()
        try:
            return json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise RoomError(f"the request body must be JSON: {exc}") from None

    async def rooms(request: Request) -> Response:
        if request.method == "GET":
            return JSONResponse({"rooms": [r.summary() for r in hub.rooms.values()]})
        try:
            body = await read_json(request)
            if not isinstance(body, dict):
                raise RoomError("the request body must be a JSON object")
            room = hub.create(body)
        except ValueError as exc:
            return error(str(exc))
        base = str(request.base_url).rstrip("/")
        links = [
            {"seat": s.index, "name": s.name, "url": f"{base}/?room={room.id}&token={s.token}"}
            for s in room.seats
            if s.person
        ]
        return JSONResponse({"room": room.id, "links": links, "watch": f"{base}/?room={room.id}"})

    def room_of(request: Request) -> Room:
        room = hub.rooms.get(request.path_params["room"])
        if room is None:
            raise RoomError(f"no room {request.path_params['room']!r} on this server")
        return room

    def match_of(request: Request, room: Room) -> int:
        text = request.query_params.get("match", str(room.match))
        if not text.isdigit():
            raise RoomError(f"match must be a match number 1..{room.match}, got {text!r}")
        return int(text)

    async def record(request: Request) -> Response:
        try:
            room = room_of(request)
            return JSONResponse(room.record(match_of(request, room)))
        except ValueError as exc:
            return error(str(exc), 404 if "no room" in str(exc) else 409)

    async def room_replay(request: Request) -> Response:
        try:
            room = room_of(request)
            rec = room.record(match_of(request, room))
            coach = hub.coach(room.variant) if request.query_params.get("coach") == "1" else None
            return JSONResponse(await asyncio.get_running_loop().run_in_executor(hub.thinker, replay, rec, coach))
        except ValueError as exc:
            return error(str(exc), 404 if "no room" in str(exc) else 409)

    async def body_replay(request: Request) -> Response:
        try:
            rec = await read_json(request)
            if not isinstance(rec, dict) or not isinstance(rec.get("variant"), dict):
                raise RoomError("send a game record: a JSON object with format, variant, seed, games, ...")
            variant = Variant().replace(**rec["variant"])
            coach = hub.coach(variant) if request.query_params.get("coach") == "1" else None
            return JSONResponse(await asyncio.get_running_loop().run_in_executor(hub.thinker, replay, rec, coach))
        except (TypeError, ValueError) as exc:
            return error(str(exc))

    async def seat_socket(ws: WebSocket) -> None:
        room_id = ws.path_params["room"]
        await ws.accept()
        room = hub.rooms.get(room_id)
        token = ws.query_params.get("token")
        try:
            if room is None:
                raise RoomError(f"no room {room_id!r} on this server")
            seat = None if not token else room.seat_for_token(token)
        except RoomError as exc:
            await ws.send_json({"type": "error", "message": str(exc), "fatal": True})
            await ws.close(4403)
            return
        conn = Connection(ws, seat)
        room.connect(seat)
        hub.connections[room_id].add(conn)
        writer = asyncio.get_running_loop().create_task(_write(conn))
        hub.changed_room(room_id)
        try:
            while True:
                text = await ws.receive_text()
                reply = await handle(room, conn, text)
                if reply is not None:
                    conn.queue.put_nowait(reply)
        except WebSocketDisconnect:
            pass
        finally:
            hub.connections[room_id].discard(conn)
            room.disconnect(seat)
            writer.cancel()
            if room_id in hub.changed:
                hub.changed_room(room_id)

    async def handle(room: Room, conn: Connection, text: str) -> dict[str, Any] | None:
        """One client message; an error reply, a coach reply, or ``None`` (the change is broadcast)."""
        try:
            if len(text) > MAX_MESSAGE:
                raise RoomError(f"a message may have at most {MAX_MESSAGE} bytes")
            try:
                msg = json.loads(text)
            except json.JSONDecodeError:
                raise RoomError(f"messages are JSON objects with a 'type': {', '.join(MESSAGE_TYPES)}") from None
            if not isinstance(msg, dict) or msg.get("type") not in MESSAGE_TYPES:
                got = msg.get("type") if isinstance(msg, dict) else msg
                raise RoomError(f"unknown message type {got!r}; allowed: {', '.join(MESSAGE_TYPES)}")
            kind = msg["type"]
            if kind == "play":
                if "cards" not in msg:
                    raise RoomError("a play message needs 'cards': card text such as '3C 3D', or 'pass'")
                room.play(conn.seat, msg["cards"], msg.get("seq"))
            elif kind == "next_match":
                room.next_match(conn.seat)
            elif kind == "pace":
                room.set_pace(conn.seat, msg.get("seconds"))
            else:
                return await coach_reply(room, conn)
        except ValueError as exc:
            return {"type": "error", "message": str(exc)}
        hub.changed_room(room.id)
        return None

    async def coach_reply(room: Room, conn: Connection) -> dict[str, Any]:
        if conn.seat is None:
            raise RoomError("the coach advises a seated player; spectators have no hand")
        if room.to_act != conn.seat or room.game.is_over:
            raise RoomError("the coach advises on your turn; it is not your turn")
        coach = hub.coach(room.variant)
        game = room.game
        ids, counts = game.engine.legal_actions()
        obs = game.engine.observe()[:1].copy()
        seq = len(room.moves)
        ranked = await asyncio.get_running_loop().run_in_executor(
            hub.thinker, coach.rank, obs, ids[:1].copy(), counts[:1].copy()
        )
        if seq != len(room.moves):
            raise RoomError("the game moved on while the coach was thinking; ask again")
        return {"type": "coach", "seq": seq, **coach.describe(game, ranked)}

    async def _write(conn: Connection) -> None:
        with contextlib.suppress(Exception):
            while True:
                await conn.ws.send_json(await conn.queue.get())

    routes = [
        Route("/", page),
        Route("/api/options", options),
        Route("/api/rooms", rooms, methods=["GET", "POST"]),
        Route("/api/rooms/{room}/record", record),
        Route("/api/rooms/{room}/replay", room_replay),
        Route("/api/replay", body_replay, methods=["POST"]),
        WebSocketRoute("/ws/{room}", seat_socket),
        Mount("/static", StaticFiles(directory=PAGE), name="static"),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.hub = hub
    return app
