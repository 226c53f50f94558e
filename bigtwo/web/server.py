"""``bigtwo serve``: the web table on uvicorn, on localhost unless told otherwise.

The address is printed once the port is bound (``--port 0`` picks a free one). SIGTERM and
Ctrl-C (SIGINT) shut the server down cleanly: uvicorn stops taking connections and closes the
open ones, the rooms' drivers stop, and the SQLite file is checkpointed and closed; since every
play is committed before anyone hears of it, the file is consistent at any moment, and the next
start resumes every room where it stood. The command then exits with status 0.

Seat tokens travel in URLs (``/?room=ID&token=T``, ``/ws/ID?token=T``): every log line, at every
level (``--log-level trace`` prints each request's whole ASGI scope), shows them as
``token=...``, never the token itself.

**Limits and timeouts** (``bigtwo.web.limits``; ``--limit NAME=VALUE``): per-client limits in the
app, and in the connections themselves (``bigtwo.web.door``) timeouts on slow and idle ones and a
cap on how many, kept under the process's open-file limit (raised to its hard limit where that
is needed and allowed). **Behind a reverse proxy**, name it with ``--proxy ADDR`` (repeatable):
then, and only then, ``X-Forwarded-For`` from that address says who the client is; the proxy
should time out slow clients and cap connections itself, since every request reaches this
server from the proxy's address.
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import re
import signal
import socket
import sys
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from bigtwo.web.forms import DEFAULT_AWAY, DEFAULT_PACE, DEFAULT_TURN
from bigtwo.web.limits import Limits

DEFAULT_DB = "bigtwo-web.sqlite"
MAX_WS_FRAME = 64 * 1024  # bytes of one websocket message uvicorn reads (the app allows far less)
FILE_HEADROOM = 64  # open files kept for the store, the logs and the listening socket beside connections
_TOKEN = re.compile(r"(token=)[^&\s\"'\\]+")


class HideTokens(logging.Filter):
    """Writes ``token=...`` for every seat token in a log line: the line is formatted (its
    arguments whatever their type: a scope dict, bytes) and the tokens taken out of the text."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            text = record.getMessage()
        except Exception:  # noqa: BLE001 - a line that cannot be formatted is left to logging's own report
            return True
        clean = _TOKEN.sub(r"\1...", text)
        if clean != text or record.args:
            record.msg, record.args = clean, None
        return True


def hide_tokens() -> None:
    """``HideTokens`` on every log handler there is (uvicorn's included: they are set up by then),
    so that no line of any logger at any level reaches a stream with a token in it."""
    hide = HideTokens()
    loggers = [
        logging.getLogger(),
        *(v for v in logging.Logger.manager.loggerDict.values() if isinstance(v, logging.Logger)),
    ]
    handlers = [h for logger in loggers for h in logger.handlers]
    if logging.lastResort is not None:  # what a logger without handlers writes to
        handlers.append(logging.lastResort)
    for handler in handlers:
        if not any(isinstance(f, HideTokens) for f in handler.filters):
            handler.addFilter(hide)


def open_files(connections: int) -> int:
    """The connections the server may hold under the open-file limit: the soft limit is raised
    (to the hard one at most) to fit ``connections`` and ``FILE_HEADROOM``; else fewer."""
    try:
        import resource
    except ImportError:  # not POSIX
        return connections
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = connections + FILE_HEADROOM
    if soft != resource.RLIM_INFINITY and soft < want:
        high = want if hard == resource.RLIM_INFINITY else min(want, hard)
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (high, hard))
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft != resource.RLIM_INFINITY and soft < want:
        fit = max(1, soft - FILE_HEADROOM)
        print(
            f"bigtwo serve: the open-file limit is {soft}: at most {fit} connections at once (not {connections})",
            file=sys.stderr,
            flush=True,
        )
        return fit
    return connections


