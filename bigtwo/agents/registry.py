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
``simulations=0``: the network alone.

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
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from bigtwo.agents import pretrained
from bigtwo.agents.base import Agent, RandomAgent
from bigtwo.agents.endgame import DEFAULT_MAX_NODES
from bigtwo.agents.greedy import GreedyAgent
from bigtwo.agents.heuristic import HeuristicAgent, weight_mix, weight_set
from bigtwo.agents.loaders import (
    installed_loader,
    installed_suffixes,
    known_suffixes,
    load_agent,
    register_loader,
    unregister_loader,
)
from bigtwo.agents.lookahead import (
    DEFAULT_ENDGAME,
    DEFAULT_PLIES,
    DEFAULT_SAMPLES,
    DEFAULT_TRUST,
    LookaheadAgent,
)
from bigtwo.agents.lookahead import DEFAULT_TOP_K as LOOKAHEAD_TOP_K
from bigtwo.agents.search import DEFAULT_TOP_K, INFERENCES, MAX_SCALE, SCALES, SCHEDULES, SearchAgent
from bigtwo.agents.spec import LIGHT, NETWORK, SEARCH, AgentSpec, Option
from bigtwo.env.engine.engine import THREADS
from bigtwo.env.engine.jit import declared_kernels
from bigtwo.env.rules.settings import parse_settings
from bigtwo.env.rules.variant import Variant, load_variant

# What a web seat's agent may ask for at most (bigtwo.web.forms): the budget of one move.
WEB_SIMULATIONS = 2000  # rollouts a move (scale=cards: this budget at its largest, MAX_SCALE times the given one)
WEB_SECONDS = 1.0  # seconds of search a move
WEB_TOP_K = 10  # candidate plays
WEB_SAMPLES = 48  # lookahead: guesses of the hidden hands a move
WEB_THREADS = max(1, THREADS - 1)  # rollout threads: a core is left to the web server's event loop

LOOKAHEAD_OWN = (
    "samples",
    "plies",
    "belief",
    "endgame",
    "endgame_nodes",
)  # strong's options that only its lookahead takes
SHARED = ("top_k", "threads")  # strong's options that either search takes (and trust)
NO_BELIEF = "none"  # belief=none: the lookahead deals its guesses at random
LOOKAHEAD = "lookahead"  # the search that plays the network at every seat (bigtwo.agents.lookahead)
_OPTION = re.compile(r"^[A-Za-z_]\w*=")  # a "key=value" option part of an agent name

# ---------------------------------------------------------------- the options

WEIGHTS = Option(
    "weights",
    "value",
    None,
    "the heuristic's weights: a set's name, a mapping of weight names to values, or the 23 numbers",
    read=weight_set,
)
OPPONENT_WEIGHTS = Option(
    "opponent_weights",
    "value",
    None,
    "the other seats' weights in the rollouts (default: weights); sets joined by + model the opponents in turn",
    read=weight_mix,
)
SEARCH_OPTIONS = (
    Option("simulations", "count", None, "rollouts per move; default 1000 unless seconds", web_high=WEB_SIMULATIONS),
    Option("seconds", "number", None, "seconds per move", low=0, above=True, web_high=WEB_SECONDS),
    Option("top_k", "count", DEFAULT_TOP_K, "candidate plays", web_high=WEB_TOP_K),
    Option("threads", "count", None, "rollout threads; default one per core", web_high=WEB_THREADS),
    Option("schedule", "choice", "even", "how simulations are shared", choices=SCHEDULES),
    Option("scale", "choice", "none", "whether later moves get more rollouts", choices=SCALES),
    Option("infer", "choice", "none", "what weighs the sampled hands", choices=INFERENCES),
    WEIGHTS,
    OPPONENT_WEIGHTS,
)
# strong's network: the ``.pt`` loader's options (bigtwo.train.policy_agent.load_policy_agent), never on the web
NETWORK_OPTIONS = (
    Option(
        "mode",
        "choice",
        "greedy",
        "the network's best-scored play, or a sample of its policy",
        choices=("greedy", "sample"),
        web=False,
    ),
    Option("device", "device", None, "the torch device; default CUDA when available", web=False),
)


