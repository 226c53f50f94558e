"""The web table's ASGI app (Starlette): the page, a small JSON API and one websocket per seat.
The rooms, agents and threads behind it are ``bigtwo.web.hub``'s; the form checks ``bigtwo.web.room``'s.

| route | what |
|---|---|
| ``GET /`` | the page (``page/index.html``); ``/?room=ID&token=T`` opens a seat, ``/?room=ID`` watches, ``/?replay=ID&match=N`` replays |
| ``GET /static/...`` | the page's JavaScript and CSS |
| ``GET /api/options`` | variants, agent names and each variant's default agent (``strong`` where shipped) |
| ``POST /api/rooms`` | create a room: ``{variant or yaml, settings, seats: ["person", "strong", ...], names, pace, away_timeout, turn_timeout, seed}``; answers each person seat's link |
| ``GET /api/rooms`` | the rooms (public: names, variant, state) |
| ``GET /api/rooms/ID/record?match=N`` | a finished match's game record (``bigtwo.env.records.record``) |
| ``GET /api/rooms/ID/records.jsonl`` | the records of every finished match the room keeps (its last ``MAX_KEPT``), one JSON line each |
| ``GET /api/rooms/ID/replay?match=N&coach=1`` | the record expanded move by move through the engine, with the coach's advice per move |
| ``POST /api/replay?coach=1`` | the same for a record sent as the body (a file the page opened) |
| ``WS /ws/ID?token=T`` | a seat (with its token) or a spectator (without) |

**Websocket messages.** The server sends ``{"type": "state", ...}`` (``Room.view``: what that
seat may see) after every change, ``{"type": "coach", ...}`` when asked, ``{"type": "notice",
"message": ...}`` when another connection opens your seat, and ``{"type": "error", "message":
...}`` for a refused request, which changes nothing. A client sends JSON text: ``{"type": "play",
"cards": "3C 3D" | "pass", "seq": N}`` (``seq``: the plays it has seen, optional), ``{"type":
"coach"}``, ``{"type": "next_match"}``, ``{"type": "pace", "seconds": x}``, each at most
``MAX_MESSAGE`` bytes. Every message is queued per connection and sent in order.

**At the door.** Every request's ``Host`` must name this server: an IP address, ``localhost``,
this machine's name or one given with ``--allow-host`` (a page elsewhere cannot reach the server
through a name it controls). A state-changing request (``POST``) must be JSON
(``Content-Type: application/json``), which a page of another site cannot send without asking
first, and a request or websocket that carries an ``Origin`` must come from this server's own
page. Bodies are at most ``MAX_BODY`` bytes (``MAX_RECORD`` for a record), JSON at most
``MAX_DEPTH`` deep, and text must be valid Unicode (no lone surrogates): anything else is
refused with a 4xx saying why, before anything is built. Every page is sent with a
Content-Security-Policy (its own scripts only, no framing) and no referrer.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import re
import socket
from collections.abc import AsyncIterator, Iterable, Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import HTTPConnection, Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from starlette.websockets import WebSocket

from bigtwo.env.records.record import record_line
from bigtwo.web.hub import Connection, Hub, Stopping
from bigtwo.web.room import DEFAULT_AWAY, DEFAULT_PACE, DEFAULT_TURN, Room, RoomError
from bigtwo.web.store import Store

PAGE = Path(str(resources.files("bigtwo.web") / "page"))
MESSAGE_TYPES = ("play", "coach", "next_match", "pace")
MAX_MESSAGE = 4096  # bytes a client's websocket message may have
MAX_BODY = 64 * 1024  # bytes of a request body
MAX_RECORD = 1024 * 1024  # bytes of a game record sent to replay
MAX_DEPTH = 16  # nesting of a JSON body or message
HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
_MATCH = re.compile(r"^[0-9]{1,9}$")


class Refused(Exception):
    """A request refused at the door: its HTTP status and why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


# ---------------------------------------------------------------- at the door


def host_names(extra: Iterable[str] = ()) -> set[str]:
    """The host names a request may name besides IP addresses: localhost, this machine's, ``extra``."""
    names = {"localhost", socket.gethostname().lower(), socket.getfqdn().lower()}
    return names | {h.strip().lower() for h in extra if h.strip()}


def _host_of(authority: str) -> str:
    """``authority`` (``name:port``, ``[::1]:port``) without its port, lower case."""
    authority = authority.strip().lower()
    if authority.startswith("["):
        return authority[1 : authority.find("]")] if "]" in authority else authority
    return authority.rsplit(":", 1)[0] if authority.count(":") == 1 else authority


