"""The ``bigtwo play`` subcommand (see ``bigtwo.agents.play``), and the note every command prints before a
first run compiles the kernels. Heavy imports happen inside the handlers; the arena's subcommands
are in ``bigtwo.cli.arena``.

A first run compiles the Numba kernels before anything else shows (about 30 s for the engine's, as much again
for an agent's such as ``strong``'s): each command then says so in one line on stderr (``say_if_compiling``,
``compiling_note``: whose kernels and how long), only when Numba's cache folder
(``bigtwo.env.engine.jit.CACHE_DIR``) lacks compiled code of the engine's or the agents' kernels.

What counts: a kernel module counts as compiled when the folder holds an index file (``*.nbi``) of
one of its cached kernels (``bigtwo.env.engine.jit.cached_kernels``). A module whose kernels are all
``inline="always"`` (the heuristic's ``control``) writes no file of its own, since its code is
compiled into its callers': it is not looked for, or the note would show on every run. And the
engine's modules looked for are the two every game runs (``ENGINE_KERNELS``): the privileged
state's kernels (``bigtwo.env.engine.state``) are compiled only when a trainer asks for that state."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from bigtwo.cli.options import (
    add_seed,
    add_variant,
    add_variant_overrides,
    variant_overrides,
)

# Whose compiled kernels (the modules ``bigtwo.env.engine.jit.kernel_files`` lists, declared in pyproject.toml's
# ``bigtwo.kernels`` group) a command runs: every command the engine's rules and observations, and each agent
# those its declaration names (``bigtwo.agents.registry.kernel_modules``).
ENGINE_KERNELS = ("bigtwo.env.engine.kernels", "bigtwo.env.engine.observation")
# Seconds a first compile takes on 2 idle cores (measured: docs/results.md#first-run): the engine's kernels
# (a Game's first play), and an agent's on top of them (``strong``'s first move once the engine's are cached).
ENGINE_COMPILE_SECONDS = 30
AGENT_COMPILE_SECONDS = 30
COMPILING = "bigtwo: compiling"  # how every note starts: ``compiling_note``


def compiling_note(engine: bool, agents: bool) -> str:
    """The line said before a first run compiles: whose kernels (the game's, the agents', or both) and how long
    that takes here.

    >>> compiling_note(True, False)
    "bigtwo: compiling the game's kernels (first run after an install or an update, about 30 s)..."
    >>> compiling_note(True, True)
    "bigtwo: compiling the game's and the agents' kernels (first run after an install or an update, about a minute)..."
    """
    whose = {(True, False): "the game's", (False, True): "the agents'", (True, True): "the game's and the agents'"}
    seconds = ENGINE_COMPILE_SECONDS * engine + AGENT_COMPILE_SECONDS * agents
    took = "about a minute" if 45 <= seconds <= 90 else f"about {seconds} s"
    return f"{COMPILING} {whose[engine, agents]} kernels (first run after an install or an update, {took})..."


def kernels_cached(cache_dir: Path | None, modules: Sequence[str] = ENGINE_KERNELS, root: Path | None = None) -> bool:
    """Whether Numba's cache folder ``cache_dir`` (``bigtwo.env.engine.jit.CACHE_DIR``) holds compiled
    code of every declared kernel module in or under ``modules`` (module or package names; the
    files under ``root``, the folder holding the packages) that writes any (see the module
    docstring); ``True`` when there is no cache folder to look in (nothing to say)."""
    if cache_dir is None:
        return True
    from numba.core.caching import UserProvidedCacheLocator

    from bigtwo.env.engine.jit import cached_kernels, kernel_files

    files = kernel_files() if root is None else kernel_files(root)
    for module, source in files.items():
        if not any(module == m or module.startswith(m + ".") for m in modules):
            continue
        if not cached_kernels(source):  # all inline="always": compiled into its callers, no file of its own
            continue
        folder = Path(cache_dir) / UserProvidedCacheLocator.get_suitable_cache_subpath(str(source))
        if not any(folder.glob(f"{source.stem}.*.nbi")):
            return False
    return True


def say_if_compiling(agents: Sequence[str] = (), stream: TextIO | None = None) -> bool:
    """Print ``COMPILING`` on ``stream`` (stderr) when the kernels a command with these agents
    (names or checkpoint paths) will run are not compiled yet, so a first run does not sit silent
    for a minute; returns whether it did."""
    from bigtwo.agents.registry import kernel_modules
    from bigtwo.env.engine.jit import CACHE_DIR

    engine = not kernels_cached(CACHE_DIR, ENGINE_KERNELS)
    theirs = kernel_modules(str(a) for a in agents)
    agents_too = bool(theirs) and not kernels_cached(CACHE_DIR, theirs)
    if not engine and not agents_too:
        return False
    out = sys.stderr if stream is None else stream
    print(compiling_note(engine, agents_too), file=out, flush=True)
    return True


def _play(args: argparse.Namespace) -> int:
    from bigtwo.agents.play import TerminalGame
    from bigtwo.agents.registry import parse_agent_list

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
    """Add ``play`` to the ``bigtwo`` command."""
    q = sub.add_parser(
        "play",
        help="play a match in the terminal against agents",
        description="Play Big Two in the terminal. Type cards (3C 3D), a number from 'list', "
        "'pass', 'hint', 'help' or 'quit'.",
    )
    add_variant(q)
    q.add_argument(
        "--opponents",
        default=None,
        help="agent name or checkpoint path for every other seat, or a comma list "
        "(default: strong where trained weights are shipped for the variant, else heuristic)",
    )
    q.add_argument("--seat", type=int, default=0, help="your seat (default 0)")
    add_seed(q, None, "deal seed")
    q.add_argument("--hint", default="heuristic", help="agent asked by 'hint' (default heuristic)")
    q.add_argument("--symbols", action="store_true", help="show suits as ♦ ♣ ♥ ♠")
    add_variant_overrides(q)
    q.set_defaults(func=_play)