def _network_option(doc: str) -> Option:
    return Option("network", "text", None, doc, web=False)


LOOKAHEAD_OPTIONS = (
    *(replace(o, part="network") for o in NETWORK_OPTIONS),
    Option(
        "samples", "count", DEFAULT_SAMPLES, "guesses of the hidden hands a move", part="search", web_high=WEB_SAMPLES
    ),
    Option("top_k", "count", LOOKAHEAD_TOP_K, "the network's best plays searched", part="search", web_high=WEB_TOP_K),
    Option(
        "plies",
        "count",
        DEFAULT_PLIES,
        "own later turns before the value head reads the position; -1: every copy played to the end",
        low=-1,
        part="search",
        web_high=2,
    ),
    Option(
        "trust",
        "number",
        DEFAULT_TRUST,
        "standard errors a candidate must beat the network's best play by; 0: the best mean wins",
        low=0,
        part="search",
    ),
    Option(
        "threads",
        "count",
        None,
        "engine threads stepping the copies; default one per core",
        part="search",
        web_high=WEB_THREADS,
    ),
    Option(
        "belief",
        "text",
        None,
        "a belief file (bigtwo belief) the guesses of the hidden hands follow; none: dealt at random; "
        "default: the variant's shipped belief with the shipped network, else at random",
        part="search",
        web=False,
    ),
    Option(
        "endgame",
        "count",
        DEFAULT_ENDGAME,
        "cards in all hands at or below which a copy is solved exactly (every hand of its guess known); 0: never",
        low=0,
        part="search",
        web=False,  # its cost (copies times endgame_nodes) is the web's to bound: not offered there
    ),
    Option(
        "endgame_nodes",
        "count",
        DEFAULT_MAX_NODES,
        "moves the endgame solver tries a copy before it plays on instead",
        part="search",
        web=False,
    ),
    _network_option(
        "a run's checkpoint or exported file instead of the shipped network; scratch: the one trained from scratch"
    ),
)


def _network_path(variant: Variant, network: Any, who: str) -> Path:
    """The weight file ``who`` (an agent name) plays: the shipped one for ``variant`` (``network``
    None), the from-scratch one (``scratch``) or the file ``network`` names."""
    if network is None:
        return pretrained.weights_path(variant)
    if network == pretrained.SCRATCH:
        return pretrained.scratch_path(variant)
    path = Path(str(network)).expanduser()
    if not path.is_file():
        raise ValueError(
            f"{who}:network={network!r} is not a file; give a run's checkpoint or an exported .pt file "
            "(or leave network out for the shipped one)"
        )
    return path


def _lookahead(variant: Variant, seed: int | None = None, **options: Any) -> Agent:
    """Determinized lookahead (``bigtwo.agents.lookahead``) in which every seat plays the network shipped
    for ``variant`` (or ``network``); ``options`` are checked against its declaration."""
    spec = AGENT_SPECS[LOOKAHEAD]
    search = {k: v for k, v in options.items() if spec.option(k).part == "search"}
    network_options = {k: v for k, v in options.items() if spec.option(k).part == "network"}
    belief = _belief_file(variant, search.pop("belief", None), options.get("network"))
    if belief is not None:  # the network's loader reads the belief file (torch) beside it
        network_options["belief"] = belief
    path = _network_path(variant, options.get("network"), LOOKAHEAD)
    pretrained.need_torch()
    policy: Any = load_agent(path, variant, seed, same_rules=True, label=LOOKAHEAD, **network_options)
    policy.scores_threads = 1
    agent = LookaheadAgent(variant, policy, seed=seed, belief=getattr(policy, "belief", None), **search)
    agent.provenance = policy.provenance
    return agent


