"""Cards: the 52-card deck, its text forms, and card sets as 52-bit masks.

A card is an ``int`` from 0 to 51: ``rank * 4 + suit``, where ``rank`` runs from 0 (the 3) to
12 (the 2) and ``suit`` is the *physical* suit, 0..3 = diamonds, clubs, hearts, spades. How
suits rank against each other is a variant setting (``Variant.suit_order``); the card id never
changes with it.

Text forms (case-insensitive on input): rank ``3``..``9``, ``10`` or ``T``, ``J Q K A 2``; suit
``D C H S`` or ``♦ ♣ ♥ ♠``. The canonical form is ``3C``, ``10S``; the pretty form ``3♣``, ``10♠``.

>>> parse_cards("3C 10S")
[Card('3C'), Card('10S')]
>>> [str(c) for c in parse_cards(["3c", "t♠"])]
['3C', '10S']
>>> Card.from_text("QH").pretty
'Q♥'
"""

from __future__ import annotations

import operator
from collections.abc import Iterable

RANKS: tuple[str, ...] = ("3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A", "2")
SUITS: tuple[str, ...] = ("D", "C", "H", "S")
SUIT_SYMBOLS: tuple[str, ...] = ("♦", "♣", "♥", "♠")
NUM_RANKS = 13
NUM_SUITS = 4
NUM_CARDS = 52

_RANK_INPUT = {r: i for i, r in enumerate(RANKS)} | {"T": 7}
_SUIT_INPUT = {s: i for i, s in enumerate(SUITS)} | {s: i for i, s in enumerate(SUIT_SYMBOLS)}
# Variation selectors and the white-suit symbols people paste from other sites.
_SUIT_INPUT |= {"♢": 0, "♧": 1, "♡": 2, "♤": 3}


class Card(int):
    """One card: an ``int`` 0..51 that prints as its canonical text.

    >>> Card.from_text("2S") > Card.from_text("AS")
    True
    """

    __slots__ = ()

    def __new__(cls, value: int) -> Card:
        if isinstance(value, bool) or not hasattr(value, "__index__"):
            hint = f" (for text use Card.from_text({value!r}))" if isinstance(value, str) else ""
            raise ValueError(f"a card id is an integer 0..51, got {value!r}{hint}")
        try:
            value = operator.index(value)
        except TypeError:  # an array of several numbers
            raise ValueError(f"a card id is an integer 0..51, got {value!r}") from None
        if not 0 <= value < NUM_CARDS:
            raise ValueError(f"card id {value} is out of range: allowed 0..51")
        return super().__new__(cls, value)

    @classmethod
    def from_text(cls, token: str) -> Card:
        """Read one card such as ``'10S'``, ``'TS'``, ``'10♠'`` or ``'qh'``."""
        return cls(card_from_text(token))

    @property
    def rank(self) -> int:
        """Rank index: 0 is the 3, 12 is the 2."""
        return int(self) // 4

    @property
    def suit(self) -> int:
        """Physical suit index: 0..3 = D, C, H, S."""
        return int(self) % 4

    @property
    def pretty(self) -> str:
        """The card with its suit symbol, e.g. ``10♠``."""
        return RANKS[self.rank] + SUIT_SYMBOLS[self.suit]

    def __str__(self) -> str:
        return RANKS[self.rank] + SUITS[self.suit]

    def __repr__(self) -> str:
        return f"Card('{self}')"


def card_from_text(token: str) -> int:
    """Card id of one text token; ``ValueError`` names the token if it is not a card."""
    if not isinstance(token, str):
        raise ValueError(f"not a card: {token!r} (expected text such as '3C' or '10♠')")
    text = token.strip().upper().replace("\ufe0f", "")
    if len(text) < 2:
        raise ValueError(f"not a card: {token!r} (expected rank 3-10/T/J/Q/K/A/2 then suit D/C/H/S)")
    rank_text, suit_text = text[:-1], text[-1]
    if rank_text not in _RANK_INPUT:
        raise ValueError(f"not a card: {token!r}: bad rank {rank_text!r} (allowed: 3-10, T, J, Q, K, A, 2)")
    if suit_text not in _SUIT_INPUT:
        raise ValueError(f"not a card: {token!r}: bad suit {suit_text!r} (allowed: D C H S or ♦ ♣ ♥ ♠)")
    return _RANK_INPUT[rank_text] * 4 + _SUIT_INPUT[suit_text]


def parse_cards(cards: str | Iterable[str | int] | None) -> list[Card]:
    """Read cards from text (``"3C 10S"``, ``"3♣,T♠"``) or a list of texts or ids.

    Raises ``ValueError`` naming the bad token, or the repeated card; ``ValueError`` too for what
    is neither text nor a list (a single number, bytes: decode them first).
    """
    if cards is None:
        return []
    if isinstance(cards, str):
        tokens: list[str | int] = [t for t in cards.replace(",", " ").split() if t]
    elif isinstance(cards, (bytes, bytearray)) or not isinstance(cards, Iterable) or _is_scalar(cards):
        raise ValueError(f"cards are text such as '3C 10S' or a list of cards or card ids, got {cards!r}")
    else:
        tokens = list(cards)
    out: list[Card] = []
    for token in tokens:
        if isinstance(token, Card):
            out.append(token)
        elif isinstance(token, str):
            out.append(Card.from_text(token))
        elif hasattr(token, "__index__") and not isinstance(token, bool):
            out.append(Card(token))  # ints and NumPy integers
        else:
            raise ValueError(f"not a card: {token!r} (expected text such as '3C' or '10♠', or a card id 0..51)")
    seen: set[int] = set()
    for c in out:
        if c in seen:
            raise ValueError(f"card {c} appears twice in {cards!r}")
        seen.add(c)
    return out


def _is_scalar(x: object) -> bool:
    """A 0-d NumPy array (iterable in name only)."""
    return getattr(x, "ndim", None) == 0


def cards_to_mask(cards: Iterable[int]) -> int:
    """52-bit mask with bit ``c`` set for each card ``c``."""
    mask = 0
    for c in cards:
        mask |= 1 << int(c)
    return mask


def mask_to_cards(mask: int) -> list[Card]:
    """Cards of a 52-bit mask, lowest id first."""
    mask = int(mask)
    return [Card(c) for c in range(NUM_CARDS) if mask >> c & 1]


def format_cards(cards: Iterable[int], pretty: bool = False) -> str:
    """Space-separated text of cards; ``pretty`` uses suit symbols."""
    return " ".join(Card(c).pretty if pretty else str(Card(c)) for c in cards)


def card_texts(cards: Iterable[int]) -> list[str]:
    """Canonical texts of cards, e.g. ``['3C', '10S']``."""
    return [str(Card(c)) for c in cards]
