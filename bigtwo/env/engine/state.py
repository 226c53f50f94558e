"""Privileged global state: the whole deal and the game so far, as a flat float32 vector.

**Privileged**: this vector holds every seat's hand. It is for centralised critics (a value
function trained with the whole deal in view, as in MAPPO-style self-play) and for analysis,
never for acting: a policy that reads it sees cards its seat cannot see. ``observe`` (what an
agent acts on, ``bigtwo.env.engine.observation``) holds nothing of it beyond what is public or its own.

State version ``STATE_VERSION`` = 0. The vector is laid out from a *view*: a seat ``v``, or
``ABSOLUTE`` (-1). Place ``k`` of the view is the seat ``k`` places after ``v`` in the current
game's play order (``v`` first, then the others as the observation's relative seats run: a
reversed game counts the other way round the table), or seat ``k`` itself in absolute order
(``ABSOLUTE``: seat 0 first, whatever the direction; the PettingZoo env's ``state()``). A
critic for seat ``v`` reads the view from ``v`` (``Engine.global_state(seats)``,
``VectorEnv.global_state()``: the seats to act); every view is the absolute one with its seats
permuted. ``P`` is the number of players, ``K`` = 8 moves of history (``kernels.HISTORY``); a
play's *strength within its size* is as in the observation (``ActionTable.places``). Layout
(``state_size(P)`` = 209 + 128 P; 721 for 4):

| index range, P players | 4 players | part | what |
|---|---|---|---|
| ``[0, 52 P)`` | ``[0, 208)`` | ``hands`` | every place's hand (52 per place): the whole deal as it stands |
| ``[52 P, 104 P)`` | ``[208, 416)`` | ``played`` | cards each place has played this game (52 per seat) |
| ``[104 P, 105 P)`` | ``[416, 420)`` | ``cards_left_fraction`` | cards left per place / cards_per_player |
| ``[105 P, 52 + 105 P)`` | ``[420, 472)`` | ``table`` | the play on the table (empty when leading) |
| ``[52 + 105 P, 62 + 105 P)`` | ``[472, 482)`` | ``table_kind`` | its kind, one-hot over ``KINDS`` (slot 0 is set when leading) |
| ``[62 + 105 P, 62 + 106 P)`` | ``[482, 486)`` | ``table_seat`` | who made it, one-hot over places |
| ``[62 + 106 P, 62 + 107 P)`` | ``[486, 490)`` | ``passes`` | passes in a row since it, one-hot 0..P-1 |
| ``[62 + 107 P, 62 + 108 P)`` | ``[490, 494)`` | ``to_act`` | whose turn, one-hot over places (all 0 once the match is over) |
| ``[62 + 108 P, 114 + 108 P)`` | ``[494, 546)`` | ``opening_card`` | the card the game's first play must hold, one-hot, while that play is owed |
| ``[114 + 108 P, 118 + 108 P)`` | ``[546, 550)`` | ``duty`` | the seat to act's last-card duty, one-hot: none, lead 2+ cards, lead the highest single, answer a single with the highest card |
| ``[118 + 108 P, 118 + 116 P)`` | ``[550, 582)`` | ``recent_seat`` | the game's last 8 moves (passes count), most recent first: who made each, one-hot over places per move (all 0 before the game had that many) |
| ``[118 + 116 P, 198 + 116 P)`` | ``[582, 662)`` | ``recent_kind`` | each of those moves' kind, one-hot over ``KINDS`` per move (slot 0: a pass) |
| ``[198 + 116 P, 206 + 116 P)`` | ``[662, 670)`` | ``recent_strength`` | each of those plays' strength within its size, 0 (weakest) .. 1 (strongest); 0 for a pass |
| ``[206 + 116 P, 206 + 121 P)`` | ``[670, 690)`` | ``passed_on`` | per place and play size 1, 2, 3, 5, 6: it passed on a table play of that size this game |
| ``[206 + 121 P, 206 + 126 P)`` | ``[690, 710)`` | ``passed_on_strength`` | the weakest such play's strength within its size (0 where none) |
| ``[206 + 126 P, 206 + 127 P)`` | ``[710, 714)`` | ``match_scores`` | match score so far per place / abs(``Variant.worst_payoff``) (one game's floor) |
| ``[206 + 127 P, 207 + 127 P)`` | ``[714, 715)`` | ``games_played_fraction`` | games finished in this match / the match's games |
| ``[207 + 127 P, 208 + 127 P)`` | ``[715, 716)`` | ``first_game`` | this is the match's first game |
| ``[208 + 127 P, 208 + 128 P)`` | ``[716, 720)`` | ``breach`` | per place: it broke the last-card rule against the seat after it this game (liability: it pays if that seat wins) |
| ``[208 + 128 P, 209 + 128 P)`` | ``[720, 721)`` | ``reversed`` | this game plays in reversed seat order (``turn_order``) |

``STATE_LAYOUT`` is the one declaration of this table (``state_table`` writes it; a test checks
that this one matches), in the observation's ``ObsPart`` terms: the parts the observation has
too are its very ``LAYOUT`` entries (said of places where those say relative seats), and the
observation's layout tools place and read it too: ``state_size``, ``state_slices``, ``state_bounds`` (every slot in
[0, 1] but the match scores, within +-``observation.match_score_bound``), ``decode_state``
(every part by name, places as indices, ``-1`` for none) and, in kernels, ``state_start``
(indexed by ``StatePart``). The parts that the observation has too (the table, the history, what
each seat passed on, the match) are written by the same kernel helpers
(``observation.put_table``, ``put_recent``, ``put_seat``), so both say the same.

Where it is offered (computed only when asked: the ordinary step and observation never pay for
it): ``Engine.global_state(seats=None, out=None)`` (N games at once, each from its own view;
default the seat to act), ``VectorEnv.global_state()`` (the seats to act, beside the
observations ``step`` returns) and the PettingZoo env's ``state()`` / ``state_space``
(``ABSOLUTE``).

>>> from bigtwo.env import Engine
>>> eng = Engine("taiwan", num_matches=2, seed=3)
>>> eng.global_state().shape, state_size(4)
((2, 721), 721)
>>> parts = decode_state(eng.global_state(np.array([ABSOLUTE, ABSOLUTE])), 4)
>>> parts["hands"].sum(-1).tolist()  # 13 cards per seat, every seat's hand
[[13, 13, 13, 13], [13, 13, 13, 13]]

Version history (a critic trained on one version reads that one):

* 0: first layout.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from bigtwo.env.engine.jit import njit
from bigtwo.env.engine.kernels import FP_SCORE_SCALE, IP_CPP, IP_GAMES, IP_PLAYERS
from bigtwo.env.engine.observation import (
    LAYOUT,
    SEAT_PART_NAMES,
    ObsPart,
    absolute_seat,
    decode_observation,
    index_enum,
    layout_starts,
    layout_table,
    obs_bounds,
    obs_size,
    part_slices,
    put_recent,
    put_seat,
    put_table,
    seat_bases,
    size_formula,
    table_view,
    view_place,
    view_seat,
    write_cards,
)
from bigtwo.env.rules.variant import Variant

STATE_VERSION = 0  # bump when the state changes (see the version history above)
ABSOLUTE = -1  # the view in absolute seat order (seat 0 first), for ``Engine.global_state``'s seats

_SEEN = {part.name: part for part in LAYOUT}  # the observation's parts, most of which the state shares


def _by_place(name: str, what: str | None = None) -> ObsPart:
    """The observation's part ``name`` as the state has it: its slots and reading, said of places
    instead of relative seats (or said as ``what``)."""
    part = _SEEN[name]
    return replace(part, what=what if what is not None else part.what.replace("relative seat", "place"))


STATE_LAYOUT: tuple[ObsPart, ...] = (
    ObsPart("hands", 0, 52, "seat_cards", "every place's hand (52 per place): the whole deal as it stands"),
    _by_place("played"),
    _by_place("cards_left_fraction"),
    _SEEN["table"],
    _SEEN["table_kind"],
    _by_place("table_seat"),
    _SEEN["passes"],
    ObsPart("to_act", 0, 1, "index_or_none", "whose turn, one-hot over places (all 0 once the match is over)"),
    _by_place("opening_card", "the card the game's first play must hold, one-hot, while that play is owed"),
    _by_place("duty", "the seat to act's " + _SEEN["duty"].what),
    _by_place("recent_seat"),
    _SEEN["recent_kind"],
    _SEEN["recent_strength"],
    _by_place("passed_on"),
    _SEEN["passed_on_strength"],
    _by_place("match_scores"),
    _SEEN["games_played_fraction"],
    _SEEN["first_game"],
    ObsPart(
        "breach",
        0,
        1,
        "flags",
        "per place: it broke the last-card rule against the seat after it this game (liability: it pays if that "
        "seat wins)",
    ),
    _SEEN["reversed"],
)
StatePart = index_enum("StatePart", STATE_LAYOUT, __name__)
StatePart.__doc__ = "Index of each ``STATE_LAYOUT`` part, by its name in capitals (``StatePart.HANDS``)."
_FIXED_START, _SEAT_START = layout_starts(STATE_LAYOUT)
_SEAT_PARTS = np.array([StatePart[name] for name in SEAT_PART_NAMES], dtype=np.int64)  # ``seat_bases``


def state_size(players: int) -> int:
    """Length of a state vector for ``players`` seats."""
    return obs_size(players, STATE_LAYOUT)


def state_slices(players: int) -> dict[str, slice]:
    """Each part's slots in a state vector for ``players`` seats, by name, in layout order.

    >>> state_slices(4)["to_act"]
    slice(490, 494, None)
    """
    return part_slices(players, STATE_LAYOUT)


def state_table(players: int = 4) -> str:
    """The module docstring's layout table, written from ``STATE_LAYOUT`` (one row per part)."""
    return layout_table(players, STATE_LAYOUT)


