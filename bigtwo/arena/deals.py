"""Duplicate deals and tables: which cards each deal holds, who sits at each table, and the chunks.

A deal is one seed (``deal_seeds``); a table is ``P`` distinct entries at table positions
(``seat_tables``: every entry when there are ``P``, else sampled from the tournament seed);
rotation ``r`` of a deal seats the table's position ``i`` at seat ``(i + r) % P``. A ``Chunk``
is what one worker plays: some deals with their tables, picklable (agents as names or paths).
Agent seeds derive from (seed, chunk, entry) and deal seeds from (seed, deal), so a tournament
depends on its seed and chunk size only, never on how many workers play it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bigtwo.env.rules.variant import Variant

DEFAULT_CHUNK_DEALS = 250


def derive_seed(*words: int) -> int:
    """A 63-bit seed from integers (SeedSequence mixing): stable across runs and platforms."""
    return int(np.random.SeedSequence([int(w) for w in words]).generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))


def deal_seeds(seed: int, deals: int) -> np.ndarray:
    """``(deals,)`` uint64: the seed of every deal of a tournament seeded ``seed``."""
    return np.random.SeedSequence([int(seed), 0xB162]).generate_state(deals, dtype=np.uint64)


def seat_tables(seed: int, deals: int, entries: int, players: int) -> np.ndarray:
    """``(deals, players)`` entry index at each table position: every entry in order when there
    are as many entries as seats, else tables sampled from the seed (``sample_tables``)."""
    if entries == players:
        return np.tile(np.arange(players), (deals, 1))
    return sample_tables(np.random.default_rng([int(seed), 0x7AB1E]), deals, entries, players)


def sample_tables(rng: np.random.Generator, deals: int, k: int, p: int) -> np.ndarray:
    """``(deals, p)`` tables of distinct entries: per deal, the ``p`` entries with the lowest of
    ``k`` uniform keys, lowest first (``argsort(rng.random((deals, k)))[:, :p]``), drawn in
    blocks of deals so that memory stays small with many entries."""
    out = np.empty((deals, p), dtype=np.int64)
    block = max(1, (1 << 20) // k)
    for lo in range(0, deals, block):
        keys = rng.random((min(block, deals - lo), k))
        low = np.argpartition(keys, p - 1, axis=1)[:, :p] if p < k else np.tile(np.arange(k), (len(keys), 1))
        order = np.argsort(np.take_along_axis(keys, low, axis=1), axis=1)
        out[lo : lo + len(keys)] = np.take_along_axis(low, order, axis=1)
    return out


@dataclass
class Chunk:
    """What a worker needs to play some deals: picklable (agents as names or paths)."""

    index: int
    variant: Variant
    specs: list[Any]  # names/paths, or Agent objects in-process
    deal_seeds: np.ndarray  # (D,) uint64
    tables: np.ndarray  # (D, P) entry index of each table position
    seed: int
    pairs: bool  # record pairwise comparisons for a rating
    engine_threads: int | None = None  # threads for the engine's kernels (None: its default)
    records: bool = False  # keep each match's game record (bigtwo.env.records.record) in the result
    first_deal: int = 0  # number of the chunk's first deal in the tournament
    names: list[str] = field(default_factory=list)  # entry names, for the records' seats


__all__ = ["DEFAULT_CHUNK_DEALS", "Chunk", "deal_seeds", "derive_seed", "sample_tables", "seat_tables"]
