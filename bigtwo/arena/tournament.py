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
(``bigtwo.arena.cluster``): the same chunks, so exactly the same result as the local run; agents by
name or by a checkpoint path that every node can read.

**Game records.** ``records="games.jsonl"`` (``bigtwo tournament --records``) writes every match
as a game record (``bigtwo.env.records.record``), one JSON line each, in deal then rotation order:
its deal, every play, the payoffs, ``seats`` (the entry names: the agent spec as written, ``#2``
on a repeat) and ``info`` (``tournament_seed``, ``deal``, ``rotation``, ``agents``: each seat's
spec). Chunks keep their records (made where they were played, by replaying their moves through
a ``Game``) only when asked, and the file is written as chunks finish, in chunk order: the same
seed and ``chunk_deals`` write the same bytes for any ``workers``. ``save_games=DIR`` writes the
same records as one JSON file per match (``deal000012-rot1.json``); both may be given.

**Many agents.** Results are kept per deal and table position (``payoff_at``, ``games_at``,
``wins_at``, ``(deals, P)``, with ``tables``), and ratings use only the pairs that met
(``bigtwo.arena.rating.rate_tables``), so memory follows the games played: thousands of agents with
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
  on pairwise finishing comparisons, Elo scale, bootstrap over deals; see ``bigtwo.arena.rating``.

