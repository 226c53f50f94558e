"""The web table without a browser: room logic, game records, and the wire (no message shows a
seat another seat's hidden cards), against a real ``bigtwo serve`` where the wire is concerned."""

from __future__ import annotations

import json
import re
import signal
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest
from conftest import play_agent
from web_server import Server, play_text
from websockets.sync.client import connect

import bigtwo.env.records.record
from bigtwo.agents.registry import make_agent
from bigtwo.cli import main
from bigtwo.env.envs.game import Game
from bigtwo.env.records.record import check_record
from bigtwo.web.forms import RoomError, setup_for
from bigtwo.web.room import Room
from bigtwo.web.store import Store

CARD = re.compile(r"^(10|[2-9JQKA])[DCHS]$")


def agents(spec: str, variant: Any) -> Any:
    return make_agent(spec, variant, seed=0)


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


# ---------------------------------------------------------------- records


@pytest.mark.parametrize(
    ("variant", "overrides"), [("taiwan", {}), ("online-cn", {"games": 3}), ("japan", {"players": 3})]
)
def test_record_round_trip_through_the_engine(variant: str, overrides: dict[str, Any], tmp_path: Path) -> None:
    game = Game(variant, seed=21, **overrides)
    agent = make_agent("heuristic", game.variant)
    while not game.is_over:
        play_agent(game, agent)
    rec = game.to_record(seats=[f"p{i}" for i in range(game.players)])
    assert len(rec["games"]) == game.variant.games and rec["over"]
    path = bigtwo.env.records.record.write_record(tmp_path / "g.json", rec)
    again = Game.from_record(path)
    assert again.to_record(seats=rec["seats"]) == rec == json.loads(path.read_text())
    assert again.scores == game.scores and [r.payoffs for r in again.results] == [r.payoffs for r in game.results]


def test_a_record_with_a_given_deal_and_an_unfinished_game() -> None:
    hands = [" ".join(h) for h in Game("taiwan", seed=3).hands]
    game = Game("taiwan", seed=9, hands=hands[::-1])
    game.play(game.legal_plays()[1])
    rec = game.to_record()
    assert rec["first_deal"] == "given" and rec["games"][0]["winner"] is None and not rec["over"]
    again = Game.from_record(rec)
    assert again.hands == game.hands and again.current_player == game.current_player


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: r.update(format="x"), "format must be 'bigtwo-record'"),
        (lambda r: r.update(seed=-1), "seed must be an integer"),
        (lambda r: r["games"][0]["plays"].append([0, "3C"]), "play"),
        (lambda r: r["games"][0].update(winner=(r["games"][0]["winner"] + 1) % 4), "winner"),
        (lambda r: r["games"][0]["payoffs"].__setitem__(0, 99.0), "payoffs"),
        (lambda r: r["games"][0]["deal"].reverse(), "deal written is not the one"),
        (lambda r: r["games"][0]["plays"][0].__setitem__(1, "2S 2S"), "play 1"),
        (lambda r: r.update(extra=1), "unknown field"),
    ],
)
def test_a_record_that_does_not_fit_the_engine_is_refused(change: Any, message: str) -> None:
    game = Game("taiwan", seed=4)
    agent = make_agent("greedy", game.variant)
    while not game.is_over:
        play_agent(game, agent)
    rec = json.loads(json.dumps(game.to_record()))
    change(rec)
    with pytest.raises(ValueError, match=message):
        Game.from_record(rec)


