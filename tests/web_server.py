"""A real ``bigtwo serve`` in a subprocess for the web tests: started on 127.0.0.1, stopped by a signal."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# every test of a module shares one client (127.0.0.1): the per-client counts that only an
# attacker reaches are lifted, except where a test passes its own ``limits`` (test_web_attacker)
RELAXED = (
    "rooms_per_minute=100000",
    "rooms_per_client=1000",
    "agents_per_client=24",
    "replays_per_client=16",
    "coach_per_client=1000",
    "sockets_per_client=100000",
    "connections_per_client=100000",
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """``bigtwo serve`` on ``port`` (default a free one) with its rooms in ``db``; ``limits``:
    ``--limit`` items (default ``RELAXED``)."""

    def __init__(
        self,
        db: Path,
        pace: float = 0.02,
        away: float = 1.0,
        port: int | None = None,
        args: tuple[str, ...] = (),
        limits: tuple[str, ...] = RELAXED,
    ) -> None:
        self.port = free_port() if port is None else port
        cmd = [sys.executable, "-m", "bigtwo.cli", "serve", "--port", str(self.port), "--db", str(db)]
        cmd += ["--pace", str(pace), "--away-timeout", str(away), *args]
        cmd += [part for item in limits for part in ("--limit", item)]
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen(
            cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
        )
        first = self.proc.stdout.readline() if self.proc.stdout else ""
        if "http://" not in first:
            self.proc.kill()
            raise RuntimeError(
                f"bigtwo serve did not start: {first}{self.proc.stdout.read() if self.proc.stdout else ''}"
            )
        self.url = first.split()[2]
        self.ws = self.url.replace("http://", "ws://")
        self._out: list[str] = []  # read as it comes (a full pipe would stop a chatty server)
        self._reader = threading.Thread(target=self._out.extend, args=(self.proc.stdout,), daemon=True)
        self._reader.start()

    def api(
        self,
        path: str,
        body: Any = None,
        raw: bytes | None = None,
        headers: dict[str, str] | None = None,
        source: str | None = None,
    ) -> tuple[int, Any]:
        """``GET path`` (no body), or ``POST`` of ``body`` as JSON or of the bytes ``raw``; the status
        and the JSON answer. ``headers`` are sent too (a JSON body's Content-Type unless they say one);
        ``source``: the loopback address to send from (``127.0.0.2``: another client)."""
        data = raw if raw is not None else None if body is None else json.dumps(body).encode()
        sent = {"Content-Type": "application/json"} if data is not None else {}
        sent.update(headers or {})
        if source is not None:
            return self._from(source, path, data, sent)
        req = urllib.request.Request(
            self.url + path.lstrip("/"), data=data, method="GET" if data is None else "POST", headers=sent
        )
        try:
            with urllib.request.urlopen(req, timeout=60) as res:
                return res.status, json.loads(res.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())

    def _from(self, source: str, path: str, data: bytes | None, headers: dict[str, str]) -> tuple[int, Any]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60, source_address=(source, 0))
        try:
            conn.request("GET" if data is None else "POST", "/" + path.lstrip("/"), body=data, headers=headers)
            res = conn.getresponse()
            return res.status, json.loads(res.read())
        finally:
            conn.close()

    def rss(self) -> float:
        """The server process's resident memory in MiB (Linux ``/proc``)."""
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        raise RuntimeError("no VmRSS in /proc status")

    def seat_ws(self, link: dict[str, Any]) -> str:
        """The websocket address of a seat link (``room["links"][i]``) of this server."""
        room, token = link["url"].split("?room=")[1].split("&token=")
        return f"{self.ws}ws/{room}?token={token}"

    def room(self, **body: Any) -> dict[str, Any]:
        status, out = self.api("/api/rooms", body)
        assert status == 200, out
        return out

    def stop(self, sig: int = signal.SIGTERM) -> tuple[int, str]:
        """Send ``sig``; the exit status and everything the server printed."""
        self.proc.send_signal(sig)
        self.proc.wait(timeout=30)
        self._reader.join(30)
        return self.proc.returncode, "".join(self._out)


def states_until(ws: Any, deadline: float) -> Iterator[dict[str, Any]]:
    """The ``state`` messages a websocket receives until ``deadline`` (``time.monotonic()``), others skipped."""
    while time.monotonic() < deadline:
        try:
            m = json.loads(ws.recv(timeout=max(0.05, deadline - time.monotonic())))
        except TimeoutError:
            return
        if m["type"] == "state":
            yield m


def play_text(state: dict[str, Any], cards: str | None = None, **changes: Any) -> str:
    """The play message for a seat's ``state``: ``cards`` (default its last legal play, ``pass``
    when that is the only one) with the state's ``seq`` and ``match``; ``changes`` replace fields."""
    cards = (" ".join(state["legal"][-1]) or "pass") if cards is None else cards
    return json.dumps({"type": "play", "cards": cards, "seq": state["seq"], "match": state["match"], **changes})
