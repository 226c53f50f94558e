"""The fixed action space: every play a variant allows anywhere, with a stable id.

Id 0 is pass. Then come the singles, pairs, triples, five-card hands and (with ``pair_chain``)
pair chains, each size sorted by strength, so the plays that beat a given play ``t`` are exactly
the ids ``beat_start[t] <= id < group_end[t]``: one contiguous run.

Arrays (``A = table.size`` rows): ``cards`` (A, 6) int8 padded with -1, ``sizes`` int8,
``kinds`` int8 (index into ``KINDS``), ``strength`` int32 (dense rank within the size, five-card
classes included), ``masks`` uint64 (bit ``c`` for card ``c``), ``beat_start`` and
``group_end`` int32. ``hash_keys``/``hash_ids`` are an open-addressing table from card mask to
id, used by the compiled engine.

>>> from bigtwo.env import load_variant
>>> t = action_table(load_variant("taiwan"))
>>> t.size  # 19,899 plays and pass, less the four suited J-Q-K-A-2, no play in Taiwan
19895
>>> t.decode(0)
[]
>>> [str(c) for c in t.decode(t.encode("3C 3D"))]
['3D', '3C']
"""

from __future__ import annotations

import itertools
import operator
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, overload

import numpy as np

from bigtwo.env.rules.cards import Card, card_texts, cards_to_mask, parse_cards
from bigtwo.env.rules.combos import KIND_INDEX, KINDS, PLAY_SIZES, Combo, classify
from bigtwo.env.rules.variant import Variant

HASH_BITS = 16
_HASH_MULT = np.uint64(0x9E3779B97F4A7C15)


@overload
def hash_slot(mask: np.ndarray, bits: int) -> np.ndarray: ...
@overload
def hash_slot(mask: int, bits: int) -> int: ...
def hash_slot(mask: np.ndarray | int, bits: int) -> np.ndarray | int:
    """Slot of a card mask in the open-addressing id table (Fibonacci hashing)."""
    with np.errstate(over="ignore"):
        return (np.uint64(mask) * _HASH_MULT) >> np.uint64(64 - bits)


def action_id(action: Any, size: int) -> int:
    """``action`` as an int in ``[0, size)``; ``ValueError`` naming the allowed range otherwise
    (floats, bools and text are no action ids; NumPy integers are)."""
    try:
        if isinstance(action, (bool, np.bool_)):
            raise TypeError
        a = operator.index(action)
    except TypeError:
        raise ValueError(f"an action is an integer id 0..{size - 1}, got {action!r}") from None
    if not 0 <= a < size:
        raise ValueError(f"action id {a} is out of range 0..{size - 1}")
    return a


def parse_play(cards: str | Iterable[str | int] | None) -> list[Card]:
    """The cards of a play written as text or a list: ``"pass"``, ``""``, ``None`` and ``[]`` are
    pass (no cards). Text with separators but no card (``","``) raises ``ValueError``, as do the
    errors of ``parse_cards``."""
    if cards is None:
        return []
    if isinstance(cards, str):
        text = cards.strip()
        if text.lower() in ("pass", ""):
            return []
        if not text.replace(",", " ").split():
            raise ValueError(
                f"{cards!r} names no card; a play is card text such as '3C 3D', a list of cards, or 'pass'"
            )
    return parse_cards(cards)


def _candidates(variant: Variant) -> Iterable[tuple[int, ...]]:
    """Every card set that could be a play: classification decides which are."""
    deck = range(52)
    by_rank = [[r * 4 + s for s in range(4)] for r in range(13)]
    for c in deck:
        yield (c,)
    for r in range(13):
        yield from itertools.combinations(by_rank[r], 2)
        yield from itertools.combinations(by_rank[r], 3)
    for window, _top in variant.straights:
        yield from itertools.product(*(by_rank[r] for r in window))
    for s in range(4):
        for ranks in itertools.combinations(range(13), 5):
            yield tuple(r * 4 + s for r in ranks)
    for r3 in range(13):
        for r2 in range(13):
            if r2 != r3:
                for t in itertools.combinations(by_rank[r3], 3):
                    for p in itertools.combinations(by_rank[r2], 2):
                        yield t + p
        for c in deck:
            if c // 4 != r3:
                yield (*by_rank[r3], c)
    if variant.pair_chain:
        for start in range(0, 10):
            pairs = [list(itertools.combinations(by_rank[start + i], 2)) for i in range(3)]
            for low, middle, high in itertools.product(*pairs):
                yield low + middle + high


