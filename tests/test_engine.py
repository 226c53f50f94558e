"""Tests of the batched engine (bigtwo_env/engine/engine.py) on its own terms.

* A batch of N plays exactly like N single games with the same seeds (same states, legal lists,
  observations and step results at every step, sit-outs and ``autoreset`` included).
* Invariants at every step of random games: every card accounted for, only the seat to act
  has legal actions, a leader cannot pass, payoffs add up as the scoring says, match scores
  are the sums of the games' payoffs.
* No leak: redealing the cards an observer cannot see among the opponents (each keeping its
  count, consistent with what the observer saw) leaves that observer's observation unchanged,
  at a game's start and mid-game.
* Errors: illegal actions raise ``ValueError`` naming the seat and the play and change nothing;
  stepping a finished match raises; bad ``reset``/constructor arguments raise.
* Seeds: the same seed gives the same deal and game.

The rules themselves (which plays are legal, who wins, the payoffs) are checked against the
slow reference in test_differential.py.
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Sequence

import numpy as np
import pytest

from bigtwo.env.engine import kernels
from bigtwo.env.engine.engine import Engine, make_rules
from bigtwo.env.engine.observation import decode_observation
from bigtwo.env.rules.actions import action_table
from bigtwo.env.rules.cards import card_texts, format_cards, parse_cards
from bigtwo.env.rules.variant import CHOICES, Variant, choice_code, load_variant

DECK = frozenset(range(52))
TWOS = frozenset(range(48, 52))


# ---------------------------------------------------------------- helpers


def cards_of(mask: int | np.integer) -> frozenset[int]:
    m = int(mask)
    return frozenset(c for c in range(52) if m >> c & 1)


def mask_of(cards: Sequence[int] | frozenset[int]) -> int:
    m = 0
    for c in cards:
        m |= 1 << int(c)
    return m


def snapshot(engine: Engine) -> dict[str, bytes]:
    """Every state array, byte for byte."""
    return {name: arr.tobytes() for name, arr in engine.state._asdict().items()}


def legal_lists(engine: Engine) -> list[list[int]]:
    ids, counts = engine.legal_actions()
    return [[int(a) for a in ids[g, : counts[g]]] for g in range(engine.num_matches)]


def random_actions(engine: Engine, rng: random.Random, sit_out: float = 0.0, play_bias: float = 0.5) -> np.ndarray:
    """One legal id per game (-1 where the match is over, or at random with ``sit_out``)."""
    out = np.full(engine.num_matches, -1, np.int64)
    for g, legal in enumerate(legal_lists(engine)):
        if engine.over[g] or rng.random() < sit_out:
            continue
        plays = [a for a in legal if a]
        out[g] = rng.choice(plays) if plays and rng.random() < play_bias else rng.choice(legal)
    return out


def card_value(card: int, variant: Variant) -> int:
    return card // 4 * 4 + variant.suit_rank[card % 4]


def tier(n: int) -> int:
    return n if n <= 9 else 2 * n if n <= 12 else 3 * n


def collected(n: int, variant: Variant) -> float:
    """What a loser with ``n`` counted cards pays under ``collect``: n times its bracket's multiplier."""
    brackets = [m for from_cards, m in variant.tiers if n >= from_cards]
    return n * (brackets[-1] if brackets else 1.0)


def order_step(engine: Engine, g: int) -> int:
    """+1 when game ``g`` plays seat + 1 next, -1 when it is reversed."""
    return -1 if engine.state.reverse[g] else 1


# ---------------------------------------------------------------- batch of N == N single games

BATCH_CASES = [
    ("taiwan", {}, False),
    ("online-cn", {"players": 3, "cards_per_player": 8, "games": 3}, False),
    ("japan", {"pair_chain": True, "cards_per_player": 10, "games": 2}, True),
    ("online-cn", {"cards_per_player": 6, "games": 2, "buy_in": 5, "rake": 0.5}, True),
    (
        "hong-kong",
        {"players": 2, "cards_per_player": 7, "last_card_rule": "enforce", "games": 3, "opening_every_game": True},
        True,
    ),
    ("pusoy-dos", {"cards_per_player": 5, "scoring": "win_loss", "games": 40, "target_score": 2}, True),
    ("taiwan", {"cards_per_player": 4, "games": 3, "turn_order": "random", "last_card_rule": "enforce"}, True),
    (
        "online-cn",
        {"players": 3, "cards_per_player": 6, "games": 4, "turn_order": "random", "scoring": "collect"},
        False,
    ),
]


