"""Fuzz layer of the rules core and the environments (issue #12, deliverable 4).

Hypothesis throws arbitrary input at every way in of ``bigtwo.env``: ``parse_cards``,
``load_variant`` (YAML text and field overrides), ``Game.play``, ``Engine.step`` and the AEC and
Gymnasium ``step``. Each input must either work or raise the documented ``ValueError`` (never
another exception), and a refused input must leave the state exactly as it was (the engine's
state arrays compared bit for bit, and the env's bookkeeping). What works is checked too: cards
read back as valid distinct cards, a variant loaded has finite numbers and a finite worst payoff,
and every accepted play keeps the cards conserved.

Budgets are small (``max_examples`` 40..150) so the file runs in seconds.
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from conftest import NAMED_VARIANTS
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from bigtwo.env import Card, Engine, Game, Variant, env, load_variant, parse_cards
from bigtwo.env.envs.gym_env import BigTwoEnv
from bigtwo.env.rules.cards import RANKS, SUITS
from bigtwo.env.rules.variant import CHOICES


def fuzz(examples: int) -> settings:
    """A small budget, no deadline (the first examples compile the engine)."""
    return settings(
        max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
    )


FIELDS = sorted(set(Variant().to_dict()) - {"name", "description"})
CARD_TEXT = [r + s for r in RANKS for s in SUITS] + ["TS", "10♠", "3♣", "qh", "1C", "3X", "", ","]

# Any value a YAML file or a --set option could hold, odd numbers included.
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from([v for values in CHOICES.values() for v in values] + ["3D", "lowest", "tw", "hk", "A-2-3-4-5"]),
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
# Values near what a field allows (so that many loads succeed), bounds and just past them.
plausible = st.one_of(
    st.integers(-2, 60),
    st.floats(0, 2e6),
    st.sampled_from([0, 1, 2, 3, 4, 13, 26, 27, 100, 101, 1e6, 1e12, 1e15, 1_000_000, 1_000_001, 0.5, -0.0]),
    st.booleans(),
    st.sampled_from(
        [v for values in CHOICES.values() for v in values]
        + ["3D", "3C", "lowest", "hk", "tw", "jp", "jp_a2345_low", "off", ["D", "C", "H", "S"], "C S H D"]
        + [
            [[10, 2], [13, 3]],
            [],
            [[1, 1000]],
            [[1001, 2]],
            ["3-4-5-6-7", "A-2-3-4-5"],
            [{"ranks": "A-2-3-4-5", "top": "5"}],
        ]
    ),
)
field_values = st.one_of(plausible, values)
EDGES = {
    "unit": [1e-9, 0.5, 1e6, 1e6 + 1, 0, math.inf, 1e308],
    "buy_in": [0, 100.0, 1e12, 2e12, math.inf],
    "rake": [0, 0.5, 1e12, 1e13, math.inf, math.nan],
    "target_score": [0, 100, 1e15, 1e16],
    "games": [1, 3, 1_000_000, 1_000_001],
    "penalty_multiplier_for_twos": [1, 2, 100, 101],
    "cards_per_player": [1, 2, 13, 17, 26, 27],
    "tiers": [[], [[10, 2], [13, 3]], [[1, 1000]], [[1, 1001]]],
}
SHIPPED = [load_variant(name).to_dict() for name in NAMED_VARIANTS]


def field_item(name: str) -> st.SearchStrategy[tuple[str, Any]]:
    """``(name, value)``: mostly a value a shipped variant uses or a bound's edge, else anything."""
    good = st.sampled_from([v[name] for v in SHIPPED] + EDGES.get(name, []))
    return st.tuples(st.just(name), st.one_of(good, good, good, field_values))


field_items = st.sampled_from(FIELDS).flatmap(field_item)
card_tokens = st.one_of(
    st.sampled_from(CARD_TEXT),
    st.integers(min_value=-3, max_value=60),
    st.floats(allow_nan=True),
    st.none(),
    st.booleans(),
    st.binary(max_size=3),
)
card_inputs = st.one_of(
    st.lists(st.sampled_from(CARD_TEXT), max_size=6).map(" ".join),
    st.lists(st.integers(0, 51), max_size=6),
    st.text(alphabet="0123456789TJQKAtjqka2DCHSdchs♦♣♥♠ ,\t-", max_size=20),
    st.text(max_size=10),
    st.lists(card_tokens, max_size=6),
    st.binary(max_size=6),
    st.integers(),
    st.floats(),
    st.none(),
)


def engine_state(engine: Engine) -> tuple[np.ndarray, ...]:
    return tuple(a.copy() for a in engine.state)


