"""The heuristic's 23 weights: their names, defaults and meanings, and the named sets.

A set of weights is a float64 array of ``NUM_WEIGHTS`` numbers, the form the kernels read. Each
member of ``Weight`` is one weight: its place in that array (``w[Weight.TEMPO]``), its default
and what it does. By name, a weight is its member's name in lower case (``"tempo"``, ``NAMES``),
and a set can be written as the weights it changes from the defaults
(``weight_set({"tempo": 20})``): that is how the tuned sets of ``WEIGHT_SETS`` are written, each
with the ``bigtwo tune`` search (``bigtwo.arena.tune``) that found it.

>>> int(Weight.TEMPO), Weight.TEMPO.default, float(DEFAULT_WEIGHTS[Weight.TEMPO])
(15, 5.0, 5.0)
>>> changed = weight_set({"tempo": 20})
>>> [(Weight(i).name.lower(), float(changed[i])) for i in np.flatnonzero(changed != DEFAULT_WEIGHTS)]
[('tempo', 20.0)]
>>> weight_mix("default+collect").shape == (2, NUM_WEIGHTS)
True
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import IntEnum

import numpy as np


class Weight(IntEnum):
    """Where each weight sits in a weights array, with its default and one-line meaning.

    The kernels index with the members (``w[Weight.LEAD]``); Numba reads them as constants."""

    EPS = 0, 0.075, "plan: cost per play on top of (1 - control)"
    SINGLE_SPAN = 1, 12.0, "control: a single has none left when this many higher cards are unseen"
    PAIR_SPAN = 2, 8.0, "control: a pair has none left when this many higher pairs are possible"
    TRIPLE_SPAN = 3, 4.0, "control: a triple has none left when this many higher triples are possible"
    SIZE = 4, 1.2, "leading: bonus per extra card shed"
    LEAD = 5, 0.15, "answering: value of taking the lead, times the play's control"
    SPEND = 6, 4.8, "answering: cost of spending control while opponents hold many cards"
    PRESS = 7, 4.0, "answering: penalty on passing when an opponent could go out"
    PRESS_HIGH = 8, 0.8, "answering while pressing: bonus per unit of control (play high)"
    DANGER = 9, 1.5, "leading: penalty for a lead of n cards while an opponent holds n"
    CASH = 10, 2.0, "leading: bonus per unit of control when the plan has at most CASH_AT plays"
    CASH_AT = 11, -1.0, "leading: CASH's most plays (-1: off; cashing control early lost games in tuning)"
    LOW_SINGLE = 12, 0.2, "plan: extra cost of a single below rank LOW_RANK"
    LOW_RANK = 13, 5.0, "plan: the rank (0 = the lowest) below which a single costs LOW_SINGLE more"
    CTRL_BONUS = 14, 0.0, "plan: value of a sure winner beyond not costing a play (0: none)"
    TEMPO = 15, 5.0, "answering: cost of passing, over (players - 1) squared (the table's owner may lead again)"
    EARLY_SPAN = 16, 4.2, "answering: SPEND fades out as an opponent's fewest cards fall by this * cards each / 13 to 3"
    SPEND_POW = 17, 1.0, "answering: SPEND grows with control to this power (spares all but the top cards)"
    DANGER_FAR = 18, 0.7, "danger from an opponent other than the next seat, relative to the next seat's"
    END_AT = 19, 3.0, "endgame: END_MULTI applies when the plan has at most this many plays"
    END_MULTI = 20, 0.0, "endgame: leading bonus of two or more cards (keep a single for last)"
    PRESS_AT = 21, 2.0, "answering: press whenever an opponent holds at most this many cards"
    PRESS_OWNER = 22, 0.5, "answering: press (0..1) when the table's owner could lead out after winning the trick"

    default: float
    meaning: str

    def __new__(cls, index: int, default: float, meaning: str) -> Weight:
        member = int.__new__(cls, index)
        member._value_ = index
        member.default = default
        member.meaning = meaning
        return member


NUM_WEIGHTS = len(Weight)
NAMES = tuple(w.name.lower() for w in Weight)  # the weights by name, in array order
if [int(w) for w in Weight] != list(range(NUM_WEIGHTS)):
    raise ValueError("Weight's indices must be 0, 1, ... in the order the weights are written")
DEFAULT_WEIGHTS = np.array([w.default for w in Weight], dtype=np.float64)


def changed_weights(changes: Mapping[str, float], base: np.ndarray = DEFAULT_WEIGHTS) -> np.ndarray:
    """A copy of ``base`` with the weights named in ``changes`` (``NAMES``) set to their values;
    ``ValueError`` for a name that is no weight or a value that is no finite number."""
    out = np.array(base, dtype=np.float64)
    for name, value in changes.items():
        if name not in NAMES:
            raise ValueError(f"unknown weight {name!r}; the weights: {', '.join(NAMES)}")
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise ValueError(f"weight {name} must be a finite number, got {value!r}")
        if not np.isfinite(value):
            raise ValueError(f"weight {name} must be a finite number, got {value!r}")
        out[NAMES.index(name)] = value
    return out


# Named sets of weights (``heuristic:weights=NAME``, ``search:weights=NAME``), as their changes
# from the defaults; each tuned set is what the ``bigtwo tune`` search in its comment finds from DEFAULT_WEIGHTS.
WEIGHT_SETS: dict[str, np.ndarray] = {
    "default": DEFAULT_WEIGHTS,
    # bigtwo tune --variant hong-kong --rule scoring=collect (3,000 deals, seed 101, 3 rounds), found by
    # a script copy of that search before it was the command; its +8.80 a game in one seat against
    # three default heuristics replays exactly with bigtwo.arena.tune.payoff_against
    "collect": changed_weights(
        {
            "eps": 0.15,
            "single_span": 4.5,
            "pair_span": 4,
            "triple_span": 2,
            "size": 0.15,
            "lead": 0.6,
            "spend": 1.2,
            "press": 8,
            "low_single": 0.8,
            "low_rank": 8,
            "ctrl_bonus": 1.2,
            "tempo": 20,
            "early_span": 8.4,
            "spend_pow": 2,
            "end_multi": -0.1,
        }
    ),
    # bigtwo tune --variant taiwan (its own cards scoring; 3,000 deals, seed 101, 3 rounds):
    # -1.86 a game in one seat against three default heuristics, which score -3.05 there
    "cards": changed_weights(
        {"eps": 0.15, "single_span": 6, "pair_span": 4, "spend": 2.4, "tempo": 20, "early_span": 8.4}
    ),
}


def weight_set(weights: object) -> np.ndarray:
    """The weights an agent is given (a copy): ``None`` is ``DEFAULT_WEIGHTS``, a name is that set
    of ``WEIGHT_SETS``, a mapping of weight names to values changes those weights from the
    defaults, anything else must be ``NUM_WEIGHTS`` finite numbers (``ValueError`` naming what is wrong)."""
    if isinstance(weights, str) and weights in WEIGHT_SETS:
        return WEIGHT_SETS[weights].copy()
    if isinstance(weights, Mapping):
        return changed_weights(weights)
    try:
        out = np.array(DEFAULT_WEIGHTS if weights is None else weights, dtype=np.float64)
    except (TypeError, ValueError):
        out = None
    if out is None or out.shape != (NUM_WEIGHTS,) or not np.isfinite(out).all():
        raise ValueError(
            f"weights must be a set's name ({', '.join(WEIGHT_SETS)}), a mapping of weight names to values "
            f"or {NUM_WEIGHTS} finite numbers, got {weights!r}"
        )
    return out


MIX = "+"  # joins the names of a mix of sets: ``opponent_weights=default+collect``


def weight_mix(weights: object) -> np.ndarray:
    """One or more sets of weights (M, ``NUM_WEIGHTS``): names joined by ``MIX``
    (``"default+collect"``), a list of sets (names or rows of numbers), or anything ``weight_set``
    takes (one set); ``ValueError`` naming what is wrong."""
    if isinstance(weights, str) and MIX in weights:
        weights = [name.strip() for name in weights.split(MIX)]
    if (
        isinstance(weights, (list, tuple, np.ndarray))
        and len(weights) > 0
        and all(isinstance(one, str) or np.ndim(one) == 1 for one in weights)
    ):
        return np.stack([weight_set(one) for one in weights])
    return weight_set(weights)[None]


__all__ = [
    "DEFAULT_WEIGHTS",
    "MIX",
    "NAMES",
    "NUM_WEIGHTS",
    "WEIGHT_SETS",
    "Weight",
    "changed_weights",
    "weight_set",
    "weight_mix",
]