def assert_same_as_singles(batch: Engine, singles: list[Engine]) -> None:
    B = batch.state
    batch_legal = legal_lists(batch)
    batch_mask = batch.legal_mask()
    batch_obs = [batch.observe().copy()] + [
        batch.observe(seats=np.full(batch.num_matches, s)).copy() for s in range(batch.players)
    ]
    for g, single in enumerate(singles):
        S = single.state
        for name, arr in B._asdict().items():
            if name == "legal":
                continue  # compared as lists below (the padding is scratch space)
            np.testing.assert_array_equal(arr[g], getattr(S, name)[0], err_msg=f"match {g}: state.{name}")
        assert batch_legal[g] == legal_lists(single)[0], f"match {g}: legal list"
        np.testing.assert_array_equal(batch_mask[g], single.legal_mask()[0])
        single_obs = [single.observe().copy()] + [single.observe(seats=[s]).copy() for s in range(single.players)]
        for k, (ob, os_) in enumerate(zip(batch_obs, single_obs, strict=True)):
            np.testing.assert_array_equal(ob[g], os_[0], err_msg=f"match {g}: observation {k}")


@pytest.mark.parametrize(("name", "overrides", "autoreset"), BATCH_CASES)
def test_batch_equals_single_games(name: str, overrides: dict, autoreset: bool) -> None:
    v = load_variant(name, **overrides)
    seeds = [0, 1, 2**62 + 12345] + [int(s) for s in np.random.default_rng(3).integers(0, 2**62, size=3)]
    batch = Engine(v, len(seeds), seed=seeds, autoreset=autoreset)
    singles = [Engine(v, 1, seed=s, autoreset=autoreset) for s in seeds]
    rng = random.Random(11)
    matches_ended = np.zeros(len(seeds), int)
    for _ in range(300 if autoreset else 5_000):
        assert_same_as_singles(batch, singles)
        if batch.over.all():
            break
        actions = random_actions(batch, rng, sit_out=0.15, play_bias=0.7)
        result = batch.step(actions)
        for g, single in enumerate(singles):
            one = single.step(actions[g : g + 1])
            assert (bool(result.game_over[g]), bool(result.match_over[g])) == (one.game_over[0], one.match_over[0])
            np.testing.assert_array_equal(result.payoffs[g], one.payoffs[0])
            if result.game_over[g]:
                assert result.winner[g] == one.winner[0]
        matches_ended += result.match_over
    else:
        assert autoreset, "matches did not end"
    assert (matches_ended >= 1).all(), matches_ended
    assert not autoreset or (matches_ended >= 2).sum() >= 2, matches_ended  # play went on after a reset
    assert not autoreset or not batch.over.any()


def test_int_seed_is_one_seed_per_game() -> None:
    v = load_variant("online-cn", games=2)
    batch = Engine(v, 3, seed=40)
    listed = Engine(v, 3, seed=[40, 41, 42])
    singles = [Engine(v, 1, seed=40 + g) for g in range(3)]
    assert snapshot(batch) == snapshot(listed)
    assert_same_as_singles(batch, singles)


# ---------------------------------------------------------------- invariants of random play

INVARIANT_CASES = [
    ("taiwan", {"games": 3}),
    ("hong-kong", {"players": 3, "games": 2, "opening_every_game": True}),
    ("japan", {"players": 2, "cards_per_player": 26, "pair_chain": True}),
    ("japan", {"cards_per_player": 9, "last_card_rule": "enforce", "games": 3, "penalty_multiplier_for_twos": 2}),
    ("online-cn", {"cards_per_player": 6, "games": 4}),
    ("online-cn", {"players": 3, "cards_per_player": 7, "scoring": "cards", "games": 3, "unit": 2}),
    ("online-cn", {"players": 2, "cards_per_player": 8, "scoring": "tiered", "games": 3}),
    ("online-cn", {"cards_per_player": 7, "buy_in": 5, "rake": 0.5, "games": 4}),
    ("pusoy-dos", {"cards_per_player": 7, "scoring": "win_loss", "unit": 2, "games": 3, "rake": 0.25}),
    ("taiwan", {"cards_per_player": 7, "buy_in": 6, "games": 5, "penalty_multiplier_for_twos": 3}),
    ("taiwan", {"cards_per_player": 6, "games": 30, "target_score": 10}),
    ("japan", {"scoring": "collect", "tiers": [[8, 2], [12, 3]], "games": 2, "penalty_multiplier_for_twos": 2}),
    ("online-cn", {"cards_per_player": 6, "scoring": "collect", "tiers": [[4, 1.5]], "buy_in": 9, "games": 4}),
    ("hong-kong", {"players": 3, "cards_per_player": 6, "games": 5, "turn_order": "random", "unit": 2}),
]