def refuse_connection(conn: HTTPConnection, names: set[str]) -> str | None:
    """Why a request or websocket is refused at the door (its Host, its Origin), ``None`` if it is not."""
    host = conn.headers.get("host", "")
    name = _host_of(host)
    try:
        ipaddress.ip_address(name)
    except ValueError:
        if name not in names:
            return f"Host {host!r} is not this server's name; open the server by its address or localhost"
    origin = conn.headers.get("origin")
    if origin is not None and (
        origin == "null" or re.sub(r"^[a-z]+://", "", origin.lower()).rstrip("/") != host.lower()
    ):
        return f"requests from another site's page ({origin}) are refused; use this server's own page"
    if conn.headers.get("sec-fetch-site") == "cross-site":
        return "requests from another site's page are refused; use this server's own page"
    return None


def check_wire(value: Any, depth: int = 0) -> None:
    """``RoomError`` for JSON nested deeper than ``MAX_DEPTH`` or text UTF-8 cannot write (a lone surrogate)."""
    if depth > MAX_DEPTH:
        raise RoomError(f"JSON may be nested at most {MAX_DEPTH} deep")
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise RoomError(f"text must be valid Unicode (no lone surrogates): {value!r}") from None
    elif isinstance(value, dict):
        for k, v in value.items():
            check_wire(k, depth + 1)
            check_wire(v, depth + 1)
    elif isinstance(value, list):
        for v in value:
            check_wire(v, depth + 1)


def parse_json(text: str | bytes, what: str) -> Any:
    """``text`` as JSON checked by ``check_wire``; ``RoomError`` saying what is wrong."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise RoomError(f"{what} may be nested at most {MAX_DEPTH} deep") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise RoomError(f"{what} must be JSON: {exc}") from None
    check_wire(value)
    return value


async def read_json(request: Request, most: int = MAX_BODY) -> Any:
    """The request's JSON body: ``Content-Type: application/json``, at most ``most`` bytes."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        raise Refused(415, f"send the body as JSON (Content-Type: application/json), not {kind or 'no type'!r}")
    length = request.headers.get("content-length")
    if length is not None and (not length.isdigit() or int(length) > most):
        raise Refused(413, f"the request body may have at most {most} bytes")
    raw = bytearray()
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > most:
            raise Refused(413, f"the request body may have at most {most} bytes")
    return parse_json(bytes(raw), "the request body")


class Guard:
    """ASGI middleware: the door checks of the module docstring on every request and websocket,
    and the security headers on every response."""

    def __init__(self, app: ASGIApp, names: set[str]) -> None:
        self.app = app
        self.names = names

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        why = refuse_connection(HTTPConnection(scope), self.names)
        if why is not None:
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})  # before the handshake: HTTP 403
                return None
            return await _with_headers(JSONResponse({"error": why}, status_code=403), scope, receive, send)
        if scope["type"] == "websocket":
            return await self.app(scope, receive, send)

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                message["headers"] = [
                    *message["headers"],
                    *((k.lower().encode(), v.encode()) for k, v in HEADERS.items()),
                ]
            await send(message)

        return await self.app(scope, receive, send_with_headers)


async def _with_headers(response: Response, scope: Scope, receive: Receive, send: Send) -> None:
    response.headers.update(HEADERS)
    await response(scope, receive, send)


# ---------------------------------------------------------------- the app


