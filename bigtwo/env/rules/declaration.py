"""How a rule setting is declared: one ``setting(...)`` per ``Variant`` field says all there is to say.

Each setting of ``bigtwo.env.rules.variant.Variant`` is a dataclass field made by ``setting``, which
keeps together:

- its default (the field's own default),
- what it allows (``OneOf`` a fixed list, a ``Flag``, a ``Whole`` number or a ``Number`` in a range,
  or ``Parsed`` by a function of its own), in words for tables and errors, and how a value is
  checked and normalised,
- a one-line description,
- how the compiled kernels receive it (``Route``): a named slot of the integer parameters ``ip``
  (the value, its code in its list, a flag or a card id), a named slot of the number parameters
  ``fp``, one of the kernels' ``Rules`` arrays, the action table, or nothing (a label),
- the values a test plays it with (``Allowed.examples``: every value of a list, both of a flag, the
  low end of a range and a step above it, or the ``examples`` a ``Parsed`` setting names).

What the other places need is derived from these declarations (``bigtwo.env.rules.variant``):
``CHOICES``, ``BOUNDS``, the loader's checks, the settings table (RULES.md, ``bigtwo variants
--settings``), the kernels' slot indices (``IP_SLOTS``, ``FP_SLOTS``), the kernels' named constants
(``KERNEL_CONSTANTS``: ``IP_<slot>``, ``FP_<slot>`` and a code's ``<slot>_<VALUE>``, written into
``bigtwo/env/engine/kernels.py`` by ``bigtwo.env.rules.generated``),
``bigtwo.env.engine.engine.make_rules`` and the differential test's runs over every setting's
examples. The kernels compile in the slot indices and the choice codes (a value's place in its
``OneOf`` list), so this module and ``variant`` are part of the kernel cache's key
(``bigtwo.env.engine.jit.COMPILED_IN``).

>>> scoring = OneOf("cards", "tiered")
>>> scoring.check("tiered"), scoring.code("tiered"), scoring.text
('tiered', 1, 'cards, tiered')
>>> Whole(1, 100, off=1).check(3), Whole(1, 100, off=1).text
(3, 'an integer >= 1 (1 = off) and <= 100')
>>> Number(0, 1e6, open_low=True).check(2)
2.0
>>> scoring.examples, Whole(1, 100, off=1).examples, Number(0, 1e12, off=0).examples
(('cards', 'tiered'), (1, 2), (0.0, 1.5))
>>> try:
...     Flag().check("yes")
... except BadValue as bad:
...     print(bad.allowed)
true or false
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bigtwo.env.checks import is_whole
from bigtwo.env.rules.cards import card_from_text


class BadValue(ValueError):
    """A value a setting does not allow: what it allows (``allowed``) and, when the bad part is one
    item of the value, that item (``value``; ``SAME``: the whole value). The loader adds the source
    and the field's name."""

    SAME: Any = object()

    def __init__(self, allowed: str, value: Any = SAME) -> None:
        super().__init__(allowed)
        self.allowed = allowed
        self.value = value


def is_number(value: Any) -> bool:
    """A finite ``int`` or ``float``, not a bool (ints of any size compare without converting)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return isinstance(value, int) or math.isfinite(value)


def bound_text(x: float) -> str:
    """A bound as tables and errors write it: ``1000``, ``1e6``, ``1e12``, ``1,000,000`` for an integer's."""
    return f"{x:.0e}".replace("e+0", "e").replace("e+", "e") if x >= 1e6 else f"{x:g}"


class Allowed:
    """What a setting allows: ``text`` says it in words, ``check`` returns the value normalised
    (an int as ``int``, a card as its text, ...) or raises ``BadValue``."""

    text: str

    def check(self, value: Any) -> Any:
        raise NotImplementedError

    @property
    def examples(self) -> tuple[Any, ...]:
        """A few allowed values, as a YAML file gives them, that the differential test plays
        (tests/test_differential.py: one run per value)."""
        raise NotImplementedError


