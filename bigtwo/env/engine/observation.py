"""Observations: what one seat sees, laid out relative to that seat, as a flat float32 vector.

Observation version ``OBS_VERSION`` = 1 (see the version history below). Relative seat ``k`` is
the seat ``k`` places after the observer in the current game's play order (``k = 0`` is the
observer; a reversed game counts the other way round the table). ``P`` is the number of players;
``K`` = 8 moves of history (``kernels.HISTORY``). A play's *strength within its size* is its
place among the plays of that size in the action table (``ActionTable.places``): 0 for the
weakest, 1 for the strongest. Layout (``obs_size(P)`` = 327 + 74 P; 623 for 4):

| index range, P players | 4 players | part | what |
|---|---|---|---|
| ``[0, 52)`` | ``[0, 52)`` | ``hand`` | own hand, one slot per card id |
| ``[52, 52 + 52 P)`` | ``[52, 260)`` | ``played`` | cards each relative seat has played this game (52 per seat) |
| ``[52 + 52 P, 52 + 53 P)`` | ``[260, 264)`` | ``cards_left_fraction`` | cards left per relative seat / cards_per_player |
| ``[52 + 53 P, 104 + 53 P)`` | ``[264, 316)`` | ``table`` | the play on the table (empty when leading) |
| ``[104 + 53 P, 114 + 53 P)`` | ``[316, 326)`` | ``table_kind`` | its kind, one-hot over ``KINDS`` (slot 0 is set when leading) |
| ``[114 + 53 P, 114 + 54 P)`` | ``[326, 330)`` | ``table_seat`` | who made it, one-hot over relative seats |
| ``[114 + 54 P, 114 + 55 P)`` | ``[330, 334)`` | ``passes`` | passes in a row since it, one-hot 0..P-1 |
| ``[114 + 55 P, 166 + 55 P)`` | ``[334, 386)`` | ``opening_card`` | the card the observer's play must hold (opening duty), one-hot |
| ``[166 + 55 P, 170 + 55 P)`` | ``[386, 390)`` | ``duty`` | last-card duty, one-hot: none, lead 2+ cards, lead the highest single, answer a single with the highest card |
| ``[170 + 55 P, 182 + 55 P)`` | ``[390, 402)`` | ``legal_summary`` | the observer's own legal-move summary: can pass, can play each size 1, 2, 3, 5, 6 (slots 1..5), and 6 zeros reserved |
| ``[182 + 55 P, 234 + 55 P)`` | ``[402, 454)`` | ``unseen`` | cards the observer has not seen: not in its hand, not played this game |
| ``[234 + 55 P, 234 + 63 P)`` | ``[454, 486)`` | ``recent_seat`` | the game's last 8 moves (passes count), most recent first: who made each, one-hot over relative seats per move (all 0 before the game had that many) |
| ``[234 + 63 P, 314 + 63 P)`` | ``[486, 566)`` | ``recent_kind`` | each of those moves' kind, one-hot over ``KINDS`` per move (slot 0: a pass) |
| ``[314 + 63 P, 322 + 63 P)`` | ``[566, 574)`` | ``recent_strength`` | each of those plays' strength within its size, 0 (weakest) .. 1 (strongest); 0 for a pass |
| ``[322 + 63 P, 322 + 68 P)`` | ``[574, 594)`` | ``passed_on`` | per relative seat and play size 1, 2, 3, 5, 6: it passed on a table play of that size this game |
| ``[322 + 68 P, 322 + 73 P)`` | ``[594, 614)`` | ``passed_on_strength`` | the weakest such play's strength within its size (0 where none) |
| ``[322 + 73 P, 322 + 74 P)`` | ``[614, 618)`` | ``match_scores`` | match score so far per relative seat / abs(``Variant.worst_payoff``) (one game's floor) |
| ``[322 + 74 P, 323 + 74 P)`` | ``[618, 619)`` | ``games_played_fraction`` | games finished in this match / the match's games |
| ``[323 + 74 P, 324 + 74 P)`` | ``[619, 620)`` | ``first_game`` | this is the match's first game |
| ``[324 + 74 P, 325 + 74 P)`` | ``[620, 621)`` | ``opening_owed`` | the game's first play, which must hold the opening card, is still owed |
| ``[325 + 74 P, 326 + 74 P)`` | ``[621, 622)`` | ``breach`` | the observer broke the last-card rule against the next seat this game (liability: it pays if that seat wins); no other seat's breach, which turns on cards the observer has not seen |
| ``[326 + 74 P, 327 + 74 P)`` | ``[622, 623)`` | ``reversed`` | this game plays in reversed seat order (``turn_order``) |

``LAYOUT`` is the one declaration of this table (``layout_table`` writes it; a test checks that
this one matches): everything else is derived from it. ``obs_size``, ``part_slices`` (Python)
and ``part_start`` (compiled, indexed by ``Part``: ``Part.HAND``, ``Part.PLAYED``, ...) give the
places; ``decode_observation`` reads every part back by its name. Adding a part is one
``LAYOUT`` entry plus the kernel code that writes it (``observe_one``).

Nothing here depends on cards the observer cannot see: the other hands enter only as counts,
and every other part is public at the table (the moves, the passes, the match scores, the
direction). A breach of the last-card rule turns on the breaker's hand (did it hold a pair, a
higher single?), so only the breaker sees its own (``breach``). The duty, opening-card and legal-summary slots are filled only for
the seat to act (the only seat with a duty); ``opening_owed`` shows every seat that the first
play is still to come, not which card it must hold (under ``opening_card: lowest`` that card
can tell an undealt card). Every slot is in [0, 1] except ``match_scores`` (``obs_bounds``).

Version history (a trained network reads one version: checkpoints record theirs, and
``bigtwo.train.policy_agent`` refuses another):

* 1: what a strong player tracks, appended after version 0's parts (which keep their places and
  values): ``unseen`` .. ``reversed``; the PettingZoo env became ``bigtwo_v1``, the Gymnasium id
  ``bigtwo/BigTwo-v1``.
* 0: ``hand`` .. ``legal_summary`` (182 + 55 P slots; bigtwo 0.1.0).

>>> [name for name, _ in part_slices(4).items()][:3]
['hand', 'played', 'cards_left_fraction']
>>> part_slices(4)["table"], obs_size(4)
(slice(264, 316, None), 623)
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Any

import numpy as np

from bigtwo.env.checks import is_count
from bigtwo.env.engine.jit import njit
from bigtwo.env.engine.kernels import (
    FP_SCORE_SCALE,
    HISTORY,
    IP_CPP,
    IP_GAMES,
    IP_PLAYERS,
    SIZE_SLOTS,
    U1,
    Rules,
    State,
    legal_range,
    places_after,
    seat_after,
    step_range,
)
from bigtwo.env.rules.combos import KINDS
from bigtwo.env.rules.variant import Variant

OBS_VERSION = 1  # bump when the observation changes (see the version history above)
NUM_KINDS = len(KINDS)
DECODINGS = ("cards", "seat_cards", "values", "index", "index_or_none", "flags")
BOUNDS = ("unit", "match_score")


@dataclass(frozen=True)
class ObsPart:
    """One part of the observation: ``fixed + per_seat * P`` slots, read back as ``decoding``.

    ``decoding``: ``cards`` (bool per card id), ``seat_cards`` (bool, (P, 52): per relative
    seat), ``values`` (the numbers), ``index`` (one-hot: the slot set), ``index_or_none`` (the
    slot set, -1 when none is), ``flags`` (bool per slot). ``rows``: the part is that many equal
    rows (``"P"``: one per relative seat), each read as ``decoding`` (a leading axis of that
    length in the decoded array). ``bounds``: the range of its slots (the spaces' bounds, from
    ``obs_bounds``): ``unit`` [0, 1], ``match_score`` +-``match_score_bound(variant)``."""

    name: str
    fixed: int
    per_seat: int
    decoding: str
    what: str
    rows: int | str = 1
    bounds: str = "unit"

    def __post_init__(self) -> None:
        if self.decoding not in DECODINGS:
            raise ValueError(
                f"observation part {self.name!r}: decoding must be one of {', '.join(DECODINGS)}, got {self.decoding!r}"
            )
        if self.decoding == "seat_cards" and (self.fixed, self.per_seat) != (0, 52):
            raise ValueError(f"observation part {self.name!r}: seat_cards parts have 52 slots per seat and no others")
        if self.bounds not in BOUNDS:
            raise ValueError(
                f"observation part {self.name!r}: bounds must be one of {', '.join(BOUNDS)}, got {self.bounds!r}"
            )
        if self.rows == "P":
            if self.fixed:
                raise ValueError(f"observation part {self.name!r}: a part with one row per seat has no fixed slots")
        elif not is_count(self.rows):
            raise ValueError(f"observation part {self.name!r}: rows must be a positive int or 'P', got {self.rows!r}")
        elif self.fixed % self.rows or self.per_seat % self.rows:
            raise ValueError(f"observation part {self.name!r}: {self.rows} rows must divide its slots evenly")

    def size(self, players: int) -> int:
        return self.fixed + self.per_seat * players

    def row_count(self, players: int) -> int:
        """How many rows the part has for ``players`` seats."""
        return players if self.rows == "P" else int(self.rows)


LAYOUT: tuple[ObsPart, ...] = (
    ObsPart("hand", 52, 0, "cards", "own hand, one slot per card id"),
    ObsPart("played", 0, 52, "seat_cards", "cards each relative seat has played this game (52 per seat)"),
    ObsPart("cards_left_fraction", 0, 1, "values", "cards left per relative seat / cards_per_player"),
    ObsPart("table", 52, 0, "cards", "the play on the table (empty when leading)"),
    ObsPart("table_kind", NUM_KINDS, 0, "index", "its kind, one-hot over ``KINDS`` (slot 0 is set when leading)"),
    ObsPart("table_seat", 0, 1, "index_or_none", "who made it, one-hot over relative seats"),
    ObsPart("passes", 0, 1, "index", "passes in a row since it, one-hot 0..P-1"),
    ObsPart("opening_card", 52, 0, "cards", "the card the observer's play must hold (opening duty), one-hot"),
    ObsPart(
        "duty",
        4,
        0,
        "index",
        "last-card duty, one-hot: none, lead 2+ cards, lead the highest single, answer a single with the highest card",
    ),
    ObsPart(
        "legal_summary",
        12,
        0,
        "flags",
        "the observer's own legal-move summary: can pass, can play each size 1, 2, 3, 5, 6 (slots 1..5), "
        "and 6 zeros reserved",
    ),
    # v1: what a strong player tracks
    ObsPart("unseen", 52, 0, "cards", "cards the observer has not seen: not in its hand, not played this game"),
    ObsPart(
        "recent_seat",
        0,
        HISTORY,
        "index_or_none",
        f"the game's last {HISTORY} moves (passes count), most recent first: who made each, one-hot over "
        "relative seats per move (all 0 before the game had that many)",
        rows=HISTORY,
    ),
    ObsPart(
        "recent_kind",
        HISTORY * NUM_KINDS,
        0,
        "index_or_none",
        "each of those moves' kind, one-hot over ``KINDS`` per move (slot 0: a pass)",
        rows=HISTORY,
    ),
    ObsPart(
        "recent_strength",
        HISTORY,
        0,
        "values",
        "each of those plays' strength within its size, 0 (weakest) .. 1 (strongest); 0 for a pass",
    ),
    ObsPart(
        "passed_on",
        0,
        SIZE_SLOTS,
        "flags",
        "per relative seat and play size 1, 2, 3, 5, 6: it passed on a table play of that size this game",
        rows="P",
    ),
    ObsPart(
        "passed_on_strength",
        0,
        SIZE_SLOTS,
        "values",
        "the weakest such play's strength within its size (0 where none)",
        rows="P",
    ),
    ObsPart(
        "match_scores",
        0,
        1,
        "values",
        "match score so far per relative seat / abs(``Variant.worst_payoff``) (one game's floor)",
        bounds="match_score",
    ),
    ObsPart("games_played_fraction", 1, 0, "values", "games finished in this match / the match's games"),
    ObsPart("first_game", 1, 0, "flags", "this is the match's first game"),
    ObsPart("opening_owed", 1, 0, "flags", "the game's first play, which must hold the opening card, is still owed"),
    ObsPart(
        "breach",
        1,
        0,
        "flags",
        "the observer broke the last-card rule against the next seat this game (liability: it pays if that "
        "seat wins); no other seat's breach, which turns on cards the observer has not seen",
    ),
    ObsPart("reversed", 1, 0, "flags", "this game plays in reversed seat order (``turn_order``)"),
)


def index_enum(name: str, layout: tuple[ObsPart, ...], module: str) -> Any:
    """An ``IntEnum`` ``name`` of module ``module``: the index of each part of ``layout`` by its name in
    capitals. Typed ``Any``: its members are made when the module loads, so no type checker can list them."""
    return IntEnum(name, [(part.name.upper(), i) for i, part in enumerate(layout)], module=module)


Part = index_enum("Part", LAYOUT, __name__)
Part.__doc__ = "Index of each ``LAYOUT`` part, by its name in capitals (``Part.HAND``), for ``part_start``."


def layout_starts(layout: tuple[ObsPart, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Where each part of ``layout`` starts, as ``fixed[i] + per_seat[i] * P`` (int64 arrays, one
    entry more than parts: the last is the size). Any layout of ``ObsPart`` (this one, the
    privileged state's ``bigtwo.env.engine.state.STATE_LAYOUT``) is placed by these two arrays."""
    fixed = np.cumsum([0] + [part.fixed for part in layout]).astype(np.int64)
    per_seat = np.cumsum([0] + [part.per_seat for part in layout]).astype(np.int64)
    return fixed, per_seat


