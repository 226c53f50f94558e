"""Baseline agents and loaders: random, greedy, heuristic, search, and trained checkpoints.

``make_agent(name_or_path, variant, seed=None, **options)`` builds any of them:

| name | what | options |
|---|---|---|
| ``random`` | a uniformly random legal play | |
| ``greedy`` | the lowest legal play; passes only when it must | |
| ``heuristic`` | plans the hand into few plays, keeps control, presses | ``weights`` |
| ``search`` | determinized Monte-Carlo search with heuristic rollouts | ``simulations``, ``seconds``, ``top_k`` |
| a file path | a trained checkpoint (``agents.checkpoint``; ``.pt`` by the trainers) | the loader's |

Options may also be written into the name: ``"search:simulations=64,top_k=4"``.

>>> from bigtwo_env import load_variant
>>> make_agent("greedy", load_variant("taiwan"))
GreedyAgent('taiwan')
>>> make_agent("search:simulations=32", "japan").simulations
32
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

from bigtwo_env.variant import Variant, load_variant

from .base import Agent, RandomAgent
from .checkpoint import load_agent, register_loader
from .greedy import GreedyAgent
from .heuristic import HeuristicAgent
from .search import SearchAgent

AGENTS: dict[str, type[Agent]] = {
    "random": RandomAgent,
    "greedy": GreedyAgent,
    "heuristic": HeuristicAgent,
    "search": SearchAgent,
}

__all__ = [
    "AGENTS",
    "Agent",
    "GreedyAgent",
    "HeuristicAgent",
    "RandomAgent",
    "SearchAgent",
    "load_agent",
    "make_agent",
    "register_loader",
]


def _option_value(text: str) -> Any:
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return {"true": True, "false": False, "none": None}.get(text.lower(), text)


def _split_spec(spec: str) -> tuple[str, dict[str, Any]]:
    name, _, rest = spec.partition(":")
    options: dict[str, Any] = {}
    for item in filter(None, (s.strip() for s in rest.split(","))):
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise ValueError(
                f"agent options are written key=value, e.g. 'search:simulations=64'; got {item!r} in {spec!r}"
            )
        options[key.strip()] = _option_value(value.strip())
    return name, options


def make_agent(name_or_path: str | Path, variant: Variant | str, seed: int | None = None, **options: Any) -> Agent:
    """An agent by name (``random``, ``greedy``, ``heuristic``, ``search``, optionally with
    ``:key=value,...`` options) or by a checkpoint file's path, built to play ``variant``.

    ``ValueError`` for an unknown name (listing the allowed ones), an option the agent does not
    take, or a checkpoint that does not exist or no loader knows."""
    var = variant if isinstance(variant, Variant) else load_variant(variant)
    spec = str(name_or_path)
    name, spec_options = _split_spec(spec) if isinstance(name_or_path, str) else (spec, {})
    if name.lower() in AGENTS:
        cls = AGENTS[name.lower()]
        options = {**spec_options, **options}
        params = inspect.signature(cls.__init__).parameters
        accepted = [p for p in params if p not in ("self", "variant", "seed")]
        unknown = sorted(set(options) - set(accepted))
        if unknown:
            takes = f"takes: {', '.join(accepted)}" if accepted else "takes no options"
            raise ValueError(f"agent {name!r} does not take option(s) {', '.join(unknown)}; it {takes}")
        return cls(var, seed=seed, **options)
    path = Path(spec)
    looks_like_path = path.exists() or path.suffix != "" or "/" in spec or "\\" in spec
    if looks_like_path:
        return load_agent(path, var, seed, **options)
    raise ValueError(f"unknown agent {spec!r}; allowed: {', '.join(AGENTS)}, or a path to a checkpoint file (.pt)")
