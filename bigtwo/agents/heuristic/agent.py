"""``HeuristicAgent``: the heuristic's decision over a batch of observations, in one compiled kernel.

``read_obs`` reads the ``Position`` the decision needs from one observation row (own hand, cards
played, cards left per seat, the table, the duty, the opening card); ``act_obs`` decides every
row of a batch. ``Context`` holds what an agent passes the kernels: the engine's ``Rules``, the
heuristic's ``Lookups`` and its weights.
"""

from __future__ import annotations

import numpy as np

from bigtwo.agents.base import Agent
from bigtwo.agents.heuristic.control import make_lookups
from bigtwo.agents.heuristic.decision import Position, decide
from bigtwo.agents.heuristic.planner import new_work
from bigtwo.agents.heuristic.weights import weight_set
from bigtwo.env.engine.engine import make_rules
from bigtwo.env.engine.jit import njit
from bigtwo.env.engine.kernels import IP_CPP, IP_PLAYERS, U0, U1, lookup
from bigtwo.env.engine.observation import FULL, Part, part_start
from bigtwo.env.rules.actions import ActionTable
from bigtwo.env.rules.variant import Variant


class Context:
    """What the kernels read for one agent: the variant's ``rules`` (``bigtwo.env.engine.kernels.Rules``),
    the heuristic's ``lookups`` (``control.Lookups``) and its ``weights`` (``NUM_WEIGHTS`` numbers)."""

    def __init__(self, variant: Variant, table: ActionTable, weights: np.ndarray | str | None = None) -> None:
        self.rules = make_rules(variant, table)
        self.lookups = make_lookups(variant, table)
        self.weights = weight_set(weights)


@njit
def _mask_of(row, base):
    m = U0
    for c in range(52):
        if row[base + c] > 0.5:
            m |= U1 << np.uint64(c)
    return m


@njit
def read_obs(row, rules, counts):
    """The ``Position`` an observation row shows its seat; ``counts`` (players, int64) is filled
    with the cards left per relative seat and becomes the position's."""
    players = rules.ip[IP_PLAYERS]
    cards_each = rules.ip[IP_CPP]
    hand = _mask_of(row, part_start(Part.HAND, players))
    seen = hand
    base = part_start(Part.PLAYED, players)
    for k in range(players):
        seen |= _mask_of(row, base + 52 * k)
    base = part_start(Part.CARDS_LEFT_FRACTION, players)
    for k in range(players):
        counts[k] = np.int64(row[base + k] * cards_each + 0.5)
    tmask = _mask_of(row, part_start(Part.TABLE, players))
    table = 0
    if tmask != U0:
        table = lookup(tmask, rules.hash_keys, rules.hash_ids, rules.bits)
    base = part_start(Part.TABLE_SEAT, players)
    owner = -1
    for k in range(players):
        if row[base + k] > 0.5:
            owner = k
    base = part_start(Part.OPENING_CARD, players)
    opening = -1
    for c in range(52):
        if row[base + c] > 0.5:
            opening = c
    base = part_start(Part.DUTY, players)
    duty = 0
    for d in range(4):
        if row[base + d] > 0.5:
            duty = d
    return Position(hand, ~seen & FULL, counts, np.int64(table), np.int64(owner), np.int64(duty), np.int64(opening))


@njit(nogil=True)
def act_obs(obs, legal, legal_n, rules, lookups, w, full, out, scores):
    """Batch: one action per observation row into ``out`` (-1 where nothing is legal); ``scores``
    (B, L) gets each legal play's score (``full``: every legal play scored)."""
    counts = np.zeros(rules.ip[IP_PLAYERS], dtype=np.int64)
    work = new_work(legal.shape[1])
    for g in range(obs.shape[0]):
        n = legal_n[g]
        if n <= 0:
            out[g] = -1
            continue
        pos = read_obs(obs[g], rules, counts)
        out[g] = legal[g, decide(pos, legal[g], n, rules, lookups, w, full, scores[g], work)]


class HeuristicAgent(Agent):
    """The rule-based planner of ``bigtwo.agents.heuristic``; deterministic (``seed`` is accepted and unused).

    ``weights``: a name of ``WEIGHT_SETS``, a mapping of weight names to values, or ``NUM_WEIGHTS``
    numbers replacing ``DEFAULT_WEIGHTS`` (``bigtwo.arena.tune`` finds them)."""

    name = "heuristic"

    def __init__(self, variant: Variant, seed: int | None = None, weights: np.ndarray | str | None = None) -> None:
        super().__init__(variant, seed)
        self.ctx = Context(variant, self.table, weights)

    def _run(self, obs: np.ndarray, legal_ids: np.ndarray, legal_counts: np.ndarray, full: bool):
        obs = np.ascontiguousarray(obs, dtype=np.float32)
        legal = np.ascontiguousarray(legal_ids, dtype=np.int32)
        counts = np.ascontiguousarray(legal_counts, dtype=np.int32)
        b, width = legal.shape
        scores = np.empty((b, width), dtype=np.float64)
        out = np.empty(b, dtype=np.int64)
        c = self.ctx
        act_obs(obs, legal, counts, c.rules, c.lookups, c.weights, full, out, scores)
        return out, scores

    def act(self, obs: np.ndarray, legal_ids: np.ndarray, legal_counts: np.ndarray) -> np.ndarray:
        return self._run(obs, legal_ids, legal_counts, False)[0]

    def scores(self, obs: np.ndarray, legal_ids: np.ndarray, legal_counts: np.ndarray) -> np.ndarray:
        """Preference of every legal play (B, L) (higher is better, ``NEG`` beyond the counts);
        every legal play is scored, leads included. Search prunes its candidates with it."""
        return self._run(*self.check_inputs(obs, legal_ids, legal_counts), True)[1]
