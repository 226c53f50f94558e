"""One place that turns a name or a path into an agent, and where every agent is declared once.

``make_agent(name_or_path, variant, seed=None, **options)`` builds any agent: a name of
``AGENT_SPECS`` (``random``, ``greedy``, ``heuristic``, ``search``, ``strong``) or a trained
checkpoint's path (``CHECKPOINT``: the loader of its suffix, ``bigtwo.agents.loaders``).

**The declarations.** Each name has one ``AgentSpec`` (``bigtwo.agents.spec``) in ``SPECS``: its
class or factory, its options (type, default, allowed values, the web's caps), its cost class
(the web's thinking lanes), the kernel modules it compiles (the command line's note), and
whether a web seat may have it. Everything else reads them: ``make_agent`` checks the options
against them before it builds anything, the web table (``bigtwo.web.forms``, ``bigtwo.web.hub``)
offers and bounds what they say, ``kernel_modules`` tells ``bigtwo.cli.play`` what a command
compiles, each agent's repr shows the options it was given, and ``agents_table`` writes the
table on the agents page of the docs. Adding an agent is adding its entry to ``SPECS``
(tests/test_agent_specs.py checks each entry against its class's ``__init__``, the web's
options and the declared kernel modules).

Options may also be written into the name, ``KEY=VALUE`` items after a colon, each value read
as YAML (``bigtwo.env.rules.settings``): ``"search:simulations=64,top_k=4"``. ``parse_agent_list``
reads the comma lists of ``bigtwo tournament --agents`` and ``bigtwo play --opponents``.

``strong`` (``bigtwo.agents.pretrained``; needs torch) is a search on top of the trained network
shipped for the variant: the network's best plays join the search's candidates;
``simulations=0``: the network alone. How it and ``lookahead`` are built, and their options, are
``bigtwo.agents.strong``'s; the options several declarations share, and the web's caps on them
(``WEB_SIMULATIONS``, ``WEB_SECONDS``, ``WEB_TOP_K``, ``WEB_THREADS``), are ``bigtwo.agents.options``'s.

>>> from bigtwo.env import load_variant
>>> make_agent("greedy", load_variant("taiwan"))
GreedyAgent('taiwan')
>>> make_agent("search:simulations=32,top_k=5", "japan")
SearchAgent('japan', simulations=32)
>>> make_agent("search:top_k=0", "japan")
Traceback (most recent call last):
...
ValueError: top_k must be a positive integer (candidate plays), got 0
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from bigtwo.agents import pretrained
from bigtwo.agents.base import Agent, RandomAgent
from bigtwo.agents.greedy import GreedyAgent
from bigtwo.agents.heuristic import HeuristicAgent
from bigtwo.agents.loaders import (
    installed_loader,
    installed_suffixes,
    known_suffixes,
    load_agent,
    register_loader,
    unregister_loader,
)
from bigtwo.agents.lookahead import LookaheadAgent
from bigtwo.agents.options import (
    NETWORK_OPTIONS,
    SEARCH_OPTIONS,
    WEB_SECONDS,
    WEB_SIMULATIONS,
    WEB_THREADS,
    WEB_TOP_K,
    WEIGHTS,
    web_rollouts,
)
from bigtwo.agents.search import SearchAgent
from bigtwo.agents.spec import LIGHT, NETWORK, SEARCH, AgentSpec
from bigtwo.agents.strong import LOOKAHEAD, LOOKAHEAD_OPTIONS, STRONG_OPTIONS, build_lookahead, build_strong
from bigtwo.env.engine.jit import declared_kernels
from bigtwo.env.rules.settings import parse_settings
from bigtwo.env.rules.variant import Variant, load_variant

_OPTION = re.compile(r"^[A-Za-z_]\w*=")  # a "key=value" option part of an agent name

# ---------------------------------------------------------------- the agents, each declared once

# kernel modules by their labels in pyproject.toml's ``bigtwo.kernels`` entry points (bigtwo.env.engine.jit)
HEURISTIC_KERNELS = ("heuristic_agent", "heuristic_control", "heuristic_decision", "heuristic_planner")
SEARCH_KERNELS = (*HEURISTIC_KERNELS, "search")
# the trainers' network scoring plays on the CPU, and the heuristic's where it advises the network (the
# shipped networks are advised: bigtwo.train.advice)
NETWORK_KERNELS = (*HEURISTIC_KERNELS, "pair_scores")

SPECS: tuple[AgentSpec, ...] = (
    AgentSpec("random", RandomAgent, "a uniformly random legal play"),
    AgentSpec("greedy", GreedyAgent, "the lowest legal play; passes only when it must"),
    AgentSpec(
        "heuristic",
        HeuristicAgent,
        "plans the hand into few plays, keeps control, presses a player about to go out",
        options=(WEIGHTS,),
        kernels=HEURISTIC_KERNELS,
    ),
    AgentSpec(
        "search",
        SearchAgent,
        "determinized Monte-Carlo search over the heuristic's top plays, with heuristic rollouts",
        options=SEARCH_OPTIONS,
        cost=SEARCH,
        kernels=SEARCH_KERNELS,
        internal=("prior", "trust"),  # both weigh a network's plays: strong's
        web_rule=web_rollouts,
    ),
    AgentSpec(
        pretrained.STRONG,
        build_strong,
        "search on the trained network shipped for the variant, every seat played by the network (needs torch); "
        "simulations=0: the network alone",
        options=STRONG_OPTIONS,
        cost=SEARCH,
        kernels=(*SEARCH_KERNELS, "pair_scores"),
        # the network: loaded by the .pt loader; the search: the rollouts' or the lookahead (which takes
        # top_k, trust and threads from the "search" part as well: SHARED)
        parts={"search": SearchAgent, "lookahead": LookaheadAgent, "network": ".pt"},
        internal=(
            "prior",
            "policy",
            "path",
            "same_rules",
            "label",
            "belief",
        ),  # the network; its file and name, strong's; the belief file for its loader
        web_rule=web_rollouts,
    ),
    AgentSpec(
        LOOKAHEAD,
        build_lookahead,
        "determinized lookahead in which every seat plays the shipped network (needs torch)",
        options=LOOKAHEAD_OPTIONS,
        cost=SEARCH,
        kernels=NETWORK_KERNELS,
        parts={"search": LookaheadAgent, "network": ".pt"},
        internal=(
            "policy",
            "path",
            "same_rules",
            "label",
            "belief",
        ),  # the network; its file and name, the factory's; the belief file for its loader
    ),
)
AGENT_SPECS: dict[str, AgentSpec] = {spec.name: spec for spec in SPECS}
# a checkpoint by its path (a documented kind, no name): the loader of its suffix builds it
CHECKPOINT = AgentSpec(
    "checkpoint",
    load_agent,
    "a trained checkpoint by its file's path, built by the loader of its suffix (.pt: the trainers' load_policy_agent)",
    options=tuple(replace(o, part="network") for o in NETWORK_OPTIONS),
    cost=NETWORK,
    kernels=NETWORK_KERNELS,
    web=False,  # a web seat names only the files the server was started with (bigtwo serve --agent-file)
    parts={"network": ".pt"},
    internal=("path", "same_rules", "label", "belief"),
)
# the entries built by a class: name -> class
AGENTS: dict[str, type[Agent]] = {s.name: s.build for s in SPECS if isinstance(s.build, type)}


# ---------------------------------------------------------------- names and options


def split_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``"search:simulations=64,top_k=4"`` as ``("search", {"simulations": 64, "top_k": 4})``."""
    name, _, rest = spec.partition(":")
    items = [s.strip() for s in rest.split(",") if s.strip()]
    example = "e.g. 'search:simulations=64'"
    return name, parse_settings(items, what=f"agent {spec!r}", form=f"options written key=value, {example}")


