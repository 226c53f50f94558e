"""Rule variants: a frozen, hashable ``Variant`` read from YAML, every setting of RULES.md.

Named variants live in ``configs/variants/*.yaml`` (shipped in the wheel as the package
``bigtwo.configs``); a user's own YAML file may set any combination of fields. Fields not
given take their defaults (4 players, 13 cards, settings off).

Every setting is declared once, as a field of ``Variant`` (``setting``, see
``bigtwo.env.rules.declaration``): its default, what it allows, a one-line description and how the
compiled kernels receive it. The rest follows from the declarations: ``SETTINGS``, ``CHOICES``
(the settings with a fixed list; a value's place in it is the kernels' code), ``BOUNDS`` (the
numeric ranges), the loader's checks and errors, ``settings_table`` (the table in RULES.md and
``bigtwo variants --settings``), ``IP_SLOTS``/``FP_SLOTS`` (where the kernels' parameter arrays
hold each setting), ``KERNEL_CONSTANTS`` (the kernels' names for the slots and codes, written into
``bigtwo/env/engine/kernels.py`` by ``bigtwo.env.rules.generated``) and
``bigtwo.env.engine.engine.make_rules``.

>>> print(settings_table().splitlines()[2])
| `players` | `4` | 2, 3, 4 | Seats at the table. | `ip[IP_PLAYERS]` (the value) |

A straight window is five ranks written lowest first, as text ``"A-2-3-4-5"`` or a list; its
top card (whose suit breaks ties) is the last rank written unless given as
``{ranks: A-2-3-4-5, top: "2"}``. Windows are listed lowest straight first.

``jqka2_suited`` only matters where J-Q-K-A-2 is not a straight window (``tw``, ``jp``): ``flush``
keeps the suited J-Q-K-A-2 a flush (CN), ``no_play`` makes it no play at all (TW: "never a legal
hand, even in one suit").

``tiers`` multiply a ``collect`` loser's payment by its bracket: ``[[10, 2], [13, 3]]`` pays n
(cards left, 2s counted with ``penalty_multiplier_for_twos``) for 1..9, 2n from 10 and 3n from 13
cards, as ``tiered`` does. ``[]``: every loser pays n.

Every number is finite and bounded so that every payoff stays finite and every counter in
range: a game's payoff is at most 3 losers x 422 counted cards (26 cards, 2s x 100) x tier 1000 x
unit 1e6, plus a rake of 1e12, about 2.3e12, and a match of 1,000,000 games sums to about 2.3e18,
well inside float32 and float64 (no inf, no NaN); games played fit the engine's int32 counter.
Integers must be integers (``2.0`` is no ``games``); ``.inf``, ``.nan`` and numbers past the
bounds raise ``ValueError`` naming the field.

``seating`` says which way the seats sit round a table when it is shown (a label, no rule);
``turn_order``: ``fixed`` plays every game of a match in seat order (seat + 1 next);
``alternate`` reverses the order in the match's 2nd, 4th, ... game; ``random`` draws each game's
order from the game's seed and deal number. A reversed game plays seat - 1 next, which also moves
the last-card duty and the settlement order (see ``Engine``).

>>> v = load_variant("taiwan")
>>> v.opening_card, v.straights_preset, v.scoring
('3C', 'tw', 'cards')
>>> load_variant("taiwan", players=3).players
3
"""

from __future__ import annotations

import dataclasses
import json
import reprlib
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from bigtwo.env.checks import is_whole
from bigtwo.env.rules.cards import RANKS, SUIT_SYMBOLS, SUITS, card_from_text
from bigtwo.env.rules.declaration import (
    ACTION_TABLE,
    ACTION_TABLE_ROUTE,
    FP,
    IP,
    BadValue,
    Flag,
    Number,
    OneOf,
    Parsed,
    Setting,
    Whole,
    array,
    bound_text,
    declared_settings,
    fp,
    ip,
    is_number,
    kernel_constants,
    setting,
    slots,
)

# A straight window: five rank indices lowest-written first, and the rank index of its top card.
Window = tuple[tuple[int, ...], int]

