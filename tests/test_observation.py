"""The observation layout: one declaration (``LAYOUT``) behind the size, the kernels' offsets, the
decoder, the heuristic's reader and the documented tables; observations bit for bit as saved; and
version 1's parts (unseen cards, recent moves, passes, match scores and game number, opening owed,
breach, direction) on scripted positions and against a record of the moves kept here.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import numpy as np
import pytest

from bigtwo.agents import heuristic as H
from bigtwo.env.engine import observation as O
from bigtwo.env.engine.engine import Engine
from bigtwo.env.engine.observation import LAYOUT, ObsPart, decode_observation, obs_size, part_slices
from bigtwo.env.rules.cards import parse_cards
from bigtwo.env.rules.variant import load_variant

# Observations of every seat and their decoding over 150 random steps of 64 games, per variant
# (``jqka2_suited: flush``: the action table of the first saved digests). Observation version 1's
# digests were saved once its vectors were checked to hold version 0's parts, by name, with the
# very values the version 0 code wrote over these runs.
SAVED = (
    ({}, "76773d3e4c18ec3bc1375f79e09b6fcb301cca1a039482266f9fc25896acd1c5"),
    ({"players": 3}, "8585941259824e4519b8484986d00e4543524bbd4d05b97e8f9b653ce528da7c"),
    ({"players": 2, "cards_per_player": 26}, "9a6eefcf40dea4d21c3ca05655002b8be8653e0b1046cdd46d79e7e7acf96a21"),
    ({"players": 2}, "1ba3690685e237c0bdc5661ce8639abf3fd8af3e49b21e0407f326eb4448ebec"),
    (
        {"pair_chain": True, "last_card_rule": "enforce"},
        "1e2d18ee78499f224cb0df8eac5e6b90cff6943db0cdac4590eed8f591bbeccc",
    ),
    (
        {"last_card_rule": "liability", "two_ends_trick": True, "opening_card": "lowest", "players": 3},
        "fc2e6792415362b71195439daf6e007629484ca1330c31a35de9218e9ba60e76",
    ),
    (
        {"turn_order": "alternate", "games": 3, "last_card_rule": "liability"},
        "edacf1809ca97c1716f6b18ac2811536e3309174577046b2b22837aced6af6d6",
    ),
)
DECODED = (*(part.name for part in LAYOUT), "leading")


def observation_digest(overrides: dict, steps: int = 150, games: int = 64) -> str:
    variant = load_variant("taiwan", **{"jqka2_suited": "flush", **overrides})
    eng = Engine(variant, games, seed=0, autoreset=True)
    rng = np.random.default_rng(0)
    h = hashlib.sha256()
    for _ in range(steps):
        for s in range(variant.players):
            h.update(eng.observe(np.full(games, s)).tobytes())
        obs = eng.observe()
        h.update(obs.tobytes())
        parts = decode_observation(obs, variant.players)
        for name in DECODED:
            h.update(np.ascontiguousarray(parts[name]).tobytes())
        ids, n = eng.legal_actions()
        eng.step(ids[np.arange(games), (rng.random(games) * n).astype(np.int64)])
    return h.hexdigest()


@pytest.mark.parametrize(("overrides", "digest"), SAVED)
def test_observations_are_bit_identical_to_the_saved_batch(overrides: dict, digest: str) -> None:
    assert observation_digest(overrides) == digest


def test_the_docstring_tables_are_the_layout() -> None:
    from bigtwo.env.envs import aec

    assert O.layout_table() in aec.__doc__ and f"``obs_size(P)`` = {O.size_formula()}." in aec.__doc__
    assert f"(``obs_size(P)`` = {O.size_formula()}; {obs_size(4)} for 4)" in O.__doc__
    # the env's page writes the table in from LAYOUT: its source holds no copy of a row or a size
    source = Path(aec.__file__).read_text(encoding="utf-8")
    assert "| ``[0, 52)`` |" not in source and O.size_formula() not in source
    assert f"({O.size_formula()},) float32 ({obs_size(4)} for 4 players)" in aec.__doc__
    assert O.layout_table() in O.__doc__
    documented = re.findall(r"^\| ``\[[^|]*\| ``\[[^|]*\| ``(\w+)`` \|", O.__doc__, re.M)
    assert documented == [part.name for part in LAYOUT]


@pytest.mark.parametrize("players", [2, 3, 4])
def test_parts_tile_the_vector_in_layout_order(players: int) -> None:
    slices = list(part_slices(players).values())
    assert list(part_slices(players)) == [part.name for part in LAYOUT]
    assert slices[0].start == 0 and slices[-1].stop == obs_size(players) == 327 + 74 * players
    for part, at, nxt in zip(LAYOUT, slices, [*slices[1:], None], strict=True):
        assert at.stop - at.start == part.size(players)
        assert nxt is None or nxt.start == at.stop
        assert O.part_start(O.Part[part.name.upper()], players) == at.start
    assert Engine(load_variant("taiwan", players=players)).obs_size == obs_size(players)


def test_decoder_returns_every_part_by_name() -> None:
    eng = Engine("taiwan", 3, seed=4)
    parts = decode_observation(eng.observe(), 4)
    assert set(parts) == {part.name for part in LAYOUT} | {"leading"}
    assert parts["played"].shape == (3, 4, 52) and parts["legal_summary"].dtype == np.bool_
    assert parts["legal_summary"][:, 0].tolist() == [False] * 3  # the leader cannot pass
    assert parts["recent_seat"].shape == (3, 8) and parts["passed_on_strength"].shape == (3, 4, 5)
    with pytest.raises(ValueError, match="for 3 players has 549 slots, got shape"):
        decode_observation(eng.observe(), 3)


def test_a_part_must_say_how_it_is_read() -> None:
    with pytest.raises(ValueError, match="decoding must be one of cards, seat_cards"):
        ObsPart("tempo", 1, 0, "bits", "a new part")
    with pytest.raises(ValueError, match="52 slots per seat"):
        ObsPart("seen", 52, 0, "seat_cards", "a new part")
    with pytest.raises(ValueError, match="3 rows must divide its slots evenly"):
        ObsPart("moves", 8, 0, "flags", "a new part", rows=3)
    with pytest.raises(ValueError, match="one row per seat has no fixed slots"):
        ObsPart("moves", 8, 2, "flags", "a new part", rows="P")
    with pytest.raises(ValueError, match="bounds must be one of unit, match_score"):
        ObsPart("moves", 8, 0, "values", "a new part", bounds="any")


@pytest.mark.parametrize("players", [2, 4])
def test_the_heuristics_reader_reads_what_the_decoder_reads(players: int) -> None:
    variant = load_variant("taiwan", players=players, last_card_rule="enforce")
    eng = Engine(variant, 32, seed=2, autoreset=True)
    agent = H.HeuristicAgent(variant)
    rules, cpp = agent.ctx.rules, variant.cards_per_player
    rng = np.random.default_rng(1)
    counts = np.zeros(players, np.int64)
    for _ in range(60):
        obs = eng.observe()
        parts = decode_observation(obs, players)
        for g in range(eng.num_matches):
            hand, unseen, _, table, owner, duty, opening = H.read_obs(obs[g], rules, counts)
            seen = parts["hand"][g] | parts["played"][g].any(0)
            assert int(hand) == sum(1 << int(c) for c in np.flatnonzero(parts["hand"][g]))
            assert int(unseen) == sum(1 << c for c in range(52) if not seen[c])
            assert counts.tolist() == np.rint(parts["cards_left_fraction"][g] * cpp).astype(int).tolist()
            assert table == (0 if parts["leading"][g] else eng.table.encode(np.flatnonzero(parts["table"][g]).tolist()))
            assert owner == parts["table_seat"][g] and duty == parts["duty"][g]
            assert opening == (int(np.argmax(parts["opening_card"][g])) if parts["opening_card"][g].any() else -1)
        ids, n = eng.legal_actions()
        eng.step(ids[np.arange(eng.num_matches), (rng.random(eng.num_matches) * n).astype(np.int64)])


# ---------------------------------------------------------------- version 1's parts, scripted


def mask(text: str) -> int:
    return sum(1 << c for c in parse_cards(text))


def cards(text: str) -> list[int]:
    return sorted(parse_cards(text))


def seen_by(eng: Engine, seat: int) -> dict[str, np.ndarray]:
    return decode_observation(eng.observe(np.full(eng.num_matches, seat))[0].copy(), eng.players)


def test_recent_moves_passes_and_unseen_cards_on_a_scripted_trick() -> None:
    # Taiwan, 4 players: seat 0 led 4D, seat 1 answered 7D, seat 2 9D, seat 3 passed; seat 0 to act.
    eng = Engine("taiwan", 1, seed=0)
    t = eng.table
    hands = [mask("3D 5H 9S KD AS"), mask("6D 6C 8H 2S"), mask("8D 8C JH QS"), mask("10D 10C 2D 3C")]
    played = [mask("4D"), mask("7D"), mask("9D"), 0]
    four, seven, nine = t.encode("4D"), t.encode("7D"), t.encode("9D")
    passed = np.zeros((4, 5), np.int64)
    passed[3, 0] = nine
    eng.set_position(
        0,
        np.array(hands, np.uint64),
        np.array(played, np.uint64),
        current=0,
        table_action=nine,
        table_seat=2,
        passes=1,
        hist_action=[0, nine, seven, four],
        hist_seat=[3, 2, 1, 0],
        passed_on=passed,
    )
    d = seen_by(eng, 0)
    assert np.flatnonzero(d["unseen"]).tolist() == sorted(set(range(52)) - set(cards("3D 5H 9S KD AS 4D 7D 9D")))
    assert d["recent_seat"].tolist() == [3, 2, 1, 0, -1, -1, -1, -1]
    assert d["recent_kind"].tolist() == [0, 1, 1, 1, -1, -1, -1, -1]  # KINDS: pass, single, ...
    np.testing.assert_allclose(d["recent_strength"], [0, 24 / 51, 16 / 51, 4 / 51, 0, 0, 0, 0], rtol=1e-6)
    assert d["passed_on"].tolist() == [[False] * 5, [False] * 5, [False] * 5, [True, False, False, False, False]]
    np.testing.assert_allclose(d["passed_on_strength"][3], [24 / 51, 0, 0, 0, 0], rtol=1e-6)
    assert not d["passed_on_strength"][:3].any()
    d1 = seen_by(eng, 1)  # the same moves from seat 1: seat 3 is two places on
    assert d1["recent_seat"].tolist() == [2, 1, 0, 3, -1, -1, -1, -1]
    assert d1["passed_on"][2, 0] and d1["passed_on"].sum() == 1
    assert np.flatnonzero(d1["unseen"]).tolist() == sorted(set(range(52)) - set(cards("6D 6C 8H 2S 4D 7D 9D")))

    # seat 0 and seat 1 pass (the trick clears: seat 2 leads), seat 2 leads 8D 8C, seat 3, seat 0
    # (no pair) and seat 1 pass (seat 2 leads again), seat 2 leads JH, seat 3 passes.
    pair = t.encode("8D 8C")
    for a in (0, 0, pair, 0, 0, 0, t.encode("JH"), 0):
        eng.step([a])
    d = seen_by(eng, 0)
    assert d["recent_seat"].tolist() == [3, 2, 1, 0, 3, 2, 1, 0]
    assert d["recent_kind"].tolist() == [0, 1, 0, 0, 0, 2, 0, 0]
    jh = (8 * 4 + 2) / 51  # J is rank 8, H the third suit of taiwan's order D C H S
    # pairs: by rank, then the higher suit (C, H or S): 39 strengths; 8D 8C is rank 5's first
    eights = 5 * 3 / 38
    np.testing.assert_allclose(d["recent_strength"], [0, jh, 0, 0, 0, eights, 0, 0], rtol=1e-6)
    # seat 3 passed on 9D, then on 8D 8C and on JH: its weakest single stays 9D
    assert d["passed_on"].tolist() == [
        [True, True, False, False, False],
        [True, True, False, False, False],
        [False] * 5,
        [True, True, False, False, False],
    ]
    np.testing.assert_allclose(d["passed_on_strength"][3], [24 / 51, eights, 0, 0, 0], rtol=1e-6)


def test_match_scores_game_number_breach_and_direction_on_a_scripted_position() -> None:
    # online-cn (pairwise, worst payoff -39 with 4 players), game 2 of 3, played in reverse.
    v = load_variant("online-cn", games=3)
    eng = Engine(v, 1, seed=0)
    hands = np.array([mask("3D 5H"), mask("6D 6C"), mask("8D 8C"), mask("2D")], np.uint64)
    breach = [False, False, True, False]  # broken against seat 2: by seat 3, the seat before it in reverse
    eng.set_position(
        0, hands, current=0, match_scores=[12.0, -4.0, -8.0, 0.0], games_played=1, breach=breach, reverse=True
    )
    d = seen_by(eng, 0)  # reversed: relative seats 0, 1, 2, 3 are seats 0, 3, 2, 1
    np.testing.assert_allclose(d["match_scores"], [12 / 39, 0, -8 / 39, -4 / 39], rtol=1e-6)
    assert d["games_played_fraction"].tolist() == pytest.approx([1 / 3])
    assert d["first_game"].tolist() == [False] and d["opening_owed"].tolist() == [False]
    assert d["breach"].tolist() == [False] and d["reversed"].tolist() == [True]
    d1 = seen_by(eng, 1)
    np.testing.assert_allclose(d1["match_scores"], [-4 / 39, 12 / 39, 0, -8 / 39], rtol=1e-6)
    assert d1["breach"].tolist() == [False] and d1["reversed"].tolist() == [True]
    assert seen_by(eng, 3)["breach"].tolist() == [True]  # only the breaker sees it
    low, high = O.obs_bounds(v)
    at = part_slices(4)["match_scores"]
    assert (low[at] == -27).all() and (high[at] == 27).all() and low[: at.start].min() == 0  # 3 games x 3^2

    # the match's first game, its first play still owed: every seat sees that, only the leader the card
    eng.set_position(0, hands, current=0, opening=parse_cards("3D")[0])
    for seat in range(4):
        d = seen_by(eng, seat)
        assert d["opening_owed"].tolist() == [True] and d["first_game"].tolist() == [True]
        assert d["games_played_fraction"].tolist() == [0.0] and d["opening_card"].any() == (seat == 0)
        assert not d["reversed"].any() and not d["match_scores"].any()
    eng.step([eng.table.encode("3D")])
    assert not seen_by(eng, 2)["opening_owed"].any()


def test_unseen_cards_include_the_undealt_ones() -> None:
    eng = Engine(load_variant("hong-kong", players=3), 1, seed=5)
    d = seen_by(eng, 1)
    hand = set(np.flatnonzero(d["hand"]).tolist())
    assert set(np.flatnonzero(d["unseen"]).tolist()) == set(range(52)) - hand  # 26 held by others, 13 undealt


def test_the_history_is_cleared_when_a_game_is_dealt() -> None:
    v = load_variant("taiwan", cards_per_player=2, games=2)
    eng = Engine(v, 1, seed=0)
    eng.reset(seed=0, hands=[["3C 4D", "5D 6D", "7D 8D", "9D 10D"]])
    t = eng.table
    for a in ("3C", "pass", "pass", "pass", "4D"):  # seat 0 leads, everyone passes, seat 0 goes out
        eng.step([t.encode(a)])
    S = eng.state
    assert S.games_played[0] == 1 and (S.hist_action[0] == -1).all() and (S.hist_seat[0] == -1).all()
    assert not S.passed_on[0].any()
    d = seen_by(eng, 0)
    assert (d["recent_seat"] == -1).all() and not d["passed_on"].any() and not d["first_game"].any()
    assert d["games_played_fraction"].tolist() == [0.5] and d["match_scores"][0] == 0.0


# ---------------------------------------------------------------- version 1's parts, random play


TRACKED = [
    ("taiwan", {}),
    ("online-cn", {"players": 3, "games": 3}),  # two_ends_trick, liability, alternate direction
    ("japan", {"pair_chain": True, "players": 2, "cards_per_player": 20}),
    ("taiwan", {"cards_per_player": 5, "games": 4, "turn_order": "random", "last_card_rule": "liability"}),
]


@pytest.mark.parametrize(("name", "overrides"), TRACKED)
def test_recent_moves_and_passes_follow_the_moves(name: str, overrides: dict) -> None:
    """Every seat's version 1 parts against a record of the moves kept here, at every step of
    random matches (tricks cleared by passes and by 2s, games ending, matches restarting)."""
    v = load_variant(name, **overrides)
    games, p = 6, v.players
    eng = Engine(v, games, seed=3, autoreset=True)
    T, S = eng.table, eng.state
    places = T.places()
    rng = np.random.default_rng(4)
    moves: list[list[tuple[int, int]]] = [[] for _ in range(games)]  # this game's (seat, action)
    weakest = [{} for _ in range(games)]  # (seat, size) -> weakest table play it passed on
    worst = abs(v.worst_payoff)
    checked = 0
    for _ in range(400):
        for g in range(games):
            order = -1 if S.reverse[g] else 1
            for seat in range(p):
                d = decode_observation(eng.observe(np.full(games, seat))[g].copy(), p)
                rel = [(seat + order * k) % p for k in range(p)]  # relative seat k -> seat
                last = moves[g][::-1][: len(d["recent_seat"])]
                assert d["recent_seat"].tolist() == [rel.index(s) for s, _ in last] + [-1] * (8 - len(last))
                assert d["recent_kind"].tolist() == [int(T.kinds[a]) for _, a in last] + [-1] * (8 - len(last))
                np.testing.assert_allclose(d["recent_strength"][: len(last)], [places[a] for _, a in last], rtol=1e-6)
                for k in range(p):
                    for j, size in enumerate((1, 2, 3, 5, 6)):
                        t = weakest[g].get((rel[k], size), 0)
                        assert d["passed_on"][k, j] == (t > 0)
                        assert d["passed_on_strength"][k, j] == pytest.approx(places[t] if t else 0.0, rel=1e-6)
                np.testing.assert_allclose(d["match_scores"], S.match_scores[g][rel] / worst, rtol=1e-6, atol=1e-7)
                assert d["breach"][0] == S.breach[g, rel[1]]  # the observer broke the rule against the next seat
                assert d["reversed"][0] == S.reverse[g] and d["opening_owed"][0] == (S.opening[g] >= 0)
                assert d["first_game"][0] == (S.games_played[g] == 0)
                held_or_played = int(S.hands[g, seat]) | int(np.bitwise_or.reduce(S.played[g]))
                assert np.flatnonzero(d["unseen"]).tolist() == [c for c in range(52) if not held_or_played >> c & 1]
                checked += 1
        ids, n = eng.legal_actions()
        actions = ids[np.arange(games), (rng.random(games) * n).astype(np.int64)].astype(np.int64)
        movers, tables = S.current.copy(), S.table_action.copy()
        result = eng.step(actions)
        for g in range(games):
            if result.game_over[g]:
                moves[g], weakest[g] = [], {}
                continue
            moves[g].append((int(movers[g]), int(actions[g])))
            if actions[g] == 0:
                key = (int(movers[g]), int(T.sizes[tables[g]]))
                weakest[g][key] = min(weakest[g].get(key, 1 << 30), int(tables[g]))
    assert checked > 0


def test_step_observe_rows_steps_only_those_matches_as_step_would() -> None:
    """``Engine.step_observe_rows`` (what a search stepping some of its copies runs) plays and observes
    exactly as ``step`` then ``observe`` would in the matches it names, and leaves every other match
    and its observation row as they were; an illegal play (or a finished match) changes nothing."""
    games = 40
    rows_engine, whole = (Engine(load_variant("hong-kong", games=1), games, seed=5) for _ in range(2))
    obs = rows_engine.observe().copy()
    snapshot = [a.copy() for a in rows_engine.state]
    with pytest.raises(ValueError, match="match 3 .*not legal|match 3 .*illegal|match 3"):
        rows_engine.step_observe_rows(np.array([1, 3]), np.array([rows_engine.legal_actions()[0][1, 0], -7]))
    assert all(np.array_equal(a, b) for a, b in zip(snapshot, rows_engine.state, strict=True)), "nothing changed"
    rng = np.random.default_rng(1)
    for _ in range(400):
        ids, n = whole.legal_actions()
        live = np.flatnonzero(~whole.over)
        if not live.size:
            break
        rows = np.sort(rng.choice(live, size=max(1, live.size // 2), replace=False))
        actions = np.full(games, -1, dtype=np.int64)
        actions[rows] = ids[rows, (rng.random(rows.size) * n[rows]).astype(np.int64)]
        before = obs.copy()
        obs = rows_engine.step_observe_rows(rows, actions[rows]).copy()
        whole.step(actions)
        expected = whole.observe()
        still = np.setdiff1d(np.arange(games), rows)
        assert np.array_equal(obs[rows], expected[rows]) and np.array_equal(obs[still], before[still])
        for mine, theirs in zip(rows_engine.state, whole.state, strict=True):
            if mine.ndim and mine.shape[0] == games and mine.dtype != np.bool_:
                assert np.array_equal(mine[rows], theirs[rows])
    assert whole.over.any()
    done = int(np.flatnonzero(whole.over)[0])
    with pytest.raises(ValueError, match=f"match {done} is over"):
        rows_engine.step_observe_rows(np.array([done]), np.array([0]))
    with pytest.raises(ValueError, match="distinct match indices"):
        rows_engine.step_observe_rows(np.array([1, 1]), np.array([0, 0]))


@pytest.mark.parametrize(("games", "threads", "overrides"), [(64, 1, o) for o, _ in SAVED] + [(1100, 2, {})])
def test_step_observe_in_one_pass_matches_step_then_observe(games: int, threads: int, overrides: dict) -> None:
    """``Engine.step_observe`` (the vector env's one-pass step) gives the same observations,
    legal lists and payoffs, bit for bit, as ``step`` then ``observe``; also on thread slices."""
    variant = load_variant("taiwan", **{"jqka2_suited": "flush", **overrides})
    fused, apart = (Engine(variant, games, seed=3, autoreset=True, threads=threads) for _ in range(2))
    rng = np.random.default_rng(3)
    for _ in range(120):
        ids, n = apart.legal_actions()
        actions = ids[np.arange(games), (rng.random(games) * n).astype(np.int64)]
        result, obs = fused.step_observe(actions)
        expected = apart.step(actions)
        assert np.array_equal(obs, apart.observe())
        assert np.array_equal(result.payoffs, expected.payoffs) and np.array_equal(
            result.match_over, expected.match_over
        )
        assert all(np.array_equal(a, b) for a, b in zip(fused.legal_actions(), apart.legal_actions(), strict=True))
