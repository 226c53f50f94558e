"""The web table's ASGI app (Starlette): the page, a small JSON API and one websocket per seat.
The rooms, agents and threads behind it are ``bigtwo.web.hub``'s; the form checks ``bigtwo.web.forms``'s.

| route | what |
|---|---|
| ``GET /`` | the page (``page/index.html``); ``/?room=ID&token=T`` opens a seat, ``/?room=ID`` watches, ``/?replay=ID&match=N`` replays |
| ``GET /static/...`` | the page's JavaScript and CSS |
| ``GET /api/options`` | variants, agent names and each variant's default agent (``strong`` where shipped) |
| ``POST /api/rooms`` | create a room: ``{variant or yaml, settings, seats: ["person", "strong", ...], names, pace, away_timeout, turn_timeout, seed}``; answers each person seat's link |
| ``GET /api/rooms`` | the rooms (public: names, variant, state; ``HEAD`` answers its headers and creates nothing) |
| ``GET /api/rooms/ID/record?match=N`` | a finished match's game record (``bigtwo.env.records.record``) |
| ``GET /api/rooms/ID/records.jsonl`` | the records of every finished match the room keeps (its last ``matches_per_room``), one JSON line each |
| ``GET /api/rooms/ID/replay?match=N&coach=1`` | the record expanded move by move through the engine, with the coach's advice per move |
| ``POST /api/replay?coach=1`` | the same for a record sent as the body (a file the page opened); a replay stops when its client hangs up |
| ``WS /ws/ID?token=T`` | a seat (with its token) or a spectator (without) |

**Websocket messages.** The server sends ``{"type": "state", ...}`` (``Room.view``: what that
seat may see) after every change, ``{"type": "coach", ...}`` when asked, ``{"type": "notice",
"message": ...}`` when another connection opens your seat, and ``{"type": "error", "message":
...}`` for a refused request, which changes nothing. A client sends JSON text: ``{"type": "play",
"cards": "3C 3D" | "pass", "seq": N, "match": M}`` (``seq``: the plays of the match it has seen,
``match``: the match, both required: a play made at another point of the match, such as a second
connection's play of the same turn, or in another match, is refused),
``{"type": "coach"}``, ``{"type": "next_match"}``, ``{"type": "pace", "seconds": x}``, each at
most ``MAX_MESSAGE`` bytes. Every message is queued per connection and sent in order.

**At the door.** Every request's ``Host`` must be exactly a host and an optional port (nothing
like ``localhost:80@evil.example``) naming this server: an IP address, ``localhost``, this
machine's name or one given with ``--allow-host`` (a page elsewhere cannot reach the server
through a name it controls; the seat links are made from it). A state-changing request (``POST``) must be JSON
(``Content-Type: application/json``), which a page of another site cannot send without asking
first, and a request or websocket that carries an ``Origin`` must come from this server's own
page. Bodies are at most ``MAX_BODY`` bytes (``MAX_RECORD`` for a record), JSON at most
``MAX_DEPTH`` deep, and text must be valid Unicode (no lone surrogates), checked on what it
decodes to as well (YAML's escapes in a variant file, an agent's options): anything else is
refused with a 4xx saying why, before anything is built. A body must arrive within
``Limits.body_timeout`` seconds (408). Over a per-client limit (``bigtwo.web.limits``) the answer
is 429 with ``Retry-After`` (a websocket's too, before its handshake); a full or stopping server
answers 503. Every page is sent with a Content-Security-Policy (its own scripts only, no
framing) and no referrer.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import re
import socket
import sqlite3
import sys
from collections.abc import AsyncIterator, Awaitable, Iterable, Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, HTTPConnection, Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from starlette.websockets import WebSocket

from bigtwo.web.export import Bodies
from bigtwo.web.forms import DEFAULT_AWAY, DEFAULT_PACE, DEFAULT_TURN, RoomError, check_unicode
from bigtwo.web.hub import Connection, Hub
from bigtwo.web.limits import Busy, Limits, TooMany, client_id, network_of
from bigtwo.web.room import Room
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
# a Host header: a name or IPv4 address, or an IPv6 address in brackets, then an optional port; nothing else
_AUTHORITY = re.compile(
    r"^(?:\[(?P<v6>[0-9a-f:.]+)\]|(?P<name>[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?))(?::(?P<port>[0-9]{1,5}))?$"
)


def writable(text: str) -> str:
    """``text`` with any character UTF-8 cannot write shown as its escape, so an error message that
    quotes a request never fails to be sent."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


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


