"""Plays: which card sets are a play under a variant, of what kind, and how plays compare.

``classify(cards, variant)`` gives a ``Combo`` (kind and strength) or ``None``. Strength is a
tuple that orders plays of one size as RULES.md says: a higher five-card class beats any lower
class; within a class the variant's straight windows, flush order and suit order decide. Where
J-Q-K-A-2 is no straight window, ``jqka2_suited`` says whether the suited one is a flush or no
play. ``beats(play, table, variant)`` is true when ``play`` may answer ``table``.

Plays that compare equal (two pairs of nines that share their highest-suited card, say) can
never meet in one game, since they share a card; among plays with no card in common, ``beats``
is a strict total order within a size.

>>> from bigtwo.env import load_variant
>>> classify("AS 2D 3C 4H 5S", load_variant("taiwan")).kind
'straight'
>>> classify("AS 2D 3C 4H 5S", load_variant("hong-kong")) is None
True
>>> beats("5S 5H", "5D 5C", load_variant("taiwan"))
True
>>> classify("JS QS KS AS 2S", load_variant("taiwan")) is None  # no play at all in Taiwan
True
>>> classify("JS QS KS AS 2S", load_variant("online-cn")).kind
'flush'

"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from bigtwo.env.rules.cards import Card, parse_cards
from bigtwo.env.rules.variant import Variant

KINDS: tuple[str, ...] = (
    "pass",
    "single",
    "pair",
    "triple",
    "straight",
    "flush",
    "full_house",
    "four_of_a_kind",
    "straight_flush",
    "pair_chain",
)
KIND_INDEX = {k: i for i, k in enumerate(KINDS)}
FIVE_CARD_CLASSES = ("straight", "flush", "full_house", "four_of_a_kind", "straight_flush")
PLAY_SIZES = (1, 2, 3, 5, 6)
JQKA2_RANKS = frozenset(range(8, 13))  # J Q K A 2: no straight under ``tw``/``jp`` (``jqka2_suited``)


@dataclass(frozen=True)
class Combo:
    """A classified play: its cards (sorted by id), kind and strength within its size."""

    cards: tuple[Card, ...]
    kind: str
    strength: tuple[int, ...]

    @property
    def size(self) -> int:
        return len(self.cards)

    def __str__(self) -> str:
        return f"{self.kind} {' '.join(map(str, self.cards))}"


def _window_index(ranks: frozenset[int], variant: Variant) -> int:
    for i, (window, _top) in enumerate(variant.straights):
        if frozenset(window) == ranks:
            return i
    return -1


def classify(cards: str | Iterable[str | int], variant: Variant) -> Combo | None:
    """The play these cards make under ``variant``, or ``None`` if they make no play."""
    hand = tuple(sorted(parse_cards(cards)))
    n = len(hand)
    if n == 0 or n == 4 or n > 6:
        return None
    suit_rank = variant.suit_rank
    ranks = [c.rank for c in hand]
    counts = Counter(ranks)

    def top_suit(rank: int) -> int:
        return max(suit_rank[c.suit] for c in hand if c.rank == rank)

    if n <= 3:
        if len(counts) != 1:
            return None
        kind = ("single", "pair", "triple")[n - 1]
        return Combo(hand, kind, (ranks[0], top_suit(ranks[0])))
    if n == 6:
        if not variant.pair_chain or sorted(counts.values()) != [2, 2, 2]:
            return None
        rs = sorted(counts)
        if rs[2] - rs[0] != 2 or rs[2] > 11:  # three consecutive ranks within 3..A
            return None
        return Combo(hand, "pair_chain", (rs[2], top_suit(rs[2])))
    # five cards
    shape = sorted(counts.values())
    if shape == [2, 3]:
        triple = next(r for r, k in counts.items() if k == 3)
        return Combo(hand, "full_house", (2, triple))
    if shape == [1, 4]:
        four = next(r for r, k in counts.items() if k == 4)
        return Combo(hand, "four_of_a_kind", (3, four))
    if len(counts) != 5:
        return None
    is_flush = len({c.suit for c in hand}) == 1
    w = _window_index(frozenset(ranks), variant)
    if w >= 0:
        top_rank = variant.straights[w][1]
        kind, cls = ("straight_flush", 4) if is_flush else ("straight", 0)
        return Combo(hand, kind, (cls, w, top_suit(top_rank)))
    if is_flush:
        if variant.jqka2_suited == "no_play" and set(ranks) == JQKA2_RANKS:
            return None  # TW: "J-Q-K-A-2 is never a legal hand, even in one suit"
        desc = tuple(sorted(ranks, reverse=True))
        s = suit_rank[hand[0].suit]
        key = (1, s, *desc) if variant.flush_order == "suit_first" else (1, *desc, s)
        return Combo(hand, "flush", key)
    return None


def beats(play: str | Iterable[str | int] | Combo, table: str | Iterable[str | int] | Combo, variant: Variant) -> bool:
    """True when ``play`` may answer ``table``: both plays, same size, ``play`` stronger."""
    p = play if isinstance(play, Combo) else classify(play, variant)
    t = table if isinstance(table, Combo) else classify(table, variant)
    if t is None:
        raise ValueError(f"the table {table!r} is not a play under {variant.name}")
    if p is None or p.size != t.size:
        return False
    return p.strength > t.strength
