"""How a rule setting is declared: one ``setting(...)`` per ``Variant`` field says all there is to say.

Each setting of ``bigtwo.env.rules.variant.Variant`` is a dataclass field made by ``setting``, which
keeps together:

- its default (the field's own default),
- what it allows (``OneOf`` a fixed list, a ``Flag``, a ``Whole`` number or a ``Number`` in a range,
  or ``Parsed`` by a function of its own), in words for tables and errors, and how a value is
  checked and normalised,
- a one-line description,
- how the compiled kernels receive it (``Route``): a slot of the integer parameters ``ip`` (the
  value, its code in its list, a flag or a card id), a slot of the number parameters ``fp``, one
  of the kernels' ``Rules`` arrays, the action table, or nothing (a label).

What the other places need is derived from these declarations (``bigtwo.env.rules.variant``):
``CHOICES``, ``BOUNDS``, the loader's checks, the settings table (RULES.md, ``bigtwo variants
--settings``), the kernels' slot indices (``IP_SLOTS``, ``FP_SLOTS``) and
``bigtwo.env.engine.engine.make_rules``. The kernels compile in the slot indices and the choice
codes (a value's place in its ``OneOf`` list), so this module and ``variant`` are part of the
kernel cache's key (``bigtwo.env.engine.jit.COMPILED_IN``).

>>> scoring = OneOf("cards", "tiered")
>>> scoring.check("tiered"), scoring.code("tiered"), scoring.text
('tiered', 1, 'cards, tiered')
>>> Whole(1, 100, off=1).check(3), Whole(1, 100, off=1).text
(3, 'an integer >= 1 (1 = off) and <= 100')
>>> Number(0, 1e6, open_low=True).check(2)
2.0
>>> try:
...     Flag().check("yes")
... except BadValue as bad:
...     print(bad.allowed)
true or false
"""

from __future__ import annotations

import dataclasses
import math
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


@dataclass(frozen=True)
class Flag(Allowed):
    """``true`` or ``false`` (no 0/1, no text)."""

    text: str = "true or false"

    def check(self, value: Any) -> bool:
        if not isinstance(value, bool):
            raise BadValue(self.text)
        return value


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


@dataclass(frozen=True)
class Parsed(Allowed):
    """A value read by a function of its own (``parse``: the value normalised, or ``BadValue``)."""

    text: str
    parse: Callable[[Any], Any] = field(compare=False)

    def check(self, value: Any) -> Any:
        return self.parse(value)


# How the kernels receive a setting (``Route.target``): a slot of ``Rules.ip`` (int64) or of
# ``Rules.fp`` (float64), one of ``Rules``' arrays (by its name), or the action table.
IP, FP, ACTION_TABLE = "ip", "fp", "action_table"
RULES_ARRAYS = ("suit_rank", "windows", "tiers")  # the ``Rules`` arrays a setting is made into
# What an ``ip`` slot holds: the value itself, its code (place in its ``OneOf``), 1/0 for a flag, a card's id.
IP_ENCODINGS = ("value", "code", "flag", "card")


@dataclass(frozen=True)
class Route:
    """One way the kernels receive a setting: ``target`` (``IP``, ``FP``, a name of ``RULES_ARRAYS``
    or ``ACTION_TABLE``), and for ``IP`` what the slot holds (``encoding``); an array is built from
    the value by ``build``. Make one with ``ip``, ``fp``, ``array`` or ``ACTION_TABLE_ROUTE``."""

    target: str
    encoding: str = ""
    build: Callable[[Any], Any] | None = field(default=None, compare=False)

    @property
    def text(self) -> str:
        """In words, for the settings table."""
        if self.target == IP:
            what = {"value": "the value", "code": "its place in the list", "flag": "1 or 0", "card": "the card's id"}
            return f"`ip` slot ({what[self.encoding]})"
        if self.target == FP:
            return "`fp` slot"
        if self.target == ACTION_TABLE:
            return "the action table"
        return f"`Rules.{self.target}`"


def ip(encoding: str) -> Route:
    """An ``ip`` slot holding the value (``"value"``), its code (``"code"``), 1/0 (``"flag"``) or a
    card id (``"card"``)."""
    if encoding not in IP_ENCODINGS:
        raise ValueError(f"ip slot encoding {encoding!r}; allowed: {', '.join(IP_ENCODINGS)}")
    return Route(IP, encoding)


def fp() -> Route:
    """An ``fp`` slot holding the value as a float."""
    return Route(FP)


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
