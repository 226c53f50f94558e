"""Checkpoint loaders: a trained agent's file turned into an ``Agent`` by the loader of its suffix.

A loader is registered for a file suffix (``".pt"``) or a predicate on the path and called as
``fn(path, variant, seed, **options)``. Installed packages declare loaders as entry points of
the group ``bigtwo.agent_loaders``, named by suffix without the dot (this project's pyproject:
``pt`` and ``pth`` go to the trainers' ``load_policy_agent``); an entry point is imported only
when a file of its suffix is loaded, so this module never imports torch. ``register_loader``
adds one at run time; the most recent registration wins, and any registration wins over the
entry points. ``bigtwo.agents.registry.make_agent`` loads any path it is given through here.

>>> import tempfile, os
>>> from bigtwo.agents.base import RandomAgent
>>> from bigtwo.env import load_variant
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
from collections.abc import Callable
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import Any

from bigtwo.agents.base import Agent
from bigtwo.env.rules.variant import Variant, load_variant

LOADER_GROUP = "bigtwo.agent_loaders"  # entry points: suffix without the dot -> loader

Loader = Callable[..., Agent]
Match = Callable[[Path], bool]

_LOADERS: list[tuple[str | Match, Match, Loader]] = []


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


def _import(ep: EntryPoint, what: str) -> Loader:
    """The loader ``ep`` declares, imported; ``ValueError`` naming ``what`` needed it and what is missing."""
    try:
        return ep.load()
    except ImportError as exc:
        dist = ep.dist.name if ep.dist is not None else "its package"
        raise ValueError(
            f"{what}: .{ep.name} files are loaded by {ep.value} (from {dist}), which cannot be imported: {exc}. "
            f"Trained checkpoints need the train extra: pip install 'bigtwo[train]'"
        ) from exc


def _entry_point_loader(ep: EntryPoint) -> Loader:
    """A loader that imports ``ep`` when first called; ``ValueError`` naming what is missing."""

    def load(path: str, variant: Variant, seed: int | None = None, **options: Any) -> Agent:
        return _import(ep, path)(path, variant, seed, **options)

    return load


@functools.cache
def _installed_loaders() -> tuple[tuple[str, Match, Loader], ...]:
    """The loaders declared by installed packages (entry points of ``LOADER_GROUP``)."""
    found = []
    for ep in entry_points(group=LOADER_GROUP):
        suffix = "." + ep.name.lstrip(".")
        found.append((suffix, _matcher(suffix), _entry_point_loader(ep)))
    return tuple(found)


def installed_loader(suffix: str) -> Loader:
    """The function the installed packages declare as the loader of ``suffix`` (``".pt"``),
    imported; ``ValueError`` if none does, or it cannot be imported."""
    for ep in entry_points(group=LOADER_GROUP):
        if "." + ep.name.lstrip(".") == suffix.lower():
            return _import(ep, f"the {suffix} loader")
    raise ValueError(f"no installed package declares a loader of {suffix} files; installed: {installed_suffixes()}")


def installed_suffixes() -> list[str]:
    """Suffixes the installed packages' loaders read (the entry points of ``LOADER_GROUP``; this
    project's: ``.pt`` and ``.pth``, trained networks)."""
    return sorted({key for key, _m, _f in _installed_loaders()})


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


__all__ = [
    "LOADER_GROUP",
    "Loader",
    "Match",
    "installed_suffixes",
    "known_suffixes",
    "load_agent",
    "register_loader",
    "unregister_loader",
]