@dataclass(frozen=True, init=False)
class OneOf(Allowed):
    """One of a fixed list of values (text, or integers). A value's place in the list is its code,
    the number the kernels read (``code``). YAML 1.1 reads a bare ``off`` as ``false``: a list
    holding ``"off"`` takes ``false`` as ``"off"``."""

    values: tuple[Any, ...]

    def __init__(self, *values: Any) -> None:
        if not values or len(set(values)) != len(values):
            raise ValueError(f"OneOf needs distinct values, got {values!r}")
        object.__setattr__(self, "values", values)

    @property
    def text(self) -> str:  # type: ignore[override]
        return ", ".join(map(str, self.values))

    def check(self, value: Any) -> Any:
        if value is False and "off" in self.values:
            value = "off"
        whole = all(is_whole(v) for v in self.values)
        if not (is_whole(value) if whole else isinstance(value, str)) or value not in self.values:
            raise BadValue(self.text)
        return int(value) if whole else value

    def code(self, value: Any) -> int:
        """``value``'s place in the list (``ValueError`` when it is not in it)."""
        return self.values.index(value)

    @property
    def examples(self) -> tuple[Any, ...]:
        """Every value of the list."""
        return self.values


@dataclass(frozen=True)
class Flag(Allowed):
    """``true`` or ``false`` (no 0/1, no text)."""

    text: str = "true or false"

    def check(self, value: Any) -> bool:
        if not isinstance(value, bool):
            raise BadValue(self.text)
        return value

    @property
    def examples(self) -> tuple[bool, ...]:
        """Both."""
        return (False, True)


@dataclass(frozen=True)
class Whole(Allowed):
    """An integer ``low <= value <= high`` (not a bool, not ``2.0``); ``off``: the value that
    switches the setting off, said in the text."""

    low: int
    high: int
    off: int | None = None
    words: str = ""  # the text, when the plain one does not say enough

    @property
    def text(self) -> str:  # type: ignore[override]
        off = "" if self.off is None else f" ({self.off} = off)"
        return self.words or f"an integer >= {self.low}{off} and <= {self.high:,}"

    def check(self, value: Any) -> int:
        if not is_whole(value) or not self.low <= value <= self.high:
            raise BadValue(self.text)
        return int(value)

    @property
    def examples(self) -> tuple[int, ...]:
        """The low end and the integer above it (the high ends, such as a match of 1,000,000
        games, are too long to play)."""
        return (self.low, self.low + 1)


@dataclass(frozen=True)
class Number(Allowed):
    """A finite number ``low <= value <= high`` (``low < value`` when ``open_low``), read as a float;
    ``off``: the value that switches the setting off, said in the text."""

    low: float
    high: float
    open_low: bool = False
    off: float | None = None

    @property
    def text(self) -> str:  # type: ignore[override]
        off = "" if self.off is None else f" ({self.off:g} = off)"
        return f"a finite number {'>' if self.open_low else '>='} {self.low:g}{off} and <= {bound_text(self.high)}"

    def check(self, value: Any) -> float:
        above = is_number(value) and (value > self.low if self.open_low else value >= self.low)
        if not above or value > self.high:
            raise BadValue(self.text)
        return float(value)

    @property
    def examples(self) -> tuple[float, ...]:
        """The low end (when allowed) and a fraction above it: payoffs of a table's size, which the
        engine and the reference sum alike to the last bit."""
        return (float(self.low), self.low + 1.5) if not self.open_low else (self.low + 1.5,)