def check_position(engine: Engine, g: int, dealt: frozenset[int]) -> None:
    """Cards, legal list and observations of game ``g`` (not over) at one step."""
    S, v, T = engine.state, engine.variant, engine.table
    p, cpp = v.players, v.cards_per_player
    hands = [cards_of(h) for h in S.hands[g]]
    played = [cards_of(m) for m in S.played[g]]
    # every card accounted for: held, played this game, or never dealt, each exactly once
    seen = [c for h in hands + played for c in h]
    assert len(seen) == len(set(seen)), f"match {g}: a card held or played twice"
    assert set(seen) == dealt and len(DECK - dealt) == 52 - p * cpp
    for s in range(p):
        assert S.counts[g, s] == len(hands[s]) and len(hands[s] | played[s]) == cpp
    # legal list: sorted, from the hand, no pass on a lead, the opening card held
    seat = int(S.current[g])
    legal = legal_lists(engine)[g]
    assert legal and legal == sorted(set(legal))
    leading = S.table_action[g] == 0
    assert (0 not in legal) if leading else (legal[0] == 0)
    for a in legal[1:] if not leading else legal:
        cards = cards_of(T.masks[a])
        assert cards <= hands[seat]
        if S.opening[g] >= 0:
            assert leading and int(S.opening[g]) in cards
    # observations: relative seat k is k places on in this game's order; only the seat to act
    # sees a legal summary, a duty or an opening card
    step = order_step(engine, g)
    for s in range(p):
        obs = engine.observe(seats=np.full(engine.num_matches, s))[g].copy()
        part = decode_observation(obs, p)
        assert cards_of(mask_of(np.flatnonzero(part["hand"]))) == hands[s]
        after = [(s + step * k) % p for k in range(p)]
        for k in range(p):
            assert set(np.flatnonzero(part["played"][k])) == played[after[k]]
        np.testing.assert_allclose(part["cards_left_fraction"], [len(hands[after[k]]) / cpp for k in range(p)])
        if S.table_seat[g] >= 0:
            assert after[int(part["table_seat"])] == S.table_seat[g]
        summary = part["legal_summary"]
        if s != seat:
            assert not summary.any() and part["duty"] == 0 and not part["opening_card"].any()
        else:
            sizes = {int(T.sizes[a]) for a in legal if a}
            want = [0 in legal] + [n in sizes for n in (1, 2, 3, 5, 6)] + [False] * 6
            assert summary.astype(bool).tolist() == want
            assert part["duty"] == S.duty[g]


def expected_payoffs(variant: Variant, left: list[frozenset[int]], winner: int, liable: int) -> list[float]:
    """Payoffs of a game without table stakes and rake, by RULES.md's scoring."""
    p, unit = variant.players, variant.unit
    n = [len(h) + (variant.penalty_multiplier_for_twos - 1) * len(h & TWOS) for h in left]
    if variant.scoring == "cards":
        if liable >= 0:
            return [-sum(n) * unit if s == liable else 0.0 for s in range(p)]
        return [-n[s] * unit for s in range(p)]
    if variant.scoring == "tiered":
        base = [-tier(n[s]) * unit for s in range(p)]
        base[winner] = sum(tier(n[s]) for s in range(p) if s != winner) * unit
    elif variant.scoring == "pairwise":
        base = [sum(n[j] - n[i] for j in range(p)) * unit for i in range(p)]
    elif variant.scoring == "collect":
        base = [-collected(n[s], variant) * unit for s in range(p)]
        base[winner] = sum(collected(n[s], variant) for s in range(p) if s != winner) * unit
    else:
        base = [-unit / (p - 1)] * p
        base[winner] = unit
    if liable >= 0:
        gains = [0.0 if s == liable else max(base[s], 0.0) for s in range(p)]
        gains[liable] = -sum(gains)
        return gains
    return base


def check_payoffs(
    variant: Variant, left: list[frozenset[int]], winner: int, liable: int, bankroll: np.ndarray, payoffs: np.ndarray
) -> None:
    rake = variant.rake
    assert not left[winner]
    before_rake = payoffs + rake
    uncapped = expected_payoffs(variant, left, winner, liable)
    if variant.buy_in == 0:
        np.testing.assert_allclose(before_rake, uncapped, atol=1e-9)
        return
    stake = np.maximum(bankroll, 0.0)
    assert (before_rake >= -stake - 1e-9).all(), "a seat lost more than it had at the table"
    if variant.scoring == "cards":
        np.testing.assert_allclose(before_rake, np.maximum(uncapped, -stake), atol=1e-9)
    else:
        assert before_rake.sum() == pytest.approx(0.0, abs=1e-9)  # caps move money, never make it
        if (stake >= sum(abs(x) for x in uncapped)).all():
            np.testing.assert_allclose(before_rake, uncapped, atol=1e-9)  # no cap can bind


