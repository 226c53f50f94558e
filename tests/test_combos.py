"""Plays and their order: worked examples from every seed text, and properties of ``beats``.

Seeds (the rule texts RULES.md cites, in the project's shared ``seeds/`` folder): TW ``da-lao-er-taiwan.txt``, JP ``big-two-jp.txt``, HK
``big-two-hong-kong.txt``, CN ``da-lao-er-online-cn.txt``; RULES.md settles where they differ.
The differential property at the end checks ``beats`` against a small comparator written here
from RULES.md, with the straight windows spelled out in text rather than read from the library.
"""

from __future__ import annotations

import itertools

import pytest
from conftest import NAMED_VARIANTS
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from bigtwo.env import Combo, action_table, beats, classify, load_variant, parse_cards

V = {name: load_variant(name) for name in NAMED_VARIANTS}
V["japan+chain"] = load_variant("japan", pair_chain=True)
V["japan+a2345"] = load_variant("japan", straights="jp_a2345_low")
V["taiwan+rank_first"] = load_variant("taiwan", flush_order="rank_first")
ALL = list(V)
TW, HK, JP, CN, PD = V["taiwan"], V["hong-kong"], V["japan"], V["online-cn"], V["pusoy-dos"]

RANKS = ["3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A", "2"]
SUITS = "DCHS"


def kind(cards: str, variant) -> str | None:
    combo = classify(cards, variant)
    return None if combo is None else combo.kind


def assert_ascending(plays: list[str], variant) -> None:
    """Each play beats every earlier one and loses to every later one."""
    for i, j in itertools.combinations(range(len(plays)), 2):
        lo, hi = plays[i], plays[j]
        assert beats(hi, lo, variant), f"{hi} should beat {lo} under {variant.name}"
        assert not beats(lo, hi, variant), f"{lo} should not beat {hi} under {variant.name}"


def straight(ranks: str, suits: str) -> str:
    """``straight("A-2-3-4-5", "SDCHD")`` -> ``"AS 2D 3C 4H 5D"``."""
    return " ".join(r + s for r, s in zip(ranks.split("-"), suits, strict=True))


# --- singles, pairs, triples -------------------------------------------------------------------


@pytest.mark.parametrize("name", ["hong-kong", "japan", "online-cn", "taiwan"])
def test_singles_default_suits(name):
    """JP/HK/TW/CN: ranks 3 < ... < A < 2, then suits D < C < H < S; 2S top, 3D bottom."""
    v = V[name]
    order = [r + s for r in RANKS for s in "DCHS"]
    assert_ascending(order[:6] + order[20:24] + order[-6:], v)
    assert beats("2S", "2H", v) and beats("2D", "AS", v) and beats("4D", "3S", v)
    assert all(beats("2S", c, v) for c in order[:-1])
    assert all(beats(c, "3D", v) for c in order[1:])
    assert classify("10S", v).kind == "single"


def test_singles_pusoy_dos():
    """TW on Pusoy Dos: 3C opens, diamonds rank highest (RULES.md: C < S < H < D)."""
    assert_ascending(["3C", "3S", "3H", "3D", "4C", "AD", "2C", "2S", "2H", "2D"], PD)
    assert beats("3D", "3H", PD) and not beats("3D", "3H", TW)
    assert beats("2D", "2S", PD) and not beats("2D", "2S", TW)


@pytest.mark.parametrize("name", ALL)
def test_pairs_rank_then_highest_suit(name):
    v = V[name]
    assert kind("7H 7C", v) == "pair"  # JP: ハート7とクラブ7
    assert kind("7H 8H", v) is None  # TW: two cards of different ranks are not a pair
    assert beats("4D 4C", "3S 3H", v)  # rank first
    assert beats("2D 2C", "AS AH", v)  # CN: 2s the top pair, 3s the lowest
    hi, lo = ("9D 9C", "9H 9S") if name == "pusoy-dos" else ("9S 9D", "9H 9C")
    assert beats(hi, lo, v) and not beats(lo, hi, v)  # HK: the pair with the highest suit wins


