"""Checkpoint loaders: turn a trained agent's file into an ``Agent`` by its path.

A loader is registered for a file suffix (``".pt"``) or a predicate on the path, and is called
as ``fn(path, variant, seed, **options)``; the most recently registered match wins, so a
package can replace a default. Out of the box ``.pt`` and ``.pth`` files go to
``train.policy_agent.load_policy_agent``, imported only when such a file is loaded (torch is
never imported by this module).

>>> import tempfile, os
>>> from bigtwo_env import load_variant
>>> from agents.base import RandomAgent
>>> register_loader(".rnd", lambda path, variant, seed: RandomAgent(variant, seed=seed))
>>> with tempfile.TemporaryDirectory() as d:
...     p = os.path.join(d, "a.rnd")
...     _ = open(p, "w").write("x")
...     type(load_agent(p, load_variant("taiwan"), seed=0)).__name__
'RandomAgent'
>>> unregister_loader(".rnd")
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from bigtwo_env.variant import Variant, load_variant

from .base import Agent

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


def known_suffixes() -> list[str]:
    """Suffixes with a registered loader (predicates are not listed)."""
    return sorted({key for key, _m, _f in _LOADERS if isinstance(key, str)})


def _torch_policy(path: str, variant: Variant, seed: int | None = None, **options: Any) -> Agent:
    try:
        from train.policy_agent import load_policy_agent
    except ImportError as exc:
        raise ValueError(
            f"{path}: loading a .pt checkpoint needs the trainers and torch (pip install 'bigtwo[train]'): {exc}"
        ) from exc
    return load_policy_agent(path, variant, seed, **options)


register_loader(".pt", _torch_policy)
register_loader(".pth", _torch_policy)


def load_agent(path: str | Path, variant: Variant | str, seed: int | None = None, **options: Any) -> Agent:
    """The ``Agent`` stored in the checkpoint file ``path``, to play ``variant``.

    ``ValueError`` if the file does not exist or no loader knows it."""
    p = Path(path)
    if not p.exists():
        raise ValueError(f"checkpoint file {str(path)!r} does not exist")
    if not p.is_file():
        raise ValueError(f"checkpoint {str(path)!r} is not a file")
    var = variant if isinstance(variant, Variant) else load_variant(variant)
    for _key, match, fn in reversed(_LOADERS):
        if match(p):
            return fn(str(p), var, seed, **options)
    raise ValueError(
        f"{str(path)!r} is not a checkpoint any loader knows; known suffixes: {', '.join(known_suffixes())}"
    )
