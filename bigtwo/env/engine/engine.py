"""The batched engine: N matches stepped at once, state held as NumPy arrays.

This is the one implementation of the rules; ``Game``, the PettingZoo and Gymnasium
environments and the vector environment all run on it.

Words as RULES.md ("Words") uses them: a *game* is one deal played out, a *match* is the
variant's ``games`` games in a row. The engine holds ``num_matches`` matches, one per row of its
arrays (``g`` below): when a game ends its payoffs are reported, and the match's next game is
dealt at once (its winner leads) until the match is over. Each match ``g`` has its own seed; its
deals depend on that seed and on how many deals it has had, never on the other matches, so a
batch of N with seeds ``s_0..s_{N-1}`` plays exactly like N single matches with those seeds.

Play order: a game plays seat + 1 next, or seat - 1 when it is reversed (``Engine.reverse``, one
flag per match, set as each game starts by ``turn_order``: ``fixed`` never, ``alternate``
the match's 2nd, 4th, ... game, ``random`` drawn from the game's seed and deal number). A reversed
game moves everything that follows the order: the turn, the last-card duty (the seat before the
one-card holder), liability, the settlement order under ``buy_in`` and the observations' relative
seats.

What agents read: ``legal_actions``/``legal_mask`` and ``observe(seats)`` (what a seat may know,
``bigtwo.env.engine.observation``). ``global_state(seats)`` is the privileged state, every hand and the
game so far (``bigtwo.env.engine.state``), for centralised critics only; it is computed only when asked.

>>> from bigtwo.env import load_variant
>>> eng = Engine(load_variant("taiwan"), num_matches=2, seed=7)
>>> ids, n = eng.legal_actions()
>>> bool((n > 0).all())
True
>>> result = eng.step(ids[:, 0])  # the lowest legal play in each match
>>> eng.observe().shape, eng.obs_version
((2, 623), 1)
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from math import comb
from typing import Any

import numba
import numpy as np

from bigtwo.env.checks import check_count, usable_cores
from bigtwo.env.engine import kernels
from bigtwo.env.engine.observation import OBS_VERSION, obs_size, observe_all, step_observe_all, step_observe_rows
from bigtwo.env.engine.seeds import seed_array
from bigtwo.env.engine.state import STATE_VERSION, state_all, state_size
from bigtwo.env.rules.actions import ActionTable, action_table
from bigtwo.env.rules.cards import NUM_CARDS, card_texts, cards_to_mask, mask_to_cards, parse_cards
from bigtwo.env.rules.combos import PLAY_SIZES
from bigtwo.env.rules.declaration import FP, IP, RULES_ARRAYS
from bigtwo.env.rules.variant import DEFAULT_VARIANT, FP_SLOTS, IP_SLOTS, SETTINGS, Variant, load_variant

PARALLEL_FROM = 1024  # batch size from which running slices of the batch in threads pays off (measured)
THREADS = max(1, min(4, usable_cores()))
_POOL: ThreadPoolExecutor | None = None


def thread_pool() -> ThreadPoolExecutor:
    """The threads that run slices of a batch (``THREADS`` of them, made on first use)."""
    global _POOL
    if _POOL is None:
        _POOL = ThreadPoolExecutor(THREADS, thread_name_prefix="bigtwo-engine")
    return _POOL


def compiled(kernel: Any, *args: object) -> Callable:
    """The compiled entry point of a Numba kernel for these argument types (compiling or loading
    it from cache now). Calling it skips Numba's per-call type dispatch, which costs more than
    the work for one game when the state is a tuple of many arrays."""
    sig = tuple(numba.typeof(a) for a in args)
    if sig not in kernel.overloads:
        kernel.compile(sig)
    return kernel.overloads[sig].entry_point


def run_batched(
    kernel: Callable,
    state: kernels.State,
    before: tuple = (),
    after: tuple = (),
    rows: tuple = (),
    threads: int = 1,
    min_rows: int = PARALLEL_FROM,
    slices: list[tuple[int, int, kernels.State]] | None = None,
) -> None:
    """Run a batch kernel ``kernel(*rows, *before, state, *after)`` on ``threads`` slices of the
    batch at once (the kernels release the GIL). ``rows`` are per-game arrays sliced alongside.
    Batches under ``min_rows`` games run in the calling thread. ``slices``: ``batch_slices(state,
    threads)`` made once by the caller (slicing every array of the state each call costs time)."""
    n = state.seeds.shape[0]
    threads = min(threads, n)
    if threads <= 1 or n < min_rows:
        kernel(*rows, *before, state, *after)
        return
    if slices is None:
        slices = batch_slices(state, threads)
    futures = [
        thread_pool().submit(kernel, *(r[lo:hi] for r in rows), *before, part, *after) for lo, hi, part in slices
    ]
    for f in futures:
        f.result()


def batch_slices(state: kernels.State, threads: int) -> list[tuple[int, int, kernels.State]]:
    """``threads`` even slices of the batch: ``(lo, hi, state of games lo..hi-1)`` (views)."""
    n = state.seeds.shape[0]
    bounds = np.linspace(0, n, min(threads, n) + 1).astype(int)
    return [
        (int(lo), int(hi), kernels.State(*(a[lo:hi] for a in state)))
        for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)
    ]


@dataclass
class StepResult:
    """What one step reports, per match (arrays are views: copy what you keep)."""

    game_over: np.ndarray  # bool (N,): a game ended on this step
    match_over: np.ndarray  # bool (N,): a match ended on this step
    payoffs: np.ndarray  # float64 (N, P): payoffs of the game that ended, else 0
    winner: np.ndarray  # int8 (N,): winner of the game that ended (valid where game_over)


def make_rules(variant: Variant, table: ActionTable) -> kernels.Rules:
    """The kernels' view of a variant and its action table: every setting sent where its
    declaration routes it (``bigtwo.env.rules.declaration``): its ``ip`` or ``fp`` slot, or the
    ``Rules`` array it is made into (the action-table settings arrive through ``table``)."""
    ip = np.zeros(kernels.IP_NUM, dtype=np.int64)
    fp = np.zeros(kernels.FP_NUM, dtype=np.float64)
    arrays: dict[str, np.ndarray] = {}
    for name, setting in SETTINGS.items():
        value = getattr(variant, name)
        for route in setting.kernels:
            if route.target == IP:
                ip[IP_SLOTS[name]] = setting.encode(route, value)
            elif route.target == FP:
                fp[FP_SLOTS[name]] = setting.encode(route, value)
            elif route.target in RULES_ARRAYS:
                arrays[route.target] = setting.encode(route, value)
    fp[kernels.FP_SCORE_SCALE] = 1.0 / abs(variant.worst_payoff)  # observed match scores: per worst game
    return kernels.Rules(
        ip=ip,
        fp=fp,
        **{name: arrays[name] for name in RULES_ARRAYS},  # every array a declaration routes to
        sizes=table.sizes,
        kinds=table.kinds,
        places=table.places(),
        masks=table.masks,
        beat_start=table.beat_start,
        group_end=table.group_end,
        hash_keys=table.hash_keys,
        hash_ids=table.hash_ids,
        bits=table.hash_bits,
        rank_ids=rank_ids(table),
    )


def rank_ids(table: ActionTable) -> np.ndarray:
    """``Rules.rank_ids``: the id of each play made of one rank's cards (single, pair, triple) at
    ``16 * rank + suits`` (suits: a 4-bit set), -1 where no play is."""
    out = np.full(13 * 16, -1, dtype=np.int32)
    for a in np.flatnonzero((table.sizes >= 1) & (table.sizes <= 3)):
        mask = int(table.masks[a])
        r = (mask & -mask).bit_length() - 1 >> 2
        if mask == (mask >> 4 * r & 15) << 4 * r:
            out[16 * r + (mask >> 4 * r & 15)] = a
    return out


def legal_capacity(variant: Variant, table: ActionTable) -> int:
    """Most legal actions one seat can have: the plays that fit in a hand, plus pass."""
    n = variant.cards_per_player
    bound = 1 + n + comb(n, 2) + comb(n, 3) + comb(n, 5) + (comb(n, 6) if variant.pair_chain else 0)
    return int(min(bound, table.size))


def check_deal(masks: np.ndarray, variant: Variant) -> np.ndarray:
    """``masks`` ((N, P) uint64, a batch's first deals) if each match deals each seat the variant's
    number of cards, no card twice and no bit past 51; ``ValueError`` naming the match, the seat
    and the cards otherwise. The one check of a given deal (``Engine.reset``, ``Game.check_hands``)."""
    if (masks >> np.uint64(NUM_CARDS)).any():
        raise ValueError("hands as masks may only use bits 0..51 (one per card)")
    cpp, values = variant.cards_per_player, variant.card_values()
    for g, row in enumerate(masks):
        seen = 0
        for s, mask in enumerate(int(m) for m in row):
            if mask.bit_count() != cpp:
                raise ValueError(f"match {g}: seat {s} has {mask.bit_count()} cards, the variant deals {cpp}")
            if seen & mask:
                dup = sorted(mask_to_cards(seen & mask), key=values.__getitem__)
                raise ValueError(f"match {g}: {' '.join(card_texts(dup))} dealt to more than one seat")
            seen |= mask
    return masks


def _nesting(x: object) -> int:
    """How deeply card lists nest: a card is 0, a hand 1, a game's hands 2, a batch 3. Text with
    several cards counts as a hand."""
    if isinstance(x, str):
        return 1 if len(x.replace(",", " ").split()) > 1 else 0
    if isinstance(x, (list, tuple, np.ndarray)):
        return 1 + (_nesting(x[0]) if len(x) else 0)
    return 0


class Engine:
    """N Big Two matches as arrays. See the module docstring.

    ``num_matches``: the matches held, one per row (``num_games``, its name up to 0.2, is read
    with a ``DeprecationWarning`` until 0.3). ``autoreset``: when a match ends, start the next one
    in the same step (for trainers). ``threads``: threads running slices of the batch (default:
    one per core, up to 4); batches under 1,024 matches run in the calling thread (measured:
    threads cost more than they save below).
    ``changes`` counts the calls that changed the state (``step``, ``step_observe``, ``reset``,
    ``set_position``, ``load_state``): ``Game`` serves the observation it kept from a play only
    while this count is unchanged. Change the state through these methods, not by writing its arrays.
    """

    def __init__(
        self,
        variant: Variant | str = DEFAULT_VARIANT,
        num_matches: int | None = None,
        seed: int | Sequence[int] | np.ndarray | None = None,
        autoreset: bool = False,
        threads: int | None = None,
        *,
        num_games: int | None = None,
    ) -> None:
        if num_games is not None:
            if num_matches is not None:
                raise ValueError("num_games is the old name of num_matches; give num_matches only")
            warnings.warn(
                "Engine(num_games=...) is now Engine(num_matches=...); the old name is read until 0.3",
                DeprecationWarning,
                stacklevel=2,
            )
            num_matches = num_games
        num_matches = 1 if num_matches is None else num_matches
        check_count("num_matches", num_matches)
        if threads is not None:
            check_count("threads", threads, "or None: one per core")
        self.variant = variant if isinstance(variant, Variant) else load_variant(variant)
        self.table = action_table(self.variant)
        self.rules = make_rules(self.variant, self.table)
        self.num_matches = int(num_matches)
        self.players = self.variant.players
        self.autoreset = bool(autoreset)
        self.obs_size = obs_size(self.players)
        self.state_size = state_size(self.players)  # privileged global state (global_state)
        self.threads = int(threads) if threads is not None else THREADS
        self._threads = self.threads if self.num_matches >= PARALLEL_FROM else 1
        n, p = self.num_matches, self.players
        cap = legal_capacity(self.variant, self.table)
        self.state = kernels.State(
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
            reverse=np.zeros(n, np.bool_),
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
            hist_action=np.full((n, kernels.HISTORY), -1, np.int32),
            hist_seat=np.full((n, kernels.HISTORY), -1, np.int8),
            passed_on=np.zeros((n, p, kernels.SIZE_SLOTS), np.int32),
        )
        self._obs = np.zeros((n, self.obs_size), np.float32)
        self._global: np.ndarray | None = None  # global_state's buffer and kernel, made on first use
        self._global_kernel: Callable | None = None
        # calls that changed the state (step, step_observe, reset, set_position, load_state): whoever
        # keeps something computed from the state (Game's observation after a play) knows it is current
        self.changes = 0
        self._link()
        self.reset(seed)

    def _link(self) -> None:
        """The compiled entry points for this engine's arrays, and the per-thread slices of its state
        (views: the state's arrays are never replaced, only written)."""
        n = self.num_matches
        R, S, acts, seats = self.rules, self.state, np.zeros(n, np.int64), np.zeros(n, np.int64)
        self._check = compiled(kernels.check_actions, acts, S.over, S.legal, S.legal_n)
        self._legal = compiled(kernels.legal_all, R, S)
        self._step = compiled(kernels.step_legal_all, acts, R, S, self.autoreset)
        self._observe = compiled(observe_all, seats, self._obs, R, S)
        self._step_observe: Callable | None = None  # step_observe's kernel, made on first use
        self._global_kernel = None
        self._slices = batch_slices(S, self._threads)
        self._reset = compiled(kernels.reset_all, R, S, True)

    # The compiled entry points and the state's slices cannot be pickled (nor should they be: they
    # belong to this process); a pickle holds the variant and the arrays, and loading it links again.
    _LINKED = ("_check", "_legal", "_step", "_observe", "_step_observe", "_global_kernel", "_slices", "_reset")

    def __getstate__(self) -> dict[str, Any]:
        """What a pickle keeps: everything but the compiled entry points, the state's slices and the
        tables rebuilt from the variant (``table``, ``rules``)."""
        return {k: v for k, v in self.__dict__.items() if k not in (*self._LINKED, "table", "rules")}

    def __setstate__(self, saved: dict[str, Any]) -> None:
        """An engine in the pickled position, linked to this process's kernels: it plays on as the
        pickled one would."""
        self.__dict__.update(saved)
        self.table = action_table(self.variant)
        self.rules = make_rules(self.variant, self.table)
        self._link()

    # ------------------------------------------------------------ life cycle

    def reset(
        self, seed: int | Sequence[int] | np.ndarray | None = None, hands: Sequence | np.ndarray | None = None
    ) -> None:
        """Start new matches. ``seed``: an int (match ``g`` gets ``seed + g``), one per match, or
        ``None`` for fresh entropy (checked by ``bigtwo.env.engine.seeds.seed_array``: ints
        0..2**64-1). ``hands``: per match, per seat, the cards dealt for its first game (text, ids
        or a uint64 mask array of shape (N, P)); later games of a match are dealt from the seed."""
        S = self.state
        seeds = seed_array(seed, self.num_matches)
        dealt = None if hands is None else self._parse_hands(hands)  # check everything before changing state
        S.seeds[:] = seeds
        S.deal_count[:] = 0
        if dealt is None:
            self._reset(self.rules, S, True)
        else:
            S.hands[:] = dealt
            self._reset(self.rules, S, False)
        self._refresh()

    def _parse_hands(self, hands: Sequence | np.ndarray) -> np.ndarray:
        """``hands`` (see ``reset``) as (N, P) uint64 masks, checked by ``check_deal``."""
        n, p = self.num_matches, self.players
        if isinstance(hands, np.ndarray) and hands.dtype == np.uint64:
            if hands.shape != (n, p):
                raise ValueError(f"hands as masks must have shape ({n}, {p}), got {hands.shape}")
            return check_deal(hands, self.variant)
        rows = list(hands)
        if n == 1 and _nesting(rows) <= 2:  # one match's hands, not a batch of one
            rows = [rows]
        if len(rows) != n:
            raise ValueError(f"hands must give {n} match(es), got {len(rows)}")
        out = np.zeros((n, p), np.uint64)
        for g, row in enumerate(rows):
            if len(row) != p:
                raise ValueError(f"match {g}: hands must give {p} seats, got {len(row)}")
            for s, h in enumerate(row):
                out[g, s] = np.uint64(cards_to_mask(parse_cards(h)))
        return check_deal(out, self.variant)

    def _refresh(self) -> None:
        self.changes += 1
        run_batched(self._legal, self.state, before=(self.rules,), threads=self._threads, slices=self._slices)

    def set_position(
        self,
        matches: int | slice | Sequence[int] | np.ndarray | None = None,
        hands: np.ndarray | None = None,
        played: np.ndarray | None = None,
        current: int | np.ndarray = 0,
        table_action: int | np.ndarray = 0,
        table_seat: int | np.ndarray = -1,
        passes: int | np.ndarray = 0,
        opening: int | np.ndarray = -1,
        match_scores: np.ndarray | None = None,
        games_played: int | np.ndarray = 0,
        breach: np.ndarray | None = None,
        reverse: bool | np.ndarray = False,
        hist_action: np.ndarray | Sequence[int] | None = None,
        hist_seat: np.ndarray | Sequence[int] | None = None,
        passed_on: np.ndarray | None = None,
        *,
        games: int | slice | Sequence[int] | np.ndarray | None = None,
    ) -> None:
        """Load a mid-game position into ``matches`` (an index, a slice or an index array; the
        other matches are untouched), then recompute the legal lists (search continues from it).
        ``games``, its name up to 0.2, is read with a ``DeprecationWarning`` until 0.3.

        Per loaded match, broadcast over them: ``hands`` and ``played`` (P,) uint64 card masks per
        seat (cards held, cards played this game); ``current`` the seat to act; ``table_action``
        the play to beat (0 when leading) made by ``table_seat`` (-1 when leading), followed by
        ``passes`` passes; ``opening`` the card the next play must hold (-1 none, only before the
        game's first play); match info: ``match_scores`` (P,), ``games_played``; ``breach`` (P,)
        last-card flags (liability); ``reverse`` the game's direction (True: seat - 1 plays next);
        this game's moves so far: ``hist_action`` and ``hist_seat`` (up to ``HISTORY`` = 8 action
        ids, 0 a pass, and the seats that made them, most recent first, -1 padded; default none),
        ``passed_on`` (P, 5) the weakest table play each seat passed on per size 1, 2, 3, 5, 6
        (0 none, the default). Cards left are counted from ``hands``. Raises
        ``ValueError`` naming the first inconsistency (a card held twice, an empty hand, ...)."""
        S, n, p = self.state, self.num_matches, self.players
        if games is not None:
            if matches is not None:
                raise ValueError("set_position: games is the old name of matches; give matches only")
            warnings.warn(
                "Engine.set_position(games=...) is now set_position(matches=...); the old name is read until 0.3",
                DeprecationWarning,
                stacklevel=2,
            )
            matches = games
        if matches is None or hands is None:
            raise TypeError("set_position needs matches (the rows to load) and hands")
        rows = np.arange(n)[matches]
        rows = np.atleast_1d(rows).astype(np.int64)
        k = len(rows)
        if k == 0:
            return
        if len(np.unique(rows)) != k:
            raise ValueError("set_position: a match is listed twice")

        def per_game(value: object, dtype: np.typing.DTypeLike, shape: tuple[int, ...] = ()) -> np.ndarray:
            arr = np.asarray(value)
            try:
                return np.array(np.broadcast_to(arr, (k, *shape)), dtype=dtype, order="C")
            except ValueError:
                raise ValueError(
                    f"set_position: expected shape {(k, *shape)} or broadcastable, got {arr.shape}"
                ) from None

        h = per_game(hands, np.uint64, (p,))
        pl = per_game(0 if played is None else played, np.uint64, (p,))
        cur = per_game(current, np.int64)
        ta = per_game(table_action, np.int64)
        ts = per_game(table_seat, np.int64)
        ps = per_game(passes, np.int64)
        op = per_game(opening, np.int64)
        ms = per_game(0.0 if match_scores is None else match_scores, np.float64, (p,))
        gp = per_game(games_played, np.int64)
        br = per_game(False if breach is None else breach, np.bool_, (p,))
        rv = np.asarray(reverse)
        if rv.dtype != np.bool_:
            raise ValueError(
                f"set_position: reverse must be True/False (one per match or one for all), got {reverse!r}"
            )
        rv = per_game(rv, np.bool_)

        def moves(value: object, what: str) -> np.ndarray:
            arr = np.asarray(-1 if value is None else value, dtype=np.int64)
            if arr.ndim and arr.shape[-1] < kernels.HISTORY:  # pad the older moves with "none"
                pad = np.full((*arr.shape[:-1], kernels.HISTORY - arr.shape[-1]), -1, np.int64)
                arr = np.concatenate([arr, pad], axis=-1)
            if arr.ndim and arr.shape[-1] > kernels.HISTORY:
                raise ValueError(f"set_position: {what} holds at most {kernels.HISTORY} moves, got {arr.shape[-1]}")
            return per_game(arr, np.int64, (kernels.HISTORY,))

        ha, hs = moves(hist_action, "hist_action"), moves(hist_seat, "hist_seat")
        po = per_game(0 if passed_on is None else passed_on, np.int64, (p, kernels.SIZE_SLOTS))
        sizes = np.asarray(self.table.sizes, np.int64)
        slot_sizes = np.array(PLAY_SIZES, np.int64)
        recorded = ha >= 0
        gaps = recorded[:, 1:] & ~recorded[:, :-1]
        full = np.uint64((1 << 52) - 1)
        if ((h | pl) & ~full).any():
            raise ValueError("set_position: card masks may only use bits 0..51")
        counts = np.unpackbits(h.view(np.uint8).reshape(k, p, 8), axis=-1).sum(-1)
        seen = np.zeros(k, np.uint64)
        for s in range(p):
            for mask, what in ((h[:, s], "held"), (pl[:, s], "played")):
                clash = np.flatnonzero(seen & mask)
                if len(clash):
                    g = int(rows[clash[0]])
                    raise ValueError(
                        f"set_position: match {g}: a card {what} by seat {s} is also held or played elsewhere"
                    )
                seen |= mask
        checks = [
            ((counts == 0).any(1), "every seat must hold a card (a game with an empty hand is over)"),
            ((cur < 0) | (cur >= p), f"current must be a seat 0..{p - 1}"),
            ((ta < 0) | (ta >= self.table.size), f"table_action must be an action id 0..{self.table.size - 1}"),
            ((ta > 0) & ((ts < 0) | (ts >= p)), "table_seat must name the seat of the play on the table"),
            ((ta == 0) & (ts != -1), "table_seat must be -1 when leading (table_action 0)"),
            ((ps < 0) | (ps > p - 2) | ((ta == 0) & (ps != 0)), f"passes must be 0..{p - 2} (0 when leading)"),
            ((ta > 0) & (ts == cur), "the seat to act cannot be answering its own play"),
            ((op < -1) | (op > 51), "opening must be a card id 0..51 or -1"),
            ((op >= 0) & (ta != 0), "an opening card is only due on a lead"),
            (
                ((ha < -1) | (ha >= self.table.size)).any(1),
                f"hist_action must hold action ids 0..{self.table.size - 1} (0 a pass) or -1 (none)",
            ),
            (
                ((hs < -1) | (hs >= p) | ((hs >= 0) != recorded)).any(1),
                f"hist_seat must name a seat 0..{p - 1} for each move of hist_action, -1 where there is none",
            ),
            (gaps.any(1), "hist_action lists the moves most recent first: no move after a -1"),
            (
                ((po < 0) | (po >= self.table.size)).any((1, 2)),
                f"passed_on must hold action ids 1..{self.table.size - 1} or 0 (none)",
            ),
            (
                ((po > 0) & (sizes[np.clip(po, 0, self.table.size - 1)] != slot_sizes)).any((1, 2)),
                "passed_on's columns are play sizes 1, 2, 3, 5, 6: each id must be a play of its column's size",
            ),
        ]
        held_opening = (
            h[np.arange(k), np.clip(cur, 0, p - 1)] >> np.where(op >= 0, op, 0).astype(np.uint64)
        ) & np.uint64(1)
        checks.append(((op >= 0) & (held_opening == 0), "the seat to act must hold the opening card"))
        for bad, why in checks:
            if bad.any():
                raise ValueError(f"set_position: match {int(rows[np.flatnonzero(bad)[0]])}: {why}")
        S.hands[rows] = h
        S.played[rows] = pl
        S.counts[rows] = counts.astype(np.int8)
        S.current[rows] = cur.astype(np.int8)
        S.table_action[rows] = ta.astype(np.int32)
        S.table_seat[rows] = ts.astype(np.int8)
        S.passes[rows] = ps.astype(np.int8)
        S.opening[rows] = op.astype(np.int8)
        S.match_scores[rows] = ms
        S.games_played[rows] = gp.astype(np.int32)
        S.breach[rows] = br
        S.reverse[rows] = rv
        S.hist_action[rows] = ha.astype(np.int32)
        S.hist_seat[rows] = hs.astype(np.int8)
        S.passed_on[rows] = po.astype(np.int32)
        S.over[rows] = False
        S.game_over[rows] = False
        S.match_over[rows] = False
        S.winner[rows] = -1
        S.payoffs[rows] = 0.0
        self._refresh()

    def load_state(self, arrays: Mapping[str, np.ndarray]) -> None:
        """Put back the arrays of a saved ``state`` (``state._asdict()`` of an engine of the same
        variant and size: a trainer's resume state). The legal lists and last-card duties are
        recomputed from the hands, never taken from ``arrays``, so a damaged save cannot let a seat
        play a card it does not hold. ``ValueError`` naming the first fault (a missing array, a
        wrong shape or dtype, a card in two places, a card count that is not the hand's, a seat or
        play id out of range); the engine is unchanged then."""
        S, p = self.state, self.players
        fields = S._asdict()
        missing = [name for name in fields if name not in arrays]
        if missing:
            raise ValueError(f"load_state: no {', '.join(missing)} array(s)")
        new = {}
        for name, arr in fields.items():
            got = np.asarray(arrays[name])
            if got.dtype != arr.dtype or got.shape != arr.shape:
                raise ValueError(f"load_state: {name} must be {arr.dtype} {arr.shape}, got {got.dtype} {got.shape}")
            new[name] = got
        hands, played, cur = new["hands"], new["played"], new["current"].astype(np.int64)
        every = np.zeros(self.num_matches, np.uint64)
        clash = np.zeros(self.num_matches, bool)
        for mask in [*hands.T, *played.T]:
            clash |= (every & mask) != 0
            every |= mask
        held = np.unpackbits(hands.view(np.uint8).reshape(*hands.shape, 8), axis=-1).sum(-1)
        checks = [
            ((every >> np.uint64(52)) != 0, "card masks may only use bits 0..51"),
            (clash, "a card is held or played by two seats"),
            ((held != new["counts"]).any(1), "its card counts are not the cards in the hands"),
            (
                (cur < -1) | (cur >= p) | ((cur == -1) != new["over"]),
                f"current must be a seat 0..{p - 1} (-1 once over)",
            ),
            ((new["table_action"] < 0) | (new["table_action"] >= self.table.size), "table_action is not an action id"),
            ((new["table_seat"] < -1) | (new["table_seat"] >= p), f"table_seat must be -1..{p - 1}"),
            ((new["opening"] < -1) | (new["opening"] > 51), "opening must be a card id 0..51 or -1"),
        ]
        for bad, why in checks:
            if bad.any():
                raise ValueError(f"load_state: match {int(np.flatnonzero(bad)[0])}: {why}")
        for name, arr in fields.items():
            arr[...] = new[name]
        self._refresh()  # the legal lists (legal, legal_n) and duties from the hands, whatever was saved

    def _checked(self, actions: Sequence[int] | np.ndarray) -> np.ndarray:
        """``actions`` as a contiguous int64 array, once every one is checked legal (``step``)."""
        acts = np.asarray(actions)
        if acts.shape != (self.num_matches,) or acts.dtype.kind not in "iu":  # signed or unsigned integers
            raise ValueError(f"actions must be {self.num_matches} integer ids, got {actions!r}")
        if acts.dtype == np.uint64 and (acts >= self.table.size).any():  # as int64 2**64-1 would read as -1
            g = int(np.flatnonzero(acts >= self.table.size)[0])
            raise ValueError(self._illegal_message(g, int(acts[g])))
        acts = np.ascontiguousarray(acts, dtype=np.int64)
        S = self.state
        bad = self._check(acts, S.over, S.legal, S.legal_n)
        if bad >= 0:
            raise ValueError(self._illegal_message(bad, int(acts[bad])))
        return acts

    def step(self, actions: Sequence[int] | np.ndarray) -> StepResult:
        """Play one action per match for its seat to act (-1: that match sits this step out; other
        negative ids, ids from the action table's size up and non-integer arrays are errors).

        An illegal action raises ``ValueError`` naming the match, the seat and the play, and
        changes nothing in any match."""
        acts = self._checked(actions)
        self.changes += 1
        run_batched(
            self._step,
            self.state,
            before=(self.rules,),
            after=(self.autoreset,),
            rows=(acts,),
            threads=self._threads,
            slices=self._slices,
        )  # the step, then the new legal lists, in one kernel call
        S = self.state
        return StepResult(S.game_over, S.match_over, S.payoffs, S.winner)

    def step_observe(self, actions: Sequence[int] | np.ndarray) -> tuple[StepResult, np.ndarray]:
        """``step(actions)`` and then ``observe()`` (each match's seat to act) in one kernel call:
        the same results, faster (what the vector env runs). The observations are the
        engine's own buffer, as ``observe()``'s."""
        acts = self._checked(actions)
        if self._step_observe is None:
            self._step_observe = compiled(step_observe_all, acts, self._obs, self.rules, self.state, self.autoreset)
        self.changes += 1
        run_batched(
            self._step_observe,
            self.state,
            before=(self.rules,),
            after=(self.autoreset,),
            rows=(acts, self._obs),
            threads=self._threads,
            slices=self._slices,
        )
        S = self.state
        return StepResult(S.game_over, S.match_over, S.payoffs, S.winner), self._obs

    def step_observe_rows(self, rows: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """Play ``actions[i]`` in match ``rows[i]`` only (distinct match indices), then observe those
        matches' seats to act into the observation buffer's rows ``rows``; every other match, and its
        row of the buffer, is left as it was (``step_observe`` steps and observes them all). No
        autoreset: a match that ends stays over. Returns the buffer. An illegal action raises
        ``ValueError`` naming the match, the seat and the play, and changes nothing."""
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        acts = np.ascontiguousarray(actions, dtype=np.int64)
        if rows.ndim != 1 or acts.shape != rows.shape:
            raise ValueError(
                f"rows and actions must be two 1-d arrays of one length, got {rows.shape} and {acts.shape}"
            )
        if rows.size and (rows.min() < 0 or rows.max() >= self.num_matches or len(np.unique(rows)) != rows.size):
            raise ValueError(f"rows must be distinct match indices 0..{self.num_matches - 1}, got {rows!r}")
        bad = step_observe_rows(rows, acts, self._obs, self.rules, self.state)  # checks every row first
        if bad >= 0:
            raise ValueError(self._illegal_message(int(rows[bad]), int(acts[bad])))
        self.changes += 1
        return self._obs

    def _illegal_message(self, g: int, action: int) -> str:
        S = self.state
        if S.over[g]:
            return f"match {g} is over; call reset() to start a new one"
        seat = int(S.current[g])
        if not 0 <= action < self.table.size:
            return f"match {g}: action id {action} is out of range 0..{self.table.size - 1}"
        cards = " ".join(card_texts(self.table.decode(action))) or "pass"
        why = self.explain_illegal(g, action)
        return f"match {g}: seat {seat} cannot play {cards}: {why}"

    def explain_illegal(self, g: int, action: int) -> str:
        """Why ``action`` is not legal in match ``g`` (assumes it is not)."""
        S, T = self.state, self.table
        seat = int(S.current[g])
        t = int(S.table_action[g])
        if action == 0:
            return "the leader cannot pass" if t == 0 else "pass is not allowed here"
        mask = int(T.masks[action])
        hand = int(S.hands[g, seat])
        if mask & ~hand:
            missing = mask_to_cards(mask & ~hand)
            return f"not in hand: {' '.join(card_texts(missing))}"
        if S.opening[g] >= 0 and not mask >> int(S.opening[g]) & 1:
            return f"the first play of the game must contain {card_texts([int(S.opening[g])])[0]}"
        if t != 0:
            table_cards = " ".join(card_texts(T.decode(t)))
            if T.sizes[action] != T.sizes[t]:
                return f"the table holds {T.sizes[t]} card(s) ({table_cards}); answer with {T.sizes[t]} card(s)"
            if not T.beat_start[t] <= action < T.group_end[t]:
                return f"it does not beat {T.kind(t)} {table_cards}"
        if self.variant.last_card_rule == "enforce" and int(S.duty[g]) != kernels.DUTY_NONE:
            return {
                kernels.DUTY_LEAD_MULTI: "last-card rule: the next player holds one card, lead two or more cards",
                kernels.DUTY_LEAD_HIGHEST: "last-card rule: the next player holds one card, lead your highest card",
                kernels.DUTY_ANSWER_HIGHEST: "last-card rule: the next player holds one card, a single must be your highest",
            }[int(S.duty[g])]
        return "not a legal play here"

    # ------------------------------------------------------------ what agents read

    def legal_actions(self) -> tuple[np.ndarray, np.ndarray]:
        """Legal ids of each match's seat to act, sorted: ``(ids (N, L) int32, counts (N,))``.
        Row ``g`` is valid up to ``counts[g]``; ``L`` is the batch's largest count. Both are views
        of the engine's state, overwritten by the next step: copy what you keep."""
        S = self.state
        width = max(int(S.legal_n.max()), 1)
        return S.legal[:, :width], S.legal_n

    def legal_mask(self, out: np.ndarray | None = None) -> np.ndarray:
        """Dense legal-action mask, int8 ``(N, A)``."""
        if out is None:
            out = np.zeros((self.num_matches, self.table.size), np.int8)
        else:
            out[:] = 0
        ids, n = self.legal_actions()
        rows = np.repeat(np.arange(self.num_matches), n)
        cols = ids[np.arange(ids.shape[1])[None, :] < n[:, None]]
        out[rows, cols] = 1
        return out

    def observe(self, seats: np.ndarray | None = None, out: np.ndarray | None = None) -> np.ndarray:
        """Observations ``(N, obs_size)`` float32 of ``seats`` (default: each match's seat to act)."""
        seats_arr = self._seats(seats, "none")
        if out is None:
            out = self._obs
        else:
            self._check_out(out, self.obs_size)
        run_batched(
            self._observe,
            self.state,
            before=(self.rules,),
            rows=(seats_arr, out),
            threads=self._threads,
            slices=self._slices,
        )
        return out

    def global_state(self, seats: np.ndarray | None = None, out: np.ndarray | None = None) -> np.ndarray:
        """Privileged global state ``(N, state_size)`` float32 (``bigtwo.env.engine.state``): every hand
        and the game so far, for centralised critics, never for acting (it shows each seat the
        others' cards). Row ``g`` is laid out from ``seats[g]``: that seat first, then the others
        in the game's play order (the observation's relative seats), or ``state.ABSOLUTE`` (-1)
        for seat order 0..P-1. Default: each match's seat to act, the rows matching ``observe()``
        (absolute order once a match is over). Written into ``out`` if given, else into a buffer
        of the engine's own (made on the first call, overwritten by the next: copy what you keep).
        Computed only when called: ``step`` and ``observe`` never pay for it."""
        seats_arr = self._seats(seats, "absolute order")
        if out is None:
            if self._global is None:
                self._global = np.zeros((self.num_matches, self.state_size), np.float32)
            out = self._global
        else:
            self._check_out(out, self.state_size)
        if self._global_kernel is None:
            self._global_kernel = compiled(state_all, seats_arr, out, self.rules, self.state)
        run_batched(
            self._global_kernel,
            self.state,
            before=(self.rules,),
            rows=(seats_arr, out),
            threads=self._threads,
            slices=self._slices,
        )
        return out

    def _seats(self, seats: np.ndarray | None, minus_one: str) -> np.ndarray:
        """``seats`` (one integer per match, -1 meaning ``minus_one``) as int64, or each match's seat
        to act; ``ValueError`` for any other shape, dtype or number."""
        n = self.num_matches
        if seats is None:
            return self.state.current.astype(np.int64)
        given = np.asarray(seats)
        kind = given.dtype.kind  # signed or unsigned integers only (not bool)
        seats_arr = np.ascontiguousarray(given, dtype=np.int64) if kind in "iu" else None
        if seats_arr is not None and seats_arr.shape == (1,) == (n,):  # one game (AEC, Game): no reductions
            seat = int(given[0])  # the given number itself: an unsigned 2**64 - 1 is no -1
            if -1 <= seat < self.players:
                return seats_arr
            seats_arr = None
        if (
            seats_arr is None
            or seats_arr.shape != (n,)
            or seats_arr.min() < -1  # two reductions: cheaper than comparing the whole array twice
            or seats_arr.max() >= self.players
            or (kind == "u" and (given >= self.players).any())  # 2**64 - 1 would read as -1
        ):
            raise ValueError(f"seats must be {n} seat numbers 0..{self.players - 1} (-1: {minus_one}), got {seats!r}")
        return seats_arr

    def _check_out(self, out: np.ndarray, size: int) -> None:
        if out.dtype != np.float32 or out.shape != (self.num_matches, size) or not out.flags.c_contiguous:
            raise ValueError(f"out must be a C-contiguous float32 array of shape {(self.num_matches, size)}")

    # ------------------------------------------------------------ convenience

    @property
    def current(self) -> np.ndarray:
        """Seat to act in each match (-1 once it is over)."""
        return self.state.current

    @property
    def reverse(self) -> np.ndarray:
        """Whether each match's current game plays in reversed seat order (seat - 1 next)."""
        return self.state.reverse

    @property
    def obs_version(self) -> int:
        """The observation version ``observe`` writes (``bigtwo.env.engine.observation.OBS_VERSION``)."""
        return OBS_VERSION

    @property
    def state_version(self) -> int:
        """The state version ``global_state`` writes (``bigtwo.env.engine.state.STATE_VERSION``)."""
        return STATE_VERSION

    @property
    def over(self) -> np.ndarray:
        """Whether each match is over (and not yet reset)."""
        return self.state.over

    @property
    def num_games(self) -> int:
        """Deprecated name of ``num_matches`` (read until 0.3)."""
        warnings.warn(
            "Engine.num_games is now Engine.num_matches; the old name goes in 0.3", DeprecationWarning, stacklevel=2
        )
        return self.num_matches

    def nbytes(self) -> int:
        """Memory held by the state, the observation (and global-state) buffers and the action table."""
        held = 0 if self._global is None else self._global.nbytes
        return sum(a.nbytes for a in self.state) + self._obs.nbytes + held + self.table.nbytes()
