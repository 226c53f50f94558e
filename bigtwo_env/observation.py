"""Observations: what one seat sees, laid out relative to that seat, as a flat float32 vector.

Relative seat ``k`` is the seat ``k`` places after the observer in play order (``k = 0`` is the
observer). ``P`` is the number of players. Layout (``obs_size(P)`` = 182 + 55 P; 402 for 4):

| range | what |
|---|---|
| ``[0, 52)`` | own hand, one slot per card id |
| ``[52, 52 + 52 P)`` | cards each relative seat has played this game (52 per seat) |
| next ``P`` | cards left per relative seat / cards_per_player |
| next 52 | the play on the table (empty when leading) |
| next 10 | its kind, one-hot over ``KINDS`` (slot 0 is set when leading) |
| next ``P`` | who made it, one-hot over relative seats |
| next ``P`` | passes in a row since it, one-hot 0..P-1 |
| next 52 | the card the observer's play must hold (opening duty), one-hot |
| next 4 | last-card duty, one-hot: none, lead 2+ cards, lead the highest single, answer a single with the highest card |
| next 12 | the observer's own legal-move summary: can pass, can play each size 1, 2, 3, 5, 6 (slots 1..5), and 6 zeros reserved |

Nothing here depends on cards the observer cannot see: the other hands enter only as counts.
The duty slots are filled only for the seat to act (the only seat with a duty).
"""

from __future__ import annotations

import numpy as np

from .jit import njit
from .kernels import U1, Rules, State

NUM_KINDS = 10
EXTRA = 12


def obs_size(players: int) -> int:
    """Length of an observation vector for ``players`` seats."""
    return 52 + 52 * players + players + 52 + NUM_KINDS + players + players + 52 + 4 + EXTRA


@njit
def _put_cards(out, base, mask):
    for c in range(52):
        if mask & (U1 << np.uint64(c)):
            out[base + c] = 1.0


@njit
def observe_one(g, seat, R, S, out):
    """Write game ``g`` as ``seat`` sees it into ``out`` (zeroed here). The one place that
    rotates seats to the observer."""
    players = R.ip[0]
    cpp = R.ip[1]
    out[:] = 0.0
    if seat < 0:
        return
    _put_cards(out, 0, S.hands[g, seat])
    base = 52
    for k in range(players):
        _put_cards(out, base + 52 * k, S.played[g, (seat + k) % players])
    base += 52 * players
    for k in range(players):
        out[base + k] = S.counts[g, (seat + k) % players] / cpp
    base += players
    t = S.table_action[g]
    if t > 0:
        _put_cards(out, base, R.masks[t])
    base += 52
    out[base + (R.kinds[t] if t > 0 else 0)] = 1.0
    base += NUM_KINDS
    if S.table_seat[g] >= 0:
        out[base + (S.table_seat[g] - seat) % players] = 1.0
    base += players
    out[base + min(S.passes[g], players - 1)] = 1.0
    base += players
    acting = S.current[g] == seat
    if acting and S.opening[g] >= 0:
        out[base + S.opening[g]] = 1.0
    base += 52
    out[base + (S.duty[g] if acting else 0)] = 1.0
    base += 4
    if acting:
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


__all__ = ["decode_observation", "obs_size", "observe_all", "observe_one", "Rules", "State"]


def decode_observation(obs: np.ndarray, players: int) -> dict[str, np.ndarray]:
    """Split one observation (or a batch, leading axes kept) into named parts, for agents and
    notebooks. Card parts are bool arrays over card ids; seats are relative to the observer."""
    obs = np.asarray(obs)
    P = players
    parts: dict[str, np.ndarray] = {}
    i = 0

    def take(name: str, n: int) -> None:
        nonlocal i
        parts[name] = obs[..., i : i + n]
        i += n

    take("hand", 52)
    take("played", 52 * P)
    take("cards_left", P)
    take("table", 52)
    take("table_kind", NUM_KINDS)
    take("table_seat", P)
    take("passes", P)
    take("opening_card", 52)
    take("duty", 4)
    take("legal_summary", EXTRA)
    out = {
        "hand": parts["hand"] > 0.5,
        "played": (parts["played"] > 0.5).reshape(*obs.shape[:-1], P, 52),
        "table": parts["table"] > 0.5,
        "opening_card": parts["opening_card"] > 0.5,
        "cards_left_fraction": parts["cards_left"],
        "table_kind": parts["table_kind"].argmax(-1),
        "leading": parts["table"].sum(-1) == 0,
        "table_seat": np.where(parts["table_seat"].sum(-1) > 0, parts["table_seat"].argmax(-1), -1),
        "passes": parts["passes"].argmax(-1),
        "duty": parts["duty"].argmax(-1),
    }
    return out
