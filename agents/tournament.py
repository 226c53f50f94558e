"""Duplicate-deal tournaments: agents play the same cards from every seat, so luck cancels out.

    bigtwo tournament --variant taiwan --agents heuristic,random,random,random --deals 2000

**Duplicate deals.** A deal is one seed: the cards of every game of a match come from it. With
``P`` seats and a table of ``P`` agents, each deal is played ``P`` times (rotations): in rotation
``r`` the table's agent ``i`` sits at seat ``(i + r) % P``. Every agent so holds every seat's
cards once per deal. An agent listed twice is two entries (``random``, ``random#2``).

**More agents than seats.** Each deal seats a table of ``P`` distinct agents, sampled from the
tournament seed, and plays it duplicate as above. Mean payoffs then depend on the opponents
drawn; the rating (below) puts everyone on one scale.

**Batched play.** Deals are split into chunks of ``chunk_deals`` deals; a chunk is one
``Engine`` with ``chunk_deals * P`` matches. Each step asks every agent at once for all the
rows where it is to act (rows whose match is over sit out with -1). Chunks run in worker
processes (``multiprocessing`` 'spawn'), agents built there from their names or paths by
``make_agent``; ``Agent`` objects are accepted only with ``workers=1``. Agent seeds derive from
(seed, chunk, entry), deal seeds from (seed, deal): the result depends on ``seed`` and
``chunk_deals``, never on ``workers``; more deals extend a run (its first deals play as before).
The progress bar moves while a chunk plays (each chunk reports whole deals' worth of play as its
matches advance; workers through a queue), with the time left; reporting changes nothing played.
SIGTERM and Ctrl-C end a run with its worker processes (``KeyboardInterrupt``; the command exits
with status 130), and a worker whose parent died exits by itself. With ``ray`` (``bigtwo tournament
--ray local|auto|ADDRESS``, the ``ray`` extra) the chunks are Ray tasks on that cluster instead
(``agents.cluster``): the same chunks, so exactly the same result as the local run; agents by
name or by a checkpoint path that every node can read.

**Many agents.** Results are kept per deal and table position (``payoff_at``, ``games_at``,
``wins_at``, ``(deals, P)``, with ``tables``), and ratings use only the pairs that met
(``agents.rating.rate_tables``), so memory follows the games played: thousands of agents with
a few deals cost little. ``payoff``, ``games_per_deal`` and ``wins`` are the ``(deals, K)`` views,
built on demand.

**Statistics, per agent.**

- ``mean_payoff``: the payoff per game, averaged over deals. For deal ``d`` let ``x_d`` be the
  agent's payoffs summed over its rotations of that deal, divided by the games it played
  there. ``mean_payoff = mean(x_d)`` over the ``n`` deals it played, and the 95% confidence
  interval is ``mean ± 1.96 * sd(x_d) / sqrt(n)`` (``sd`` with ``n - 1``; normal
  approximation; ``None`` when ``n < 2``). Treating the deal, not the game, as the unit keeps
  the interval honest: the rotations of one deal share its cards.
- ``margin``: the agent's lead over its table, paired by deal: in each deal it played, its
  payoff per game there less the mean payoff per game of the other table positions, averaged
  over its deals, with the same kind of interval. Luck that every seat shares cancels in the
  difference, so this is the interval to read for "A beats B head to head" (one A against
  copies of B), and it matters under scorings that are not zero-sum (``cards``: every loser
  pays and nobody collects). Under a zero-sum scoring it is ``mean_payoff * P / (P - 1)``.
- ``win_rate``: games won / games played. ``games``: games played.
- ``ms_per_move``: wall time inside the agent's ``act`` calls divided by the moves it made
  (batched calls, so this is the amortised cost of one move).
- ``rating`` / ``rating_se`` (with more agents than seats, or ``rating=True``): Bradley-Terry
  on pairwise finishing comparisons, Elo scale, bootstrap over deals; see ``agents.rating``.

>>> result = run_tournament("taiwan", ["random", "random"], deals=4, seed=0, workers=1,
...                         progress=False, players=2)
>>> sorted(result.to_dict()["agents"])
['random', 'random#2']
>>> result.games
8
"""

