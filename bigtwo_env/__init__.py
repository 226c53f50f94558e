"""bigtwo_env: the Big Two rules, a batched engine and the environments built on it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import gymnasium

from .actions import ActionTable, action_table
from .cards import Card, card_texts, format_cards, parse_cards
from .combos import KINDS, Combo, beats, classify
from .lazy import lazy_attributes
from .variant import Variant, load_variant, variant_names

__version__ = "0.1.0"  # the one place the version is written (pyproject reads it)
ENV_ID = "bigtwo/BigTwo-v1"  # the Gymnasium id of bigtwo_env.gym_env.BigTwoEnv; v0 had observation version 0

if TYPE_CHECKING:
    from .aec import env, raw_env
    from .engine import Engine
    from .game import Game
    from .vector import VectorEnv

# Loaded on first use, so that importing the package does not compile the engine or load PettingZoo.
_LAZY = {"Game": ".game", "env": ".aec", "raw_env": ".aec", "Engine": ".engine", "VectorEnv": ".vector"}

__getattr__ = lazy_attributes(__name__, _LAZY)


if ENV_ID not in gymnasium.registry:
    gymnasium.register(id=ENV_ID, entry_point="bigtwo_env.gym_env:BigTwoEnv")

__all__ = [
    "ENV_ID",
    "KINDS",
    "ActionTable",
    "Card",
    "Combo",
    "Engine",
    "Game",
    "Variant",
    "VectorEnv",
    "action_table",
    "beats",
    "card_texts",
    "classify",
    "env",
    "format_cards",
    "load_variant",
    "parse_cards",
    "raw_env",
    "variant_names",
]