def same_state(a: tuple[np.ndarray, ...], b: tuple[np.ndarray, ...]) -> bool:
    return all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


def cards_conserved(engine: Engine) -> bool:
    """Every seat's count is the size of its hand, and no card is held or played twice."""
    S = engine.state
    for g in range(engine.num_matches):
        seen = 0
        for s in range(engine.players):
            held, played = int(S.hands[g, s]), int(S.played[g, s])
            if held.bit_count() != int(S.counts[g, s]) or (held | played) & seen or held & played:
                return False
            seen |= held | played
    return True


# ---------------------------------------------------------------- parse_cards


@fuzz(150)
@given(cards=card_inputs)
def test_parse_cards_reads_cards_or_says_why(cards: Any) -> None:
    try:
        out = parse_cards(cards)
    except ValueError as exc:
        assert str(exc)
        event("refused")
        return
    event("read")
    assert all(isinstance(c, Card) and 0 <= c < 52 for c in out)
    assert len(set(out)) == len(out)
    assert parse_cards([str(c) for c in out]) == out  # the text form reads back


# ---------------------------------------------------------------- load_variant


def check_variant(v: Variant) -> None:
    numbers = [v.unit, v.buy_in, v.rake, v.target_score, v.worst_payoff, *(m for _n, m in v.tiers)]
    assert all(math.isfinite(x) for x in numbers)
    assert 1 <= v.games <= 1_000_000 and 1 <= v.penalty_multiplier_for_twos <= 100
    assert v.players * v.cards_per_player <= 52
    assert load_variant(v, **v.to_dict()) == v  # what it says of itself loads back the same


@fuzz(150)
@given(items=st.lists(field_items, max_size=4))
def test_variant_overrides_load_or_say_why(items: list[tuple[str, Any]]) -> None:
    try:
        v = load_variant("taiwan", **dict(items))
    except ValueError as exc:
        assert "variant 'taiwan'" in str(exc)
        event("refused")
        return
    event("loaded")
    check_variant(v)


yaml_texts = st.one_of(
    st.lists(field_items, max_size=5).map(lambda kv: yaml.safe_dump(dict(kv), allow_unicode=True)),
    st.dictionaries(st.sampled_from([*FIELDS, "name", "colour"]), field_values, max_size=3).map(
        lambda d: yaml.safe_dump(d, allow_unicode=True)
    ),
    st.lists(st.tuples(st.sampled_from(FIELDS[:6]), scalars), max_size=5).map(
        lambda kv: "".join(f"{k}: {yaml.safe_dump(v, default_flow_style=True).splitlines()[0]}\n" for k, v in kv)
    ),  # keys may repeat
    st.text(max_size=40),
)


@fuzz(100)
@given(text=yaml_texts, raw=st.binary(max_size=4))
def test_variant_yaml_loads_or_says_why(text: str, raw: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "fuzz.yaml"
        path.write_bytes(text.encode("utf-8") + raw)
        try:
            v = load_variant(path)
        except ValueError as exc:
            assert str(path) in str(exc)
            event("refused")
            return
    event("loaded")
    check_variant(v)


# ---------------------------------------------------------------- Game.play


def is_pass_spelling(play: Any) -> bool:
    """The documented ways to pass: ``None``, ``[]``, ``""`` and ``"pass"`` in any case."""
    if isinstance(play, str):
        return play.strip().lower() in ("", "pass")
    return play is None or (isinstance(play, (list, tuple)) and len(play) == 0)


@fuzz(60)
@given(seed=st.integers(0, 2**64 - 1), data=st.data())
def test_game_play_works_or_changes_nothing(seed: int, data: st.DataObject) -> None:
    g = Game("taiwan", seed=seed, cards_per_player=4)
    for _ in range(25):
        if g.is_over:
            break
        if data.draw(st.booleans()):
            play: Any = data.draw(st.sampled_from(g.legal_plays()))
            if data.draw(st.booleans()):
                play = " ".join(play) or "pass"
        else:
            play = data.draw(card_inputs)
        before, turns = engine_state(g.engine), len(g.history)
        try:
            g.play(play)
        except ValueError as exc:
            assert str(exc)
            assert same_state(before, engine_state(g.engine))
            continue
        if len(g.history) == turns + 1 and g.history[-1][1] == []:  # taken as a pass (which ends no game)
            assert is_pass_spelling(play), play
        assert cards_conserved(g.engine)


# ---------------------------------------------------------------- Engine.step

DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.float64, np.bool_]