_FIXED_START, _SEAT_START = layout_starts(LAYOUT)


def obs_size(players: int, layout: tuple[ObsPart, ...] = LAYOUT) -> int:
    """Length of an observation vector for ``players`` seats (of a vector laid out by ``layout``)."""
    fixed, per_seat = layout_starts(layout)
    return int(fixed[-1] + per_seat[-1] * players)


def part_slices(players: int, layout: tuple[ObsPart, ...] = LAYOUT) -> dict[str, slice]:
    """Each part's slots in an observation for ``players`` seats (or a vector laid out by
    ``layout``), by name, in layout order."""
    fixed, per_seat = layout_starts(layout)
    return {
        part.name: slice(int(fixed[i] + per_seat[i] * players), int(fixed[i + 1] + per_seat[i + 1] * players))
        for i, part in enumerate(layout)
    }


@njit(inline="always")
def part_start(part, players):
    """First slot of ``part`` (a ``Part``) in an observation for ``players`` seats (kernels)."""
    return _FIXED_START[part] + _SEAT_START[part] * players


def _expr(fixed: int, per_seat: int) -> str:
    seats = "" if per_seat == 0 else ("P" if per_seat == 1 else f"{per_seat} P")
    if not seats:
        return str(fixed)
    return seats if fixed == 0 else f"{fixed} + {seats}"