@pytest.mark.parametrize("name", ALL)
def test_triples(name):
    v = V[name]
    assert kind("5D 5H 5S", v) == "triple"
    assert kind("5D 5H 6S", v) is None
    assert beats("2D 2C 2H", "AS AH AC", v)  # CN 2,2,2 highest; JP 台湾ルール 2-2-2 strongest
    assert beats("4D 4C 4H", "3S 3H 3C", v)
    assert not beats("3S 3H 3C", "4D 4C 4H", v)


@pytest.mark.parametrize("name", ALL)
def test_no_four_card_plays(name):
    v = V[name]
    assert classify("QS QH QC QD", v) is None
    assert classify("5D 5C 6D 6C", v) is None
    assert classify("3D 4D 5D 6D", v) is None
    assert classify(parse_cards("3D 4D 5D 6D 7D 8D 9D"), v) is None
    assert classify([], v) is None


# --- straights ---------------------------------------------------------------------------------

NORMAL = ["3-4-5-6-7", "4-5-6-7-8", "5-6-7-8-9", "6-7-8-9-10", "7-8-9-10-J", "8-9-10-J-Q", "9-10-J-Q-K", "10-J-Q-K-A"]
ORDER = {
    "tw": [*NORMAL, "2-3-4-5-6", "A-2-3-4-5"],
    "hk": [*NORMAL, "J-Q-K-A-2"],
    "jp": NORMAL,
    "jp_a2345_low": ["A-2-3-4-5", *NORMAL],
}
TOP = {("tw", "2-3-4-5-6"): "2", ("tw", "A-2-3-4-5"): "2", ("jp_a2345_low", "A-2-3-4-5"): "5"}
NEVER = {
    "tw": ["J-Q-K-A-2", "Q-K-A-2-3", "K-A-2-3-4"],
    "hk": ["A-2-3-4-5", "2-3-4-5-6", "Q-K-A-2-3", "K-A-2-3-4"],
    "jp": ["A-2-3-4-5", "2-3-4-5-6", "J-Q-K-A-2", "Q-K-A-2-3", "K-A-2-3-4"],
    "jp_a2345_low": ["2-3-4-5-6", "J-Q-K-A-2", "Q-K-A-2-3", "K-A-2-3-4"],
}


def _with_top_suit(window: str, preset: str, top_suit: str, other: str) -> str:
    top = TOP.get((preset, window), window.split("-")[-1])
    return " ".join(r + (top_suit if r == top else other) for r in window.split("-"))


@pytest.mark.parametrize("name", ["taiwan", "online-cn", "hong-kong", "pusoy-dos", "japan", "japan+a2345"])
def test_straight_window_order(name):
    """Windows rank in the RULES.md order; a lower window's best suit never saves it."""
    v = V[name]
    preset = v.straights_preset
    best, worst = ("D", "C") if name == "pusoy-dos" else ("S", "D")
    order = ORDER[preset]
    lows = [_with_top_suit(w, preset, best, "H") for w in order]  # top card of the best suit
    highs = [_with_top_suit(w, preset, worst, "H") for w in order]  # top card of the worst suit
    for w_lo, w_hi in itertools.combinations(range(len(order)), 2):
        assert kind(lows[w_lo], v) == kind(highs[w_hi], v) == "straight"
        assert beats(highs[w_hi], lows[w_lo], v), (highs[w_hi], lows[w_lo])
        assert not beats(lows[w_lo], highs[w_hi], v)
    for w in NEVER[preset]:
        assert kind(straight(w, "SDCHD"), v) is None, w
        suited = None if w == "J-Q-K-A-2" and v.jqka2_suited == "no_play" else "flush"
        assert kind(straight(w, "SSSSS"), v) == suited, w  # in one suit only a flush (TW: no J-Q-K-A-2)


