"""Validation where input enters the rules core and the environments (issue #12's faults).

Each test names one fault an adversarial tester found, and checks the fix a user relies on:

* variants: numbers are finite and bounded (no inf or NaN payoffs, no wrapped counters), at the
  bounds every payoff stays finite; YAML with a key given twice, keys that are not text, bytes
  that are not UTF-8 or a folder for a path is refused naming the file;
* seeds: one rule for ``Engine``, ``Game``, ``VectorEnv`` and the AEC and Gymnasium envs (ints
  0..2**64-1, a batch's per-game seeds never wrap), refusals name the seed;
* actions: a uint64 ``2**64-1`` is no "sit out"; ids, cards and play text that mean nothing are
  refused (``decode(1.5)``, ``kind(-1)``, ``Card("3")``, ``parse_cards(5)``, ``Game.play(",")``);
* ``Game`` deals 1-card hands; a refused AEC or Gymnasium ``reset`` changes nothing, its random
  generators included; ``last()`` after the end says to reset; ``options`` must be a dict;
* ``render()`` shows only the hands its ``render_view`` allows;
* ``VectorEnv`` returns arrays the caller may keep (``copy=False``: the engine's buffers).
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from pettingzoo.test import render_test

from bigtwo.env import Card, Engine, Game, VectorEnv, action_table, env, load_variant, parse_cards
from bigtwo.env.engine.observation import obs_size
from bigtwo.env.engine.seeds import MAX_SEED, check_seed, seed_array
from bigtwo.env.envs.gym_env import BigTwoEnv
from bigtwo.env.rules.variant import BOUNDS, read_yaml_mapping

TAIWAN = load_variant("taiwan")


def engine_state(engine: Engine) -> tuple[np.ndarray, ...]:
    return tuple(a.copy() for a in engine.state)


def same_state(a: tuple[np.ndarray, ...], b: tuple[np.ndarray, ...]) -> bool:
    return all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


def random_payoffs(variant, games: int, seed: int) -> np.ndarray:
    """Every payoff of ``games`` random games of ``variant`` (one engine, random legal play)."""
    engine = Engine(variant, num_matches=games, seed=seed)
    rng = np.random.default_rng(seed)
    out = []
    while not engine.over.all():
        ids, counts = engine.legal_actions()
        pick = (rng.random(games) * np.maximum(counts, 1)).astype(np.int64)
        actions = np.where(engine.over, -1, ids[np.arange(games), pick])
        result = engine.step(actions)
        out.append(result.payoffs[result.game_over].copy())
    return np.concatenate(out)


# ---------------------------------------------------------------- variants: finite, bounded numbers


@pytest.mark.parametrize(
    ("fields", "field", "allowed"),
    [
        ({"unit": math.inf}, "unit", "a finite number > 0 and <= 1e6"),
        ({"unit": math.nan}, "unit", "a finite number > 0"),
        ({"unit": 1e308, "scoring": "tiered"}, "unit", "<= 1e6"),
        ({"unit": 10**400}, "unit", "<= 1e6"),  # too large for a float: no OverflowError
        ({"rake": math.inf}, "rake", "a finite number >= 0 (0 = off) and <= 1e12"),
        ({"buy_in": math.inf}, "buy_in", "<= 1e12"),
        ({"target_score": math.inf}, "target_score", "<= 1e15"),
        ({"penalty_multiplier_for_twos": 2**62}, "penalty_multiplier_for_twos", "an integer >= 1 (1 = off) and <= 100"),
        ({"games": 2**63}, "games", "an integer >= 1 and <= 1,000,000"),
        ({"games": 2.0}, "games", "an integer >= 1"),
        ({"scoring": "collect", "tiers": [[1, 1e308]]}, "tiers", "multipliers numbers > 0 (up to 1000)"),
        ({"scoring": "collect", "tiers": [[1, math.inf]]}, "tiers", "multipliers numbers > 0"),
        ({"scoring": "collect", "tiers": [[10**30, 2]]}, "tiers", "from_cards integers >= 1 (up to 1000)"),
    ],
)
def test_variant_numbers_are_finite_and_bounded(fields: dict, field: str, allowed: str) -> None:
    with pytest.raises(ValueError) as err:
        load_variant("taiwan", **fields)
    msg = str(err.value)
    assert f"field {field!r} has bad value" in msg and allowed in msg, msg
    assert len(msg) < 400, msg  # a 400-digit number is shortened


def test_the_settings_table_gives_the_bounds() -> None:
    """The table of settings (RULES.md, ``bigtwo variants --settings``) states each bound the loader holds."""
    from bigtwo.env.rules.variant import settings_table

    table = settings_table()
    for row in (
        "| `unit` | `1` | a finite number > 0 and <= 1e6 |",
        "| `buy_in` | `0` | a finite number >= 0 (0 = off) and <= 1e12 |",
        "| `rake` | `0` | a finite number >= 0 (0 = off) and <= 1e12 |",
        "| `penalty_multiplier_for_twos` | `1` | an integer >= 1 (1 = off) and <= 100 |",
        "| `games` | `1` | an integer >= 1 and <= 1,000,000 |",
        "| `target_score` | `0` | a finite number >= 0 (0 = off) and <= 1e15 |",
        "multipliers numbers > 0 (up to 1000)",
    ):
        assert row in table, row
    assert BOUNDS["unit"] == (0, 1e6) and BOUNDS["games"] == (1, 1_000_000)


@pytest.mark.parametrize("scoring", ["cards", "tiered", "pairwise", "win_loss", "collect"])
def test_payoffs_stay_finite_at_the_bounds(scoring: str) -> None:
    tiers = [[1, BOUNDS["tier_multiplier"][1]]] if scoring == "collect" else []
    variant = load_variant(
        "taiwan",
        scoring=scoring,
        tiers=tiers,
        unit=BOUNDS["unit"][1],
        penalty_multiplier_for_twos=int(BOUNDS["penalty_multiplier_for_twos"][1]),
        rake=BOUNDS["rake"][1],
        players=2,
        cards_per_player=26,
        games=3,
    )
    assert math.isfinite(variant.worst_payoff)
    payoffs = random_payoffs(variant, games=8, seed=1)
    assert np.isfinite(payoffs).all() and np.isfinite(payoffs.astype(np.float32)).all()
    assert (payoffs >= variant.worst_payoff - variant.rake).all()


def test_tiered_payoffs_with_a_large_unit_are_no_nan() -> None:
    # unit 1e308 gave inf - inf = NaN; the largest unit allowed keeps every payoff a number.
    payoffs = random_payoffs(load_variant("japan", unit=BOUNDS["unit"][1]), games=16, seed=2)
    assert np.isfinite(payoffs).all()
    assert np.allclose(payoffs.sum(axis=1), 0.0, atol=1e-3)  # still zero-sum


def test_yaml_key_given_twice(tmp_path: Path) -> None:
    path = tmp_path / "twice.yaml"
    path.write_text("players: 4\nscoring: cards\nplayers: 3\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"twice.yaml: line 3: key 'players' is given twice"):
        load_variant(path)
    nested = tmp_path / "nested.yaml"
    nested.write_text("straights: [{ranks: 3-4-5-6-7, ranks: 4-5-6-7-8}]\n", encoding="utf-8")
    with pytest.raises(ValueError, match="key 'ranks' is given twice"):
        load_variant(nested)


def test_yaml_keys_must_be_text(tmp_path: Path) -> None:
    path = tmp_path / "numbers.yaml"
    path.write_text("players: 4\n1: 2\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"numbers.yaml: field names are text, got the key 1 \(int\)"):
        load_variant(path)


def test_yaml_file_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes("description: café\n".encode("latin-1"))
    with pytest.raises(ValueError, match=r"latin1.yaml: not UTF-8 text \(byte 16 is 0xe9\)"):
        load_variant(path)


def test_variant_path_is_a_folder(tmp_path: Path) -> None:
    folder = tmp_path / "rules.yaml"
    folder.mkdir()
    with pytest.raises(ValueError, match="is a folder; give a variant name or a YAML file"):
        load_variant(folder)
    with pytest.raises(ValueError, match="is a folder; give a variant name or a YAML file"):
        load_variant(tmp_path)
    with pytest.raises(ValueError, match="is a folder, not a YAML file"):
        read_yaml_mapping(folder)  # training configs read their files with it too


# ---------------------------------------------------------------- seeds


BAD_SEEDS = [2**64, 2**70, -1, 1.5, 1.0, "3", True, np.float64(2.0), np.int64(-5)]


@pytest.mark.parametrize("seed", BAD_SEEDS, ids=repr)
def test_bad_seeds_are_named_everywhere(seed: object) -> None:
    name = str(int(seed)) if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) else repr(seed)
    makers = {
        "Engine": lambda: Engine("taiwan", num_matches=2, seed=seed),
        "Game": lambda: Game("taiwan", seed=seed),
        "VectorEnv": lambda: VectorEnv("taiwan", num_envs=2, seed=seed),
        "AEC": lambda: env("taiwan").reset(seed=seed),
        "Gymnasium": lambda: BigTwoEnv("taiwan").reset(seed=seed),
    }
    for where, make in makers.items():
        with pytest.raises(ValueError) as err:
            make()
        msg = str(err.value)
        assert f"seed {name} is not allowed: a seed is an integer 0..2**64-1" in msg, (where, msg)


def test_batch_seeds_never_wrap() -> None:
    with pytest.raises(ValueError, match=r"seed 18446744073709551615 is too large for 2 games.*0\.\.2\*\*64-2"):
        Engine("taiwan", num_matches=2, seed=MAX_SEED)
    with pytest.raises(ValueError, match="too large for 3 games"):
        VectorEnv("taiwan", num_envs=3, seed=MAX_SEED - 1)
    assert Engine("taiwan", num_matches=2, seed=MAX_SEED - 1).state.seeds.tolist() == [MAX_SEED - 1, MAX_SEED]
    assert Game("taiwan", seed=MAX_SEED).hands == Game("taiwan", seed=np.uint64(MAX_SEED)).hands


def test_per_game_seeds_are_checked_one_by_one() -> None:
    with pytest.raises(ValueError, match="seed -1 is not allowed"):
        Engine("taiwan", num_matches=2, seed=[3, -1])
    with pytest.raises(ValueError, match=r"seed 18446744073709551616 is not allowed"):
        Engine("taiwan", num_matches=2, seed=[3, 2**64])
    with pytest.raises(ValueError, match="2 seeds .one per game., got 3 seeds"):
        Engine("taiwan", num_matches=2, seed=[1, 2, 3])
    assert seed_array(np.array([5, MAX_SEED], np.uint64), 2).tolist() == [5, MAX_SEED]
    assert check_seed(np.int64(7)) == 7 and check_seed(None) is None


def test_envs_take_the_largest_seed() -> None:
    e = env("taiwan")
    e.reset(seed=MAX_SEED)
    assert e.unwrapped.game.hands == Game("taiwan", seed=MAX_SEED).hands
    obs, _info = BigTwoEnv("taiwan").reset(seed=MAX_SEED)
    assert obs["observation"].shape == (obs_size(4),)


# ---------------------------------------------------------------- actions, cards and plays


def test_uint64_max_action_is_no_sit_out() -> None:
    engine = Engine("taiwan", num_matches=2, seed=0)
    before = engine_state(engine)
    for dtype in (np.uint64, np.uint32):
        actions = np.array([np.iinfo(dtype).max, 0], dtype)
        with pytest.raises(ValueError, match=f"match 0: action id {np.iinfo(dtype).max} is out of range"):
            engine.step(actions)
        assert same_state(before, engine_state(engine))
    ids, _counts = engine.legal_actions()
    engine.step(np.array([ids[0, 0], -1], np.int64))  # -1 as a signed id still sits out
    assert int(engine.state.current[1]) == int(before[5][1])


@pytest.mark.parametrize(
    ("cards", "why"),
    [
        (5, "cards are text such as '3C 10S' or a list of cards or card ids, got 5"),
        (b"3C", "cards are text such as '3C 10S' or a list of cards or card ids, got b'3C'"),
        (np.array(7), "cards are text"),
        ([1.5], r"not a card: 1.5 \(expected text such as '3C' or '10♠', or a card id 0..51\)"),
        ([True], "not a card: True"),
        ([np.array([1, 2])], "a card id is an integer 0..51"),
    ],
    ids=repr,
)
def test_parse_cards_refuses_what_is_no_cards(cards: object, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        parse_cards(cards)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("3", r"a card id is an integer 0..51, got '3' \(for text use Card.from_text\('3'\)\)"),
        ("3C", r"got '3C' \(for text use Card.from_text"),
        (1.5, "a card id is an integer 0..51, got 1.5"),
        (True, "got True"),
        (52, "card id 52 is out of range"),
    ],
    ids=repr,
)
def test_card_takes_only_ids(value: object, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        Card(value)  # type: ignore[arg-type]
    assert Card(np.int8(5)) == 5 and str(Card(Card(5))) == "4C"


@pytest.mark.parametrize("action", [1.5, -1, 19895, 10**6, True, "1"], ids=repr)
def test_decode_and_kind_take_only_ids_in_range(action: object) -> None:
    table = action_table(TAIWAN)
    with pytest.raises(ValueError, match="0..19894"):
        table.decode(action)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="0..19894"):
        table.kind(action)  # type: ignore[arg-type]
    assert table.kind(np.int16(1)) == "single" and [str(c) for c in table.decode(np.int64(1))] == ["3D"]


@pytest.mark.parametrize("text", [",", " , ", ",,", "\t,\n"], ids=repr)
def test_play_text_without_a_card_is_no_pass(text: str) -> None:
    g = Game("taiwan", seed=0)
    g.play(g.legal_plays()[0])  # the opening single: now passing is legal
    before = engine_state(g.engine)
    with pytest.raises(ValueError, match="names no card; a play is card text such as '3C 3D'"):
        g.play(text)
    with pytest.raises(ValueError, match="names no card"):
        g.action_table.encode(text)
    assert same_state(before, engine_state(g.engine))
    g.play("")  # the empty text and "pass" still pass
    assert g.history[-1][1] == []


def test_game_deals_one_card_hands() -> None:
    hands = ["3C", "4C", "5C", "6C"]
    g = Game("taiwan", cards_per_player=1, hands=hands)
    assert g.hands == [["3C"], ["4C"], ["5C"], ["6C"]] and g.current_player == 0
    assert Game("taiwan", cards_per_player=1, players=2, hands=[["2S"], [0]]).hands == [["2S"], ["3D"]]
    with pytest.raises(ValueError, match="seat 2 has 2 cards, the variant deals 1"):
        Game("taiwan", cards_per_player=1, hands=["3C", "4C", "5C 7D", "6C"])
    with pytest.raises(ValueError, match="seat 1: not a card: '4X'"):
        Game("taiwan", cards_per_player=1, hands=["3C", "4X", "5C", "6C"])


# ---------------------------------------------------------------- AEC and Gymnasium resets, last()


def aec_state(e) -> tuple:
    raw = e.unwrapped
    rng = None if raw._rng is None else raw._rng.bit_generator.state
    return engine_state(raw.engine), rng, raw.agent_selection, dict(raw.terminations), dict(raw.rewards)


def same_aec(a: tuple, b: tuple) -> bool:
    return same_state(a[0], b[0]) and a[1:] == b[1:]


@pytest.mark.parametrize(
    ("kwargs", "why"),
    [
        ({"options": {"hands": ["3C"]}}, "hands must give 4 seats"),
        ({"seed": 5, "options": {"hands": ["3C"]}}, "hands must give 4 seats"),
        ({"seed": -3}, "seed -3 is not allowed"),
        ({"options": [1]}, r"options must be None or a dict such as \{'hands': \[...\]\}, got \[1\]"),
    ],
)
def test_refused_aec_reset_changes_nothing(kwargs: dict, why: str) -> None:
    e = env("taiwan")
    e.reset(seed=3)
    obs = e.last()[0]
    e.step(int(np.flatnonzero(obs["action_mask"])[0]))  # mid-game
    before = aec_state(e)
    with pytest.raises(ValueError, match=why):
        e.reset(**kwargs)
    assert same_aec(before, aec_state(e))
    e.reset()  # the next deal is the one it would have been without the refused reset
    twin = env("taiwan")
    twin.reset(seed=3)
    twin.reset()
    assert e.unwrapped.game.hands == twin.unwrapped.game.hands


def test_aec_last_after_the_end() -> None:
    e = env("taiwan", players=2, cards_per_player=1)
    e.reset(seed=0)
    for _agent in e.agent_iter():
        obs, _reward, termination, truncation, _info = e.last()
        e.step(None if termination or truncation else int(np.flatnonzero(obs["action_mask"])[0]))
    assert e.agents == []
    with pytest.raises(ValueError, match="the match is over and every agent is done; call reset"):
        e.last()
    e.reset(seed=1)
    assert e.last()[2] is False


@pytest.mark.parametrize(
    ("kwargs", "why"),
    [
        ({"options": {"hands": ["3C"]}}, "hands must give 4 seats"),
        ({"options": {"hands": ["3C 4D 5D 6D 7D 8S 9S 10S JS QS KS AS 2S"] * 4}}, "dealt to more than one seat"),
        ({"seed": 2**64}, "seed 18446744073709551616 is not allowed"),
        ({"options": "hands"}, "options must be None or a dict"),
    ],
)
def test_refused_gym_reset_changes_nothing(kwargs: dict, why: str) -> None:
    e = BigTwoEnv("taiwan")
    e.reset(seed=4)
    before_rng = e.np_random.bit_generator.state
    before = engine_state(e.engine)
    with pytest.raises(ValueError, match=why):
        e.reset(**kwargs)
    assert e.np_random.bit_generator.state == before_rng and same_state(before, engine_state(e.engine))
    obs, *_ = e.step(int(np.flatnonzero(e._observe()["action_mask"])[0]))  # the episode goes on
    assert obs["observation"].shape == (obs_size(4),)


def test_gym_reset_options_list_through_make() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e = gymnasium.make("bigtwo/BigTwo-v1")
        with pytest.raises(ValueError, match="options must be None or a dict"):
            e.reset(options=[1])


# ---------------------------------------------------------------- render views


def hand_lines(text: str) -> dict[str, str]:
    """Seat label -> what its line shows after the card count."""
    out = {}
    for line in text.splitlines():
        if " card" in line and ("player_" in line or "seat " in line) and "to " not in line:
            label = line[3:].split("  ")[0].strip()
            out[label] = line.split("card", 1)[1].lstrip("s ").strip()
    return out


def test_aec_render_shows_only_the_acting_hand_by_default() -> None:
    e = env("taiwan", render_mode="ansi")
    e.reset(seed=9)
    game, acting = e.unwrapped.game, e.agent_selection
    shown = hand_lines(e.render())
    for s in range(4):
        name = f"player_{s}"
        expected = " ".join(game.hands[s]) if name == acting else "(hidden)"
        assert shown[name] == expected, (name, shown)
    e.unwrapped.render_view = "all"
    assert all(v != "(hidden)" for v in hand_lines(e.render()).values())
    seat = (game.current_player + 1) % 4
    e.unwrapped.render_view = seat
    shown = hand_lines(e.render())
    assert [k for k, v in shown.items() if v != "(hidden)"] == [f"player_{seat}"]
    with pytest.raises(ValueError, match="render_view must be 'acting', 'all' or a seat 0..3; got 'me'"):
        env("taiwan", render_view="me")
    with pytest.raises(ValueError, match="render_view must be"):
        e.unwrapped.render_view = 4


def test_gym_render_view() -> None:
    e = BigTwoEnv("taiwan", render_mode="ansi", seat=1)
    e.reset(seed=9)
    shown = hand_lines(e.render())
    assert [k for k, v in shown.items() if v != "(hidden)"] == ["seat 1 (learner)"]
    every = BigTwoEnv("taiwan", render_mode="ansi", render_view="all")
    every.reset(seed=9)
    assert len([v for v in hand_lines(every.render()).values() if v != "(hidden)"]) == 4
    with pytest.raises(ValueError, match="render_view must be 'acting', 'all' or a seat 0..3"):
        BigTwoEnv("taiwan", render_view=True)


def test_render_after_the_match_hides_every_hand() -> None:
    e = env("taiwan", players=2, cards_per_player=1, render_mode="ansi")
    e.reset(seed=0)
    obs = e.last()[0]
    e.step(int(np.flatnonzero(obs["action_mask"])[0]))  # the leader plays its one card and wins
    assert e.unwrapped.game.is_over
    text = e.render()
    assert "over:" in text and set(hand_lines(text).values()) == {"(hidden)"}


def test_pettingzoo_render_test_with_a_view() -> None:
    render_test(lambda render_mode=None: env("taiwan", render_mode=render_mode, render_view=0))


# ---------------------------------------------------------------- vector env copies


def test_vector_env_returns_arrays_to_keep() -> None:
    venv = VectorEnv("taiwan", num_envs=4, seed=0)
    obs, info = venv.reset(seed=0)
    kept_obs, kept_ids = obs.copy(), info["legal_ids"].copy()
    rewards_seen = []
    for _ in range(60):
        new_obs, rewards, _ended, _truncated, info = venv.step(info["legal_ids"][:, 0].astype(np.int64))
        rewards_seen.append((rewards, rewards.copy()))
        assert new_obs is not obs and not np.shares_memory(new_obs, venv.engine.observe())
    assert np.array_equal(obs, kept_obs)  # the first observation was not overwritten
    assert not np.shares_memory(info["legal_ids"], venv.engine.state.legal) and kept_ids.shape[0] == 4
    assert all(np.array_equal(a, b) for a, b in rewards_seen)  # no stored reward was overwritten
    assert any(r.any() for r, _ in rewards_seen)


def test_vector_env_copy_false_returns_the_engine_buffers() -> None:
    venv = VectorEnv("taiwan", num_envs=4, seed=0, copy=False)
    obs, info = venv.reset(seed=0)
    new_obs, rewards, *_ = venv.step(info["legal_ids"][:, 0].astype(np.int64))
    assert new_obs is obs and rewards is venv.engine.state.payoffs
    with pytest.raises(ValueError, match="copy must be True or False, got 'no'"):
        VectorEnv("taiwan", num_envs=2, copy="no")  # type: ignore[arg-type]
