"""What declares an agent: an ``AgentSpec`` per name, its ``Option`` s, its cost and its kernels.

Every agent the registry (``bigtwo.agents.registry``) builds by name is declared once, by one
``AgentSpec``; everything else that needs to know about agents reads it from there: the parsing
of ``name:key=value,...`` specs (``AgentSpec.check_options``), the web table's seat agents, their
options and budgets, and its thinking lanes (``bigtwo.web.forms``, ``bigtwo.web.hub``), the command
line's note that the kernels compile (``bigtwo.cli.play``), the agents' reprs and the agents
page of the docs (``agents_table``).

| ``AgentSpec`` field | what |
|---|---|
| ``name`` | the name ``make_agent`` takes |
| ``build`` | the class or factory, called ``build(variant, seed=seed, **options)`` |
| ``about`` | one line: what it plays |
| ``options`` | its ``Option`` s, in the order errors list them |
| ``cost`` | ``LIGHT`` (a play takes well under a millisecond), ``SEARCH`` (up to the move's budget, on rollout threads) or ``NETWORK`` (a network's forward pass) |
| ``kernels`` | the compiled kernel modules it runs besides the engine's, by their labels in pyproject.toml's ``bigtwo.kernels`` entry points (``search``, ``pair_scores``: a label, so that no lower layer names an upper one's module) |
| ``web`` | whether a seat of the web table may have it |
| ``parts`` | where the options go, for a factory: part name to the callable taking them, or the suffix (``".pt"``) of the installed checkpoint loader taking them (each ``Option.part``) |
| ``internal`` | parameters of the callables the registry never offers by name (given by code, e.g. a search's ``prior``) |
| ``web_rule`` | a check of the options together on the web (e.g. a budget that grows with another option) |

An ``Option`` has a ``kind`` that says which values it takes:

| kind | values |
|---|---|
| ``count`` | integers from ``low`` (default 1) up, never a bool |
| ``number`` | finite numbers above ``low`` (``above``) or from it, never a bool |
| ``choice`` | one of ``choices`` |
| ``text`` | text |
| ``device`` | a torch device: text (``cpu``, ``cuda:0``) or a CUDA index |
| ``value`` | whatever ``read`` accepts (it raises ``ValueError`` otherwise): heuristic weights |

``None`` (YAML's ``null``) is taken where the default is ``None``. On the web an option may be
refused (``web=False``), capped (``web_low``, ``web_high``), and a ``value`` option takes names only.

>>> opt = Option("top_k", "count", 5, "candidate plays", web_high=10)
>>> opt.check(3), opt.check(12)
(3, 12)
>>> opt.check(12, web=True)
Traceback (most recent call last):
...
ValueError: top_k must be an integer 1..10 on this server (candidate plays), got 12
>>> Option("schedule", "choice", "even", "how simulations are shared", choices=("even", "halving")).check("fast")
Traceback (most recent call last):
...
ValueError: schedule must be one of even, halving (how simulations are shared), got 'fast'
"""

from __future__ import annotations

import reprlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from bigtwo.env.checks import is_finite_number, is_whole

Kind = Literal["count", "number", "choice", "text", "device", "value"]
KINDS: tuple[str, ...] = ("count", "number", "choice", "text", "device", "value")
LIGHT = "light"  # a play takes well under a millisecond
SEARCH = "search"  # a play takes up to the move's budget, on rollout threads (given a ``threads`` option)
NETWORK = "network"  # a network's forward pass (torch)
COSTS = (LIGHT, SEARCH, NETWORK)

_SHORT = reprlib.Repr()
_SHORT.maxlist = _SHORT.maxdict = 6
_SHORT.maxstring = _SHORT.maxother = 60


