"""The benchmark's panel: the fixed, versioned opponents an agent's card is measured against.

    bigtwo benchmark heuristic --variant taiwan --panel random,greedy,tuned

A card (``bigtwo.arena.benchmark``) plays the agent in one seat against ``players - 1`` copies of
each panel member, on the same duplicate deals. The panel is declared here once, member by member,
so that two cards of the same ``PANEL_VERSION`` meet the same opponents and can be compared; any
change to a member (its spec, its budget, who is in the default panel) bumps the version.

| member | spec | default | what it is |
|---|---|---|---|
| ``random`` | ``random`` | yes | a uniformly random legal play: the floor |
| ``greedy`` | ``greedy`` | yes | the lowest legal play |
| ``heuristic`` | ``heuristic`` | yes | the hand-written planner, default weights |
| ``tuned`` | ``heuristic:weights=cards`` (``cards`` scoring) or ``heuristic:weights=collect`` (any other) | yes | the heuristic tuned for the scoring (``bigtwo tune``) |
| ``search`` | ``search:simulations=32`` | yes | determinized Monte-Carlo search with heuristic rollouts, a small budget |
| ``network`` | ``strong:simulations=0`` | yes, where weights are shipped | the trained network shipped for the variant, alone |
| ``strong`` | ``strong`` | no (``--panel default,strong``) | the shipped network with its search: the strongest, and the costliest |

``strong`` is declared but not in the default panel: three seats of it cost about 10 ms a move in
a batch, so 200 deals of it take about 3 minutes on 2 cores, more than the whole default card.
``network`` and ``strong`` play only a variant whose weights are shipped
(``bigtwo.agents.pretrained``); the default panel leaves them out elsewhere and the card says so,
and naming one of them for such a variant is refused.

>>> [m.name for m in PANEL]
['random', 'greedy', 'heuristic', 'tuned', 'search', 'network', 'strong']
>>> member_spec("tuned", load_variant("taiwan")), member_spec("tuned", load_variant("japan"))
('heuristic:weights=cards', 'heuristic:weights=collect')
>>> choose_members("random,tuned")
['random', 'tuned']
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bigtwo.agents import pretrained
from bigtwo.agents.registry import make_agent
from bigtwo.env.rules.variant import Variant, load_variant

PANEL_VERSION = 1
"""Bumped whenever a member's spec or the default panel changes: cards of one version are comparable."""

SEARCH_SIMULATIONS = 32  # the panel's search budget per move (0.6 s a deal here, 3 seats of it)
TUNED_WEIGHTS = {"cards": "cards"}  # scoring -> the heuristic's tuned set; any other scoring: COLLECT
COLLECT = "collect"  # the set tuned for collect scoring, also the trainers' choice for tiered and pairwise
DEFAULT = "default"  # the name --panel takes for the default panel


@dataclass(frozen=True)
class Member:
    """One panel member: its name, the agent spec it plays on a variant, and whether the default panel has it."""

    name: str
    spec: Callable[[Variant], str]
    about: str
    default: bool = True
    needs_weights: bool = False  # plays only where trained weights are shipped for the variant


PANEL: tuple[Member, ...] = (
    Member("random", lambda v: "random", "a uniformly random legal play"),
    Member("greedy", lambda v: "greedy", "the lowest legal play"),
    Member("heuristic", lambda v: "heuristic", "the hand-written planner, default weights"),
    Member(
        "tuned",
        lambda v: f"heuristic:weights={TUNED_WEIGHTS.get(v.scoring, COLLECT)}",
        "the heuristic tuned for the scoring: weights=cards under cards scoring, weights=collect under any other",
    ),
    Member("search", lambda v: f"search:simulations={SEARCH_SIMULATIONS}", "Monte-Carlo search, heuristic rollouts"),
    Member(
        "network",
        lambda v: f"{pretrained.STRONG}:simulations=0",
        "the shipped network alone",
        needs_weights=True,
    ),
    Member(
        "strong", lambda v: pretrained.STRONG, "the shipped network with its search", default=False, needs_weights=True
    ),
)
MEMBERS: dict[str, Member] = {m.name: m for m in PANEL}


def member_spec(name: str, variant: Variant) -> str:
    """The agent spec the member ``name`` plays on ``variant``."""
    return MEMBERS[name].spec(variant)


def choose_members(text: str | None = None) -> list[str]:
    """The members a ``--panel`` text names, in panel order: a comma list of member names, where
    ``default`` stands for the default panel (``None`` or ``""``: the default panel); ``ValueError``
    naming the unknown ones and what is allowed."""
    words = [w.strip() for w in (text or DEFAULT).split(",") if w.strip()] or [DEFAULT]
    unknown = [w for w in words if w != DEFAULT and w not in MEMBERS]
    if unknown:
        raise ValueError(
            f"unknown panel member(s) {', '.join(map(repr, unknown))}; allowed: {', '.join(MEMBERS)}, "
            f"or {DEFAULT} (the default panel: {', '.join(m.name for m in PANEL if m.default)})"
        )
    chosen = {m.name for m in PANEL if m.default} if DEFAULT in words else set()
    chosen.update(w for w in words if w != DEFAULT)
    return [m.name for m in PANEL if m.name in chosen]


def why_not(name: str, variant: Variant) -> str | None:
    """Why the member ``name`` cannot play ``variant`` (its agent does not build for these rules),
    or ``None`` when it can."""
    member = MEMBERS[name]
    if member.needs_weights and not pretrained.has_weights(variant):
        return f"no trained weights are shipped for {variant.name!r}"
    try:
        make_agent(member.spec(variant), variant, seed=0)
    except ValueError as exc:
        return str(exc)
    return None


def panel_for(variant: Variant | str, text: str | None = None) -> tuple[dict[str, str], dict[str, str]]:
    """``(members, left_out)`` for ``variant``: the chosen members that play it, name -> spec, and
    the default members that cannot, name -> why. A member named explicitly in ``text`` that cannot
    play the variant is refused (``ValueError`` naming why and the members that can)."""
    var = load_variant(variant) if not isinstance(variant, Variant) else variant
    explicit = {w.strip() for w in (text or "").split(",")} - {DEFAULT, ""}
    members: dict[str, str] = {}
    left_out: dict[str, str] = {}
    for name in choose_members(text):
        reason = why_not(name, var)
        if reason is None:
            members[name] = member_spec(name, var)
        elif name in explicit:
            able = [m.name for m in PANEL if why_not(m.name, var) is None]
            raise ValueError(
                f"panel member {name!r} cannot play variant {var.name!r}: {reason}; allowed here: {', '.join(able)}"
            )
        else:
            left_out[name] = reason
    if not members:
        raise ValueError(f"no panel member plays variant {var.name!r}: {'; '.join(left_out.values())}")
    return members, left_out


def panel_table() -> str:
    """The panel as a Markdown table (the benchmark page shows it)."""
    rows = ["| member | agent (on taiwan) | in the default panel | what it is |", "|---|---|---|---|"]
    taiwan = load_variant("taiwan")
    for m in PANEL:
        default = ("yes, where weights are shipped" if m.needs_weights else "yes") if m.default else "no"
        rows.append(f"| `{m.name}` | `{m.spec(taiwan)}` | {default} | {m.about} |")
    return "\n".join(rows)


__all__ = [
    "MEMBERS",
    "PANEL",
    "PANEL_VERSION",
    "Member",
    "choose_members",
    "member_spec",
    "panel_for",
    "panel_table",
    "why_not",
]
