"""How ``strong`` and ``lookahead`` are built: a search on top of a trained network.

``bigtwo.agents.registry`` declares both agents (``AGENT_SPECS["strong"]``, ``AGENT_SPECS["lookahead"]``)
with the options and the factories written here; ``make_agent`` checks the options against the
declaration and then calls the factory:

| name | what |
|---|---|
| ``STRONG_OPTIONS`` | strong's options: its network's, ``search`` (which search), the rollouts search's at ``pretrained.SEARCH_DEFAULTS``, the lookahead's own (``LOOKAHEAD_OWN``), ``trust``, ``network`` |
| ``LOOKAHEAD_OPTIONS`` | the lookahead's: its network's, ``bigtwo.agents.lookahead.LookaheadAgent``'s, ``network`` |
| ``build_strong`` | the shipped agent for a variant (``bigtwo.agents.pretrained``): ``search=lookahead``, ``search=rollouts``, or ``simulations=0``, the network alone |
| ``build_lookahead`` | the lookahead in which every seat plays the shipped network (or ``network``) |
| ``network_path``, ``belief_file`` | the weight file and the belief file an agent plays by |

An option's ``part`` says where it goes: ``network`` to the ``.pt`` loader
(``bigtwo.agents.loaders.load_agent``; needs torch), ``search`` to the search (either search, for
``SHARED`` and ``trust``), ``lookahead`` to strong's lookahead only, none to the factory itself
(strong's ``search``: which search).

>>> from bigtwo.env import load_variant
>>> sorted({o.part for o in STRONG_OPTIONS})  # "": the factory's own (``search``: which search)
['', 'lookahead', 'network', 'search']
>>> network_path(load_variant("taiwan"), "no/such.pt", "strong")
Traceback (most recent call last):
...
ValueError: strong:network='no/such.pt' is not a file; give a run's checkpoint or an exported .pt file (or leave network out for the shipped one)
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from bigtwo.agents import pretrained
from bigtwo.agents.base import Agent
from bigtwo.agents.endgame import DEFAULT_MAX_NODES
from bigtwo.agents.loaders import load_agent
from bigtwo.agents.lookahead import (
    DEFAULT_ENDGAME,
    DEFAULT_PLIES,
    DEFAULT_SAMPLES,
    DEFAULT_TRUST,
    LookaheadAgent,
)
from bigtwo.agents.lookahead import DEFAULT_TOP_K as LOOKAHEAD_TOP_K
from bigtwo.agents.options import NETWORK_OPTIONS, SEARCH_OPTIONS, WEB_SAMPLES, WEB_THREADS, WEB_TOP_K
from bigtwo.agents.search import SearchAgent
from bigtwo.agents.spec import Option
from bigtwo.env.rules.variant import Variant

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


STRONG_OPTIONS = _strong_options()
_STRONG_PART = {o.name: o.part for o in STRONG_OPTIONS}  # where each of strong's options goes
_LOOKAHEAD_PART = {o.name: o.part for o in LOOKAHEAD_OPTIONS}


def network_path(variant: Variant, network: Any, who: str) -> Path:
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


def belief_file(variant: Variant, given: Any, network: Any) -> Path | None:
    """The belief file the lookahead deals by: ``belief=FILE``; none with ``belief=none``; else the one
    shipped for the variant (``pretrained.belief_path``), when the network is the shipped one."""
    if given is None:
        return pretrained.belief_path(variant) if network is None else None
    if str(given).lower() == NO_BELIEF:
        return None
    return Path(str(given)).expanduser()


def build_lookahead(variant: Variant, seed: int | None = None, **options: Any) -> Agent:
    """Determinized lookahead (``bigtwo.agents.lookahead``) in which every seat plays the network shipped
    for ``variant`` (or ``network``); ``options`` are checked against its declaration (``LOOKAHEAD_OPTIONS``)."""
    search = {k: v for k, v in options.items() if _LOOKAHEAD_PART[k] == "search"}
    network_options = {k: v for k, v in options.items() if _LOOKAHEAD_PART[k] == "network"}
    belief = belief_file(variant, search.pop("belief", None), options.get("network"))
    if belief is not None:  # the network's loader reads the belief file (torch) beside it
        network_options["belief"] = belief
    path = network_path(variant, options.get("network"), LOOKAHEAD)
    pretrained.need_torch()
    policy: Any = load_agent(path, variant, seed, same_rules=True, label=LOOKAHEAD, **network_options)
    policy.scores_threads = 1
    agent = LookaheadAgent(variant, policy, seed=seed, belief=getattr(policy, "belief", None), **search)
    agent.provenance = policy.provenance
    return agent


def build_strong(variant: Variant, seed: int | None = None, **options: Any) -> Agent:
    """The shipped agent for ``variant``: a search on top of the network shipped for it
    (``bigtwo.agents.pretrained``, loaded by the ``.pt`` loader with the same rules required):
    ``search=lookahead`` (``bigtwo.agents.lookahead``: every seat plays the network, at its own defaults) or
    ``search=rollouts`` (``bigtwo.agents.search``: the heuristic's rollouts, the network's best plays among
    the candidates, at ``pretrained.SEARCH_DEFAULTS``); ``simulations=0`` is the network alone.
    ``options`` are checked against its declaration (``STRONG_OPTIONS``)."""
    given = {k: v for k, v in options.items() if _STRONG_PART[k] in ("search", "lookahead")}
    network_options = {k: v for k, v in options.items() if _STRONG_PART[k] == "network"}
    network_only = given.get("simulations") == 0 and not isinstance(given.get("simulations"), bool)
    if network_only and len(given) > 1:
        others = ", ".join(sorted(k for k in given if k != "simulations"))
        raise ValueError(f"strong:simulations=0 is the network alone; it takes no search option ({others})")
    rollouts_only = sorted(k for k in given if _STRONG_PART[k] == "search" and k not in (*SHARED, "trust"))
    lookahead_only = sorted(k for k in given if _STRONG_PART[k] == "lookahead")
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
    path = network_path(variant, network, pretrained.STRONG)
    belief = (
        belief_file(variant, given.pop("belief", None), network) if which == "lookahead" and not network_only else None
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
