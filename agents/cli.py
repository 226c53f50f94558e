"""The ``bigtwo tournament``, ``bigtwo ladder``, ``bigtwo move-time``, ``bigtwo tune`` and ``bigtwo play``
subcommands (see ``agents.tournament``, ``agents.ladder``, ``agents.move_time``, ``agents.tune`` and
``agents.play``). Heavy imports happen inside the handlers.

A first run compiles the Numba kernels (about a minute) before anything else shows: each command
then says so in one line on stderr (``say_if_compiling``), only when Numba's cache folder
(``bigtwo_env.jit.CACHE_DIR``) lacks compiled code of the engine's and the agents' kernels."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from bigtwo_env.settings import parse_settings

# Whose compiled kernels (the modules ``bigtwo_env.jit.kernel_files`` lists, declared in pyproject.toml's
# ``bigtwo.kernels`` group) a command runs: every command the engine's, these agents their package's too.
ENGINE_KERNELS = ("bigtwo_env",)
AGENT_KERNELS = {"heuristic": "agents.heuristic", "search": "agents.heuristic"}
COMPILING = "bigtwo: compiling the game's kernels (first run after an install or an update, about a minute)..."


def kernels_cached(cache_dir: Path | None, modules: Sequence[str] = ENGINE_KERNELS, root: Path | None = None) -> bool:
    """Whether Numba's cache folder ``cache_dir`` (``bigtwo_env.jit.CACHE_DIR``) holds compiled
    code of every declared kernel module in or under ``modules`` (module or package names; the
    files under ``root``, the folder holding the packages); ``True`` when there is no cache
    folder to look in (nothing to say)."""
    if cache_dir is None:
        return True
    from numba.core.caching import UserProvidedCacheLocator

    from bigtwo_env.jit import kernel_files

    files = kernel_files() if root is None else kernel_files(root)
    for module, source in files.items():
        if not any(module == m or module.startswith(m + ".") for m in modules):
            continue
        folder = Path(cache_dir) / UserProvidedCacheLocator.get_suitable_cache_subpath(str(source))
        if not any(folder.glob(f"{source.stem}.*.nbi")):
            return False
    return True


def say_if_compiling(agents: Sequence[str] = (), stream: TextIO | None = None) -> bool:
    """Print ``COMPILING`` on ``stream`` (stderr) when the kernels a command with these agent
    names will run are not compiled yet, so a first run does not sit silent for a minute;
    returns whether it did."""
    from bigtwo_env.jit import CACHE_DIR

    names = {str(a).partition(":")[0].strip().lower() for a in agents}
    modules = [*ENGINE_KERNELS, *sorted({AGENT_KERNELS[n] for n in names if n in AGENT_KERNELS})]
    if kernels_cached(CACHE_DIR, modules):
        return False
    out = sys.stderr if stream is None else stream
    print(COMPILING, file=out, flush=True)
    return True


def add_variant_overrides(parser: argparse.ArgumentParser) -> None:
    """The ``--players`` and ``--set KEY=VALUE`` options that ``variant_overrides`` reads."""
    parser.add_argument("--players", type=int, default=None, help="override the variant's number of players")
    parser.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a variant field (repeatable)")


def variant_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The variant fields ``--set KEY=VALUE`` and ``--players`` change (values read as YAML)."""
    overrides = parse_settings(args.set, form="key=value (a variant field)")
    if args.players is not None:
        overrides["players"] = args.players
    return overrides


def _tournament(args: argparse.Namespace) -> int:
    from .registry import parse_agent_list
    from .tournament import run_tournament

    overrides = variant_overrides(args)
    agents = parse_agent_list(args.agents)
    say_if_compiling(agents)
    result = run_tournament(
        args.variant,
        agents,
        deals=args.deals,
        seed=args.seed,
        workers=args.workers,
        progress=not args.quiet,
        chunk_deals=args.chunk_deals,
        rating=args.rating,
        bootstrap=args.bootstrap,
        save_games=args.save_games,
        ray=args.ray,
        **overrides,
    )
    if args.json:
        print(json.dumps(result.to_dict(timing=not args.no_timing)))
    else:
        print(result.table())
    if args.out:
        jpath, cpath = result.write(args.out)
        print(f"wrote {jpath} and {cpath}", file=sys.stderr)
    return 0


