"""The web table against the third hostile round's attacks on rooms and seats: no one request,
socket or stranger may stall a friend's room. Each pinned against a real ``bigtwo serve`` on
127.0.0.1 (a "friend" is another loopback address, another client) or against ``Room`` with a
clock the test moves. Each test fails on the server as it was before its fix."""

from __future__ import annotations

import contextlib
import json
import time
from typing import Any

import pytest
from test_web_hostile import recv_error, recv_state
from web_server import Server, states_until
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from bigtwo.agents.registry import make_agent
from bigtwo.env.envs.game import Game
from bigtwo.env.rules.settings import parse_settings
from bigtwo.web.forms import RoomError, check_agent, setup_for
from bigtwo.web.room import Room

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


# ---------------------------------------------------------------- 3. spectators never lock a player out


def refused(url: str, source: str) -> Any:
    """The HTTP answer to a websocket handshake the server refuses."""
    with pytest.raises(InvalidStatus) as refusal:
        connect(url, source_address=(source, 0)).close()
    return refusal.value.response


def test_a_crowd_of_spectators_never_locks_a_player_out_of_their_seat(server: Server) -> None:
    _, room = server.api("/api/rooms", JAPAN, source="127.0.3.1")
    watch = f"{server.ws}ws/{room['room']}"
    with contextlib.ExitStack() as stack:
        for _ in range(8):  # one stranger: a quarter of the room's 32 spectator places
            stack.enter_context(connect(watch, source_address=("127.0.3.2", 0)))
        response = refused(watch, "127.0.3.2")
        assert response.status_code == 429 and b"from 8 sockets" in response.body
        for i in range(3):
            for _ in range(8):
                stack.enter_context(connect(watch, source_address=(f"127.0.3.{3 + i}", 0)))
        response = refused(watch, "127.0.3.9")
        assert response.status_code == 429 and b"32 spectators" in response.body
        with connect(server.seat_ws(room["links"][0]), source_address=("127.0.3.1", 0)) as mine:
            state = recv_state(mine)
            assert state["you"] == 0 and state["spectators"] == 32


# ---------------------------------------------------------------- 4. a seat opened for an instant every second


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_a_seat_opened_for_an_instant_every_second_cannot_hold_its_turn() -> None:
    clock = Clock()
    setup = setup_for("japan", ["person", "greedy", "greedy", "greedy"], seed=5, pace=0.0, away_timeout=2.0)
    room = Room("r", setup, lambda spec, variant: make_agent(spec, variant, seed=0), None, clock)
    room.connect(0)
    while room.to_act != 0:  # the agents play up to the person's turn
        turn = room.agent_turn()
        assert turn is not None
        room.finish_agent_turn(turn, int(turn.agent.act(turn.obs, turn.ids, turn.counts)[0]))
    seq, played = room.view(0)["seq"], None
    for _ in range(10):  # 10 s of flapping: away 0.95 s, back for 0.05 s, again and again
        room.disconnect(0)
        clock.t += 0.95
        turn = room.agent_turn()
        room.connect(0)  # back for an instant while the stand-in chooses: its play stands
        if turn is not None:
            played = room.finish_agent_turn(turn, int(turn.agent.act(turn.obs, turn.ids, turn.counts)[0]))
            break
        clock.t += 0.05
    assert played is not None and played.by == "stand-in" and played.seq == seq, played
    assert clock.t < 3.5  # 2 s away in all: the third absence
    # the turn clock of a connected person runs from the turn's start, whatever reconnects meanwhile
    room.turn_timeout = 5.0
    while room.to_act != 0:
        turn = room.agent_turn(clock.t + 1)
        assert turn is not None
        room.finish_agent_turn(turn, int(turn.agent.act(turn.obs, turn.ids, turn.counts)[0]))
    start = clock.t
    for _ in range(20):
        room.disconnect(0)
        room.connect(0)
        clock.t += 0.5
        if room.controller() == "stand-in":
            break
    assert clock.t - start <= 5.0


# ---------------------------------------------------------------- 9. a play names its match


def test_a_play_of_the_previous_match_is_refused_in_the_next(server: Server) -> None:
    body = {**JAPAN, "settings": {"games": 1}, "seed": 3}
    _, room = server.api("/api/rooms", body, source="127.0.9.1")
    with connect(server.seat_ws(room["links"][0]), source_address=("127.0.9.1", 0)) as ws:
        deadline = time.monotonic() + 60
        for state in states_until(ws, deadline):
            if state["over"]:
                ws.send(json.dumps({"type": "next_match"}))
            elif state["legal"] and state["match"] == 1:
                play = {"type": "play", "cards": " ".join(state["legal"][-1]) or "pass", "seq": state["seq"]}
                ws.send(json.dumps({**play, "match": state["match"]}))
            elif state["legal"]:
                break
        assert state["match"] == 2 and state["legal"], state
        stale = {"type": "play", "cards": " ".join(state["legal"][-1]) or "pass", "seq": state["seq"], "match": 1}
        ws.send(json.dumps(stale))
        assert "made in match 1, but the room is at match 2" in recv_error(ws)["message"]
        ws.send(json.dumps({**stale, "match": 2}))
        assert recv_state(ws)["seq"] == state["seq"] + 1


# ---------------------------------------------------------------- 7. a view's cost does not grow with the match


def test_a_view_at_game_100_costs_what_it_costs_at_game_1(monkeypatch: pytest.MonkeyPatch) -> None:
    decoded = [0]
    decode = Game._decode

    def counted(self: Game, plays: Any) -> Any:
        decoded[0] += len(plays)
        return decode(self, plays)

    monkeypatch.setattr(Game, "_decode", counted)
    setup = setup_for("japan", ["greedy", "greedy"], seed=1, pace=0.0, games=100, players=2, cards_per_player=8)
    room = Room("r", setup, lambda spec, variant: make_agent(spec, variant, seed=0), None, lambda: 0.0)

    def cost() -> tuple[float, int]:
        room.view(None)  # a finished game's results are built once, here
        decoded[0] = 0
        start = time.perf_counter()
        for _ in range(50):
            room.view(None)
        return (time.perf_counter() - start) / 50, decoded[0]

    first = None
    while not room.game.is_over:
        if first is None and room.game.game_number == 2:
            first = cost()  # one finished game
        turn = room.agent_turn(1.0)
        assert turn is not None
        room.finish_agent_turn(turn, int(turn.agent.act(turn.obs, turn.ids, turn.counts)[0]))
    last = cost()  # 100 finished games
    assert first is not None and len(room.view(None)["results"]) == 100
    assert first[1] == last[1] == 0, (first, last)  # no view decodes a game's plays
    assert last[0] < 5 * first[0] + 0.002, (first, last)  # before: 70 ms a view at game 100 of japan
