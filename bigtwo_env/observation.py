"""Observations: what one seat sees, laid out relative to that seat, as a flat float32 vector.

Relative seat ``k`` is the seat ``k`` places after the observer in the current game's play order
(``k = 0`` is the observer; a reversed game counts the other way round the table). ``P`` is the number of players. Layout (``obs_size(P)`` = 182 + 55 P; 402 for 4):

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

``LAYOUT`` is the one declaration of this table (``layout_table`` writes it; a test checks that
this one matches): everything else is derived from it. ``obs_size``, ``part_slices`` (Python)
and ``part_start`` (compiled, indexed by ``Part``: ``Part.HAND``, ``Part.PLAYED``, ...) give the
places; ``decode_observation`` reads every part back by its name. Adding a part is one
``LAYOUT`` entry plus the kernel code that writes it (``observe_one``).

Nothing here depends on cards the observer cannot see: the other hands enter only as counts.
The duty slots are filled only for the seat to act (the only seat with a duty).

>>> [name for name, _ in part_slices(4).items()][:3]
['hand', 'played', 'cards_left_fraction']
>>> part_slices(4)["table"], obs_size(4)
(slice(264, 316, None), 402)
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

import numpy as np

from .combos import KINDS
from .jit import njit
from .kernels import IP_CPP, IP_PLAYERS, U1, Rules, State, places_after, seat_after

NUM_KINDS = len(KINDS)
DECODINGS = ("cards", "seat_cards", "values", "index", "index_or_none", "flags")


@dataclass(frozen=True)
class ObsPart:
    """One part of the observation: ``fixed + per_seat * P`` slots, read back as ``decoding``.

    ``decoding``: ``cards`` (bool per card id), ``seat_cards`` (bool, (P, 52): per relative
    seat), ``values`` (the numbers), ``index`` (one-hot: the slot set), ``index_or_none`` (the
    slot set, -1 when none is), ``flags`` (bool per slot)."""

    name: str
    fixed: int
    per_seat: int
    decoding: str
    what: str

    def __post_init__(self) -> None:
        if self.decoding not in DECODINGS:
            raise ValueError(
                f"observation part {self.name!r}: decoding must be one of {', '.join(DECODINGS)}, got {self.decoding!r}"
            )
        if self.decoding == "seat_cards" and (self.fixed, self.per_seat) != (0, 52):
            raise ValueError(f"observation part {self.name!r}: seat_cards parts have 52 slots per seat and no others")

    def size(self, players: int) -> int:
        return self.fixed + self.per_seat * players


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
)
Part = IntEnum("Part", [(part.name.upper(), i) for i, part in enumerate(LAYOUT)])
Part.__doc__ = "Index of each ``LAYOUT`` part, by its name in capitals (``Part.HAND``), for ``part_start``."
# Where each part starts: _FIXED_START[i] + _SEAT_START[i] * P (entry len(LAYOUT): the size).
_FIXED_START = np.cumsum([0] + [part.fixed for part in LAYOUT]).astype(np.int64)
_SEAT_START = np.cumsum([0] + [part.per_seat for part in LAYOUT]).astype(np.int64)


def obs_size(players: int) -> int:
    """Length of an observation vector for ``players`` seats."""
    return int(_FIXED_START[-1] + _SEAT_START[-1] * players)


def part_slices(players: int) -> dict[str, slice]:
    """Each part's slots in an observation for ``players`` seats, by name, in layout order."""
    return {
        part.name: slice(
            int(_FIXED_START[i] + _SEAT_START[i] * players), int(_FIXED_START[i + 1] + _SEAT_START[i + 1] * players)
        )
        for i, part in enumerate(LAYOUT)
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


def layout_table(players: int = 4) -> str:
    """The module docstring's layout table, written from ``LAYOUT`` (one row per part)."""
    rows = [
        f"| index range, P players | {players} players | part | what |",
        "|---|---|---|---|",
    ]
    slices = part_slices(players)
    for i, part in enumerate(LAYOUT):
        lo = _expr(int(_FIXED_START[i]), int(_SEAT_START[i]))
        hi = _expr(int(_FIXED_START[i + 1]), int(_SEAT_START[i + 1]))
        at = slices[part.name]
        rows.append(f"| ``[{lo}, {hi})`` | ``[{at.start}, {at.stop})`` | ``{part.name}`` | {part.what} |")
    return "\n".join(rows)


def size_formula() -> str:
    """``obs_size(P)`` as the docstring writes it (``182 + 55 P``)."""
    return _expr(int(_FIXED_START[-1]), int(_SEAT_START[-1]))


# ---------------------------------------------------------------- kernels


@njit(inline="always")
def absolute_seat(g, seat, k, R, S):
    """The seat ``k`` places after ``seat`` in game ``g``'s play order (relative to absolute)."""
    return np.int64(seat_after(np.int64(seat), np.int64(k), R.ip[IP_PLAYERS], S.reverse[g]))


@njit(inline="always")
def relative_seat(g, seat, other, R, S):
    """How many places after ``seat`` the seat ``other`` sits in game ``g``'s play order."""
    return np.int64(places_after(np.int64(seat), np.int64(other), R.ip[IP_PLAYERS], S.reverse[g]))


@njit(inline="always")
def _put_cards(out, base, mask):
    for c in range(52):
        if mask & (U1 << np.uint64(c)):
            out[base + c] = 1.0


@njit
def observe_one(g, seat, R, S, out):
    """Write game ``g`` as ``seat`` sees it into ``out`` (zeroed here). Seats are turned to the
    observer by ``absolute_seat`` and ``relative_seat`` only."""
    players = R.ip[IP_PLAYERS]
    cpp = R.ip[IP_CPP]
    out[:] = 0.0
    if seat < 0:
        return
    _put_cards(out, part_start(Part.HAND, players), S.hands[g, seat])
    base = part_start(Part.PLAYED, players)
    for k in range(players):
        _put_cards(out, base + 52 * k, S.played[g, absolute_seat(g, seat, k, R, S)])
    base = part_start(Part.CARDS_LEFT_FRACTION, players)
    for k in range(players):
        out[base + k] = S.counts[g, absolute_seat(g, seat, k, R, S)] / cpp
    t = S.table_action[g]
    if t > 0:
        _put_cards(out, part_start(Part.TABLE, players), R.masks[t])
    out[part_start(Part.TABLE_KIND, players) + (R.kinds[t] if t > 0 else 0)] = 1.0
    if S.table_seat[g] >= 0:
        out[part_start(Part.TABLE_SEAT, players) + relative_seat(g, seat, S.table_seat[g], R, S)] = 1.0
    out[part_start(Part.PASSES, players) + min(S.passes[g], players - 1)] = 1.0
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


@njit(nogil=True)
def observe_all(seats, out, R, S):
    for g in range(out.shape[0]):
        observe_one(g, seats[g], R, S, out[g])


__all__ = [
    "LAYOUT",
    "NUM_KINDS",
    "ObsPart",
    "Part",
    "Rules",
    "State",
    "absolute_seat",
    "decode_observation",
    "layout_table",
    "obs_size",
    "observe_all",
    "observe_one",
    "part_slices",
    "part_start",
    "relative_seat",
]


def decode_observation(obs: np.ndarray, players: int) -> dict[str, np.ndarray]:
    """Split one observation (or a batch, leading axes kept) into its ``LAYOUT`` parts, by name,
    for agents and notebooks, plus ``leading`` (nothing on the table). Card parts are bool arrays
    over card ids (``played``: (P, 52)); seats are relative to the observer; one-hot parts are
    the index set (``table_seat``: -1 when leading)."""
    obs = np.asarray(obs)
    size = obs_size(players)
    if obs.ndim == 0 or obs.shape[-1] != size:
        raise ValueError(
            f"an observation for {players} players has {size} slots, got shape {obs.shape} (last axis: the slots)"
        )
    out: dict[str, np.ndarray] = {}
    for part, at in zip(LAYOUT, part_slices(players).values(), strict=True):
        raw = obs[..., at]
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
    out["leading"] = obs[..., part_slices(players)["table"]].sum(-1) == 0
    return out
