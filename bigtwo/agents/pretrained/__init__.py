"""Trained agents shipped with the package: ``make_agent("strong", variant)``.

The ``strong`` agent is a search on top of a trained network (``bigtwo.train.policy_agent.PolicyAgent``).
By default (``search=lookahead``, ``STRONG_SEARCH``) it is ``bigtwo.agents.lookahead.LookaheadAgent``:
16 guesses of the hidden hands (48 on hong-kong with its shipped file, ``SHIPPED_SAMPLES``; dealt by
the variant's shipped belief where there is one, ``belief_path``), the network's 4 best plays each played out with **every seat
played by the network**, the network's best play kept unless another beats it by 1 standard
error (``trust``). ``search=rollouts`` (or any option only that search takes: ``simulations``,
``seconds``, ``weights``, ...) is the search it played before (``bigtwo.agents.search.SearchAgent``,
``SEARCH_DEFAULTS``: 200 rollouts per move): the network's two best plays join the heuristic's top
plays as candidates, rolled out by the heuristic with the weights tuned for the variant's scoring
where ``STRONG_WEIGHTS`` names sets of ``bigtwo.agents.heuristic.WEIGHT_SETS`` for it
(``search_weights``: under ``collect``, its own seat plays the ``collect`` set and the opponents in
its rollouts are modelled half as ``default``, half as ``collect``; under ``cards``, its own seat
plays the ``cards`` set and the opponents are modelled as ``default``; with ``weights`` given, the
opponents play those too unless ``opponent_weights`` is given as well), and ``trust=4`` with a
shipped file (``SHIPPED_TRUST``). The network
comes from a policy-only weight file in this folder, one per variant, named after it;
``strong:simulations=0`` plays the network alone (best-scored play), and the search's options
(its declaration, ``bigtwo.agents.registry.AGENT_SPECS["strong"]``, lists them) change the search.
``strong:network=scratch`` plays the network trained from scratch for the variant (``scratch/<variant
name>.pt`` here: no advice and no imitation; hong-kong and taiwan by DMC in an exploiter league,
``configs/train/scratch-dmc.yaml``, japan-chains by ``configs/train/scratch.yaml``;
docs/results.md#scratch-networks), where one is shipped. ``strong:network=PATH`` searches on top of another network (a run's
checkpoint or an exported file, trained on the variant's rules) instead of the shipped one, so two
networks' ``strong`` can meet at one table.
The files:

| what | where |
|---|---|
| weights | ``agents/pretrained/<variant name>.pt`` (package data: in the wheel), written by ``python -m bigtwo.train.export`` |
| from scratch | ``agents/pretrained/scratch/<variant name>.pt`` (hong-kong, taiwan, japan-chains): ``strong:network=scratch`` |
| beliefs | ``agents/pretrained/belief/<variant name>.pt`` (hong-kong): who holds the unseen cards, learned on the shipped network's games (``bigtwo belief``); the lookahead deals its guesses by it unless ``belief=none`` |
| the folder | this package's folder, or the one ``BIGTWO_PRETRAINED_DIR`` names (for your own weights, and the tests) |
| what made a file | its ``provenance`` (command, seed, steps, training time, code version): ``bigtwo ladder --list`` |

A file is matched by the variant's ``name`` only, and refused (``ValueError`` naming the fields)
when the variant's rules differ from the ones it was trained on: ``taiwan`` with ``players=3``
is not ``taiwan``. A variant without a file gets a ``ValueError`` naming the variants that have
one. Loading needs torch (the ``train`` extra, ``pip install 'bigtwo[train]'``); every other agent
name works without it. ``strong:mode=sample`` makes the network sample from its policy instead,
``device=cpu`` picks the torch device (default: CUDA when available).

``bigtwo play`` seats ``strong`` opponents by default where a file exists for the variant
(``heuristic`` otherwise, saying why), and ``bigtwo ladder`` rates it with the other agents.

>>> import os, tempfile
>>> with tempfile.TemporaryDirectory() as d:
...     os.environ[ENV_VAR] = d
...     before = has_weights("taiwan")
...     Path(d, "taiwan.pt").touch()
...     after = has_weights("taiwan"), shipped_variants()
...     del os.environ[ENV_VAR]
>>> before, after
(False, (True, ['taiwan']))
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from bigtwo.env.rules.variant import Variant

STRONG = "strong"  # the agent name; its options are declared in bigtwo.agents.registry (AGENT_SPECS["strong"])
# the search ``strong`` plays with no options (measured: docs/strong.md), with the
# heuristic weights ``search_weights`` picks; simulations=0: the network alone. 400 rollouts, which the
# halved rollout cost would allow, measured no better on 2,000 deals of either shipped variant and
# took over 50 ms at the slowest move; 300 with trust=4.9 measured no better on hong-kong either
# (docs/strong.md, "What the faster rollout kernel bought")
SEARCH_DEFAULTS: dict[str, Any] = {"simulations": 200, "schedule": "even"}
# which search ``strong`` plays unless told (``search=``): the lookahead, measured stronger than the rollouts
# search on both shipped variants (docs/strong.md, "Search that learns"); and its settings there
STRONG_SEARCHES = ("lookahead", "rollouts")
STRONG_SEARCH = "lookahead"
BELIEF = "belief"  # the folder of the shipped beliefs (belief_path); ``belief=none``: deal at random
# the search the web table's ``strong`` seats and coach play unless a client names one: the rollouts search,
# whose move costs less CPU (docs/strong.md, "Time per move"); with the lookahead, the web load test's
# person waited 1.27 s at the median for a turn in its busiest phase (its bar: 1 s; other jobs on the cores)
WEB_SEARCH = "rollouts"
# the heuristic weights ``strong`` searches with, by scoring (its own seat's, the other seats' in the
# rollouts): only where measured better (docs/strong.md, "The strong config"). Under ``collect`` the default
# model of the opponents alone lost to searching tables, so it is mixed with the tuned set; under
# ``cards`` (taiwan) the default model alone beat both heuristics and searchers
STRONG_WEIGHTS: dict[str, tuple[str, str]] = {"collect": ("collect", "default+collect"), "cards": ("cards", "default")}
# the trust (``bigtwo.agents.search``: standard errors a candidate must beat the network's best play by) that
# ``strong`` plays with the file shipped for a variant, where measured better than the plain search
# (docs/strong.md, "The networks shipped now"); the three later files take the same (docs/strong.md says what
# was measured of them); not with ``network=PATH``, ``trust=...`` or ``schedule=halving``
SHIPPED_TRUST: dict[str, float] = {name: 4.0 for name in ("hong-kong", "japan", "online-cn", "pusoy-dos", "taiwan")}
# the guesses of the hidden hands ``strong``'s lookahead deals a move with the file shipped for a variant, where
# a budget other than the lookahead's own default (``bigtwo.agents.lookahead.DEFAULT_SAMPLES``) measured better
# within the time bar (docs/strong.md, "How strong, and how fast"); not with ``network=PATH`` or ``samples=...``
SHIPPED_SAMPLES: dict[str, int] = {"hong-kong": 48}
SCRATCH = (
    "scratch"  # strong:network=scratch: the from-scratch network in this folder's scratch/ (no advice, no imitation)
)
NETWORK_ONLY = "strong-network"  # the name of strong:simulations=0
ENV_VAR = "BIGTWO_PRETRAINED_DIR"  # overrides the folder
SUFFIX = ".pt"
EXTRA = "pip install 'bigtwo[train]'"
FILE_NAME = re.compile(r"^[A-Za-z0-9][\w.-]*$")  # a variant name that can be a file name here


def pretrained_dir() -> Path:
    """The folder the weight files are read from: ``$BIGTWO_PRETRAINED_DIR``, else this package's folder."""
    chosen = os.environ.get(ENV_VAR)
    if not chosen:
        return Path(__file__).resolve().parent
    folder = Path(chosen).expanduser()
    if not folder.is_dir():
        raise ValueError(
            f"{ENV_VAR}={chosen!r} is not a folder; point it at a folder of <variant>.pt files, or unset it"
        )
    return folder