def _looks_like_path(spec: str) -> bool:
    path = Path(spec)
    return path.exists() or path.suffix != "" or "/" in spec or "\\" in spec


def make_agent(name_or_path: str | Path, variant: Variant | str, seed: int | None = None, **options: Any) -> Agent:
    """An agent by name (a name of ``AGENT_SPECS``, optionally with ``:key=value,...`` options)
    or by a checkpoint file's path, built to play ``variant``.

    ``ValueError`` for an unknown name (listing the allowed ones), an option the agent does not
    take or a value it does not allow (naming what is allowed), a checkpoint that does not exist
    or no loader knows, or ``strong`` for a variant without shipped weights, with other rules than
    its weights', or without torch."""
    var = variant if isinstance(variant, Variant) else load_variant(variant)
    spec = str(name_or_path)
    name, spec_options = split_spec(spec) if isinstance(name_or_path, str) else (spec, {})
    entry = AGENT_SPECS.get(name.lower())
    if entry is not None:
        given = entry.check_options({**spec_options, **options})
        agent = entry.build(var, seed=seed, **given)
        agent.options = entry.given(given)
        if not isinstance(entry.build, type):
            agent.built_as = entry.name  # strong: its repr names the entry, not the class it is
        return agent
    if _looks_like_path(spec):
        agent = load_agent(Path(spec), var, seed, **options)
        agent.options = {"path": spec, **agent.options}
        return agent
    raise ValueError(f"unknown agent {spec!r}; allowed: {', '.join(AGENT_SPECS)}, or a path to a checkpoint file (.pt)")


def make_agent_from_spec(spec: str | Agent, variant: Variant, seed: int | None = None) -> Agent:
    """``spec`` itself if it is an ``Agent``, else ``make_agent(spec, variant, seed)``."""
    return spec if isinstance(spec, Agent) else make_agent(spec, variant, seed=seed)


def spec_of(spec: str) -> AgentSpec | None:
    """The declaration of the agent ``spec`` names (``"search:simulations=8"``): its entry of
    ``AGENT_SPECS``, ``CHECKPOINT`` for a path of a suffix the installed loaders read, else ``None``.

    >>> spec_of("Search:simulations=8").name, spec_of("runs/a/step_1.pt").name, spec_of("alphago")
    ('search', 'checkpoint', None)
    """
    text = str(spec)
    name = text.partition(":")[0].strip().lower()
    if name in AGENT_SPECS:
        return AGENT_SPECS[name]
    if _looks_like_path(text) and Path(text).suffix.lower() in installed_suffixes():
        return CHECKPOINT
    return None


