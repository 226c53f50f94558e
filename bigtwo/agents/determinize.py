"""What a seat knows of its game, read back from its observation, and deals consistent with it.

A search (``bigtwo.agents.search``, ``bigtwo.agents.lookahead``) never reads the hidden hands: it reads
the seat's observation (``read_position``), deals the cards it has not seen at random to the other
seats, each getting exactly as many as it holds (``deal_hands``: a *determinization*), and loads
each guess into an ``Engine`` with ``Engine.set_position``, the observer as seat 0 and the other
seats relative to it in play order.

``read_position`` also rebuilds the game's recent moves (``recent_*``) and the weakest play each
seat passed on (``passed_on*``) as action ids, so that a network reading the loaded position sees
what it would have seen in the real game: the observation shows each move's kind and strength
within its size, and any play of that kind and strength shows the same, so the first one is taken.

>>> from bigtwo.env.engine.engine import Engine
>>> eng = Engine("taiwan", num_matches=1, seed=3)
>>> for _ in range(6):
...     _ = eng.step(eng.legal_actions()[0][:, 0])
>>> seen = read_position(eng.observe()[0], eng.variant, eng.table, eng.table.places())
>>> hands = deal_hands(np.random.default_rng(0), seen, 2)
>>> bool((hands[:, 0] == seen.hand).all()), int(seen.left.sum())  # 2 of the 6 moves were plays of one card
(True, 50)
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from bigtwo.env.engine.kernels import HISTORY, SIZE_SLOTS
from bigtwo.env.engine.observation import FULL, decode_observation
from bigtwo.env.rules.actions import ActionTable
from bigtwo.env.rules.variant import Variant

BITS = np.uint64(1) << np.arange(52, dtype=np.uint64)


def card_mask(cards: np.ndarray) -> np.uint64:
    """The uint64 card mask of a bool array over the 52 card ids."""
    return np.bitwise_or.reduce(BITS[np.asarray(cards, dtype=bool)], initial=np.uint64(0))


class Seen(NamedTuple):
    """One seat's knowledge of its game (seats relative to it: 0 is the observer, then in play order)."""

    hand: np.uint64  # the observer's cards
    played: np.ndarray  # (P,) uint64: each seat's cards played this game
    left: np.ndarray  # (P,) int64: cards each seat holds
    table: int  # the play to beat (action id; 0 when leading)
    table_seat: int  # who made it (-1 when leading)
    passes: int  # passes since it
    opening: int  # the card the next play must hold (-1: none)
    unseen: np.ndarray  # card ids the observer has not seen (the other seats hold some of them)
    hist_action: np.ndarray  # (HISTORY,) the game's recent moves, most recent first (0 a pass, -1 none)
    hist_seat: np.ndarray  # (HISTORY,) who made each (-1 none)
    passed_on: np.ndarray  # (P, SIZE_SLOTS) the weakest table play each seat passed on, per size (0 none)


def _by_strength(table: ActionTable, places: np.ndarray, keys: np.ndarray, key: int, strength: float) -> int:
    """The first play whose ``keys`` entry is ``key`` and whose strength within its size is nearest ``strength``."""
    ids = np.flatnonzero(keys == key)
    ids = ids[ids > 0]
    return int(ids[np.argmin(np.abs(places[ids] - strength))]) if ids.size else 0