def agent_files(paths: Iterable[str | Path]) -> dict[str, Path]:
    """``--agent-file`` paths by the name a seat gives them (the file's name); ``ValueError`` for
    one that is missing or two with the same name."""
    files: dict[str, Path] = {}
    for path in paths:
        p = Path(path).expanduser().resolve()
        if not p.is_file():
            raise ValueError(f"--agent-file {str(path)!r}: no such file")
        if p.name in files:
            raise ValueError(f"--agent-file: two files are named {p.name!r}; seats name them by file name")
        files[p.name] = p
    return files


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (``port`` 0: a free one); ``ValueError`` if it cannot be bound."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ValueError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.listen(128)
    return sock


def serve(
    host: str = "127.0.0.1",
    port: int = 8000,
    db: str | Path = DEFAULT_DB,
    pace: float = DEFAULT_PACE,
    away_timeout: float = DEFAULT_AWAY,
    log_level: str = "warning",
    turn_timeout: float = DEFAULT_TURN,
    room_ttl: float | None = None,
    agent_paths: Iterable[str | Path] = (),
    allow_hosts: Iterable[str] = (),
    limits: Iterable[str] | Limits = (),
    proxies: Iterable[str] = (),
) -> int:
    """Run the server until SIGTERM or Ctrl-C; see the module docstring. ``limits``: ``NAME=VALUE``
    items (``--limit``) or a ``Limits``; ``proxies``: the reverse proxies' addresses (``--proxy``)."""
    try:
        import uvicorn

        from bigtwo.web.app import create_app
        from bigtwo.web.door import SocketProtocol, door_protocol
    except ImportError as exc:
        raise ValueError(f"bigtwo serve needs the web extra ({exc}): pip install 'bigtwo[web]'") from None
    if not 0 <= port <= 65535:
        raise ValueError(f"--port must be 0..65535, got {port}")
    if room_ttl is not None and not room_ttl > 0:
        raise ValueError(f"--room-ttl must be a positive number of seconds, got {room_ttl}")
    limits = limits if isinstance(limits, Limits) else Limits.parse(limits)
    proxies = [p.strip() for p in proxies if p.strip()]
    for proxy in proxies:
        try:
            ipaddress.ip_address(proxy)
        except ValueError:
            raise ValueError(f"--proxy {proxy!r}: give the proxy's IP address (such as 127.0.0.1)") from None
    app = create_app(
        db,
        pace=pace,
        away_timeout=away_timeout,
        turn_timeout=turn_timeout,
        room_ttl=room_ttl,
        agent_files=agent_files(agent_paths),
        allow_hosts=allow_hosts,
        limits=limits,
    )
    sock = bind(host, port)
    shown = f"[{host}]" if ":" in host else host
    print(f"bigtwo serve: http://{shown}:{sock.getsockname()[1]}/  (rooms kept in {db}; Ctrl-C stops)", flush=True)
    config = uvicorn.Config(
        app,
        log_level=log_level,
        http=door_protocol(replace(limits, connections=open_files(limits.connections)), proxies),
        ws=SocketProtocol,
        ws_max_size=MAX_WS_FRAME,
        ws_per_message_deflate=False,  # a compressed message could cost the server far more than its bytes
        lifespan="on",
        timeout_graceful_shutdown=5,
        timeout_keep_alive=limits.keep_alive,  # type: ignore[arg-type]  # seconds: uvicorn takes a float too
        proxy_headers=bool(proxies),  # X-Forwarded-For is believed from a named proxy only
        forwarded_allow_ips=proxies or None,
    )
    hide_tokens()

    class Server(uvicorn.Server):
        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            app.state.hub.begin_stop()  # long replays and open sockets end now, not at the grace timeout
            await super().shutdown(sockets)

    server = Server(config)
    caught: list[int] = []
    # uvicorn handles the signals while it runs, then raises them again: caught here, they end
    # the command normally instead of killing it.
    previous = {sig: signal.signal(sig, lambda s, _f: caught.append(s)) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        server.run(sockets=[sock])
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        sock.close()
    why = f" ({signal.Signals(caught[0]).name})" if caught else ""
    print(f"bigtwo serve: stopped{why}; every room is kept in {db}", flush=True)
    return 0
