"""``bigtwo suggest``: any agent's play in a position you describe by what your seat knows.

bigtwo suggest --hand "3D 5H 9C 9D KS 2S" --table 8S --played 1="3C 4C 5C 6C 7C JD" --played 3=5S
    strong's play (the default agent) for you, seat 0, with 8S on the table made by the seat before you

Seats are counted from yours in play order: 1 is the next seat, ``players - 1`` the seat before you.
``--table-by`` says who made the table play (default: the seat before you); the seats after it passed.
``--played SEAT=CARDS`` (repeatable) lists the cards a seat played this game, ``--left SEAT=N`` its
cards left when you did not note every card it played (default: its deal less its plays), and
``--history SEAT:CARDS`` (repeatable, oldest first, ``SEAT:pass`` a pass) the game's recent moves,
which agents see (the last 8). The other seats' hands are unknown: they are dealt from the cards you
have not seen (``--seed``), which no agent reads (``bigtwo.env.envs.position``).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from bigtwo.cli.options import add_seed, add_variant, add_variant_overrides, variant_overrides


def _pairs(items: list[str], option: str, sep: str, what: str) -> list[tuple[int, str]]:
    """``SEAT<sep>VALUE`` items as (seat, value); ``ValueError`` naming the option and the form."""
    out = []
    for item in items:
        seat, found, value = item.partition(sep)
        if not found or not seat.strip().lstrip("-").isdigit():
            raise ValueError(f"{option} takes SEAT{sep}{what} (seat 1 is the next seat in play order), got {item!r}")
        out.append((int(seat), value.strip()))
    return out


def _handle(args: argparse.Namespace) -> int:
    from bigtwo.agents import make_agent
    from bigtwo.cli.play import say_if_compiling
    from bigtwo.env.envs.position import Position
    from bigtwo.env.rules.variant import load_variant

    variant = load_variant(args.variant, **variant_overrides(args))
    left: dict[int, Any] = {}
    for seat, count in _pairs(args.left, "--left", "=", "N"):
        if not count.isdigit():
            raise ValueError(f"--left takes SEAT=N with N a number of cards, got {seat}={count!r}")
        left[seat] = int(count)
    played: dict[int, Any] = {}
    for seat, cards in _pairs(args.played, "--played", "=", "CARDS"):
        played[seat] = f"{played.get(seat, '')} {cards}"
    position = Position.parse(
        variant,
        hand=args.hand,
        table=args.table,
        table_by=args.table_by,
        played=played,
        left=left,
        history=_pairs(args.history, "--history", ":", "CARDS"),
        first_play=args.first_play,
    )
    say_if_compiling([args.agent])
    agent = make_agent(args.agent, variant, seed=args.seed)
    play = agent.choose(position.game(args.seed))
    if args.json:
        print(json.dumps({"agent": args.agent, "play": play, "pass": not play}))
    else:
        print(position.describe())
        print(f"{args.agent} plays: {' '.join(play) if play else 'pass'}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``suggest`` to the ``bigtwo`` command."""
    p = sub.add_parser(
        "suggest",
        help="an agent's play in a position you describe (your hand, the table, what was played)",
        description="An agent's play for you (seat 0) in a position described by what you know. Seats are "
        "counted from yours in play order: 1 is the next seat, the last is the seat before you.",
    )
    add_variant(p)
    p.add_argument("--hand", required=True, help='your cards, e.g. "3D 5H 9C 9D KS 2S"')
    p.add_argument("--table", default="", help='the play to beat, e.g. 8S or "9C 9D" (default: none, you lead)')
    p.add_argument("--table-by", type=int, default=None, help="the seat that made it (default: the seat before you)")
    p.add_argument(
        "--played", action="append", default=[], metavar="SEAT=CARDS", help="cards a seat played this game (repeatable)"
    )
    p.add_argument(
        "--left", action="append", default=[], metavar="SEAT=N", help="a seat's cards left (default: deal less played)"
    )
    p.add_argument(
        "--history",
        action="append",
        default=[],
        metavar="SEAT:CARDS",
        help="this game's moves, oldest first, SEAT:pass a pass (repeatable; agents see the last 8)",
    )
    first = p.add_mutually_exclusive_group()
    first.add_argument(
        "--first-play", dest="first_play", action="store_true", default=None, help="the game's first play"
    )
    first.add_argument("--not-first-play", dest="first_play", action="store_false", help="not the game's first play")
    p.add_argument("--agent", default="strong", help="agent name, spec or checkpoint (default strong)")
    add_seed(p, 0, "seed of the agent and of the hidden hands' deal")
    p.add_argument("--json", action="store_true", help="print the play as JSON")
    add_variant_overrides(p, players=False)
    p.set_defaults(func=_handle)
