"""``bigtwo variants``: the shipped rule variants in one table, or every setting of one.

bigtwo variants              one line per named variant: players, opening, straights, ...
bigtwo variants japan        every setting of one variant (a name or a YAML file)
bigtwo variants --settings   every setting a variant has: default, allowed values, description and
                             how the kernels receive it (the Markdown table RULES.md holds)
"""

from __future__ import annotations

import argparse

from bigtwo.env.rules.variant import load_variant, settings_table, variant_names


def _handle(args: argparse.Namespace) -> int:
    if args.settings:
        if args.name:
            raise ValueError(f"--settings lists every setting of any variant; give no variant name (got {args.name!r})")
        print(settings_table())
        return 0
    if args.name:
        print(load_variant(args.name).describe())
        return 0
    from bigtwo.env.rules.actions import action_table

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


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``variants`` to the ``bigtwo`` command."""
    p = sub.add_parser("variants", help="list the rule variants or show one")
    p.add_argument("name", nargs="?", help="a variant name or a YAML file")
    p.add_argument(
        "--settings",
        action="store_true",
        help="every setting: default, allowed values, description, how the kernels receive it (Markdown)",
    )
    p.set_defaults(func=_handle)
