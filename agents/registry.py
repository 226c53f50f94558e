"""One place that turns a name or a path into an agent: names, options, lists and checkpoint loaders.

``make_agent(name_or_path, variant, seed=None, **options)`` builds any agent:

| name | what | options |
|---|---|---|
| ``random`` | a uniformly random legal play | |
| ``greedy`` | the lowest legal play; passes only when it must | |
| ``heuristic`` | plans the hand into few plays, keeps control, presses | ``weights`` |
| ``search`` | determinized Monte-Carlo search with heuristic rollouts | ``simulations``, ``seconds``, ``top_k``, ``weights``, ``opponent_weights``, ``threads``, ``schedule``, ``scale``, ``infer`` |
| ``strong`` | search on top of the trained network shipped for the variant (``bigtwo.agents.pretrained``; needs torch): the network's best plays join the search's candidates; ``simulations=0``: the network alone | ``mode``, ``device``, ``simulations``, ``seconds``, ``top_k``, ``threads``, ``schedule``, ``scale``, ``infer``, ``weights``, ``opponent_weights``, ``trust``, ``network`` |
| a file path | a trained checkpoint, by its suffix's loader (below) | the loader's |

Options may also be written into the name, ``KEY=VALUE`` items after a colon, each value read
as YAML (``bigtwo.env.rules.settings``): ``"search:simulations=64,top_k=4"``. ``parse_agent_list``
reads the comma lists of ``bigtwo tournament --agents`` and ``bigtwo play --opponents``.

**Checkpoint loaders.** A loader is registered for a file suffix (``".pt"``) or a predicate on
the path and called as ``fn(path, variant, seed, **options)``. Installed packages declare
loaders as entry points of the group ``bigtwo.agent_loaders``, named by suffix without the dot
(this project's pyproject: ``pt`` and ``pth`` go to the trainers' ``load_policy_agent``); an
entry point is imported only when a file of its suffix is loaded, so this module never imports
torch. ``register_loader`` adds one at run time; the most recent registration wins, and any
registration wins over the entry points.

>>> from bigtwo.env import load_variant
>>> make_agent("greedy", load_variant("taiwan"))
GreedyAgent('taiwan')
>>> make_agent("search:simulations=32", "japan").simulations
32
>>> import tempfile, os
>>> register_loader(".rnd", lambda path, variant, seed: RandomAgent(variant, seed=seed))
>>> with tempfile.TemporaryDirectory() as d:
...     p = os.path.join(d, "a.rnd")
...     _ = open(p, "w").write("x")
...     type(load_agent(p, load_variant("taiwan"), seed=0)).__name__
'RandomAgent'
>>> unregister_loader(".rnd")
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import Any

from bigtwo.agents import pretrained
from bigtwo.agents.base import Agent, RandomAgent
from bigtwo.agents.greedy import GreedyAgent
from bigtwo.agents.heuristic import HeuristicAgent
from bigtwo.agents.search import SearchAgent
from bigtwo.env.rules.settings import parse_settings
from bigtwo.env.rules.variant import Variant, load_variant

AGENTS: dict[str, type[Agent]] = {
    "random": RandomAgent,
    "greedy": GreedyAgent,
    "heuristic": HeuristicAgent,
    "search": SearchAgent,
}
LOADER_GROUP = "bigtwo.agent_loaders"  # entry points: suffix without the dot -> loader

Loader = Callable[..., Agent]
Match = Callable[[Path], bool]

_LOADERS: list[tuple[str | Match, Match, Loader]] = []
_OPTION = re.compile(r"^[A-Za-z_]\w*=")  # a "key=value" option part of an agent name


# ---------------------------------------------------------------- names and options


def split_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``"search:simulations=64,top_k=4"`` as ``("search", {"simulations": 64, "top_k": 4})``."""
    name, _, rest = spec.partition(":")
    items = [s.strip() for s in rest.split(",") if s.strip()]
    example = "e.g. 'search:simulations=64'"
    return name, parse_settings(items, what=f"agent {spec!r}", form=f"options written key=value, {example}")