def _belief_file(variant: Variant, given: Any, network: Any) -> Path | None:
    """The belief file the lookahead deals by: ``belief=FILE``; none with ``belief=none``; else the one
    shipped for the variant (``pretrained.belief_path``), when the network is the shipped one."""
    if given is None:
        return pretrained.belief_path(variant) if network is None else None
    if str(given).lower() == NO_BELIEF:
        return None
    return Path(str(given)).expanduser()


def _strong_options() -> tuple[Option, ...]:
    """strong's options: its network's, ``search`` (which search), the rollouts search's (at
    ``pretrained.SEARCH_DEFAULTS``), the lookahead's own (``samples``, ``plies``), ``trust``, ``network``."""
    search: list[Option] = []
    for o in SEARCH_OPTIONS:
        o = replace(o, part="search", default=pretrained.SEARCH_DEFAULTS.get(o.name, o.default))
        if o.name == "simulations":
            o = replace(o, low=0, web_low=1, doc="rollouts per move (search=rollouts); 0: the network alone")
        elif o.name == "weights":
            o = replace(o, doc=o.doc + " (search=rollouts); default: the sets tuned for the variant's scoring")
        elif o.name == "top_k":
            o = replace(o, doc="candidate plays; default 4 with search=lookahead, 5 with search=rollouts")
        elif o.name == "threads":
            o = replace(o, doc="threads stepping the copies or playing the rollouts; default one per core")
        elif o.name not in SHARED:
            o = replace(o, doc=f"{o.doc} (search=rollouts)")
        search.append(o)
    own = [
        replace(o, part="lookahead", doc=f"{o.doc} (search=lookahead)")
        for o in LOOKAHEAD_OPTIONS
        if o.name in LOOKAHEAD_OWN
    ]
    shipped = ", ".join(f"{n} on {v}" for v, n in pretrained.SHIPPED_SAMPLES.items())
    own = [
        replace(o, default=None, doc=f"{o.doc}; default: {shipped} with its shipped network, else {DEFAULT_SAMPLES}")
        if o.name == "samples"
        else o
        for o in own
    ]
    trust = Option(
        "trust",
        "number",
        None,
        "standard errors a candidate must beat the network's best play by; default: 1 with search=lookahead, "
        "the shipped file's (4) with search=rollouts",
        low=0,
        part="search",
    )
    which = Option(
        "search",
        "choice",
        None,
        "lookahead (every seat plays the network) or rollouts (every seat plays the heuristic); default: "
        "lookahead, or rollouts when a rollouts-only option is given",
        choices=pretrained.STRONG_SEARCHES,
    )
    network = _network_option(
        "a run's checkpoint or exported file instead of the shipped network; scratch: the one trained from scratch"
    )
    return (*(replace(o, part="network") for o in NETWORK_OPTIONS), which, *search, *own, trust, network)


