"""bigtwo.env: the Big Two rules, a batched engine and the environments built on it."""

from __future__ import annotations

from bigtwo.layout import second_name

if __name__ != "bigtwo.env":  # ``import bigtwo_env`` from the repository root
    raise second_name(__name__, "bigtwo.env")

from typing import TYPE_CHECKING

import gymnasium

from bigtwo import __version__
from bigtwo.env.lazy import lazy_attributes
from bigtwo.env.rules.actions import ActionTable, action_table
from bigtwo.env.rules.cards import Card, card_texts, format_cards, parse_cards
from bigtwo.env.rules.combos import KINDS, Combo, beats, classify
from bigtwo.env.rules.variant import Variant, load_variant, variant_names

ENV_ID = "bigtwo/BigTwo-v1"  # the Gymnasium id of bigtwo.env.envs.gym_env.BigTwoEnv; v0 had observation version 0

if TYPE_CHECKING:
    from bigtwo.env.engine.engine import Engine
    from bigtwo.env.envs.aec import env, raw_env
    from bigtwo.env.envs.game import Game
    from bigtwo.env.envs.position import Position
    from bigtwo.env.envs.vector import VectorEnv

# Loaded on first use, so that importing the package does not compile the engine or load PettingZoo.
_LAZY = {
    "Game": ".envs.game",
    "Position": ".envs.position",
    "env": ".envs.aec",
    "raw_env": ".envs.aec",
    "Engine": ".engine.engine",
    "VectorEnv": ".envs.vector",
}

__getattr__ = lazy_attributes(__name__, _LAZY)


if ENV_ID not in gymnasium.registry:
    gymnasium.register(id=ENV_ID, entry_point="bigtwo.env.envs.gym_env:BigTwoEnv")

__all__ = [
    "__version__",
    "ENV_ID",
    "KINDS",
    "ActionTable",
    "Card",
    "Combo",
    "Engine",
    "Game",
    "Position",
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