def make_agent(name_or_path: str | Path, variant: Variant | str, seed: int | None = None, **options: Any) -> Agent:
    """An agent by name (``random``, ``greedy``, ``heuristic``, ``search``, ``strong``, optionally
    with ``:key=value,...`` options) or by a checkpoint file's path, built to play ``variant``.

    ``ValueError`` for an unknown name (listing the allowed ones), an option the agent does not
    take, a checkpoint that does not exist or no loader knows, or ``strong`` for a variant without
    shipped weights, with other rules than its weights', or without torch."""
    var = variant if isinstance(variant, Variant) else load_variant(variant)
    spec = str(name_or_path)
    name, spec_options = split_spec(spec) if isinstance(name_or_path, str) else (spec, {})
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
    if name.lower() == pretrained.STRONG:
        return _strong(var, seed, {**spec_options, **options})
    path = Path(spec)
    looks_like_path = path.exists() or path.suffix != "" or "/" in spec or "\\" in spec
    if looks_like_path:
        return load_agent(path, var, seed, **options)
    raise ValueError(
        f"unknown agent {spec!r}; allowed: {', '.join([*AGENTS, pretrained.STRONG])}, "
        "or a path to a checkpoint file (.pt)"
    )


def _strong(variant: Variant, seed: int | None, options: dict[str, Any]) -> Agent:
    """The shipped agent for ``variant``: a search whose candidates and rollouts start from the
    network shipped for it (``bigtwo.agents.pretrained``, loaded by the ``.pt`` loader with the same
    rules required), at ``pretrained.SEARCH_DEFAULTS`` unless options say otherwise;
    ``simulations=0`` is the network alone."""
    allowed = (*pretrained.OPTIONS, *pretrained.SEARCH_OPTIONS, pretrained.NETWORK)
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise ValueError(
            f"agent {pretrained.STRONG!r} does not take option(s) {', '.join(unknown)}; it takes: {', '.join(allowed)}"
        )
    given = {k: options.pop(k) for k in pretrained.SEARCH_OPTIONS if k in options}
    tuned = pretrained.search_weights(variant)
    if "weights" in given:  # then the search's own default: the opponents play them too, unless given
        del tuned["opponent_weights"]
    search = {**pretrained.SEARCH_DEFAULTS, **tuned, **given}
    if "seconds" in given and "simulations" not in given:
        del search["simulations"]  # a time budget instead of the default simulations
    network_only = given.get("simulations") == 0 and not isinstance(given.get("simulations"), bool)
    if network_only and len(given) > 1:
        others = ", ".join(sorted(k for k in given if k != "simulations"))
        raise ValueError(f"strong:simulations=0 is the network alone; it takes no search option ({others})")
    network = options.pop(pretrained.NETWORK, None)
    if network is None:
        path = pretrained.weights_path(variant)
        trust = pretrained.SHIPPED_TRUST.get(variant.name)
        if trust is not None and not network_only and "trust" not in given and search["schedule"] == "even":
            search["trust"] = trust  # measured for the shipped file
    else:
        path = Path(str(network)).expanduser()
        if not path.is_file():
            raise ValueError(
                f"strong:network={network!r} is not a file; give a run's checkpoint or an exported .pt file "
                "(or leave network out for the shipped one)"
            )
    pretrained.need_torch()
    # Any: a trained agent (bigtwo.train's PolicyAgent, above this layer), with scores_threads and provenance
    policy: Any = load_agent(path, variant, seed, same_rules=True, label=pretrained.STRONG, **options)
    if network_only:
        policy.name = pretrained.NETWORK_ONLY
        return policy
    policy.scores_threads = 1  # its one-position forward; the cores go to the rollouts
    searcher = SearchAgent(variant, seed=seed, prior=policy, **search)
    searcher.name = pretrained.STRONG
    searcher.provenance = policy.provenance
    return searcher