@fuzz(60)
@given(seed=st.integers(0, 2**63), data=st.data())
def test_engine_step_works_or_changes_nothing(seed: int, data: st.DataObject) -> None:
    engine = Engine(load_variant("taiwan", cards_per_player=3, games=2), num_matches=3, seed=seed)
    for _ in range(30):
        if engine.over.all():
            break
        ids, counts = engine.legal_actions()
        legal = [set(ids[g, : counts[g]].tolist()) for g in range(3)]
        choice = []
        for g in range(3):
            kind = data.draw(st.sampled_from(["legal", "legal", "sit", "any"]))
            if kind == "legal" and counts[g] > 0:
                choice.append(int(ids[g, data.draw(st.integers(0, int(counts[g]) - 1))]))
            elif kind == "sit":
                choice.append(-1)
            else:
                edges = st.sampled_from([-2, -1, 2**63 - 1, 2**63, 2**64 - 1, engine.table.size])
                choice.append(data.draw(st.one_of(edges, st.integers(-(2**63), 2**64 - 1))))
        dtype = data.draw(st.sampled_from(DTYPES))
        shape_ok = data.draw(st.integers(0, 9)) > 0
        with np.errstate(all="ignore"):
            try:
                actions: Any = np.array(choice if shape_ok else choice[:2], dtype=dtype)
            except OverflowError:
                actions = choice  # a plain list of Python ints
        before = engine_state(engine)
        try:
            engine.step(actions)
        except ValueError as exc:
            assert str(exc)
            assert same_state(before, engine_state(engine))
            continue
        assert cards_conserved(engine)
        arr = np.asarray(actions)
        assert arr.shape == (3,) and np.issubdtype(arr.dtype, np.integer)
        assert all(int(a) == -1 or int(a) in legal[g] for g, a in enumerate(arr.tolist()))  # -1 sits out


# ---------------------------------------------------------------- AEC and Gymnasium step

action_inputs = st.one_of(
    st.integers(min_value=-(2**65), max_value=2**65),
    st.integers(0, 20000),
    st.floats(allow_nan=True),
    st.text(max_size=4),
    st.none(),
    st.booleans(),
    st.sampled_from([np.int64(3), np.uint64(2**64 - 1), np.float32(1.0), np.array([1]), [0]]),
)


def aec_state(e: Any) -> tuple:
    raw = e.unwrapped
    return (
        engine_state(raw.engine),
        raw.agent_selection,
        list(raw.agents),
        dict(raw.terminations),
        dict(raw.rewards),
        dict(raw._cumulative_rewards),
    )


@fuzz(40)
@given(seed=st.integers(0, 2**64 - 1), data=st.data())
def test_aec_step_works_or_changes_nothing(seed: int, data: st.DataObject) -> None:
    e = env("taiwan", players=3, cards_per_player=4)
    e.reset(seed=seed)
    for _ in range(30):
        if not e.agents:
            break
        obs, _reward, termination, truncation, _info = e.last()
        if termination or truncation:
            e.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        use_legal = data.draw(st.booleans())
        action = int(legal[data.draw(st.integers(0, len(legal) - 1))]) if use_legal else data.draw(action_inputs)
        before = aec_state(e)
        try:
            e.step(action)
        except ValueError as exc:
            assert str(exc)
            b, a = before, aec_state(e)
            assert same_state(b[0], a[0]) and b[1:] == a[1:]
            continue
        assert cards_conserved(e.unwrapped.engine)


@fuzz(40)
@given(seed=st.integers(0, 2**64 - 1), illegal=st.sampled_from(["raise", "penalty"]), data=st.data())
def test_gym_step_works_or_says_why(seed: int, illegal: str, data: st.DataObject) -> None:
    e = BigTwoEnv("taiwan", players=3, cards_per_player=4, illegal_action=illegal, illegal_penalty=-5.0)
    obs, _info = e.reset(seed=seed)
    for _ in range(20):
        legal = np.flatnonzero(obs["action_mask"])
        use_legal = data.draw(st.booleans())
        action = int(legal[data.draw(st.integers(0, len(legal) - 1))]) if use_legal else data.draw(action_inputs)
        before, rng = engine_state(e.engine), e.np_random.bit_generator.state
        try:
            obs, reward, terminated, truncated, info = e.step(action)
        except ValueError as exc:
            assert str(exc)
            assert same_state(before, engine_state(e.engine)) and e.np_random.bit_generator.state == rng
            continue
        assert not truncated and math.isfinite(reward)
        if "illegal_action" in info:  # penalty: the episode ends, the game as it was
            assert illegal == "penalty" and terminated and reward == -5.0
            assert same_state(before, engine_state(e.engine))
        assert cards_conserved(e.engine)
        if terminated:
            obs, _info = e.reset(seed=seed + 1 if seed < 2**64 - 1 else 0)
