"""Exact endgame solver: the rest of a game with every hand known, each seat playing its best.

Given positions held in an engine's rows (a determinized guess of the hidden hands is one, as the
lookahead deals them; the true deal is another), ``solve_rows`` searches every line of play to
the end of the game and returns the payoff each seat gets when **every seat picks, at its every
turn, the play that is best for itself** (max^n, the many-player minimax: each seat maximises
its own payoff, knowing every hand). Ties go to the play listed first (the engine's legal lists
are sorted), so the same position always gives the same answer and the same line.

It plays the engine's own kernels (``kernels.legal_range``, ``kernels.step_range``): every rule,
duty and score is the engine's, never a second implementation. The search runs depth-first on a
workspace of engine rows (row ``d`` holds the position ``d`` moves down the line searched); a
position met again by another order of moves is looked up, not searched again (a transposition
table keyed on what decides the rest of the game: the hands, the seat to act, the play on the
table and who made it, the passes since, the last-card breaches and the opening duty; the
observations' record of the game, which no rule reads, is left out).

It is exact, so it is exponential: ``max_nodes`` bounds the moves tried per position. A position
whose tree is larger is *not solved* (its flag is False) and the caller plays it some other way
(the lookahead keeps playing the network there). Few cards in all hands is where trees are small:
measured in docs/strong.md ("Endgame solver").

>>> import numpy as np
>>> from bigtwo.env.engine.engine import Engine
>>> eng = Engine("taiwan", num_matches=1, seed=0)
>>> c = lambda *cs: sum(1 << x for x in cs)
>>> hands = np.array([c(0, 4), c(51), c(1, 2), c(3)], dtype=np.uint64)  # seat 0 leads
>>> played = np.array([c(*range(5, 17)), c(*range(17, 29)), c(*range(29, 40)), c(*range(40, 51))], dtype=np.uint64)
>>> eng.set_position(0, hands=hands, played=played)
>>> value, solved = solve_rows(eng, np.array([0]), max_nodes=1000)
>>> bool(solved[0]), value[0].tolist()  # whatever seat 0 leads, seat 1's 2 beats it and goes out
(True, [-1.0, 0.0, -2.0, -1.0])
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from bigtwo.env.checks import check_count
from bigtwo.env.engine import kernels
from bigtwo.env.engine.jit import njit

if TYPE_CHECKING:
    from bigtwo.env.engine.engine import Engine
    from bigtwo.env.rules.variant import Variant

DEFAULT_MAX_NODES = 20_000  # moves tried per position before it is given up (not solved)
MAX_PLAYS = 500  # endgames(): a guard; every game ends long before


@njit
def copy_row(S, src, D, dst):
    """Row ``src`` of state ``S`` into row ``dst`` of state ``D`` (every field of ``kernels.State``:
    a test checks that none is left out)."""
    D.seeds[dst] = S.seeds[src]
    D.deal_count[dst] = S.deal_count[src]
    D.hands[dst] = S.hands[src]
    D.counts[dst] = S.counts[src]
    D.played[dst] = S.played[src]
    D.current[dst] = S.current[src]
    D.table_action[dst] = S.table_action[src]
    D.table_seat[dst] = S.table_seat[src]
    D.passes[dst] = S.passes[src]
    D.opening[dst] = S.opening[src]
    D.breach[dst] = S.breach[src]
    D.reverse[dst] = S.reverse[src]
    D.over[dst] = S.over[src]
    D.duty[dst] = S.duty[src]
    D.duty_card[dst] = S.duty_card[src]
    D.winner[dst] = S.winner[src]
    D.game_over[dst] = S.game_over[src]
    D.match_over[dst] = S.match_over[src]
    D.payoffs[dst] = S.payoffs[src]
    D.match_scores[dst] = S.match_scores[src]
    D.games_played[dst] = S.games_played[src]
    D.legal[dst] = S.legal[src]
    D.legal_n[dst] = S.legal_n[src]
    D.hist_action[dst] = S.hist_action[src]
    D.hist_seat[dst] = S.hist_seat[src]
    D.passed_on[dst] = S.passed_on[src]


@njit(inline="always")
def _mix(h, x):
    h = (h ^ x) * kernels.HASH_MULT
    return h ^ (h >> np.uint64(29))


@njit
def position_key(S, g):
    """A 64-bit key of what decides the rest of game ``g``'s play and payoffs (see the module docstring)."""
    h = np.uint64(0x243F6A8885A308D3)
    for p in range(S.hands.shape[1]):
        h = _mix(h, S.hands[g, p])
        h = _mix(h, np.uint64(S.breach[g, p]))
    h = _mix(h, np.uint64(S.current[g] + 1))
    h = _mix(h, np.uint64(S.table_action[g]))
    h = _mix(h, np.uint64(S.table_seat[g] + 1))
    h = _mix(h, np.uint64(S.passes[g]))
    h = _mix(h, np.uint64(S.opening[g] + 1))
    return h