>>> result = run_tournament("taiwan", ["random", "random"], deals=4, seed=0, workers=1,
...                         progress=False, players=2)
>>> sorted(result.to_dict()["agents"])
['random', 'random#2']
>>> result.games
8
"""

from __future__ import annotations

import json
import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bigtwo.agents.base import Agent
from bigtwo.agents.registry import make_agent_from_spec
from bigtwo.arena.chunk import ChunkResult, play_chunk, record_file_name, spec_name
from bigtwo.arena.deals import DEFAULT_CHUNK_DEALS, Chunk, deal_seeds, derive_seed, seat_tables
from bigtwo.arena.pool import default_workers, play_in_workers, signals_end_the_run
from bigtwo.arena.rating import MAX_DENSE_AGENTS, rate_tables
from bigtwo.arena.results import AgentStats, TournamentResult
from bigtwo.arena.stats import mean_ci, table_margins
from bigtwo.env.checks import check_count, is_whole, usable_cores
from bigtwo.env.records.record import write_record
from bigtwo.env.rules.variant import Variant, load_variant


def entry_names(specs: Sequence[str | Agent]) -> list[str]:
    """Display names of the entries; a name seen before gets ``#2``, ``#3``, ..."""
    names: list[str] = []
    seen: dict[str, int] = {}
    for spec in specs:
        base = spec_name(spec)
        seen[base] = seen.get(base, 0) + 1
        names.append(base if seen[base] == 1 else f"{base}#{seen[base]}")
    return names


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
    records: str | Path | None = None,
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
    ``save_games``: a folder to write every match to as a game record (``bigtwo.env.records.record``),
    one file per deal and rotation, ``deal000012-rot1.json``. ``records``: a JSON Lines file to write
    every match to as a game record, one a line, in deal then rotation order (see the module docstring).
    ``ray``: ``local``, ``auto`` or a cluster address: the chunks run as tasks on that Ray cluster
    (``bigtwo.arena.cluster``; ``workers`` is then unused), with the same result.
    """
    var = load_variant(variant, **overrides)
    specs = list(agents)
    workers = _check_arguments(var, specs, deals, seed, workers, chunk_deals, bootstrap, ray)
    k, has_objects = len(specs), any(isinstance(s, Agent) for s in specs)
    names = entry_names(specs)
    fit = (k > var.players) if rating is None else bool(rating)
    if fit and bootstrap == 0 and k > MAX_DENSE_AGENTS:
        raise ValueError(
            f"Hessian rating errors (bootstrap 0) need a {k} x {k} matrix: at most {MAX_DENSE_AGENTS} agents; "
            "use bootstrap > 0"
        )
    # Build the agents here: bad names fail now, not in a worker, and objects get used. Names are
    # only checked (one build per distinct name), so thousands of entries cost no more than a few.
    if has_objects:
        local_agents = [make_agent_from_spec(s, var, seed=derive_seed(seed, 2**32, e)) for e, s in enumerate(specs)]
    else:
        first = {s: e for e, s in reversed(list(enumerate(specs)))}
        for s, e in first.items():
            make_agent_from_spec(s, var, seed=derive_seed(seed, 2**32, e))
        local_agents = None

    tables = seat_tables(seed, deals, k, var.players)
    chunk_deals = DEFAULT_CHUNK_DEALS if chunk_deals is None else int(chunk_deals)
    writer = RecordWriter(records, save_games) if records is not None or save_games is not None else None
    engine_threads = 1 if ray is not None else None if workers == 1 else max(1, usable_cores() // workers)
    seeds = deal_seeds(seed, deals)
    chunks = [
        Chunk(
            i,
            var,
            [s if isinstance(s, Agent) else str(s) for s in specs],
            seeds[lo : lo + chunk_deals],
            tables[lo : lo + chunk_deals],
            int(seed),
            fit,
            engine_threads,
            writer is not None,
            lo,
            names,
        )
        for i, lo in enumerate(range(0, deals, chunk_deals))
    ]
    t0 = time.perf_counter()
    try:
        results = _play(chunks, local_agents, workers, ray, progress, deals, writer)
    finally:
        if writer is not None:
            writer.close()
    seconds = time.perf_counter() - t0
    ordered = [results[i] for i in range(len(chunks))]
    payoff = np.concatenate([r.payoff for r in ordered])
    games = np.concatenate([r.games for r in ordered])
    ratings = None
    if fit:
        pairs = np.concatenate([r.pairs for r in ordered])
        ratings = rate_tables(tables, pairs, k, bootstrap=bootstrap, seed=int(seed))
    stats = _entry_stats(names, specs, tables, ordered, payoff, games, ratings)
    return TournamentResult(
        variant=var,
        deals=int(deals),
        seed=int(seed),
        names=names,
        stats=stats,
        payoff_at=payoff,
        games_at=games,
        wins_at=np.concatenate([r.wins for r in ordered]),
        tables=tables,
        seconds=seconds,
        chunk_deals=chunk_deals,
        overrides=dict(overrides),
        rating_method=None if ratings is None else ratings.method,
    )


class RecordWriter:
    """Writes the chunks' game records as they finish, in chunk order: to the JSON Lines file
    ``lines`` and/or one JSON file per match into the folder ``folder``. A chunk that finishes
    early waits (only its records) until those before it are written; a chunk's records are
    dropped from its result once written, so memory holds only the chunks waiting."""

    def __init__(self, lines: str | Path | None, folder: str | Path | None) -> None:
        if folder is not None:
            if Path(folder).exists() and not Path(folder).is_dir():
                raise ValueError(f"save_games must be a folder, but {str(folder)!r} is a file")
            Path(folder).mkdir(parents=True, exist_ok=True)
        self.folder = None if folder is None else Path(folder)
        self.out = None
        if lines is not None:
            path = Path(lines)
            if path.is_dir():
                raise ValueError(f"records must be a file to write (games.jsonl), but {str(path)!r} is a folder")
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                self.out = path.open("w", encoding="utf-8", newline="\n")
            except OSError as exc:
                raise ValueError(f"cannot write records to {str(path)!r}: {exc}") from None
        self.next = 0  # the chunk to write next
        self.waiting: dict[int, list[str]] = {}
        self.written = 0  # records written

    def add(self, result: ChunkResult) -> None:
        """Take a finished chunk's records; write every chunk that is now next in order."""
        self.waiting[result.index] = result.records or []
        result.records = None
        while self.next in self.waiting:
            for line in self.waiting.pop(self.next):
                if self.out is not None:
                    self.out.write(line + "\n")
                if self.folder is not None:
                    record = json.loads(line)
                    write_record(self.folder / record_file_name(record), record)
                self.written += 1
            self.next += 1

    def close(self) -> None:
        """Close the JSON Lines file (what was written stays, also after an interrupted run)."""
        if self.out is not None:
            self.out.close()


