"""The privileged global state (``bigtwo.env.engine.state``): its layout, what it holds, its views, privacy.

* The layout: the docstring table is ``STATE_LAYOUT``, the parts tile the vector, the AEC page
  names its size.
* What it holds: every part read back by ``decode_state`` equals the engine's arrays (hands,
  plays, table, turn, history, passes, scores, breaches, direction) through random matches of
  every variant, 2 to 4 players, reversed games and liability included.
* Views: the view from seat ``s`` is the absolute view with places permuted to ``s``'s play order
  (hypothesis), and it agrees with ``observe(s)`` on every part the two share.
* Privacy: changing only cards a seat cannot see (the others' hands, the undealt cards) leaves
  its ``observe()`` bit-identical and changes ``state()``.
* The PettingZoo env: ``state()`` / ``state_space`` pass PettingZoo's own state checks, stay in
  the space through whole matches and equal a separate engine's absolute state for the same play.
* The vector env's ``global_state()`` (seats to act, copies) and the engine's bad arguments.
* The docs page (``docs/privileged-state.md``): its table is the layout, its examples run.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pettingzoo.test.state_test import test_state as pettingzoo_state_check
from pettingzoo.test.state_test import test_state_space as pettingzoo_state_space_check

from bigtwo.env import Engine, env, load_variant
from bigtwo.env.engine import state as ST
from bigtwo.env.engine.observation import LAYOUT, decode_observation
from bigtwo.env.engine.state import ABSOLUTE, STATE_LAYOUT, decode_state, state_size, state_slices
from bigtwo.env.envs.vector import VectorEnv
from bigtwo.env.rules.cards import mask_to_cards

CONFIGS = [
    ("taiwan", {}),
    ("hong-kong", {}),
    ("japan", {}),
    ("online-cn", {"games": 3}),  # liability, alternating direction: its second game is reversed
    ("pusoy-dos", {}),
    ("taiwan", {"players": 2}),
    ("taiwan", {"players": 3, "turn_order": "random", "last_card_rule": "liability"}),
]
IDS = [name + "".join(f"-{k}{v}" for k, v in o.items()) for name, o in CONFIGS]
# Parts with one row (or slot) per place, and parts whose values are places (-1: none).
PLACE_ROWS = ("hands", "played", "cards_left_fraction", "passed_on", "passed_on_strength", "match_scores", "breach")
PLACE_VALUES = ("table_seat", "to_act", "recent_seat")
# Parts the observation has too, with the same meaning for the observer (the duty and the opening
# card only for the seat to act, the breach only the observer's own).
SHARED = [part.name for part in STATE_LAYOUT if part.name in {q.name for q in LAYOUT}]


def bits(mask: int) -> np.ndarray:
    """A card mask as 52 bools."""
    out = np.zeros(52, bool)
    out[mask_to_cards(int(mask))] = True
    return out


def random_steps(eng: Engine, rng: np.random.Generator, steps: int) -> None:
    """``steps`` random legal moves in every game (a game whose match is over sits out)."""
    for _ in range(steps):
        ids, n = eng.legal_actions()
        picks = ids[np.arange(eng.num_matches), (rng.random(eng.num_matches) * np.maximum(n, 1)).astype(np.int64)]
        eng.step(np.where(eng.over, -1, picks))


def place_of(seat: int, other: int, players: int, reverse: bool) -> int:
    """How many places after ``seat`` the seat ``other`` plays (written here from the rules, not the kernels)."""
    return (seat - other) % players if reverse else (other - seat) % players


# ------------------------------------------------------------------------------------------ layout


def test_the_docstring_table_is_the_layout() -> None:
    from bigtwo.env.envs import aec

    assert ST.state_table() in ST.__doc__
    assert f"(``state_size(P)`` = {ST.state_size_formula()}; {state_size(4)} for 4)" in ST.__doc__
    documented = re.findall(r"^\| ``\[[^|]*\| ``\[[^|]*\| ``(\w+)`` \|", ST.__doc__, re.M)
    assert documented == [part.name for part in STATE_LAYOUT]
    assert f"``state()`` ({ST.state_size_formula()},) float32 ({state_size(4)} for 4 players)" in aec.__doc__


@pytest.mark.parametrize("players", [2, 3, 4])
def test_parts_tile_the_vector_in_layout_order(players: int) -> None:
    slices = list(state_slices(players).values())
    assert list(state_slices(players)) == [part.name for part in STATE_LAYOUT]
    assert slices[0].start == 0 and slices[-1].stop == state_size(players) == 209 + 128 * players
    for part, at, nxt in zip(STATE_LAYOUT, slices, [*slices[1:], None], strict=True):
        assert at.stop - at.start == part.size(players)
        assert nxt is None or nxt.start == at.stop
        assert ST.state_start(ST.StatePart[part.name.upper()], players) == at.start
    eng = Engine(load_variant("taiwan", players=players))
    assert eng.state_size == state_size(players) and eng.global_state().shape == (1, state_size(players))


def test_bounds_are_the_unit_range_but_the_match_scores() -> None:
    v = load_variant("online-cn")
    low, high = ST.state_bounds(v)
    at = state_slices(4)["match_scores"]
    assert low.dtype == np.float32 and low.shape == (state_size(4),)
    assert (low[at] < 0).all() and (high[at] == -low[at]).all()
    rest = np.ones(state_size(4), bool)
    rest[at] = False
    assert (low[rest] == 0).all() and (high[rest] == 1).all()


# ------------------------------------------------------------------------------------- what it holds


@pytest.mark.parametrize(("name", "overrides"), CONFIGS, ids=IDS)
def test_the_absolute_state_is_the_engine_state(name: str, overrides: dict) -> None:
    v = load_variant(name, **overrides)
    p, games = v.players, 16
    eng = Engine(v, games, seed=11)
    rng = np.random.default_rng(5)
    kinds = eng.table.kinds
    checked_breach = checked_reverse = False
    for _ in range(60):
        S = eng.state
        d = decode_state(eng.global_state(np.full(games, ABSOLUTE)), p)
        for g in range(games):
            for s in range(p):
                assert np.array_equal(d["hands"][g, s], bits(S.hands[g, s]))
                assert np.array_equal(d["played"][g, s], bits(S.played[g, s]))
                assert d["cards_left_fraction"][g, s] == np.float32(S.counts[g, s] / v.cards_per_player)
                assert d["passed_on"][g, s].tolist() == (S.passed_on[g, s] > 0).tolist()
                breached_next = S.breach[g, (s - 1) % p if S.reverse[g] else (s + 1) % p]
                assert d["breach"][g, s] == breached_next
                checked_breach |= bool(breached_next)
            t = int(S.table_action[g])
            assert np.array_equal(d["table"][g], bits(eng.table.masks[t]) if t else np.zeros(52, bool))
            assert d["table_kind"][g] == (kinds[t] if t else 0) and d["table_seat"][g] == S.table_seat[g]
            assert d["passes"][g] == S.passes[g] and d["to_act"][g] == S.current[g]
            assert d["opening_card"][g].sum() == (S.opening[g] >= 0)
            assert S.opening[g] < 0 or d["opening_card"][g, S.opening[g]]
            assert d["duty"][g] == S.duty[g]
            moves = int((S.hist_seat[g] >= 0).sum())
            assert d["recent_seat"][g].tolist() == S.hist_seat[g].tolist()
            assert d["recent_kind"][g, :moves].tolist() == kinds[S.hist_action[g, :moves]].tolist()
            assert np.allclose(d["match_scores"][g], S.match_scores[g] / abs(v.worst_payoff))
            assert d["first_game"][g] == (S.games_played[g] == 0) and d["reversed"][g] == S.reverse[g]
            checked_reverse |= bool(S.reverse[g])
        random_steps(eng, rng, 3)
    if v.last_card_rule == "liability":
        assert checked_breach, "no breach came up: the test did not see the breach part"
    if v.turn_order != "fixed":
        assert checked_reverse, "no reversed game came up"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    config=st.sampled_from(CONFIGS),
    seed=st.integers(0, 2**32),
    steps=st.integers(0, 40),
    seats=st.lists(st.integers(0, 3), min_size=4, max_size=4),
)
def test_a_seats_view_is_the_absolute_view_permuted(config: tuple, seed: int, steps: int, seats: list[int]) -> None:
    name, overrides = config
    v = load_variant(name, **overrides)
    p = v.players
    eng = Engine(v, 4, seed=seed)
    random_steps(eng, np.random.default_rng(seed), steps)
    view = np.array(seats) % p
    absolute = decode_state(eng.global_state(np.full(4, ABSOLUTE)).copy(), p)
    turned = decode_state(eng.global_state(view).copy(), p)
    for g in range(4):
        reverse = bool(eng.reverse[g])
        order = [(view[g] - k) % p if reverse else (view[g] + k) % p for k in range(p)]  # place k's seat
        for part in STATE_LAYOUT:
            a, r = absolute[part.name][g], turned[part.name][g]
            if part.name in PLACE_ROWS:
                assert np.array_equal(r, a[order]), part.name
            elif part.name in PLACE_VALUES:
                expect = np.vectorize(lambda s, rv=reverse, at=view[g]: -1 if s < 0 else place_of(at, s, p, rv))(a)
                assert np.array_equal(r, expect), part.name
            else:
                assert np.array_equal(r, a), part.name


@pytest.mark.parametrize(("name", "overrides"), CONFIGS, ids=IDS)
def test_a_seats_view_says_what_its_observation_says(name: str, overrides: dict) -> None:
    v = load_variant(name, **overrides)
    p, games = v.players, 8
    eng = Engine(v, games, seed=21)
    rng = np.random.default_rng(2)
    shared = [part for part in SHARED if part not in ("opening_card", "duty", "breach")]
    assert "hands" not in shared and "table" in shared and "recent_kind" in shared
    for _ in range(30):
        for seat in range(p):
            seats = np.full(games, seat)
            seen = decode_observation(eng.observe(seats).copy(), p)
            known = decode_state(eng.global_state(seats).copy(), p)
            for part in shared:
                assert np.array_equal(known[part], seen[part]), part
            assert np.array_equal(known["hands"][:, 0], seen["hand"])  # place 0: the seat itself
            acting = eng.current == seat
            for part in ("opening_card", "duty"):
                assert np.array_equal(known[part][acting], seen[part][acting]), part
            assert np.array_equal(known["breach"][:, 0], seen["breach"][:, 0])
        random_steps(eng, rng, 4)


# ------------------------------------------------------------------------------------------- privacy


def hide_differently(eng: Engine, seat: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Game 0's saved state with the cards ``seat`` cannot see (the other hands and the undealt
    cards) dealt out again at random among those hands (each keeps its count) and the undealt pile.
    An owed opening card stays with the seat to act (who must hold it: the rules say who leads)."""
    arrays = {name: arr.copy() for name, arr in eng.state._asdict().items()}
    hands = arrays["hands"][0]
    seen = int(hands[seat])
    if arrays["opening"][0] >= 0:
        seen |= 1 << int(arrays["opening"][0])
    for mask in arrays["played"][0]:
        seen |= int(mask)
    hidden = [c for c in range(52) if not seen >> c & 1]
    order = rng.permutation(hidden)
    at = 0
    opening = 0 if arrays["opening"][0] < 0 else 1 << int(arrays["opening"][0])
    for s in range(eng.players):
        if s == seat:
            continue
        kept = int(hands[s]) & opening
        n = int(hands[s]).bit_count() - kept.bit_count()
        hands[s] = np.uint64(kept | sum(1 << int(c) for c in order[at : at + n]))
        at += n
    return arrays


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config=st.sampled_from(CONFIGS), seed=st.integers(0, 2**32), steps=st.integers(0, 30))
def test_observe_holds_nothing_of_the_hidden_cards_that_state_shows(config: tuple, seed: int, steps: int) -> None:
    name, overrides = config
    e = env(name, **overrides)
    e.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        obs, *_ = e.last()
        if not e.agents or not obs["action_mask"].any():
            break
        e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    if not e.agents:
        return
    eng = e.unwrapped.engine
    saved = {name: arr.copy() for name, arr in eng.state._asdict().items()}
    for seat, agent in enumerate(e.possible_agents):
        eng.load_state(saved)
        before, state_before = e.observe(agent), e.state()
        other = hide_differently(eng, seat, rng)
        eng.load_state(other)
        after, state_after = e.observe(agent), e.state()
        assert np.array_equal(before["observation"], after["observation"]), f"{agent} saw a hidden card"
        assert np.array_equal(before["action_mask"], after["action_mask"])
        if not np.array_equal(other["hands"], saved["hands"]):  # a reshuffle that changed something
            assert not np.array_equal(state_before, state_after)
            hands = decode_state(state_after, eng.players)["hands"]
            assert all(np.array_equal(hands[s], bits(other["hands"][0, s])) for s in range(eng.players))
    eng.load_state(saved)


