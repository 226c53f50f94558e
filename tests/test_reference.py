"""Scripted checks of the slow reference (tests/reference.py) against RULES.md's examples."""

from __future__ import annotations

import random

import pytest

from bigtwo.env.rules.cards import parse_cards
from bigtwo.env.rules.variant import load_variant

try:  # tests/ may or may not be a package
    from tests.reference import (
        PASS,
        RefGame,
        RefMatch,
        deal,
        play_out,
        random_policy,
        ref_all_plays,
        ref_beats,
        ref_classify,
    )
except ModuleNotFoundError:  # pragma: no cover - rootdir-less layout
    from reference import (
        PASS,
        RefGame,
        RefMatch,
        deal,
        play_out,
        random_policy,
        ref_all_plays,
        ref_beats,
        ref_classify,
    )


def cs(text: str) -> frozenset[int]:
    return frozenset(int(c) for c in parse_cards(text))


def hand(text: str) -> set[int]:
    return set(cs(text))


def finished(variant_name: str, hands: list[str], winner: int, **overrides: object) -> RefGame:
    """A game forced into its end state: these hands left, ``winner`` out."""
    v = load_variant(variant_name, **overrides)
    game = RefGame(v, [list(range(s * 13, s * 13 + 13)) for s in range(v.players)])
    game.hands = [hand(h) for h in hands]
    assert not game.hands[winner]
    game.over, game.winner = True, winner
    return game


# ---- classification and comparison ---------------------------------------------------


def test_tw_straight_order() -> None:
    tw = load_variant("taiwan")
    order = ["AD 2C 3H 4S 5D", "2D 3C 4H 5S 6D", "10D JC QH KS AD", "4D 5C 6H 7S 8D", "3D 4C 5H 6S 7D"]
    kinds = [ref_classify(cs(t), tw) for t in order]
    assert all(k is not None and k[0] == "straight" for k in kinds)
    for higher, lower in zip(order, order[1:], strict=False):
        assert ref_beats(cs(higher), cs(lower), tw)
        assert not ref_beats(cs(lower), cs(higher), tw)
    # same window: the top card's suit decides (the 2 is the top card of A-2-3-4-5)
    assert ref_beats(cs("AD 2S 3D 4D 5D"), cs("AS 2H 3S 4S 5S"), tw)


def test_jqka2_straight_only_in_hk() -> None:
    tw, hk, jp = load_variant("taiwan"), load_variant("hong-kong"), load_variant("japan")
    jqka2 = cs("JD QC KH AS 2D")
    assert ref_classify(jqka2, tw) is None
    assert ref_classify(cs("QD KC AH 2S 3D"), tw) is None
    kind = ref_classify(jqka2, hk)
    assert kind is not None and kind[0] == "straight"
    assert ref_beats(jqka2, cs("10D JC QH KS AS"), hk)
    assert ref_classify(cs("AD 2C 3H 4S 5D"), hk) is None
    assert ref_classify(cs("AD 2C 3H 4S 5D"), jp) is None
    low = load_variant("japan", straights="jp_a2345_low")
    assert ref_beats(cs("3D 4C 5H 6S 7D"), cs("AS 2S 3H 4S 5S"), low)  # A-2-3-4-5 is the lowest
    assert ref_beats(cs("AS 2S 3S 4S 5S"), cs("KD KC KH KS AD"), low)  # in one suit: a straight flush
    # one suit, not a window: TW "never a legal hand, even in one suit"; CN only "not a straight"
    assert ref_classify(cs("JS QS KS AS 2S"), tw) is None
    kind = ref_classify(cs("JS QS KS AS 2S"), load_variant("online-cn"))
    assert kind is not None and kind[0] == "flush"
    kind = ref_classify(cs("JH QH KH AH 2H"), hk)
    assert kind is not None and kind[0] == "straight_flush"


