"""The batched engine: N games (or matches) stepped at once, state held as NumPy arrays.

This is the one implementation of the rules; ``Game``, the PettingZoo and Gymnasium
environments and the vector environment all run on it.

Each game ``g`` has its own seed; its deals depend on that seed and on how many deals it has
had, never on the other games, so a batch of N with seeds ``s_0..s_{N-1}`` plays exactly like N
single games with those seeds. A game here is one *match* of ``variant.games`` games: when a
game ends its payoffs are reported, and the next game is dealt at once (its winner leads)
until the match is over.

>>> from bigtwo_env import load_variant
>>> eng = Engine(load_variant("taiwan"), num_games=2, seed=7)
>>> ids, n = eng.legal_actions()
>>> bool((n > 0).all())
True
>>> result = eng.step(ids[:, 0])  # the lowest legal play in each game
>>> eng.observe().shape
(2, 402)
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from math import comb

import numpy as np

from . import kernels as K
from .actions import ActionTable, action_table
from .cards import card_texts, cards_to_mask, parse_cards
from .observation import obs_size, observe_all
from .variant import Variant, load_variant

PARALLEL_FROM = 64  # batch size from which running slices of the batch in threads pays off
_THREADS = max(1, min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1))
_POOL: ThreadPoolExecutor | None = None


def _pool() -> ThreadPoolExecutor:
    global _POOL
    if _POOL is None:
        _POOL = ThreadPoolExecutor(_THREADS, thread_name_prefix="bigtwo-engine")
    return _POOL


def run_batched(
    kernel: Callable, state: K.State, before: tuple = (), after: tuple = (), rows: tuple = (), threads: int = 1
) -> None:
    """Run a batch kernel ``kernel(*rows, *before, state, *after)`` on ``threads`` slices of the
    batch at once (the kernels release the GIL). ``rows`` are per-game arrays sliced alongside."""
    n = state.seeds.shape[0]
    if threads <= 1 or n < PARALLEL_FROM:
        kernel(*rows, *before, state, *after)
        return
    bounds = np.linspace(0, n, threads + 1).astype(int)
    futures = [
        _pool().submit(kernel, *(r[lo:hi] for r in rows), *before, K.State(*(a[lo:hi] for a in state)), *after)
        for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)
    ]
    for f in futures:
        f.result()


@dataclass
class StepResult:
    """What one step reports, per game (arrays are views: copy what you keep)."""

    game_over: np.ndarray  # bool (N,): a game ended on this step
    match_over: np.ndarray  # bool (N,): a match ended on this step
    payoffs: np.ndarray  # float64 (N, P): payoffs of the game that ended, else 0
    winner: np.ndarray  # int8 (N,): winner of the game that ended (valid where game_over)


def make_rules(variant: Variant, table: ActionTable) -> K.Rules:
    """The kernels' view of a variant and its action table."""
    ip = np.zeros(K.IP_NUM, dtype=np.int64)
    ip[K.IP_PLAYERS] = variant.players
    ip[K.IP_CPP] = variant.cards_per_player
    ip[K.IP_OPENING] = variant.opening_card_id
    ip[K.IP_OPEN_EVERY] = int(variant.opening_every_game)
    ip[K.IP_PAIR_CHAIN] = int(variant.pair_chain)
    ip[K.IP_TWO_ENDS] = int(variant.two_ends_trick)
    ip[K.IP_LAST_CARD] = K.LAST_CARD_RULES.index(variant.last_card_rule)
    ip[K.IP_SCORING] = K.SCORINGS.index(variant.scoring)
    ip[K.IP_GAMES] = variant.games
    ip[K.IP_TWOS_MULT] = variant.penalty_multiplier_for_twos
    fp = np.zeros(K.FP_NUM, dtype=np.float64)
    fp[K.FP_UNIT] = variant.unit
    fp[K.FP_BUY_IN] = variant.buy_in
    fp[K.FP_RAKE] = variant.rake
    fp[K.FP_TARGET] = variant.target_score
    windows = np.array([w for w, _top in variant.straights], dtype=np.int64).reshape(-1, 5)
    return K.Rules(
        ip,
        fp,
        np.array(variant.suit_rank, dtype=np.int64),
        windows,
        table.sizes,
        table.kinds,
        table.masks,
        table.beat_start,
        table.group_end,
        table.hash_keys,
        table.hash_ids,
        table.hash_bits,
    )


def legal_capacity(variant: Variant, table: ActionTable) -> int:
    """Most legal actions one seat can have: the plays that fit in a hand, plus pass."""
    n = variant.cards_per_player
    bound = 1 + n + comb(n, 2) + comb(n, 3) + comb(n, 5) + (comb(n, 6) if variant.pair_chain else 0)
    return int(min(bound, table.size))


