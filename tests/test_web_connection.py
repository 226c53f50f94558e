"""The web table's connections against a determined outsider (``bigtwo.web.door``): requests
framed two ways, bodies cut short, websockets whose writes back up, compressed and broken frames,
and many addresses of one network. Each against a real ``bigtwo serve`` on 127.0.0.1; each
fails on the server as it was before its fix."""

from __future__ import annotations

import base64
import json
import os
import socket
import struct
import time
import zlib
from pathlib import Path
from typing import Any

import pytest
from web_server import Server
from websockets.sync.client import connect

from bigtwo.web.limits import Limits, network_of

pytestmark = pytest.mark.exclusive  # memory and timing of a real server: no other test runs beside it (conftest)

JAPAN = {"variant": "japan", "seats": ["person", "greedy", "greedy", "greedy"]}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    s = Server(tmp_path_factory.mktemp("connection") / "rooms.sqlite", pace=0.0, away=30.0)
    yield s
    s.stop()


def printed(server: Server, seconds: float = 0.5) -> str:
    """What the server has printed, after ``seconds`` for it to say more."""
    time.sleep(seconds)
    return "".join(server._out)


def read_until_closed(sock: socket.socket, seconds: float) -> tuple[bytes, bool]:
    """What ``sock`` receives within ``seconds``, and whether the server closed it meanwhile."""
    data = b""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            return data, False
        except ConnectionResetError:
            return data, True
        if not chunk:
            return data, True
        data += chunk
    return data, False


def raw_socket(server: Server, path: str, extensions: str | None = None, rcvbuf: int | None = None) -> socket.socket:
    """A websocket on ``path`` opened by hand (so that frames can be anything); the handshake read."""
    sock = socket.socket()
    if rcvbuf is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.connect(("127.0.0.1", server.port))
    key = base64.b64encode(os.urandom(16)).decode()
    head = (
        f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
    )
    if extensions:
        head += f"Sec-WebSocket-Extensions: {extensions}\r\n"
    sock.sendall((head + "\r\n").encode())
    answer = b""
    sock.settimeout(10)
    while b"\r\n\r\n" not in answer:
        answer += sock.recv(1)  # one byte at a time: what follows the handshake stays unread
    assert answer.startswith(b"HTTP/1.1 101"), answer
    return sock


def frame(opcode: int, payload: bytes, rsv1: bool = False) -> bytes:
    """One masked client frame."""
    head = bytes([0x80 | (0x40 if rsv1 else 0) | opcode])
    n = len(payload)
    if n < 126:
        head += bytes([0x80 | n])
    elif n < 65536:
        head += bytes([0x80 | 126]) + struct.pack("!H", n)
    else:
        head += bytes([0x80 | 127]) + struct.pack("!Q", n)
    mask = os.urandom(4)
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def close_code(data: bytes) -> tuple[int, str] | None:
    """The code and reason of the first close frame among the server's ``data``, if any."""
    i = 0
    while i + 2 <= len(data):
        opcode, n = data[i] & 0x0F, data[i + 1] & 0x7F
        i += 2
        if n == 126:
            n, i = struct.unpack("!H", data[i : i + 2])[0], i + 2
        elif n == 127:
            n, i = struct.unpack("!Q", data[i : i + 8])[0], i + 8
        if opcode == 0x8:
            body = data[i : i + n]
            return struct.unpack("!H", body[:2])[0], body[2:].decode()
        i += n
    return None


# ---------------------------------------------------------------- 11. request framing


def test_a_request_framed_by_both_length_and_chunks_is_refused_and_its_connection_closed(server: Server) -> None:
    hidden = f"GET /api/options HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n"
    body = "0\r\n\r\n" + hidden
    request = (
        f"POST /api/rooms HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nTransfer-Encoding: chunked\r\n\r\n{body}"
    )
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        sock.sendall(request.encode())
        data, closed = read_until_closed(sock, 5)
    assert data.startswith(b"HTTP/1.1 400"), data[:200]
    assert b"Content-Length and Transfer-Encoding" in data and data.count(b"HTTP/1.1") == 1, data
    assert closed, "the connection stays open after an ambiguously framed request"


def test_a_body_cut_short_is_answered_without_a_traceback(server: Server) -> None:
    for _ in range(3):
        with socket.create_connection(("127.0.0.1", server.port)) as sock:
            sock.sendall(
                f"POST /api/rooms HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nContent-Type: application/json\r\n"
                'Content-Length: 1000\r\n\r\n{"variant": '.encode()
            )
            time.sleep(0.1)
    assert server.api("/api/rooms")[0] == 200
    out = printed(server)
    assert "Traceback" not in out and "ClientDisconnect" not in out, out[-3000:]


# ---------------------------------------------------------------- 10. compressed and broken frames


def test_websockets_are_not_compressed_so_a_message_costs_its_bytes(server: Server) -> None:
    room = server.room(**JAPAN)
    with connect(f"{server.ws}ws/{room['room']}") as ws:  # the client offers permessage-deflate
        assert ws.response.headers.get("Sec-WebSocket-Extensions") is None
    sock = raw_socket(server, f"/ws/{room['room']}", "permessage-deflate; client_max_window_bits")
    message = json.dumps({"type": "pace", "seconds": " " * 60_000}).encode()
    burst = b""
    while len(burst) < 250 * 1024:  # 60 KB messages compressed to a few hundred bytes each
        c = zlib.compressobj(9, zlib.DEFLATED, -12)
        burst += frame(0x1, (c.compress(message) + c.flush(zlib.Z_SYNC_FLUSH))[:-4], rsv1=True)
    before = server.rss()
    try:
        sock.sendall(burst)
        data, closed = read_until_closed(sock, 3)
    finally:
        sock.close()
    grown = server.rss() - before
    print(f"\n250 KiB of compressed messages: the server grew {grown:.1f} MiB")
    assert grown < 24, f"the server grew by {grown:.0f} MiB for 250 KiB of compressed messages"
    assert closed and close_code(data) is not None and close_code(data)[0] == 1002, data[-200:]  # type: ignore[index]


