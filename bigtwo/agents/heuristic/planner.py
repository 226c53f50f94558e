"""The hand planner: the least cost of playing a hand out, over partitions of it into plays.

The hand is partitioned into plays: a set of disjoint five-card hands (and pair chains where
the variant has them) chosen by a small exhaustive search over candidates (``gen_multi``: every
straight window, flushes of low or loose cards, full houses, fours), the rest grouped rank by
rank into triples, pairs or singles, whichever is cheaper (``search_plan``'s rest cost). A plan
costs about one per play that is not sure to win its trick: ``1 - control`` per play (``bigtwo.agents.heuristic.control``),
``Weight.EPS`` a play, and ``Weight.LOW_SINGLE`` more per low single. Fewer, stronger plays cost
less. Besides its cost, a plan has a tally of its plays, unsure plays and weak plays (``_tally``),
which the decision reads.

>>> from bigtwo.env import load_variant
>>> from bigtwo.env.rules.actions import action_table
>>> from bigtwo.env.engine.engine import make_rules
>>> from bigtwo.agents.heuristic.control import make_lookups
>>> from bigtwo.agents.heuristic.weights import DEFAULT_WEIGHTS
>>> variant = load_variant("taiwan")
>>> table = action_table(variant)
>>> rules, lookups = make_rules(variant, table), make_lookups(variant, table)
>>> def cost(cards, unseen=0):  # a hand's plan cost and tally with nothing (or ``unseen``) unseen
...     hand = np.uint64(sum(1 << c for c in cards))
...     return plan_cost(hand, np.uint64(unseen), 1.0, rules, lookups, DEFAULT_WEIGHTS, new_work(1))
>>> cost([0, 4, 8, 12, 16])[1]  # a straight flush: one play, sure to win
10000
>>> low_single = cost([0], unseen=((1 << 52) - 1) ^ 1)  # the lowest card, every other card unseen
>>> low_single[1], bool(low_single[0] > 1.0)  # one play, unsure and weak, costing more than one
(10101, True)
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from bigtwo.agents.heuristic.control import group_control, rank_suits, single_control
from bigtwo.agents.heuristic.weights import Weight
from bigtwo.env.engine import kernels
from bigtwo.env.engine.jit import njit
from bigtwo.env.engine.kernels import U0, U1, count4, lookup, popcount

MAX_MULTI = 96  # five-card (and six-card) candidates considered by the planner
MAX_DEPTH = 5  # combinations per plan (26-card hands)
MAX_NODES = 3000  # partial plans searched per plan
SURE = 0.999  # a play with this much control is taken to win its trick
WEAK = 0.75  # a play with less control than this is a weak play of the plan
SUIT_CARDS = np.uint64(sum(1 << (4 * r) for r in range(13)))  # the cards of suit 0 (shifted by s: suit s)


class Memo(NamedTuple):
    """The rest cost's memo (``search_plan``): each rank's suit set's cost and tally, index
    ``16 * rank + suits``, and whether it is filled (valid for one decision, while the unseen cards
    stay the same)."""

    cost: np.ndarray  # float64 (208,)
    tally: np.ndarray  # int64 (208,)
    filled: np.ndarray  # bool (208,)


class PlanStack(NamedTuple):
    """The plan search's stack, one entry per depth: the hand left, the next candidate to try, and
    the cost and tally of the combinations taken so far."""

    hands: np.ndarray  # uint64 (MAX_DEPTH + 1,)
    next: np.ndarray  # int64
    cost: np.ndarray  # float64
    tally: np.ndarray  # int64


class Work(NamedTuple):
    """Scratch of one thread's decisions (``new_work``)."""

    multi: np.ndarray  # uint64 (MAX_MULTI,): the candidate combinations
    multi_ctrl: np.ndarray  # float64 (MAX_MULTI,): their controls
    memo: Memo
    stack: PlanStack
    rank_count: np.ndarray  # int64 (13,): cards of the hand per rank
    rank_suits: np.ndarray  # int64 (13,): their suit bits
    marks: np.ndarray  # bool (width,): the legal plays a decision scores
    danger: np.ndarray  # float64 (7,): danger per play size


@njit(inline="always")
def _lowest_in(m, suit_order):
    for i in range(4):
        s = suit_order[i]
        if m >> s & 1:
            return s
    return -1