def _web_rollouts(options: Mapping[str, Any]) -> None:
    """On the web, ``scale=cards`` (up to ``MAX_SCALE`` times ``simulations`` a move) stays within ``WEB_SIMULATIONS``."""
    simulations = options.get("simulations")
    most = int(WEB_SIMULATIONS // MAX_SCALE)
    if options.get("scale") == "cards" and simulations is not None and simulations > most:
        raise ValueError(
            f"simulations must be an integer 1..{most} on this server (rollouts a move with scale=cards), "
            f"got {simulations!r}"
        )


# ---------------------------------------------------------------- strong


def _strong(variant: Variant, seed: int | None = None, **options: Any) -> Agent:
    """The shipped agent for ``variant``: a search on top of the network shipped for it
    (``bigtwo.agents.pretrained``, loaded by the ``.pt`` loader with the same rules required):
    ``search=lookahead`` (``bigtwo.agents.lookahead``: every seat plays the network, at its own defaults) or
    ``search=rollouts`` (``bigtwo.agents.search``: the heuristic's rollouts, the network's best plays among
    the candidates, at ``pretrained.SEARCH_DEFAULTS``); ``simulations=0`` is the network alone.
    ``options`` are checked against its declaration."""
    spec = AGENT_SPECS[pretrained.STRONG]
    given = {k: v for k, v in options.items() if spec.option(k).part in ("search", "lookahead")}
    network_options = {k: v for k, v in options.items() if spec.option(k).part == "network"}
    network_only = given.get("simulations") == 0 and not isinstance(given.get("simulations"), bool)
    if network_only and len(given) > 1:
        others = ", ".join(sorted(k for k in given if k != "simulations"))
        raise ValueError(f"strong:simulations=0 is the network alone; it takes no search option ({others})")
    rollouts_only = sorted(k for k in given if spec.option(k).part == "search" and k not in (*SHARED, "trust"))
    lookahead_only = sorted(k for k in given if spec.option(k).part == "lookahead")
    which = options.get("search") or ("rollouts" if rollouts_only and not network_only else pretrained.STRONG_SEARCH)
    if "search" not in options and rollouts_only and lookahead_only and not network_only:
        raise ValueError(
            f"strong: {', '.join(lookahead_only)} belong to search=lookahead and {', '.join(rollouts_only)} to "
            "search=rollouts; give one search's options"
        )
    wrong = lookahead_only if which == "rollouts" else [] if network_only else rollouts_only
    if wrong:
        takes = ", ".join(
            (*LOOKAHEAD_OWN, *SHARED, "trust") if which == "lookahead" else (o.name for o in SEARCH_OPTIONS)
        )
        raise ValueError(
            f"strong:search={which} does not take {', '.join(wrong)}; it takes {takes} "
            f"(search={'rollouts' if which == 'lookahead' else 'lookahead'} takes the others)"
        )
    network = options.get("network")
    path = _network_path(variant, network, pretrained.STRONG)
    belief = (
        _belief_file(variant, given.pop("belief", None), network) if which == "lookahead" and not network_only else None
    )
    if belief is not None:  # the network's loader reads the belief file (torch) beside it
        network_options["belief"] = belief
    pretrained.need_torch()
    # Any: a trained agent (bigtwo.train's PolicyAgent, above this layer), with scores_threads and provenance
    policy: Any = load_agent(path, variant, seed, same_rules=True, label=pretrained.STRONG, **network_options)
    if network_only:
        policy.name = pretrained.NETWORK_ONLY
        return policy
    policy.scores_threads = 1  # its forward passes are small; the cores go to the copies or the rollouts
    searcher: Any
    if which == "lookahead":
        samples = pretrained.SHIPPED_SAMPLES.get(variant.name)
        if network is None and samples is not None and "samples" not in given:
            given["samples"] = samples  # measured for the shipped file
        searcher = LookaheadAgent(variant, policy, seed=seed, belief=getattr(policy, "belief", None), **given)
    else:
        tuned = pretrained.search_weights(variant)
        if "weights" in given:  # then the search's own default: the opponents play them too, unless given
            del tuned["opponent_weights"]
        search = {**pretrained.SEARCH_DEFAULTS, **tuned, **given}
        if "seconds" in given and "simulations" not in given:
            del search["simulations"]  # a time budget instead of the default simulations
        trust = pretrained.SHIPPED_TRUST.get(variant.name)
        if network is None and trust is not None and "trust" not in given and search["schedule"] == "even":
            search["trust"] = trust  # measured for the shipped file
        searcher = SearchAgent(variant, seed=seed, prior=policy, **search)
    searcher.name = pretrained.STRONG
    searcher.provenance = policy.provenance
    return searcher


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
        web_rule=_web_rollouts,
    ),
    AgentSpec(
        pretrained.STRONG,
        _strong,
        "search on the trained network shipped for the variant, every seat played by the network (needs torch); "
        "simulations=0: the network alone",
        options=_strong_options(),
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
        web_rule=_web_rollouts,
    ),
    AgentSpec(
        LOOKAHEAD,
        _lookahead,
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
