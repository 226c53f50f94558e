"""The decision: score every legal play of a position and pick the best (``decide``).

``decide`` reads a ``Position`` (what the seat to act knows: its hand, the unseen cards, the
cards left per seat, the table, the last-card duty, the opening card), the legal list, the
engine's ``Rules``, the heuristic's ``Lookups`` and a set of weights. The agent builds the
position from an observation (``bigtwo.agents.heuristic.agent.read_obs``); search's rollouts build it
from the engine state (``bigtwo.agents.search``).

How leads and answers are scored, and how the last-card duty is obeyed, is the package's
docstring (``bigtwo.agents.heuristic``): its **Lead**, **Answer** and **Last-card rule**. A play that
ends the game scores ``BIG``; one that breaches the duty, ``BIG`` less; one not considered, ``NEG``.

>>> from bigtwo.env import load_variant
>>> from bigtwo.env.rules.actions import action_table
>>> from bigtwo.env.engine.engine import make_rules
>>> from bigtwo.agents.heuristic.control import make_lookups
>>> from bigtwo.agents.heuristic.planner import new_work
>>> from bigtwo.agents.heuristic.weights import DEFAULT_WEIGHTS
>>> variant = load_variant("taiwan")
>>> table = action_table(variant)
>>> rules, lookups = make_rules(variant, table), make_lookups(variant, table)
>>> low, top = int(table.encode([0])), int(table.encode([51]))  # the lowest and the highest single
>>> unseen = np.uint64(((1 << 52) - 1) ^ (1 << 51) ^ 1)
>>> pos = Position(np.uint64(1 << 51), unseen, np.array([1, 5, 5, 5]), np.int64(low), np.int64(3), np.int64(0), np.int64(-1))
>>> legal, scores = np.array([0, top], dtype=np.int32), np.zeros(2)  # pass, or go out with the last card
>>> best = decide(pos, legal, 2, rules, lookups, DEFAULT_WEIGHTS, False, scores, new_work(2))
>>> int(best), float(scores[1]) == BIG, bool(scores[0] < 0)
(1, True, True)
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from bigtwo.agents.heuristic.control import play_control, rank_suits
from bigtwo.agents.heuristic.planner import SURE, gen_multi, search_plan
from bigtwo.agents.heuristic.weights import Weight
from bigtwo.env.engine import kernels
from bigtwo.env.engine.jit import njit
from bigtwo.env.engine.kernels import U0, U1, count4, highest_card, lookup, popcount

NEG = -1.0e9  # the score of a legal play not considered
BIG = 1.0e6  # the score of a play that ends the game; breaching the last-card duty costs as much
# chance that an opponent's last s cards are one play (s = 0..6): a single always, the rest rarely
DANGER_BY_SIZE = (0.0, 1.0, 0.3, 0.1, 0.0, 0.1, 0.05)
SURE_LINE = 1.0e4  # lead bonus of a play that starts a sure way out
MAX_ANSWERS = 48  # answering with more legal plays than this scores a subset (rollouts)


class Position(NamedTuple):
    """What the seat to act knows, as ``decide`` reads it."""

    hand: np.uint64  # its cards
    unseen: np.uint64  # the cards neither in its hand nor played this game
    counts: np.ndarray  # int64 (players,): cards left per relative seat (0 = itself)
    table: np.int64  # the action to beat (0: a free lead)
    owner: np.int64  # the relative seat that made it (-1: none)
    duty: np.int64  # its last-card duty (``kernels.DUTY_*``)
    opening: np.int64  # the card the game's first lead must hold (-1: none)


@njit(inline="always")
def _find(legal, n, a):
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi) // 2
        v = legal[mid]
        if v == a:
            return mid
        if v < a:
            lo = mid + 1
        else:
            hi = mid
    return -1


@njit
def _lead_candidates(hand, legal, n, hash_keys, hash_ids, bits, multi, m, mark):
    """Mark the legal plays worth scoring on a free lead: the planner's combinations, every rank
    group (single, pair, triple, and their parts), and the highest and lowest single."""
    for i in range(m):
        a = lookup(multi[i], hash_keys, hash_ids, bits)
        j = _find(legal, n, a)
        if j >= 0:
            mark[j] = True
    for r in range(13):
        suits = rank_suits(hand, r)
        if suits == 0:
            continue
        # every subset of the rank's cards of size 1..3 (at most 14 plays)
        for sub in range(1, 16):
            if (sub & suits) != sub or count4(sub) == 4:
                continue
            a = lookup(np.uint64(sub) << np.uint64(4 * r), hash_keys, hash_ids, bits)
            if a >= 0:
                j = _find(legal, n, a)
                if j >= 0:
                    mark[j] = True


@njit
def decide(pos, legal, n, rules, lookups, w, full, scores, work):
    """Score the legal plays ``legal[:n]`` of position ``pos`` into ``scores`` (``NEG`` = not
    considered) and return the index of the best; ``full``: score every legal play. ``work`` is
    ``planner.new_work``'s scratch, of a width of at least ``n``."""
    for i in range(n):
        scores[i] = NEG
    if n == 1:
        scores[0] = 0.0
        return 0
    players = rules.ip[kernels.IP_PLAYERS]
    cards_each = rules.ip[kernels.IP_CPP]
    hand, unseen, counts, table, owner, duty = pos.hand, pos.unseen, pos.counts, pos.table, pos.owner, pos.duty
    five_ctrl, higher, suit_order, two_ends = lookups
    # the arrays of ``rules`` the loops read, taken out once (an inlined helper given the whole tuple
    # pays a reference count on each of its ~26 arrays per call)
    sizes, masks, suit_rank = rules.sizes, rules.masks, rules.suit_rank
    windows, hash_keys, hash_ids, bits = rules.windows, rules.hash_keys, rules.hash_ids, rules.bits
    pair_chain = rules.ip[kernels.IP_PAIR_CHAIN]
    memo, stack = work.memo, work.stack
    multi, mctrl, count, suits = work.multi, work.multi_ctrl, work.rank_count, work.rank_suits
    marks, danger = work.marks, work.danger
    work.memo.filled[:] = False  # the memo holds this decision's controls only
    opp_cards = 0
    min_opp = 99
    for k in range(1, players):
        opp_cards += counts[k]
        if counts[k] < min_opp:
            min_opp = counts[k]
    n_unseen = popcount(unseen)
    f = opp_cards / n_unseen if n_unseen > 0 else 1.0
    if f > 1.0:
        f = 1.0
    m = gen_multi(
        hand, windows, hash_keys, hash_ids, bits, pair_chain, five_ctrl, suit_order, multi, mctrl, count, suits
    )
    base, base_tally = search_plan(hand, multi, mctrl, m, unseen, f, suit_rank, higher, w, two_ends, memo, stack)
    top = highest_card(hand, suit_rank)
    top_id = lookup(U1 << np.uint64(top), hash_keys, hash_ids, bits)
    # danger[s]: an opponent holds exactly s cards and could go out with one play of s cards:
    # how likely s cards are one play, times 1 for the next seat and Weight.DANGER_FAR for the others
    danger[:] = 0.0
    for k in range(1, players):
        c = counts[k]
        if c <= 6:
            d = DANGER_BY_SIZE[c] * (1.0 if k == 1 else w[Weight.DANGER_FAR])
            if d > danger[c]:
                danger[c] = d
    best_i = 0
    best = NEG * 2
    leading = table == 0
    mark = marks[:n]
    cash = endgame = False  # leading: what the plan's tally says of the game
    press = early = 0.0  # answering: how hard to fight for the trick, how early in the game it is
    if leading:
        mark[:] = False
        if full or pos.opening >= 0 or n <= 24:
            for i in range(n):
                mark[i] = True
        else:
            m = gen_multi(
                hand, windows, hash_keys, hash_ids, bits, pair_chain, five_ctrl, suit_order, multi, mctrl, count, suits
            )
            _lead_candidates(hand, legal, n, hash_keys, hash_ids, bits, multi, m, mark)
            j = _find(legal, n, top_id)
            if j >= 0:
                mark[j] = True
        cash = base_tally // 10000 <= w[Weight.CASH_AT]
        endgame = base_tally // 10000 <= w[Weight.END_AT]
    else:
        tsize = sizes[table]
        if tsize <= 6 and danger[tsize] > 0.0:
            press = danger[tsize]
        if owner > 0 and counts[owner] <= 6:
            # if the trick stays with its owner, the owner leads next and may go out at once
            far = 1.0 if owner == 1 else w[Weight.DANGER_FAR]
            press = max(press, w[Weight.PRESS_OWNER] * DANGER_BY_SIZE[counts[owner]] * far)
        if min_opp <= w[Weight.PRESS_AT]:
            press = max(press, 0.8)
        early = (min_opp - 3.0) / (w[Weight.EARLY_SPAN] * cards_each / 13.0)
        early = 0.0 if early < 0.0 else (1.0 if early > 1.0 else early)
        mark[:] = True
        if n > MAX_ANSWERS and not full:
            # a big hand answering five cards: score pass, the planner's pieces and the lowest plays
            mark[:] = False
            m = gen_multi(
                hand, windows, hash_keys, hash_ids, bits, pair_chain, five_ctrl, suit_order, multi, mctrl, count, suits
            )
            _lead_candidates(hand, legal, n, hash_keys, hash_ids, bits, multi, m, mark)
            for i in range(MAX_ANSWERS // 2):
                mark[i] = True
    # one loop scores every marked play: the plan of the hand it leaves and the play's control, the
    # same for a lead and an answer; only what they are weighed into differs
    for i in range(n):
        if not mark[i]:
            continue
        a = legal[i]
        if a == 0:  # a pass (only ever legal when answering)
            sc = -w[Weight.PRESS] * press - w[Weight.TEMPO] / ((players - 1) * (players - 1))
        else:
            size = sizes[a]
            rest = hand & ~masks[a]
            if rest == U0:
                sc = BIG
            else:
                mr = gen_multi(
                    rest, windows, hash_keys, hash_ids, bits, pair_chain, five_ctrl, suit_order, multi, mctrl, count, suits
                )  # fmt: skip
                after, tally = search_plan(
                    rest, multi, mctrl, mr, unseen, f, suit_rank, higher, w, two_ends, memo, stack
                )
                ctrl = play_control(a, unseen, f, sizes, masks, suit_rank, five_ctrl, higher, w, two_ends)
                if leading:
                    sc = -after + w[Weight.SIZE] * (size - 1) * (1.0 - ctrl)
                    if ctrl >= SURE and (tally // 100) % 100 <= 1:
                        sc += SURE_LINE  # sure plays first, then the one unsure play: a won game
                    if cash:
                        sc += w[Weight.CASH] * ctrl
                    if endgame and size >= 2:
                        sc += w[Weight.END_MULTI]  # keep a single for last: singles are the easiest to shed
                    if size <= 6 and danger[size] > 0.0:
                        sc -= w[Weight.DANGER] * danger[size] * (1.0 - ctrl)
                    if (duty == kernels.DUTY_LEAD_MULTI and size < 2) or (
                        duty == kernels.DUTY_LEAD_HIGHEST and a != top_id
                    ):
                        sc -= BIG
                else:
                    sc = (
                        (base - after)
                        + ctrl * (w[Weight.LEAD] + press * w[Weight.PRESS_HIGH])
                        - w[Weight.SPEND] * early * ctrl ** w[Weight.SPEND_POW]
                    )
                    if duty == kernels.DUTY_ANSWER_HIGHEST and size == 1 and a != top_id:
                        sc -= BIG
        scores[i] = sc
        if sc > best:
            best = sc
            best_i = i
    return best_i