@dataclass(frozen=True, init=False)
class Parsed(Allowed):
    """A value read by a function of its own (``parse``: the value normalised, or ``BadValue``),
    with the ``examples`` a test plays it with (as a YAML file gives them)."""

    text: str
    parse: Callable[[Any], Any] = field(compare=False)
    given: tuple[Any, ...] = field(compare=False)  # the examples

    def __init__(self, text: str, parse: Callable[[Any], Any], *examples: Any) -> None:
        if not examples:
            raise ValueError(f"Parsed {text!r} needs examples for the tests to play")
        object.__setattr__(self, "text", text)
        object.__setattr__(self, "parse", parse)
        object.__setattr__(self, "given", examples)

    def check(self, value: Any) -> Any:
        return self.parse(value)

    @property
    def examples(self) -> tuple[Any, ...]:
        """The examples the declaration names."""
        return self.given


# How the kernels receive a setting (``Route.target``): a slot of ``Rules.ip`` (int64) or of
# ``Rules.fp`` (float64), one of ``Rules``' arrays (by its name), or the action table.
IP, FP, ACTION_TABLE = "ip", "fp", "action_table"
RULES_ARRAYS = ("suit_rank", "windows", "tiers")  # the ``Rules`` arrays a setting is made into
# What an ``ip`` slot holds: the value itself, its code (place in its ``OneOf``), 1/0 for a flag, a card's id.
IP_HOLDS = {"value": "the value", "code": "its place in the list", "flag": "1 or 0", "card": "the card's id"}
IP_ENCODINGS = tuple(IP_HOLDS)


@dataclass(frozen=True)
class Route:
    """One way the kernels receive a setting: ``target`` (``IP``, ``FP``, a name of ``RULES_ARRAYS``
    or ``ACTION_TABLE``), for ``IP`` what the slot holds (``encoding``), for ``IP`` and ``FP`` the
    slot's name (``slot``: the kernels read it as ``IP_<slot>``/``FP_<slot>``, a code as
    ``<slot>_<VALUE>``); an array is built from the value by ``build``. Make one with ``ip``, ``fp``,
    ``array`` or ``ACTION_TABLE_ROUTE``."""

    target: str
    encoding: str = ""
    build: Callable[[Any], Any] | None = field(default=None, compare=False)
    slot: str = ""

    @property
    def constant(self) -> str:
        """The kernels' name for the slot (``IP_PLAYERS``), or "" for a route with no slot."""
        return f"{self.target.upper()}_{self.slot}" if self.slot else ""

    @property
    def text(self) -> str:
        """In words, for the settings table."""
        if self.target == IP:
            return f"`ip[{self.constant}]` ({IP_HOLDS[self.encoding]})"
        if self.target == FP:
            return f"`fp[{self.constant}]`"
        if self.target == ACTION_TABLE:
            return "the action table"
        return f"`Rules.{self.target}`"


_SLOT_NAME = re.compile(r"[A-Z][A-Z0-9_]*")


def _slot_name(slot: str) -> str:
    if not _SLOT_NAME.fullmatch(slot):
        raise ValueError(f"slot name {slot!r}: upper-case letters, digits and _, e.g. 'TWOS_MULT'")
    return slot


def ip(encoding: str, slot: str) -> Route:
    """An ``ip`` slot named ``slot`` (the kernels' ``IP_<slot>``) holding the value (``"value"``),
    its code (``"code"``; the kernels name each code ``<slot>_<VALUE>``), 1/0 (``"flag"``) or a
    card id (``"card"``)."""
    if encoding not in IP_ENCODINGS:
        raise ValueError(f"ip slot encoding {encoding!r}; allowed: {', '.join(IP_ENCODINGS)}")
    return Route(IP, encoding, slot=_slot_name(slot))


def fp(slot: str) -> Route:
    """An ``fp`` slot named ``slot`` (the kernels' ``FP_<slot>``) holding the value as a float."""
    return Route(FP, slot=_slot_name(slot))


def array(name: str, build: Callable[[Any], Any]) -> Route:
    """``Rules.<name>``, built from the value by ``build``."""
    if name not in RULES_ARRAYS:
        raise ValueError(f"Rules array {name!r}; allowed: {', '.join(RULES_ARRAYS)}")
    return Route(name, build=build)