def read_position(row: np.ndarray, variant: Variant, table: ActionTable, places: np.ndarray | None = None) -> Seen:
    """What the observation ``row`` tells of its game (``Seen``). ``places``: each play's strength
    within its size as observations show it (``ActionTable.places()``); without it the recent moves
    and passes are not rebuilt (none, for a search whose rollouts never read them). ``ValueError``
    when the other seats hold more cards than the observer has not seen (an inconsistent observation)."""
    P, cpp = variant.players, variant.cards_per_player
    d = decode_observation(row, P)
    hand = card_mask(d["hand"])
    played = np.array([card_mask(d["played"][k]) for k in range(P)], dtype=np.uint64)
    left = np.rint(d["cards_left_fraction"] * cpp).astype(np.int64)
    table_action = 0 if d["leading"] else table.encode(np.flatnonzero(d["table"]).tolist())
    table_seat = int(d["table_seat"]) if table_action else -1
    passes = int(d["passes"]) if table_action else 0
    opening = int(np.argmax(d["opening_card"])) if d["opening_card"].any() else -1
    seen = hand | np.bitwise_or.reduce(played)
    unseen = np.flatnonzero((~seen & FULL) & BITS)
    if int(left[1:].sum()) > len(unseen):
        raise ValueError(f"observation holds {int(left[1:].sum())} opponents' cards but only {len(unseen)} are unseen")
    hist_action = np.full(HISTORY, -1, dtype=np.int64)
    passed_on = np.zeros((P, SIZE_SLOTS), dtype=np.int64)
    if places is None:
        hist_seat = np.full(HISTORY, -1, dtype=np.int64)
        return Seen(
            hand,
            played,
            left,
            int(table_action),
            table_seat,
            passes,
            opening,
            unseen,
            hist_action,
            hist_seat,
            passed_on,
        )
    kinds = table.kinds.astype(np.int64)
    hist_seat = np.asarray(d["recent_seat"], dtype=np.int64).copy()
    for i in range(HISTORY):
        if hist_seat[i] < 0:
            break
        k = int(d["recent_kind"][i])
        hist_action[i] = 0 if k == 0 else _by_strength(table, places, kinds, k, float(d["recent_strength"][i]))
    hist_seat[hist_action < 0] = -1
    sizes = table.sizes.astype(np.int64)
    slot_of_size = np.array([-1, 0, 1, 2, -1, 3, 4])
    slots = np.where(sizes < len(slot_of_size), slot_of_size[np.minimum(sizes, 6)], -1)
    for s, j in zip(*np.nonzero(d["passed_on"]), strict=True):
        passed_on[s, j] = _by_strength(table, places, slots, int(j), float(d["passed_on_strength"][s, j]))
    return Seen(
        hand, played, left, int(table_action), table_seat, passes, opening, unseen, hist_action, hist_seat, passed_on
    )


def deal_hands(rng: np.random.Generator, seen: Seen, samples: int, holders: np.ndarray | None = None) -> np.ndarray:
    """``samples`` guesses of every seat's hand, uint64 ``(samples, P)``: the observer's own in
    column 0, the unseen cards dealt to the others, each getting as many as it holds (whatever is
    left over stayed undealt: fewer than 4 players, or a deal of fewer than 52 cards).

    Without ``holders`` the cards are dealt at random. With ``holders`` (``(P-1, 52)``: for each other
    seat and card, a belief's probability that the seat holds it; ``bigtwo.train.belief``) the seats
    take their cards in a random order, each drawing its count without replacement with chances in
    proportion to its probabilities (Gumbel top-k), so a guess follows the belief and every count
    still holds."""
    P = len(seen.left)
    hands = np.zeros((samples, P), dtype=np.uint64)
    hands[:, 0] = seen.hand
    if holders is None:
        keys = rng.random((samples, len(seen.unseen)))
        dealt = seen.unseen[np.argsort(keys, axis=1)]
        off = 0
        for k in range(1, P):
            hands[:, k] = np.bitwise_or.reduce(BITS[dealt[:, off : off + seen.left[k]]], axis=1)
            off += seen.left[k]
        return hands
    bits = BITS[seen.unseen]
    logp = np.log(np.maximum(np.asarray(holders, np.float64)[:, seen.unseen], 1e-30))  # (P-1, U), finite
    taken = np.zeros((samples, len(seen.unseen)), dtype=bool)
    order = np.argsort(rng.random((samples, P - 1)), axis=1) + 1  # each guess's order of the other seats
    every = np.arange(samples)
    for j in range(P - 1):
        seat = order[:, j]
        keys = logp[seat - 1] + rng.gumbel(size=taken.shape)
        keys[taken] = -np.inf
        rank = np.argsort(np.argsort(-keys, axis=1, kind="stable"), axis=1, kind="stable")
        mine = rank < seen.left[seat][:, None]
        taken |= mine
        hands[every, seat] = np.bitwise_or.reduce(np.where(mine, bits[None, :], np.uint64(0)), axis=1)
    return hands