def test_flush_orders() -> None:
    low_spades, high_hearts = cs("3S 5S 7S 9S JS"), cs("4H 6H 8H 10H 2H")
    suit_first, rank_first = load_variant("taiwan"), load_variant("japan")
    assert ref_beats(low_spades, high_hearts, suit_first)
    assert ref_beats(high_hearts, low_spades, rank_first)
    # rank_first: equal ranks, then suit; suit_first: same suit, then ranks from the top down
    assert ref_beats(cs("3S 5S 7S 9S JS"), cs("3H 5H 7H 9H JH"), rank_first)
    assert ref_beats(cs("3S 5S 8S 9S JS"), cs("4S 6S 7S 9S JS"), suit_first)
    # Pusoy Dos: diamonds are the top suit
    assert ref_beats(cs("3D 5D 7D 9D JD"), high_hearts, load_variant("pusoy-dos"))


def test_classes_and_shapes() -> None:
    v = load_variant("taiwan")
    assert ref_beats(cs("3D 3C 3H 4D 4C"), cs("AS KS 9S 5S 4S"), v)  # full house > flush
    assert ref_beats(cs("3D 3C 3H 3S 4C"), cs("2D 2C 2H AD AC"), v)  # four > full house
    assert ref_beats(cs("3D 4D 5D 6D 7D"), cs("2D 2C 2H 2S AC"), v)  # straight flush > four
    assert ref_beats(cs("5D 5C 5H 3S 3C"), cs("4D 4C 4H AS AC"), v)  # the pair never matters
    assert ref_beats(cs("9D 9S"), cs("9C 9H"), v)
    assert not ref_beats(cs("9D 9S"), cs("3D"), v)
    assert ref_classify(cs("3D 4D"), v) is None
    assert ref_classify(cs("3D 3C 3H 3S"), v) is None  # no four-card plays
    chain = load_variant("japan", pair_chain=True)
    kind = ref_classify(cs("5D 5C 6H 6S 7D 7C"), chain)
    assert kind == ("pair_chain", (4, 1))
    assert ref_classify(cs("QD QC KH KS AD AC"), chain) is not None
    assert ref_classify(cs("KH KS AD AC 2D 2C"), chain) is None  # no 2 in a chain
    assert ref_classify(cs("5D 5C 6H 6S 7D 7C"), v) is None
    plays = ref_all_plays(cs("5D 5C 6H 6S 7D 7C"), chain)
    assert cs("5D 5C 6H 6S 7D 7C") in plays and len([p for p in plays if len(p) == 6]) == 1


# ---- opening and the course of a trick -------------------------------------------------


def test_opening_card_and_lowest() -> None:
    v = load_variant("taiwan")
    hands = [list(range(s, 52, 4)) for s in range(4)]  # seat s holds every card of suit s
    game = RefGame(v, hands)
    assert game.current == 1  # 3C
    legal = game.legal()
    assert PASS not in legal and legal and all(int(parse_cards("3C")[0]) in p for p in legal)
    cn3 = load_variant("online-cn", players=3)
    hands3 = [sorted(cs("4C 5D 6H")), sorted(cs("3S 9D 9C")), sorted(cs("KD KH 2S"))]
    game3 = RefGame(cn3, hands3)
    assert game3.current == 1 and all(cs("3S") <= p for p in game3.legal())
    tw3 = load_variant("taiwan", players=3)  # 3C not dealt: the lowest dealt card opens
    assert RefGame(tw3, hands3).current == 1
    free = RefGame(v, hands, leader=2)
    assert free.current == 2 and cs("3H") in free.legal() and cs("4H") in free.legal()