def test_a_text_message_that_is_not_utf8_closes_its_socket_with_a_reason_and_no_traceback(server: Server) -> None:
    room = server.room(**JAPAN)
    sock = raw_socket(server, f"/ws/{room['room']}")
    try:
        sock.sendall(frame(0x1, b'{"type": "pace", "seconds": "\xff\xfe"}'))
        data, closed = read_until_closed(sock, 5)
    finally:
        sock.close()
    assert closed and close_code(data) == (1007, "text messages must be UTF-8"), data[-200:]
    out = printed(server)
    assert "Traceback" not in out and "Invalid UTF-8" not in out, out[-3000:]


# ---------------------------------------------------------------- 2. pings that are never read


def test_pings_whose_pongs_are_never_read_do_not_grow_the_server(server: Server) -> None:
    room = server.room(**JAPAN)
    sock = raw_socket(server, f"/ws/{room['room']}", rcvbuf=4096)
    ping = frame(0x9, b"p" * 125) * 2000  # 262 KB of pings, 254 KB of pongs
    sent, stalled, dropped = 0, False, False
    before = server.rss()
    try:
        sock.settimeout(2)
        while sent < 48 * 1024 * 1024:
            try:
                sock.sendall(ping)
            except TimeoutError:
                stalled = True  # the server stopped reading
                break
            except (BrokenPipeError, ConnectionResetError):
                dropped = True
                break
            sent += len(ping)
        grown = server.rss() - before
    finally:
        sock.close()
    print(
        f"\npings never read: {sent / 2**20:.1f} MiB sent, stalled {stalled}, dropped {dropped}, grew {grown:.1f} MiB"
    )
    assert stalled or dropped, f"the server read {sent >> 20} MiB of pings from a client that reads no pongs"
    assert grown < 16, f"the server grew by {grown:.0f} MiB for {sent >> 20} MiB of pings"
    with connect(server.seat_ws(room["links"][0])) as ws:  # the room is served as ever
        assert json.loads(ws.recv(timeout=10))["type"] == "state"


# ---------------------------------------------------------------- 8. many addresses of one network


def test_a_client_is_its_network() -> None:
    assert network_of("203.0.113.7", Limits()) == "203.0.113.7"
    assert network_of("203.0.113.7", Limits(ipv4_prefix=24)) == "203.0.113.0/24"
    assert network_of("2001:db8:1:2:3:4:5:6", Limits()) == "2001:db8:1:2::/64"
    assert network_of("2001:db8:1:2::9", Limits()) == network_of("2001:db8:1:2:ffff::1", Limits())
    assert network_of("::ffff:203.0.113.7", Limits(ipv4_prefix=24)) == "203.0.113.0/24"
    assert network_of("not an address", Limits()) == "not an address"
    with pytest.raises(ValueError, match="ipv4_prefix"):
        Limits.parse(["ipv4_prefix=33"])


def answered(socks: list[socket.socket], seconds: float = 1.0) -> list[bytes]:
    """What each of ``socks`` was answered at once (b"" for a connection let in, which waits for a request)."""
    out = []
    deadline = time.monotonic() + seconds
    for sock in socks:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            out.append(sock.recv(400))
        except TimeoutError:
            out.append(b"")
    return out


def test_many_addresses_of_one_network_are_one_client_and_a_newcomer_still_gets_a_room_and_a_socket(
    tmp_path: Path,
) -> None:
    limits = (
        "ipv4_prefix=24",
        "rooms_per_minute=1000",
        "rooms_per_client=6",
        "connections=24",
        "connections_per_client=12",
    )
    s = Server(tmp_path / "rooms.sqlite", pace=0.0, away=30.0, limits=limits)
    socks: list[socket.socket] = []

    def open_from(source: str) -> socket.socket:
        socks.append(socket.create_connection(("127.0.0.1", s.port), source_address=(source, 0)))
        return socks[-1]

    try:
        made = [s.api("/api/rooms", JAPAN, source=f"127.0.9.{i}")[0] for i in range(1, 9)]
        assert made.count(200) == 6 and made[6:] == [429, 429], made  # 8 addresses, one /24: 6 rooms
        time.sleep(0.3)  # those requests' connections closed
        mine = [open_from(f"127.0.9.{i}") for i in range(1, 13)]  # 12 addresses of one /24
        extra = open_from("127.0.9.20")
        assert answered([*mine, extra])[-1].startswith(b"HTTP/1.1 429")  # the 13th connection of the /24
        other = [open_from(f"127.0.12.{i}") for i in range(1, 13)]  # a second /24 fills the last ones
        refused = [a for a in answered(other) if a]
        assert len(refused) == 3 and all(a.startswith(b"HTTP/1.1 503") for a in refused), refused
        assert b"kept for newcomers" in refused[0]
        room = s.api("/api/rooms", JAPAN, source="127.0.13.1")  # a newcomer gets a page, a room and a socket
        assert room[0] == 200, room
        with connect(s.seat_ws(room[1]["links"][0]), source_address=("127.0.13.1", 0)) as ws:
            assert json.loads(ws.recv(timeout=10))["type"] == "state"
    finally:
        for sock in socks:
            sock.close()
        s.stop()