_NORMAL_WINDOWS: tuple[Window, ...] = tuple((tuple(range(s, s + 5)), s + 4) for s in range(0, 8))  # 3-7 .. 10-A
_R = {r: i for i, r in enumerate(RANKS)}
STRAIGHT_PRESETS: dict[str, tuple[Window, ...]] = {
    "hk": _NORMAL_WINDOWS + (((8, 9, 10, 11, 12), 12),),  # ... J-Q-K-A-2
    "tw": _NORMAL_WINDOWS
    + (
        ((12, 0, 1, 2, 3), 12),  # 2-3-4-5-6, top card the 2
        ((11, 12, 0, 1, 2), 12),  # A-2-3-4-5 (highest), top card the 2
    ),
    "jp": _NORMAL_WINDOWS,
    "jp_a2345_low": (((11, 12, 0, 1, 2), 2),) + _NORMAL_WINDOWS,  # A-2-3-4-5 lowest, top 5
}
DEFAULT_VARIANT = "taiwan"  # the variant every ``variant=`` argument of the package defaults to

# What a game's payoff is under each scoring, in a few words (tables and reports say it).
SCORING_SUMMARY = {
    "cards": "minus the cards left",
    "tiered": "losers pay their cards left, x2 from 10, x3 from 13; the winner collects",
    "pairwise": "every pair settles the difference of their cards left",
    "win_loss": "the winner +1, the others -1/(players-1)",
    "collect": "each loser pays the winner its cards left (times its tier); the winner collects",
}

# ---------------------------------------------------------------- the values with parsers of their own

_SUITS_ALLOWED = "the four suits low to high, e.g. [D, C, H, S]"
_OPENING_ALLOWED = "a card such as 3D or 3C, or 'lowest'"
_WINDOW_ALLOWED = "five consecutive ranks written lowest first, e.g. '3-4-5-6-7' or {ranks: A-2-3-4-5, top: '2'}"
# A ``tiers`` bracket: from how many counted cards, and its multiplier (both bounded, see the docstring).
TIER_CARDS = Whole(1, 1000)
TIER_MULTIPLIER = Number(0, 1000, open_low=True)
_TIERS_ALLOWED = (
    f"a list of [from_cards, multiplier] pairs with from_cards integers >= 1 (up to {bound_text(TIER_CARDS.high)}) "
    f"strictly rising and multipliers numbers > 0 (up to {bound_text(TIER_MULTIPLIER.high)}), e.g. [[10, 2], "
    "[13, 3]]; [] for none"
)


def _parse_suit_order(value: Any) -> tuple[str, ...]:
    """``[D, C, H, S]``, ``"D C H S"`` or suit symbols, as a tuple of suit letters, each suit once."""
    seq = value.replace(",", " ").split() if isinstance(value, str) else value
    if not isinstance(seq, (list, tuple)):
        raise BadValue(_SUITS_ALLOWED)
    try:
        suits = tuple(SUITS[card_from_text("3" + str(s)) % 4] for s in seq)
    except ValueError:
        raise BadValue(_SUITS_ALLOWED) from None
    if sorted(suits) != sorted(SUITS):
        raise BadValue("the four suits low to high, each once, e.g. [D, C, H, S]")
    return suits