def shipped_variants() -> list[str]:
    """Names of the variants that have a weight file, sorted."""
    return sorted(p.stem for p in pretrained_dir().glob(f"*{SUFFIX}") if p.is_file() and FILE_NAME.match(p.stem))


def _name(variant: Variant | str) -> str:
    return variant.name if isinstance(variant, Variant) else str(variant)


def has_weights(variant: Variant | str) -> bool:
    """Whether a weight file exists for ``variant``'s name (its rules are checked when it loads)."""
    name = _name(variant)
    return bool(FILE_NAME.match(name)) and (pretrained_dir() / f"{name}{SUFFIX}").is_file()


def weights_path(variant: Variant | str) -> Path:
    """The weight file for ``variant``'s name; ``ValueError`` naming the variants that have one."""
    name = _name(variant)
    if has_weights(name):
        return pretrained_dir() / f"{name}{SUFFIX}"
    shipped = shipped_variants()
    have = f"variants with weights: {', '.join(shipped)}" if shipped else "none are shipped there yet"
    raise ValueError(
        f"the {STRONG!r} agent has no trained weights for variant {name!r} in {pretrained_dir()}; {have} "
        f"(export a run's checkpoint with `python -m bigtwo.train.export RUN_DIR --variant {name}`, or play another agent)"
    )