from __future__ import annotations

import contextlib
import csv
import json
import math
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from queue import Empty
from typing import Any

import numpy as np

from bigtwo_env.engine import Engine
from bigtwo_env.variant import Variant, load_variant

from .base import Agent
from .rating import MAX_DENSE_AGENTS, rate_tables
from .registry import make_agent_from_spec

Z95 = 1.959963984540054  # two-sided 95% normal quantile
DEFAULT_CHUNK_DEALS = 250


def default_cores() -> int:
    """CPU cores this process may use."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def default_workers() -> int:
    """min(2, usable CPU cores)."""
    return max(1, min(2, default_cores()))


def _spec_name(spec: str | Agent) -> str:
    return spec.name if isinstance(spec, Agent) else str(spec)


def entry_names(specs: Sequence[str | Agent]) -> list[str]:
    """Display names of the entries; a name seen before gets ``#2``, ``#3``, ..."""
    names: list[str] = []
    seen: dict[str, int] = {}
    for spec in specs:
        base = _spec_name(spec)
        seen[base] = seen.get(base, 0) + 1
        names.append(base if seen[base] == 1 else f"{base}#{seen[base]}")
    return names


def mean_ci(values: Sequence[float] | np.ndarray) -> tuple[float, float | None, float | None]:
    """``(mean, low, high)``: the mean of per-deal values and its normal 95% interval,
    ``mean ± 1.96 * sd / sqrt(n)`` with the sample sd (``n - 1``); no interval when ``n < 2``.

    >>> mean, low, high = mean_ci([1.0, 2.0, 3.0, 4.0])
    >>> mean, round(low, 4), round(high, 4)
    (2.5, 1.2348, 3.7652)
    """
    x = np.asarray(values, dtype=np.float64)
    n = x.size
    if n == 0:
        return math.nan, None, None
    mean = float(x.mean())
    if n < 2:
        return mean, None, None
    half = Z95 * float(x.std(ddof=1)) / math.sqrt(n)
    return mean, mean - half, mean + half


def table_margins(per_game: np.ndarray) -> np.ndarray:
    """``(deals, P)``: each table position's payoff per game in a deal (``per_game``) less the
    mean payoff per game of the deal's other positions (``margin`` in the module docstring).

    >>> table_margins(np.array([[3.0, -1.0, -1.0, -1.0]])).tolist()
    [[4.0, -1.3333333333333333, -1.3333333333333333, -1.3333333333333333]]
    """
    p = per_game.shape[1]
    others = (per_game.sum(axis=1, keepdims=True) - per_game) / (p - 1)
    return per_game - others


def _derive_seed(*words: int) -> int:
    """A 63-bit seed from integers (SeedSequence mixing): stable across runs and platforms."""
    return int(np.random.SeedSequence([int(w) for w in words]).generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))


# ---------------------------------------------------------------- one chunk of deals


@dataclass
class _Chunk:
    """What a worker needs to play some deals: picklable (agents as names or paths)."""

    index: int
    variant: Variant
    specs: list[Any]  # names/paths, or Agent objects in-process
    deal_seeds: np.ndarray  # (D,) uint64
    tables: np.ndarray  # (D, P) entry index of each table position
    seed: int
    pairs: bool  # record pairwise comparisons for a rating
    engine_threads: int | None = None  # threads for the engine's kernels (None: its default)
    save_games: str | None = None  # folder to write each match's game record to (bigtwo_env.record)
    first_deal: int = 0  # number of the chunk's first deal in the tournament
    names: list[str] = field(default_factory=list)  # entry names, for the records' seats