def host_of(authority: str) -> str | None:
    """The host of a ``Host`` header (``name:port``, ``1.2.3.4``, ``[::1]:port``) in lower case,
    ``None`` unless the header is exactly that (no user part, path, space or second port).

    >>> host_of("LocalHost:8000"), host_of("[::1]:80"), host_of("localhost:80@evil.example")
    ('localhost', '::1', None)
    """
    match = _AUTHORITY.match(authority.lower())
    if match is None or int(match["port"] or 0) > 65535:
        return None
    return match["v6"] or match["name"]


def refuse_connection(conn: HTTPConnection, names: set[str]) -> str | None:
    """Why a request or websocket is refused at the door (its Host, its Origin), ``None`` if it is not."""
    host = conn.headers.get("host", "")
    name = host_of(host)
    if name is None:
        return f"Host {host!r} is not a host name or address with an optional port; open the server by its address"
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
    if isinstance(value, dict):
        for v in value.values():
            check_wire(v, depth + 1)
    elif isinstance(value, list):
        for v in value:
            check_wire(v, depth + 1)
    if depth == 0:
        check_unicode(value, "the JSON")


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


async def read_json(request: Request, most: int = MAX_BODY, seconds: float = 30.0) -> Any:
    """The request's JSON body: ``Content-Type: application/json``, at most ``most`` bytes, all
    of it within ``seconds`` (408 after that)."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        raise Refused(415, f"send the body as JSON (Content-Type: application/json), not {kind or 'no type'!r}")
    length = request.headers.get("content-length")
    if length is not None and (not length.isdigit() or int(length) > most):
        raise Refused(413, f"the request body may have at most {most} bytes")
    raw = bytearray()

    async def read() -> None:
        async for chunk in request.stream():
            raw.extend(chunk)
            if len(raw) > most:
                raise Refused(413, f"the request body may have at most {most} bytes")

    try:
        await asyncio.wait_for(read(), seconds)  # asyncio.timeout is Python 3.11+; 3.10 is supported
    except (TimeoutError, asyncio.TimeoutError):
        raise Refused(408, f"the request body must arrive within {seconds:g} seconds") from None
    except ClientDisconnect:  # the body was cut short: nobody reads the answer, but it is one, not a traceback
        raise Refused(400, "the client hung up before the request body arrived") from None
    return parse_json(bytes(raw), "the request body")


def client_of(conn: HTTPConnection, limits: Limits) -> str:
    """The client of a request or websocket (``limits.client_id`` of its address's network)."""
    return client_id(network_of(conn.client.host, limits) if conn.client else "unknown")


class Gone(Exception):
    """The client hung up before its answer was ready."""


async def until_gone(request: Request, work: Awaitable[Any]) -> Any:
    """``work``'s result, or ``Gone`` with ``work`` cancelled (its thread slots freed at once) as
    soon as the client disconnects: nobody is left to read the answer."""
    task = asyncio.ensure_future(work)

    async def hung_up() -> None:
        while (await request.receive())["type"] != "http.disconnect":
            pass

    watcher = asyncio.ensure_future(hung_up())
    try:
        await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        watcher.cancel()
        if not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
    if task.cancelled():
        raise Gone()
    return task.result()


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


def refusal(exc: TooMany | Busy) -> JSONResponse:
    """A request refused over a limit (``TooMany``: 429) or because the server is full or
    stopping (``Busy``: 503), with ``Retry-After`` in the header and the body."""
    status = 429 if isinstance(exc, TooMany) else 503
    return JSONResponse(
        {"error": writable(str(exc)), "retry_after": exc.retry_after},
        status_code=status,
        headers={"Retry-After": str(exc.retry_after)},
    )


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
    limits: Limits | None = None,
) -> Starlette:
    """The ASGI app, its rooms kept in the SQLite file ``db``; ``pace``, ``away_timeout`` and
    ``turn_timeout`` are new rooms' defaults (seconds), ``room_ttl`` how long an idle room is
    kept, ``agent_files`` the checkpoint files seats may name, ``allow_hosts`` more host names,
    ``limits`` the per-client limits and timeouts (``bigtwo.web.limits``)."""
    kw: dict[str, Any] = {} if room_ttl is None else {"room_ttl": room_ttl}
    limits = limits or Limits()
    hub = Hub(Store(db), pace, away_timeout, turn_timeout, agent_files=agent_files, limits=limits, **kw)
    bodies = Bodies()  # the record downloads, built off the event loop and cached

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        hub.load()
        hub.start()
        yield
        await hub.stop()

    def error(message: str, status: int = 400) -> JSONResponse:
        return JSONResponse({"error": writable(message)}, status_code=status)

    def answer(exc: Exception, status: int = 400) -> JSONResponse:
        if isinstance(exc, Refused):
            return error(str(exc), exc.status)
        if isinstance(exc, (TooMany, Busy)):
            return refusal(exc)
        return error(str(exc), 404 if str(exc).startswith("no room") else status)

    async def page(request: Request) -> Response:
        return FileResponse(PAGE / "index.html")

    async def options(request: Request) -> Response:
        return JSONResponse(await hub.options())

    async def rooms(request: Request) -> Response:
        return lobby()  # HEAD too (Starlette answers it without the body): it never creates a room

    async def create(request: Request) -> Response:
        try:
            room = await hub.create(await read_json(request, seconds=limits.body_timeout), client_of(request, limits))
        except (Refused, RoomError) as exc:
            return answer(exc)
        base = str(request.base_url).rstrip("/")
        links = [
            {"seat": s.index, "name": s.name, "url": f"{base}/?room={room.id}&token={s.secret}"}
            for s in room.seats
            if s.person
        ]
        return JSONResponse({"room": room.id, "links": links, "watch": f"{base}/?room={room.id}"})

    def lobby() -> Response:
        """The room list; a room that cannot be shown is left out and said on stderr, never a 500."""
        lines = []
        for room_id, hosted in list(hub.rooms.items()):
            try:
                line = hosted.room.summary()
                json.dumps(line, ensure_ascii=False).encode("utf-8")
            except Exception as exc:  # noqa: BLE001 - one broken room must not take the lobby down
                print(f"bigtwo serve: room {room_id} left out of the lobby: {type(exc).__name__}", file=sys.stderr)
                continue
            lines.append(line)
        return JSONResponse({"rooms": lines})

    def room_of(request: Request) -> Room:
        room = hub.room(request.path_params["room"])
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
            body = await bodies.record(room, match_of(request, room), client_of(request, limits))
            return Response(body, media_type="application/json")
        except (Refused, RoomError) as exc:
            return answer(exc, 409)

    async def records(request: Request) -> Response:
        try:
            room = room_of(request)
            body = await bodies.records(room, client_of(request, limits))
        except RoomError as exc:
            return answer(exc)
        name = re.sub(r"[^A-Za-z0-9_-]", "_", room.id)
        disposition = {"Content-Disposition": f'attachment; filename="bigtwo-{name}.jsonl"'}
        return Response(body, media_type="application/x-ndjson", headers=disposition)

    async def room_replay(request: Request) -> Response:
        try:
            room = room_of(request)
            match = match_of(request, room)
            coach = request.query_params.get("coach") == "1"
            work = hub.replays.replay(
                room.record(match), coach, key=(room.id, match, coach), client=client_of(request, limits)
            )
            return Response(await until_gone(request, work), media_type="application/json")
        except (Refused, RoomError) as exc:
            return answer(exc, 409)
        except Gone:
            return error("the client hung up", 400)

    async def body_replay(request: Request) -> Response:
        try:
            rec = await read_json(request, MAX_RECORD, limits.body_timeout)
            work = hub.replays.replay(rec, request.query_params.get("coach") == "1", client=client_of(request, limits))
            return Response(await until_gone(request, work), media_type="application/json")
        except (Refused, ValueError, TypeError) as exc:
            return answer(exc)
        except Gone:
            return error("the client hung up", 400)

    # ------------------------------------------------------------ websockets

    async def seat_socket(ws: WebSocket) -> None:
        room_id = ws.path_params["room"]
        room = hub.room(room_id)
        token = ws.query_params.get("token")
        client = client_of(ws, limits)
        try:
            if room is None:
                raise RoomError(f"no room {room_id!r} on this server")
            seat = None if not token else room.seat_for_token(token)
            hub.admit(room_id, seat, client)
        except TooMany as exc:  # before the handshake: HTTP 429 with Retry-After
            await ws.send_denial_response(refusal(exc))
            return
        except RoomError as exc:
            await ws.accept()
            await ws.send_json({"type": "error", "message": writable(str(exc)), "fatal": True})
            await ws.close(4403)
            return
        await ws.accept()
        if room_id not in hub.rooms:  # deleted while the handshake went on
            await ws.send_json({"type": "error", "message": f"no room {room_id!r} on this server", "fatal": True})
            await ws.close(4403)
            return
        conn = Connection(ws, seat, client)
        if seat is not None and room.seats[seat].connections:
            notice = {
                "type": "notice",
                "message": f"your seat was just opened in another place too ({room.seats[seat].connections + 1} "
                "connections): if that was not you, someone else has your seat's link",
            }
            for other in hub.connections_of(room_id):
                if other.seat == seat:
                    other.send(notice)
        hub.opened(room_id, conn)
        conn.send(room.view(seat))  # its own view now; the others' within a moment (``Hub.settle``)
        loop = asyncio.get_running_loop()
        tasks = [
            loop.create_task(conn.write()),
            loop.create_task(read(room, conn)),
            loop.create_task(conn.dropped.wait()),
        ]
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks:
                task.cancel()
            hub.closed(room_id, conn)

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
                if "seq" not in msg:
                    raise RoomError("a play message needs 'seq': the number of plays you saw (the state's seq)")
                if "match" not in msg:
                    raise RoomError("a play message needs 'match': the number of the match you saw (the state's match)")
                room.play(conn.seat, msg["cards"], msg["seq"], msg["match"])
            elif kind == "next_match":
                room.next_match(conn.seat)
            elif kind == "pace":
                room.set_pace(conn.seat, msg.get("seconds"))
            else:
                return await hub.coaching.advise(room, conn.seat, conn.client)
        except TooMany as exc:
            return {"type": "error", "message": writable(str(exc)), "retry_after": exc.retry_after}
        except ValueError as exc:
            return {"type": "error", "message": writable(str(exc))}
        except sqlite3.Error as exc:  # the file could not take the play: nothing changed, the socket stays
            print(f"bigtwo serve: room {room.id}: the store refused a change: {exc}", file=sys.stderr, flush=True)
            return {"type": "error", "message": "the server could not store that just now; try again"}
        hub.changed_room(room.id)
        return None

    routes = [
        Route("/", page),
        Route("/api/options", options),
        Route("/api/rooms", rooms, methods=["GET"]),
        Route("/api/rooms", create, methods=["POST"]),
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