def belief_path(variant: Variant | str) -> Path | None:
    """The belief shipped for ``variant``'s name (``belief/<variant name>.pt``, written by ``bigtwo
    belief`` on the shipped network's games), which ``strong``'s lookahead deals its guesses by unless
    given ``belief=FILE`` or ``belief=none``; ``None`` where none is shipped."""
    name = _name(variant)
    path = pretrained_dir() / BELIEF / f"{name}{SUFFIX}"
    return path if FILE_NAME.match(name) and path.is_file() else None


def scratch_path(variant: Variant | str) -> Path:
    """The from-scratch network for ``variant``'s name (``scratch/<name>.pt`` in the folder:
    ``strong:network=scratch``); ``ValueError`` naming the variants that have one."""
    name = _name(variant)
    folder = pretrained_dir() / SCRATCH
    path = folder / f"{name}{SUFFIX}"
    if FILE_NAME.match(name) and path.is_file():
        return path
    have = sorted(p.stem for p in folder.glob(f"*{SUFFIX}") if p.is_file()) if folder.is_dir() else []
    raise ValueError(
        f"no from-scratch network for variant {name!r} in {folder}; "
        f"{'variants with one: ' + ', '.join(have) if have else 'none is shipped there'} "
        f"(train one with `bigtwo train --config scratch --set variant={name}`, then pass its checkpoint as network=PATH)"
    )


def search_weights(variant: Variant) -> dict[str, str]:
    """The heuristic weights ``strong`` searches with unless ``weights`` is given: the sets of
    ``bigtwo.agents.heuristic.WEIGHT_SETS`` that ``STRONG_WEIGHTS`` names for the variant's scoring (its own
    seat's ``weights``; ``opponent_weights``, the other seats' in the rollouts), else ``default``.

    >>> from bigtwo.env import load_variant
    >>> search_weights(load_variant("hong-kong", scoring="collect"))
    {'weights': 'collect', 'opponent_weights': 'default+collect'}
    >>> search_weights(load_variant("taiwan"))
    {'weights': 'cards', 'opponent_weights': 'default'}
    >>> search_weights(load_variant("japan"))
    {'weights': 'default', 'opponent_weights': 'default'}
    """
    own, others = STRONG_WEIGHTS.get(variant.scoring, ("default", "default"))
    return {"weights": own, "opponent_weights": others}


def need_torch() -> None:
    """``ValueError`` naming the ``train`` extra when torch cannot be imported."""
    try:
        import torch  # noqa: F401
    except ImportError as exc:
        raise ValueError(
            f"the {STRONG!r} agent plays trained network weights, which need torch ({exc}); "
            f"install the train extra: {EXTRA}"
        ) from None


def describe_provenance(provenance: dict[str, Any] | None) -> list[str]:
    """Lines that tell a reader where a network came from (``bigtwo ladder --list`` prints them; the keys are ``bigtwo.train.provenance``'s).

    >>> describe_provenance(None)
    ['provenance: not recorded']
    """
    if not provenance:
        return ["provenance: not recorded"]
    p = provenance
    seconds = p.get("train_seconds")
    took = "" if not seconds else f" in {seconds:.1f} s" if seconds < 60 else f" in {seconds / 60:.1f} min"
    cpu = p.get("train_cpu_seconds")
    if seconds and cpu:
        took += f" ({cpu / 60:.1f} CPU min)"
    lines = [f"{p.get('algo', '?')}, seed {p.get('seed', '?')}, {int(p.get('steps', 0)):,} env steps{took}"]
    for i, session in enumerate(p.get("sessions", [])):
        lines.append(f"{'trained by' if i == 0 else 'resumed by'}: {session.get('command')}  ({_code(session)})")
    exported = p.get("exported")
    if exported:
        lines.append(f"exported: {exported.get('time')} from {exported.get('source')}  ({_code(exported)})")
    return lines


def _code(v: dict[str, Any]) -> str:
    """``bigtwo 0.1.0, git 2580553 (dirty), torch 2.3.0, 2025-01-01T00:00:00+00:00``."""
    commit = v.get("git_commit")
    git = "no git checkout" if not commit else f"git {commit[:12]}{' (dirty)' if v.get('git_dirty') else ''}"
    parts = [f"bigtwo {v.get('version')}", git, f"torch {v.get('torch')}"]
    if v.get("started"):
        parts.append(f"started {v['started']}")
    return ", ".join(parts)