# ------------------------------------------------------------------------------- the PettingZoo env


@pytest.mark.parametrize(("name", "overrides"), CONFIGS, ids=IDS)
def test_pettingzoo_state_checks(name: str, overrides: dict) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any of PettingZoo's state warnings fails the test
        pettingzoo_state_space_check(env(name, **overrides))
        # PettingZoo's loop samples any action id: a penalty, not an error, ends the match then
        pettingzoo_state_check(env(name, illegal_action="penalty", **overrides), num_cycles=20)


@pytest.mark.parametrize(("name", "overrides"), CONFIGS, ids=IDS)
def test_state_stays_in_its_space_and_matches_an_engine_playing_the_same(name: str, overrides: dict) -> None:
    e = env(name, **overrides)
    e.reset(seed=4)
    twin = Engine(load_variant(name, **overrides), 1, seed=4)
    space = e.state_space
    assert space.shape == (state_size(e.unwrapped.variant.players),) and space.dtype == np.float32
    rng = np.random.default_rng(4)
    previous = None
    for agent in e.agent_iter():
        obs, _reward, termination, truncation, _info = e.last()
        s = e.state()
        assert space.contains(s) and s is not previous
        assert np.array_equal(s, twin.global_state(np.array([ABSOLUTE]))[0])
        assert decode_state(s, twin.players)["to_act"] == (-1 if twin.over[0] else e.possible_agents.index(agent))
        previous = s
        if termination or truncation:
            e.step(None)
            continue
        action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        e.step(action)
        twin.step([action])
    assert space.contains(e.state())


