"""``bigtwo benchmark AGENT``: an agent's card against the fixed panel (``bigtwo.arena.benchmark``).

The handler checks what it can before playing (the agent, the panel, the budget), writes the card
to ``--out`` (default ``cards/<agent>__<variant>``), prints ``card.md`` and, with
``--exploit-minutes``, trains a best response (``bigtwo.train.exploit``, the ``train`` extra).
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from pathlib import Path
from typing import Any

from bigtwo.cli.options import (
    add_deals,
    add_quiet,
    add_ray,
    add_seed,
    add_variant,
    add_variant_overrides,
    add_workers,
    variant_overrides,
)
from bigtwo.cli.play import say_if_compiling


def default_folder(agent: str, variant: str) -> Path:
    """``cards/<agent>__<variant>``, the agent's spec made a file name."""
    stem = Path(variant).stem if variant.endswith((".yaml", ".yml")) else variant
    return Path("cards") / re.sub(r"[^A-Za-z0-9._=-]+", "_", f"{Path(agent).stem if '/' in agent else agent}__{stem}")


def _words(args: argparse.Namespace) -> list[str]:
    """The options that make the card, as a command line."""
    words = [args.agent, "--variant", args.variant, "--deals", str(args.deals), "--seed", str(args.seed)]
    if args.panel:
        words += ["--panel", args.panel]
    for item in args.rule:
        words += ["--rule", item]
    if args.exploit_minutes is not None:
        words += ["--exploit-minutes", f"{args.exploit_minutes:g}"]
    for item in args.exploit_set:
        words += ["--exploit-set", item]
    return words


def _benchmark(args: argparse.Namespace) -> int:
    from bigtwo.arena.benchmark import benchmark, command_line, markdown
    from bigtwo.arena.panel import choose_members

    rules = variant_overrides(args)
    choose_members(args.panel)  # an unknown member fails before anything is built
    minutes = args.exploit_minutes
    exploit = None
    if minutes is not None:
        if not (math.isfinite(minutes) and minutes > 0):
            raise ValueError(f"--exploit-minutes must be a positive number of minutes, got {minutes:g}")
        try:
            from bigtwo.train.exploit import best_response
        except ImportError:
            raise ValueError(
                "--exploit-minutes trains a network: install the train extra, pip install 'bigtwo[train]'"
            ) from None

        def exploit(card: dict[str, Any], folder: Any) -> dict[str, Any]:
            from bigtwo.env.rules.variant import load_variant

            check = {"minutes": minutes, "sets": list(args.exploit_set)}
            saved = folder.done("exploit", check)
            if saved is not None:
                return saved
            agent_ms = _batched_ms(card)
            result = best_response(
                args.agent,
                load_variant(args.variant, **rules),
                args.variant,
                rules,
                minutes,
                folder.dir,
                args.deals,
                args.seed,
                agent_ms,
                sets=args.exploit_set,
                workers=args.workers,
                ray=args.ray,
                progress=not args.quiet,
            )
            return folder.save("exploit", result, check)

    say_if_compiling([args.agent])
    out = Path(args.out) if args.out else default_folder(args.agent, args.variant)
    card = benchmark(
        args.agent,
        args.variant,
        deals=args.deals,
        seed=args.seed,
        panel=args.panel,
        rules=rules,
        out=out,
        workers=args.workers,
        ray=args.ray,
        progress=not args.quiet,
        exploit=exploit,
        command=command_line(_words(args)),
    )
    print(markdown(card), end="")
    print(f"wrote {out}/card.md, card.json and card.png", file=sys.stderr)
    return 0


def _batched_ms(card: dict[str, Any]) -> float:
    """The agent's time per move in a batch, over the panel's tournaments (the slowest member's)."""
    times = [ms for ms in card["timing"]["batched_ms_per_move"].values() if ms is not None and math.isfinite(ms)]
    return max(times) if times else float(card["timing"]["median_ms"])


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``benchmark`` to the ``bigtwo`` command."""
    from bigtwo.arena.benchmark import DEFAULT_DEALS, DEFAULT_SEED
    from bigtwo.arena.panel import PANEL, PANEL_VERSION

    members = ", ".join(f"{m.name}{'' if m.default else ' (not default)'}" for m in PANEL)
    p = sub.add_parser(
        "benchmark",
        help="an agent's card: margins against a fixed panel, rating, time per move (and exploitability)",
        description=f"Play AGENT in one seat against copies of each member of the fixed panel (version "
        f"{PANEL_VERSION}: {members}) on the same duplicate deals, every seat rotation, and write its card "
        "(card.md, card.json, card.png) into --out: margin, payoff and win rate with 95% intervals per member, "
        "the worst-case and mean margin, a rating on the ladder's Elo scale with the panel's mean at 0, the time "
        "per move (median, p99), and with --exploit-minutes the margin of a best response trained against it. "
        "A rerun with the same settings skips the finished steps.",
    )
    p.add_argument("agent", metavar="AGENT", help="an agent spec (heuristic:weights=cards), or a checkpoint path")
    add_variant(p)
    add_deals(p, DEFAULT_DEALS, "duplicate deals per panel member, each in every rotation")
    add_seed(p, DEFAULT_SEED, "seed of the deals")
    p.add_argument(
        "--panel",
        default=None,
        metavar="NAME,...",
        help="panel members to play (default: the default panel; 'default' stands for it, e.g. default,strong)",
    )
    add_variant_overrides(p, players=False)
    p.add_argument("--out", metavar="FOLDER", help="the card's folder (default cards/<agent>__<variant>)")
    add_workers(p)
    add_ray(p, "play the panel's tournaments")
    p.add_argument(
        "--exploit-minutes",
        type=float,
        default=None,
        metavar="N",
        help="also train a best response against 3 frozen copies of AGENT for N minutes (needs the train "
        "extra) and report its margin: approximate exploitability",
    )
    p.add_argument(
        "--exploit-set",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="change a field of the best response's training config (repeatable; bigtwo train --fields lists them)",
    )
    add_quiet(p)
    p.set_defaults(func=_benchmark)
