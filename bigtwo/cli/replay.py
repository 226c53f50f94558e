"""``bigtwo replay FILE``: step through a game record in the terminal (``bigtwo.arena.replay``)."""

from __future__ import annotations

import argparse
import contextlib
import sys

from bigtwo.arena.replay import replay


def _replay(args: argparse.Namespace) -> int:
    step = not args.all and sys.stdin.isatty() and sys.stdout.isatty()
    if step:
        print("Enter: next play, q: stop", file=sys.stderr)
    with contextlib.suppress(EOFError):  # stdin closed while stepping: stop there
        replay(args.file, args.game, args.seat, step=step)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``replay`` to the ``bigtwo`` command."""
    p = sub.add_parser(
        "replay",
        help="step through a game record (.json, or a line of .jsonl) in the terminal",
        description="Replay a game record through the engine and show it play by play: Enter for the next "
        "play in a terminal, the whole game at once with --all or when stdin is not a terminal.",
    )
    p.add_argument("file", help="a game record: a .json file, or a .jsonl file of records (one a line)")
    p.add_argument(
        "--game", type=int, default=0, metavar="N", help="which record of a .jsonl file: its line index (default 0)"
    )
    p.add_argument("--seat", type=int, default=None, help="show only this seat's hand (default: every hand)")
    p.add_argument("--all", action="store_true", help="print the whole game at once, without waiting for Enter")
    p.set_defaults(func=_replay)


__all__ = ["register"]