def test_tw_cn_straight_examples():
    """TW: A-2-3-4-5 highest, 2-3-4-5-6 next; CN: then A-K-Q-J-10 third, 4-8 second lowest."""
    for v in (TW, CN):
        assert kind("AS 2D 3C 4H 5S", v) == "straight"
        assert kind("5C 6D 7S 8H 9C", v) == "straight"  # TW's pictured straight
        assert_ascending(["3S 4S 5S 6S 7D", "4D 5D 6D 7D 8C", "10S JS QS KS AH", "2D 3S 4S 5S 6S", "AD 2C 3D 4D 5D"], v)
        assert kind("JS QD KC AH 2S", v) is None  # CN: JQKA2 不是顺子
        assert kind("QS KD AC 2H 3S", v) is None  # TW: Q-K-A-2-3 is not a straight
        # CN: in A,2,3,4,5 and 2,3,4,5,6 the 2 is the top card (以2为最大); in 3-7 it is the 7
        assert beats("AD 2S 3D 4D 5C", "AS 2H 3S 4S 5S", v)
        assert beats("2S 3D 4D 5D 6C", "2H 3S 4S 5S 6S", v)
        assert beats("3D 4D 5D 6D 7S", "3S 4S 5S 6S 7H", v)


def test_issue_example():
    assert classify(parse_cards("AS 2D 3C 4H 5S"), load_variant("taiwan")).kind == "straight"
    assert classify(parse_cards("AS 2D 3C 4H 5S"), load_variant("hong-kong")) is None


def test_hk_straights():
    """HK: ace never low, two always high, J-Q-K-A-2 the top straight."""
    assert kind("JS QD KC AH 2D", HK) == "straight"
    assert beats("JD QD KC AH 2D", "10S JS QS KS AS", HK) is False  # 10-A suited is a straight flush
    assert beats("JD QD KC AH 2D", "10S JS QS KD AS", HK)
    assert kind("AS 2D 3C 4H 5S", HK) is None
    assert kind("2S 3D 4C 5H 6S", HK) is None


def test_jp_straights():
    """JP: A-2-3-4-5 is not a straight, 10-J-Q-K-A is; compared by the highest card."""
    assert kind("AS 2D 3C 4H 5S", JP) is None
    assert kind("10D JC QH KS AD", JP) == "straight"
    assert beats("10D JC QH KS AD", "9S 10S JS QS KH", JP)
    assert beats("3D 4C 5H 6S 7S", "3S 4S 5S 6S 7H", JP)


def test_jp_taiwan_rule_a2345_lowest():
    """JP 台湾ルール: A-2-3-4-5 allowed as the lowest straight, its top card the 5."""
    v = V["japan+a2345"]
    assert kind("AS 2D 3C 4H 5S", v) == "straight"
    assert beats("3D 4D 5D 6D 7C", "AS 2S 3S 4S 5H", v)
    # the 5 breaks the tie, not the 2 or the ace
    assert beats("AD 2D 3D 4D 5S", "AS 2S 3S 4S 5H", v)
    assert not beats("AS 2S 3S 4S 5H", "AD 2D 3D 4D 5S", v)
    assert kind("AS 2S 3S 4S 5S", v) == "straight_flush"
    assert beats("3D 4D 5D 6D 7D", "AS 2S 3S 4S 5S", v)


@pytest.mark.parametrize("name", ["taiwan", "online-cn", "hong-kong", "japan", "japan+a2345"])
def test_straight_flush_order_same_windows(name):
    v = V[name]
    preset = v.straights_preset
    flushes = [straight(w, "DDDDD") for w in ORDER[preset]]  # lowest suit ...
    better = [straight(w, "SSSSS") for w in ORDER[preset]]  # ... and highest suit
    for lo, hi in itertools.combinations(range(len(flushes)), 2):
        assert kind(flushes[hi], v) == "straight_flush"
        assert beats(flushes[hi], better[lo], v)
        assert not beats(better[lo], flushes[hi], v)
    for w in ORDER[preset]:  # same window: the top card's suit
        assert beats(straight(w, "SSSSS"), straight(w, "HHHHH"), v)
    assert kind("7S 8S 9S 10S JS", v) == "straight_flush"  # TW's pictured straight flush


def test_tw_straight_flush_top():
    assert_ascending(["3D 4D 5D 6D 7D", "10S JS QS KS AS", "2D 3D 4D 5D 6D", "AD 2D 3D 4D 5D", "AS 2S 3S 4S 5S"], TW)
    assert kind("JS QS KS AS 2S", TW) is None  # "never a legal hand, even in one suit"
    assert kind("JS QS KS AS 2S", CN) == "flush"