@dataclass(frozen=True, eq=False)
class ActionTable:
    """Every play of a variant with a fixed id; see the module docstring."""

    key: tuple  # the action-table key of the variants it serves (``Variant.action_table_key``)
    cards: np.ndarray
    sizes: np.ndarray
    kinds: np.ndarray
    strength: np.ndarray
    masks: np.ndarray
    beat_start: np.ndarray
    group_end: np.ndarray
    hash_keys: np.ndarray
    hash_ids: np.ndarray
    hash_bits: int

    @property
    def rules_key(self) -> tuple:
        """Deprecated name of ``key`` (read until 0.3; ``Variant.rules_key`` is now the rules' identity)."""
        warnings.warn(
            "ActionTable.rules_key is now ActionTable.key (Variant.action_table_key); the old name goes in 0.3",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.key

    @property
    def size(self) -> int:
        """Number of actions, pass included."""
        return len(self.sizes)

    def encode(self, cards: str | Iterable[str | int]) -> int:
        """Id of a play given as cards or text (see ``parse_play``); ``[]`` or ``"pass"`` is 0."""
        parsed = parse_play(cards)
        if not parsed:
            return 0
        mask = cards_to_mask(parsed)
        slot = int(hash_slot(mask, self.hash_bits))
        cap = len(self.hash_keys)
        while self.hash_ids[slot] >= 0:
            if int(self.hash_keys[slot]) == mask:
                return int(self.hash_ids[slot])
            slot = (slot + 1) % cap
        raise ValueError(f"{card_texts(parsed)} is not a play in this variant")

    def decode(self, action: int) -> list[Card]:
        """Cards of an action id (``[]`` for pass); ``ValueError`` unless an integer 0..size-1."""
        return [Card(c) for c in self.cards[action_id(action, self.size)] if c >= 0]

    def kind(self, action: int) -> str:
        """Kind name of an action id; ``ValueError`` unless an integer 0..size-1."""
        return KINDS[int(self.kinds[action_id(action, self.size)])]

    def places(self) -> np.ndarray:
        """Each play's strength within its size, float64 (A,): ``strength`` over the strongest of
        that size, 0 (weakest) .. 1 (strongest); pass is 0 (what observations show of a play)."""
        top = np.zeros(7, dtype=np.float64)
        np.maximum.at(top, self.sizes.astype(np.int64), self.strength.astype(np.float64))
        out = self.strength / np.maximum(top[self.sizes.astype(np.int64)], 1.0)
        out[0] = 0.0
        return out

    def counts_by_kind(self) -> dict[str, int]:
        """How many actions of each kind (pass counts 1)."""
        values, counts = np.unique(self.kinds, return_counts=True)
        return {KINDS[int(v)]: int(n) for v, n in zip(values, counts, strict=True)}

    def nbytes(self) -> int:
        """Memory held by the table's arrays."""
        return sum(
            getattr(self, f).nbytes
            for f in (
                "cards",
                "sizes",
                "kinds",
                "strength",
                "masks",
                "beat_start",
                "group_end",
                "hash_keys",
                "hash_ids",
            )
        )


def action_table(variant: Variant) -> ActionTable:
    """The variant's action table, built once per set of play rules and cached."""
    key = variant.action_table_key()
    table = _TABLES.get(key)
    if table is None:
        table = _TABLES[key] = _build_table(key, variant)
    return table


_TABLES: dict[tuple, ActionTable] = {}


def _build_table(table_key: tuple, variant: Variant) -> ActionTable:
    plays: dict[int, Combo] = {}
    for cand in _candidates(variant):
        mask = cards_to_mask(cand)
        if mask in plays:
            continue
        combo = classify(cand, variant)
        if combo is not None:
            plays[mask] = combo
    order = sorted(plays.items(), key=lambda kv: (kv[1].size, kv[1].strength, kv[0]))
    n = len(order) + 1
    cards = np.full((n, 6), -1, dtype=np.int8)
    sizes = np.zeros(n, dtype=np.int8)
    kinds = np.zeros(n, dtype=np.int8)
    strength = np.zeros(n, dtype=np.int32)
    masks = np.zeros(n, dtype=np.uint64)
    beat_start = np.zeros(n, dtype=np.int32)
    group_end = np.zeros(n, dtype=np.int32)
    prev: tuple | None = None
    rank = -1
    for i, (mask, combo) in enumerate(order, start=1):
        cards[i, : combo.size] = combo.cards
        sizes[i] = combo.size
        kinds[i] = KIND_INDEX[combo.kind]
        masks[i] = mask
        key = (combo.size, combo.strength)
        if key != prev:
            rank = rank + 1 if prev is not None and prev[0] == combo.size else 0
            prev = key
        strength[i] = rank
    # Runs: group_end = end of the size group; beat_start = first id of higher strength.
    for size in PLAY_SIZES:
        ids = np.flatnonzero(sizes == size)
        if len(ids) == 0:
            continue
        group_end[ids] = ids[-1] + 1
        s = strength[ids]
        beat_start[ids] = ids[0] + np.searchsorted(s, s, side="right")
    # Pass beats nothing and nothing beats it: an empty run.
    beat_start[0] = group_end[0] = 0
    bits = HASH_BITS
    while (1 << bits) < 3 * n:
        bits += 1
    cap = 1 << bits
    hash_keys = np.zeros(cap, dtype=np.uint64)
    hash_ids = np.full(cap, -1, dtype=np.int32)
    slots = hash_slot(masks, bits).astype(np.int64)
    for i in range(1, n):
        slot = int(slots[i])
        while hash_ids[slot] >= 0:
            slot = (slot + 1) % cap
        hash_keys[slot] = masks[i]
        hash_ids[slot] = i
    for arr in (cards, sizes, kinds, strength, masks, beat_start, group_end, hash_keys, hash_ids):
        arr.flags.writeable = False
    return ActionTable(
        table_key, cards, sizes, kinds, strength, masks, beat_start, group_end, hash_keys, hash_ids, bits
    )