def layout_table(players: int = 4, layout: tuple[ObsPart, ...] = LAYOUT) -> str:
    """The module docstring's layout table, written from ``LAYOUT`` (or ``layout``), one row per part."""
    rows = [
        f"| index range, P players | {players} players | part | what |",
        "|---|---|---|---|",
    ]
    slices = part_slices(players, layout)
    fixed, per_seat = layout_starts(layout)
    for i, part in enumerate(layout):
        lo = _expr(int(fixed[i]), int(per_seat[i]))
        hi = _expr(int(fixed[i + 1]), int(per_seat[i + 1]))
        at = slices[part.name]
        rows.append(f"| ``[{lo}, {hi})`` | ``[{at.start}, {at.stop})`` | ``{part.name}`` | {part.what} |")
    return "\n".join(rows)


def match_score_bound(variant: Variant) -> float:
    """How far from 0 a ``match_scores`` slot can go: ``games`` games of at most (P - 1)^2 worst
    payoffs each (a liable seat pays every other seat's gain, a winner's gain is at most P - 1
    worst payoffs) and the rake.

    >>> from bigtwo.env import load_variant
    >>> match_score_bound(load_variant("taiwan")), match_score_bound(load_variant("taiwan", players=2, games=3))
    (9.0, 3.0)
    """
    p = variant.players
    return float(variant.games * ((p - 1) ** 2 + variant.rake / abs(variant.worst_payoff)))