# ----------------------------------------------------------------------------------- the vector env


def test_vector_env_global_state_is_the_seats_to_act_view() -> None:
    venv = VectorEnv("online-cn", num_envs=6, seed=3)
    obs, info = venv.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(80):
        state = venv.global_state()
        assert state.shape == (6, venv.state_size) and state.dtype == np.float32
        assert np.array_equal(state, venv.engine.global_state(info["seat"]))
        d = decode_state(state, 4)
        assert (d["to_act"] == 0).all()  # the seat to act comes first
        assert np.array_equal(d["hands"][:, 0], decode_observation(obs, 4)["hand"])
        assert state is not venv.global_state()  # copy=True: the caller's own
        ids, counts = info["legal_ids"], info["legal_counts"]
        obs, _r, _t, _tr, info = venv.step(ids[np.arange(6), (rng.random(6) * counts).astype(np.int64)])
    shared = VectorEnv("taiwan", num_envs=2, seed=0, copy=False)
    shared.reset(seed=0)
    assert shared.global_state() is shared.global_state()  # copy=False: the engine's buffer
    assert shared.state_version == ST.STATE_VERSION == shared.engine.state_version


def test_global_state_refuses_bad_seats_and_buffers() -> None:
    eng = Engine("taiwan", 3, seed=0)
    with pytest.raises(ValueError, match=r"seats must be 3 seat numbers 0..3 \(-1: absolute order\)"):
        eng.global_state(np.array([0, 1, 4]))
    for bad in (np.array([0, 1]), np.array([0.0, 1.5, 2.0]), np.array([0, 1, 2**64 - 1], np.uint64), [0, None, 1]):
        with pytest.raises(ValueError, match="seats must be 3 seat numbers"):
            eng.global_state(bad)
    with pytest.raises(ValueError, match=r"out must be a C-contiguous float32 array of shape \(3, 721\)"):
        eng.global_state(out=np.zeros((3, 721), np.float64))
    with pytest.raises(ValueError, match="a state vector for 3 players has 593 slots"):
        decode_state(eng.global_state(), 3)
    out = np.zeros((3, 721), np.float32)
    assert eng.global_state(out=out) is out and out.any()