@njit(inline="always")
def _lowest_cards(r, held, want, suit_order):
    """The mask of the ``want`` lowest cards of rank ``r`` (in ``suit_order``) among ``held``, its suit bits."""
    m = U0
    t = 0
    for i in range(4):
        s = suit_order[i]
        if t < want and held >> s & 1:
            m |= U1 << np.uint64(4 * r + s)
            t += 1
    return m


@njit(inline="always")
def _add(mask, hash_keys, hash_ids, bits, five_ctrl, out, ctrl, k):
    if k >= out.shape[0]:
        return k
    for i in range(k):
        if out[i] == mask:
            return k
    a = lookup(mask, hash_keys, hash_ids, bits)
    if a < 0:
        return k
    out[k] = mask
    ctrl[k] = five_ctrl[a]
    return k + 1


@njit
def gen_multi(hand, windows, hash_keys, hash_ids, bits, pair_chain, five_ctrl, suit_order, out, ctrl, count, suits):
    """Candidate five-card hands (and pair chains where ``pair_chain``) in ``hand`` for the planner,
    into ``out`` (their controls into ``ctrl``: ``Work.multi`` and ``Work.multi_ctrl``); returns how
    many. ``windows``, ``hash_keys``, ``hash_ids``, ``bits`` are the ``Rules``' (the straights' rank
    windows and the action hash), ``pair_chain`` its ``ip[IP_PAIR_CHAIN]``: the kernels take arrays,
    never the ``Rules`` tuple, which costs a reference count on each of its ~26 arrays per call
    (``plan_cost`` took 930 ns a call with the tuples, 560 without). ``count`` and ``suits``
    (``Work.rank_count``, ``Work.rank_suits``) are scratch for the cards per rank."""
    present = 0  # bit r: the hand holds a card of rank r
    for r in range(13):
        suits[r] = rank_suits(hand, r)
        count[r] = count4(suits[r])
        if suits[r]:
            present |= 1 << r
    k = 0
    # straights: per window the lowest card of each rank, and every straight flush
    for wi in range(windows.shape[0]):
        need = 0
        for j in range(5):
            need |= 1 << windows[wi, j]
        if present & need != need:
            continue
        m = U0
        m_hi = U0
        for j in range(5):
            r = windows[wi, j]
            m |= U1 << np.uint64(4 * r + _lowest_in(suits[r], suit_order))
            # a second choice: spare cards of pairs/triples rather than singletons' partners
            s_hi = -1
            for i in range(3, -1, -1):
                s = suit_order[i]
                if suits[r] >> s & 1:
                    s_hi = s
                    break
            m_hi |= U1 << np.uint64(4 * r + s_hi)
        k = _add(m, hash_keys, hash_ids, bits, five_ctrl, out, ctrl, k)
        k = _add(m_hi, hash_keys, hash_ids, bits, five_ctrl, out, ctrl, k)
        for s in range(4):
            sf = True
            for j in range(5):
                if not (suits[windows[wi, j]] >> s & 1):
                    sf = False
            if sf:
                m = U0
                for j in range(5):
                    m |= U1 << np.uint64(4 * windows[wi, j] + s)
                k = _add(m, hash_keys, hash_ids, bits, five_ctrl, out, ctrl, k)
    # flushes: the five lowest of a suit, and the five lowest preferring cards of lone ranks
    for s in range(4):
        if popcount(hand & (SUIT_CARDS << np.uint64(s))) < 5:
            continue
        m = U0
        t = 0
        for r in range(13):
            if t < 5 and suits[r] >> s & 1:
                m |= U1 << np.uint64(4 * r + s)
                t += 1
        k = _add(m, hash_keys, hash_ids, bits, five_ctrl, out, ctrl, k)
        m2 = U0
        t = 0
        for r in range(13):
            if t < 5 and suits[r] >> s & 1 and count[r] == 1:
                m2 |= U1 << np.uint64(4 * r + s)
                t += 1
        for r in range(13):
            if t < 5 and suits[r] >> s & 1 and count[r] > 1:
                m2 |= U1 << np.uint64(4 * r + s)
                t += 1
        k = _add(m2, hash_keys, hash_ids, bits, five_ctrl, out, ctrl, k)
        # the highest five (a strong flush to keep as control)
        m3 = U0
        t = 0
        for r in range(12, -1, -1):
            if t < 5 and suits[r] >> s & 1:
                m3 |= U1 << np.uint64(4 * r + s)
                t += 1
        k = _add(m3, hash_keys, hash_ids, bits, five_ctrl, out, ctrl, k)
    # full houses: each triple with the lowest pair (a true pair first)
    for r3 in range(13):
        if count[r3] < 3:
            continue
        tm = _lowest_cards(r3, suits[r3], 3, suit_order)
        for want in (2, 3, 4):
            found = -1
            for r2 in range(13):
                if r2 != r3 and count[r2] == want:
                    found = r2
                    break
            if found >= 0:
                pm = _lowest_cards(found, suits[found], 2, suit_order)
                k = _add(tm | pm, hash_keys, hash_ids, bits, five_ctrl, out, ctrl, k)
                break
    # fours: with the lowest lone card, else the lowest other card
    for r4 in range(13):
        if count[r4] != 4:
            continue
        qm = np.uint64(15) << np.uint64(4 * r4)
        kick = -1
        for want in (1, 2, 3):
            for r in range(13):
                if r != r4 and count[r] == want:
                    kick = 4 * r + _lowest_in(suits[r], suit_order)
                    break
            if kick >= 0:
                break
        if kick >= 0:
            k = _add(qm | (U1 << np.uint64(kick)), hash_keys, hash_ids, bits, five_ctrl, out, ctrl, k)
    # pair chains (only where the variant has them: lookup fails otherwise)
    if pair_chain:
        for r in range(10):
            if count[r] >= 2 and count[r + 1] >= 2 and count[r + 2] >= 2:
                m = U0
                for j in range(3):
                    m |= _lowest_cards(r + j, suits[r + j], 2, suit_order)
                k = _add(m, hash_keys, hash_ids, bits, five_ctrl, out, ctrl, k)
    return k