def obs_bounds(variant: Variant, layout: tuple[ObsPart, ...] = LAYOUT) -> tuple[np.ndarray, np.ndarray]:
    """Each slot's lowest and highest value under ``variant`` (float32 arrays, ``obs_size(P)``
    long), from the parts' ``bounds``: [0, 1], and +-``match_score_bound`` for the match scores
    (of a vector laid out by ``layout``)."""
    size = obs_size(variant.players, layout)
    low, high = np.zeros(size, np.float32), np.ones(size, np.float32)
    bound = match_score_bound(variant)
    for part, at in zip(layout, part_slices(variant.players, layout).values(), strict=True):
        if part.bounds == "match_score":
            low[at], high[at] = -bound, bound
    return low, high


def size_formula(layout: tuple[ObsPart, ...] = LAYOUT) -> str:
    """``obs_size(P)`` as the docstring writes it (``182 + 55 P``), of ``layout``."""
    fixed, per_seat = layout_starts(layout)
    return _expr(int(fixed[-1]), int(per_seat[-1]))


# ---------------------------------------------------------------- kernels


@njit(inline="always")
def absolute_seat(seat, k, players, reverse):
    """The seat ``k`` places after ``seat`` in a game's play order (relative to absolute);
    ``reverse``: the game's ``State.reverse``. The seat helpers take numbers, never the
    ``Rules``/``State`` tuples: an inlined helper given a tuple pays a reference count on each of
    its arrays per call (measured: the heuristic's rollouts 1.5x faster without)."""
    return np.int64(seat_after(np.int64(seat), np.int64(k), players, reverse))