ACTION_TABLE_ROUTE = Route(ACTION_TABLE)  # shapes the action table: which plays exist, how they compare


def setting(default: Any, allows: Allowed, doc: str, *kernels: Route) -> Any:
    """One ``Variant`` field: its ``default``, what it ``allows``, its one-line ``doc`` and the
    ``kernels`` routes that carry it to the compiled kernels (none: a label the kernels never read)."""
    return field(default=default, metadata={"allows": allows, "doc": doc, "kernels": kernels})


@dataclass(frozen=True)
class Setting:
    """A declared setting, read back from its field (``declared_settings``)."""

    name: str
    allows: Allowed
    doc: str
    kernels: tuple[Route, ...]

    @property
    def kernels_text(self) -> str:
        """How the kernels receive it, in words (``nothing (a label)`` when they do not)."""
        return "; ".join(route.text for route in self.kernels) or "nothing (a label)"

    def encode(self, route: Route, value: Any) -> Any:
        """What ``route`` carries to the kernels for ``value`` (a number, an array, the value itself)."""
        if route.target == IP:
            if route.encoding == "code":
                if not isinstance(self.allows, OneOf):
                    raise TypeError(f"setting {self.name!r}: an ip code needs OneOf, not {self.allows!r}")
                return self.allows.code(value)
            if route.encoding == "card":
                return -1 if value == "lowest" else card_from_text(value)
            return int(value)
        if route.target == FP:
            return float(value)
        if route.build is not None:
            return route.build(value)
        return value


def declared_settings(cls: type) -> dict[str, Setting]:
    """Every field of the dataclass ``cls`` made by ``setting``, in declaration order."""
    return {
        f.name: Setting(f.name, f.metadata["allows"], f.metadata["doc"], f.metadata["kernels"])
        for f in dataclasses.fields(cls)
        if "allows" in f.metadata
    }


def slots(settings: dict[str, Setting], target: str) -> dict[str, int]:
    """The slot of each setting routed to ``target`` (``IP`` or ``FP``): 0, 1, ... in declaration order."""
    names = [s.name for s in settings.values() if any(r.target == target for r in s.kernels)]
    return {name: i for i, name in enumerate(names)}


def kernel_constants(settings: dict[str, Setting]) -> dict[str, tuple[int, str]]:
    """The kernels' named constants, each with what it is in words: ``IP_<slot>`` and ``FP_<slot>``
    (the slot's index, ``slots``) and, for an ``ip`` slot holding a code, ``<slot>_<VALUE>`` for each
    value of the list (its code). ``bigtwo.env.rules.generated`` writes them into the kernels' source.

    >>> from bigtwo.env.rules.variant import SETTINGS
    >>> kernel_constants(SETTINGS)["IP_PLAYERS"], kernel_constants(SETTINGS)["SCORING_WIN_LOSS"]
    ((0, 'players: the value'), (3, 'scoring: win_loss'))
    """
    named: list[tuple[str, int, str]] = []
    codes: list[tuple[str, int, str]] = []
    for target in (IP, FP):
        for name, index in slots(settings, target).items():
            setting = settings[name]
            route = next(r for r in setting.kernels if r.target == target)
            named.append((route.constant, index, f"{name}: {IP_HOLDS.get(route.encoding, 'the value')}"))
            if route.encoding == "code":
                if not isinstance(setting.allows, OneOf):
                    raise TypeError(f"setting {name!r}: an ip code needs OneOf, not {setting.allows!r}")
                codes += [
                    (f"{route.slot}_{str(v).upper()}", setting.allows.code(v), f"{name}: {v}")
                    for v in setting.allows.values
                ]
    out = {const: (value, what) for const, value, what in named + codes}
    if len(out) != len(named) + len(codes):
        repeated = sorted({c for c, _, _ in named + codes if [n for n, _, _ in named + codes].count(c) > 1})
        raise ValueError(f"kernel constants named twice: {repeated}; give each slot a name of its own")
    return out