@njit(inline="always")
def _piece(ctrl, eps, bonus):
    """Plan cost of one play of control ``ctrl``: a weak play costs about 1, a sure winner
    ``-bonus`` (it wins a lead back for one weak play); ``eps`` and ``bonus`` are the weights
    ``Weight.EPS`` and ``Weight.CTRL_BONUS`` (numbers, not the weight array: no array is passed to
    an inlined helper in a hot loop)."""
    return 1.0 + eps - (1.0 + bonus) * ctrl


@njit(inline="always")
def _tally(ctrl):
    """One play of the plan in the tally ``pieces * 10000 + unsure * 100 + weak`` (additive):
    unsure = control below 1, weak = control below ``WEAK``."""
    return 10000 + (100 if ctrl < SURE else 0) + (1 if ctrl < WEAK else 0)


@njit(inline="always")
def _singles_cost(r, m, unseen, f, higher, w, two_ends):
    cost = 0.0
    tally = 0
    for s in range(4):
        if m >> s & 1:
            ctrl = single_control(4 * r + s, unseen, f, higher, w, two_ends)
            cost += _piece(ctrl, w[Weight.EPS], w[Weight.CTRL_BONUS])
            tally += _tally(ctrl)
            if r < w[Weight.LOW_RANK]:
                cost += w[Weight.LOW_SINGLE]
    return cost, tally


@njit(inline="always")
def _rank_cost(r, m, unseen, f, suit_rank, higher, w, two_ends):
    """Plan cost and tally of rank ``r``'s cards ``m`` (suit bits): one pair or triple (two pairs
    for four), or singles, whichever is cheaper."""
    c = count4(m)
    split, split_tally = _singles_cost(r, m, unseen, f, higher, w, two_ends)
    if c == 1:
        return split, split_tally
    ctrl = group_control(r, m, 2 if c == 4 else c, unseen, f, suit_rank, w, two_ends)
    pieces = 2 if c == 4 else 1
    group = pieces * _piece(ctrl, w[Weight.EPS], w[Weight.CTRL_BONUS])
    if group <= split:
        return group, pieces * _tally(ctrl)
    return split, split_tally


@njit
def new_work(width):
    """The planner's and the decision's scratch for one thread (a ``Work``), made once per batch
    or rollout (allocated per decision, it took about a tenth of the deciding's time); ``width``:
    the most legal plays a decision scores."""
    d = MAX_DEPTH + 1
    return Work(
        np.zeros(MAX_MULTI, dtype=np.uint64),
        np.zeros(MAX_MULTI, dtype=np.float64),
        Memo(np.zeros(13 * 16, dtype=np.float64), np.zeros(13 * 16, dtype=np.int64), np.zeros(13 * 16, dtype=np.bool_)),
        PlanStack(
            np.zeros(d, dtype=np.uint64),
            np.zeros(d, dtype=np.int64),
            np.zeros(d, dtype=np.float64),
            np.zeros(d, dtype=np.int64),
        ),
        np.zeros(13, dtype=np.int64),
        np.zeros(13, dtype=np.int64),
        np.zeros(max(width, 1), dtype=np.bool_),
        np.zeros(7, dtype=np.float64),
    )