def _ladder(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .ladder import describe_shipped, run_ladder
    from .registry import parse_agent_list

    if args.list:
        print(describe_shipped())
        return 0
    say_if_compiling(["heuristic"])
    ladder = run_ladder(
        args.variant,
        deals=args.deals,
        seed=args.seed,
        simulations=args.simulations,
        extra=parse_agent_list(args.agents) if args.agents else (),
        workers=args.workers,
        progress=not args.quiet,
        settings=args.set or (),
    )
    table = ladder.markdown(timing=not args.no_timing)
    print(table, end="")
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(table, encoding="utf-8")
        print(f"wrote {out}", file=sys.stderr)
    return 0


def _move_time(args: argparse.Namespace) -> int:
    from .move_time import measure_move_times, table
    from .registry import parse_agent_list

    overrides = variant_overrides(args)
    agents = parse_agent_list(args.agents)
    say_if_compiling(agents)
    results = [
        measure_move_times(args.variant, a, games=args.games, seed=args.seed, opponents=args.opponents, **overrides)
        for a in agents
    ]
    if args.json:
        print(json.dumps([r.to_dict() for r in results]))
    else:
        print(table(results), end="")
    return 0


def _tune(args: argparse.Namespace) -> int:
    from .tune import tune_weights

    overrides = variant_overrides(args)
    say_if_compiling(["heuristic"])
    result = tune_weights(
        args.variant,
        start=args.start,
        deals=args.deals,
        seed=args.seed,
        rounds=args.rounds,
        min_gain=args.min_gain,
        workers=args.workers,
        progress=not args.quiet,
        log=lambda line: print(line, file=sys.stderr, flush=True),
        **overrides,
    )
    weights = "[" + ", ".join(f"{x:.6g}" for x in result.weights) + "]"
    print(f"payoff a game against the opponents: {result.start_payoff:+.3f} -> {result.payoff:+.3f}")
    print(f"weights: {weights}")
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        data = {
            "weights": [float(x) for x in result.weights],
            "payoff": result.payoff,
            "start_payoff": result.start_payoff,
            "steps": result.steps,
        }
        out.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {out}", file=sys.stderr)
    return 0


def _play(args: argparse.Namespace) -> int:
    from .play import TerminalGame
    from .registry import parse_agent_list

    overrides = variant_overrides(args)
    say_if_compiling(parse_agent_list(args.opponents) if args.opponents else ())
    game = TerminalGame(
        args.variant,
        opponents=args.opponents,
        seat=args.seat,
        seed=args.seed,
        hint=args.hint,
        symbols=args.symbols,
        **overrides,
    )
    return game.run()


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``tournament``, ``ladder``, ``move-time``, ``tune`` and ``play`` to the ``bigtwo`` command."""
    p = sub.add_parser(
        "tournament",
        help="duplicate-deal tournament between agents",
        description="Play duplicate deals (every agent plays every seat's cards) and report mean payoff per "
        "game with a 95% CI over deals, win rate, time per move, and a rating when there are "
        "more agents than seats.",
    )
    p.add_argument("--variant", default="taiwan", help="variant name or YAML file (default: taiwan)")
    p.add_argument(
        "--agents",
        required=True,
        help="comma list of agent names or checkpoint paths, e.g. heuristic,random,random,random "
        "(NAME*N repeats a name)",
    )
    p.add_argument("--deals", type=int, default=1000, help="deals to play (each in every rotation; default 1000)")
    p.add_argument("--seed", type=int, default=0, help="tournament seed (default 0)")
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        help="worker processes (default min(2, cores); results do not depend on it)",
    )
    p.add_argument(
        "--chunk-deals",
        type=int,
        default=None,
        help="deals per batched engine (default 250; part of what the seed reproduces)",
    )
    add_variant_overrides(p)
    rating = p.add_mutually_exclusive_group()
    rating.add_argument(
        "--rating",
        action="store_true",
        default=None,
        help="fit Bradley-Terry ratings (default: only with more agents than seats)",
    )
    rating.add_argument("--no-rating", dest="rating", action="store_false", help="never fit ratings")
    p.add_argument("--bootstrap", type=int, default=200, help="bootstrap resamples for rating errors (default 200)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    p.add_argument("--no-timing", action="store_true", help="leave time fields out of --json (byte-identical reruns)")
    p.add_argument("--out", metavar="PREFIX", help="also write PREFIX.json and PREFIX.csv")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument(
        "--save-games", metavar="DIR", help="write every match as a JSON game record (bigtwo_env.record) into DIR"
    )
    p.add_argument(
        "--ray",
        metavar="local|auto|ADDRESS",
        default=None,
        help="play the chunks of deals as tasks on a Ray cluster: local (started for the run), auto or its "
        "address (same result as without; needs the ray extra)",
    )
    p.set_defaults(func=_tournament)

    from .ladder import DEFAULT_DEALS, DEFAULT_SEED, DEFAULT_SIMULATIONS

    lad = sub.add_parser(
        "ladder",
        help="rate every shipped agent on a variant (a Markdown table)",
        description="Rate random, greedy, heuristic, search, strong (where trained weights are shipped for the "
        "variant) and any --agents with duplicate deals and Bradley-Terry ratings; print the Markdown table, "
        "best rating first, with the command line that makes it.",
    )
    lad.add_argument("--variant", default="taiwan", help="variant name or YAML file (default: taiwan)")
    lad.add_argument("--deals", type=int, default=DEFAULT_DEALS, help=f"deals to play (default {DEFAULT_DEALS})")
    lad.add_argument(
        "--seed", type=int, default=DEFAULT_SEED, help=f"seed of deals and tables (default {DEFAULT_SEED})"
    )
    lad.add_argument(
        "--simulations",
        type=int,
        default=DEFAULT_SIMULATIONS,
        help=f"the search agent's simulations per move (default {DEFAULT_SIMULATIONS})",
    )
    lad.add_argument("--agents", default=None, metavar="EXTRA,...", help="more agents: names or checkpoint paths")
    lad.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="override a variant field (repeatable), e.g. scoring=collect",
    )
    lad.add_argument("--out", metavar="FILE", help="also write the Markdown table to FILE")
    lad.add_argument("--no-timing", action="store_true", help="leave out ms/move (byte-identical reruns)")
    lad.add_argument(
        "--workers",
        type=int,
        default=None,
        help="worker processes (default min(2, cores); results do not depend on it)",
    )
    lad.add_argument("--quiet", action="store_true", help="no progress bar")
    lad.add_argument(
        "--list", action="store_true", help="list the shipped trained agents and what made them, then exit"
    )
    lad.set_defaults(func=_ladder)

    mt = sub.add_parser(
        "move-time",
        help="time an agent's moves, one game at a time (median, p95, p99, slowest)",
        description="Each agent plays --games matches alone in one engine (as bigtwo play runs it), in every seat "
        "in turn, against --opponents; every one of its decisions is timed after one warm-up match.",
    )
    mt.add_argument("--agents", required=True, help="comma list of agent names or checkpoint paths to time")
    mt.add_argument("--variant", default="taiwan", help="variant name or YAML file (default: taiwan)")
    mt.add_argument("--games", type=int, default=40, help="matches timed per agent (default 40)")
    mt.add_argument("--seed", type=int, default=0, help="seed of the deals (default 0)")
    mt.add_argument("--opponents", default="heuristic", help="agent in every other seat (default heuristic)")
    add_variant_overrides(mt)
    mt.add_argument("--json", action="store_true", help="print a JSON list instead of the table")
    mt.set_defaults(func=_move_time)

    from .tune import DEFAULT_DEALS as TUNE_DEALS
    from .tune import DEFAULT_MIN_GAIN, DEFAULT_ROUNDS
    from .tune import DEFAULT_SEED as TUNE_SEED

    tu = sub.add_parser(
        "tune",
        help="tune the heuristic's weights for a variant by coordinate search on duplicate deals",
        description="Coordinate search of the heuristic's weights (agents.tune): each weight in turn takes the "
        "value that scores best in one seat against copies of the default heuristic, on the same duplicate "
        "deals; prints each step on stderr and the weights found as a list heuristic:weights=[...] takes.",
    )
    tu.add_argument("--variant", default="taiwan", help="variant name or YAML file (default: taiwan)")
    tu.add_argument("--deals", type=int, default=TUNE_DEALS, help=f"deals per candidate (default {TUNE_DEALS})")
    tu.add_argument("--seed", type=int, default=TUNE_SEED, help=f"seed of the deals (default {TUNE_SEED})")
    tu.add_argument(
        "--rounds", type=int, default=DEFAULT_ROUNDS, help=f"passes over the weights (default {DEFAULT_ROUNDS})"
    )
    tu.add_argument(
        "--min-gain",
        type=float,
        default=DEFAULT_MIN_GAIN,
        help=f"payoff a game a new value must add to be kept (default {DEFAULT_MIN_GAIN})",
    )
    tu.add_argument(
        "--start", default=None, metavar="NAME", help="weights to start from: a set's name (default: default)"
    )
    tu.add_argument("--workers", type=int, default=2, help="processes playing the candidates (default 2)")
    add_variant_overrides(tu)
    tu.add_argument("--out", metavar="FILE", help="also write the weights and every step to FILE (JSON)")
    tu.add_argument("--quiet", action="store_true", help="no progress bar")
    tu.set_defaults(func=_tune)

    q = sub.add_parser(
        "play",
        help="play a match in the terminal against agents",
        description="Play Big Two in the terminal. Type cards (3C 3D), a number from 'list', "
        "'pass', 'hint', 'help' or 'quit'.",
    )
    q.add_argument("--variant", default="taiwan", help="variant name or YAML file (default: taiwan)")
    q.add_argument(
        "--opponents",
        default=None,
        help="agent name or checkpoint path for every other seat, or a comma list "
        "(default: strong where trained weights are shipped for the variant, else heuristic)",
    )
    q.add_argument("--seat", type=int, default=0, help="your seat (default 0)")
    q.add_argument("--seed", type=int, default=None, help="deal seed (default: random, shown at the start)")
    q.add_argument("--hint", default="heuristic", help="agent asked by 'hint' (default heuristic)")
    q.add_argument("--symbols", action="store_true", help="show suits as ♦ ♣ ♥ ♠")
    add_variant_overrides(q)
    q.set_defaults(func=_play)
