"""The web server's TCP connections: timeouts on slow and idle ones, and caps on how many.

uvicorn reads a request's headers and body for as long as a client cares to send them, and keeps
a connection that never sends anything at all; so a few hundred silent or byte-a-minute
connections would hold the server's open files. ``door_protocol`` makes uvicorn's HTTP protocol
(h11) with, from ``bigtwo.web.limits.Limits``:

- ``header_timeout``: seconds a connection has to send a request's headers, counted from its
  opening or from its last response (an idle keep-alive connection is closed sooner, after
  ``keep_alive`` seconds, by uvicorn);
- ``body_timeout``: seconds a request has to send its body once its headers are in;
- ``connections``: connections held at once (HTTP and websockets), and ``connections_per_client``
  from one client (its network: ``bigtwo.web.limits.network_of``), the last ``1/RESERVE`` of
  them kept for clients that hold fewer than ``NEWCOMER_CONNECTIONS``: a connection past any of
  these is answered at once (503, or 429, with ``Retry-After``) and closed. Connections from a ``--proxy`` address are not counted per client
  (they carry many clients); set the proxy's own timeouts and limits.

A connection that runs out of time is closed without an answer (a request the app is already
reading answers 408 itself). Websockets are timed by their pings (every 20 seconds, 20 to answer).

**Websockets** (``SocketProtocol``: uvicorn's sans-I/O websockets protocol, with
per-message deflate off, so a message costs the server no more than its bytes on the wire):

- a socket whose writes back up (a client that sends pings and never reads the pongs, or never
  reads at all) is not read from until they drain, and is dropped once ``MAX_BACKLOG`` bytes wait
  to be written;
- more than ``MAX_UNREAD`` messages waiting for the app (sent in one burst) close the socket with
  1008, and a text message that is not UTF-8 with 1007, each with its reason and no log line.

**Framing.** A request that says its body's length twice, with both ``Content-Length`` and
``Transfer-Encoding`` (which a proxy in front may read the other way, and so find a second,
hidden request in the body), is answered 400 and its connection closed, before the app sees it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

from bigtwo.web.limits import NEWCOMER_CONNECTIONS, RESERVE, Limits, kept_for_newcomers, network_of

RETRY = 5  # seconds a connection refused at the door is told to wait
MAX_BACKLOG = 256 * 1024  # bytes waiting to be written to a websocket before it is dropped
MAX_UNREAD = 64  # messages of one websocket waiting for the app before it is closed


class Unframed(Exception):
    """A request whose framing is ambiguous (see the module docstring): refused with 400."""


class FramedConnection(h11.Connection):
    """h11's server side, raising ``Unframed`` for a request with both ``Content-Length`` and
    ``Transfer-Encoding`` (h11 itself frames it by the latter and reads on)."""

    def next_event(self) -> Any:
        event = super().next_event()
        if isinstance(event, h11.Request):
            names = {name for name, _ in event.headers}
            if b"content-length" in names and b"transfer-encoding" in names:
                raise Unframed("a request may not have both Content-Length and Transfer-Encoding")
        return event


def door_protocol(limits: Limits, proxies: Iterable[str] = ()) -> type[H11Protocol]:
    """uvicorn's h11 protocol with the module docstring's timeouts and caps."""
    trusted = set(proxies)

    class Door(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None
        _phase: str | None = None

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.conn = FramedConnection(h11.SERVER, self.conn._max_incomplete_event_size)

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            host = self.client[0] if self.client else ""
            total = len(self.connections)
            if total > limits.connections:
                self._refuse(503, f"the server holds {limits.connections} connections, its most")
                return
            if host in trusted:
                self._watch()
                return
            mine = network_of(host, limits)
            held = sum(
                1 for c in self.connections if network_of((getattr(c, "client", None) or ("",))[0], limits) == mine
            )
            if held > limits.connections_per_client:
                self._refuse(429, f"at most {limits.connections_per_client} connections from one client")
            elif kept_for_newcomers(total - 1, limits.connections, held - 1, NEWCOMER_CONNECTIONS):
                kept = limits.connections // RESERVE
                self._refuse(503, f"the server is nearly full: its last {kept} connections are kept for newcomers")
            else:
                self._watch()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            self._watch()

        def handle_events(self) -> None:
            try:
                super().handle_events()
            except Unframed as exc:
                self._refuse(400, str(exc))

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._watch()

        def connection_lost(self, exc: Exception | None) -> None:
            self._stop_clock()
            super().connection_lost(exc)

        def _watch(self) -> None:
            """Start the clock for what the connection owes now (headers or a body), if it changed."""
            state = self.conn.their_state
            phase = "head" if state is h11.IDLE else "body" if state is h11.SEND_BODY else None
            if self.transport.is_closing() or self.transport.get_protocol() is not self:
                phase = None  # closed, or upgraded to a websocket (its pings time it)
            if phase == self._phase:
                return
            self._stop_clock()
            self._phase = phase
            if phase is not None:
                seconds = limits.header_timeout if phase == "head" else limits.body_timeout
                self._deadline = self.loop.call_later(seconds, self._expired)

        def _stop_clock(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None
            self._phase = None

        def _expired(self) -> None:
            self._deadline = None
            self._phase = None
            if not self.transport.is_closing():
                self.transport.close()

        def _refuse(self, status: int, why: str) -> None:
            """Answer ``status`` with ``why`` (429 and 503 with ``Retry-After``) and close."""
            if status == 400:
                body, retry = json.dumps({"error": why}).encode(), ""
            else:
                body = json.dumps({"error": f"{why}; try again in a moment", "retry_after": RETRY}).encode()
                retry = f"Retry-After: {RETRY}\r\n"
            reason = {400: "Bad Request", 429: "Too Many Requests"}.get(status, "Service Unavailable")
            head = (
                f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\n{retry}"
                f"Connection: close\r\nContent-Length: {len(body)}\r\n\r\n"
            )
            self.transport.write(head.encode() + body)
            self.transport.close()

    return Door


class SocketProtocol(WebSocketsSansIOProtocol):
    """uvicorn's websockets (sans-I/O) protocol with the module docstring's bounds; uvicorn is
    given it with ``ws_per_message_deflate=False``."""

    _backed_up = False  # reading paused because writes back up

    def pause_writing(self) -> None:
        super().pause_writing()
        self._backed_up = True
        self.transport.pause_reading()  # pings, and so pongs, wait until the client reads

    def resume_writing(self) -> None:
        super().resume_writing()
        self._backed_up = False
        if not self.read_paused and not self.transport.is_closing():
            self.transport.resume_reading()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.transport.is_closing():
            return
        if self.transport.get_write_buffer_size() > MAX_BACKLOG:
            self._drop()
        elif self._backed_up:  # the app's reading may have resumed it meanwhile
            self.transport.pause_reading()

    def send_receive_event_to_app(self) -> None:
        if self.close_sent:
            self.frames = []
            return
        if self.queue.qsize() >= MAX_UNREAD:
            self.frames = []
            self._fail(1008, f"more than {MAX_UNREAD} messages at once; wait for the answers")
            return
        if self.curr_msg_data_type == "text":
            data = b"".join(self.frames)
            try:
                data.decode()
            except UnicodeDecodeError:
                self.frames = []
                self._fail(1007, "text messages must be UTF-8")
                return
        super().send_receive_event_to_app()

    def _fail(self, code: int, reason: str) -> None:
        """Close the socket with ``code`` and ``reason``; the app hears of it as a disconnect."""
        self.conn.fail(code, reason)
        self.queue.put_nowait({"type": "websocket.disconnect", "code": code, "reason": reason})
        self.transport.write(b"".join(self.conn.data_to_send()))
        self.close_sent = True
        self.transport.close()

    def _drop(self) -> None:
        """Drop the socket at once: nothing more can be written to it."""
        self.close_sent = True
        self.transport.abort()  # the app hears a disconnect (``connection_lost``)
