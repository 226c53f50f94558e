"""``bigtwo variants``: the shipped rule variants in one table, or every setting of one.

bigtwo variants              one line per named variant: players, opening, straights, ...
bigtwo variants japan        every setting of one variant (a name or a YAML file)
bigtwo variants --settings   every setting a variant has: default, allowed values, description and
                             how the kernels receive it (the Markdown table RULES.md holds)
bigtwo variants NAME --yaml  the variant as a YAML file to edit and load: every setting, each with its
                             description and what it allows as a comment (a house rule starts here:
                             ``bigtwo variants taiwan --yaml > my-rules.yaml``, then
                             ``bigtwo play --variant my-rules.yaml``, ``load_variant("my-rules.yaml")``)
bigtwo variants japan --rule pair_chain=true --rule name=japan-chains --yaml > japan-chains.yaml
                             a house rule written from a variant and the fields that change

>>> text = variant_yaml(load_variant("japan"))
>>> print(text.splitlines()[0])
# japan: a bigtwo rule variant. Edit any value, then load the file by its path (load_variant("FILE.yaml"),
>>> load_variant("japan", **{}) == _reload(text)
True
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import yaml

from bigtwo.cli.options import add_variant_overrides, variant_overrides
from bigtwo.env.rules.variant import SETTINGS, Variant, load_variant, settings_table, variant_names


def variant_yaml(variant: Variant) -> str:
    """``variant`` as the text of a YAML file that ``load_variant`` reads back to the same rules: every
    setting, with its description and what it allows as a comment above it."""
    lines = [
        f'# {variant.name}: a bigtwo rule variant. Edit any value, then load the file by its path (load_variant("FILE.yaml"),',
        "# bigtwo play --variant FILE.yaml, bigtwo train --set variant=FILE.yaml). Settings left out take their defaults;",
        "# `bigtwo variants --settings` lists every setting. RULES.md says what each rule means.",
    ]
    for key, value in variant.to_dict().items():
        setting = SETTINGS.get(key)
        if setting is not None:
            lines.append(f"# {setting.doc} Allowed: {setting.allows.text}.")
        dumped = yaml.safe_dump(value, default_flow_style=True, allow_unicode=True, width=10**6)
        lines.append(f"{key}: {dumped.removesuffix(chr(10)).removesuffix(chr(10) + '...').strip()}")
    return "\n".join(lines) + "\n"


def _reload(text: str) -> Variant:
    """``text`` written to a temporary file and loaded again (the round trip ``--yaml`` promises)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "variant.yaml"
        path.write_text(text, encoding="utf-8")
        return load_variant(path)


def _handle(args: argparse.Namespace) -> int:
    if not args.name and variant_overrides(args):
        raise ValueError(
            "--rule and --players change one variant: give its name or file (e.g. bigtwo variants japan --rule pair_chain=true)"
        )
    if args.yaml:
        if args.settings or not args.name:
            raise ValueError(
                "--yaml prints one variant as YAML: give its name or file (e.g. bigtwo variants taiwan --yaml)"
            )
        print(variant_yaml(load_variant(args.name, **variant_overrides(args))), end="")
        return 0
    if args.settings:
        if args.name:
            raise ValueError(f"--settings lists every setting of any variant; give no variant name (got {args.name!r})")
        print(settings_table())
        return 0
    if args.name:
        print(load_variant(args.name, **variant_overrides(args)).describe())
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
    p.add_argument(
        "--yaml",
        action="store_true",
        help="print the variant as a YAML file to edit and load (a house rule starts here)",
    )
    add_variant_overrides(p)
    p.set_defaults(func=_handle)