@pytest.mark.parametrize(("name", "overrides"), INVARIANT_CASES)
def test_invariants_of_random_play(name: str, overrides: dict) -> None:
    v = load_variant(name, **overrides)
    n, p = 12, v.players
    engine = Engine(v, n, seed=zlib.crc32(repr((name, sorted(overrides.items()))).encode()))  # same seed every run
    S = engine.state
    rng = random.Random(5)
    dealt = [frozenset().union(*(cards_of(h) for h in S.hands[g])) for g in range(n)]
    totals = np.zeros((n, p))
    games = np.zeros(n, int)
    for _ in range(20_000):
        if engine.over.all():
            break
        for g in range(n):
            if not engine.over[g]:
                check_position(engine, g, dealt[g])
        hands_before, breach_before, reverse_before = S.hands.copy(), S.breach.copy(), S.reverse.copy()
        scores_before = S.match_scores.copy()
        actions = random_actions(engine, rng, sit_out=0.1)
        result = engine.step(actions)
        for g in np.flatnonzero(result.game_over):
            w = int(result.winner[g])
            assert cards_of(engine.table.masks[actions[g]]) == cards_of(hands_before[g, w]), "won without going out"
            left = [frozenset() if s == w else cards_of(hands_before[g, s]) for s in range(p)]
            before = (w + 1) % p if reverse_before[g] else (w - 1) % p  # the seat before the winner
            liable = before if v.last_card_rule == "liability" and breach_before[g, w] else -1
            bankroll = v.buy_in + scores_before[g]
            check_payoffs(v, left, w, liable, bankroll, result.payoffs[g])
            if v.scoring != "cards":
                assert result.payoffs[g].sum() == pytest.approx(-p * v.rake, abs=1e-9)
            totals[g] += result.payoffs[g]
            games[g] += 1
            np.testing.assert_allclose(S.match_scores[g], totals[g], atol=1e-9)
            assert S.games_played[g] == games[g]
            if result.match_over[g]:
                assert S.over[g] and S.current[g] == -1 and engine.legal_actions()[1][g] == 0
                reached = v.target_score > 0 and (
                    (totals[g] >= v.target_score).any()
                    or (v.scoring == "cards" and (-totals[g] >= v.target_score).any())
                )
                assert games[g] == v.games or reached
            else:
                dealt[g] = frozenset().union(*(cards_of(h) for h in S.hands[g]))
                assert (S.counts[g] == v.cards_per_player).all() and not S.played[g].any()
                if v.opening_every_game:
                    assert S.opening[g] >= 0 and S.hands[g, S.current[g]] >> np.uint64(S.opening[g]) & np.uint64(1)
                else:
                    assert S.current[g] == w and S.opening[g] == -1
        for g in np.flatnonzero(~result.game_over & (actions >= 0)):
            assert not result.payoffs[g].any()
    assert engine.over.all()
    assert games.sum() >= n


def test_autoreset_starts_a_fresh_match() -> None:
    v = load_variant("taiwan", cards_per_player=5, games=2)
    engine = Engine(v, 4, seed=3, autoreset=True)
    S, rng = engine.state, random.Random(2)
    ended = 0
    for _ in range(2_000):
        actions = random_actions(engine, rng, play_bias=0.9)
        deals_before = S.deal_count.copy()
        result = engine.step(actions)
        for g in np.flatnonzero(result.match_over):
            ended += 1
            assert result.game_over[g] and not engine.over[g]
            assert S.games_played[g] == 0 and not S.match_scores[g].any()
            assert S.deal_count[g] == deals_before[g] + 1 and (S.counts[g] == 5).all()
            assert S.opening[g] >= 0 and S.table_action[g] == 0  # the new match opens by the opening rule
        if ended >= 12:
            break
    assert ended >= 12


# ---------------------------------------------------------------- no leak through observations

LEAK_CASES = [
    ("taiwan", {}),
    ("online-cn", {"players": 3}),
    ("hong-kong", {"players": 3, "cards_per_player": 10}),
    ("pusoy-dos", {"players": 2, "cards_per_player": 9}),
    ("online-cn", {"cards_per_player": 6, "last_card_rule": "enforce"}),
    ("japan", {"players": 3, "cards_per_player": 17, "pair_chain": True}),
]


def redeal(
    variant: Variant,
    dealt: list[frozenset[int]],
    observer: int,
    kept: list[frozenset[int]],
    opening: int,
    rng: random.Random,
) -> list[list[int]]:
    """New hands for a game: the observer's dealt hand unchanged, each opponent keeping the
    cards in ``kept`` (what the observer saw it play, and the opening card) and drawing the rest
    of its count from the cards the observer has not seen. If the game opened with the lowest
    card dealt, no lower card (nor the named opening card) may be dealt instead of it."""
    hidden = DECK - dealt[observer] - frozenset().union(*kept)
    if variant.opening_card_id != opening:  # opened by the lowest card dealt
        hidden = {c for c in hidden if card_value(c, variant) > card_value(opening, variant)}
        hidden.discard(variant.opening_card_id)
    pool = sorted(hidden)
    rng.shuffle(pool)
    hands = []
    for s, hand in enumerate(dealt):
        if s == observer:
            hands.append(sorted(hand))
            continue
        need = len(hand) - len(kept[s])
        hands.append(sorted(kept[s] | frozenset(pool[:need])))
        pool = pool[need:]
    return hands


