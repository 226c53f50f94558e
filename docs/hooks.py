"""MkDocs hooks (``hooks:`` in mkdocs.yml): the pages' generated parts, written from the code itself.

A page asks for a generated part with a marker on a line of its own; ``on_page_markdown`` puts the
part in its place before the page is converted, so nothing the code declares is copied by hand:

| marker | what it becomes | from |
|---|---|---|
| ``<!-- bigtwo:observation -->`` | the observation layout table (index ranges, 4 players, part, what) | ``bigtwo.env.engine.observation.layout_table`` (``LAYOUT``) |
| ``<!-- bigtwo:actions -->`` | each named variant's action ids, one row per run of a kind | ``bigtwo.env.rules.actions.action_table`` |
| ``<!-- bigtwo:agents -->`` | every agent's declaration: what it plays, options with defaults, cost, kernels, web use | ``bigtwo.agents.registry.agents_table`` (``SPECS``) |
| ``<!-- bigtwo:train-fields -->`` | every training config field: default, description, what it allows | ``bigtwo.train.config`` (what ``bigtwo train --fields`` prints) |
| ``<!-- bigtwo:panel -->`` | the benchmark's panel: each member, its agent on taiwan, whether the default panel has it | ``bigtwo.arena.panel.panel_table`` (``PANEL``) |
| ``<!-- bigtwo:api PACKAGE -->`` | one mkdocstrings ``:::`` block per module of the package | the package's folder |

A marker that names nothing known fails the build (``ValueError``), as a broken link does under
``mkdocs build --strict``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MARKER = re.compile(r"^<!-- bigtwo:([a-z-]+)(?: ([a-z_.]+))? -->$", flags=re.M)
API_PACKAGES = ("bigtwo.env", "bigtwo.agents", "bigtwo.arena", "bigtwo.train", "bigtwo.web", "bigtwo.cli")


def observation_table() -> str:
    """The observation layout, as ``bigtwo.env.engine.observation``'s docstring has it."""
    from bigtwo.env.engine.observation import layout_table, obs_size

    return f"{layout_table(4)}\n\n``obs_size(4)`` = {obs_size(4)}; ``obs_size(P)`` for 2 and 3 players: {obs_size(2)}, {obs_size(3)}."


def action_rows() -> str:
    """Every named variant's action ids: pass, then each run of one kind, with its first and last id."""
    from bigtwo.env import KINDS, action_table, load_variant, variant_names

    rows = ["| variant | kind | size | ids | how many |", "|---|---|---|---|---:|"]
    for name in variant_names():
        table = action_table(load_variant(name))
        start = 0
        for i in range(1, table.size + 1):
            if i == table.size or table.kinds[i] != table.kinds[start] or table.sizes[i] != table.sizes[start]:
                kind, size = KINDS[int(table.kinds[start])], int(table.sizes[start])
                rows.append(f"| `{name}` | {kind} | {size} | {start} .. {i - 1} | {i - start:,} |")
                start = i
        rows.append(f"| `{name}` | (all) | | 0 .. {table.size - 1} | {table.size:,} |")
    return "\n".join(rows)


def agents_table() -> str:
    """Every declared agent (``bigtwo.agents.registry.SPECS``) and a checkpoint by path."""
    from bigtwo.agents.registry import agents_table as table

    return table()


def panel_table() -> str:
    """The benchmark's panel (``bigtwo.arena.panel.PANEL``)."""
    from bigtwo.arena.panel import panel_table as table

    return table()


def train_fields() -> str:
    """Every ``TrainConfig`` field: its default, description and allowed values (``bigtwo train --fields``)."""
    from bigtwo.train.config import FIELDS, allowed_values, defaults, field_docs

    values, docs = defaults(), field_docs()
    rows = ["| field | default | what | allowed |", "|---|---|---|---|"]
    for name in FIELDS:
        cells = [f"`{name}`", f"`{values[name]!r}`", docs[name], allowed_values(name)]
        rows.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(rows)


def api_blocks(package: str) -> str:
    """One ``::: module`` block per module of ``package`` (its ``__init__`` first, subpackages included)."""
    if package not in API_PACKAGES:
        raise ValueError(f"bigtwo:api {package!r}: allowed packages are {', '.join(API_PACKAGES)}")
    folder = ROOT.joinpath(*package.split("."))
    modules = []
    for path in sorted(folder.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if any(part.startswith("_") and part != "__init__" for part in parts):
            continue
        modules.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    modules.sort(key=lambda m: (m != package, m))
    return "\n\n".join(f"::: {module}" for module in modules)


def _expand(match: re.Match[str]) -> str:
    what, argument = match.group(1), match.group(2)
    if what == "api" and argument:
        return api_blocks(argument)
    makers = {
        "observation": observation_table,
        "actions": action_rows,
        "agents": agents_table,
        "panel": panel_table,
        "train-fields": train_fields,
    }
    if what not in makers or argument:
        raise ValueError(
            f"unknown docs marker {match.group(0)!r}; allowed: {', '.join(f'bigtwo:{m}' for m in makers)}, bigtwo:api PACKAGE"
        )
    return makers[what]()


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    """Each marker line of a page replaced by its generated part."""
    return MARKER.sub(_expand, markdown)