def create_app(
    db: str | Path = "bigtwo-web.sqlite",
    pace: float = DEFAULT_PACE,
    away_timeout: float = DEFAULT_AWAY,
    turn_timeout: float = DEFAULT_TURN,
    room_ttl: float | None = None,
    agent_files: Mapping[str, Path] | None = None,
    allow_hosts: Iterable[str] = (),
) -> Starlette:
    """The ASGI app, its rooms kept in the SQLite file ``db``; ``pace``, ``away_timeout`` and
    ``turn_timeout`` are new rooms' defaults (seconds), ``room_ttl`` how long an idle room is
    kept, ``agent_files`` the checkpoint files seats may name, ``allow_hosts`` more host names."""
    kw: dict[str, Any] = {} if room_ttl is None else {"room_ttl": room_ttl}
    hub = Hub(Store(db), pace, away_timeout, turn_timeout, agent_files=agent_files, **kw)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        hub.load()
        hub.start()
        yield
        await hub.stop()

    def error(message: str, status: int = 400) -> JSONResponse:
        return JSONResponse({"error": message}, status_code=status)

    def answer(exc: Exception, status: int = 400) -> JSONResponse:
        if isinstance(exc, Refused):
            return error(str(exc), exc.status)
        if isinstance(exc, Stopping):
            return error(str(exc), 503)
        return error(str(exc), 404 if str(exc).startswith("no room") else status)

    async def page(request: Request) -> Response:
        return FileResponse(PAGE / "index.html")

    async def options(request: Request) -> Response:
        return JSONResponse(await hub.options())

    async def rooms(request: Request) -> Response:
        if request.method == "GET":
            return JSONResponse({"rooms": [r.summary() for r in hub.rooms.values()]})
        try:
            room = await hub.create(await read_json(request))
        except (Refused, RoomError) as exc:
            return answer(exc)
        base = str(request.base_url).rstrip("/")
        links = [
            {"seat": s.index, "name": s.name, "url": f"{base}/?room={room.id}&token={s.secret}"}
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
        if not _MATCH.match(text):
            raise Refused(400, f"match must be a match number 1..{room.match}, got {text!r}")
        return int(text)

    async def record(request: Request) -> Response:
        try:
            room = room_of(request)
            return JSONResponse(room.record(match_of(request, room)))
        except (Refused, RoomError) as exc:
            return answer(exc, 409)

    async def records(request: Request) -> Response:
        try:
            room = room_of(request)
        except RoomError as exc:
            return answer(exc)
        body = "".join(record_line(r) + "\n" for r in room.finished_records())
        name = re.sub(r"[^A-Za-z0-9_-]", "_", room.id)
        disposition = {"Content-Disposition": f'attachment; filename="bigtwo-{name}.jsonl"'}
        return Response(body, media_type="application/x-ndjson", headers=disposition)

    async def room_replay(request: Request) -> Response:
        try:
            room = room_of(request)
            match = match_of(request, room)
            coach = request.query_params.get("coach") == "1"
            return JSONResponse(await hub.replay(room.record(match), coach, key=(room.id, match, coach)))
        except (Refused, RoomError) as exc:
            return answer(exc, 409)

    async def body_replay(request: Request) -> Response:
        try:
            rec = await read_json(request, MAX_RECORD)
            return JSONResponse(await hub.replay(rec, request.query_params.get("coach") == "1"))
        except (Refused, ValueError, TypeError) as exc:
            return answer(exc)

    # ------------------------------------------------------------ websockets

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
        if seat is not None and room.seats[seat].connections:
            notice = {
                "type": "notice",
                "message": f"your seat was just opened in another place too ({room.seats[seat].connections + 1} "
                "connections): if that was not you, someone else has your seat's link",
            }
            for other in hub.connections.get(room_id, ()):
                if other.seat == seat:
                    other.send(notice)
        room.connect(seat)
        hub.connections[room_id].add(conn)
        loop = asyncio.get_running_loop()
        tasks = [
            loop.create_task(conn.write()),
            loop.create_task(read(room, conn)),
            loop.create_task(conn.dropped.wait()),
        ]
        hub.changed_room(room_id)
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks:
                task.cancel()
            hub.connections.get(room_id, set()).discard(conn)
            room.disconnect(seat)
            hub.changed_room(room_id)

    async def read(room: Room, conn: Connection) -> None:
        """The client's messages until it closes; each answered by ``handle``."""
        while True:
            message = await conn.ws.receive()
            if message["type"] == "websocket.disconnect":
                return
            text = message.get("text")
            if text is None:
                reply: dict[str, Any] | None = {"type": "error", "message": "messages are JSON text, not binary frames"}
            else:
                reply = await handle(room, conn, text)
            if reply is not None:
                conn.send(reply)

    async def handle(room: Room, conn: Connection, text: str) -> dict[str, Any] | None:
        """One client message; an error reply, a coach reply, or ``None`` (the change is broadcast)."""
        try:
            if len(text) > MAX_MESSAGE:
                raise RoomError(f"a message may have at most {MAX_MESSAGE} bytes")
            try:
                msg = parse_json(text, "a message")
            except RoomError as exc:
                raise RoomError(f"{exc}; messages are JSON objects with a 'type': {', '.join(MESSAGE_TYPES)}") from None
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
                return await hub.advise(room, conn.seat)
        except ValueError as exc:
            return {"type": "error", "message": str(exc)}
        hub.changed_room(room.id)
        return None

    routes = [
        Route("/", page),
        Route("/api/options", options),
        Route("/api/rooms", rooms, methods=["GET", "POST"]),
        Route("/api/rooms/{room}/record", record),
        Route("/api/rooms/{room}/records.jsonl", records),
        Route("/api/rooms/{room}/replay", room_replay),
        Route("/api/replay", body_replay, methods=["POST"]),
        WebSocketRoute("/ws/{room}", seat_socket),
        Mount("/static", StaticFiles(directory=PAGE), name="static"),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.add_middleware(Guard, names=host_names(allow_hosts))
    app.state.hub = hub
    return app