@pytest.mark.parametrize(("name", "overrides"), LEAK_CASES)
def test_no_leak_at_game_start(name: str, overrides: dict) -> None:
    v = load_variant(name, **overrides)
    rng = random.Random(17)
    changed = 0
    for seed in range(6):
        a = Engine(v, 1, seed=seed)
        dealt = [cards_of(h) for h in a.state.hands[0]]
        opening, leader = int(a.state.opening[0]), int(a.state.current[0])
        for observer in range(v.players):
            kept = [frozenset({opening}) if s == leader and s != observer else frozenset() for s in range(v.players)]
            hands = redeal(v, dealt, observer, kept, opening, rng)
            b = Engine(v, 1, seed=seed)
            b.reset(seed=seed, hands=[hands])
            assert (int(b.state.current[0]), int(b.state.opening[0])) == (leader, opening)
            changed += [cards_of(h) for h in b.state.hands[0]] != dealt
            np.testing.assert_array_equal(
                a.observe(seats=[observer]), b.observe(seats=[observer]), err_msg=f"seed {seed}, observer {observer}"
            )
    assert changed >= 5 * v.players  # the test redealt something


@pytest.mark.parametrize(("name", "overrides"), LEAK_CASES)
def test_no_leak_mid_game(name: str, overrides: dict) -> None:
    """Two games with the same public history (the observer's hand, every play) and different
    unseen cards look the same to the observer at every step."""
    v = load_variant(name, **overrides)
    rng = random.Random(23)
    compared = 0
    for seed in range(8):
        observer = seed % v.players
        a = Engine(v, 1, seed=100 + seed)
        dealt = [cards_of(h) for h in a.state.hands[0]]
        opening, leader = int(a.state.opening[0]), int(a.state.current[0])
        views, actions = [a.observe(seats=[observer]).copy()], []
        played = a.state.played[0].copy()
        for _ in range(rng.randint(4, 60)):
            action = random_actions(a, rng, play_bias=0.6)
            if a.step(action).game_over[0]:
                break  # stop before the end: the next game is dealt from the seed anyway
            actions.append(int(action[0]))
            views.append(a.observe(seats=[observer]).copy())
            played = a.state.played[0].copy()
        kept = [cards_of(m) | ({opening} if s == leader else set()) for s, m in enumerate(played)]
        kept[observer] = frozenset()
        for _attempt in range(20):  # under ``enforce`` a redeal can contradict a forced play: redeal
            hands = redeal(v, dealt, observer, kept, opening, rng)
            b = Engine(v, 1, seed=100 + seed)
            b.reset(seed=100 + seed, hands=[hands])
            try:
                for i, action in enumerate(actions):
                    np.testing.assert_array_equal(views[i], b.observe(seats=[observer]), err_msg=f"step {i}")
                    b.step([action])
            except ValueError:
                assert v.last_card_rule == "enforce"
                continue
            np.testing.assert_array_equal(views[len(actions)], b.observe(seats=[observer]))
            compared += 1
            break
    assert compared >= 5


# ---------------------------------------------------------------- errors


def scripted(variant: Variant, hands: list[str], games: int = 2) -> Engine:
    engine = Engine(variant, games, seed=9)
    engine.reset(seed=9, hands=[hands] * games)
    return engine


def assert_illegal(engine: Engine, g: int, action: int, *words: str) -> None:
    """``action`` in match ``g`` (the others sit out or play a legal id) raises, naming ``words``,
    and leaves every state array as it was."""
    before = snapshot(engine)
    legal = legal_lists(engine)
    actions = [action if h == g else (legal[h][-1] if legal[h] else -1) for h in range(engine.num_matches)]
    with pytest.raises(ValueError) as info:
        engine.step(actions)
    message = str(info.value)
    for word in words:
        assert word in message, (word, message)
    assert snapshot(engine) == before