def _seed_array(seed: int | Sequence[int] | np.ndarray | None, n: int) -> np.ndarray:
    if seed is None:
        return np.random.SeedSequence().generate_state(n, dtype=np.uint64)
    if np.isscalar(seed):
        if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or int(seed) < 0:
            raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
        return (np.uint64(int(seed)) + np.arange(n, dtype=np.uint64)).astype(np.uint64)
    arr = np.asarray(seed)
    if arr.shape != (n,) or not np.issubdtype(arr.dtype, np.integer) or (arr < 0).any():
        raise ValueError(f"seed must be an int or {n} non-negative ints (one per game), got {seed!r}")
    return arr.astype(np.uint64)


class Engine:
    """N Big Two matches as arrays. See the module docstring.

    ``autoreset``: when a match ends, start the next one in the same step (for trainers).
    """

    def __init__(
        self,
        variant: Variant | str = "taiwan",
        num_games: int = 1,
        seed: int | Sequence[int] | None = None,
        autoreset: bool = False,
    ) -> None:
        if not isinstance(num_games, (int, np.integer)) or num_games < 1:
            raise ValueError(f"num_games must be a positive integer, got {num_games!r}")
        self.variant = variant if isinstance(variant, Variant) else load_variant(variant)
        self.table = action_table(self.variant)
        self.rules = make_rules(self.variant, self.table)
        self.num_games = int(num_games)
        self.players = self.variant.players
        self.autoreset = bool(autoreset)
        self.obs_size = obs_size(self.players)
        self._threads = _THREADS if self.num_games >= PARALLEL_FROM else 1
        n, p = self.num_games, self.players
        cap = legal_capacity(self.variant, self.table)
        self.state = K.State(
            seeds=np.zeros(n, np.uint64),
            deal_count=np.zeros(n, np.int64),
            hands=np.zeros((n, p), np.uint64),
            counts=np.zeros((n, p), np.int8),
            played=np.zeros((n, p), np.uint64),
            current=np.zeros(n, np.int8),
            table_action=np.zeros(n, np.int32),
            table_seat=np.full(n, -1, np.int8),
            passes=np.zeros(n, np.int8),
            opening=np.full(n, -1, np.int8),
            breach=np.zeros((n, p), np.bool_),
            over=np.zeros(n, np.bool_),
            duty=np.zeros(n, np.int8),
            duty_card=np.full(n, -1, np.int8),
            winner=np.full(n, -1, np.int8),
            game_over=np.zeros(n, np.bool_),
            match_over=np.zeros(n, np.bool_),
            payoffs=np.zeros((n, p), np.float64),
            match_scores=np.zeros((n, p), np.float64),
            games_played=np.zeros(n, np.int32),
            legal=np.zeros((n, cap), np.int32),
            legal_n=np.zeros(n, np.int32),
        )
        self._obs = np.zeros((n, self.obs_size), np.float32)
        self.reset(seed)

    # ------------------------------------------------------------ life cycle

    def reset(self, seed: int | Sequence[int] | None = None, hands: Sequence | np.ndarray | None = None) -> None:
        """Start new matches. ``seed``: an int (game ``g`` gets ``seed + g``), one per game, or
        ``None`` for fresh entropy. ``hands``: per game, per seat, the cards dealt (text, ids or
        a uint64 mask array of shape (N, P)); later games of a match are dealt from the seed."""
        S = self.state
        S.seeds[:] = _seed_array(seed, self.num_games)
        S.deal_count[:] = 0
        if hands is None:
            K.reset_all(self.rules, S, True)
        else:
            S.hands[:] = self._parse_hands(hands)
            K.reset_all(self.rules, S, False)
        self._refresh()

    def _parse_hands(self, hands: Sequence | np.ndarray) -> np.ndarray:
        n, p, cpp = self.num_games, self.players, self.variant.cards_per_player
        arr = np.asarray(hands) if isinstance(hands, np.ndarray) else None
        if arr is not None and arr.dtype == np.uint64:
            if arr.shape != (n, p):
                raise ValueError(f"hands as masks must have shape ({n}, {p}), got {arr.shape}")
            rows = [[[c for c in range(52) if int(m) >> c & 1] for m in row] for row in arr]
        else:
            rows = list(hands)  # type: ignore[arg-type]
            if (
                n == 1
                and len(rows) == p
                and not (
                    len(rows[0]) == p
                    and not isinstance(rows[0], str)
                    and all(isinstance(h, (list, tuple, str)) for h in rows[0])
                )
            ):
                rows = [rows]
        if len(rows) != n:
            raise ValueError(f"hands must give {n} game(s), got {len(rows)}")
        out = np.zeros((n, p), np.uint64)
        for g, row in enumerate(rows):
            if len(row) != p:
                raise ValueError(f"game {g}: hands must give {p} seats, got {len(row)}")
            seen: set[int] = set()
            for s, h in enumerate(row):
                cards = parse_cards(h)
                if len(cards) != cpp:
                    raise ValueError(f"game {g}: seat {s} has {len(cards)} cards, the variant deals {cpp}")
                dup = seen.intersection(cards)
                if dup:
                    raise ValueError(f"game {g}: card(s) {card_texts(sorted(dup))} dealt to more than one seat")
                seen.update(cards)
                out[g, s] = np.uint64(cards_to_mask(cards))
        return out

    def _refresh(self) -> None:
        run_batched(K.legal_all, self.state, before=(self.rules,), threads=self._threads)

    def step(self, actions: Sequence[int] | np.ndarray) -> StepResult:
        """Play one action per game for its seat to act (-1: that game sits this step out).

        An illegal action raises ``ValueError`` naming the game, the seat and the play, and
        changes nothing in any game."""
        acts = np.asarray(actions)
        if acts.shape != (self.num_games,) or not np.issubdtype(acts.dtype, np.integer):
            raise ValueError(f"actions must be {self.num_games} integer ids, got {actions!r}")
        acts = acts.astype(np.int64, copy=False)
        bad = K.check_actions(acts, self.state)
        if bad >= 0:
            raise ValueError(self._illegal_message(bad, int(acts[bad])))
        run_batched(
            K.step_all, self.state, before=(self.rules,), after=(self.autoreset,), rows=(acts,), threads=self._threads
        )
        self._refresh()
        S = self.state
        return StepResult(S.game_over, S.match_over, S.payoffs, S.winner)

    def _illegal_message(self, g: int, action: int) -> str:
        S = self.state
        if S.over[g]:
            return f"game {g} is over; call reset() to start a new match"
        seat = int(S.current[g])
        if not 0 <= action < self.table.size:
            return f"game {g}: action id {action} is out of range 0..{self.table.size - 1}"
        cards = card_texts(self.table.decode(action)) or "pass"
        why = self.explain_illegal(g, action)
        return f"game {g}: seat {seat} cannot play {cards}: {why}"

    def explain_illegal(self, g: int, action: int) -> str:
        """Why ``action`` is not legal in game ``g`` (assumes it is not)."""
        S, T = self.state, self.table
        seat = int(S.current[g])
        t = int(S.table_action[g])
        if action == 0:
            return "the leader cannot pass" if t == 0 else "pass is not allowed here"
        mask = int(T.masks[action])
        hand = int(S.hands[g, seat])
        if mask & ~hand:
            missing = [c for c in range(52) if mask >> c & 1 and not hand >> c & 1]
            return f"not in hand: {' '.join(card_texts(missing))}"
        if S.opening[g] >= 0 and not mask >> int(S.opening[g]) & 1:
            return f"the first play of the game must contain {card_texts([int(S.opening[g])])[0]}"
        if t != 0:
            table_cards = " ".join(card_texts(T.decode(t)))
            if T.sizes[action] != T.sizes[t]:
                return f"the table holds {T.sizes[t]} card(s) ({table_cards}); answer with {T.sizes[t]} card(s)"
            if not T.beat_start[t] <= action < T.group_end[t]:
                return f"it does not beat {T.kind(t)} {table_cards}"
        if self.variant.last_card_rule == "enforce" and int(S.duty[g]) != K.DUTY_NONE:
            return {
                K.DUTY_LEAD_MULTI: "last-card rule: the next player holds one card, lead two or more cards",
                K.DUTY_LEAD_HIGHEST: "last-card rule: the next player holds one card, lead your highest card",
                K.DUTY_ANSWER_HIGHEST: "last-card rule: the next player holds one card, a single must be your highest",
            }[int(S.duty[g])]
        return "not a legal play here"

    # ------------------------------------------------------------ what agents read

    def legal_actions(self) -> tuple[np.ndarray, np.ndarray]:
        """Legal ids of each game's seat to act, sorted: ``(ids (N, L) int32, counts (N,))``.
        Row ``g`` is valid up to ``counts[g]``; ``L`` is the batch's largest count."""
        S = self.state
        width = max(int(S.legal_n.max()), 1)
        return S.legal[:, :width], S.legal_n

    def legal_mask(self, out: np.ndarray | None = None) -> np.ndarray:
        """Dense legal-action mask, int8 ``(N, A)``."""
        S = self.state
        if out is None:
            out = np.zeros((self.num_games, self.table.size), np.int8)
        else:
            out[:] = 0
        ids, n = self.legal_actions()
        rows = np.repeat(np.arange(self.num_games), n)
        cols = ids[np.arange(ids.shape[1])[None, :] < n[:, None]]
        out[rows, cols] = 1
        del S
        return out

    def observe(self, seats: np.ndarray | None = None, out: np.ndarray | None = None) -> np.ndarray:
        """Observations ``(N, obs_size)`` float32 of ``seats`` (default: each game's seat to act)."""
        S = self.state
        seats_arr = S.current.astype(np.int64) if seats is None else np.asarray(seats, dtype=np.int64)
        if out is None:
            out = self._obs
        run_batched(observe_all, S, before=(self.rules,), rows=(seats_arr, out), threads=self._threads)
        return out

    # ------------------------------------------------------------ convenience

    @property
    def current(self) -> np.ndarray:
        """Seat to act in each game (-1 once its match is over)."""
        return self.state.current

    @property
    def over(self) -> np.ndarray:
        """Whether each game's match is over (and not yet reset)."""
        return self.state.over

    def nbytes(self) -> int:
        """Memory held by the state, the observation buffer and the action table."""
        return sum(a.nbytes for a in self.state) + self._obs.nbytes + self.table.nbytes()