def _check_arguments(
    var: Variant,
    specs: list[Any],
    deals: object,
    seed: object,
    workers: object,
    chunk_deals: object,
    bootstrap: object,
    ray: str | None,
) -> int:
    """Refuse what ``run_tournament`` cannot play, naming it; returns the worker count to use."""
    p, k = var.players, len(specs)
    check_count("deals", deals)
    if not is_whole(seed) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    if not is_whole(bootstrap) or bootstrap < 0:
        raise ValueError(
            f"bootstrap must be a non-negative integer (resamples of the deals; 0: Hessian errors), got {bootstrap!r}"
        )
    if k < p:
        raise ValueError(
            f"{k} agent(s) for {p} seats: list at least {p} (repeat a name to fill the table, "
            f"e.g. heuristic,{','.join(['random'] * (p - 1))})"
        )
    count = default_workers() if workers is None else check_count("workers", workers)
    if chunk_deals is not None:
        check_count("chunk_deals", chunk_deals)
    has_objects = any(isinstance(s, Agent) for s in specs)
    if ray is not None:
        from bigtwo.arena.cluster import check_address, need_ray

        check_address(ray)
        need_ray()
        if has_objects:
            raise ValueError("Agent objects do not travel to Ray tasks: pass names or checkpoint paths, or no ray")
    if has_objects and count > 1:
        raise ValueError(
            "Agent objects do not travel to worker processes: pass names or checkpoint paths, or workers=1"
        )
    for s in specs:
        if not isinstance(s, (str, Agent)):
            raise ValueError(f"an agent must be a name, a checkpoint path or an Agent, got {s!r}")
    return count


def _play(
    chunks: list[Chunk],
    local_agents: list[Agent] | None,
    workers: int,
    ray: str | None,
    progress: bool,
    deals: int,
    writer: RecordWriter | None = None,
) -> dict[int, ChunkResult]:
    """Every chunk played, by chunk index: as Ray tasks, in this process, or by worker processes,
    with a progress bar on stderr, each chunk's records handed to ``writer`` as it finishes (Ray's
    at the end); SIGTERM and Ctrl-C end the run (and its workers)."""
    from tqdm import tqdm  # the text bar: tqdm.auto wants ipywidgets in notebooks

    bar = tqdm(total=deals, unit="deal", desc="tournament", file=sys.stderr, disable=not progress, leave=False)
    results: dict[int, ChunkResult] = {}
    try:
        with signals_end_the_run():
            if ray is not None:
                from bigtwo.arena.cluster import connect, play_chunks

                with connect(ray):
                    results = play_chunks(chunks, play_chunk, bar.update)
                if writer is not None:
                    for r in results.values():
                        writer.add(r)
            elif workers == 1 or len(chunks) == 1:
                for c in chunks:
                    results[c.index] = play_chunk(c, local_agents, report=bar.update)
                    if writer is not None:
                        writer.add(results[c.index])
            else:
                results = play_in_workers(chunks, workers, bar, None if writer is None else writer.add)
    finally:
        bar.close()
    return results


def _entry_stats(
    names: list[str],
    specs: list[Any],
    tables: np.ndarray,
    ordered: list[ChunkResult],
    payoff: np.ndarray,
    games: np.ndarray,
    ratings: Any,
) -> list[AgentStats]:
    """One ``AgentStats`` per entry from the per-deal, per-position arrays (module docstring)."""
    k = len(names)
    wins = np.concatenate([r.wins for r in ordered])
    act_seconds = np.sum([r.act_seconds for r in ordered], axis=0)
    moves = np.sum([r.moves for r in ordered], axis=0)
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
                spec=spec_name(specs[e]),
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
    return stats


__all__ = ["AgentStats", "RecordWriter", "TournamentResult", "entry_names", "mean_ci", "run_tournament"]
