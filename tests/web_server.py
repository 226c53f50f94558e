"""A real ``bigtwo serve`` in a subprocess for the web tests: started on 127.0.0.1, stopped by a signal."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """``bigtwo serve`` on ``port`` (default a free one) with its rooms in ``db``."""

    def __init__(
        self, db: Path, pace: float = 0.02, away: float = 1.0, port: int | None = None, args: tuple[str, ...] = ()
    ) -> None:
        self.port = free_port() if port is None else port
        cmd = [sys.executable, "-m", "bigtwo.cli", "serve", "--port", str(self.port), "--db", str(db)]
        cmd += ["--pace", str(pace), "--away-timeout", str(away), *args]
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

    def api(
        self, path: str, body: Any = None, raw: bytes | None = None, headers: dict[str, str] | None = None
    ) -> tuple[int, Any]:
        """``GET path`` (no body), or ``POST`` of ``body`` as JSON or of the bytes ``raw``; the status
        and the JSON answer. ``headers`` are sent too (a JSON body's Content-Type unless they say one)."""
        data = raw if raw is not None else None if body is None else json.dumps(body).encode()
        sent = {"Content-Type": "application/json"} if data is not None else {}
        sent.update(headers or {})
        req = urllib.request.Request(
            self.url + path.lstrip("/"), data=data, method="GET" if data is None else "POST", headers=sent
        )
        try:
            with urllib.request.urlopen(req, timeout=60) as res:
                return res.status, json.loads(res.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())

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
        out, _ = self.proc.communicate(timeout=30)
        return self.proc.returncode, out
