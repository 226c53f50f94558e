"""``bigtwo belief``: learn which other seat holds each unseen card, for a search to deal its guesses by.

    bigtwo belief --variant hong-kong --rule scoring=collect --out beliefs/hong-kong.pt
    bigtwo belief --variant taiwan --agent strong:network=scratch,simulations=0 --positions 100000 --out b.pt
    bigtwo tournament --variant hong-kong --rule scoring=collect --agents strong:belief=beliefs/hong-kong.pt,strong*3

The belief (``bigtwo.train.belief``) learns from positions of games ``--agent`` plays at every seat
(default: the shipped network alone, ``strong:simulations=0``, whose games a ``strong`` search plays
out), and is measured before it is trusted: the command prints its held-out cross-entropy and
accuracy beside the uniform deal's, and saves them in the file. Needs torch (the ``train`` extra).
"""

from __future__ import annotations

import argparse
import json

from bigtwo.cli.options import add_quiet, add_seed, add_variant, add_variant_overrides, variant_overrides

DEFAULT_AGENT = "strong:simulations=0"
MIN_POSITIONS = 1000  # fewer leave no held-out set to measure it on


def _belief(args: argparse.Namespace) -> int:
    from bigtwo.cli.train import _need_torch

    _need_torch()
    from bigtwo.env import load_variant
    from bigtwo.train.belief import fit_belief, save_belief

    if args.positions < MIN_POSITIONS:
        raise ValueError(f"--positions is {args.positions}; allowed: an integer >= {MIN_POSITIONS}")
    if args.epochs < 1:
        raise ValueError(f"--epochs is {args.epochs}; allowed: an integer >= 1")
    variant = load_variant(args.variant, **variant_overrides(args))
    net, report = fit_belief(
        variant, args.agent, positions=args.positions, epochs=args.epochs, seed=args.seed, progress=not args.quiet
    )
    path = save_belief(net, variant, report, args.out)
    print(json.dumps(report, indent=1))
    print(
        f"held-out cross-entropy {report['cross_entropy']:.4f} nats a card (uniform deal {report['uniform_cross_entropy']:.4f}), "
        f"accuracy {report['accuracy']:.1%} (uniform {report['uniform_accuracy']:.1%})"
    )
    print(f"wrote {path}; search with it: strong:belief={path} or lookahead:belief={path}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``belief`` to the ``bigtwo`` command."""
    p = sub.add_parser(
        "belief",
        help="learn who holds the unseen cards, for the lookahead's guesses (needs torch)",
        description="Learn a belief over the hidden hands from positions of an agent's games (every seat), "
        "report its held-out cross-entropy and accuracy beside the uniform deal's, and save it for "
        "strong:belief=FILE / lookahead:belief=FILE.",
    )
    add_variant(p)
    add_variant_overrides(p, players=True)
    p.add_argument("--agent", default=DEFAULT_AGENT, help=f"whose games it learns from (default {DEFAULT_AGENT})")
    p.add_argument("--positions", type=int, default=200_000, help="positions to learn from (default 200000)")
    p.add_argument("--epochs", type=int, default=6, help="passes over them (default 6)")
    add_seed(p, 0, "the games and the learning")
    p.add_argument("--out", required=True, help="the belief file to write (.pt)")
    add_quiet(p)
    p.set_defaults(func=_belief)


__all__ = ["register"]