@njit
def _fill_rank(i, r, m, unseen, f, suit_rank, higher, w, two_ends, memo_cost, memo_tally, filled):
    """Fill the memo's entry ``i`` (rank ``r``, suits ``m``) with ``_rank_cost``: called on a miss
    only, out of line, so the search's hot loop passes no arrays to a helper."""
    memo_cost[i], memo_tally[i] = _rank_cost(r, m, unseen, f, suit_rank, higher, w, two_ends)
    filled[i] = True


@njit
def search_plan(hand, multi, mctrl, m, unseen, f, suit_rank, higher, w, two_ends, memo, stack):
    """Depth-first search over sets of disjoint candidate combinations (iterative: Numba's cache
    does not hold recursive functions), the rest grouped by rank; at most ``MAX_NODES`` sets.

    Each set's rest is costed rank by rank (the *rest cost*): each rank's cards as one pair or
    triple (two pairs for four), or as singles (strong cards are worth more apart), whichever is
    cheaper (``_rank_cost``). ``memo`` (``new_work``'s) keeps each rank's cost for the rest of the
    decision (the unseen cards, and so every control, are fixed while one play is chosen), so the
    thousands of partial plans cost a lookup per rank. The lookups are written out in the loop, not
    called: an inlined helper given arrays pays their reference counts at every set (measured: 81
    against 35 ns a set), and a miss fills its entry out of line (``_fill_rank``)."""
    memo_cost, memo_tally, filled = memo
    hs, nx, acc, accw = stack  # hands, next, cost, tally
    eps, bonus = w[Weight.EPS], w[Weight.CTRL_BONUS]  # ``_piece``'s weights, read once
    best = np.inf
    best_tally = 0
    d = 0
    hs[0] = hand
    nx[0] = 0
    acc[0] = 0.0
    accw[0] = 0
    nodes = 0
    h2, a2, w2, i = hand, 0.0, 0, -1  # the set to cost: first the whole hand (no combination)
    while True:
        rc = 0.0
        rw = 0
        for r in range(13):
            rm = rank_suits(h2, r)
            if rm == 0:
                continue
            j = 16 * r + rm
            if not filled[j]:
                _fill_rank(j, r, rm, unseen, f, suit_rank, higher, w, two_ends, memo_cost, memo_tally, filled)
            rc += memo_cost[j]
            rw += memo_tally[j]
        if a2 + rc < best:
            best = a2 + rc
            best_tally = w2 + rw
        if i >= 0 and d < MAX_DEPTH and h2 != U0:
            d += 1
            hs[d] = h2
            nx[d] = i + 1
            acc[d] = a2
            accw[d] = w2
        i = -1
        while d >= 0:  # the next set: one more combination that fits the hand left
            k = nx[d]
            if k >= m or nodes >= MAX_NODES:
                d -= 1
                continue
            nx[d] = k + 1
            c = multi[k]
            if (c & hs[d]) != c:
                continue
            nodes += 1
            i = k
            h2 = hs[d] & ~c
            a2 = acc[d] + _piece(mctrl[k], eps, bonus)
            w2 = accw[d] + _tally(mctrl[k])
            break
        if i < 0:
            return best, best_tally


@njit
def plan_cost(hand, unseen, f, rules, lookups, w, work):
    """Least plan cost of ``hand`` over partitions into the candidate combinations and the rest,
    and that plan's tally (``_tally``: its plays, unsure plays and weak plays). ``work``: ``new_work``'s.
    The decision's hot loop calls ``gen_multi`` and ``search_plan`` itself, with the arrays taken
    out of the tuples once per decision (``bigtwo.agents.heuristic.decision``)."""
    multi, mctrl = work.multi, work.multi_ctrl
    m = gen_multi(
        hand, rules.windows, rules.hash_keys, rules.hash_ids, rules.bits, rules.ip[kernels.IP_PAIR_CHAIN],
        lookups.five_ctrl, lookups.suit_order, multi, mctrl, work.rank_count, work.rank_suits,
    )  # fmt: skip
    return search_plan(
        hand, multi, mctrl, m, unseen, f, rules.suit_rank, lookups.higher, w, lookups.two_ends, work.memo, work.stack
    )