def test_illegal_actions_raise_and_change_nothing() -> None:
    v = load_variant("taiwan", cards_per_player=4)
    engine = scripted(v, ["5D 9S KH 3C", "4D 4C 7H 2S", "6D 8C 10H QS", "3D JD JC AS"])
    T = engine.table
    assert engine.current.tolist() == [0, 0]  # 3C opens
    assert_illegal(engine, 1, 0, "match 1", "seat 0", "pass", "leader cannot pass")
    assert_illegal(engine, 1, T.encode("5D"), "seat 0", "5D", "must contain 3C")
    assert_illegal(engine, 0, T.encode("4D"), "seat 0", "4D", "not in hand")
    assert_illegal(engine, 1, T.size, "out of range")
    assert_illegal(engine, 1, -2, "out of range")  # -1 sits out; other negative ids are errors
    engine.step([T.encode("3C")] * 2)
    engine.step([T.encode("7H")] * 2)
    assert engine.current.tolist() == [2, 2]
    assert_illegal(engine, 0, T.encode("6D"), "seat 2", "6D", "does not beat")
    assert_illegal(engine, 1, T.encode("JD JC"), "seat 2", "JD")  # not in hand (seat 3's)
    engine2 = scripted(v, ["3C 5D 6D 9S", "4D 4C 7H 2S", "6C 6H 10H QS", "3D JD JC AS"])
    engine2.step([T.encode("3C")] * 2)
    engine2.step([T.encode("4D")] * 2)
    assert_illegal(engine2, 1, T.encode("6C 6H"), "seat 2", "6C", "answer with 1 card(s)")
    engine3 = scripted(v, ["3C 5D 5H 9S", "4D 4C 7H 2S", "6C 8C 10H QS", "3D JD JC AS"])
    engine3.step([T.encode("3C")] * 2)
    engine3.step([0] * 2)
    engine3.step([0] * 2)
    engine3.step([0] * 2)
    assert engine3.current.tolist() == [0, 0] and engine3.state.table_action.tolist() == [0, 0]
    engine3.step([T.encode("5D 5H")] * 2)
    assert_illegal(engine3, 0, T.encode("2S"), "seat 1", "2S", "answer with 2 card(s)")
    assert_illegal(engine3, 1, T.encode("4D 4C"), "seat 1", "4D", "does not beat")


def test_illegal_under_the_last_card_rule() -> None:
    v = load_variant("taiwan", players=2, cards_per_player=3, last_card_rule="enforce")
    engine = scripted(v, ["3C 5D 9S", "4D 6C 7H"])
    T = engine.table
    for play in ("3C", "7H", "pass"):
        engine.step([T.encode(play)] * 2)
    engine.step([T.encode("4D")] * 2)  # seat 1 leads its second-to-last card
    assert engine.current.tolist() == [0, 0] and engine.state.counts[0].tolist() == [2, 1]
    assert legal_lists(engine)[0] == [0, T.encode("9S")]
    assert_illegal(engine, 1, T.encode("5D"), "seat 0", "5D", "last-card rule")


def test_bad_action_arrays_raise() -> None:
    engine = Engine("taiwan", 2, seed=1)
    before = snapshot(engine)
    for bad in ([1], [1, 2, 3], [[1, 2]], [1.0, 2.0], np.array(["1", "2"]), 5):
        with pytest.raises(ValueError):
            engine.step(bad)
    assert snapshot(engine) == before


def test_stepping_a_finished_match_raises() -> None:
    v = load_variant("hong-kong", cards_per_player=3, games=2)
    engine = Engine(v, 2, seed=4)
    rng = random.Random(1)
    while not engine.over[0]:
        actions = random_actions(engine, rng, play_bias=0.9)
        actions[1] = -1  # game 1 waits at its first turn
        engine.step(actions)
    before = snapshot(engine)
    for action in (0, 1, legal_lists(engine)[1][0]):
        with pytest.raises(ValueError, match="match 0 is over"):
            engine.step([action, legal_lists(engine)[1][0]])
    assert snapshot(engine) == before
    result = engine.step([-1, -1])  # sitting out is fine
    assert not result.game_over.any()
    engine.step([-1, legal_lists(engine)[1][0]])  # the other game goes on
    engine.reset(seed=4)
    assert not engine.over.any()


HANDS_4 = ["3D 4D 5D", "3C 4C 5C", "3H 4H 5H", "3S 4S 5S"]


@pytest.mark.parametrize(
    ("hands", "match"),
    [
        ([HANDS_4[:3] + ["3S 4S"]], "seat 3 has 2 cards"),
        ([HANDS_4[:3] + ["3S 4S 5S 6S"]], "seat 3 has 4 cards"),
        ([HANDS_4[:3]], "must give 4 seats"),
        ([HANDS_4, HANDS_4], "must give 1 match"),
        ([HANDS_4[:3] + ["3S 4S 5D"]], "more than one seat"),
        ([HANDS_4[:3] + ["3S 4S 4S"]], "appears twice"),
        ([HANDS_4[:3] + ["3S 4S 1Z"]], "not a card"),
        ([HANDS_4[:3] + [[200, 1, 2]]], "out of range"),
        (np.zeros((1, 3), np.uint64), "shape"),
        (np.array([[7, 7 << 2, 7 << 6, 7 << 9]], np.uint64), "more than one seat"),
        (np.array([[7, 7 << 3, 7 << 6, 15 << 9]], np.uint64), "has 4 cards"),
    ],
)
def test_bad_hands_raise(hands: object, match: str) -> None:
    engine = Engine(load_variant("taiwan", cards_per_player=3), 1, seed=0)
    with pytest.raises(ValueError, match=match):
        engine.reset(seed=0, hands=hands)