@njit(inline="always")
def relative_seat(seat, other, players, reverse):
    """How many places after ``seat`` the seat ``other`` sits in a game's play order."""
    return np.int64(places_after(np.int64(seat), np.int64(other), players, reverse))


FULL = (U1 << np.uint64(52)) - U1


@njit(inline="always")
def write_cards(out, base, mask):
    """Write the 52 slots ``base + c``: 1 for the cards ``c`` in ``mask``, 0 for the others (no
    zeroing needed first). Written as a select, which LLVM vectorises: 5x faster than converting
    the shifted bit to float32 (measured: 28 vs 146 ns for six card sets)."""
    for c in range(52):
        out[base + c] = 1.0 if (mask >> np.uint64(c)) & U1 else 0.0


@njit(inline="always")
def view_seat(view, k, players, reverse):
    """The seat at place ``k`` of a view from seat ``view``: ``absolute_seat``, or seat ``k`` itself
    when ``view`` < 0 (absolute order: the privileged state's, ``bigtwo.env.engine.state``)."""
    return np.int64(k) if view < 0 else absolute_seat(view, k, players, reverse)


@njit(inline="always")
def view_place(view, other, players, reverse):
    """The place of seat ``other`` in a view from seat ``view`` (``view_seat``'s inverse)."""
    return np.int64(other) if view < 0 else relative_seat(view, other, players, reverse)


@njit(inline="always")
def table_view(view, t, table_seat, passes, masks, kinds, players, reverse):
    """The play on the table of a game seen from ``view``: ``(cards, kind, place, passes)``: its card
    set (0 when leading), its kind (0 when leading), the place of who made it in the view (-1 when
    leading) and the passes in a row since it (at most P - 1). ``t``, ``table_seat``, ``passes`` and
    ``reverse`` are the game's ``State`` fields, ``masks`` and ``kinds`` the ``Rules``' arrays.
    ``put_table`` writes it."""
    cards = masks[t] if t > 0 else U1 - U1
    kind = np.int64(kinds[t]) if t > 0 else np.int64(0)
    place = view_place(view, table_seat, players, reverse) if table_seat >= 0 else np.int64(-1)
    return cards, kind, place, np.int64(min(passes, players - 1))


