"""The options that several ``bigtwo`` subcommands share, declared once.

``--variant``, ``--seed``, ``--deals``, ``--workers``, ``--quiet``, ``--players``/``--rule`` (variant fields) and
``--ray`` mean the same in every subcommand that takes them, so each is written here once and a
subcommand adds the ones it takes; only a default or the line saying what a seed seeds differs.
``variant_overrides`` reads ``--players``/``--rule`` back as the variant fields they change.

Two options, two meanings, everywhere: ``--rule KEY=VALUE`` changes a field of the variant (the
rules), ``--set FIELD=VALUE`` a field of a training config (``bigtwo train``). Before 0.2,
``--set`` also meant a variant field in ``play``, ``tournament``, ``ladder``, ``move-time`` and
``tune``; there it still works for one release, with a warning that names ``--rule``.

>>> import argparse
>>> p = argparse.ArgumentParser()
>>> add_variant(p); add_seed(p, 7, "seed of the deals"); add_variant_overrides(p)
>>> args = p.parse_args(["--rule", "scoring=collect", "--players", "3"])
>>> args.variant, args.seed, variant_overrides(args)
('taiwan', 7, {'scoring': 'collect', 'players': 3})
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from bigtwo.env.rules.settings import parse_settings
from bigtwo.env.rules.variant import DEFAULT_VARIANT


def add_variant(parser: argparse.ArgumentParser, default: str = DEFAULT_VARIANT) -> None:
    """``--variant NAME|FILE``: a named variant or a YAML file."""
    parser.add_argument("--variant", default=default, help=f"variant name or YAML file (default: {default})")


def add_seed(parser: argparse.ArgumentParser, default: int | None, what: str) -> None:
    """``--seed N``; ``what`` says what it seeds (``None`` as default: a fresh random seed)."""
    shown = "random, shown at the start" if default is None else default
    parser.add_argument("--seed", type=int, default=default, help=f"{what} (default {shown})")


def add_deals(parser: argparse.ArgumentParser, default: int, what: str = "deals to play") -> None:
    """``--deals N``: duplicate deals (each played in every seat rotation)."""
    parser.add_argument("--deals", type=int, default=default, help=f"{what} (default {default})")


def add_workers(parser: argparse.ArgumentParser, default: int | None = None, what: str = "worker processes") -> None:
    """``--workers N``: processes that share the work (default ``min(2, cores)``, or ``default``)."""
    shown = "min(2, cores); results do not depend on it" if default is None else str(default)
    parser.add_argument("--workers", type=int, default=default, help=f"{what} (default {shown})")


def add_quiet(parser: argparse.ArgumentParser) -> None:
    """``--quiet``: no progress bar."""
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


RULE_HELP = "override a variant field (repeatable), e.g. --rule scoring=collect (bigtwo variants NAME lists them)"
OLD_SET = "--set KEY=VALUE for a variant field is now --rule KEY=VALUE (--set will mean a training config field only)"


def add_rule(parser: argparse.ArgumentParser) -> None:
    """``--rule KEY=VALUE``: a variant field (repeatable), read by ``rule_overrides``."""
    parser.add_argument("--rule", action="append", default=[], metavar="KEY=VALUE", help=RULE_HELP)


def rule_texts(args: argparse.Namespace) -> list[str]:
    """The ``--rule`` items as given (the deprecated variant ``--set`` first, with a warning on stderr)."""
    old = getattr(args, "old_set", None) or []
    if old:
        print(f"warning: {OLD_SET}", file=sys.stderr)
    return [*old, *args.rule]


def rule_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The variant fields ``--rule KEY=VALUE`` (and the deprecated variant ``--set``) change, values read as YAML."""
    return parse_settings(rule_texts(args), "--rule", form="key=value (a variant field)")


def add_variant_overrides(parser: argparse.ArgumentParser, players: bool = True) -> None:
    """``--rule KEY=VALUE`` (a variant field, repeatable) and, unless ``players=False``, ``--players N``:
    what ``variant_overrides`` reads. ``--set`` is accepted for one release, with a warning."""
    if players:
        parser.add_argument("--players", type=int, default=None, help="override the variant's number of players")
    add_rule(parser)
    parser.add_argument("--set", dest="old_set", action="append", metavar="KEY=VALUE", help=argparse.SUPPRESS)


def variant_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The variant fields ``--rule KEY=VALUE`` and ``--players`` change (values read as YAML)."""
    overrides = rule_overrides(args)
    if getattr(args, "players", None) is not None:
        overrides["players"] = args.players
    return overrides


def add_ray(parser: argparse.ArgumentParser, what: str) -> None:
    """``--ray local|auto|ADDRESS``: run ``what`` on a Ray cluster (the ``ray`` extra)."""
    parser.add_argument(
        "--ray",
        metavar="local|auto|ADDRESS",
        default=None,
        help=f"{what} on a Ray cluster: local (started for the run), auto (the one `ray start` joined) "
        "or its address (needs the ray extra)",
    )


__all__ = [
    "add_deals",
    "add_quiet",
    "add_ray",
    "add_rule",
    "add_seed",
    "add_variant",
    "add_variant_overrides",
    "add_workers",
    "rule_overrides",
    "rule_texts",
    "variant_overrides",
]