@pytest.mark.parametrize("seed", [-1, 1.5, True, "7", [1, 2], [1, -2, 3], [1.0, 2.0, 3.0], [[1, 2, 3]]])
def test_bad_seeds_raise(seed: object) -> None:
    with pytest.raises(ValueError, match="seed"):
        Engine("taiwan", 3, seed=seed)
    engine = Engine("taiwan", 3, seed=0)
    with pytest.raises(ValueError, match="seed"):
        engine.reset(seed=seed)


@pytest.mark.parametrize("num_matches", [0, -1, 2.0, "3"])
def test_bad_num_matches_raise(num_matches: object) -> None:
    with pytest.raises(ValueError, match="num_matches"):
        Engine("taiwan", num_matches, seed=0)


def test_bad_seed_leaves_the_engine_as_it_was() -> None:
    engine = Engine("taiwan", 2, seed=5)
    before = snapshot(engine)
    with pytest.raises(ValueError):
        engine.reset(seed=[1, -1])
    assert snapshot(engine) == before


def test_bad_hands_leave_the_engine_as_it_was() -> None:
    engine = Engine(load_variant("taiwan", games=3), 2, seed=5)
    rng = random.Random(0)
    for _ in range(30):
        engine.step(random_actions(engine, rng, play_bias=0.9))
    before = snapshot(engine)
    for bad in ([[["3C"]] * 4] * 2, np.zeros((2, 4), np.uint64), [["3D 3C"] * 4] * 2):
        with pytest.raises(ValueError):
            engine.reset(seed=99, hands=bad)
        assert snapshot(engine) == before


# ---------------------------------------------------------------- seeds and hands


def test_same_seed_same_deal_and_game() -> None:
    v = load_variant("online-cn", cards_per_player=6, games=3)
    a, b = Engine(v, 4, seed=77), Engine(v, 4, seed=77)
    rng = random.Random(0)
    while not a.over.all():
        assert snapshot(a) == snapshot(b)
        actions = random_actions(a, rng)
        a.step(actions)
        b.step(actions)
    assert snapshot(a) == snapshot(b)
    # reset to the same seed replays the same deals; another seed deals differently
    first = Engine(v, 4, seed=77).state.hands.copy()
    a.reset(seed=77)
    np.testing.assert_array_equal(a.state.hands, first)
    a.reset(seed=78)
    assert (a.state.hands[:3] == first[1:]).all() and (a.state.hands[3] != first[3]).any()
    a.reset(seed=[5, 5, 5, 5])
    assert (a.state.hands == a.state.hands[0]).all()
    deals = {Engine(v, 1).state.hands.tobytes() for _ in range(3)}  # seed=None: fresh entropy
    assert len(deals) == 3


def test_hands_forms_are_equivalent() -> None:
    v = load_variant("taiwan", players=3, cards_per_player=5)
    texts = ["3C 5D 9S KH 2D", "4D 4C 7H JS AS", "6D 8C 10H QS 2S"]
    ids = [[int(c) for c in parse_cards(t)] for t in texts]
    masks = np.array([[mask_of(h) for h in ids]], np.uint64)
    engines = []
    for hands in ([texts], texts, [ids], [[card_texts(h) for h in ids]], masks):
        engine = Engine(v, 1, seed=3)
        engine.reset(seed=3, hands=hands)
        engines.append(snapshot(engine))
    assert all(e == engines[0] for e in engines)
    engine = Engine(v, 1, seed=3)
    engine.reset(seed=3, hands=[texts])
    assert [format_cards(sorted(cards_of(h))) for h in engine.state.hands[0]] == [format_cards(sorted(h)) for h in ids]
    assert engine.current[0] == 0 and engine.state.opening[0] == parse_cards("3C")[0]


def test_threaded_batches_match_the_calling_thread() -> None:
    """From 1,024 games the kernels run on slices in threads: the result must not change."""
    n = 1024
    one = Engine("online-cn", n, seed=11, autoreset=True, threads=1)
    two = Engine("online-cn", n, seed=11, autoreset=True, threads=2)
    rng = np.random.default_rng(0)
    rows = np.arange(n)
    for _ in range(60):
        ids, counts = one.legal_actions()
        ids2, counts2 = two.legal_actions()
        np.testing.assert_array_equal(counts, counts2)
        np.testing.assert_array_equal(ids, ids2)
        np.testing.assert_array_equal(one.observe(), two.observe())
        actions = ids[rows, (rng.random(n) * counts).astype(np.int64)]
        one.step(actions)
        two.step(actions)
    for a, b in zip(one.state, two.state, strict=True):
        np.testing.assert_array_equal(a, b)