# The writers below take numbers and rows of the state, never the ``Rules``/``State`` tuples:
# Numba inlines a helper with a loop that takes those tuples at several times the cost of its work
# (measured: ``put_table`` 10x, ``put_recent`` 8x slower when given ``R, S``).


@njit(inline="always")
def put_table(out, cards_base, kind_base, seat_base, passes_base, table):
    """The play on the table (``table_view``'s ``table``): its cards, its kind one-hot, who made
    it by place in the view, and the passes in a row since it, one-hot 0..P-1; leading sets kind
    slot 0 and no seat."""
    cards, kind, place, passes = table
    write_cards(out, cards_base, cards)
    out[kind_base + kind] = 1.0
    if place >= 0:
        out[seat_base + place] = 1.0
    out[passes_base + passes] = 1.0


@njit(inline="always")
def put_recent(out, seat_base, kind_base, strength_base, hist_seat, hist_action, view, reverse, players, kinds, places):
    """The game's last ``HISTORY`` moves (``hist_seat``/``hist_action``: the game's rows of the
    state), most recent first: who made each (one-hot by place in the view from ``view``, P slots
    per move; ``view`` < 0: by seat), its kind (``NUM_KINDS`` per move, slot 0 a pass) and strength."""
    for i in range(HISTORY):
        who = hist_seat[i]
        if who < 0:
            break
        a = hist_action[i]
        place = np.int64(who) if view < 0 else np.int64(places_after(np.int64(view), np.int64(who), players, reverse))
        out[seat_base + players * i + place] = 1.0
        out[kind_base + NUM_KINDS * i + kinds[a]] = 1.0
        out[strength_base + i] = places[a]


# The parts ``put_seat`` writes, by name: the observation's and the state's (``seat_bases``).
SEAT_PART_NAMES = ("PLAYED", "CARDS_LEFT_FRACTION", "PASSED_ON", "PASSED_ON_STRENGTH", "MATCH_SCORES")
_SEAT_PARTS = np.array([Part[name] for name in SEAT_PART_NAMES], dtype=np.int64)


@njit(inline="always")
def seat_bases(fixed, per_seat, parts, players):
    """``put_seat``'s ``bases``: the first slots of ``parts`` (the indices of ``SEAT_PART_NAMES`` in a
    layout) in a vector whose starts are ``fixed + per_seat * players`` (``layout_starts``)."""
    return (
        fixed[parts[0]] + per_seat[parts[0]] * players,
        fixed[parts[1]] + per_seat[parts[1]] * players,
        fixed[parts[2]] + per_seat[parts[2]] * players,
        fixed[parts[3]] + per_seat[parts[3]] * players,
        fixed[parts[4]] + per_seat[parts[4]] * players,
    )


@njit(inline="always")
def put_seat(out, k, bases, played, count, cpp, passed_on, score, places):
    """What the table knows of the seat at place ``k``: the cards it has ``played``, its cards left
    (``count``, a fraction of ``cpp``), the plays it passed on per size (``passed_on``, its row of the
    state: flag and the weakest's strength, ``SIZE_SLOTS`` each) and its match ``score`` (already per
    worst game). ``bases``: the first slots of the played cards, the cards-left fractions, the
    passed-on flags and strengths, and the match scores (the observation's and the state's)."""
    played_base, left_base, flag_base, strength_base, scores_base = bases
    write_cards(out, played_base + 52 * k, played)
    out[left_base + k] = count / cpp
    for j in range(SIZE_SLOTS):
        t = passed_on[j]
        if t > 0:
            out[flag_base + SIZE_SLOTS * k + j] = 1.0
            out[strength_base + SIZE_SLOTS * k + j] = places[t]
    out[scores_base + k] = score


