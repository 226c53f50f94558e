"""Cards: the text forms of RULES.md ("Cards"), the str/pretty forms, and bad input.

RULES.md: rank ``3``..``9``, ``10`` (also ``T``), ``J Q K A 2``; suit ``D C H S`` (also
``♦ ♣ ♥ ♠``), e.g. ``10S``, ``TS``, ``10♠``; case-insensitive on input. A card's value is rank
first, then suit; ranks run 3 < 4 < ... < K < A < 2.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bigtwo.env import Card, card_texts, format_cards, parse_cards

RANK_TEXTS = ["3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A", "2"]
SUIT_LETTERS = ["D", "C", "H", "S"]
SUIT_SYMBOLS = ["♦", "♣", "♥", "♠"]


def _all_cards() -> list[tuple[int, str, str]]:
    """(id, rank text, suit letter) for every card, id = rank * 4 + suit (D C H S)."""
    return [(r * 4 + s, RANK_TEXTS[r], SUIT_LETTERS[s]) for r in range(13) for s in range(4)]


# --- every text form of RULES.md -------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "3C 10S",
        "3♣ T♠",
        "3♣ 10♠",
        "3C TS",
        "3c 10s",
        "3c ts",
        "3♣ t♠",
        "3C,10S",
        "3C, 10S",
        "  3C   10S  ",
        ["3c", "10s"],
        ["3C", "10S"],
        ["3♣", "T♠"],
        ("3c", "t♠"),
        [Card(1), Card(31)],
        [1, 31],
    ],
)
def test_rules_text_forms_give_3c_10s(text):
    cards = parse_cards(text)
    assert cards == [Card.from_text("3C"), Card.from_text("10S")]
    assert [str(c) for c in cards] == ["3C", "10S"]
    assert all(isinstance(c, Card) for c in cards)


@pytest.mark.parametrize(("card_id", "rank", "suit"), _all_cards())
def test_every_card_every_form(card_id, rank, suit):
    symbol = SUIT_SYMBOLS[SUIT_LETTERS.index(suit)]
    forms = {rank + suit, (rank + suit).lower(), rank + symbol}
    if rank == "10":
        forms |= {"T" + suit, "t" + suit.lower(), "T" + symbol, "t" + symbol, "10" + suit.lower()}
    for form in forms:
        card = Card.from_text(form)
        assert card == card_id, form
        assert parse_cards(form) == [card_id], form
        assert parse_cards([form]) == [card_id], form
    card = Card(card_id)
    assert str(card) == rank + suit
    assert card.pretty == rank + symbol
    assert repr(card) == f"Card('{rank}{suit}')"
    assert card.rank == RANK_TEXTS.index(rank)
    assert card.suit == SUIT_LETTERS.index(suit)


def test_ids_follow_rank_then_suit():
    """Card ids run 3D (lowest) .. 2S (highest): rank first, then suit D C H S."""
    assert Card.from_text("3D") == 0
    assert Card.from_text("3C") == 1
    assert Card.from_text("3S") == 3
    assert Card.from_text("4D") == 4
    assert Card.from_text("2S") == 51
    assert Card.from_text("2S") > Card.from_text("AS") > Card.from_text("KS")
    ranks = [Card.from_text(r + "D").rank for r in RANK_TEXTS]
    assert ranks == sorted(ranks) == list(range(13))


def test_str_and_pretty_forms():
    cards = parse_cards("3C 10S QH 2D AS")
    assert format_cards(cards) == "3C 10S QH 2D AS"
    assert format_cards(cards, pretty=True) == "3♣ 10♠ Q♥ 2♦ A♠"
    assert card_texts(cards) == ["3C", "10S", "QH", "2D", "AS"]
    assert Card.from_text("10♠").pretty == "10♠"
    assert Card.from_text("TS").pretty == "10♠"
    # Canonical text and pretty text both read back to the same card.
    for c in range(52):
        assert parse_cards(str(Card(c))) == [c]
        assert parse_cards(Card(c).pretty) == [c]


def test_card_is_an_int():
    card = Card.from_text("5H")
    assert isinstance(card, int)
    assert card == 2 * 4 + 2
    assert Card(card) == card


def test_order_is_kept_and_empty_inputs():
    assert [str(c) for c in parse_cards("2S 3D AH")] == ["2S", "3D", "AH"]
    assert parse_cards("") == []
    assert parse_cards([]) == []
    assert parse_cards(None) == []


def test_numpy_integers_accepted():
    np = pytest.importorskip("numpy")
    assert parse_cards([np.int64(1), np.int8(31)]) == parse_cards("3C 10S")


# --- bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "token",
    ["1S", "3X", "XX", "11S", "0S", "100S", "3CC", "S", "3", "♠", "10", "1♠", "ZD", "3 C", "3.C"],
)
def test_bad_token_raises_naming_the_token(token):
    with pytest.raises(ValueError) as err:
        parse_cards([token])
    assert repr(token) in str(err.value) or token in str(err.value)
    with pytest.raises(ValueError) as err:
        Card.from_text(token)
    assert repr(token) in str(err.value) or token in str(err.value)


@pytest.mark.parametrize("text", ["3C 1S", "3C XS 4D", "3C 10S 11H", "AS KX"])
def test_bad_token_in_text_is_named(text):
    bad = next(t for t in text.split() if t not in {"3C", "10S", "4D", "AS"})
    with pytest.raises(ValueError, match=bad):
        parse_cards(text)


@pytest.mark.parametrize("token", [True, 3.0, b"3C", object()])
def test_non_text_tokens_rejected(token):
    with pytest.raises(ValueError):
        parse_cards([token])


@pytest.mark.parametrize("value", [-1, 52, 100])
def test_card_id_out_of_range(value):
    with pytest.raises(ValueError, match=str(value)):
        Card(value)
    with pytest.raises(ValueError, match=str(value)):
        parse_cards([value])


@pytest.mark.parametrize(
    "cards",
    ["3C 3C", "3C 3c", "3C 3♣", "10S TS", "10S t♠ 4D", ["3c", "3C"], [1, 1], [Card(5), "4C"], "AS KS AS"],
)
def test_duplicate_cards_rejected(cards):
    with pytest.raises(ValueError, match="twice"):
        parse_cards(cards)


# --- property: any mix of forms and separators reads back --------------------------------------


def _forms(card_id: int) -> list[str]:
    rank, suit = RANK_TEXTS[card_id // 4], card_id % 4
    ranks = [rank, "T"] if rank == "10" else [rank]
    out = []
    for r in ranks:
        for s in (SUIT_LETTERS[suit], SUIT_SYMBOLS[suit]):
            out += [r + s, (r + s).lower(), (r + s).upper()]
    return out


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.integers(0, 51), unique=True, max_size=13).flatmap(
        lambda ids: st.tuples(
            st.just(ids),
            st.tuples(*(st.sampled_from(_forms(c)) for c in ids)),
            st.sampled_from([" ", ",", ", ", "  "]),
        )
    )
)
def test_mixed_forms_round_trip(case):
    ids, tokens, sep = case
    assert parse_cards(sep.join(tokens)) == ids
    assert parse_cards(list(tokens)) == ids
    assert parse_cards(format_cards(ids)) == ids
    assert parse_cards(format_cards(ids, pretty=True)) == ids