@pytest.mark.parametrize("suit", SUITS)
def test_suited_jqka2_per_variant(suit):
    """TW: the suited J-Q-K-A-2 is no play at all (not in the action table); CN: a flush (only
    "not a straight"); HK and Pusoy Dos: a straight flush, the top one (J-Q-K-A-2 is a window)."""
    cards = " ".join(r + suit for r in ("J", "Q", "K", "A", "2"))
    assert classify(cards, TW) is None
    with pytest.raises(ValueError, match="is not a play in this variant"):
        action_table(TW).encode(cards)
    assert kind(cards, CN) == "flush" and kind(cards, JP) == "flush"
    assert kind(cards, HK) == "straight_flush" and kind(cards, PD) == "straight_flush"
    assert beats(cards, "10S JS QS KS AS", HK)
    # the setting: jqka2_suited decides where J-Q-K-A-2 is no straight window, and nowhere else
    assert classify(cards, load_variant("online-cn", jqka2_suited="no_play")) is None
    assert kind(cards, load_variant("taiwan", jqka2_suited="flush")) == "flush"
    assert kind(cards, load_variant("hong-kong", jqka2_suited="no_play")) == "straight_flush"
    assert kind(cards.replace("J", "10").replace("2", "3"), TW) == "flush"  # other one-suit hands stay flushes


# --- five-card classes, flushes, full houses, fours --------------------------------------------


@pytest.mark.parametrize("name", ALL)
def test_five_card_classes(name):
    """Straight < flush < full house < four of a kind < straight flush, whatever the cards."""
    v = V[name]
    best = {
        "straight": "10S JS QS KS AH" if name != "pusoy-dos" else "10D JD QD KD AH",
        "flush": "2S AS KS QS 10S" if name != "pusoy-dos" else "2D AD KD QD 10D",
        "full_house": "2S 2H 2C AS AH",
        "four_of_a_kind": "2S 2H 2C 2D AS",
    }
    worst = {
        "flush": "3D 4D 5D 6D 8D" if name != "pusoy-dos" else "3C 4C 5C 6C 8C",
        "full_house": "3D 3C 3H 4D 4C",
        "four_of_a_kind": "3D 3C 3H 3S 4D",
        "straight_flush": "3D 4D 5D 6D 7D" if name != "pusoy-dos" else "3C 4C 5C 6C 7C",
    }
    classes = ["straight", "flush", "full_house", "four_of_a_kind", "straight_flush"]
    for lo, hi in itertools.combinations(range(5), 2):
        assert kind(worst[classes[hi]], v) == classes[hi]
        assert kind(best[classes[lo]], v) == classes[lo]
        assert beats(worst[classes[hi]], best[classes[lo]], v)
        assert not beats(best[classes[lo]], worst[classes[hi]], v)


@pytest.mark.parametrize("name", ["taiwan", "hong-kong"])
def test_flush_suit_first(name):
    """TW: compared by suit first, so a spade flush beats every heart flush; then the highest card."""
    v = V[name]
    assert kind("4S 6S 8S 10S QS", v) == "flush"  # TW's pictured flush
    assert beats("3S 4S 5S 6S 8S", "2H AH KH QH 10H", v)
    assert beats("3H 4H 5H 6H 8H", "2C AC KC QC 10C", v)
    assert beats("3C 4C 5C 6C 8C", "2D AD KD QD 10D", v)
    # same suit: highest card, then the next ones down
    assert_ascending(["3S 4S 5S 6S 8S", "4S 6S 8S 10S QS", "3S 7S 9S JS QS", "3S 4S 5S 6S KS", "3S 4S 5S 7S 2S"], v)


def test_flush_suit_first_pusoy_dos():
    assert beats("3D 4D 5D 6D 8D", "2H AH KH QH 10H", PD)
    assert beats("3H 4H 5H 6H 8H", "2S AS KS QS 10S", PD)
    assert beats("3S 4S 5S 6S 8S", "2C AC KC QC 10C", PD)