def test_trick_passes_and_fewer_cards() -> None:
    v = load_variant("hong-kong")
    hands = [hand("3D 9D 9C"), hand("4D 5D"), hand("6D KD"), hand("7D 8D")]
    game = RefGame(v, [sorted(h) for h in hands])
    game.play(cs("3D"))
    game.play(cs("4D"))
    game.play(PASS)
    game.play(PASS)
    assert game.current == 0 and game.table == cs("4D")
    game.play(PASS)  # seat 0 passes: seats 2, 3, 0 passed in a row after seat 1
    assert game.current == 1 and game.table is None and game.passes == 0
    game.play(cs("5D"))  # seat 1 leads its last card and wins
    assert game.over and game.winner == 1
    assert game.payoffs() == [-2.0, 0.0, -2.0, -2.0]
    # a pair cannot be answered with one card left
    g2 = RefGame(
        v, [sorted(hand("3D 3C 4D")), [int(parse_cards("2S")[0])], sorted(hand("5D 6D")), sorted(hand("7D 8D"))]
    )
    g2.play(cs("3D 3C"))
    assert g2.legal() == {PASS}


def test_two_ends_trick() -> None:
    v = load_variant("online-cn")
    hands = [sorted(hand("3D 2S 4C")), sorted(hand("5D 6D")), sorted(hand("7D 8D")), sorted(hand("9D 10D"))]
    game = RefGame(v, hands)
    game.play(cs("3D"))
    game.play(PASS)
    game.play(PASS)
    game.play(PASS)
    game.play(cs("2S"))
    assert game.current == 0 and game.table is None
    off = RefGame(load_variant("online-cn", two_ends_trick=False), hands)
    off.play(cs("3D"))
    off.play(cs("5D"))
    off.play(PASS)
    off.play(PASS)
    off.play(cs("2S"))
    assert off.current == 1 and off.table == cs("2S")


# ---- last-card rule ---------------------------------------------------------------------


def _one_card_next(rule: str) -> RefGame:
    v = load_variant("online-cn", last_card_rule=rule)
    hands = [sorted(hand("3D 3C 5D KS")), sorted(hand("4D 2S")), sorted(hand("6D 7D 8D")), sorted(hand("9D 10D JD"))]
    game = RefGame(v, hands)
    game.hands[1] = hand("2S")  # seat 1, next after seat 0, holds exactly one card
    game.opening_card = None
    return game


def test_last_card_enforce() -> None:
    game = _one_card_next("enforce")
    assert game.legal() == {cs("3D 3C")}  # leading: a play of two or more cards
    game.hands[0] = hand("3D 5D KS")
    assert game.legal() == {cs("KS")}  # otherwise the highest single
    game.table, game.table_seat = cs("4C"), 3
    assert game.legal() == {PASS, cs("KS")}  # answering a single: the highest card or pass
    game.table = cs("4C 4H")
    game.hands[0] = hand("5D 5C 6D 6C")
    assert game.legal() == {PASS, cs("5D 5C"), cs("6D 6C")}  # other sizes: unrestricted
    off = _one_card_next("off")
    assert cs("5D") in off.legal()


def test_last_card_liability() -> None:
    game = _one_card_next("liability")
    game.hands[2], game.hands[3] = hand("6D 7D 8D"), hand("9D")
    assert cs("5D") in game.legal()
    game.play(cs("5D"))  # breach: seat 0 had the pair 3D 3C
    assert game.breaches == {(0, 1)}
    game.play(cs("2S"))
    assert game.over and game.winner == 1 and game.liable_seat() == 0
    # n = [3, 0, 3, 1]; pairwise base: [-5, 7, -5, 3]; seat 0 pays the others' gains
    assert game.payoffs() == [-10.0, 7.0, 0.0, 3.0]
    cards = finished("online-cn", ["3D 3C 4C", "", "6D 7D 8D", "9D"], 1, scoring="cards")
    cards.breaches = {(0, 1)}
    assert cards.payoffs() == [-7.0, 0.0, 0.0, 0.0]
    kept = _one_card_next("liability")
    kept.play(cs("3D 3C"))
    assert not kept.breaches


# ---- scoring ------------------------------------------------------------------------------