def test_the_ordinary_path_does_not_pay_for_it() -> None:
    eng = Engine("taiwan", 4, seed=0)
    held = eng.nbytes()
    random_steps(eng, np.random.default_rng(0), 5)
    eng.observe()
    assert eng.nbytes() == held  # no state buffer until asked
    eng.global_state()
    assert eng.nbytes() == held + 4 * state_size(4) * 4


# ---------------------------------------------------------------------------------- the docs page

DOCS = Path(__file__).resolve().parents[1] / "docs" / "privileged-state.md"
DOC_BLOCKS = re.findall(r"```python\n(.*?)```", DOCS.read_text(encoding="utf-8"), flags=re.S)


def test_the_docs_page_table_is_the_layout() -> None:
    text = DOCS.read_text(encoding="utf-8")
    assert ST.state_table() in text
    assert f"`state_size(P)` = {ST.state_size_formula()} ({state_size(4)} for 4 players" in text
    assert len(DOC_BLOCKS) == 2


@pytest.mark.parametrize("index", range(len(DOC_BLOCKS)))
def test_the_docs_page_examples_run(index: int, capsys: pytest.CaptureFixture[str]) -> None:
    exec(compile(DOC_BLOCKS[index], f"docs/privileged-state.md block {index}", "exec"), {"__name__": "docs"})