def state_size_formula() -> str:
    """``state_size(P)`` as the docstring writes it (``209 + 128 P``)."""
    return size_formula(STATE_LAYOUT)


def state_bounds(variant: Variant) -> tuple[np.ndarray, np.ndarray]:
    """Each slot's lowest and highest value under ``variant`` (float32, ``state_size(P)`` long):
    [0, 1], and +-``observation.match_score_bound`` for the match scores."""
    return obs_bounds(variant, STATE_LAYOUT)


def decode_state(state: np.ndarray, players: int) -> dict[str, np.ndarray]:
    """Split one state vector (or a batch, leading axes kept) into its ``STATE_LAYOUT`` parts, by
    name, plus ``leading``: card parts as bool arrays over card ids (``hands``, ``played``:
    (P, 52), one row per place), one-hot parts as the index set (places; -1 for none)."""
    return decode_observation(state, players, STATE_LAYOUT, what="a state vector")


# ---------------------------------------------------------------- kernels


@njit(inline="always")
def state_start(part, players):
    """First slot of ``part`` (a ``StatePart``) in a state vector for ``players`` seats (kernels)."""
    return _FIXED_START[part] + _SEAT_START[part] * players


@njit
def state_one(g, view, R, S, out):
    """Write game ``g``'s state from ``view`` (a seat, or ``ABSOLUTE``) into ``out`` (zeroed here).
    Places are turned to seats by ``view_seat`` and back by ``view_place`` only."""
    players = R.ip[IP_PLAYERS]
    cpp = R.ip[IP_CPP]
    out[:] = 0.0
    hands_base = state_start(StatePart.HANDS, players)
    bases = seat_bases(_FIXED_START, _SEAT_START, _SEAT_PARTS, players)
    breach_base = state_start(StatePart.BREACH, players)
    rev = S.reverse[g]
    for k in range(players):
        s = view_seat(view, k, players, rev)
        write_cards(out, hands_base + 52 * k, S.hands[g, s])
        score = S.match_scores[g, s] * R.fp[FP_SCORE_SCALE]
        put_seat(out, k, bases, S.played[g, s], S.counts[g, s], cpp, S.passed_on[g, s], score, R.places)
        if S.breach[g, absolute_seat(s, 1, players, rev)]:  # flagged on the seat it was broken against
            out[breach_base + k] = 1.0
    put_table(
        out,
        state_start(StatePart.TABLE, players),
        state_start(StatePart.TABLE_KIND, players),
        state_start(StatePart.TABLE_SEAT, players),
        state_start(StatePart.PASSES, players),
        table_view(view, S.table_action[g], S.table_seat[g], S.passes[g], R.masks, R.kinds, players, rev),
    )
    if S.current[g] >= 0:
        out[state_start(StatePart.TO_ACT, players) + view_place(view, S.current[g], players, rev)] = 1.0
    if S.opening[g] >= 0:
        out[state_start(StatePart.OPENING_CARD, players) + S.opening[g]] = 1.0
    out[state_start(StatePart.DUTY, players) + S.duty[g]] = 1.0
    put_recent(
        out,
        state_start(StatePart.RECENT_SEAT, players),
        state_start(StatePart.RECENT_KIND, players),
        state_start(StatePart.RECENT_STRENGTH, players),
        S.hist_seat[g],
        S.hist_action[g],
        view,
        S.reverse[g],
        players,
        R.kinds,
        R.places,
    )
    out[state_start(StatePart.GAMES_PLAYED_FRACTION, players)] = S.games_played[g] / R.ip[IP_GAMES]
    if S.games_played[g] == 0:
        out[state_start(StatePart.FIRST_GAME, players)] = 1.0
    if S.reverse[g]:
        out[state_start(StatePart.REVERSED, players)] = 1.0


@njit(nogil=True)
def state_all(views, out, R, S):
    """``state_one`` for every game ``g`` of the batch, from ``views[g]``, into ``out[g]``."""
    for g in range(out.shape[0]):
        state_one(g, views[g], R, S, out[g])


__all__ = [
    "ABSOLUTE",
    "STATE_LAYOUT",
    "STATE_VERSION",
    "StatePart",
    "decode_state",
    "state_all",
    "state_bounds",
    "state_one",
    "state_size",
    "state_size_formula",
    "state_slices",
    "state_start",
    "state_table",
]
