"""Playing one chunk of deals: every deal in all rotations on one batched engine.

``play_chunk`` is what a worker process, a Ray task or the calling process runs; its result is
kept per deal and table position (``ChunkResult``), so memory follows the games played, not the
number of entries. With ``chunk.records`` it also holds every match as a game record
(``chunk_records``: replayed through a ``Game`` from its deal seed, in deal then rotation order,
each as one JSON line), which the tournament writes (``--records``, ``--save-games``); without, no move is kept.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from bigtwo.agents.base import Agent
from bigtwo.agents.registry import make_agent_from_spec
from bigtwo.arena.deals import Chunk, derive_seed
from bigtwo.env.engine.engine import Engine


def spec_name(spec: str | Agent) -> str:
    """An entry's name: an agent's own name, or a name or path as written."""
    return spec.name if isinstance(spec, Agent) else str(spec)


@dataclass
class ChunkResult:
    """Per deal and table position (the entry there is ``tables[d, i]``): memory follows the
    games played, not the number of entries."""

    index: int
    payoff: np.ndarray  # (D, P) payoffs summed over the position's rotations
    games: np.ndarray  # (D, P) games played from the position
    wins: np.ndarray  # (D, P) games won
    pairs: np.ndarray | None  # (D, P, P) comparisons position i won against position j
    act_seconds: np.ndarray  # (K,)
    moves: np.ndarray  # (K,)
    records: list[str] | None = None  # every match's game record as a JSON line, by deal then rotation


Report = Callable[[int], object]  # called with deals done since the last call


_WARMED: set[tuple[str, str]] = set()  # (variant, spec) whose compiled code this process has loaded


def _warm_up(chunk: Chunk, eng: Engine, entries: list[int]) -> None:
    """Call a throwaway copy of each named agent once, so loading its compiled code (once per
    process) is not timed as its moves; the agents that play keep their random streams."""
    ids, counts = eng.legal_actions()
    for e in entries:
        spec = chunk.specs[e]
        key = (repr(chunk.variant), str(spec))
        if isinstance(spec, Agent) or key in _WARMED:
            continue
        _WARMED.add(key)
        make_agent_from_spec(spec, chunk.variant, seed=0).act(
            eng.observe()[:1].copy(), ids[:1].copy(), counts[:1].copy()
        )


def _done_fraction(S: Any, games: int, cpp: int) -> np.ndarray:
    """How far each match is, 0..1: games finished plus the current game's share (the most cards
    any seat has shed), over the games of a match; 1 once it is over."""
    shed = 1.0 - S.counts.min(axis=1) / cpp
    frac = (S.games_played + shed) / games
    return np.where(S.over, 1.0, np.minimum(frac, 1.0))


def play_chunk(chunk: Chunk, agents_cache: list[Agent] | None = None, report: Report | None = None) -> ChunkResult:
    """Play every deal of ``chunk`` in all rotations on one batched engine. ``report(n)`` is told
    of progress as it goes, in whole deals' worth of play (summing to the chunk's deals), so a
    progress bar moves within a chunk; it does not change what is played."""
    variant, tables = chunk.variant, chunk.tables
    d, p = tables.shape
    k = len(chunk.specs)
    used = np.unique(tables)
    agents: dict[int, Agent] = {}
    for e in used.tolist():
        if agents_cache is not None:
            agents[e] = agents_cache[e]
        else:
            agents[e] = make_agent_from_spec(chunk.specs[e], variant, seed=derive_seed(chunk.seed, chunk.index, e))
    g = d * p
    rot = np.tile(np.arange(p), d)  # rotation of each row
    deal = np.repeat(np.arange(d), p)  # deal (within the chunk) of each row
    # seat_entry[row, s]: the entry at seat s. Table position i sits at seat (i + r) % P.
    positions = (np.arange(p)[None, :] - rot[:, None]) % p
    seat_entry = tables[deal[:, None], positions].astype(np.int64)
    reported = 0

    # Worker processes already share the cores: they cap the engine's kernel threads.
    eng = Engine(variant, num_matches=g, seed=np.repeat(chunk.deal_seeds, p), threads=chunk.engine_threads)
    S = eng.state
    _warm_up(chunk, eng, used.tolist())
    wins_rs = np.zeros((g, p), np.int64)
    pairs = np.zeros((d, p, p), np.float64) if chunk.pairs else None
    act_seconds = np.zeros(k)
    moves = np.zeros(k, np.int64)
    rows_all = np.arange(g)
    seat_pairs = [(a, b) for a in range(p) for b in range(a + 1, p)]
    actions = np.empty(g, np.int64)
    steps: list[np.ndarray] = []  # every step's actions (-1: the row sat out), kept for the records
    while not S.over.all():
        live = ~S.over
        cur = S.current.astype(np.int64)
        acting = np.where(live, seat_entry[rows_all, np.maximum(cur, 0)], -1)
        ids, counts = eng.legal_actions()
        obs = eng.observe()
        actions.fill(-1)
        for e in np.unique(acting[live]).tolist():
            rows = np.flatnonzero(acting == e)
            t0 = time.perf_counter()
            chosen = agents[e].act(obs[rows], ids[rows], counts[rows])
            act_seconds[e] += time.perf_counter() - t0
            moves[e] += rows.size
            actions[rows] = chosen
        try:
            res = eng.step(actions)
        except ValueError as exc:  # an agent chose an illegal play: say which agent
            for row in np.flatnonzero(live).tolist():
                if actions[row] not in ids[row, : counts[row]]:
                    name = spec_name(chunk.specs[int(acting[row])])
                    raise ValueError(f"agent {name!r} chose an illegal play: {exc}") from None
            raise
        if chunk.records:
            steps.append(actions.copy())
        if res.game_over.any():
            done = np.flatnonzero(res.game_over)
            wins_rs[done, res.winner[done].astype(np.int64)] += 1
            if pairs is not None:
                pay = res.payoffs[done]
                pos = positions[done]
                dd = deal[done]
                for a, b in seat_pairs:
                    pa, pb = pos[:, a], pos[:, b]
                    half = 0.5 * (pay[:, a] == pay[:, b])
                    np.add.at(pairs, (dd, pa, pb), (pay[:, a] > pay[:, b]) + half)
                    np.add.at(pairs, (dd, pb, pa), (pay[:, b] > pay[:, a]) + half)
        if report is not None:
            now = int(_done_fraction(S, variant.games, variant.cards_per_player).sum() / p)
            if now > reported:
                report(now - reported)
                reported = now
    if report is not None and d > reported:
        report(d - reported)
    records = None
    if chunk.records:
        from bigtwo.env.records.record import record_line

        records = [record_line(r) for r in chunk_records(chunk, np.array(steps).reshape(-1, g), seat_entry, rot)]

    payoff = np.zeros((d, p))
    games = np.zeros((d, p), np.int64)
    wins = np.zeros((d, p), np.int64)
    flat_deal = np.repeat(deal, p)
    flat_pos = positions.reshape(-1)
    np.add.at(payoff, (flat_deal, flat_pos), S.match_scores.reshape(-1))
    np.add.at(games, (flat_deal, flat_pos), np.repeat(S.games_played.astype(np.int64), p))
    np.add.at(wins, (flat_deal, flat_pos), wins_rs.reshape(-1))
    return ChunkResult(chunk.index, payoff, games, wins, pairs, act_seconds, moves, records)


def chunk_records(chunk: Chunk, steps: np.ndarray, seat_entry: np.ndarray, rot: np.ndarray) -> list[dict[str, Any]]:
    """Each match of the chunk as a game record (``bigtwo.env.records.record``), replayed through a
    ``Game`` from its deal seed, in row order (deal, then rotation). ``steps`` is (steps, rows),
    each row's action per step (-1 where it sat out). ``seats`` are the entry names (the agent
    spec as written, ``#2`` on a repeat); ``info`` holds the tournament seed, the deal (its number
    in the tournament), the rotation and each seat's agent spec."""
    from bigtwo.env.envs.game import Game

    p = chunk.tables.shape[1]
    out = []
    game = Game(chunk.variant)  # one game, dealt again per row: building an engine costs more than a match
    for row in range(steps.shape[1]):
        d = row // p
        game.reset(seed=int(chunk.deal_seeds[d]))
        for action in steps[:, row]:
            if action >= 0:
                game.play_action(int(action))
        entries = [int(e) for e in seat_entry[row]]
        info = {
            "tournament_seed": chunk.seed,
            "deal": chunk.first_deal + d,
            "rotation": int(rot[row]),
            "agents": [spec_name(chunk.specs[e]) for e in entries],
        }
        out.append(game.to_record(seats=[chunk.names[e] for e in entries], info=info))
    return out


def record_file_name(record: dict[str, Any]) -> str:
    """The file ``--save-games`` writes a tournament's record to: ``deal{N:06d}-rot{R}.json``."""
    return f"deal{record['info']['deal']:06d}-rot{record['info']['rotation']}.json"


__all__ = ["ChunkResult", "Report", "chunk_records", "play_chunk", "record_file_name", "spec_name"]