def test_tournament_save_games_writes_records_that_replay(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "games"
    argv = ["tournament", "--variant", "taiwan", "--agents", "heuristic,random,greedy,random", "--deals", "2"]
    assert main([*argv, "--quiet", "--workers", "1", "--json", "--save-games", str(out)]) == 0
    result = json.loads(capsys.readouterr().out)
    files = sorted(out.glob("*.json"))
    assert [f.name for f in files][:2] == ["deal000000-rot0.json", "deal000000-rot1.json"] and len(files) == 8
    totals: dict[str, float] = {}
    for f in files:
        rec = check_record(json.loads(f.read_text()))
        game = Game.from_record(rec)
        assert game.is_over
        for name, score in zip(rec["seats"], game.scores, strict=True):
            totals[name] = totals.get(name, 0.0) + score
    for name, stats in result["agents"].items():  # the records add up to the tournament's payoffs
        assert totals[name] / stats["games"] == pytest.approx(stats["mean_payoff"], abs=1e-6)


# ---------------------------------------------------------------- room logic


def new_room(seats: list[str], clock: Clock, store: Store | None = None, **kw: Any) -> Room:
    setup = setup_for(kw.pop("variant", "japan"), seats, seed=kw.pop("seed", 5), **kw)
    if store is not None:
        store.add_room("r", setup)
    return Room("r", setup, agents, store, clock)


def play_agents_until_person(room: Room) -> None:
    while room.controller() in ("agent", "stand-in"):
        turn = room.agent_turn(room.clock() + 100)
        assert turn is not None
        room.finish_agent_turn(turn, int(turn.agent.act(turn.obs, turn.ids, turn.counts)[0]))


def test_room_refuses_bad_plays_and_changes_nothing() -> None:
    clock = Clock()
    room = new_room(["person", "greedy", "person", "greedy"], clock, pace=0)
    room.connect(0)
    room.connect(2)
    play_agents_until_person(room)
    me = room.to_act
    other = 2 if me == 0 else 0
    before = (room.view(me), room.view(None))
    hand = room.game.hands[me]
    theirs = room.game.hands[other][0]
    cases = [
        (lambda: room.play(other, "pass"), "not your turn"),
        (lambda: room.play(None, "pass"), "spectators cannot play"),
        (lambda: room.play(me, theirs), "not in hand"),
        (lambda: room.play(me, "3C 9H"), "not a play|not in hand"),
        (lambda: room.play(me, "XY"), "card"),
        (lambda: room.play(me, 7), "cards are text"),
        (lambda: room.play(me, hand[0], seq=len(room.moves) + 3), "match is at play"),
        (lambda: room.next_match(me), "still being played"),
        (lambda: room.set_pace(me, "fast"), "pace is a number"),
        (lambda: room.seat_for_token("nope"), "opens no seat"),
    ]
    for call, message in cases:
        with pytest.raises(RoomError, match=message):
            call()
    assert (room.view(me), room.view(None)) == before


def test_away_person_is_played_by_a_stand_in_until_they_come_back() -> None:
    clock = Clock()
    room = new_room(["person", "greedy", "greedy", "greedy"], clock, pace=0.5, away_timeout=10)
    room.connect(0)
    play_agents_until_person(room)
    assert room.controller() == "person" and room.agent_due() is None
    room.disconnect(0)
    clock.t += 5
    assert room.controller() == "waiting" and room.agent_turn() is None
    assert room.view(None)["seats"][0]["connection"] == "away" and room.view(None)["stand_in_in"] == 5.0
    clock.t += 5
    assert room.controller() == "stand-in" and room.view(None)["seats"][0]["connection"] == "stand-in"
    turn = room.agent_turn()
    assert turn is not None and turn.by == "stand-in"
    room.connect(0)  # back before the stand-in's play lands: the stand-in's play stands, the seat is theirs next turn
    move = room.finish_agent_turn(turn, int(turn.agent.act(turn.obs, turn.ids, turn.counts)[0]))
    assert move is not None and move.by == "stand-in"
    play_agents_until_person(room)
    assert room.controller() == "person" and room.view(0)["legal"]


def test_a_restored_room_stands_where_it_stood(tmp_path: Path) -> None:
    clock = Clock()
    store = Store(tmp_path / "rooms.sqlite")
    room = new_room(["person", "heuristic", "greedy", "random"], clock, store, pace=0)
    room.connect(0)
    for _ in range(3):
        play_agents_until_person(room)
        room.play(0, " ".join(room.view(0)["legal"][-1]) or "pass")
    store.close()
    again = Store(tmp_path / "rooms.sqlite")
    (stored,) = again.rooms()
    back = Room.restore(stored, agents, again, clock)
    back.connect(0)
    assert back.view(0) == room.view(0) and back.seats[0].token == room.seats[0].token
    with pytest.raises(sqlite3.IntegrityError):  # a play is never stored twice
        again.add_play("r", 1, 0, 0, "pass", "person")


def cards_in(message: Any) -> set[str]:
    """Every card named anywhere in a message, but the rule's opening card (public: the variant says it)."""
    found: set[str] = set()
    if isinstance(message, dict):
        for k, v in message.items():
            if k != "opening_card":
                found |= cards_in(v)
    elif isinstance(message, list):
        for v in message:
            found |= cards_in(v)
    elif isinstance(message, str):
        found |= {t for t in message.split() if CARD.match(t)}
    return found


def hidden_from(record: dict[str, Any], seat: int | None, seq: int) -> set[str]:
    """Cards still in other seats' hands after ``seq`` plays of a one-game match (all, for a spectator)."""
    g = record["games"][0]
    hands = [set(h.split()) for h in g["deal"]]
    for who, cards in g["plays"][:seq]:
        if cards != "pass":
            hands[who] -= set(cards.split())
    return set().union(*(h for i, h in enumerate(hands) if i != seat))


def test_views_never_show_another_seats_cards() -> None:
    clock = Clock()
    room = new_room(["person", "heuristic", "person", "greedy"], clock, pace=0)
    views: list[tuple[int | None, dict[str, Any]]] = []
    while not room.game.is_over:  # the people never come: after the away time stand-ins play for them
        views += [(s, room.view(s)) for s in (0, 1, 2, 3, None)]
        clock.t += 1000
        turn = room.agent_turn()
        assert turn is not None
        room.finish_agent_turn(turn, int(turn.agent.act(turn.obs, turn.ids, turn.counts)[0]))
    rec = room.record(1)
    for seat, view in views:
        if view["over"]:
            continue
        leaked = cards_in(view) & hidden_from(rec, seat, view["seq"])
        assert not leaked, (seat, view["seq"], leaked)
        if seat is not None:
            assert set(view["hand"]) <= cards_in(view)  # the check sees cards: its own hand is there


# ---------------------------------------------------------------- the wire, on a real server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    s = Server(tmp_path_factory.mktemp("wire") / "rooms.sqlite", pace=0.0, away=30.0)
    yield s
    s.stop()


def test_the_wire_never_carries_another_seats_cards(server: Server) -> None:
    room = server.room(variant="japan", seats=["person", "heuristic", "person", "greedy"], names=["a", "", "b", ""])
    got: dict[int | None, list[dict[str, Any]]] = {0: [], 2: [], None: []}
    urls = {0: server.seat_ws(room["links"][0]), 2: server.seat_ws(room["links"][1])}
    urls[None] = server.ws + "ws/" + room["room"]
    started = threading.Barrier(3)

    def client(seat: int | None) -> None:
        with connect(urls[seat]) as ws:
            started.wait()
            while True:
                m = json.loads(ws.recv(timeout=30))
                got[seat].append(m)
                if m["type"] == "state" and m["over"]:
                    return
                if m["type"] == "state" and m["legal"]:
                    if seat == 0 and len(got[0]) % 3 == 0:
                        ws.send(json.dumps({"type": "coach"}))
                    ws.send(play_text(m))

    threads = [threading.Thread(target=client, args=(s,)) for s in got]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    status, rec = server.api(f"/api/rooms/{room['room']}/record")
    assert status == 200
    for seat, messages in got.items():
        states = [m for m in messages if m["type"] == "state"]
        assert states[-1]["over"] and len(states) >= 10
        for m in messages:
            if m.get("over"):
                continue
            seq = m.get("seq", 0)
            leaked = cards_in(m) & hidden_from(rec, seat, seq)
            assert not leaked, (seat, m["type"], leaked)
        if seat is not None:
            assert any(m["type"] == "coach" for m in messages) or seat == 2
    assert all(m["you"] is None and m["hand"] is None for m in got[None] if m["type"] == "state")


def test_options_name_every_variant_and_its_default_opponent(server: Server) -> None:
    from bigtwo.agents import pretrained
    from bigtwo.env.rules.variant import variant_names

    status, first = server.api("/api/options")
    assert status == 200
    assert [v["name"] for v in first["variants"]] == variant_names()
    assert {"random", "greedy", "heuristic", "search", "strong"} <= set(first["agents"])
    for v in first["variants"]:
        expected = "strong" if pretrained.has_weights(v["name"]) else "heuristic"
        assert v["default"] == expected, v
        assert v["name"] in v["why"] and v["players"] >= 2
    assert {v["name"] for v in first["variants"] if v["default"] == "strong"} >= {"hong-kong", "taiwan"}
    status, again = server.api("/api/options")  # read once per server, answered the same
    assert status == 200 and again == first


def test_bad_messages_get_errors_and_change_nothing(server: Server) -> None:
    room = server.room(variant="japan", seats=["person", "greedy", "greedy", "greedy"], seed=8)
    with connect(server.seat_ws(room["links"][0])) as ws:
        state = json.loads(ws.recv(timeout=10))
        while not state["legal"]:
            state = json.loads(ws.recv(timeout=10))
        for bad, message in [
            ("not json", "JSON objects"),
            (json.dumps({"type": "shout"}), "unknown message type"),
            (json.dumps([1, 2]), "unknown message type"),
            (json.dumps({"type": "play"}), "needs 'cards'"),
            (json.dumps({"type": "play", "cards": "pass"}), "needs 'seq'"),
            (json.dumps({"type": "play", "cards": "pass", "seq": state["seq"]}), "needs 'match'"),
            (play_text(state, "pass", match=state["match"] + 1), "at match"),
            (play_text(state, "2S 3D 4H"), "not a play|not in hand"),
            (play_text(state, "pass", seq=state["seq"] - 1), "match is at play"),
            ("x" * 5000, "at most"),
        ]:
            ws.send(bad)
            reply = json.loads(ws.recv(timeout=10))
            assert reply["type"] == "error" and re.search(message, reply["message"]), (bad[:40], reply)
        ws.send(play_text(state))
        after = json.loads(ws.recv(timeout=10))
        assert after["type"] == "state" and after["seq"] == state["seq"] + 1  # nothing before changed the game
    with connect(server.ws + "ws/" + room["room"] + "?token=forged") as ws:
        reply = json.loads(ws.recv(timeout=10))
        assert reply["type"] == "error" and reply["fatal"] and "opens no seat" in reply["message"]
    other = server.room(variant="japan", seats=["person", "greedy", "greedy", "greedy"])
    token = room["links"][0]["url"].split("token=")[1]
    with connect(f"{server.ws}ws/{other['room']}?token={token}") as ws:  # a token opens only its own room's seat
        assert "opens no seat" in json.loads(ws.recv(timeout=10))["message"]
    status, out = server.api("/api/rooms", {"variant": "taiwan", "seats": ["person", "nobody", "greedy", "greedy"]})
    assert status == 400 and "unknown agent 'nobody'" in out["error"]
    status, out = server.api(f"/api/rooms/{room['room']}/record")
    assert status == 409 and "still being played" in out["error"]


def test_sigterm_stops_cleanly_and_a_restart_resumes(tmp_path: Path) -> None:
    db = tmp_path / "rooms.sqlite"
    first = Server(db, pace=0.0, away=30.0)
    room = first.room(variant="japan", seats=["person", "greedy", "greedy", "greedy"])
    url = first.seat_ws(room["links"][0])
    with connect(url) as ws:
        state = json.loads(ws.recv(timeout=10))
        while not state["legal"]:
            state = json.loads(ws.recv(timeout=10))
        ws.send(play_text(state))
        state = json.loads(ws.recv(timeout=10))
        while not state["legal"]:
            state = json.loads(ws.recv(timeout=10))
    status, out = first.stop(signal.SIGTERM)
    assert status == 0 and "stopped (SIGTERM)" in out and "Traceback" not in out
    store = Store(db)
    assert store.integrity() == "ok"
    store.close()
    second = Server(db, pace=0.0, away=30.0)
    try:
        with connect(url.replace(first.ws, second.ws)) as ws:
            again = json.loads(ws.recv(timeout=10))
        assert {k: again[k] for k in ("seq", "hand", "legal", "to_act")} == {
            k: state[k] for k in ("seq", "hand", "legal", "to_act")
        }
    finally:
        assert second.stop(signal.SIGINT)[0] == 0
