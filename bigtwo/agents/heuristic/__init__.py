"""A rule-based agent: plan the hand into few plays, shed weak cards in combinations, keep
control cards to take the lead back, and press a player who is about to go out.

How it decides (one compiled kernel per batch, also used by ``bigtwo.agents.search`` for rollouts):

* **Control.** A play's control (0..1) is how unlikely the unseen cards are to beat it: for
  singles, pairs and triples it counts the higher ones still unseen (scaled by the share of the
  unseen cards the opponents hold, so undealt cards count less); five-card hands use a fixed
  scale by class and strength. A single 2, or three 2s, under ``two_ends_trick`` is full control.
* **Plan.** The hand is partitioned into plays: a set of disjoint five-card hands (and pair
  chains where the variant has them) chosen by a small exhaustive search over candidates
  (every straight window, flushes of low or loose cards, full houses, fours), the rest grouped
  rank by rank into triples, pairs or singles, whichever is cheaper. A plan costs about one per
  play that is not sure to win its trick: ``1 - control`` per play, a little per play, and a
  little more per low single. Fewer, stronger plays cost less.
* **Lead.** Each candidate (the plan's pieces and every rank group, or every legal play on the
  game's first lead and with small hands) is scored by the plan cost of the hand left after it,
  plus a bonus per extra card shed by a weak combination. A play that starts a sure way out
  (sure winners first, then the last play) is taken. A lead of ``n`` cards while an opponent
  holds exactly ``n`` is penalised by how likely ``n`` cards are one play (a single always) and
  how beatable the lead is.
* **Answer.** Each beating play is scored by how much it lowers the plan cost, plus the value
  of taking the lead, minus a cost for spending control while every opponent still holds many
  cards. Pass scores 0, less a tempo cost (large with two players: passing hands the lead
  straight back) and a pressing penalty when an opponent could go out: one holds as many cards
  as the trick, or owns the trick and could lead out, or holds at most two cards. While
  pressing, stronger answers score higher.
* **Last-card rule.** The seat-to-act's duty (from the observation) is obeyed: plays that would
  breach it score far below the rest, so under ``liability`` a breach happens only when it is
  the only legal play.

The kernel reads only what the observation holds (own hand, cards played, cards left per seat,
the table, the duties) and the legal list. ``DEFAULT_WEIGHTS`` were tuned by coordinate search
on 4-player ``taiwan`` games against random agents, then checked against ``greedy`` with 2, 3
and 4 players.

| module | job |
|---|---|
| ``weights`` | the 23 weights by name (``Weight``: index, default, meaning), ``DEFAULT_WEIGHTS``, the named ``WEIGHT_SETS`` (as changes from the defaults), ``weight_set``, ``weight_mix`` |
| ``control`` | control of plays, and the per-variant ``Lookups`` the kernels read besides the engine's ``Rules`` |
| ``planner`` | the hand planner: ``plan_cost`` of a hand, and the kernels' scratch (``new_work``) |
| ``decision`` | ``decide``: every legal play of a ``Position`` scored, the best picked |
| ``agent`` | ``HeuristicAgent``, and the batch kernel over observations (``act_obs``, ``read_obs``) |

>>> import numpy as np
>>> from bigtwo.env.engine.engine import Engine
>>> eng = Engine("taiwan", num_matches=4, seed=1)
>>> agent = HeuristicAgent(eng.variant)
>>> ids, n = eng.legal_actions()
>>> a = agent.act(eng.observe(), ids, n)
>>> bool(all(x in ids[g, :n[g]] for g, x in enumerate(a)))
True
"""

from __future__ import annotations

from bigtwo.agents.heuristic.agent import Context, HeuristicAgent, act_obs, read_obs
from bigtwo.agents.heuristic.control import Lookups, make_lookups, play_control
from bigtwo.agents.heuristic.decision import BIG, NEG, Position, decide
from bigtwo.agents.heuristic.planner import Work, new_work, plan_cost
from bigtwo.agents.heuristic.weights import (
    DEFAULT_WEIGHTS,
    MIX,
    NAMES,
    NUM_WEIGHTS,
    WEIGHT_SETS,
    Weight,
    changed_weights,
    weight_mix,
    weight_set,
)

__all__ = [
    "BIG",
    "DEFAULT_WEIGHTS",
    "MIX",
    "NAMES",
    "NEG",
    "NUM_WEIGHTS",
    "WEIGHT_SETS",
    "Context",
    "HeuristicAgent",
    "Lookups",
    "Position",
    "Weight",
    "Work",
    "act_obs",
    "changed_weights",
    "decide",
    "make_lookups",
    "new_work",
    "plan_cost",
    "play_control",
    "read_obs",
    "weight_mix",
    "weight_set",
]
