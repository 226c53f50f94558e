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
  from one address: a connection past either is answered at once (503, or 429 with
  ``Retry-After``) and closed. Connections from a ``--proxy`` address are not counted per client
  (they carry many clients); set the proxy's own timeouts and limits.

A connection that runs out of time is closed without an answer (a request the app is already
reading answers 408 itself). Websockets are timed by their pings (every 20 seconds, 20 to answer).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from bigtwo.web.limits import Limits

RETRY = 5  # seconds a connection refused at the door is told to wait


def door_protocol(limits: Limits, proxies: Iterable[str] = ()) -> type[H11Protocol]:
    """uvicorn's h11 protocol with the module docstring's timeouts and caps."""
    trusted = set(proxies)

    class Door(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None
        _phase: str | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            host = self.client[0] if self.client else ""
            if len(self.connections) > limits.connections:
                self._refuse(503, f"the server holds {limits.connections} connections, its most")
            elif host not in trusted and limits.connections_per_client < sum(
                1 for c in self.connections if (getattr(c, "client", None) or ("",))[0] == host
            ):
                self._refuse(429, f"at most {limits.connections_per_client} connections from one address")
            else:
                self._watch()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            self._watch()

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
            body = json.dumps({"error": f"{why}; try again in a moment", "retry_after": RETRY}).encode()
            reason = "Too Many Requests" if status == 429 else "Service Unavailable"
            head = (
                f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nRetry-After: {RETRY}\r\n"
                f"Connection: close\r\nContent-Length: {len(body)}\r\n\r\n"
            )
            self.transport.write(head.encode() + body)
            self.transport.close()

    return Door