@njit
def solve_one(R, S, g, W, max_nodes, memo_vals, out):
    """Solve game ``g`` of state ``S`` (not over) on the workspace ``W`` (rows: the deepest line + 2),
    with ``memo_vals`` (``max_nodes + 2`` rows, one per seat) for the values of positions solved;
    its payoffs per seat into ``out``. Returns the moves tried, or -1 when over ``max_nodes`` or
    deeper than the workspace (``out`` is then not written)."""
    players = S.hands.shape[1]
    depth_cap = W.hands.shape[0] - 1
    memo = dict()
    memo[np.uint64(0)] = 0  # typed from here (key 0 is never a position's: see position_key's start)
    best = np.empty((depth_cap + 1, players), dtype=np.float64)
    has = np.zeros(depth_cap + 1, dtype=np.bool_)
    nxt = np.zeros(depth_cap + 1, dtype=np.int64)
    keys = np.zeros(depth_cap + 1, dtype=np.uint64)
    act = np.empty(1, dtype=np.int64)
    child = np.empty(players, dtype=np.float64)
    copy_row(S, g, W, 0)
    keys[0] = position_key(W, 0)
    nxt[0] = 0
    has[0] = False
    d = 0
    nodes = 0
    stored = 1
    while True:
        if nxt[d] < W.legal_n[d]:
            a = W.legal[d, nxt[d]]
            nxt[d] += 1
            nodes += 1
            if nodes > max_nodes or d + 1 > depth_cap:
                return -1
            copy_row(W, d, W, d + 1)
            act[0] = a
            kernels.step_range(d + 1, d + 2, act, R, W, False)
            if W.over[d + 1]:
                for p in range(players):
                    child[p] = W.payoffs[d + 1, p]
            else:
                key = position_key(W, d + 1)
                if key in memo:
                    at = memo[key]
                    for p in range(players):
                        child[p] = memo_vals[at, p]
                else:
                    kernels.legal_range(d + 1, d + 2, R, W)
                    d += 1
                    keys[d] = key
                    nxt[d] = 0
                    has[d] = False
                    continue
        else:  # every play of row d tried: its value is best[d]
            memo[keys[d]] = stored
            for p in range(players):
                memo_vals[stored, p] = best[d, p]
                child[p] = best[d, p]
            stored += 1
            if d == 0:
                for p in range(players):
                    out[p] = best[0, p]
                return nodes
            d -= 1
        mover = W.current[d]
        if not has[d] or child[mover] > best[d, mover]:
            for p in range(players):
                best[d, p] = child[p]
            has[d] = True


