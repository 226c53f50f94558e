"""Control of plays: how unlikely the unseen cards are to beat a play (0..1), and the per-variant
tables the heuristic's kernels look up besides the engine's ``Rules``.

For singles, pairs and triples, control counts the higher ones still unseen, scaled by ``f``,
the share of the unseen cards the opponents hold (so undealt cards count less); a single loses
all control when ``Weight.SINGLE_SPAN`` higher cards are unseen (pairs and triples likewise,
with their spans). Five-card hands (and pair chains) have a fixed control by class and place in
it (``five_card_control``). A single 2, or three 2s, under ``two_ends_trick`` is full control.

>>> from bigtwo.env import load_variant
>>> from bigtwo.env.rules.actions import action_table
>>> variant = load_variant("taiwan")
>>> table = action_table(variant)
>>> tables = make_lookups(variant, table)
>>> straight_flush = int(table.encode([0, 4, 8, 12, 16]))  # 3-4-5-6-7 of one suit
>>> float(tables.five_ctrl[straight_flush]), float(tables.five_ctrl[table.encode([0])])
(1.0, 0.0)
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from bigtwo.agents.heuristic.weights import Weight
from bigtwo.env.engine.jit import njit
from bigtwo.env.engine.kernels import U1, count4, popcount
from bigtwo.env.rules.actions import ActionTable
from bigtwo.env.rules.combos import KIND_INDEX
from bigtwo.env.rules.variant import Variant


class Lookups(NamedTuple):
    """Per-variant tables the heuristic's kernels read besides the engine's ``Rules``."""

    five_ctrl: np.ndarray  # float64 (A,): fixed control of five- and six-card plays, 0 for smaller ones
    higher: np.ndarray  # uint64 (52,): mask of the cards a single of each card loses to
    suit_order: np.ndarray  # int64 (4,): physical suits from weakest to strongest
    two_ends: bool  # the variant's two_ends_trick: a single 2 (three 2s) cannot be beaten


def five_card_control(table: ActionTable) -> np.ndarray:
    """Fixed control (0..1) of every action of five or six cards, by class and place in it;
    0 for smaller plays (their control depends on the unseen cards)."""
    out = np.zeros(table.size, dtype=np.float64)
    kinds = table.kinds
    scale = {
        "straight": (0.05, 0.35),
        "flush": (0.35, 0.6),
        "full_house": (0.6, 0.9),
        "four_of_a_kind": (0.95, 1.0),
        "straight_flush": (1.0, 1.0),
        "pair_chain": (0.85, 1.0),
    }
    for kind, (lo, hi) in scale.items():
        ids = np.flatnonzero(kinds == KIND_INDEX[kind])
        if len(ids) == 0:
            continue
        s = table.strength[ids].astype(np.float64)
        span = s.max() - s.min()
        frac = (s - s.min()) / span if span > 0 else np.ones_like(s)
        out[ids] = lo + (hi - lo) * frac
    return out


def higher_cards(suit_rank: tuple[int, ...] | np.ndarray) -> np.ndarray:
    """``higher[c]``: mask of the cards a single ``c`` loses to."""
    sr = np.asarray(suit_rank)
    value = np.array([(c // 4) * 4 + sr[c % 4] for c in range(52)])
    out = np.zeros(52, dtype=np.uint64)
    for c in range(52):
        m = 0
        for d in range(52):
            if value[d] > value[c]:
                m |= 1 << d
        out[c] = np.uint64(m)
    return out


def make_lookups(variant: Variant, table: ActionTable) -> Lookups:
    """The ``Lookups`` of a variant and its action table."""
    return Lookups(
        five_ctrl=five_card_control(table),
        higher=higher_cards(variant.suit_rank),
        suit_order=np.argsort(np.asarray(variant.suit_rank)).astype(np.int64),
        two_ends=bool(variant.two_ends_trick),
    )


@njit(inline="always")
def rank_suits(hand, r):
    """The suit bits (0..15) of ``hand``'s cards of rank ``r``."""
    return np.int64((hand >> np.uint64(4 * r)) & np.uint64(15))


@njit(inline="always")
def _top_value(m, r, suit_rank):
    best = -1
    for s in range(4):
        if m >> s & 1:
            v = r * 4 + suit_rank[s]
            if v > best:
                best = v
    return best


@njit(inline="always")
def single_control(c, unseen, f, higher, w, two_ends):
    """Control of a single card ``c`` (``higher``: ``Lookups.higher``; ``two_ends``: ``Lookups.two_ends``)."""
    if two_ends and c // 4 == 12:
        return 1.0
    k = popcount(unseen & higher[c])
    if k == 0:
        return 1.0
    v = 1.0 - k * f / w[Weight.SINGLE_SPAN]
    return v if v > 0.0 else 0.0


@njit(inline="always")
def group_control(r, m, size, unseen, f, suit_rank, w, two_ends):
    """Control of a pair (size 2) or triple (3) of rank ``r`` with suits ``m``."""
    if size == 3 and two_ends and r == 12:
        return 1.0
    k = 0.0
    for r2 in range(r + 1, 13):
        u = count4(rank_suits(unseen, r2))
        if u >= size:
            k += 1.0 + 0.5 * (u - size)
    if size == 2:
        u_m = rank_suits(unseen, r)
        if count4(u_m) >= 2 and _top_value(u_m, r, suit_rank) > _top_value(m, r, suit_rank):
            k += 1.0
    if k == 0.0:
        return 1.0
    span = w[Weight.PAIR_SPAN] if size == 2 else w[Weight.TRIPLE_SPAN]
    v = 1.0 - k * f * f / span if size == 2 else 1.0 - k * f * f * f / span
    return v if v > 0.0 else 0.0


@njit(inline="always")
def play_control(a, unseen, f, sizes, masks, suit_rank, five_ctrl, higher, w, two_ends):
    """Control (0..1) of action ``a`` given the unseen cards (the arrays of ``Lookups``: the hot
    kernels take them one by one, as taking a tuple's member in a loop costs a reference count)."""
    size = sizes[a]
    if size >= 5:
        return five_ctrl[a]
    mask = masks[a]
    low = -1
    for c in range(52):
        if mask & (U1 << np.uint64(c)):
            low = c
            break
    if size == 1:
        return single_control(low, unseen, f, higher, w, two_ends)
    r = low // 4
    return group_control(r, rank_suits(mask, r), size, unseen, f, suit_rank, w, two_ends)
