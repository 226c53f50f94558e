"""The ``bigtwo serve`` and ``bigtwo serve-bench`` subcommands (see ``bigtwo.web.server`` and
``bigtwo.web.bench``). The web stack is imported only when a handler runs."""

from __future__ import annotations

import argparse

from bigtwo.web.forms import DEFAULT_AWAY, DEFAULT_PACE, DEFAULT_TURN
from bigtwo.web.server import DEFAULT_DB


def _serve(args: argparse.Namespace) -> int:
    if args.export:
        import sys

        from bigtwo.web.export import export_records

        n = export_records(args.db, args.export)
        print(f"wrote {n} game record(s) to {args.export}", file=sys.stderr)
        return 0
    from bigtwo.web.server import serve

    return serve(
        args.host,
        args.port,
        args.db,
        args.pace,
        args.away_timeout,
        args.log_level,
        turn_timeout=args.turn_timeout,
        room_ttl=args.room_ttl,
        agent_paths=args.agent_file,
        allow_hosts=args.allow_host,
        limits=args.limit,
        proxies=args.proxy,
    )


def _bench(args: argparse.Namespace) -> int:
    from bigtwo.web.bench import run_bench

    return run_bench(rooms=args.rooms, seconds=args.seconds, repeats=args.repeats, agent=args.agent)


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``serve`` and ``serve-bench`` to the ``bigtwo`` command."""
    p = sub.add_parser(
        "serve",
        help="play in the browser: a web table for people and agents (needs the web extra)",
        description="Serve the web table: create rooms, share seat links, play, watch agents, replay games.",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    p.add_argument("--db", default=DEFAULT_DB, help=f"SQLite file the rooms are kept in (default {DEFAULT_DB})")
    p.add_argument(
        "--pace",
        type=float,
        default=DEFAULT_PACE,
        help=f"seconds an agent waits before playing (default {DEFAULT_PACE})",
    )
    p.add_argument(
        "--away-timeout",
        type=float,
        default=DEFAULT_AWAY,
        help=f"seconds a person may be away before an agent plays for them (default {DEFAULT_AWAY:g})",
    )
    p.add_argument(
        "--turn-timeout",
        type=float,
        default=DEFAULT_TURN,
        help=f"seconds a connected person has for a turn before an agent plays it (default {DEFAULT_TURN:g}; 0: none)",
    )
    p.add_argument(
        "--room-ttl",
        type=float,
        default=None,
        help="seconds an idle room with nobody connected is kept before it is deleted (default 7 days)",
    )
    p.add_argument(
        "--agent-file",
        action="append",
        default=[],
        metavar="PATH",
        help="a checkpoint file seats may name (by its file name); repeat for more. Seats take nothing else but agent names",
    )
    p.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a host name the server answers to besides IP addresses, localhost and this machine's name; repeat for more",
    )
    p.add_argument(
        "--limit",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a per-client limit, timeout or history bound, such as rooms_per_minute=10 or header_timeout=10; "
        "repeat for more (the names and defaults: docs/web.md, bigtwo.web.limits)",
    )
    p.add_argument(
        "--proxy",
        action="append",
        default=[],
        metavar="ADDR",
        help="the IP address of a reverse proxy in front of the server: X-Forwarded-For from it names the client "
        "(never believed otherwise); repeat for more",
    )
    p.add_argument("--log-level", default="warning", help="uvicorn's log level (default warning)")
    p.add_argument(
        "--export",
        metavar="FILE.jsonl",
        help="do not serve: write every finished match in --db as a game record (one JSON line each) and exit",
    )
    p.set_defaults(func=_serve)

    b = sub.add_parser(
        "serve-bench",
        help="load benchmark of the web server: many rooms of agents and scripted clients on localhost",
    )
    b.add_argument("--rooms", type=int, default=40, help="rooms at once, 1..400 (default 40)")
    b.add_argument("--seconds", type=float, default=20.0, help="seconds of play per repeat, 1..120 (default 20)")
    b.add_argument("--repeats", type=int, default=3, help="repeats; medians are printed (default 3)")
    b.add_argument("--agent", default="greedy", help="the rooms' agent seats (default greedy)")
    b.set_defaults(func=_bench)
