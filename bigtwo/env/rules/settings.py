"""Settings written as text: ``KEY=VALUE`` items, each value read as YAML.

One parser serves every place a user writes a setting on one line: the ``--set`` options of the
``bigtwo`` subcommands (variant fields, training config fields) and the options written into an
agent's name (``search:simulations=64,top_k=4``). What a
key means, and which values it allows, is checked by whoever takes the settings; this module
only splits the text.

A value is read as YAML (``3`` an integer, ``true`` a bool, ``[random, greedy]`` a list,
``{players: 2}`` a mapping, ``null`` nothing); text that is not valid YAML stays text, an empty
value is the empty text, and a number in exponent form without a dot (``1e-4``, which YAML 1.1
reads as text) is a float. A ``-`` in a key is read as ``_`` (``cards-per-player``). A value
may not use YAML's anchors and aliases (``&name``, ``*name``): one line never needs them, and
nested aliases make a few hundred bytes stand for a structure of billions of items, which
whoever reads the value would walk (``ValueError`` instead, before anything is built).

>>> parse_settings(["games=3", "pair_chain=true", "scoring=pairwise", "lr=1e-4"])
{'games': 3, 'pair_chain': True, 'scoring': 'pairwise', 'lr': 0.0001}
>>> parse_settings(["variant_settings={players: 2, cards_per_player: 5}"])
{'variant_settings': {'players': 2, 'cards_per_player': 5}}
>>> parse_settings(["weights=[&a x, *a]"])
Traceback (most recent call last):
...
ValueError: --set: weights: a setting's value may not use YAML anchors or aliases (&a, *name), got '[&a x, *a]'
>>> parse_settings(["players"])
Traceback (most recent call last):
...
ValueError: --set expects KEY=VALUE, got 'players'
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import yaml

_EXPONENT = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+$")  # 1e-4, 2E6: numbers YAML 1.1 leaves as text


def read_value(text: str) -> Any:
    """One setting's value: ``text`` read as YAML (see the module docstring)."""
    text = text.strip()
    if not text:
        return ""
    if _EXPONENT.match(text):
        return float(text)
    try:
        events = list(yaml.parse(text, Loader=yaml.SafeLoader))  # linear in the text, aliases unexpanded
        anchor = next((e.anchor for e in events if isinstance(e, yaml.NodeEvent) and _anchored(e)), None)
        value = None if anchor is not None else yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    if anchor is not None:
        shown = text if len(text) <= 80 else text[:77] + "..."
        raise ValueError(f"a setting's value may not use YAML anchors or aliases (&{anchor}, *name), got {shown!r}")
    return value


def _anchored(event: yaml.NodeEvent) -> bool:
    """Whether a YAML parse event sets an anchor (``&name``); an alias to an anchor the text never
    sets (``*name`` alone) does not load, so such text stays text."""
    return not isinstance(event, yaml.AliasEvent) and event.anchor is not None


def parse_setting(item: str, what: str = "--set", form: str = "KEY=VALUE", hint: str = "") -> tuple[str, Any]:
    """``"key=value"`` as ``(key, value)``. ``ValueError`` "``{what} expects {form}, got {item!r}{hint}``"
    when ``item`` has no ``=`` or no key."""
    key, sep, raw = item.partition("=")
    key = key.strip().replace("-", "_")
    if not sep or not key:
        raise ValueError(f"{what} expects {form}, got {item!r}{hint}")
    try:
        return key, read_value(raw)
    except ValueError as exc:
        raise ValueError(f"{what}: {key}: {exc}") from None


def parse_settings(
    items: Iterable[str] | None, what: str = "--set", form: str = "KEY=VALUE", hint: str = ""
) -> dict[str, Any]:
    """``KEY=VALUE`` items as a mapping, later items winning; errors as ``parse_setting``'s."""
    return dict(parse_setting(item, what, form, hint) for item in items or ())
