"""Game records as data (issue #29 item 5): ``bigtwo tournament --records``, ``bigtwo replay``,
the supervised-learning loader ``bigtwo.env.records.dataset`` and the web table's export, all in the one
record format of ``bigtwo.env.records.record``."""

from __future__ import annotations

import json
import re
import time
import urllib.request
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from web_server import Server

import bigtwo.env
from bigtwo.arena.replay import replay
from bigtwo.arena.tournament import run_tournament
from bigtwo.cli import main
from bigtwo.env.envs.game import Game
from bigtwo.env.records.dataset import iter_decisions, load_decisions
from bigtwo.env.records.record import check_record, read_records, record_at, record_line, write_records
from bigtwo.web.export import export_records
from bigtwo.web.forms import setup_for
from bigtwo.web.room import Room
from bigtwo.web.store import Store

AGENTS = ["heuristic", "random", "greedy", "random"]


@pytest.fixture(scope="module")
def tournament_records(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """A tournament of 5 deals in 3 chunks played by 2 worker processes, with its records."""
    path = tmp_path_factory.mktemp("records") / "games.jsonl"
    result = run_tournament("taiwan", AGENTS, deals=5, seed=11, workers=2, progress=False, chunk_deals=2, records=path)
    return path, result


# ---------------------------------------------------------------- tournament --records


def test_tournament_records_replay_to_their_payoffs_in_deal_order(tournament_records: tuple[Path, Any]) -> None:
    path, result = tournament_records
    records = list(read_records(path))
    assert len(records) == 5 * 4 == len(path.read_text().splitlines())
    assert [(r["info"]["deal"], r["info"]["rotation"]) for r in records] == [(d, r) for d in range(5) for r in range(4)]
    totals = dict.fromkeys(result.names, 0.0)
    for rec in records:
        assert rec["info"]["tournament_seed"] == 11
        assert sorted(rec["seats"]) == sorted(["heuristic", "random", "greedy", "random#2"])
        assert [a for a in rec["info"]["agents"]] == [s.split("#")[0] for s in rec["seats"]]
        game = Game.from_record(rec)  # every play goes through the engine, payoffs checked
        assert game.is_over and [g["payoffs"] for g in rec["games"]] == [list(r.payoffs) for r in game.results]
        for name, score in zip(rec["seats"], game.scores, strict=True):
            totals[name] += score
    for stats in result.stats:  # the records add up to what the tournament reports
        assert totals[stats.name] / stats.games == pytest.approx(stats.mean_payoff, abs=1e-9)


def test_tournament_records_are_the_same_bytes_for_any_workers(
    tournament_records: tuple[Path, Any], tmp_path: Path
) -> None:
    path, _ = tournament_records
    again = tmp_path / "one.jsonl"
    folder = tmp_path / "games"
    run_tournament(
        "taiwan", AGENTS, deals=5, seed=11, workers=1, progress=False, chunk_deals=2, records=again, save_games=folder
    )
    assert again.read_bytes() == path.read_bytes()
    lines = path.read_text().splitlines()
    files = sorted(folder.glob("*.json"))  # --save-games: the same records, one file each
    assert len(files) == len(lines) and files[5].name == "deal000001-rot1.json"
    assert [record_line(json.loads(f.read_text())) for f in files] == lines


def test_tournament_refuses_a_records_path_that_is_a_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["tournament", "--agents", "random*4", "--deals", "1", "--quiet", "--records", str(tmp_path)]
    assert main(argv) == 2
    assert "records must be a file to write" in capsys.readouterr().err


def test_a_damaged_record_is_refused_naming_the_play(tournament_records: tuple[Path, Any]) -> None:
    rec = record_at(tournament_records[0], 3)
    plays = rec["games"][0]["plays"]
    j = next(i for i, (_, cards) in enumerate(plays) if i > 4 and cards != "pass")
    seat = plays[j][0]
    theirs = rec["games"][0]["deal"][(seat + 1) % 4].split()[-1]  # a card of another seat's hand
    plays[j][1] = theirs
    with pytest.raises(
        ValueError, match=rf"^record game 1, play {j + 1}: seat {seat} cannot play {theirs}: not in hand"
    ):
        Game.from_record(rec)
    with pytest.raises(ValueError, match=rf"^record 0: record game 1, play {j + 1}: "):
        next(iter_decisions([rec]))
    rec = record_at(tournament_records[0], 3)
    rec["games"][0]["plays"][j][1] = "pass"  # a legal play, but not the one made: the game goes elsewhere
    with pytest.raises(ValueError, match=r"^record game 1(, play \d+|: (payoffs|winner|a winner|the game))"):
        Game.from_record(rec)
    rec = record_at(tournament_records[0], 3)
    rec["games"][0]["payoffs"][0] += 1
    with pytest.raises(ValueError, match="payoffs .* written, the engine says"):
        Game.from_record(rec)


def test_reading_records_names_the_bad_line(tmp_path: Path, tournament_records: tuple[Path, Any]) -> None:
    lines = tournament_records[0].read_text().splitlines()
    bad = tmp_path / "bad.jsonl"
    bad.write_text(lines[0] + "\n\n" + '{"format": "nope"}\n')
    with pytest.raises(ValueError, match=r"line 3 \(record 2\): game record: .*format"):
        list(read_records(bad))
    with pytest.raises(ValueError, match=r"has records 0..2 \(one a line\); there is no record 7"):
        record_at(bad, 7)
    assert record_at(bad, 0) == json.loads(lines[0])
    assert write_records(tmp_path / "two.jsonl", read_records(tournament_records[0])) == len(lines)


# ---------------------------------------------------------------- the loader


def _aec_steps(variant: str, seed: int, **overrides: Any) -> tuple[dict[str, Any], list[tuple[int, Any, Any, int]]]:
    """A match played through the AEC env by seeded random choices: its record and, per step,
    (seat, observation, legal ids, action) as the env gave them."""
    env = bigtwo.env.env(variant, **overrides)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    steps = []
    while env.agents:
        agent = env.agent_selection
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        legal = obs["action_mask"].nonzero()[0]
        action = int(rng.choice(legal))
        steps.append((int(agent.split("_")[1]), obs["observation"].copy(), legal, action))
        env.step(action)
    return env.unwrapped.game.to_record(), steps


@pytest.mark.parametrize(("variant", "overrides"), [("taiwan", {}), ("japan", {"players": 3, "games": 2})])
def test_the_loader_gives_what_the_aec_env_gave(variant: str, overrides: dict[str, Any]) -> None:
    record, steps = _aec_steps(variant, 5, **overrides)
    decisions = list(iter_decisions(record))
    assert len(decisions) == len(steps)
    for (_, obs, legal, action), (d_obs, d_legal, d_action) in zip(steps, decisions, strict=True):
        assert d_obs.dtype == np.float32 and np.array_equal(d_obs, obs)
        assert np.array_equal(d_legal, legal) and d_action == action
    mine = [s for s in steps if s[0] == 1]
    data = load_decisions(json.loads(json.dumps(record)), seat=1)  # as read back from a file
    assert len(data["action"]) == len(mine) and (data["seat"] == 1).all()
    for row, (_, obs, legal, action) in enumerate(mine):
        assert np.array_equal(data["observation"][row], obs) and data["action"][row] == action
        n = data["legal_counts"][row]
        assert np.array_equal(data["legal_ids"][row, :n], legal) and (data["legal_ids"][row, n:] == -1).all()
    payoffs = {g["number"]: g["payoffs"][1] for g in record["games"]}
    assert data["payoff"].tolist() == [payoffs[g] for g in data["game"].tolist()]


def test_load_decisions_reads_a_tournament_file_whose_rows_an_agent_can_act_on(
    tournament_records: tuple[Path, Any],
) -> None:
    from bigtwo.agents.registry import make_agent

    data = load_decisions(tournament_records[0])
    total = sum(len(g["plays"]) for r in read_records(tournament_records[0]) for g in r["games"])
    assert data["observation"].shape == (total, 623) and set(data["record"].tolist()) == set(range(20))
    chosen = make_agent("greedy", "taiwan").act(data["observation"], data["legal_ids"], data["legal_counts"])
    assert all(chosen[i] in data["legal_ids"][i, : data["legal_counts"][i]] for i in range(total))
    assert all(data["action"][i] in data["legal_ids"][i, : data["legal_counts"][i]] for i in range(total))
    other = Game("japan", seed=1)
    other.play(other.legal_plays()[-1])
    with pytest.raises(ValueError, match="record 1: its variant differs from record 0's"):
        load_decisions([record_at(tournament_records[0], 0), other.to_record()])
    with pytest.raises(ValueError, match="seat must be a seat 0..3"):
        load_decisions(tournament_records[0], seat=4)


# ---------------------------------------------------------------- bigtwo replay


def test_replay_prints_every_play_of_the_chosen_record(
    tournament_records: tuple[Path, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    path = tournament_records[0]
    rec = record_at(path, 6)
    assert main(["replay", str(path), "--game", "6"]) == 0  # stdin is no terminal here: all at once
    out = capsys.readouterr().out
    plays = rec["games"][0]["plays"]
    for i, (seat, cards) in enumerate(plays, 1):
        assert f"{i:4d}. {rec['seats'][seat]} (seat {seat}): {cards}\n" in out
    assert f"{len(plays) + 1:4d}. " not in out
    winner = rec["seats"][rec["games"][0]["winner"]]
    assert f"game 1 over: {winner} won" in out and "deal 1, rotation 2" in out
    assert " ".join(rec["games"][0]["deal"][1].split()) in out  # every hand shown at the start
    assert main(["replay", str(path), "--game", "6", "--seat", "2", "--all"]) == 0
    seen = capsys.readouterr().out
    assert rec["games"][0]["deal"][2] in seen and rec["games"][0]["deal"][1] not in seen and "(hidden)" in seen


def test_replay_steps_one_play_per_enter_and_stops_on_q(tmp_path: Path) -> None:
    g = Game("taiwan", seed=2)
    while not g.is_over:
        g.play(g.legal_plays()[0 if len(g.legal_plays()) < 3 else 1])
    path = tmp_path / "one.json"
    path.write_text(json.dumps(g.to_record(seats=["ann", "bob", "cy", "dee"])))
    answers = iter(["", "", "q"])
    out = tmp_path / "out.txt"
    with out.open("w") as handle:
        shown = replay(path, step=True, out=handle, ask=lambda: next(answers))
    text = out.read_text()
    assert shown == 3 and "   3. " in text and "   4. " not in text
    assert text.count("Big Two · taiwan") == 1 + 3  # the table at the start and after each play


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.json"], "cannot read game record"),
        (["games.jsonl", "--game", "20"], r"has records 0..19 \(one a line\); there is no record 20"),
        (["games.jsonl", "--game", "-1"], "a whole number 0 or more"),
        (["games.jsonl", "--seat", "4"], r"--seat must be a seat 0..3"),
        (["games.json", "--game", "1"], r"holds one record \(index 0\)"),
        (["not-a-record.json"], "format must be 'bigtwo-record'"),
        (["damaged.json"], r"record game 1, play 1: seat \d is written as playing, but seat \d is to act"),
    ],
)
def test_replay_refuses_bad_input_with_status_2(
    args: list[str],
    message: str,
    tournament_records: tuple[Path, Any],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "games.jsonl").write_bytes(tournament_records[0].read_bytes())
    rec = record_at(tournament_records[0], 0)
    (tmp_path / "games.json").write_text(json.dumps(rec))
    (tmp_path / "not-a-record.json").write_text(json.dumps({"format": "csv"}))
    rec["games"][0]["plays"][0][0] = (rec["games"][0]["plays"][0][0] + 1) % 4
    (tmp_path / "damaged.json").write_text(json.dumps(rec))
    assert main(["replay", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("bigtwo replay: error: ") and "Traceback" not in err
    assert re.search(message, err), err


# ---------------------------------------------------------------- the web table's export


def _agents(spec: str, variant: Any) -> Any:
    from bigtwo.agents.registry import make_agent

    return make_agent(spec, variant, seed=0)


def _one_turn(room: Room) -> None:
    """The seat to act plays: its agent, or the person (seat 1) their weakest legal play."""
    turn = room.agent_turn()
    if turn is None:
        room.play(room.to_act, " ".join(room.view(room.to_act)["legal"][0]) or "pass")
    else:
        room.finish_agent_turn(turn, int(turn.agent.act(turn.obs, turn.ids, turn.counts)[0]))


def test_a_room_gives_only_finished_matches_records(tmp_path: Path) -> None:
    store = Store(tmp_path / "rooms.sqlite")
    setup = setup_for("taiwan", ["greedy", "person", "greedy", "random"], seed=3, pace=0)
    store.add_room("r", setup)
    room = Room("r", setup, _agents, store, lambda: 0.0)
    room.connect(1)  # the person is there: their turns wait for them
    assert room.finished_records() == []
    while not room.game.is_over:
        _one_turn(room)
    (first,) = room.finished_records()
    assert first == room.record(1) and first["info"] == {"room": "r", "match": 1, "people": [1]}
    room.next_match(1)
    _one_turn(room)  # match 2 has begun: never exported
    assert room.finished_records() == [first]
    out = tmp_path / "export.jsonl"
    assert export_records(tmp_path / "rooms.sqlite", out) == 1
    assert out.read_text() == record_line(first) + "\n"
    check_record(Game.from_record(first).to_record())
    with pytest.raises(ValueError, match="is no file"):
        export_records(tmp_path / "none.sqlite", out)


def test_the_server_exports_its_finished_games_as_records(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "web.sqlite"
    server = Server(db, pace=0.0, away=0.05)
    try:
        room = server.room(variant="taiwan", seats=["person", "greedy", "greedy", "greedy"], pace=0, away_timeout=0.05)
        url = f"{server.url}api/rooms/{room['room']}/records.jsonl"
        deadline = time.monotonic() + 60
        while True:
            with urllib.request.urlopen(url, timeout=30) as res:
                body = res.read().decode()
                assert res.headers["Content-Type"].startswith("application/x-ndjson")
            if body or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        status, rec = server.api(f"/api/rooms/{room['room']}/record?match=1")
        assert status == 200 and body == record_line(rec) + "\n"
        assert rec["over"] and rec["info"]["people"] == [0]
        Game.from_record(rec)
        status, _ = server.api("/api/rooms/nope/records.jsonl")
        assert status == 404
    finally:
        server.stop()
    out = tmp_path / "export.jsonl"
    assert main(["serve", "--db", str(db), "--export", str(out)]) == 0
    assert out.read_text() == body and "wrote 1 game record(s)" in capsys.readouterr().err