def _parse_opening_card(value: Any) -> str:
    """A card's text (``3D``) or ``lowest``."""
    if not isinstance(value, (str, int)) or isinstance(value, bool):
        raise BadValue(_OPENING_ALLOWED)
    if str(value).lower() == "lowest":
        return "lowest"
    try:
        cid = card_from_text(str(value))
    except ValueError:
        raise BadValue(_OPENING_ALLOWED) from None
    return RANKS[cid // 4] + SUITS[cid % 4]


def _parse_window(item: Any) -> Window:
    top_text = None
    ranks_spec = item
    if isinstance(item, dict):
        unknown = set(item) - {"ranks", "top"}
        if unknown or "ranks" not in item:
            raise BadValue(_WINDOW_ALLOWED, item)
        ranks_spec, top_text = item["ranks"], item.get("top")
    if isinstance(ranks_spec, str):
        tokens = [t for t in ranks_spec.replace("-", " ").replace(",", " ").split() if t]
    elif isinstance(ranks_spec, (list, tuple)):
        tokens = [str(t) for t in ranks_spec]
    else:
        raise BadValue(_WINDOW_ALLOWED, item)
    try:
        ranks = tuple(_R["10" if t.upper() == "T" else t.upper()] for t in tokens)
        top = ranks[-1] if top_text is None else _R["10" if str(top_text).upper() == "T" else str(top_text).upper()]
    except (KeyError, IndexError):
        raise BadValue(_WINDOW_ALLOWED, item) from None
    consecutive = all((b - a) % 13 == 1 for a, b in zip(ranks, ranks[1:], strict=False))
    if len(ranks) != 5 or not consecutive or top not in ranks:
        raise BadValue(_WINDOW_ALLOWED, item)
    return ranks, top


def _parse_straights(value: Any) -> tuple[tuple[Window, ...], str | None]:
    """A preset's name or a list of windows, as ``(windows, preset name or None)``."""
    if isinstance(value, str):
        if value not in STRAIGHT_PRESETS:
            raise BadValue(", ".join(STRAIGHT_PRESETS) + " or a list of windows")
        return STRAIGHT_PRESETS[value], value
    if not isinstance(value, (list, tuple)) or len(value) == 0:
        raise BadValue("a preset name or a list of windows")
    windows = tuple(_parse_window(w) for w in value)
    if len({frozenset(w[0]) for w in windows}) != len(windows):
        raise BadValue("each window's ranks listed once")
    return windows, None


def _parse_tiers(value: Any) -> tuple[tuple[int, float], ...]:
    """``tiers`` as ``((from_cards, multiplier), ...)``, from_cards strictly rising."""
    if not isinstance(value, (list, tuple)):
        raise BadValue(_TIERS_ALLOWED)
    out: list[tuple[int, float]] = []
    for item in value:
        if not isinstance(item, (list, tuple)) or len(item) != 2:
            raise BadValue(_TIERS_ALLOWED)
        cards, multiplier = item
        if not (is_whole(cards) and TIER_CARDS.low <= cards <= TIER_CARDS.high):
            raise BadValue(_TIERS_ALLOWED)
        if not (is_number(multiplier) and TIER_MULTIPLIER.low < multiplier <= TIER_MULTIPLIER.high):
            raise BadValue(_TIERS_ALLOWED)
        if out and cards <= out[-1][0]:
            raise BadValue(_TIERS_ALLOWED)
        out.append((int(cards), float(multiplier)))
    return tuple(out)


# How the kernels receive the array settings (``make_rules`` builds ``Rules`` from these).
def _suit_rank_array(order: tuple[str, ...]) -> np.ndarray:
    return np.array([order.index(s) for s in SUITS], dtype=np.int64)


def _windows_array(windows: tuple[Window, ...]) -> np.ndarray:
    return np.array([w for w, _top in windows], dtype=np.int64).reshape(-1, 5)


def _tiers_array(tiers: tuple[tuple[int, float], ...]) -> np.ndarray:
    return np.array(tiers, dtype=np.float64).reshape(-1, 2)


@dataclass(frozen=True)
class Variant:
    """One table's rules. Build with ``load_variant``; every field but ``name``, ``description`` and
    ``straights_preset`` is a RULES.md setting, declared once here (``setting``: its default, what it
    allows, its description and how the kernels receive it)."""

    name: str = "custom"
    players: int = setting(4, OneOf(2, 3, 4), "Seats at the table.", ip("value", "PLAYERS"))
    cards_per_player: int = setting(
        13,
        Whole(1, 26, words="an integer 1..26 (13 for 4 players; 26 for two players)"),
        "Cards dealt to each seat; players x cards_per_player is at most 52 (the rest stay undealt).",
        ip("value", "CPP"),
    )
    suit_order: tuple[str, ...] = setting(
        ("D", "C", "H", "S"),
        Parsed(_SUITS_ALLOWED, _parse_suit_order, ["D", "C", "H", "S"], ["S", "H", "C", "D"]),
        "The four suits, lowest first: which of two cards of one rank is higher.",
        array("suit_rank", _suit_rank_array),
        ACTION_TABLE_ROUTE,
    )
    opening_card: str = setting(
        "3D",
        Parsed(_OPENING_ALLOWED, _parse_opening_card, "3D", "3C", "7H", "lowest"),
        "The card whose holder leads a match's first game, which that play must hold; lowest: the lowest card dealt.",
        ip("card", "OPENING"),
    )
    opening_every_game: bool = setting(
        False,
        Flag(),
        "Every game of a match opens with opening_card (false: the previous game's winner leads freely).",
        ip("flag", "OPEN_EVERY"),
    )
    straights: tuple[Window, ...] = setting(
        STRAIGHT_PRESETS["hk"],
        Parsed(
            f"{', '.join(STRAIGHT_PRESETS)} or a list of windows (five ranks lowest first)",
            _parse_straights,
            *STRAIGHT_PRESETS,
            ["3-4-5-6-7", "9-10-J-Q-K", {"ranks": "A-2-3-4-5", "top": "A"}, "10-J-Q-K-A"],
        ),
        "Which five ranks make a straight, lowest straight first: a preset or a list of windows.",
        array("windows", _windows_array),
        ACTION_TABLE_ROUTE,
    )
    straights_preset: str | None = "hk"  # the preset ``straights`` was given as (None: a list of windows)
    jqka2_suited: str = setting(
        "flush",
        OneOf("flush", "no_play"),
        "What a suited J-Q-K-A-2 is where it is no straight window (tw, jp): a flush, or no play at all.",
        ACTION_TABLE_ROUTE,
    )
    flush_order: str = setting(
        "suit_first",
        OneOf("suit_first", "rank_first"),
        "How two flushes compare: suit, then ranks from the highest down; or ranks, then suit.",
        ACTION_TABLE_ROUTE,
    )
    pair_chain: bool = setting(
        False,
        Flag(),
        "Three pairs of consecutive ranks (5566 77) are a six-card play.",
        ip("flag", "PAIR_CHAIN"),
        ACTION_TABLE_ROUTE,
    )
    two_ends_trick: bool = setting(
        False, Flag(), "A single 2 or a triple of 2s wins the trick at once.", ip("flag", "TWO_ENDS")
    )
    last_card_rule: str = setting(
        "off",
        OneOf("off", "enforce", "liability"),
        "When the next seat holds one card: no duty; only the plays the duty allows; or any play, "
        "a breach paying if that seat wins.",
        ip("code", "LAST_CARD"),
    )
    scoring: str = setting(
        "cards",
        OneOf("cards", "tiered", "pairwise", "win_loss", "collect"),
        "How a finished game is paid (RULES.md, End of a game and scoring).",
        ip("code", "SCORING"),
    )
    tiers: tuple[tuple[int, float], ...] = setting(
        (),
        Parsed(_TIERS_ALLOWED, _parse_tiers, [], [[3, 2], [5, 3.5]]),
        "collect only: each loser's payment multiplied by its bracket of counted cards left.",
        array("tiers", _tiers_array),
    )
    unit: float = setting(1.0, Number(0, 1e6, open_low=True), "Every payoff is multiplied by this.", fp("UNIT"))
    buy_in: float = setting(
        0.0,
        Number(0, 1e12, off=0),
        "Table stakes: no seat loses more than it brought, nor wins from a seat more than it has left.",
        fp("BUY_IN"),
    )
    rake: float = setting(0.0, Number(0, 1e12, off=0), "A fee taken from every payoff each game.", fp("RAKE"))
    penalty_multiplier_for_twos: int = setting(
        1,
        Whole(1, 100, off=1),
        "Each 2 left in hand counts this many cards.",
        ip("value", "TWOS_MULT"),
    )
    games: int = setting(1, Whole(1, 1_000_000), "Games in a match.", ip("value", "GAMES"))
    target_score: float = setting(
        0.0,
        Number(0, 1e15, off=0),
        "A match also ends when a seat's score reaches this.",
        fp("TARGET"),
    )
    seating: str = setting(
        "counterclockwise",
        OneOf("clockwise", "counterclockwise"),
        "Which way seats 0, 1, 2, ... sit round the table when it is shown (a label: play order is turn_order).",
    )
    turn_order: str = setting(
        "fixed",
        OneOf("fixed", "alternate", "random"),
        "Each game's play order: the same every game, reversed every other game, or drawn per game.",
        ip("code", "TURN_ORDER"),
    )
    description: str = field(default="", compare=False)

    @property
    def direction(self) -> str:
        """Deprecated name of ``seating`` (read until 0.3)."""
        return _renamed_attribute(self, "direction")

    @property
    def direction_per_game(self) -> str:
        """Deprecated name of ``turn_order`` (read until 0.3)."""
        return _renamed_attribute(self, "direction_per_game")

    @property
    def suit_rank(self) -> tuple[int, ...]:
        """Strength of each physical suit (D, C, H, S order), 0 = lowest."""
        return tuple(self.suit_order.index(s) for s in SUITS)

    def card_values(self) -> tuple[int, ...]:
        """Each card id's value under this variant, 0 (the lowest card) .. 51: rank, then the
        variant's suit order (``rank * 4 + suit_rank[suit]``; the kernels' ``card_value``). Sorting
        by it puts cards in the variant's order.

        >>> v = load_variant("pusoy-dos")  # clubs lowest, diamonds highest
        >>> v.card_values()[:4], sorted(range(4), key=v.card_values().__getitem__)
        ((3, 0, 2, 1), [1, 3, 2, 0])
        """
        suit_rank = self.suit_rank
        return tuple(c // 4 * 4 + suit_rank[c % 4] for c in range(52))

    @property
    def opening_card_id(self) -> int:
        """Card id of ``opening_card``, or -1 for ``lowest``."""
        return -1 if self.opening_card == "lowest" else card_from_text(self.opening_card)

    def action_table_key(self) -> tuple[Any, ...]:
        """The settings that decide which plays exist and how they compare (``ACTION_TABLE_SETTINGS``,
        the settings declared with the action-table route): variants with equal keys share one action
        table (``bigtwo.env.rules.actions.action_table``) and so one set of action ids."""
        return tuple(getattr(self, name) for name in ACTION_TABLE_SETTINGS)

    def rules_key(self) -> str:
        """The rules' identity, as text: every field but ``name`` and ``description`` (``to_dict`` as
        sorted JSON). Variants with equal keys are the same rules under other names (the web table
        shares a built agent between them).

        >>> load_variant("taiwan").rules_key() == load_variant("taiwan", name="mine").rules_key()
        True
        """
        return json.dumps({k: v for k, v in self.to_dict().items() if k not in ABOUT}, sort_keys=True)

    def replace(self, **overrides: Any) -> Variant:
        """A copy with some fields changed, checked like ``load_variant``."""
        source = f"variant {self.name!r}"
        data = self.to_dict()
        data.update(_new_names(overrides, source, warn=True, stacklevel=3))
        return _build(data, source=source)

    def to_dict(self) -> dict[str, Any]:
        """Plain YAML-ready fields (``straights`` as its preset name or window texts)."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            if f.name in ("straights_preset",):
                continue
            value = getattr(self, f.name)
            if f.name == "straights":
                value = self.straights_preset or [_window_spec(w) for w in value]
            elif f.name == "suit_order":
                value = list(value)
            elif f.name == "tiers":
                value = [[cards, multiplier] for cards, multiplier in value]
            out[f.name] = value
        return out

    def describe(self) -> str:
        """Multi-line text of every setting, as ``bigtwo variants NAME`` prints it."""
        lines = [f"{self.name}: {self.description}".rstrip(": ")]
        for key, value in self.to_dict().items():
            if key in ("name", "description"):
                continue
            if key == "suit_order":
                value = " < ".join(SUIT_SYMBOLS[SUITS.index(s)] for s in value)
            elif key == "straights" and isinstance(value, str):
                value = f"{value} ({', '.join(_window_text(w) for w in self.straights)})"
            elif key == "tiers":
                value = ", ".join(f"x{m:g} from {n} cards" for n, m in self.tiers) or "none"
            lines.append(f"  {key:<28} {value}")
        return "\n".join(lines)

    @property
    def worst_payoff(self) -> float:
        """A floor under one seat's payoff for one game, settled from the cards left (``buy_in``,
        ``rake`` and last-card liability aside), in payoff units (its inverse is a natural reward scale).

        With ``n`` the most penalty cards a hand can count (``cards_per_player`` times
        ``penalty_multiplier_for_twos``): ``cards`` -n, ``tiered`` -3n (a loser pays 3n at 13 cards
        or more), ``pairwise`` -(players - 1) n (settling with every other seat), ``win_loss`` -1,
        ``collect`` -n times the highest ``tiers`` multiplier that n cards reach (1 without tiers);
        all times ``unit``. Exact for ``cards`` and ``tiered`` with 13 or more cards and no multiplier.

        >>> load_variant("taiwan").worst_payoff, load_variant("japan").worst_payoff
        (-13.0, -39.0)
        """
        n = self.cards_per_player * self.penalty_multiplier_for_twos
        collect = n * max([1.0, *(mult for start, mult in self.tiers if start <= n)])
        per_scoring = {
            "cards": n,
            "tiered": 3 * n,
            "pairwise": (self.players - 1) * n,
            "win_loss": 1,
            "collect": collect,
        }
        return -float(per_scoring[self.scoring]) * self.unit


def _window_spec(window: Window) -> str | dict[str, str]:
    """A window as YAML writes it: text, or ``{ranks, top}`` when the top card is not the last rank."""
    ranks, top = window
    text = "-".join(RANKS[r] for r in ranks)
    return text if top == ranks[-1] else {"ranks": text, "top": RANKS[top]}


def _window_text(window: Window) -> str:
    ranks, top = window
    text = "-".join(RANKS[r] for r in ranks)
    return text if top == ranks[-1] else f"{text} (top {RANKS[top]})"


# ---------------------------------------------------------------- derived from the declarations

SETTINGS: dict[str, Setting] = declared_settings(Variant)
"""Every setting, in declaration order (``Variant``'s fields but ``name``, ``description``, ``straights_preset``)."""
CHOICES: dict[str, tuple[Any, ...]] = {
    name: s.allows.values for name, s in SETTINGS.items() if isinstance(s.allows, OneOf)
}
"""The allowed values of each setting with a fixed list; the kernels read a value as its place there (``choice_code``)."""
BOUNDS: dict[str, tuple[float, float]] = {
    name: (s.allows.low, s.allows.high) for name, s in SETTINGS.items() if isinstance(s.allows, (Whole, Number))
} | {
    "tier_cards": (TIER_CARDS.low, TIER_CARDS.high),
    "tier_multiplier": (TIER_MULTIPLIER.low, TIER_MULTIPLIER.high),
}
"""The inclusive range of each numeric setting (``unit`` and tier multipliers must also be > 0)."""
IP_SLOTS: dict[str, int] = slots(SETTINGS, IP)
"""The index in the kernels' ``Rules.ip`` of each setting sent there (``make_rules``; ``kernels.IP_*``)."""
FP_SLOTS: dict[str, int] = slots(SETTINGS, FP)
"""The index in the kernels' ``Rules.fp`` of each setting sent there (``make_rules``; ``kernels.FP_*``)."""
KERNEL_CONSTANTS: dict[str, tuple[int, str]] = kernel_constants(SETTINGS)
"""The kernels' names for the slots and the codes (``IP_PLAYERS``, ``SCORING_COLLECT``, ...), each
with its value and what it is; ``bigtwo.env.rules.generated`` writes them into the kernels."""
ACTION_TABLE_SETTINGS: tuple[str, ...] = tuple(
    name for name, s in SETTINGS.items() if any(r.target == ACTION_TABLE for r in s.kernels)
)
"""The settings that shape the action table (``Variant.action_table_key``)."""
ABOUT = ("name", "description")  # fields that name and describe a variant: text, no rule
RENAMED = {"direction": "seating", "direction_per_game": "turn_order"}
"""Settings' old names (0.2) and their names now. A user's YAML file, override or attribute still
reads an old name until 0.3, with a ``DeprecationWarning``; what a record, checkpoint or room stored
under an old name is read without one (``stored_variant``)."""
RENAMED_UNTIL = "0.3"


def _renamed_attribute(variant: Variant, old: str) -> Any:
    warnings.warn(
        f"Variant.{old} is now Variant.{RENAMED[old]}; the old name goes in {RENAMED_UNTIL}",
        DeprecationWarning,
        stacklevel=3,
    )
    return getattr(variant, RENAMED[old])


def _new_names(data: dict[str, Any], source: str, warn: bool, stacklevel: int = 2) -> dict[str, Any]:
    """``data`` with each setting under its current name (``RENAMED``); ``warn``: say so with a
    ``DeprecationWarning`` naming ``source`` (``stacklevel`` as ``warnings.warn``'s, counted from
    here: 3 is the caller of the function that calls this one). An old name given beside its new
    one is an error."""
    old_names = [old for old in RENAMED if old in data]
    if not old_names:
        return data
    data = dict(data)
    for old in old_names:
        new = RENAMED[old]
        if new in data:
            raise ValueError(f"{source}: field {old!r} is the old name of {new!r}; give {new!r} only")
        if warn:
            warnings.warn(
                f"{source}: field {old!r} is now {new!r}; the old name is read until {RENAMED_UNTIL}",
                DeprecationWarning,
                stacklevel=stacklevel,
            )
        data[new] = data.pop(old)
    return data


def choice_code(setting: str, value: Any) -> int:
    """The code the kernels use for ``value`` of ``setting``: its place in ``CHOICES[setting]``.

    >>> choice_code("scoring", "cards"), choice_code("last_card_rule", "liability")
    (0, 2)
    >>> choice_code("scoring", "poker")
    Traceback (most recent call last):
    ...
    ValueError: scoring 'poker' has no code; allowed: cards, tiered, pairwise, win_loss, collect
    """
    allowed = CHOICES[setting]
    if value not in allowed:
        raise ValueError(f"{setting} {value!r} has no code; allowed: {', '.join(map(str, allowed))}")
    return allowed.index(value)


def _yaml_text(value: Any) -> str:
    """A default as a YAML file writes it: ``false``, ``1``, ``[D, C, H, S]``, ``hk``."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_yaml_text(v) for v in value) + "]"
    return str(value)


def settings_table() -> str:
    """Every setting as a Markdown table: its name, default (as YAML writes it), what it allows, its
    description and how the kernels receive it. RULES.md holds this table (``bigtwo variants --settings``
    prints it; tests/test_rules_doc.py checks that RULES.md's copy is current)."""
    defaults = Variant().to_dict()
    rows = ["| setting | default | allowed | what | kernels |", "|---|---|---|---|---|"]
    for name, s in SETTINGS.items():
        cells = [f"`{name}`", f"`{_yaml_text(defaults[name])}`", s.allows.text, s.doc, s.kernels_text]
        rows.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(rows)


_SHORT = reprlib.Repr()  # values in messages: a 400-digit number or a long text shortened
_SHORT.maxlist = _SHORT.maxtuple = 12
_SHORT.maxstring = _SHORT.maxother = 80
_SHORT.maxlong = 40


def _fail(source: str, name: str, value: Any, allowed: str) -> ValueError:
    return ValueError(f"{source}: field {name!r} has bad value {_SHORT.repr(value)}; allowed: {allowed}")


def _check_field(source: str, name: str, value: Any) -> Any:
    """``value`` of field ``name`` checked by its declaration and normalised; ``ValueError`` naming
    ``source``, the field, the bad value and what is allowed otherwise."""
    if name in ABOUT:
        if not isinstance(value, str):
            raise _fail(source, name, value, "text")
        return value
    try:
        return SETTINGS[name].allows.check(value)
    except BadValue as bad:
        raise _fail(source, name, value if bad.value is BadValue.SAME else bad.value, bad.allowed) from None


def _build(data: dict[str, Any], source: str) -> Variant:
    """A checked ``Variant`` from field values (a YAML file's, overrides); an old name (``RENAMED``)
    is read with a ``DeprecationWarning``."""
    data = _new_names(data, source, warn=True)
    known = set(SETTINGS) | set(ABOUT)
    unknown = sorted(set(data) - known)
    if unknown:
        raise ValueError(f"{source}: unknown field {unknown[0]!r}; allowed fields: {', '.join(sorted(known))}")
    kw: dict[str, Any] = {}
    for name, value in data.items():
        kw[name] = _check_field(source, name, value)
    if "straights" in kw:
        kw["straights"], kw["straights_preset"] = kw["straights"]
    variant = Variant(**kw)
    if variant.tiers and variant.scoring != "collect":
        raise ValueError(
            f"{source}: field 'tiers' is set ({data['tiers']!r}) but only scoring 'collect' uses it; "
            f"scoring is {variant.scoring!r}: set scoring: collect or tiers: []"
        )
    if variant.players * variant.cards_per_player > 52:
        raise ValueError(
            f"{source}: {variant.players} players x {variant.cards_per_player} cards needs "
            f"{variant.players * variant.cards_per_player} cards, but the deck has 52; "
            f"allowed cards_per_player for {variant.players} players: 1..{52 // variant.players}"
        )
    return variant


def stored_variant(settings: Mapping[str, Any], source: str = "stored variant", base: Variant | None = None) -> Variant:
    """The variant a record, checkpoint or room stored (``Variant.to_dict()`` of this release or an
    earlier one): fields left out take ``base``'s (default: the declared defaults), renamed settings
    (``RENAMED``) are read under their new names without a warning. ``ValueError`` naming ``source``
    for a bad field or value.

    >>> stored_variant({"name": "old", "direction_per_game": "alternate"}).turn_order
    'alternate'
    """
    if not isinstance(settings, Mapping):
        raise ValueError(f"{source}: expected a mapping of variant fields, got {type(settings).__name__}")
    data = base.to_dict() if base is not None else {}
    data.update(_new_names(dict(settings), source, warn=False))
    return _build(data, source=source)


def variant_dir() -> Path:
    """Folder of the named variants' YAML files (inside the installed package)."""
    return Path(str(resources.files("bigtwo.configs") / "variants"))


def variant_names() -> list[str]:
    """Names of the shipped variants, sorted."""
    return sorted(p.stem for p in variant_dir().glob("*.yaml"))


class _DuplicateKey(yaml.YAMLError):
    """A mapping with a key written twice."""


class _StrictLoader(yaml.SafeLoader):
    """YAML's safe loader that refuses a key written twice in one mapping (plain YAML keeps the last)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                duplicate = key in seen
            except TypeError:  # an unhashable key: the base loader says so
                break
            if duplicate:
                raise _DuplicateKey(
                    f"line {key_node.start_mark.line + 1}: key {key!r} is given twice; give each key once"
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def yaml_mapping(text: str, source: str) -> dict[str, Any]:
    """YAML text's top-level mapping of field names to values (empty text: ``{}``).

    ``ValueError`` naming ``source`` if the text is not valid YAML (a key given twice included), is
    not a mapping, or has a key that is not text."""
    try:
        data = yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass
    except _DuplicateKey as exc:
        raise ValueError(f"{source}: {exc}") from None
    except yaml.YAMLError as exc:
        raise ValueError(f"{source}: not valid YAML: {exc}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ValueError(f"{source}: expected a mapping of field: value, got {type(data).__name__}")
    for key in data:
        if not isinstance(key, str):
            raise ValueError(f"{source}: field names are text, got the key {key!r} ({type(key).__name__})")
    return data


def read_yaml_mapping(path: Path) -> dict[str, Any]:
    """A YAML file's top-level mapping (see ``yaml_mapping``); ``ValueError`` naming the file if it
    cannot be read, is a folder, is not UTF-8 text, is not valid YAML or not a mapping of names."""
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{path} is a folder, not a YAML file")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ValueError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"{path}: not UTF-8 text (byte {exc.start} is {raw[exc.start]:#04x}); save it as UTF-8"
        ) from None
    return yaml_mapping(text, str(path))


def _load_file(path: Path) -> Variant:
    data = read_yaml_mapping(path)
    data.setdefault("name", path.stem)
    return _build(data, source=str(path))


def load_variant(name_or_path: str | Path | Variant = DEFAULT_VARIANT, **overrides: Any) -> Variant:
    """A named variant (``"taiwan"``; default ``DEFAULT_VARIANT``) or a YAML file's, with fields overridden.

    Raises ``ValueError`` naming the file, the field, the bad value and what is allowed.
    """
    if isinstance(name_or_path, Variant):
        base = name_or_path
    else:
        text = str(name_or_path)
        candidate = Path(text)
        if text in variant_names():
            base = _load_file(variant_dir() / f"{text}.yaml")
        elif candidate.suffix in (".yaml", ".yml") or candidate.exists():
            if candidate.is_dir():
                raise ValueError(f"variant {text!r} is a folder; give a variant name or a YAML file")
            if not candidate.is_file():
                raise ValueError(f"variant file {text!r} does not exist")
            base = _load_file(candidate)
        else:
            raise ValueError(
                f"unknown variant {text!r}; allowed: {', '.join(variant_names())} or a path to a YAML file"
            )
    if not overrides:
        return base
    return base.replace(**_new_names(overrides, f"variant {base.name!r}", warn=True, stacklevel=3))
