"""The ``bigtwo`` command: one entry point, a subcommand per job.

    bigtwo variants [NAME]       list the rule variants, or show one's settings
    bigtwo bench [--curve] [--search] [--train] [--json]   engine, environment, search (and training) speeds
    bigtwo tournament ...        duplicate-deal tournaments between agents
    bigtwo ladder ...            every shipped agent rated on a variant, as a Markdown table
    bigtwo benchmark AGENT       an agent's card against the fixed panel (and its exploitability)
    bigtwo play ...              play a game in the terminal against agents
    bigtwo suggest ...           an agent's play in a position you describe (your hand, the table, ...)
    bigtwo replay FILE           step through a game record (a tournament's --records, a web export)
    bigtwo train ...             self-play training (needs the ``train`` extra: torch)
    bigtwo belief ...            learn who holds the unseen cards, for the lookahead's guesses (torch)
    bigtwo serve ...             play in the browser: a web table (needs the ``web`` extra)
    bigtwo serve-bench ...       load benchmark of the web table
    bigtwo --version             the installed version

This module sits above the packages: the rules (``bigtwo.env``), the agents (``agents``), the
arena (``arena``), the trainers (``train``) and the web table (``bigtwo.web``). Each subcommand
lives with the code it runs and is added here by its package's ``register`` function; handlers import what they need when they run, so start-up
imports no torch, and ``bigtwo train`` says which extra to install when torch is missing.
``python -m bigtwo.cli`` runs the same command.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from bigtwo.cli.arena import register as register_arena_commands
from bigtwo.cli.belief import register as register_belief
from bigtwo.cli.bench import register as register_bench
from bigtwo.cli.benchmark import register as register_benchmark
from bigtwo.cli.play import register as register_agent_commands
from bigtwo.cli.replay import register as register_replay
from bigtwo.cli.serve import register as register_web
from bigtwo.cli.suggest import register as register_suggest
from bigtwo.cli.train import register as register_train
from bigtwo.cli.variants import register as register_variants
from bigtwo.env import __version__


def build_parser() -> argparse.ArgumentParser:
    """The ``bigtwo`` parser with every subcommand."""
    parser = argparse.ArgumentParser(prog="bigtwo", description="Big Two reinforcement-learning kit")
    parser.add_argument("--version", action="version", version=f"bigtwo {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    register_variants(sub)
    register_bench(sub)
    register_arena_commands(sub)
    register_benchmark(sub)
    register_agent_commands(sub)
    register_suggest(sub)
    register_replay(sub)
    register_train(sub)
    register_belief(sub)
    register_web(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``bigtwo`` with ``argv`` (default: the command line); returns the exit status.

    A ``ValueError`` from a handler is printed as ``bigtwo COMMAND: error: ...`` (status 2)."""
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