@njit
def observe_one(g, seat, R, S, out):
    """Write game ``g`` as ``seat`` sees it into ``out`` (one row): ``observe_range`` of one game."""
    seats = np.empty(1, dtype=np.int64)
    seats[0] = seat
    observe_range(g, g + 1, seats, out.reshape((1, out.shape[0])), R, S)


@njit(nogil=True)
def observe_range(lo, hi, seats, rows, R, S):
    """Write games ``lo .. hi - 1``, game ``g`` as seat ``seats[g - lo]`` sees it, into ``rows[g - lo]``.
    Seats are turned to the observer by ``seat_after`` and ``places_after`` only
    (``absolute_seat``/``relative_seat``'s arithmetic). The loop over games is written around the
    per-game work, not around an inlined per-game helper: given the ``Rules``/``State`` tuples, such a
    helper paid a reference count on each of their ~56 arrays a game (measured: 708 ns an
    observation inlined, 300 ns written in the loop)."""
    for g in range(lo, hi):
        seat = np.int64(seats[g - lo])
        out = rows[g - lo]
        players = R.ip[IP_PLAYERS]
        cpp = R.ip[IP_CPP]
        if seat < 0:
            out[:] = 0.0
            continue
        rev = S.reverse[g]
        # The card parts hand, played, table and unseen are written whole by ``write_cards``; only the
        # other slots are zeroed first (fewer passes over the row than zeroing it all).
        out[part_start(Part.TABLE_KIND, players) : part_start(Part.UNSEEN, players)] = 0.0
        out[part_start(Part.RECENT_SEAT, players) :] = 0.0
        write_cards(out, part_start(Part.HAND, players), S.hands[g, seat])
        bases = seat_bases(_FIXED_START, _SEAT_START, _SEAT_PARTS, players)
        scale = R.fp[FP_SCORE_SCALE]
        for k in range(players):
            s = seat_after(seat, k, players, rev)
            score = S.match_scores[g, s] * scale
            put_seat(out, k, bases, S.played[g, s], S.counts[g, s], cpp, S.passed_on[g, s], score, R.places)
        put_table(
            out,
            part_start(Part.TABLE, players),
            part_start(Part.TABLE_KIND, players),
            part_start(Part.TABLE_SEAT, players),
            part_start(Part.PASSES, players),
            table_view(seat, S.table_action[g], S.table_seat[g], S.passes[g], R.masks, R.kinds, players, rev),
        )
        acting = S.current[g] == seat
        if acting and S.opening[g] >= 0:
            out[part_start(Part.OPENING_CARD, players) + S.opening[g]] = 1.0
        out[part_start(Part.DUTY, players) + (S.duty[g] if acting else 0)] = 1.0
        if acting:
            base = part_start(Part.LEGAL_SUMMARY, players)
            for i in range(S.legal_n[g]):
                a = S.legal[g, i]
                if a == 0:
                    out[base] = 1.0
                else:
                    size = R.sizes[a]
                    out[base + (size if size <= 3 else size - 1)] = 1.0
        unseen = ~S.hands[g, seat] & FULL
        for k in range(players):
            unseen &= ~S.played[g, k]
        write_cards(out, part_start(Part.UNSEEN, players), unseen)
        put_recent(
            out,
            part_start(Part.RECENT_SEAT, players),
            part_start(Part.RECENT_KIND, players),
            part_start(Part.RECENT_STRENGTH, players),
            S.hist_seat[g],
            S.hist_action[g],
            seat,
            rev,
            players,
            R.kinds,
            R.places,
        )
        if S.breach[g, seat_after(seat, 1, players, rev)]:  # flagged on the seat it was broken against
            out[part_start(Part.BREACH, players)] = 1.0
        out[part_start(Part.GAMES_PLAYED_FRACTION, players)] = S.games_played[g] / R.ip[IP_GAMES]
        if S.games_played[g] == 0:
            out[part_start(Part.FIRST_GAME, players)] = 1.0
        if S.opening[g] >= 0:
            out[part_start(Part.OPENING_OWED, players)] = 1.0
        if S.reverse[g]:
            out[part_start(Part.REVERSED, players)] = 1.0