def make_agent_from_spec(spec: str | Agent, variant: Variant, seed: int | None = None) -> Agent:
    """``spec`` itself if it is an ``Agent``, else ``make_agent(spec, variant, seed)``."""
    return spec if isinstance(spec, Agent) else make_agent(spec, variant, seed=seed)


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


# ---------------------------------------------------------------- checkpoint loaders


def _matcher(suffix_or_predicate: str | Match) -> Match:
    if isinstance(suffix_or_predicate, str):
        suffix = suffix_or_predicate.lower()
        if not suffix.startswith("."):
            raise ValueError(f"a loader suffix starts with a dot, e.g. '.pt'; got {suffix_or_predicate!r}")
        return lambda p: p.name.lower().endswith(suffix)
    if callable(suffix_or_predicate):
        return suffix_or_predicate
    raise ValueError(
        f"register a loader for a suffix such as '.pt' or a predicate on the path, got {suffix_or_predicate!r}"
    )


def register_loader(suffix_or_predicate: str | Match, fn: Loader) -> None:
    """Load files matching ``suffix_or_predicate`` (``".pt"``, or ``f(Path) -> bool``) with
    ``fn(path: str, variant: Variant, seed: int | None, **options) -> Agent``. Later
    registrations take precedence."""
    if not callable(fn):
        raise ValueError(f"a loader must be callable, got {fn!r}")
    _LOADERS.append((suffix_or_predicate, _matcher(suffix_or_predicate), fn))


def unregister_loader(suffix_or_predicate: str | Match) -> None:
    """Remove the loaders registered for exactly this suffix or predicate."""
    _LOADERS[:] = [entry for entry in _LOADERS if entry[0] != suffix_or_predicate]


def _entry_point_loader(ep: EntryPoint) -> Loader:
    """A loader that imports ``ep`` when first called; ``ValueError`` naming what is missing."""

    def load(path: str, variant: Variant, seed: int | None = None, **options: Any) -> Agent:
        try:
            fn = ep.load()
        except ImportError as exc:
            dist = ep.dist.name if ep.dist is not None else "its package"
            raise ValueError(
                f"{path}: .{ep.name} files are loaded by {ep.value} (from {dist}), which cannot be imported: {exc}. "
                f"Trained checkpoints need the train extra: pip install 'bigtwo[train]'"
            ) from exc
        return fn(path, variant, seed, **options)

    return load


@functools.cache
def _installed_loaders() -> tuple[tuple[str, Match, Loader], ...]:
    """The loaders declared by installed packages (entry points of ``LOADER_GROUP``)."""
    found = []
    for ep in entry_points(group=LOADER_GROUP):
        suffix = "." + ep.name.lstrip(".")
        found.append((suffix, _matcher(suffix), _entry_point_loader(ep)))
    return tuple(found)


def known_suffixes() -> list[str]:
    """Suffixes with a loader, registered or installed (predicates are not listed)."""
    keys = [key for key, _m, _f in (*_installed_loaders(), *_LOADERS)]
    return sorted({key for key in keys if isinstance(key, str)})


def load_agent(path: str | Path, variant: Variant | str, seed: int | None = None, **options: Any) -> Agent:
    """The ``Agent`` stored in the checkpoint file ``path``, to play ``variant``.

    ``ValueError`` if the file does not exist, no loader knows it, or its loader's package cannot
    be imported (e.g. a ``.pt`` file without torch)."""
    p = Path(path)
    if not p.exists():
        raise ValueError(f"checkpoint file {str(path)!r} does not exist")
    if not p.is_file():
        raise ValueError(f"checkpoint {str(path)!r} is not a file")
    var = variant if isinstance(variant, Variant) else load_variant(variant)
    for _key, match, fn in (*reversed(_LOADERS), *reversed(_installed_loaders())):
        if match(p):
            return fn(str(p), var, seed, **options)
    raise ValueError(
        f"{str(path)!r} is not a checkpoint any loader knows; known suffixes: {', '.join(known_suffixes()) or 'none'} "
        f"(loaders come from register_loader or the {LOADER_GROUP!r} entry points of installed packages)"
    )


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
