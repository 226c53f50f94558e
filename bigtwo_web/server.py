"""``bigtwo serve``: the web table on uvicorn, on localhost unless told otherwise.

The address is printed once the port is bound (``--port 0`` picks a free one). SIGTERM and
Ctrl-C (SIGINT) shut the server down cleanly: uvicorn stops taking connections and closes the
open ones, the rooms' drivers stop, and the SQLite file is checkpointed and closed; since every
play is committed before anyone hears of it, the file is consistent at any moment, and the next
start resumes every room where it stood. The command then exits with status 0.

Seat tokens travel in URLs (``/?room=ID&token=T``, ``/ws/ID?token=T``): the access log and the
websocket log lines show them as ``token=...``, never the token itself.
"""

from __future__ import annotations

import logging
import re
import signal
import socket
from collections.abc import Iterable
from pathlib import Path

from bigtwo.web.room import DEFAULT_AWAY, DEFAULT_PACE, DEFAULT_TURN

DEFAULT_DB = "bigtwo-web.sqlite"
MAX_WS_FRAME = 64 * 1024  # bytes of one websocket message uvicorn reads (the app allows far less)
_TOKEN = re.compile(r"(token=)[^&\s\"']+")


class HideTokens(logging.Filter):
    """Writes ``token=...`` for every seat token in a log line (uvicorn's access and websocket lines)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(_TOKEN.sub(r"\1...", a) if isinstance(a, str) else a for a in record.args)
        if isinstance(record.msg, str):
            record.msg = _TOKEN.sub(r"\1...", record.msg)
        return True


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
) -> int:
    """Run the server until SIGTERM or Ctrl-C; see the module docstring."""
    try:
        import uvicorn

        from bigtwo.web.app import create_app
    except ImportError as exc:
        raise ValueError(f"bigtwo serve needs the web extra ({exc}): pip install 'bigtwo[web]'") from None
    if not 0 <= port <= 65535:
        raise ValueError(f"--port must be 0..65535, got {port}")
    if room_ttl is not None and not room_ttl > 0:
        raise ValueError(f"--room-ttl must be a positive number of seconds, got {room_ttl}")
    app = create_app(
        db,
        pace=pace,
        away_timeout=away_timeout,
        turn_timeout=turn_timeout,
        room_ttl=room_ttl,
        agent_files=agent_files(agent_paths),
        allow_hosts=allow_hosts,
    )
    sock = bind(host, port)
    shown = f"[{host}]" if ":" in host else host
    print(f"bigtwo serve: http://{shown}:{sock.getsockname()[1]}/  (rooms kept in {db}; Ctrl-C stops)", flush=True)
    config = uvicorn.Config(
        app,
        log_level=log_level,
        ws="websockets-sansio",
        ws_max_size=MAX_WS_FRAME,
        lifespan="on",
        timeout_graceful_shutdown=5,
    )
    for name in ("uvicorn.access", "uvicorn.error"):
        logging.getLogger(name).addFilter(HideTokens())

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