@dataclass
class _ChunkResult:
    """Per deal and table position (the entry there is ``tables[d, i]``): memory follows the
    games played, not the number of entries."""

    index: int
    payoff: np.ndarray  # (D, P) payoffs summed over the position's rotations
    games: np.ndarray  # (D, P) games played from the position
    wins: np.ndarray  # (D, P) games won
    pairs: np.ndarray | None  # (D, P, P) comparisons position i won against position j
    act_seconds: np.ndarray  # (K,)
    moves: np.ndarray  # (K,)


Report = Callable[[int], object]  # called with deals done since the last call


_WARMED: set[tuple[str, str]] = set()  # (variant, spec) whose compiled code this process has loaded


def _warm_up(chunk: _Chunk, eng: Engine, entries: list[int]) -> None:
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


def play_chunk(chunk: _Chunk, agents_cache: list[Agent] | None = None, report: Report | None = None) -> _ChunkResult:
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
            agents[e] = make_agent_from_spec(chunk.specs[e], variant, seed=_derive_seed(chunk.seed, chunk.index, e))
    g = d * p
    rot = np.tile(np.arange(p), d)  # rotation of each row
    deal = np.repeat(np.arange(d), p)  # deal (within the chunk) of each row
    # seat_entry[row, s]: the entry at seat s. Table position i sits at seat (i + r) % P.
    positions = (np.arange(p)[None, :] - rot[:, None]) % p
    seat_entry = tables[deal[:, None], positions].astype(np.int64)
    reported = 0

    # Worker processes already share the cores: they cap the engine's kernel threads.
    eng = Engine(variant, num_games=g, seed=np.repeat(chunk.deal_seeds, p), threads=chunk.engine_threads)
    S = eng.state
    _warm_up(chunk, eng, used.tolist())
    wins_rs = np.zeros((g, p), np.int64)
    pairs = np.zeros((d, p, p), np.float64) if chunk.pairs else None
    act_seconds = np.zeros(k)
    moves = np.zeros(k, np.int64)
    rows_all = np.arange(g)
    seat_pairs = [(a, b) for a in range(p) for b in range(a + 1, p)]
    actions = np.empty(g, np.int64)
    steps: list[np.ndarray] = []  # every step's actions (-1: the row sat out), kept to save the games
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
                    name = _spec_name(chunk.specs[int(acting[row])])
                    raise ValueError(f"agent {name!r} chose an illegal play: {exc}") from None
            raise
        if chunk.save_games:
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
    if chunk.save_games:
        save_chunk_games(chunk, np.array(steps).reshape(-1, g), seat_entry, rot)

    payoff = np.zeros((d, p))
    games = np.zeros((d, p), np.int64)
    wins = np.zeros((d, p), np.int64)
    flat_deal = np.repeat(deal, p)
    flat_pos = positions.reshape(-1)
    np.add.at(payoff, (flat_deal, flat_pos), S.match_scores.reshape(-1))
    np.add.at(games, (flat_deal, flat_pos), np.repeat(S.games_played.astype(np.int64), p))
    np.add.at(wins, (flat_deal, flat_pos), wins_rs.reshape(-1))
    return _ChunkResult(chunk.index, payoff, games, wins, pairs, act_seconds, moves)


def save_chunk_games(chunk: _Chunk, steps: np.ndarray, seat_entry: np.ndarray, rot: np.ndarray) -> None:
    """Write each match of the chunk as a game record (``bigtwo_env.record``), replayed through a
    ``Game`` from its deal seed: ``deal{N:06d}-rot{R}.json`` in ``chunk.save_games``."""
    from bigtwo_env.game import Game
    from bigtwo_env.record import write_record

    p = chunk.tables.shape[1]
    for row in range(steps.shape[1]):
        d = row // p
        game = Game(chunk.variant, seed=int(chunk.deal_seeds[d]))
        for action in steps[:, row]:
            if action >= 0:
                game.play_action(int(action))
        deal, r = chunk.first_deal + d, int(rot[row])
        seats = [chunk.names[int(e)] for e in seat_entry[row]]
        info = {"tournament_seed": chunk.seed, "deal": deal, "rotation": r}
        write_record(Path(chunk.save_games) / f"deal{deal:06d}-rot{r}.json", game.to_record(seats=seats, info=info))