@njit
def solve_many(rows, R, S, W, max_nodes, values, solved, tried):
    """``solve_one`` for each game of ``rows``: payoffs into ``values[i]``, ``solved[i]``, moves
    tried into ``tried[i]``."""
    memo_vals = np.empty((max_nodes + 2, S.hands.shape[1]), dtype=np.float64)
    for i in range(rows.shape[0]):
        n = solve_one(R, S, rows[i], W, max_nodes, memo_vals, values[i])
        solved[i] = n >= 0
        tried[i] = n if n >= 0 else max_nodes


def workspace_rows(cards: int, players: int) -> int:
    """Workspace rows for positions with ``cards`` in all hands: every play takes a card at least,
    with at most ``players - 1`` passes before the next, plus the root and one spare."""
    return cards * players + 2


class Solver:
    """``solve_rows`` with its workspace kept between calls, for positions of up to ``cards`` cards
    in all hands (a deeper line is not solved)."""

    def __init__(self, engine: Engine, cards: int, max_nodes: int = DEFAULT_MAX_NODES) -> None:
        from bigtwo.env.engine.engine import Engine

        if engine.variant.games != 1:
            raise ValueError("the endgame solver scores one game: give it an engine of a one-game variant")
        self.max_nodes = check_count("max_nodes", max_nodes, "moves tried per position")
        self.variant = engine.variant
        self.work = Engine(engine.variant, num_matches=workspace_rows(cards, engine.players), seed=0)
        self.rules = engine.rules

    def solve(self, engine: Engine, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For each of ``engine``'s ``rows`` (not over): the payoffs per seat ``(len(rows), P)``
        (0 where not solved), whether it was solved, and the moves tried. ``ValueError`` for an
        engine of other rules, a row out of range or a game already over."""
        if engine.variant != self.variant:
            raise ValueError("this solver was made for another variant's engine; make one per variant")
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        if rows.ndim != 1 or (rows.size and (rows.min() < 0 or rows.max() >= engine.num_matches)):
            raise ValueError(f"rows must be match indices 0..{engine.num_matches - 1}, got {rows!r}")
        if engine.over[rows].any():
            raise ValueError(f"match {int(rows[engine.over[rows]][0])} is over: there is nothing to solve")
        values = np.zeros((len(rows), engine.players))
        solved = np.zeros(len(rows), dtype=np.bool_)
        tried = np.zeros(len(rows), dtype=np.int64)
        if len(rows):
            solve_many(rows, self.rules, engine.state, self.work.state, self.max_nodes, values, solved, tried)
        return values, solved, tried


def endgames(variant: Variant, cards: int, matches: int, seed: int = 0) -> Engine:
    """``matches`` games of ``variant`` (one game each) played at random, a play four times in five
    where there is one, until all hands together hold ``cards`` or fewer: endgames to solve (tests,
    ``bigtwo bench --search``). Some games end before; they are over."""
    from bigtwo.env.engine.engine import Engine

    eng = Engine(variant.replace(games=1, target_score=0), num_matches=matches, seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(MAX_PLAYS):
        live = ~eng.over & (eng.state.counts.sum(axis=1) > cards)
        if not live.any():
            break
        ids, n = eng.legal_actions()
        pick = np.where(n > 1, rng.integers(1, np.maximum(n, 2)), 0)  # legal lists are sorted: a pass is 0
        pick = np.where(rng.random(len(n)) < 0.2, 0, pick)
        eng.step(np.where(live, ids[np.arange(len(n)), pick], -1))
    return eng


def solve_rows(engine: Engine, rows: np.ndarray, max_nodes: int = DEFAULT_MAX_NODES) -> tuple[np.ndarray, np.ndarray]:
    """Payoffs per seat ``(len(rows), P)`` of ``engine``'s ``rows`` (games not over, of a one-game
    variant) with every seat playing its best knowing every hand, and whether each was solved
    within ``max_nodes`` moves tried (0 payoffs where not)."""
    cards = int(engine.state.counts[np.asarray(rows)].sum(axis=1).max()) if len(rows) else 0
    values, solved, _ = Solver(engine, cards, max_nodes).solve(engine, rows)
    return values, solved