@pytest.mark.parametrize("name", ["japan", "online-cn", "taiwan+rank_first"])
def test_flush_rank_first(name):
    """JP: highest card first, if equal the second card, ... then suit (RULES.md)."""
    v = V[name]
    assert beats("2D 4D 5D 6D 8D", "AS KS QS JS 9S", v)  # CN: the 2-high flush is the top flush
    assert beats("AD 4D 5D 6D 8D", "KS QS JS 9S 8S", v)  # CN: A second
    assert beats("2D KD 5D 6D 8D", "2C QC JC 10C 9C", v)  # JP: same top card, the second decides
    assert beats("2D KD QD 6D 4D", "2C KC QC 6C 3C", v)  # ... down to the last card
    assert beats("3S 4S 5S 6S 8S", "3H 4H 5H 6H 8H", v)  # same ranks: suit (CN: 以花色来比较)
    assert not beats("3S 4S 5S 6S 8S", "2H AH KH QH 10H", v)


@pytest.mark.parametrize("name", ALL)
def test_full_house_by_triple(name):
    """TW: compared by the rank of the triple; the pair never matters."""
    v = V[name]
    assert kind("9S 9H 9C 4D 4S", v) == "full_house"  # TW's pictured full house
    assert beats("9S 9H 9C 4D 4S", "8S 8H 8C 2D 2S", v)
    assert beats("4D 4C 4H 3S 3H", "3D 3C 3H 2S 2H", v)
    assert beats("2D 2C 2H 3S 3C", "AS AH AC KS KH", v)  # CN: 2s on top
    assert not beats("8S 8H 8C 2D 2S", "9D 9C 9H 3D 3C", v)
    # the triple's suits do not matter either: ranks decide, ties cannot meet in a game
    assert kind("9S 9H 4D 4S 4C", v) == "full_house"


@pytest.mark.parametrize("name", ALL)
def test_four_of_a_kind_any_fifth(name):
    """TW: four of one rank plus any fifth card, compared by the rank of the four."""
    v = V[name]
    assert kind("QS QH QC QD 6C", v) == "four_of_a_kind"  # TW's pictured four
    assert kind("QS QH QC QD 2S", v) == "four_of_a_kind"
    assert kind("QS QH QC QD 3D", v) == "four_of_a_kind"
    assert beats("KS KH KC KD 3D", "QS QH QC QD 2S", v)
    assert beats("2S 2H 2C 2D 3D", "AS AH AC AD KS", v)  # CN: 2,2,2,2 the top four
    assert not beats("3S 3H 3C 3D 2S", "4S 4H 4C 4D 5D", v)


@pytest.mark.parametrize("name", ALL)
def test_not_a_hand(name):
    v = V[name]
    for cards in ("3D 3C 4D 4C 5S", "3D 4D 5D 6D 8C", "3D 3C 3H 4D 5D", "3D 5C 7H 9S JD", "3D 4C 5H 6S 8D"):
        assert classify(cards, v) is None, cards


# --- pair chains (JP 鎖) -----------------------------------------------------------------------


def test_pair_chain():
    v = V["japan+chain"]
    assert kind("5D 5C 6H 6S 7D 7H", v) == "pair_chain"  # JP: 55-66-77
    assert kind("5D 5C 6H 6S 7D 7H", JP) is None  # off by default
    assert kind("QD QC KH KS AD AH", v) == "pair_chain"
    assert kind("3D 3C 4H 4S 5D 5H", v) == "pair_chain"
    for cards in (
        "KD KC AH AS 2D 2H",  # no 2s
        "AD AC 2H 2S 3D 3H",  # no wrap
        "2D 2C 3H 3S 4D 4H",
        "5D 5C 6H 6S 8D 8H",  # not consecutive
        "5D 5C 5H 6S 6D 6H",  # two triples
        "5D 5C 5H 5S 6D 6H",
        "5D 5C 6H 6S 7D 8H",
    ):
        assert kind(cards, v) is None, cards
    # compared by the highest pair: its rank, then its higher suit
    assert_ascending(["3D 3C 4H 4S 5D 5H", "5S 5H 6D 6C 7D 7C", "5D 5C 6H 6S 7H 7S", "6D 6C 7D 7C 8D 8C"], v)
    assert beats("QD QC KH KS AD AH", "JS JH QS QH KD KC", v)
    # only answers, and is only answered by, a pair chain
    chain = "5D 5C 6H 6S 7D 7H"
    for other in ("2S", "2S 2H", "2S 2H 2C", "AS 2S 3S 4S 5S", "2S 2H 2C 2D AS", "10S JS QS KS AS"):
        assert not beats(chain, other, v)
        assert not beats(other, chain, v)