# ---------------------------------------------------------------- the result


@dataclass
class AgentStats:
    """One entry's line of the report."""

    name: str
    spec: str
    mean_payoff: float
    ci95: tuple[float | None, float | None]
    win_rate: float
    games: int
    deals: int
    moves: int
    ms_per_move: float
    margin: float = math.nan
    margin_ci95: tuple[float | None, float | None] = (None, None)
    rating: float | None = None
    rating_se: float | None = None


@dataclass
class TournamentResult:
    """Per-entry statistics and the per-deal arrays they come from (see the module docstring)."""

    variant: Variant
    deals: int
    seed: int
    names: list[str]
    stats: list[AgentStats]
    payoff_at: np.ndarray  # (deals, P) payoffs summed over the rotations of each table position
    games_at: np.ndarray  # (deals, P) games played from each table position
    wins_at: np.ndarray  # (deals, P) games won from each table position
    tables: np.ndarray  # (deals, P) entry indices at table positions
    seconds: float
    chunk_deals: int
    overrides: dict[str, Any] = field(default_factory=dict)
    rating_method: str | None = None

    def _per_entry(self, at: np.ndarray) -> np.ndarray:
        dense = np.zeros((self.deals, len(self.names)), dtype=at.dtype)
        dense[np.arange(self.deals)[:, None], self.tables] = at
        return dense

    @property
    def payoff(self) -> np.ndarray:
        """(deals, K) payoffs summed over each entry's rotations (0 where it did not play); built
        on demand from the per-position arrays: deals x K numbers."""
        return self._per_entry(self.payoff_at)

    @property
    def games_per_deal(self) -> np.ndarray:
        """(deals, K) games each entry played in each deal (built on demand, like ``payoff``)."""
        return self._per_entry(self.games_at)

    @property
    def wins(self) -> np.ndarray:
        """(deals, K) games each entry won in each deal (built on demand, like ``payoff``)."""
        return self._per_entry(self.wins_at)

    @property
    def games(self) -> int:
        """Games played in all (each game has P seats; counted once)."""
        return int(self.games_at.sum() // self.variant.players)

    @property
    def games_per_second(self) -> float:
        return self.games / self.seconds if self.seconds > 0 else math.nan

    def to_dict(self, timing: bool = True) -> dict[str, Any]:
        """JSON-ready summary; ``timing=False`` leaves out the (run-dependent) time fields."""

        def num(x: float | None, digits: int = 6) -> float | None:
            return None if x is None or not math.isfinite(x) else round(float(x), digits)

        agents: dict[str, Any] = {}
        for s in self.stats:
            entry: dict[str, Any] = {
                "mean_payoff": num(s.mean_payoff),
                "ci95": [num(s.ci95[0]), num(s.ci95[1])],
                "margin": num(s.margin),
                "margin_ci95": [num(s.margin_ci95[0]), num(s.margin_ci95[1])],
                "win_rate": num(s.win_rate),
                "games": s.games,
                "deals": s.deals,
                "moves": s.moves,
            }
            if s.spec != s.name.split("#")[0]:
                entry["spec"] = s.spec
            if timing:
                entry["ms_per_move"] = num(s.ms_per_move, 4)
            if s.rating is not None:
                entry["rating"] = num(s.rating, 2)
                entry["rating_se"] = num(s.rating_se, 2)
            agents[s.name] = entry
        out: dict[str, Any] = {
            "variant": self.variant.name,
            "deals": self.deals,
            "seed": self.seed,
            "players": self.variant.players,
            "games": self.games,
            "chunk_deals": self.chunk_deals,
        }
        if self.overrides:
            out["overrides"] = dict(self.overrides)
        if self.rating_method:
            out["rating_method"] = self.rating_method
        out["agents"] = agents
        if timing:
            out["seconds"] = round(self.seconds, 3)
            out["games_per_second"] = round(self.games_per_second, 1)
        return out

    def table(self) -> str:
        """The report as aligned text, best mean payoff first."""
        rated = any(s.rating is not None for s in self.stats)
        width = max(8, *(len(s.name) for s in self.stats))
        lines = [
            f"{self.variant.name}: {self.deals} deals x {self.variant.players} rotations, {self.games} games, "
            f"seed {self.seed} ({self.seconds:.1f} s, {self.games_per_second:.0f} games/s)",
            f"{'agent':<{width}}  {'payoff/game':>11}  {'95% CI':>19}  {'margin':>7}  {'95% CI':>19}  {'win rate':>8}  "
            f"{'games':>7}  {'ms/move':>8}" + (f"  {'rating':>7}  {'± se':>6}" if rated else ""),
        ]

        def f(x: float | None) -> str:
            return "n/a" if x is None else f"{x:+.3f}"

        order = sorted(self.stats, key=lambda s: -(s.rating if rated and s.rating is not None else s.mean_payoff))
        for s in order:
            ci = f"[{f(s.ci95[0])}, {f(s.ci95[1])}]"
            mci = f"[{f(s.margin_ci95[0])}, {f(s.margin_ci95[1])}]"
            line = (
                f"{s.name:<{width}}  {s.mean_payoff:>+11.3f}  {ci:>19}  {s.margin:>+7.3f}  {mci:>19}  "
                f"{100 * s.win_rate:>7.1f}%  "
                f"{s.games:>7}  {s.ms_per_move:>8.4f}"
            )
            if rated:
                line += f"  {s.rating:>+7.0f}  {s.rating_se:>6.0f}" if s.rating is not None else ""
            lines.append(line)
        lines.append("CI over deals: per deal, the agent's payoff per game over its rotations; mean ± 1.96 sd/sqrt(n).")
        lines.append("margin: per deal, that payoff less the mean of the other table positions' (paired by deal).")
        if rated:
            lines.append(f"rating: Elo scale, mean 0 ({self.rating_method}).")
        return "\n".join(lines)

    def write(self, prefix: str | Path) -> tuple[Path, Path]:
        """Write ``PREFIX.json`` and ``PREFIX.csv``; returns their paths."""
        prefix = Path(prefix)
        if prefix.parent and not prefix.parent.exists():
            prefix.parent.mkdir(parents=True, exist_ok=True)
        jpath, cpath = Path(f"{prefix}.json"), Path(f"{prefix}.csv")
        data = self.to_dict()
        jpath.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        cols = ["mean_payoff", "ci95_low", "ci95_high", "margin", "margin_ci95_low", "margin_ci95_high"]
        cols += ["win_rate", "games", "deals", "moves", "ms_per_move"]
        cols += ["rating", "rating_se"]
        with cpath.open("w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh)
            writer.writerow(["agent", *cols])
            for name, a in data["agents"].items():
                a = {
                    **a,
                    **{f"{k}_{end}": a[k][i] for k in ("ci95", "margin_ci95") for i, end in enumerate(("low", "high"))},
                }
                writer.writerow([name, *(a.get(c) for c in cols)])
        return jpath, cpath


# ---------------------------------------------------------------- running


def _sample_tables(rng: np.random.Generator, deals: int, k: int, p: int) -> np.ndarray:
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


def _whole(value: object) -> bool:
    """An integer, and not a bool (``True`` is no count)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


class _Stop(KeyboardInterrupt):
    """SIGTERM arrived: unwind like Ctrl-C, so the workers are ended on the way out."""


@contextlib.contextmanager
def _signals_end_the_run() -> Iterator[None]:
    """While inside, SIGTERM raises ``_Stop`` (SIGINT raises ``KeyboardInterrupt`` as always), so
    the ``finally`` clauses that end the worker processes run; only in the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: object) -> None:
        raise _Stop(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


_PROGRESS: Any = None  # in a worker process: the queue its chunks report progress to


def _start_worker(progress: Any, parent: int) -> None:
    """A worker leaves Ctrl-C to the parent (which ends it), reports progress to ``progress``,
    and exits if the parent dies without ending it (``kill -9``)."""
    global _PROGRESS
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _PROGRESS = progress

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


def _worker_chunk(chunk: _Chunk) -> _ChunkResult:
    """``play_chunk`` in a worker, telling the parent of its progress."""
    queue = _PROGRESS
    return play_chunk(chunk, report=None if queue is None else lambda n: queue.put(n))


def _end_workers(pool: ProcessPoolExecutor) -> None:
    """Stop ``pool`` now: drop the chunks not started, end the running workers, and wait for the
    pool's manager thread to wind down. Left running, that thread closes its wake-up pipe while
    the interpreter's exit hook writes to it (a race inside ``concurrent.futures``, seen on 3.11), which
    printed an ``OSError`` traceback after an interrupted run."""
    manager = getattr(pool, "_executor_manager_thread", None)  # forgotten by shutdown(wait=False)
    terminate = getattr(pool, "terminate_workers", None)  # Python 3.14
    if terminate is not None:
        pool.shutdown(wait=False, cancel_futures=True)
        terminate()
    else:
        procs = list((getattr(pool, "_processes", None) or {}).values())  # gone after shutdown
        pool.shutdown(wait=False, cancel_futures=True)
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.join(10)
            if proc.is_alive():
                proc.kill()
    if manager is not None and manager is not threading.current_thread():
        manager.join(10)


def _play_in_workers(chunks: list[_Chunk], workers: int, bar: Any) -> dict[int, _ChunkResult]:
    """Every chunk played by ``workers`` spawned processes, the bar moving as they report; on an
    error, Ctrl-C or SIGTERM the workers are ended before this returns."""
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    pool = ProcessPoolExecutor(
        max_workers=min(workers, len(chunks)),
        mp_context=ctx,
        initializer=_start_worker,
        initargs=(queue, os.getpid()),
    )
    results: dict[int, _ChunkResult] = {}
    try:
        pending = {pool.submit(_worker_chunk, c): c.index for c in chunks}
        while pending:
            with contextlib.suppress(Empty):
                bar.update(queue.get(timeout=0.2))
            for fut in [f for f in pending if f.done()]:
                results[pending.pop(fut)] = fut.result()  # a worker's error is raised here
    except BaseException:
        _end_workers(pool)
        raise
    finally:
        pool.shutdown(wait=True)
        while True:  # what the workers said last
            try:
                bar.update(queue.get_nowait())
            except (Empty, OSError, ValueError):
                break
        queue.close()
        queue.join_thread()
    return results


def run_tournament(
    variant: Variant | str,
    agents: Sequence[str | Agent],
    deals: int = 1000,
    seed: int = 0,
    workers: int | None = None,
    progress: bool = True,
    *,
    chunk_deals: int | None = None,
    rating: bool | None = None,
    bootstrap: int = 200,
    save_games: str | Path | None = None,
    ray: str | None = None,
    **overrides: Any,
) -> TournamentResult:
    """Play ``deals`` duplicate deals between ``agents`` (names, checkpoint paths, or ``Agent``
    objects with ``workers=1``) and summarise; see the module docstring.

    ``variant``: a name, YAML path or ``Variant``; ``overrides`` change its fields
    (``players=3``). ``workers``: processes (default ``min(2, cores)``; 1 = in this process).
    ``rating``: fit Bradley-Terry ratings (default: when there are more agents than seats);
    ``bootstrap``: resamples of the deals for the ratings' errors (0: Hessian errors).
    ``progress``: a bar on stderr that moves as deals are played, with an estimate of the time
    left. SIGTERM and Ctrl-C end the run and its worker processes (``KeyboardInterrupt``).
    ``save_games``: a folder to write every match to as a game record (``bigtwo_env.record``),
    one file per deal and rotation, ``deal000012-rot1.json``.
    ``ray``: ``local``, ``auto`` or a cluster address: the chunks run as tasks on that Ray cluster
    (``agents.cluster``; ``workers`` is then unused), with the same result.
    """
    var = load_variant(variant, **overrides)
    p = var.players
    specs = list(agents)
    k = len(specs)
    if not _whole(deals) or deals < 1:
        raise ValueError(f"deals must be a positive integer, got {deals!r}")
    if not _whole(seed) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    if not _whole(bootstrap) or bootstrap < 0:
        raise ValueError(
            f"bootstrap must be a non-negative integer (resamples of the deals; 0: Hessian errors), got {bootstrap!r}"
        )
    if k < p:
        raise ValueError(
            f"{k} agent(s) for {p} seats: list at least {p} (repeat a name to fill the table, "
            f"e.g. heuristic,{','.join(['random'] * (p - 1))})"
        )
    if workers is not None and (not _whole(workers) or workers < 1):
        raise ValueError(f"workers must be a positive integer, got {workers!r}")
    workers = default_workers() if workers is None else int(workers)
    if chunk_deals is not None and (not _whole(chunk_deals) or chunk_deals < 1):
        raise ValueError(f"chunk_deals must be a positive integer, got {chunk_deals!r}")
    has_objects = any(isinstance(s, Agent) for s in specs)
    if ray is not None:
        from .cluster import check_address, need_ray

        check_address(ray)
        need_ray()
        if has_objects:
            raise ValueError("Agent objects do not travel to Ray tasks: pass names or checkpoint paths, or no ray")
    if has_objects and workers > 1:
        raise ValueError(
            "Agent objects do not travel to worker processes: pass names or checkpoint paths, or workers=1"
        )
    for s in specs:
        if not isinstance(s, (str, Agent)):
            raise ValueError(f"an agent must be a name, a checkpoint path or an Agent, got {s!r}")
    names = entry_names(specs)
    fit = (k > p) if rating is None else bool(rating)
    if fit and bootstrap == 0 and k > MAX_DENSE_AGENTS:
        raise ValueError(
            f"Hessian rating errors (bootstrap 0) need a {k} x {k} matrix: at most {MAX_DENSE_AGENTS} agents; "
            "use bootstrap > 0"
        )
    # Build the agents here: bad names fail now, not in a worker, and objects get used. Names are
    # only checked (one build per distinct name), so thousands of entries cost no more than a few.
    if has_objects:
        local_agents = [make_agent_from_spec(s, var, seed=_derive_seed(seed, 2**32, e)) for e, s in enumerate(specs)]
    else:
        first = {s: e for e, s in reversed(list(enumerate(specs)))}
        for s, e in first.items():
            make_agent_from_spec(s, var, seed=_derive_seed(seed, 2**32, e))
        local_agents = None

    deal_seeds = np.random.SeedSequence([int(seed), 0xB162]).generate_state(deals, dtype=np.uint64)
    if k == p:
        tables = np.tile(np.arange(p), (deals, 1))
    else:
        rng = np.random.default_rng([int(seed), 0x7AB1E])
        tables = _sample_tables(rng, deals, k, p)
    chunk_deals = DEFAULT_CHUNK_DEALS if chunk_deals is None else int(chunk_deals)
    if save_games is not None:
        if Path(save_games).exists() and not Path(save_games).is_dir():
            raise ValueError(f"save_games must be a folder, but {str(save_games)!r} is a file")
        Path(save_games).mkdir(parents=True, exist_ok=True)
    chunks = [
        _Chunk(
            i,
            var,
            [s if isinstance(s, Agent) else str(s) for s in specs],
            deal_seeds[lo : lo + chunk_deals],
            tables[lo : lo + chunk_deals],
            int(seed),
            fit,
            1 if ray is not None else None if workers == 1 else max(1, default_cores() // workers),
            None if save_games is None else str(save_games),
            lo,
            names,
        )
        for i, lo in enumerate(range(0, deals, chunk_deals))
    ]

    from tqdm import tqdm  # the text bar: tqdm.auto wants ipywidgets in notebooks

    bar = tqdm(total=deals, unit="deal", desc="tournament", file=sys.stderr, disable=not progress, leave=False)
    results: dict[int, _ChunkResult] = {}
    t0 = time.perf_counter()
    try:
        with _signals_end_the_run():
            if ray is not None:
                from .cluster import connect, play_chunks

                with connect(ray):
                    results = play_chunks(chunks, play_chunk, bar.update)
            elif workers == 1 or len(chunks) == 1:
                for c in chunks:
                    results[c.index] = play_chunk(c, local_agents, report=bar.update)
            else:
                results = _play_in_workers(chunks, workers, bar)
    finally:
        bar.close()
    seconds = time.perf_counter() - t0

    ordered = [results[i] for i in range(len(chunks))]
    payoff = np.concatenate([r.payoff for r in ordered])
    games = np.concatenate([r.games for r in ordered])
    wins = np.concatenate([r.wins for r in ordered])
    act_seconds = np.sum([r.act_seconds for r in ordered], axis=0)
    moves = np.sum([r.moves for r in ordered], axis=0)

    ratings = None
    if fit:
        pairs = np.concatenate([r.pairs for r in ordered])  # type: ignore[misc]
        ratings = rate_tables(tables, pairs, k, bootstrap=bootstrap, seed=int(seed))
    # Each entry's deals, in deal order: the table positions it held, grouped by entry.
    entry = tables.reshape(-1)
    order = np.argsort(entry, kind="stable")
    bounds = np.searchsorted(entry[order], np.arange(k + 1))
    flat_games, flat_wins = games.reshape(-1), wins.reshape(-1)
    per_game = payoff / np.maximum(games, 1)  # (deals, P); a position with no games is left out below
    flat_per_game, flat_margin = per_game.reshape(-1), table_margins(per_game).reshape(-1)
    stats: list[AgentStats] = []
    for e in range(k):
        at = order[bounds[e] : bounds[e + 1]]
        at = at[flat_games[at] > 0]
        mean, low, high = mean_ci(flat_per_game[at])
        m_mean, m_low, m_high = mean_ci(flat_margin[at])
        g_total = int(flat_games[at].sum())
        stats.append(
            AgentStats(
                name=names[e],
                spec=_spec_name(specs[e]),
                mean_payoff=mean,
                ci95=(low, high),
                win_rate=float(flat_wins[at].sum() / g_total) if g_total else math.nan,
                games=g_total,
                deals=int(at.size),
                moves=int(moves[e]),
                ms_per_move=float(1000.0 * act_seconds[e] / moves[e]) if moves[e] else math.nan,
                margin=m_mean,
                margin_ci95=(m_low, m_high),
                rating=None if ratings is None else float(ratings.rating[e]),
                rating_se=None if ratings is None else float(ratings.se[e]),
            )
        )
    return TournamentResult(
        variant=var,
        deals=int(deals),
        seed=int(seed),
        names=names,
        stats=stats,
        payoff_at=payoff,
        games_at=games,
        wins_at=wins,
        tables=tables,
        seconds=seconds,
        chunk_deals=chunk_deals,
        overrides=dict(overrides),
        rating_method=None if ratings is None else ratings.method,
    )
