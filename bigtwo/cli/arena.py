"""The arena's subcommands: ``bigtwo tournament``, ``bigtwo ladder``, ``bigtwo move-time`` and ``bigtwo tune``.

Handlers import what they run when they run, so ``bigtwo --help`` loads no engine. Each says
"compiling..." first when the kernels its agents run are not compiled yet
(``bigtwo.cli.play.say_if_compiling``). The options several subcommands share come from
``bigtwo.cli.options``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from bigtwo.arena.plots import check_plot_path
from bigtwo.cli.options import (
    add_deals,
    add_quiet,
    add_ray,
    add_seed,
    add_variant,
    add_variant_overrides,
    add_workers,
    rule_texts,
    variant_overrides,
)
from bigtwo.cli.play import say_if_compiling


def _tournament(args: argparse.Namespace) -> int:
    from bigtwo.agents.registry import parse_agent_list
    from bigtwo.arena.tournament import run_tournament

    overrides = variant_overrides(args)
    agents = parse_agent_list(args.agents)
    if args.plot:
        check_plot_path(args.plot)
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
        records=args.records,
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
    if args.plot:
        from bigtwo.arena.plots import save_figure, tournament_figure

        print(f"wrote {save_figure(tournament_figure(result), args.plot)}", file=sys.stderr)
    return 0


def print_beliefs() -> None:
    """The shipped beliefs and what made each (``bigtwo ladder --list``, after the networks)."""
    from bigtwo.agents import pretrained

    folder = pretrained.pretrained_dir() / pretrained.BELIEF
    try:
        from bigtwo.train.belief import describe_beliefs
    except ImportError:
        if any(folder.glob(f"*{pretrained.SUFFIX}")):
            print(f"beliefs in {folder}: reading them needs torch ({pretrained.EXTRA})")
        return
    for line in describe_beliefs(folder):
        print(line)


def _ladder(args: argparse.Namespace) -> int:
    from pathlib import Path

    from bigtwo.agents.registry import parse_agent_list
    from bigtwo.arena.ladder import describe_shipped, run_ladder

    if args.list:
        print(describe_shipped())
        print_beliefs()
        return 0
    if args.plot:
        check_plot_path(args.plot)
    say_if_compiling(["heuristic"])
    ladder = run_ladder(
        args.variant,
        deals=args.deals,
        seed=args.seed,
        simulations=args.simulations,
        extra=parse_agent_list(args.agents) if args.agents else (),
        workers=args.workers,
        progress=not args.quiet,
        settings=rule_texts(args),
    )
    table = ladder.markdown(timing=not args.no_timing)
    print(table, end="")
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(table, encoding="utf-8")
        print(f"wrote {out}", file=sys.stderr)
    if args.plot:
        from bigtwo.arena.plots import ladder_figure, save_figure

        print(f"wrote {save_figure(ladder_figure(ladder), args.plot)}", file=sys.stderr)
    return 0


def _move_time(args: argparse.Namespace) -> int:
    from bigtwo.agents.registry import parse_agent_list
    from bigtwo.arena.move_time import DEFAULT_MATCHES, measure_move_times, table

    overrides = variant_overrides(args)
    agents = parse_agent_list(args.agents)
    say_if_compiling(agents)
    if args.games is not None:  # the old name of --matches
        if args.matches is not None:
            raise ValueError("--games is the old name of --matches; give --matches only")
        print("bigtwo move-time: --games is now --matches; the old name is read until 0.3", file=sys.stderr)
    matches = args.matches if args.matches is not None else args.games if args.games is not None else DEFAULT_MATCHES
    results = [
        measure_move_times(args.variant, a, matches=matches, seed=args.seed, opponents=args.opponents, **overrides)
        for a in agents
    ]
    if args.json:
        print(json.dumps([r.to_dict() for r in results]))
    else:
        print(table(results), end="")
    return 0


def _tune(args: argparse.Namespace) -> int:
    from bigtwo.arena.tune import tune_weights

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


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``tournament``, ``ladder``, ``move-time`` and ``tune`` to the ``bigtwo`` command."""
    p = sub.add_parser(
        "tournament",
        help="duplicate-deal tournament between agents",
        description="Play duplicate deals (every agent plays every seat's cards) and report mean payoff per "
        "game with a 95% CI over deals, win rate, time per move, and a rating when there are "
        "more agents than seats.",
    )
    add_variant(p)
    p.add_argument(
        "--agents",
        required=True,
        help="comma list of agent names or checkpoint paths, e.g. heuristic,random,random,random "
        "(NAME*N repeats a name)",
    )
    add_deals(p, 1000, "deals to play, each in every rotation")
    add_seed(p, 0, "tournament seed")
    add_workers(p)
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
    p.add_argument(
        "--plot", metavar="FILE", help="also draw payoff and margin per agent with 95%% intervals (.png, .svg, .pdf)"
    )
    add_quiet(p)
    p.add_argument(
        "--records",
        metavar="FILE.jsonl",
        help="write every match as a game record (bigtwo.env.records.record), one JSON line each, in deal order; "
        "read them with bigtwo replay or bigtwo.env.records.dataset",
    )
    p.add_argument(
        "--save-games",
        metavar="DIR",
        help="write every match as a JSON game record file into DIR (the records of --records, one file each)",
    )
    add_ray(p, "play the chunks of deals as tasks (same result as without)")
    p.set_defaults(func=_tournament)

    from bigtwo.arena.ladder import DEFAULT_DEALS, DEFAULT_SEED, DEFAULT_SIMULATIONS

    lad = sub.add_parser(
        "ladder",
        help="rate every shipped agent on a variant (a Markdown table)",
        description="Rate random, greedy, heuristic, search, strong (where trained weights are shipped for the "
        "variant) and any --agents with duplicate deals and Bradley-Terry ratings; print the Markdown table, "
        "best rating first, with the command line that makes it.",
    )
    add_variant(lad)
    add_deals(lad, DEFAULT_DEALS)
    add_seed(lad, DEFAULT_SEED, "seed of deals and tables")
    lad.add_argument(
        "--simulations",
        type=int,
        default=DEFAULT_SIMULATIONS,
        help=f"the search agent's simulations per move (default {DEFAULT_SIMULATIONS})",
    )
    lad.add_argument("--agents", default=None, metavar="EXTRA,...", help="more agents: names or checkpoint paths")
    add_variant_overrides(lad, players=False)
    lad.add_argument("--out", metavar="FILE", help="also write the Markdown table to FILE")
    lad.add_argument("--plot", metavar="FILE", help="also draw the ratings with their error bars (.png, .svg, .pdf)")
    lad.add_argument("--no-timing", action="store_true", help="leave out ms/move (byte-identical reruns)")
    add_workers(lad)
    add_quiet(lad)
    lad.add_argument(
        "--list", action="store_true", help="list the shipped trained agents and what made them, then exit"
    )
    lad.set_defaults(func=_ladder)

    from bigtwo.arena.move_time import DEFAULT_MATCHES

    mt = sub.add_parser(
        "move-time",
        help="time an agent's moves, one game at a time (median, p95, p99, slowest)",
        description="Each agent plays --matches matches alone in one engine (as bigtwo play runs it), in every seat "
        "in turn, against --opponents; every one of its decisions is timed after one warm-up match.",
    )
    mt.add_argument("--agents", required=True, help="comma list of agent names or checkpoint paths to time")
    add_variant(mt)
    mt.add_argument("--matches", type=int, help=f"matches timed per agent (default {DEFAULT_MATCHES})")
    mt.add_argument("--games", type=int, help=argparse.SUPPRESS)  # the old name of --matches, read until 0.3
    add_seed(mt, 0, "seed of the deals")
    mt.add_argument("--opponents", default="heuristic", help="agent in every other seat (default heuristic)")
    add_variant_overrides(mt)
    mt.add_argument("--json", action="store_true", help="print a JSON list instead of the table")
    mt.set_defaults(func=_move_time)

    from bigtwo.arena.tune import DEFAULT_DEALS as TUNE_DEALS
    from bigtwo.arena.tune import DEFAULT_MIN_GAIN, DEFAULT_ROUNDS
    from bigtwo.arena.tune import DEFAULT_SEED as TUNE_SEED

    tu = sub.add_parser(
        "tune",
        help="tune the heuristic's weights for a variant by coordinate search on duplicate deals",
        description="Coordinate search of the heuristic's weights (bigtwo.arena.tune): each weight in turn takes the "
        "value that scores best in one seat against copies of the default heuristic, on the same duplicate "
        "deals; prints each step on stderr and the weights found as a list heuristic:weights=[...] takes.",
    )
    add_variant(tu)
    add_deals(tu, TUNE_DEALS, "deals per candidate")
    add_seed(tu, TUNE_SEED, "seed of the deals")
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
    add_workers(tu, 2, "processes playing the candidates")
    add_variant_overrides(tu)
    tu.add_argument("--out", metavar="FILE", help="also write the weights and every step to FILE (JSON)")
    add_quiet(tu)
    tu.set_defaults(func=_tune)