# --- beats: misc -------------------------------------------------------------------------------


def test_beats_accepts_combos_and_rejects_bad_table():
    a, b = classify("5S 5H", TW), classify("5D 5C", TW)
    assert isinstance(a, Combo) and a.size == 2 and a.kind == "pair"
    assert beats(a, b, TW) and beats("5S 5H", b, TW) and beats(a, "5D 5C", TW)
    assert not beats("5S 6H", "5D 5C", TW)  # not a play: beats nothing
    with pytest.raises(ValueError):
        beats("5S", "5D 6C", TW)


def test_classify_rejects_duplicates():
    with pytest.raises(ValueError):
        classify("5S 5S", TW)


def test_combo_cards_sorted():
    combo = classify("5S 3D 4C 7H 6D", TW)
    assert [str(c) for c in combo.cards] == ["3D", "4C", "5S", "6D", "7H"]


# --- hypothesis: plays built from the rules ----------------------------------------------------


@st.composite
def plays(draw, variant, size=None):
    """Card ids of a play of ``variant`` (structurally built, not taken from the action table)."""
    sizes = [1, 2, 3, 5] + ([6] if variant.pair_chain else [])
    size = draw(st.sampled_from(sizes)) if size is None else size
    suit_orders = st.permutations(range(4))
    if size in (1, 2, 3):
        r = draw(st.integers(0, 12))
        suits = draw(st.lists(st.integers(0, 3), min_size=size, max_size=size, unique=True))
        return [r * 4 + s for s in suits]
    if size == 6:
        start = draw(st.integers(0, 9))
        out = []
        for r in range(start, start + 3):
            out += [r * 4 + s for s in draw(st.lists(st.integers(0, 3), min_size=2, max_size=2, unique=True))]
        return out
    k = draw(st.sampled_from(["straight", "flush", "full_house", "four_of_a_kind", "straight_flush"]))
    window_sets = [frozenset(w) for w, _ in variant.straights]
    if k in ("straight", "straight_flush"):
        window, _top = draw(st.sampled_from(variant.straights))
        if k == "straight_flush":
            s = draw(st.integers(0, 3))
            return [r * 4 + s for r in window]
        suits = draw(st.lists(st.integers(0, 3), min_size=5, max_size=5).filter(lambda x: len(set(x)) > 1))
        return [r * 4 + s for r, s in zip(window, suits, strict=True)]
    if k == "flush":
        ranks = draw(st.lists(st.integers(0, 12), min_size=5, max_size=5, unique=True))
        assume(frozenset(ranks) not in window_sets)
        assume(variant.jqka2_suited == "flush" or set(ranks) != set(range(8, 13)))  # TW: no play
        s = draw(st.integers(0, 3))
        return [r * 4 + s for r in ranks]
    if k == "full_house":
        r3, r2 = draw(st.lists(st.integers(0, 12), min_size=2, max_size=2, unique=True))
        s3 = draw(suit_orders)[:3]
        s2 = draw(suit_orders)[:2]
        return [r3 * 4 + s for s in s3] + [r2 * 4 + s for s in s2]
    r4 = draw(st.integers(0, 12))
    kicker = draw(st.integers(0, 51).filter(lambda c: c // 4 != r4))
    return [r4 * 4 + s for s in range(4)] + [kicker]


# An independent comparator from RULES.md, with windows in text (ORDER/TOP above).
_FIVE = ["straight", "flush", "full_house", "four_of_a_kind", "straight_flush"]


def ref_key(cards: list[int], variant) -> tuple:
    suit_value = [variant.suit_order.index(s) for s in SUITS]  # physical suit -> strength
    ranks = sorted(c // 4 for c in cards)
    by_rank = {r: [c for c in cards if c // 4 == r] for r in ranks}
    counts = sorted(len(v) for v in by_rank.values())

    def best_suit(r):
        return max(suit_value[c % 4] for c in by_rank[r])

    if len(cards) in (1, 2, 3):
        return (ranks[0], best_suit(ranks[0]))
    if len(cards) == 6:
        return (ranks[-1], best_suit(ranks[-1]))
    if counts == [2, 3]:
        return (2, next(r for r in by_rank if len(by_rank[r]) == 3))
    if counts == [1, 4]:
        return (3, next(r for r in by_rank if len(by_rank[r]) == 4))
    preset = variant.straights_preset
    names = [RANKS[r] for r in ranks]
    for i, window in enumerate(ORDER[preset]):
        if sorted(window.split("-"), key=RANKS.index) == sorted(names, key=RANKS.index):
            top = RANKS.index(TOP.get((preset, window), window.split("-")[-1]))
            flush = len({c % 4 for c in cards}) == 1
            return (4 if flush else 0, i, best_suit(top))
    desc = tuple(sorted(ranks, reverse=True))
    s = suit_value[cards[0] % 4]
    return (1, s, *desc) if variant.flush_order == "suit_first" else (1, *desc, s)


variants = st.sampled_from(ALL).map(V.__getitem__)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_classification_ignores_order(data):
    v = data.draw(variants)
    cards = data.draw(
        st.one_of(plays(v), st.lists(st.integers(0, 51), min_size=1, max_size=7, unique=True)), label="cards"
    )
    combo = classify(cards, v)
    shuffled = data.draw(st.permutations(cards), label="shuffled")
    assert classify(shuffled, v) == combo
    assert classify([str(parse_cards([c])[0]).lower() for c in shuffled], v) == combo
    assert classify(" ".join(parse_cards([c])[0].pretty for c in shuffled), v) == combo


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_built_plays_classify(data):
    v = data.draw(variants)
    cards = data.draw(plays(v))
    combo = classify(cards, v)
    assert combo is not None and combo.size == len(cards)
    assert sorted(combo.cards) == sorted(cards)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_beats_strict_total_order_within_size(data):
    v = data.draw(variants)
    size = data.draw(st.sampled_from([1, 2, 3, 5] + ([6] if v.pair_chain else [])))
    a, b, c = (data.draw(plays(v, size), label=n) for n in "abc")
    # irreflexive
    assert not beats(a, a, v)
    # asymmetric
    assert not (beats(a, b, v) and beats(b, a, v))
    # transitive
    if beats(a, b, v) and beats(b, c, v):
        assert beats(a, c, v)
    if beats(c, b, v) and beats(b, a, v):
        assert beats(c, a, v)
    # total on plays that share no card: exactly one beats the other
    if not set(a) & set(b):
        assert beats(a, b, v) != beats(b, a, v), (a, b)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_beats_disjoint_pairs_total(data):
    """Same as above but forcing disjoint plays (which can meet in one game)."""
    v = data.draw(variants)
    size = data.draw(st.sampled_from([1, 2, 3, 5] + ([6] if v.pair_chain else [])))
    a = data.draw(plays(v, size), label="a")
    b = data.draw(plays(v, size).filter(lambda x: not set(x) & set(a)), label="b")
    assert beats(a, b, v) != beats(b, a, v), (a, b)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_beats_across_sizes_is_false(data):
    v = data.draw(variants)
    a = data.draw(plays(v), label="a")
    b = data.draw(plays(v).filter(lambda x: len(x) != len(a)), label="b")
    assert not beats(a, b, v)
    assert not beats(b, a, v)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_beats_matches_rules_comparator(data):
    """``beats`` agrees with the RULES.md comparator written in this file."""
    v = data.draw(variants)
    size = data.draw(st.sampled_from([1, 2, 3, 5] + ([6] if v.pair_chain else [])))
    a = data.draw(plays(v, size), label="a")
    b = data.draw(plays(v, size), label="b")
    assert beats(a, b, v) == (ref_key(a, v) > ref_key(b, v)), (a, b)
