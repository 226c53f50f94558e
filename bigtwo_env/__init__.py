"""bigtwo_env: the Big Two rules, a batched engine and the environments built on it."""

from .actions import ActionTable, action_table
from .cards import Card, card_texts, format_cards, parse_cards
from .combos import KINDS, Combo, beats, classify
from .variant import Variant, load_variant, variant_names

__all__ = [
    "KINDS",
    "ActionTable",
    "Card",
    "Combo",
    "Variant",
    "action_table",
    "beats",
    "card_texts",
    "classify",
    "format_cards",
    "load_variant",
    "parse_cards",
    "variant_names",
]
__version__ = "0.1.0"