@njit(nogil=True)
def observe_all(seats, out, R, S):
    observe_range(0, out.shape[0], seats, out, R, S)


@njit(nogil=True)
def step_observe_all(actions, out, R, S, autoreset):
    """A whole vector step: ``kernels.step_all``, then ``legal_all``, then ``observe_all`` for each
    game's seat to act (three passes over the batch, each without a per-game call)."""
    n = actions.shape[0]
    step_range(0, n, actions, R, S, autoreset)
    legal_range(0, n, R, S)
    observe_range(0, n, S.current, out, R, S)


@njit(nogil=True)
def step_observe_rows(rows, actions, out, R, S):
    """``step_observe_all`` for the games ``rows`` only (``rows[i]`` plays ``actions[i]``, without
    autoreset), each observed into ``out[rows[i]]``; the other games, their flags and their rows of
    ``out`` are left as they were. What a search stepping a few of many copies needs: its cost
    follows the rows stepped, not the batch. Returns -1, or (changing nothing) the first ``i`` whose
    action is not legal in its game (or whose game is over)."""
    for i in range(rows.shape[0]):
        g = rows[i]
        legal = False
        if not S.over[g]:
            for k in range(S.legal_n[g]):
                if S.legal[g, k] == actions[i]:
                    legal = True
                    break
        if not legal:
            return i
    one = np.empty(1, dtype=np.int64)
    for i in range(rows.shape[0]):
        g = rows[i]
        one[0] = actions[i]
        step_range(g, g + 1, one, R, S, False)
        legal_range(g, g + 1, R, S)
        observe_range(g, g + 1, S.current[g : g + 1], out[g : g + 1], R, S)
    return -1


__all__ = [
    "LAYOUT",
    "NUM_KINDS",
    "OBS_VERSION",
    "ObsPart",
    "Part",
    "Rules",
    "State",
    "absolute_seat",
    "decode_observation",
    "layout_starts",
    "layout_table",
    "match_score_bound",
    "obs_bounds",
    "obs_size",
    "observe_all",
    "observe_one",
    "observe_range",
    "part_slices",
    "part_start",
    "put_recent",
    "put_seat",
    "seat_bases",
    "put_table",
    "relative_seat",
    "step_observe_all",
    "table_view",
    "view_place",
    "view_seat",
    "write_cards",
]


def decode_observation(
    obs: np.ndarray, players: int, layout: tuple[ObsPart, ...] = LAYOUT, what: str = "an observation"
) -> dict[str, np.ndarray]:
    """Split one observation (or a batch, leading axes kept) into its ``LAYOUT`` parts, by name,
    for agents and notebooks, plus ``leading`` (nothing on the table). Card parts are bool arrays
    over card ids (``played``: (P, 52)); seats are relative to the observer; one-hot parts are
    the index set (``table_seat``: -1 when leading). ``layout`` and ``what`` (its name in the
    error) read another vector of ``ObsPart`` (``bigtwo.env.engine.state.decode_state``)."""
    obs = np.asarray(obs)
    size = obs_size(players, layout)
    if obs.ndim == 0 or obs.shape[-1] != size:
        raise ValueError(f"{what} for {players} players has {size} slots, got shape {obs.shape} (last axis: the slots)")
    out: dict[str, np.ndarray] = {}
    for part, at in zip(layout, part_slices(players, layout).values(), strict=True):
        raw = obs[..., at]
        rows = part.row_count(players)
        if rows > 1:
            raw = raw.reshape(*obs.shape[:-1], rows, -1)
        if part.decoding in ("cards", "flags"):
            out[part.name] = raw > 0.5
        elif part.decoding == "seat_cards":
            out[part.name] = (raw > 0.5).reshape(*obs.shape[:-1], players, 52)
        elif part.decoding == "values":
            out[part.name] = raw
        elif part.decoding == "index":
            out[part.name] = raw.argmax(-1)
        else:  # index_or_none
            out[part.name] = np.where(raw.sum(-1) > 0, raw.argmax(-1), -1)
    out["leading"] = obs[..., part_slices(players, layout)["table"]].sum(-1) == 0
    return out