def kernel_modules(specs: Iterable[str]) -> list[str]:
    """The compiled kernel modules the agents ``specs`` run besides the engine's (their
    declarations' ``kernels``, as pyproject.toml's ``bigtwo.kernels`` entry points name them),
    sorted; what ``bigtwo.cli.play.say_if_compiling`` looks for. ``ValueError`` for a label
    nothing declares.

    >>> kernel_modules(["random", "greedy"])
    []
    >>> kernel_modules(["search:simulations=8"])[-1]
    'bigtwo.agents.search'
    """
    declared = declared_kernels()
    labels = {label for s in specs if (entry := spec_of(s)) is not None for label in entry.kernels}
    unknown = sorted(labels - set(declared))
    if unknown:
        raise ValueError(
            f"kernel label(s) {', '.join(unknown)} are not declared in pyproject.toml's bigtwo.kernels entry points; "
            f"declared: {', '.join(declared)}"
        )
    return sorted(declared[label] for label in labels)


def part_target(entry: AgentSpec, part: str) -> Callable[..., Any]:
    """What takes the options of ``entry``'s ``part``: its callable, or the installed loader of its suffix."""
    target = entry.parts[part]
    return installed_loader(target) if isinstance(target, str) else target


def agents_table() -> str:
    """The agents page's table (docs/agents.md): every declared agent, and a checkpoint, with
    what it plays, its options (default), cost, kernels and whether a web seat may have it."""
    rows = ["| agent | what | options (defaults) | cost | kernels | web seat |", "|---|---|---|---|---|---|"]
    for entry in (*SPECS, CHECKPOINT):
        name = "a file path" if entry is CHECKPOINT else f"`{entry.name}`"
        options = ", ".join(f"`{o.name}={o.default!r}`" for o in entry.options)
        kernels = ", ".join(f"`{label}`" for label in entry.kernels) or "the engine's only"
        web_only = entry.option_names(web=True)
        refused = [f"`{o.name}`" for o in entry.options if o.name not in web_only]
        web = "no" if not entry.web else f"yes, not {', '.join(refused)}" if refused else "yes"
        cells = [name, entry.about, options or "none", entry.cost, kernels, web]
        rows.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(rows)


def parse_agent_list(text: str) -> list[str]:
    """Agent names or checkpoint paths from a comma list; ``NAME*N`` repeats a name N times, and
    ``key=value`` parts continue the options of a ``name:key=value`` entry before them.

    >>> parse_agent_list("heuristic, random*2, search:simulations=64,top_k=4")
    ['heuristic', 'random', 'random', 'search:simulations=64,top_k=4']
    >>> parse_agent_list("search:simulations=64,top_k=4*2, random")
    ['search:simulations=64,top_k=4', 'search:simulations=64,top_k=4', 'random']
    """
    out: list[str] = []
    continued = False  # the last entry may still take key=value parts
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        name, star, count = part.rpartition("*")
        repeat = 1
        if star and count.strip().isdigit() and name.strip():
            part, repeat = name.strip(), int(count)
            if repeat < 1:
                raise ValueError(f"{part}*{count.strip()}: a repeat count is at least 1")
        if continued and _OPTION.match(part):
            out[-1] = f"{out[-1]},{part}"
            out.extend([out[-1]] * (repeat - 1))
        else:
            out.extend([part] * repeat)
        continued = ":" in out[-1] and repeat == 1 if out else False
    if not out:
        raise ValueError("no agents given: list agent names or checkpoint paths, e.g. heuristic,random,random,random")
    return out


def default_opponent(variant: Variant) -> tuple[str, str]:
    """The default opponent for ``variant`` and a line saying which: ``strong`` where its weights
    are shipped and load for these rules (with torch), else ``heuristic`` with the reason."""
    try:
        if not pretrained.has_weights(variant):
            return "heuristic", f"Opponents: heuristic (no trained agent is shipped for {variant.name})."
        make_agent(pretrained.STRONG, variant, seed=0)
    except ValueError as exc:  # a BIGTWO_PRETRAINED_DIR that is no folder, other rules, no torch
        return "heuristic", f"Opponents: heuristic ({exc})."
    return pretrained.STRONG, f"Opponents: strong, the trained agent shipped for {variant.name}."


__all__ = [
    "AGENTS",
    "AGENT_SPECS",
    "CHECKPOINT",
    "LIGHT",
    "NETWORK",
    "SEARCH",
    "SPECS",
    "WEB_SECONDS",
    "WEB_SIMULATIONS",
    "WEB_THREADS",
    "WEB_TOP_K",
    "agents_table",
    "default_opponent",
    "kernel_modules",
    "known_suffixes",
    "load_agent",
    "make_agent",
    "make_agent_from_spec",
    "parse_agent_list",
    "part_target",
    "register_loader",
    "spec_of",
    "split_spec",
    "unregister_loader",
]