MID_MATCH_LEAK_CASES = [
    ("online-cn", {"games": 3, "cards_per_player": 5}),  # liability, two_ends_trick, pairwise
    ("taiwan", {"players": 3, "games": 4, "cards_per_player": 6, "last_card_rule": "liability"}),
    ("japan", {"players": 2, "games": 2, "cards_per_player": 8, "pair_chain": True}),
]


@pytest.mark.parametrize(("name", "overrides"), MID_MATCH_LEAK_CASES)
def test_no_leak_mid_match(name: str, overrides: dict) -> None:
    """Positions set later in a match (match scores, games played, the direction, breach flags,
    earlier moves and passes of this game) that differ only in the cards the observer has not
    seen give that observer the same observations at every step of the same public play, and
    every part of version 1 takes values other than its empty ones on the way."""
    v = load_variant(name, **overrides)
    p = v.players
    rng = random.Random(31)
    compared, filled = 0, set()
    for seed in range(12):
        observer = seed % p
        a = Engine(v, 1, seed=200 + seed)
        dealt = [cards_of(h) for h in a.state.hands[0]]
        leader = (seed + 1) % p
        scores = [rng.choice((-6.0, -2.0, 0.0, 3.0)) for _ in range(p)]
        position = {
            "current": leader,
            "match_scores": scores,
            "games_played": 1 + seed % (v.games - 1),
            "reverse": bool(seed % 2),
        }
        hands = np.array([mask_of(h) for h in dealt], np.uint64)
        a.set_position(0, hands, **position)
        views, actions = [a.observe(seats=[observer]).copy()], []
        for _ in range(rng.randint(3, 40)):
            action = random_actions(a, rng, play_bias=0.5)
            if a.step(action).game_over[0]:
                break
            actions.append(int(action[0]))
            views.append(a.observe(seats=[observer]).copy())
        for view in views:
            parts = decode_observation(view[0], p)
            filled |= {
                name
                for name in ("unseen", "passed_on", "match_scores", "breach", "reversed", "games_played_fraction")
                if parts[name].any()
            }
            filled |= {"recent_seat"} if (parts["recent_seat"] >= 0).any() else set()
        kept = [cards_of(m) for m in a.state.played[0]]
        kept[observer] = frozenset()
        for _attempt in range(20):  # a redeal can contradict a forced play (a pass with too few cards): redeal
            redealt = redeal(v, dealt, observer, kept, v.opening_card_id, rng)
            b = Engine(v, 1, seed=200 + seed)
            b.set_position(0, np.array([mask_of(h) for h in redealt], np.uint64), **position)
            try:
                for i, action in enumerate(actions):
                    np.testing.assert_array_equal(views[i], b.observe(seats=[observer]), err_msg=f"step {i}")
                    b.step([action])
            except ValueError:
                continue
            np.testing.assert_array_equal(views[len(actions)], b.observe(seats=[observer]))
            compared += 1
            break
    assert compared >= 8
    assert filled >= {"unseen", "recent_seat", "passed_on", "match_scores", "reversed", "games_played_fraction"}
    if v.last_card_rule == "liability":
        assert "breach" in filled, "no breach came up: the test does not cover the breach flags"


@pytest.mark.parametrize(
    ("setting", "prefix", "slot"),
    [
        ("last_card_rule", "LAST_CARD", kernels.IP_LAST_CARD),
        ("scoring", "SCORING", kernels.IP_SCORING),
        ("turn_order", "TURN_ORDER", kernels.IP_TURN_ORDER),
    ],
)
def test_the_kernels_setting_codes_are_the_variant_choices(setting: str, prefix: str, slot: int) -> None:
    """The kernels name a code for every value of ``variant.CHOICES[setting]`` and no other, each
    its place there, and the engine hands the kernels that code: one declaration of the order."""
    codes = {name: value for name, value in vars(kernels).items() if name.startswith(prefix + "_")}
    assert codes == {f"{prefix}_{value.upper()}": choice_code(setting, value) for value in CHOICES[setting]}
    for value in CHOICES[setting]:
        variant = load_variant("taiwan", **{setting: value})
        assert make_rules(variant, action_table(variant)).ip[slot] == codes[f"{prefix}_{value.upper()}"]


def test_a_game_records_seed_range_is_the_engines() -> None:
    """A record takes every seed the engine does (``seeds.is_seed``), and no other."""
    from bigtwo.env.engine.seeds import MAX_SEED
    from bigtwo.env.envs.game import Game
    from bigtwo.env.records.record import check_record

    record = Game("taiwan", seed=MAX_SEED).to_record()
    assert check_record(record)["seed"] == MAX_SEED == Game.from_record(record).seed
    for bad in (MAX_SEED + 1, -1, True, 1.0, None, "7"):
        with pytest.raises(ValueError, match=r"game record: seed must be an integer 0\.\.2\*\*64-1, got "):
            check_record(dict(record, seed=bad))