@dataclass(frozen=True)
class Option:
    """One option an agent takes by name (``search:top_k=3``); see the module docstring."""

    name: str
    kind: Kind
    default: Any
    doc: str  # what it means, said in errors and the docs
    low: float | None = None  # count: the smallest (1 unless set); number: the bound
    above: bool = False  # number: strictly above ``low``
    choices: tuple[str, ...] = ()
    read: Callable[[Any], object] | None = None  # value: raises ValueError for what it does not take
    part: str = ""  # the part of a factory it goes to (``AgentSpec.parts``); "" the agent's class
    web: bool = True  # a web seat may set it
    web_low: float | None = None  # the web's bounds (count, number); None: the option's own
    web_high: float | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"option {self.name!r}: kind must be one of {', '.join(KINDS)}, got {self.kind!r}")
        if self.kind == "choice" and not self.choices:
            raise ValueError(f"option {self.name!r}: a choice lists its choices")
        if self.kind == "value" and self.read is None:
            raise ValueError(f"option {self.name!r}: a value option names the function that reads it (read=)")

    @property
    def smallest(self) -> float:
        """The lowest value it takes (counts: 1 unless ``low`` says otherwise)."""
        return (1 if self.kind == "count" else 0) if self.low is None else self.low

    def allowed(self) -> str:
        """What values it takes, in words (errors and the docs)."""
        if self.kind == "count":
            return "a positive integer" if self.smallest == 1 else f"an integer >= {self.smallest:g}"
        if self.kind == "number":
            if self.above and self.smallest == 0:
                return "a positive finite number"
            return f"a finite number {'>' if self.above else '>='} {self.smallest:g}"
        if self.kind == "choice":
            return f"one of {', '.join(self.choices)}"
        if self.kind == "text":
            return "text"
        if self.kind == "device":
            return "a torch device (cpu, cuda, cuda:0) or a CUDA index"
        return "see its reader"

    def check(self, value: Any, web: bool = False) -> Any:
        """``value`` if this option takes it (``web``: also within the web's bounds), else
        ``ValueError`` naming the option, what it takes and the value."""
        if value is None and self.default is None:
            return value
        if self.kind == "value":
            if web and not isinstance(value, str):
                raise ValueError(f"{self.name} must be a name on this server ({self.doc}), got {_SHORT.repr(value)}")
            assert self.read is not None  # __post_init__
            try:
                self.read(value)
            except ValueError as exc:  # named for this option when the reader names another (weights)
                raise ValueError(str(exc) if str(exc).startswith(self.name) else f"{self.name}: {exc}") from None
            return value
        if not self._takes(value):
            raise ValueError(f"{self.name} must be {self.allowed()} ({self.doc}), got {_SHORT.repr(value)}")
        if web and self.kind in ("count", "number"):
            low = self.smallest if self.web_low is None else self.web_low
            high = self.web_high
            if value < low or (high is not None and value > high):
                what = "an integer" if self.kind == "count" else "a number"
                span = f"{low:g}..{high:g}" if high is not None else f">= {low:g}"
                raise ValueError(f"{self.name} must be {what} {span} on this server ({self.doc}), got {value!r}")
        return value

    def _takes(self, value: Any) -> bool:
        if self.kind == "count":
            return bool(is_whole(value) and value >= self.smallest)
        if self.kind == "number":
            return bool(is_finite_number(value) and (value > self.smallest if self.above else value >= self.smallest))
        if self.kind == "choice":
            return isinstance(value, str) and value in self.choices
        if self.kind == "text":
            return isinstance(value, str)
        return isinstance(value, str) or bool(is_whole(value) and value >= 0)  # device


@dataclass(frozen=True)
class AgentSpec:
    """One agent's declaration; see the module docstring."""

    name: str
    build: Callable[..., Any]
    about: str
    options: tuple[Option, ...] = ()
    cost: str = LIGHT
    kernels: tuple[str, ...] = ()
    web: bool = True
    parts: Mapping[str, Callable[..., Any] | str] = field(default_factory=dict)
    internal: tuple[str, ...] = ()
    web_rule: Callable[[Mapping[str, Any]], None] | None = None

    def __post_init__(self) -> None:
        if self.cost not in COSTS:
            raise ValueError(f"agent {self.name!r}: cost must be one of {', '.join(COSTS)}, got {self.cost!r}")
        names = [o.name for o in self.options]
        if len(set(names)) != len(names):
            raise ValueError(f"agent {self.name!r}: an option is declared twice in {', '.join(names)}")
        unknown = sorted({o.part for o in self.options if o.part} - set(self.parts))
        if unknown:
            raise ValueError(f"agent {self.name!r}: options go to undeclared part(s) {', '.join(unknown)}")

    def option(self, name: str) -> Option:
        """The option called ``name``; ``KeyError`` if it takes none."""
        for o in self.options:
            if o.name == name:
                return o
        raise KeyError(name)

    def option_names(self, web: bool = False) -> tuple[str, ...]:
        """The names of its options (``web``: those a web seat may set), in declared order."""
        return tuple(o.name for o in self.options if o.web or not web)

    def defaults(self) -> dict[str, Any]:
        """Each option's declared default."""
        return {o.name: o.default for o in self.options}

    def check_options(self, options: Mapping[str, Any], web: bool = False) -> dict[str, Any]:
        """``options`` if it takes every one of them with its value (``web``: as a web seat may),
        else ``ValueError`` naming the first one refused and what is allowed."""
        takes = self.option_names(web)
        unknown = sorted(set(options) - set(takes))
        if unknown:
            said = f"takes: {', '.join(takes)}" if takes else "takes no options"
            where = " on this server" if web else ""
            raise ValueError(f"agent {self.name!r} does not take option(s) {', '.join(unknown)}{where}; it {said}")
        checked = {key: self.option(key).check(value, web) for key, value in options.items()}
        if web and self.web_rule is not None:
            self.web_rule(checked)
        return checked

    def given(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """The ``options`` that are not their declared defaults, in declared order: what tells
        this agent from the default one (its repr)."""
        out = {}
        for o in self.options:
            if o.name in options and not same_value(options[o.name], o.default):
                out[o.name] = options[o.name]
        return out


def same_value(a: Any, b: Any) -> bool:
    """Whether two option values are the same (arrays by their contents, ``True`` is not ``1``)."""
    if a is b:
        return True
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and np.array_equal(a, b)
    if type(a) is not type(b) and (isinstance(a, bool) or isinstance(b, bool)):
        return False
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def describe(label: str, variant: str, options: Mapping[str, Any]) -> str:
    """An agent's repr: ``label('variant', key=value, ...)``, long values shortened.

    >>> describe("SearchAgent", "taiwan", {"simulations": 200, "top_k": 8})
    "SearchAgent('taiwan', simulations=200, top_k=8)"
    """
    items = "".join(f", {key}={_SHORT.repr(_plain(value))}" for key, value in options.items())
    return f"{label}({variant!r}{items})"


def _plain(value: Any) -> Any:
    return value.tolist() if isinstance(value, np.ndarray) else value


__all__ = ["COSTS", "KINDS", "LIGHT", "NETWORK", "SEARCH", "AgentSpec", "Option", "describe", "same_value"]
