"""Files written before the one-namespace change (0.1, when the kit installed ``bigtwo_env``,
``agents``, ``train``...) keep loading: they hold names and settings, never module paths.

- ``tests/data/records-0.1.jsonl``: a tournament's game records (``bigtwo tournament --records``,
  taiwan, 2 games a match, 4 rotations of one deal), written by 0.1;
- ``tests/data/web-store-0.1.sqlite3``: a web table's store written by 0.1's ``bigtwo serve``
  (a person-and-agents taiwan room and an agent-only hong-kong room, each with a finished match);
- the shipped networks (``agents/pretrained/*.pt``, trained and exported before the change) are
  loaded by tests/test_pretrained.py and tests/test_package.py.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bigtwo.env import Game
from bigtwo.env.records.record import read_records

DATA = Path(__file__).resolve().parent / "data"


def test_records_written_before_replay_through_todays_engine_to_their_payoffs() -> None:
    records = list(read_records(DATA / "records-0.1.jsonl"))
    assert len(records) == 4
    for record in records:
        game = Game.from_record(record)  # every play through the engine; a disagreement raises
        assert [list(r.payoffs) for r in game.results] == [g["payoffs"] for g in record["games"]]
        assert game.to_record(seats=record["seats"], info=record["info"])["games"] == record["games"]


def test_a_web_store_written_before_loads_its_rooms_and_their_records(tmp_path: Path) -> None:
    pytest.importorskip("starlette")
    from web_server import Server

    db = tmp_path / "store.sqlite3"
    shutil.copy(DATA / "web-store-0.1.sqlite3", db)
    server = Server(db, pace=0.0)
    try:
        status, lobby = server.api("/api/rooms")
        assert status == 200
        rooms = {room["variant"]: room for room in lobby["rooms"]}
        assert set(rooms) == {"taiwan", "hong-kong"}
        assert [seat["name"] for seat in rooms["hong-kong"]["seats"]] == ["greedy"] * 4
        for room in rooms.values():
            assert room["finished_matches"] == [1]
            status, record = server.api(f"/api/rooms/{room['room']}/record?match=1")
            assert status == 200
            game = Game.from_record(record)  # the stored match, replayed by today's engine
            assert game.variant.name == room["variant"]
            assert [list(r.payoffs) for r in game.results] == [g["payoffs"] for g in record["games"]]
    finally:
        code, out = server.stop()
    assert code == 0, out
