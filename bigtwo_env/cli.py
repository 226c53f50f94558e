"""The ``bigtwo`` command: one entry point, a subcommand per job.

    bigtwo variants [NAME]       list the rule variants, or show one's settings
    bigtwo bench [--json]        engine and environment speeds on this machine
    bigtwo tournament ...        duplicate-deal tournaments between agents
    bigtwo play ...              play a game in the terminal against agents
    bigtwo train ...             self-play training (needs the ``train`` extra: torch)

Each subcommand lives with the code it runs; this module only assembles them. Heavy imports
(torch) happen inside the subcommand, never at start-up.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from .variant import load_variant, variant_names

# Modules that add subcommands: each has ``register(subparsers)``; their handlers import lazily.
SUBCOMMAND_MODULES = ("bigtwo_env.bench", "agents.cli", "train.cli")


def _variants(args: argparse.Namespace) -> int:
    if args.name:
        print(load_variant(args.name).describe())
        return 0
    from .actions import action_table

    print(
        f"{'variant':<12} {'players':>7} {'opening':>8} {'straights':>12} {'flush':>11} {'scoring':>9} {'actions':>8}"
    )
    for name in variant_names():
        v = load_variant(name)
        print(
            f"{name:<12} {v.players:>7} {v.opening_card:>8} {v.straights_preset or 'custom':>12} "
            f"{v.flush_order:>11} {v.scoring:>9} {action_table(v).size:>8}"
        )
    print("\n`bigtwo variants NAME` shows every setting of one variant.")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bigtwo", description="Big Two reinforcement-learning kit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    p = sub.add_parser("variants", help="list the rule variants or show one")
    p.add_argument("name", nargs="?", help="a variant name or a YAML file")
    p.set_defaults(func=_variants)
    for module in SUBCOMMAND_MODULES:
        try:
            importlib.import_module(module).register(sub)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    try:
        return int(args.func(args) or 0)
    except ValueError as exc:
        print(f"bigtwo {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into `head` and the like: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
