"""The web table against the third hostile round's attacks on rooms and seats: no one request,
socket or stranger may stall a friend's room. Each pinned against a real ``bigtwo serve`` on
127.0.0.1 (a "friend" is another loopback address, another client) or against ``Room`` with a
clock the test moves. Each test fails on the server as it was before its fix."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from web_server import Server

from bigtwo.env.rules.settings import parse_settings
from bigtwo.web.forms import RoomError, check_agent

pytestmark = pytest.mark.exclusive  # timing of a real server: no other test runs beside it (conftest)

JAPAN = {"variant": "japan", "seats": ["person", "greedy", "greedy", "greedy"]}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    s = Server(tmp_path_factory.mktemp("rooms") / "rooms.sqlite", pace=0.0, away=30.0)
    yield s
    s.stop()


# ---------------------------------------------------------------- 1. a YAML alias bomb in an agent's option


def alias_bomb(levels: int) -> str:
    """A block-style YAML list (no commas: an agent's options are split at them) of ``levels``
    anchors, each two aliases of the one before: ``2**levels`` items in a few hundred bytes."""
    lines = ["- &a0 x"]
    for i in range(1, levels):
        lines += [f"- &a{i}", f"  - *a{i - 1}", f"  - *a{i - 1}"]
    return "\n".join(lines)


def test_an_alias_bomb_in_an_agents_option_is_refused_at_once(server: Server) -> None:
    friend = {"variant": "taiwan", "seats": ["person", "greedy", "greedy", "greedy"]}
    start = time.monotonic()
    status, _ = server.api("/api/rooms", friend, source="127.0.1.1")
    control = time.monotonic() - start
    assert status == 200
    for agent in ("search", "nosuch", "greedy"):  # 22 levels: seconds of walking on the old server
        body = {"variant": "taiwan", "seats": ["person", f"{agent}:weights={alias_bomb(22)}", "greedy", "greedy"]}
        start = time.monotonic()
        status, out = server.api("/api/rooms", body, source="127.0.1.2")
        refused = time.monotonic() - start
        assert status == 400, out
        assert ("anchors or aliases" if agent == "search" else "agent") in out["error"], out
        assert refused < max(1.0, 2 * control), (agent, refused, control)
    start = time.monotonic()
    status, _ = server.api("/api/rooms", friend, source="127.0.1.1")
    assert status == 200 and time.monotonic() - start < max(2.0, 4 * control)


def test_an_agents_name_is_checked_before_its_options_and_settings_refuse_anchors() -> None:
    start = time.perf_counter()
    with pytest.raises(RoomError, match="unknown agent"):
        check_agent(f"nosuch:weights={alias_bomb(23)}")  # never read: 2**23 items
    with pytest.raises(RoomError, match="anchors or aliases"):
        check_agent(f"search:weights={alias_bomb(23)}")
    with pytest.raises(ValueError, match="--rule: x: a setting's value may not use YAML anchors"):
        parse_settings([f"x={alias_bomb(23)}"], "--rule")
    assert time.perf_counter() - start < 1.0
    # text that is no YAML (an alias to no anchor, an ampersand) stays text, as before
    assert parse_settings(["a=*foo", "b=x & y", "c=a*b", "d=[1, 2]"]) == {
        "a": "*foo",
        "b": "x & y",
        "c": "a*b",
        "d": [1, 2],
    }
    assert json.dumps(check_agent("search:simulations=500"))