def test_cn_settlement_example() -> None:
    # A 3, B 0, C 1, D 4 -> B +8, C +4, D -8, A -4
    game = finished("online-cn", ["3D 4D 5D", "", "6D", "7D 8D 9D 10D"], 1)
    assert game.payoffs() == [-4.0, 8.0, 4.0, -8.0]
    doubled = finished("online-cn", ["3D 4D 5D", "", "6D", "7D 8D 9D 10D"], 1, unit=2.0, rake=0.5)
    assert doubled.payoffs() == [-8.5, 15.5, 7.5, -16.5]


def test_table_stakes() -> None:
    game = finished("online-cn", ["3D 4D 5D", "", "6D", "7D 8D 9D 10D"], 1, buy_in=10.0)
    assert game.payoffs() == [-4.0, 8.0, 4.0, -8.0]
    # order B C D A; A (2 left) pays B only 2 of 3, then C nothing, then receives 1 from D
    assert game.payoffs(bankroll=[2.0, 10.0, 10.0, 10.0]) == [-1.0, 7.0, 2.0, -8.0]
    cards = finished("taiwan", ["3D 4D 5D", "", "6D", "7D 8D 9D 10D"], 1, buy_in=3.0)
    assert cards.payoffs() == [-3.0, 0.0, -1.0, -3.0]
    tiered = finished("japan", ["3D 4D 5D", "", "6D", "7D 8D 9D 10D"], 1, buy_in=3.0)
    assert tiered.payoffs() == [-3.0, 7.0, -1.0, -3.0]


def test_tiered_and_twos() -> None:
    deck = [int(c) for c in range(52)]
    thirteen = [" ".join(str(parse_cards([c])[0]) for c in deck[s * 13 : s * 13 + 13]) for s in range(3)]
    game = finished("japan", [*thirteen, ""], 3)
    assert game.payoffs() == [-39.0, -39.0, -39.0, 117.0]
    tiers = finished("japan", ["3D 3C 3H 3S 4D 4C 4H 4S 5D", "", "6D 6C 6H 6S 7D 7C 7H 7S 8D 8C", "9D"], 1)
    assert tiers.payoffs() == [-9.0, 30.0, -20.0, -1.0]
    twos = finished("taiwan", ["2D 2C 3D", "", "4D", "5D"], 1, penalty_multiplier_for_twos=3)
    assert twos.payoffs() == [-7.0, 0.0, -1.0, -1.0]
    wl = finished("taiwan", ["2D 2C 3D", "", "4D", "5D"], 1, scoring="win_loss")
    assert wl.payoffs() == pytest.approx([-1 / 3, 1.0, -1 / 3, -1 / 3])


# ---- whole games and matches ----------------------------------------------------------------


@pytest.mark.parametrize("name", ["taiwan", "online-cn", "japan"])
def test_random_games_invariants(name: str) -> None:
    rng = random.Random(7)
    v = load_variant(name, cards_per_player=7)
    for _ in range(3):
        hands = deal(v, rng)
        game = play_out(RefGame(v, hands), random_policy(rng))
        played = [c for _, p in game.history for c in p]
        assert sorted(played + [c for h in game.hands for c in h]) == sorted(c for h in hands for c in h)
        assert game.winner is not None and not game.hands[game.winner]
        payoffs = game.payoffs()
        if v.scoring != "cards":
            assert sum(payoffs) == pytest.approx(0.0)


def test_match_winner_leads_next() -> None:
    rng = random.Random(3)
    v = load_variant("taiwan", cards_per_player=6, games=3)
    match = RefMatch(v)
    policy = random_policy(rng)
    while not match.over:
        game = match.new_game(deal(v, rng))
        if match.games_played:
            assert game.current == match.last_winner and game.opening_card is None
        match.record(play_out(game, policy))
    assert match.games_played == 3
    target = RefMatch(load_variant("taiwan", cards_per_player=6, games=50, target_score=5))
    target.play((deal(v, rng) for _ in range(50)), policy)
    assert target.over and max(-t for t in target.totals) >= 5 and target.games_played < 50
