"""Determinized lookahead on a learned policy and value: the search that plays with the network.

Per move (for a seat with more than one legal play, none of which ends the game at once):

1. **Candidates.** The network scores every legal play; its ``top_k`` best are the candidates
   (its prior), its best play the *favourite*.
2. **Determinization.** ``samples`` guesses of the hidden hands consistent with what the seat
   knows (``bigtwo.agents.determinize``: the cards it has not seen, dealt so each seat holds as
   many as it does; at random, or following a learned ``belief`` of who holds which card,
   ``bigtwo.train.belief``, which reads only the seat's observation), each loaded into an
   ``Engine`` with the game's recent moves, so that the network reads there what it would read at
   the real table.
3. **Lookahead.** In every (guess, candidate) copy the candidate is played, then **every seat
   plays the network** (its best-scored play) until the observer is to play again for the
   ``plies + 1``-th time, or the game ends. All copies of all positions asked in one ``act`` call
   step together, one network pass per step.
4. **Leaf.** A finished game counts its payoff for the observer; otherwise the network's value
   head reads the observer's observation at that point (its estimate of the game's payoff). With
   ``plies=-1`` every copy is played to the end instead (no value head; slow).
   With ``endgame=N``, a copy whose hands hold ``N`` cards or fewer in all is **solved exactly**
   instead (``bigtwo.agents.endgame``: every seat plays its best knowing the guess's hands), when
   its tree fits in ``endgame_nodes`` moves tried; otherwise it plays on (each copy is tried once,
   so a move costs at most its copies times ``endgame_nodes``). When the position searched itself
   is that small, every legal play is a candidate, not only the network's ``top_k``.
5. **Choice.** The favourite stands unless another candidate beats it on the same guesses by more
   than ``trust`` standard errors of the paired difference (then the best mean of those that do;
   ``trust=0``: the best mean wins).

With ``plies`` >= 0 the network must have a value head of the observation (``PolicyAgent.evaluate``
gives scores and values; a network trained with ``critic: global`` or by DMC has none and is
refused). Only the observation and the legal list are read: the hidden hands are sampled, never peeked. Same seed, same choices.

>>> from bigtwo.env.engine.engine import Engine
>>> from bigtwo.agents.pretrained import weights_path
>>> from bigtwo.train.policy_agent import load_policy_agent
>>> eng = Engine("taiwan", num_matches=2, seed=3)
>>> net = load_policy_agent(weights_path("taiwan"), "taiwan", device="cpu")
>>> agent = LookaheadAgent(eng.variant, net, seed=0, samples=4, plies=-1)
>>> ids, n = eng.legal_actions()
>>> [int(a) in ids[g, :n[g]].tolist() for g, a in enumerate(agent.act(eng.observe(), ids, n))]
[True, True]
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

import numpy as np

from bigtwo.agents.base import Agent
from bigtwo.agents.determinize import Seen, deal_hands, read_position
from bigtwo.agents.endgame import DEFAULT_MAX_NODES, Solver
from bigtwo.agents.search import _paired_z
from bigtwo.env.checks import check_count, is_finite_number, is_whole
from bigtwo.env.engine.engine import Engine
from bigtwo.env.rules.variant import Variant

# the defaults, measured (docs/strong.md, "Search that learns"): 16 guesses with trust 1 scored as well as
# 32 without it on hong-kong and better on taiwan, at half the time; 8 guesses lost to the network alone.
# strong on hong-kong deals 48 with its shipped file (bigtwo.agents.pretrained.SHIPPED_SAMPLES)
DEFAULT_SAMPLES = 16
DEFAULT_TOP_K = 4
DEFAULT_PLIES = -1  # play every copy out: the PPO value heads measured worse than the network alone at the leaves
DEFAULT_TRUST = 1.0
DEFAULT_ENDGAME = 0  # cards in all hands at which a copy is solved exactly; 0: never (docs/strong.md, "Endgame solver")
MAX_ENDGAME = 20  # beyond this, exact trees are far over any budget (measured: docs/strong.md)
MAX_STEPS = 400  # a guard: every game ends long before this
ROUND_ROWS = 64  # engines are kept in sizes of this times a power of two (spare rows sit out)


class Searched(NamedTuple):
    """One searched row of the last ``act``: its candidates (the favourite first), each one's mean
    value over the guesses (payoff units), the paired z of each against the favourite (0 for the
    favourite itself) and the index of the chosen one."""

    row: int
    candidates: np.ndarray
    means: np.ndarray
    z: np.ndarray
    chosen: int


@dataclass
class Copies:
    """The positions the search plays out, one row a (guess, candidate) copy, guess-major within a job
    (row ``s * C + c``): what ``Engine.set_position`` loads, the observer as seat 0 (``Seen``), and
    the candidate each copy plays first."""

    hands: np.ndarray  # (n, P) uint64: each seat's cards, the guess's for the hidden ones
    played: np.ndarray  # (n, P) uint64: each seat's cards played this game
    table_action: np.ndarray  # (n,) int64: the play to beat (0 when leading)
    table_seat: np.ndarray  # (n,) int64: who made it (-1 when leading)
    passes: np.ndarray  # (n,) int64: passes since it
    opening: np.ndarray  # (n,) int64: the card the next play must hold (-1: none)
    hist_action: np.ndarray  # (n, HISTORY) int64: the game's recent moves
    hist_seat: np.ndarray  # (n, HISTORY) int64: who made each
    passed_on: np.ndarray  # (n, P, SIZE_SLOTS) int64: the weakest table play each seat passed on, per size
    first: np.ndarray  # (n,) int64: the candidate the copy plays first

    @classmethod
    def of(cls, jobs: list[tuple[int, Seen, np.ndarray]], guesses: list[np.ndarray], players: int) -> Copies:
        """Every copy of ``jobs`` (row, what the seat knows, candidates), each job's ``guesses``
        ((samples, P) hands) played once with each of its candidates."""
        S = len(guesses[0])
        total = sum(S * len(c) for _, _, c in jobs)
        seen0 = jobs[0][1]
        copies = cls(
            hands=np.zeros((total, players), dtype=np.uint64),
            played=np.zeros((total, players), dtype=np.uint64),
            table_action=np.zeros(total, dtype=np.int64),
            table_seat=np.full(total, -1, dtype=np.int64),
            passes=np.zeros(total, dtype=np.int64),
            opening=np.full(total, -1, dtype=np.int64),
            hist_action=np.full((total, len(seen0.hist_action)), -1, dtype=np.int64),
            hist_seat=np.full((total, len(seen0.hist_action)), -1, dtype=np.int64),
            passed_on=np.zeros((total, *seen0.passed_on.shape), dtype=np.int64),
            first=np.zeros(total, dtype=np.int64),
        )
        at = 0
        for (_, seen, cands), hands in zip(jobs, guesses, strict=True):
            C = len(cands)
            block = slice(at, at + S * C)
            copies.hands[block] = np.repeat(hands, C, axis=0)  # guess-major: row = s * C + c
            copies.played[block] = seen.played
            copies.table_action[block], copies.table_seat[block] = seen.table, seen.table_seat
            copies.passes[block], copies.opening[block] = seen.passes, seen.opening
            copies.hist_action[block], copies.hist_seat[block] = seen.hist_action, seen.hist_seat
            copies.passed_on[block] = seen.passed_on
            copies.first[block] = np.tile(cands, S)
            at += S * C
        return copies

    def load(self, eng: Engine) -> None:
        """Load every copy into the first rows of ``eng`` (seat 0 to play; its other rows untouched)."""
        eng.set_position(
            slice(0, len(self.first)), self.hands, self.played, 0, self.table_action, self.table_seat,
            self.passes, self.opening, hist_action=self.hist_action, hist_seat=self.hist_seat,
            passed_on=self.passed_on,
        )  # fmt: skip


class Evaluator(Protocol):
    """A network that scores legal plays and values positions (``bigtwo.train.policy_agent.PolicyAgent``)."""

    def evaluate(
        self, obs: np.ndarray, legal_ids: np.ndarray, legal_counts: np.ndarray, values: bool = True
    ) -> tuple[np.ndarray, np.ndarray]:
        """(B, L) scores (-inf padding) and (B,) values in payoff units (NaN: no value head, or
        ``values=False``: the scores alone, which the search asks for)."""
        ...

    def values(self, obs: np.ndarray) -> np.ndarray:
        """(B,) values in payoff units."""
        ...


class Belief(Protocol):
    """Who holds the cards a seat has not seen (``bigtwo.train.belief.BeliefNet``)."""

    def holders(self, obs: np.ndarray) -> np.ndarray:
        """``(B, P-1, 52)``: per row, other seat and card, the probability that the seat holds it."""
        ...


class LookaheadAgent(Agent):
    """Determinized lookahead in which every seat plays the network ``policy`` (see the module docstring).

    ``samples``: guesses of the hidden hands per move; ``top_k``: the network's best plays
    searched; ``plies``: the observer's own later turns played inside the lookahead before the
    value head is read (0: read at its next turn; -1: no value head, play every copy out);
    ``trust``: standard errors by which a candidate must beat the network's best play to replace
    it (0: the best mean wins); ``threads``: the engine's threads stepping the copies (default
    one per core; the choices do not depend on it); ``belief``: deals the guesses following it
    (default: at random); ``endgame``: cards in all hands at or below which a copy is solved
    exactly (0: never), within ``endgame_nodes`` moves tried."""

    name = "lookahead"
    provenance: dict[str, Any] | None = None  # what made its network (set by the registry)

    def __init__(
        self,
        variant: Variant,
        policy: Evaluator,
        seed: int | None = None,
        samples: int = DEFAULT_SAMPLES,
        top_k: int = DEFAULT_TOP_K,
        plies: int = DEFAULT_PLIES,
        trust: float = DEFAULT_TRUST,
        threads: int | None = None,
        belief: Belief | None = None,
        endgame: int = DEFAULT_ENDGAME,
        endgame_nodes: int = DEFAULT_MAX_NODES,
    ) -> None:
        super().__init__(variant, seed)
        if belief is not None and not callable(getattr(belief, "holders", None)):
            raise ValueError(f"belief must have a holders() method (bigtwo.train.belief), got {belief!r}")
        self.belief = belief
        if not callable(getattr(policy, "evaluate", None)) or not callable(getattr(policy, "values", None)):
            raise ValueError(f"policy must have evaluate() and values() methods (a PolicyAgent), got {policy!r}")
        self.network = policy
        self.samples = check_count("samples", samples, "guesses of the hidden hands per move")
        self.top_k = check_count("top_k", top_k, "the network's best plays searched")
        if not is_whole(plies) or plies < -1:
            raise ValueError(f"plies must be an integer >= -1 (own later turns; -1: play to the end), got {plies!r}")
        self.plies = int(plies)
        if not (is_finite_number(trust) and trust >= 0):
            raise ValueError(
                f"trust must be a finite number >= 0 (standard errors; 0: the best mean wins), got {trust!r}"
            )
        self.trust = float(trust)
        self.threads = (
            None if threads is None else check_count("threads", threads, "engine threads; default one per core")
        )
        if not is_whole(endgame) or not 0 <= endgame <= MAX_ENDGAME:
            raise ValueError(
                f"endgame must be an integer 0..{MAX_ENDGAME} (cards in all hands solved exactly; 0: never), "
                f"got {endgame!r}"
            )
        self.endgame = int(endgame)
        self.endgame_nodes = check_count("endgame_nodes", endgame_nodes, "moves the endgame solver tries a copy")
        self.sim_variant = (
            variant if variant.games == 1 and variant.target_score == 0 else variant.replace(games=1, target_score=0)
        )
        self._engines: dict[int, Engine] = {}
        self._solver: Solver | None = None
        self.places = self.table.places()  # each play's strength as observations show it (the history's)
        self.stats = {"moves": 0, "searched": 0, "copies": 0, "seconds": 0.0, "solved": 0, "solver_nodes": 0}
        self.last_values: dict[int, float] = {}  # mean value of each candidate of the last searched row
        # every row the last ``act`` searched: what expert iteration learns from (bigtwo.train.expert)
        self.last_search: list[Searched] = []

    def _engine(self, rows: int) -> Engine:
        """An engine of at least ``rows`` games: ``ROUND_ROWS`` times a power of two, so few sizes are kept."""
        size = ROUND_ROWS * (1 << max(0, math.ceil(math.log2(-(-rows // ROUND_ROWS)))))
        if size not in self._engines:
            self._engines[size] = Engine(self.sim_variant, num_matches=size, seed=0, threads=self.threads)
        return self._engines[size]

    # ------------------------------------------------------------ acting

    def act(self, obs: np.ndarray, legal_ids: np.ndarray, legal_counts: np.ndarray) -> np.ndarray:
        start = time.perf_counter()
        ids = np.asarray(legal_ids).astype(np.int64)
        counts = np.asarray(legal_counts).astype(np.int64)
        out = np.where(counts > 0, ids[:, 0], -1).astype(np.int64)
        rows = np.flatnonzero(counts > 1)
        self.last_search = []
        if rows.size:
            scores, _ = self.network.evaluate(obs[rows], ids[rows], counts[rows], values=False)
            jobs: list[tuple[int, Seen, np.ndarray]] = []
            held = None if self.belief is None else self.belief.holders(obs[rows])
            beliefs: list[np.ndarray | None] = []
            for i, g in enumerate(rows):
                n = int(counts[g])
                order = np.argsort(-scores[i, :n], kind="stable")
                out[g] = ids[g, order[0]]
                seen = read_position(np.asarray(obs[g]), self.variant, self.table, self.places)
                plays = ids[g, :n]
                if (self.table.sizes[plays] >= seen.left[0]).any():  # a play that ends the game: take it
                    out[g] = plays[int(np.argmax(self.table.sizes[plays]))]
                    continue
                small = 0 < seen.left.sum() <= self.endgame  # the solver's: every play is worth a look
                cands = ids[g, order if small else order[: self.top_k]]
                if len(cands) > 1:
                    jobs.append((int(g), seen, cands))
                    beliefs.append(None if held is None else held[i])
            if jobs:
                self.last_search = self._search(jobs, beliefs)
                for found in self.last_search:
                    out[found.row] = found.candidates[found.chosen]
                self.stats["searched"] += len(jobs)
        self.stats["moves"] += len(counts)
        self.stats["seconds"] += time.perf_counter() - start
        return out

    def _search(self, jobs: list[tuple[int, Seen, np.ndarray]], beliefs: list[np.ndarray | None]) -> list[Searched]:
        """What the search found for each job (its row, candidates, means, z and the chosen one), all
        jobs' copies stepped together; each job's guesses dealt following its belief (``None``: at random)."""
        S = self.samples
        total = S * sum(len(c) for _, _, c in jobs)
        eng = self._engine(total)
        guesses = [deal_hands(self.rng, seen, S, holders) for (_, seen, _), holders in zip(jobs, beliefs, strict=True)]
        copies = Copies.of(jobs, guesses, self.variant.players)
        copies.load(eng)
        obs = eng.step_observe_rows(
            np.arange(total), copies.first
        )  # the engine's spare rows (an older search's) sit out
        values = self._play_out(eng, total, obs)
        self.stats["copies"] += total
        found = []
        at = 0
        for row, _, cands in jobs:
            C = len(cands)
            v = values[at : at + S * C].reshape(S, C)
            at += S * C
            means = v.mean(axis=0)
            d = v - v[:, :1]  # the favourite is candidate 0
            z = _paired_z(d.sum(axis=0), (d * d).sum(axis=0), float(S), float(S))
            beats = z > self.trust
            best = int(np.argmax(np.where(beats, means, -np.inf))) if beats.any() else 0
            self.last_values = {int(a): float(m) for a, m in zip(cands, means, strict=True)}
            found.append(Searched(row, cands, means, z, best))
        return found

    def _play_out(self, eng: Engine, total: int, obs: np.ndarray) -> np.ndarray:
        """Every seat plays the network in the first ``total`` copies until each copy's leaf (see the
        module docstring), from their observations ``obs``; the observer's value there, in payoff units.
        Only the copies still playing are stepped (``Engine.step_observe_rows``)."""
        rows = eng.num_matches
        live = np.zeros(rows, dtype=bool)
        live[:total] = True
        turns = np.full(rows, self.plies, dtype=np.int64)  # the observer's own turns still to play
        leaf = np.zeros(rows, dtype=bool)  # stopped at the observer's turn: the value head reads it
        solved = np.zeros(rows, dtype=bool)  # solved exactly (endgame): its value is in exact
        exact = np.zeros(rows)
        tried = np.zeros(rows, dtype=bool)  # the solver has had its one try at this copy
        for _ in range(MAX_STEPS):
            over = eng.over
            live &= ~over
            if self.endgame:
                self._solve(eng, live, solved, exact, tried)
            own = live & (eng.current == 0)
            if self.plies >= 0:
                stop = own & (turns == 0)
                leaf |= stop
                live &= ~stop
                turns[own & ~stop] -= 1
            if not live.any():
                break
            ids, n = eng.legal_actions()
            acts = np.full(rows, -1, dtype=np.int64)
            forced = live & (n == 1)
            acts[forced] = ids[forced, 0]
            ask = np.flatnonzero(live & (n > 1))
            if ask.size:
                scores, _ = self.network.evaluate(obs[ask], ids[ask], n[ask], values=False)
                acts[ask] = ids[ask, np.argmax(scores, axis=1)]
            moving = np.flatnonzero(acts >= 0)
            obs = eng.step_observe_rows(moving, acts[moving])
        values = np.zeros(rows)
        done = eng.over[:total]  # a solved copy left play before its end: never over
        values[:total][done] = eng.state.payoffs[:total, 0][done]
        values[:total][solved[:total]] = exact[:total][solved[:total]]
        at_leaf = np.flatnonzero(leaf[:total] & ~done)
        if at_leaf.size:
            obs = eng.observe(seats=np.zeros(rows, dtype=np.int64))
            v = self.network.values(obs[at_leaf])
            if np.isnan(v).any():
                raise ValueError(
                    "this network has no value head of the observation (trained with critic: global, or by DMC); "
                    "search it with plies=-1 (play every copy out) instead"
                )
            values[at_leaf] = v
        return values

    def _solve(self, eng: Engine, live: np.ndarray, solved: np.ndarray, exact: np.ndarray, tried: np.ndarray) -> None:
        """Solve exactly the ``live`` copies not ``tried`` yet whose hands hold ``endgame`` cards or
        fewer: each solved one leaves ``live``, its observer's payoff into ``exact``."""
        cards = eng.state.counts.sum(axis=1, dtype=np.int64)
        rows = np.flatnonzero(live & ~tried & (cards <= self.endgame))
        if not rows.size:
            return
        if self._solver is None:
            self._solver = Solver(eng, self.endgame, self.endgame_nodes)
        values, ok, nodes = self._solver.solve(eng, rows)
        tried[rows] = True
        done = rows[ok]
        exact[done] = values[ok, 0]
        solved[done] = True
        live[done] = False
        self.stats["solved"] += int(ok.sum())
        self.stats["solver_nodes"] += int(nodes.sum())
