"""Baseline agents and loaders: random, greedy, heuristic, search, the shipped ``strong``, and trained checkpoints.

| module | job |
|---|---|
| ``base`` | the ``Agent`` interface (``act(obs, legal_ids, legal_counts)``) and ``RandomAgent`` |
| ``greedy`` | the greedy baseline |
| ``heuristic`` | the rule-based planner (a package: its weights, control, planner, decision and agent; ``bigtwo.arena.tune`` tunes the weights) |
| ``search`` | determinized Monte-Carlo search over the heuristic's plays, and its compiled rollouts |
| ``spec`` | what declares an agent: ``AgentSpec`` (its class, options, cost, kernels, web use) and ``Option`` |
| ``registry`` | every agent declared once (``AGENT_SPECS``), and a name or a checkpoint path as an agent: ``make_agent``, agent lists |
| ``options`` | the options several declarations share (the rollouts search's, the heuristic's weights, a network's) and the web's caps on them |
| ``strong`` | how ``strong`` and ``lookahead`` are built on a trained network, and their options |
| ``lookahead`` | determinized lookahead in which every seat plays a trained network (``strong``'s default search) |
| ``determinize``, ``endgame`` | the search's guesses of the hidden hands from a seat's observation, and the exact endgame solver |
| ``loaders`` | checkpoint loaders by file suffix (the ``bigtwo.agent_loaders`` entry points) |
| ``pretrained`` | the shipped trained weights behind ``strong`` (one file per variant), their folder and provenance |
| ``play`` | a human against agents in the terminal (the ``bigtwo play`` subcommand, and the note a first run prints while the kernels compile, are ``bigtwo.cli.play``'s) |
| ``bench`` | the search figures of ``bigtwo bench --search``: what one simulated move costs |

Tournaments, ratings, the ladder, move timing and the heuristic's tuning play agents against each
other: they are the arena's (``arena``), above this package.

``make_agent(name_or_path, variant, seed=None, **options)`` builds any of them (see
``bigtwo.agents.registry`` for the names and their declared options, ``bigtwo.agents.loaders`` for
checkpoints):

>>> from bigtwo.env import load_variant
>>> make_agent("greedy", load_variant("taiwan"))
GreedyAgent('taiwan')
"""

from __future__ import annotations

from bigtwo.layout import second_name

if __name__ != "bigtwo.agents":  # ``import agents`` from the repository root
    raise second_name(__name__, "bigtwo.agents")

from bigtwo.agents.base import Agent, RandomAgent
from bigtwo.agents.greedy import GreedyAgent
from bigtwo.agents.heuristic import HeuristicAgent
from bigtwo.agents.lookahead import LookaheadAgent
from bigtwo.agents.registry import (
    AGENT_SPECS,
    AGENTS,
    known_suffixes,
    load_agent,
    make_agent,
    parse_agent_list,
    register_loader,
    unregister_loader,
)
from bigtwo.agents.search import SearchAgent
from bigtwo.agents.spec import AgentSpec, Option

__all__ = [
    "AGENTS",
    "AGENT_SPECS",
    "Agent",
    "AgentSpec",
    "GreedyAgent",
    "HeuristicAgent",
    "LookaheadAgent",
    "Option",
    "RandomAgent",
    "SearchAgent",
    "known_suffixes",
    "load_agent",
    "make_agent",
    "parse_agent_list",
    "register_loader",
    "unregister_loader",
]
