"""A rule-based agent: plan the hand into few plays, shed weak cards in combinations, keep
control cards to take the lead back, and press a player who is about to go out.

How it decides (one compiled kernel per batch, also used by ``agents.search`` for rollouts):

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

>>> import numpy as np
>>> from bigtwo_env.engine import Engine
>>> eng = Engine("taiwan", num_games=4, seed=1)
>>> agent = HeuristicAgent(eng.variant)
>>> ids, n = eng.legal_actions()
>>> a = agent.act(eng.observe(), ids, n)
>>> bool(all(x in ids[g, :n[g]] for g, x in enumerate(a)))
True
"""

from __future__ import annotations

import numpy as np

from bigtwo_env import kernels as K
from bigtwo_env.actions import ActionTable
from bigtwo_env.combos import KIND_INDEX
from bigtwo_env.engine import make_rules
from bigtwo_env.jit import njit
from bigtwo_env.kernels import U0, U1, count4, highest_card, lookup, popcount
from bigtwo_env.observation import Part, absolute_seat, part_start, relative_seat
from bigtwo_env.variant import Variant

from .base import Agent

FULL = np.uint64((1 << 52) - 1)
NEG = -1.0e9
BIG = 1.0e6
# chance that an opponent's last s cards are one play (s = 0..6): a single always, the rest rarely
DANGER_BY_SIZE = (0.0, 1.0, 0.3, 0.1, 0.0, 0.1, 0.05)
SURE_LINE = 1.0e4  # lead bonus of a play that starts a sure way out
MAX_MULTI = 96  # five-card (and six-card) candidates considered by the planner
MAX_DEPTH = 5  # combinations per plan (26-card hands)
MAX_NODES = 3000  # partial plans searched per plan
MAX_ANSWERS = 48  # answering with more legal plays than this scores a subset (rollouts)
SURE = 0.999  # a play with this much control is taken to win its trick
WEAK = 0.75  # a play with less control than this is a weak play of the plan

# Weights (indices into the ``weights`` array).
W_EPS = 0  # cost per play on top of (1 - control)
W_SINGLE_SPAN = 1  # a single loses all control when this many higher cards are unseen
W_PAIR_SPAN = 2  # ... a pair, with this many higher pairs possible
W_TRIPLE_SPAN = 3  # ... a triple
W_SIZE = 4  # lead bonus per extra card shed
W_LEAD = 5  # answering: value of taking the lead, times the play's control
W_SPEND = 6  # answering: cost of spending control while opponents hold many cards
W_PRESS = 7  # answering: penalty on passing when an opponent could go out
W_PRESS_HIGH = 8  # answering while pressing: bonus per unit of control (play high)
W_DANGER = 9  # leading: penalty for a lead of n cards while an opponent holds n
W_CASH = 10  # leading: bonus per unit of control when the plan has at most W_CASH_AT plays
W_CASH_AT = 11  # (-1: off; cashing control early lost games in tuning)
W_LOW_SINGLE = 12  # extra plan cost of a single below rank W_LOW_RANK
W_LOW_RANK = 13
W_CTRL_BONUS = 14  # plan value of a sure winner beyond not costing a play (0: none)
W_TEMPO = 15  # answering: cost of passing, over (players - 1) squared (the table owner may lead again)
W_EARLY_SPAN = 16  # 'early' (hold control) fades out as the fewest cards an opponent holds falls by 3 + this * cpp / 13
W_SPEND_POW = 17  # ... the spending cost grows with control to this power (spares all but the top cards)
W_DANGER_FAR = 18  # danger from an opponent other than the next seat, relative to the next seat's
W_END_AT = 19  # endgame: the plan has at most this many plays ...
W_END_MULTI = 20  # ... then leading two or more cards gets this bonus
W_PRESS_AT = 21  # answering: press whenever an opponent holds at most this many cards
W_PRESS_OWNER = 22  # answering: press (0..1) when the table's owner could lead out after winning the trick
NUM_WEIGHTS = 23
DEFAULT_WEIGHTS = np.array(
    [0.075, 12.0, 8.0, 4.0, 1.2, 0.15, 4.8, 4.0, 0.8, 1.5, 2.0, -1, 0.2, 5, 0.0, 5.0, 4.2, 1.0, 0.7, 3, 0.0, 2, 0.5],
    dtype=np.float64,
)
# Named sets of weights (``heuristic:weights=NAME``, ``search:weights=NAME``); each tuned set is
# what the ``bigtwo tune`` search (arena.tune) in its comment finds from DEFAULT_WEIGHTS.
WEIGHT_SETS: dict[str, np.ndarray] = {
    "default": DEFAULT_WEIGHTS,
    # bigtwo tune --variant hong-kong --set scoring=collect (3,000 deals, seed 101, 3 rounds), found by
    # a script copy of that search before it was the command; its +8.80 a game in one seat against
    # three default heuristics replays exactly with arena.tune.payoff_against
    "collect": np.array(
        [0.15, 4.5, 4, 2, 0.15, 0.6, 1.2, 8, 0.8, 1.5, 2, -1, 0.8, 8, 1.2, 20, 8.4, 2, 0.7, 3, -0.1, 2, 0.5],
        dtype=np.float64,
    ),
    # bigtwo tune --variant taiwan (its own cards scoring; 3,000 deals, seed 101, 3 rounds):
    # -1.86 a game in one seat against three default heuristics, which score -3.05 there
    "cards": np.array(
        [0.15, 6, 4, 4, 1.2, 0.15, 2.4, 4, 0.8, 1.5, 2, -1, 0.2, 5, 0, 20, 8.4, 1, 0.7, 3, 0, 2, 0.5],
        dtype=np.float64,
    ),
}


def weight_set(weights: np.ndarray | str | None) -> np.ndarray:
    """The weights an agent is given: ``None`` is ``DEFAULT_WEIGHTS``, a name is that set of
    ``WEIGHT_SETS``, anything else must be ``NUM_WEIGHTS`` finite numbers (``ValueError`` naming what is wrong)."""
    if isinstance(weights, str) and weights in WEIGHT_SETS:
        return WEIGHT_SETS[weights].copy()
    try:
        out = np.array(DEFAULT_WEIGHTS if weights is None else weights, dtype=np.float64)
    except (TypeError, ValueError):
        out = None
    if out is None or out.shape != (NUM_WEIGHTS,) or not np.isfinite(out).all():
        raise ValueError(
            f"weights must be a set's name ({', '.join(WEIGHT_SETS)}) or {NUM_WEIGHTS} finite numbers, got {weights!r}"
        )
    return out


MIX = "+"  # joins the names of a mix of sets: ``opponent_weights=default+collect``


def weight_mix(weights: np.ndarray | str | None) -> np.ndarray:
    """One or more sets of weights (M, ``NUM_WEIGHTS``): names joined by ``MIX``
    (``"default+collect"``), a list of sets (names or rows of numbers), or anything ``weight_set``
    takes (one set); ``ValueError`` naming what is wrong."""
    if isinstance(weights, str) and MIX in weights:
        weights = [name.strip() for name in weights.split(MIX)]
    sets = isinstance(weights, (list, tuple, np.ndarray)) and len(weights) > 0
    if sets and all(isinstance(one, str) or np.ndim(one) == 1 for one in weights):
        return np.stack([weight_set(one) for one in weights])
    return weight_set(weights)[None]


def five_card_control(table: ActionTable) -> np.ndarray:
    """Fixed control (0..1) of every action of five or six cards, by class and place in it;
    0 for smaller plays (their control depends on the unseen cards)."""
    out = np.zeros(table.size, dtype=np.float64)
    kinds = table.kinds
    scale = {
        "straight": (0.05, 0.35),
        "flush": (0.35, 0.6),
        "full_house": (0.6, 0.9),
        "four_of_a_kind": (0.95, 1.0),
        "straight_flush": (1.0, 1.0),
        "pair_chain": (0.85, 1.0),
    }
    for kind, (lo, hi) in scale.items():
        ids = np.flatnonzero(kinds == KIND_INDEX[kind])
        if len(ids) == 0:
            continue
        s = table.strength[ids].astype(np.float64)
        span = s.max() - s.min()
        frac = (s - s.min()) / span if span > 0 else np.ones_like(s)
        out[ids] = lo + (hi - lo) * frac
    return out


def higher_cards(suit_rank: tuple[int, ...] | np.ndarray) -> np.ndarray:
    """``higher[c]``: mask of the cards a single ``c`` loses to."""
    sr = np.asarray(suit_rank)
    value = np.array([(c // 4) * 4 + sr[c % 4] for c in range(52)])
    out = np.zeros(52, dtype=np.uint64)
    for c in range(52):
        m = 0
        for d in range(52):
            if value[d] > value[c]:
                m |= 1 << d
        out[c] = np.uint64(m)
    return out


class Context:
    """Per-variant arrays the kernels read: rules, controls, card orders, weights."""

    def __init__(self, variant: Variant, table: ActionTable, weights: np.ndarray | str | None = None) -> None:
        self.rules = make_rules(variant, table)
        self.five_ctrl = five_card_control(table)
        self.higher = higher_cards(variant.suit_rank)
        # physical suits from weakest to strongest
        self.suit_order = np.argsort(np.asarray(variant.suit_rank)).astype(np.int64)
        self.weights = weight_set(weights)
        self.two_ends = bool(variant.two_ends_trick)
        self.players = variant.players
        self.cpp = variant.cards_per_player

    def args(self) -> tuple:
        return (self.rules, self.five_ctrl, self.higher, self.suit_order, self.weights, self.two_ends)


# ---------------------------------------------------------------- control of plays


@njit(inline="always")
def _nib(hand, r):
    return np.int64((hand >> np.uint64(4 * r)) & np.uint64(15))


@njit(inline="always")
def _top_value(m, r, suit_rank):
    best = -1
    for s in range(4):
        if m >> s & 1:
            v = r * 4 + suit_rank[s]
            if v > best:
                best = v
    return best


@njit(inline="always")
def _ctrl_single(c, unseen, f, higher, w, two_ends):
    if two_ends and c // 4 == 12:
        return 1.0
    k = popcount(unseen & higher[c])
    if k == 0:
        return 1.0
    v = 1.0 - k * f / w[W_SINGLE_SPAN]
    return v if v > 0.0 else 0.0


@njit(inline="always")
def _ctrl_group(r, m, size, unseen, f, suit_rank, w, two_ends):
    """Control of a pair (size 2) or triple (3) of rank ``r`` with suits ``m``."""
    if size == 3 and two_ends and r == 12:
        return 1.0
    k = 0.0
    for r2 in range(r + 1, 13):
        u = count4(_nib(unseen, r2))
        if u >= size:
            k += 1.0 + 0.5 * (u - size)
    if size == 2:
        u_m = _nib(unseen, r)
        if count4(u_m) >= 2 and _top_value(u_m, r, suit_rank) > _top_value(m, r, suit_rank):
            k += 1.0
    if k == 0.0:
        return 1.0
    span = w[W_PAIR_SPAN] if size == 2 else w[W_TRIPLE_SPAN]
    v = 1.0 - k * f * f / span if size == 2 else 1.0 - k * f * f * f / span
    return v if v > 0.0 else 0.0


@njit(inline="always")
def play_control(a, unseen, f, R, five_ctrl, higher, w, two_ends):
    """Control (0..1) of action ``a`` given the unseen cards."""
    size = R.sizes[a]
    if size >= 5:
        return five_ctrl[a]
    mask = R.masks[a]
    low = -1
    for c in range(52):
        if mask & (U1 << np.uint64(c)):
            low = c
            break
    if size == 1:
        return _ctrl_single(low, unseen, f, higher, w, two_ends)
    r = low // 4
    return _ctrl_group(r, _nib(mask, r), size, unseen, f, R.suit_rank, w, two_ends)


# ---------------------------------------------------------------- planning


@njit(inline="always")
def _lowest_in(m, suit_order):
    for i in range(4):
        s = suit_order[i]
        if m >> s & 1:
            return s
    return -1


@njit(inline="always")
def _add(mask, R, five_ctrl, out, ctrl, k):
    if k >= out.shape[0]:
        return k
    for i in range(k):
        if out[i] == mask:
            return k
    a = lookup(mask, R.hash_keys, R.hash_ids, R.bits)
    if a < 0:
        return k
    out[k] = mask
    ctrl[k] = five_ctrl[a]
    return k + 1


@njit
def gen_multi(hand, R, five_ctrl, suit_order, out, ctrl, cnt, nib):
    """Candidate five-card hands (and pair chains) in ``hand`` for the planner; returns how many.
    ``cnt`` and ``nib`` (13 each) are scratch for the cards per rank."""
    for r in range(13):
        nib[r] = _nib(hand, r)
        cnt[r] = count4(nib[r])
    k = 0
    # straights: per window the lowest card of each rank, and every straight flush
    W = R.windows.shape[0]
    for wi in range(W):
        ok = True
        for j in range(5):
            if cnt[R.windows[wi, j]] == 0:
                ok = False
        if not ok:
            continue
        m = U0
        m_hi = U0
        for j in range(5):
            r = R.windows[wi, j]
            m |= U1 << np.uint64(4 * r + _lowest_in(nib[r], suit_order))
            # a second choice: spare cards of pairs/triples rather than singletons' partners
            s_hi = -1
            for i in range(3, -1, -1):
                s = suit_order[i]
                if nib[r] >> s & 1:
                    s_hi = s
                    break
            m_hi |= U1 << np.uint64(4 * r + s_hi)
        k = _add(m, R, five_ctrl, out, ctrl, k)
        k = _add(m_hi, R, five_ctrl, out, ctrl, k)
        for s in range(4):
            sf = True
            for j in range(5):
                if not (nib[R.windows[wi, j]] >> s & 1):
                    sf = False
            if sf:
                m = U0
                for j in range(5):
                    m |= U1 << np.uint64(4 * R.windows[wi, j] + s)
                k = _add(m, R, five_ctrl, out, ctrl, k)
    # flushes: the five lowest of a suit, and the five lowest preferring cards of lone ranks
    for s in range(4):
        n_s = 0
        for r in range(13):
            if nib[r] >> s & 1:
                n_s += 1
        if n_s < 5:
            continue
        m = U0
        t = 0
        for r in range(13):
            if t < 5 and nib[r] >> s & 1:
                m |= U1 << np.uint64(4 * r + s)
                t += 1
        k = _add(m, R, five_ctrl, out, ctrl, k)
        m2 = U0
        t = 0
        for r in range(13):
            if t < 5 and nib[r] >> s & 1 and cnt[r] == 1:
                m2 |= U1 << np.uint64(4 * r + s)
                t += 1
        for r in range(13):
            if t < 5 and nib[r] >> s & 1 and cnt[r] > 1:
                m2 |= U1 << np.uint64(4 * r + s)
                t += 1
        k = _add(m2, R, five_ctrl, out, ctrl, k)
        # the highest five (a strong flush to keep as control)
        m3 = U0
        t = 0
        for r in range(12, -1, -1):
            if t < 5 and nib[r] >> s & 1:
                m3 |= U1 << np.uint64(4 * r + s)
                t += 1
        k = _add(m3, R, five_ctrl, out, ctrl, k)
    # full houses: each triple with the lowest pair (a true pair first)
    for r3 in range(13):
        if cnt[r3] < 3:
            continue
        tm = U0
        t = 0
        for i in range(4):
            s = suit_order[i]
            if t < 3 and nib[r3] >> s & 1:
                tm |= U1 << np.uint64(4 * r3 + s)
                t += 1
        for want in (2, 3, 4):
            found = -1
            for r2 in range(13):
                if r2 != r3 and cnt[r2] == want:
                    found = r2
                    break
            if found >= 0:
                pm = U0
                t = 0
                for i in range(4):
                    s = suit_order[i]
                    if t < 2 and nib[found] >> s & 1:
                        pm |= U1 << np.uint64(4 * found + s)
                        t += 1
                k = _add(tm | pm, R, five_ctrl, out, ctrl, k)
                break
    # fours: with the lowest lone card, else the lowest other card
    for r4 in range(13):
        if cnt[r4] != 4:
            continue
        qm = np.uint64(15) << np.uint64(4 * r4)
        kick = -1
        for want in (1, 2, 3):
            for r in range(13):
                if r != r4 and cnt[r] == want:
                    kick = 4 * r + _lowest_in(nib[r], suit_order)
                    break
            if kick >= 0:
                break
        if kick >= 0:
            k = _add(qm | (U1 << np.uint64(kick)), R, five_ctrl, out, ctrl, k)
    # pair chains (only where the variant has them: lookup fails otherwise)
    if R.ip[K.IP_PAIR_CHAIN]:
        for r in range(10):
            if cnt[r] >= 2 and cnt[r + 1] >= 2 and cnt[r + 2] >= 2:
                m = U0
                for j in range(3):
                    t = 0
                    for i in range(4):
                        s = suit_order[i]
                        if t < 2 and nib[r + j] >> s & 1:
                            m |= U1 << np.uint64(4 * (r + j) + s)
                            t += 1
                k = _add(m, R, five_ctrl, out, ctrl, k)
    return k


@njit(inline="always")
def _piece(ctrl, w):
    """Plan cost of one play of control ``ctrl``: a weak play costs about 1, a sure winner
    ``-W_CTRL_BONUS`` (it wins a lead back for one weak play)."""
    return 1.0 + w[W_EPS] - (1.0 + w[W_CTRL_BONUS]) * ctrl


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
            ctrl = _ctrl_single(4 * r + s, unseen, f, higher, w, two_ends)
            cost += _piece(ctrl, w)
            tally += _tally(ctrl)
            if r < w[W_LOW_RANK]:
                cost += w[W_LOW_SINGLE]
    return cost, tally


@njit(inline="always")
def _rank_cost(r, m, unseen, f, R, higher, w, two_ends):
    """Plan cost and tally of rank ``r``'s cards ``m`` (suit bits): one pair or triple (two pairs
    for four), or singles, whichever is cheaper."""
    c = count4(m)
    split, split_tally = _singles_cost(r, m, unseen, f, higher, w, two_ends)
    if c == 1:
        return split, split_tally
    ctrl = _ctrl_group(r, m, 2 if c == 4 else c, unseen, f, R.suit_rank, w, two_ends)
    pieces = 2 if c == 4 else 1
    group = pieces * _piece(ctrl, w)
    if group <= split:
        return group, pieces * _tally(ctrl)
    return split, split_tally


@njit
def new_work(width):
    """The planner's scratch for one thread, made once per batch or rollout (allocated per decision,
    it took about a tenth of the deciding's time): the candidate combinations and their controls, the
    ``rest_cost`` memo (each rank's suit set's cost and tally, index ``16 * rank + suits``, and
    whether it is filled: valid for one decision, while the unseen cards stay the same), the
    plan search's stack, the cards per rank, the marks of ``width`` legal plays, and the danger
    per play size."""
    d = MAX_DEPTH + 1
    return (
        np.zeros(MAX_MULTI, dtype=np.uint64),
        np.zeros(MAX_MULTI, dtype=np.float64),
        (np.zeros(13 * 16, dtype=np.float64), np.zeros(13 * 16, dtype=np.int64), np.zeros(13 * 16, dtype=np.bool_)),
        (
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


@njit(inline="always")
def rest_cost(hand, unseen, f, R, higher, w, two_ends, memo):
    """Plan cost of ``hand`` played rank by rank: each rank's cards as one pair or triple (two
    pairs for four), or as singles (strong cards are worth more apart), whichever is cheaper.
    Returns the cost and the plan's tally (``_tally``). ``memo`` (``new_work``'s) keeps each
    rank's cost for the rest of the decision (the unseen cards, and so every control, are fixed
    while one play is chosen), so the planner's thousands of partial plans cost a lookup per rank."""
    mc, mt, ok = memo
    cost = 0.0
    tally = 0
    for r in range(13):
        m = _nib(hand, r)
        if m == 0:
            continue
        i = 16 * r + m
        if not ok[i]:
            mc[i], mt[i] = _rank_cost(r, m, unseen, f, R, higher, w, two_ends)
            ok[i] = True
        cost += mc[i]
        tally += mt[i]
    return cost, tally


@njit
def _search_plan(hand, multi, mctrl, m, unseen, f, R, higher, w, two_ends, memo, stack):
    """Depth-first search over sets of disjoint candidate combinations (iterative: Numba's cache
    does not hold recursive functions), the rest grouped by rank; at most ``MAX_NODES`` sets."""
    best, best_tally = rest_cost(hand, unseen, f, R, higher, w, two_ends, memo)
    hs, nx, acc, accw = stack
    d = 0
    hs[0] = hand
    nx[0] = 0
    acc[0] = 0.0
    accw[0] = 0
    nodes = 0
    while d >= 0:
        i = nx[d]
        if i >= m or nodes >= MAX_NODES:
            d -= 1
            continue
        nx[d] = i + 1
        c = multi[i]
        if (c & hs[d]) != c:
            continue
        nodes += 1
        h2 = hs[d] & ~c
        a2 = acc[d] + _piece(mctrl[i], w)
        w2 = accw[d] + _tally(mctrl[i])
        rc, rw = rest_cost(h2, unseen, f, R, higher, w, two_ends, memo)
        if a2 + rc < best:
            best = a2 + rc
            best_tally = w2 + rw
        if d < MAX_DEPTH and h2 != U0:
            d += 1
            hs[d] = h2
            nx[d] = i + 1
            acc[d] = a2
            accw[d] = w2
    return best, best_tally


@njit
def plan_cost(hand, unseen, f, R, five_ctrl, higher, suit_order, w, two_ends, work):
    """Least plan cost of ``hand`` over partitions into the candidate combinations and the rest,
    and that plan's tally (``_tally``: its plays, unsure plays and weak plays)."""
    multi, mctrl, memo, stack, cnt, nib = work[0], work[1], work[2], work[3], work[4], work[5]
    m = gen_multi(hand, R, five_ctrl, suit_order, multi, mctrl, cnt, nib)
    return _search_plan(hand, multi, mctrl, m, unseen, f, R, higher, w, two_ends, memo, stack)


# ---------------------------------------------------------------- deciding


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
def _lead_candidates(hand, legal, n, R, multi, m, mark):
    """Mark the legal plays worth scoring on a free lead: the planner's combinations, every rank
    group (single, pair, triple, and their parts), and the highest and lowest single."""
    for i in range(m):
        a = lookup(multi[i], R.hash_keys, R.hash_ids, R.bits)
        j = _find(legal, n, a)
        if j >= 0:
            mark[j] = True
    for r in range(13):
        nb = _nib(hand, r)
        if nb == 0:
            continue
        # every subset of the rank's cards of size 1..3 (at most 14 plays)
        for sub in range(1, 16):
            if (sub & nb) != sub or count4(sub) == 4:
                continue
            a = lookup(np.uint64(sub) << np.uint64(4 * r), R.hash_keys, R.hash_ids, R.bits)
            if a >= 0:
                j = _find(legal, n, a)
                if j >= 0:
                    mark[j] = True


@njit
def decide(
    hand,
    unseen,
    counts,
    players,
    cpp,
    table,
    owner,
    duty,
    opening,
    legal,
    n,
    R,
    five_ctrl,
    higher,
    suit_order,
    w,
    two_ends,
    full,
    scores,
    work,
):
    """Score the legal plays ``legal[:n]`` into ``scores`` (``NEG`` = not considered) and return
    the index of the best. ``counts`` are cards left per relative seat (0 = self); ``work`` is
    ``new_work``'s scratch, of a width of at least ``n``."""
    for i in range(n):
        scores[i] = NEG
    if n == 1:
        scores[0] = 0.0
        return 0
    multi, mctrl, cnt, nib, marks, danger = work[0], work[1], work[4], work[5], work[6], work[7]
    work[2][2][:] = False  # the memo holds this decision's controls only
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
    base, base_tally = plan_cost(hand, unseen, f, R, five_ctrl, higher, suit_order, w, two_ends, work)
    top = highest_card(hand, R.suit_rank)
    top_id = lookup(U1 << np.uint64(top), R.hash_keys, R.hash_ids, R.bits)
    # danger[s]: an opponent holds exactly s cards and could go out with one play of s cards:
    # how likely s cards are one play, times 1 for the next seat and W_DANGER_FAR for the others
    danger[:] = 0.0
    for k in range(1, players):
        c = counts[k]
        if c <= 6:
            d = DANGER_BY_SIZE[c] * (1.0 if k == 1 else w[W_DANGER_FAR])
            if d > danger[c]:
                danger[c] = d
    best_i = 0
    best = NEG * 2
    if table == 0:
        mark = marks[:n]
        mark[:] = False
        if full or opening >= 0 or n <= 24:
            for i in range(n):
                mark[i] = True
        else:
            m = gen_multi(hand, R, five_ctrl, suit_order, multi, mctrl, cnt, nib)
            _lead_candidates(hand, legal, n, R, multi, m, mark)
            j = _find(legal, n, top_id)
            if j >= 0:
                mark[j] = True
        cash = base_tally // 10000 <= w[W_CASH_AT]
        endgame = base_tally // 10000 <= w[W_END_AT]
        for i in range(n):
            if not mark[i]:
                continue
            a = legal[i]
            pm = R.masks[a]
            size = R.sizes[a]
            rest = hand & ~pm
            if rest == U0:
                sc = BIG
            else:
                after, tally = plan_cost(rest, unseen, f, R, five_ctrl, higher, suit_order, w, two_ends, work)
                ctrl = play_control(a, unseen, f, R, five_ctrl, higher, w, two_ends)
                sc = -after + w[W_SIZE] * (size - 1) * (1.0 - ctrl)
                if ctrl >= SURE and (tally // 100) % 100 <= 1:
                    sc += SURE_LINE  # sure plays first, then the one unsure play: a won game
                if cash:
                    sc += w[W_CASH] * ctrl
                if endgame and size >= 2:
                    sc += w[W_END_MULTI]  # keep a single for last: singles are the easiest to shed
                if size <= 6 and danger[size] > 0.0:
                    sc -= w[W_DANGER] * danger[size] * (1.0 - ctrl)
                if duty == K.DUTY_LEAD_MULTI and size < 2 or duty == K.DUTY_LEAD_HIGHEST and a != top_id:
                    sc -= BIG
            scores[i] = sc
            if sc > best:
                best = sc
                best_i = i
        return best_i
    # answering
    tsize = R.sizes[table]
    press = 0.0
    if tsize <= 6 and danger[tsize] > 0.0:
        press = danger[tsize]
    if owner > 0 and counts[owner] <= 6:
        # if the trick stays with its owner, the owner leads next and may go out at once
        press = max(press, w[W_PRESS_OWNER] * DANGER_BY_SIZE[counts[owner]] * (1.0 if owner == 1 else w[W_DANGER_FAR]))
    if min_opp <= w[W_PRESS_AT]:
        press = max(press, 0.8)
    early = (min_opp - 3.0) / (w[W_EARLY_SPAN] * cpp / 13.0)
    early = 0.0 if early < 0.0 else (1.0 if early > 1.0 else early)
    mark = marks[:n]
    mark[:] = True
    if n > MAX_ANSWERS and not full:
        # a big hand answering five cards: score pass, the planner's pieces and the lowest plays
        mark[:] = False
        m = gen_multi(hand, R, five_ctrl, suit_order, multi, mctrl, cnt, nib)
        _lead_candidates(hand, legal, n, R, multi, m, mark)
        for i in range(MAX_ANSWERS // 2):
            mark[i] = True
    for i in range(n):
        if not mark[i]:
            continue
        a = legal[i]
        if a == 0:
            sc = -w[W_PRESS] * press - w[W_TEMPO] / ((players - 1) * (players - 1))
        else:
            pm = R.masks[a]
            rest = hand & ~pm
            if rest == U0:
                sc = BIG
            else:
                after = plan_cost(rest, unseen, f, R, five_ctrl, higher, suit_order, w, two_ends, work)[0]
                ctrl = play_control(a, unseen, f, R, five_ctrl, higher, w, two_ends)
                gain = base - after
                sc = gain + ctrl * (w[W_LEAD] + press * w[W_PRESS_HIGH]) - w[W_SPEND] * early * ctrl ** w[W_SPEND_POW]
                if duty == K.DUTY_ANSWER_HIGHEST and R.sizes[a] == 1 and a != top_id:
                    sc -= BIG
        scores[i] = sc
        if sc > best:
            best = sc
            best_i = i
    return best_i


@njit
def _mask_of(row, base):
    m = U0
    for c in range(52):
        if row[base + c] > 0.5:
            m |= U1 << np.uint64(c)
    return m


@njit
def read_obs(row, players, cpp, R, counts):
    """The parts of an observation the heuristic reads: hand, unseen cards, cards left per relative
    seat (into ``counts``), table action, last-card duty, opening card."""
    hand = _mask_of(row, part_start(Part.HAND, players))
    seen = hand
    base = part_start(Part.PLAYED, players)
    for k in range(players):
        seen |= _mask_of(row, base + 52 * k)
    base = part_start(Part.CARDS_LEFT_FRACTION, players)
    for k in range(players):
        counts[k] = np.int64(row[base + k] * cpp + 0.5)
    tmask = _mask_of(row, part_start(Part.TABLE, players))
    table = 0
    if tmask != U0:
        table = lookup(tmask, R.hash_keys, R.hash_ids, R.bits)
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
    unseen = ~seen & ((U1 << np.uint64(52)) - U1)
    return hand, unseen, table, owner, duty, opening


@njit(nogil=True)
def act_obs(obs, legal, legal_n, players, cpp, R, five_ctrl, higher, suit_order, w, two_ends, full, out, scores):
    """Batch: one action per observation row into ``out`` (-1 where nothing is legal); ``scores``
    (B, L) gets each legal play's score."""
    counts = np.zeros(players, dtype=np.int64)
    work = new_work(legal.shape[1])
    for g in range(obs.shape[0]):
        n = legal_n[g]
        if n <= 0:
            out[g] = -1
            continue
        hand, unseen, table, owner, duty, opening = read_obs(obs[g], players, cpp, R, counts)
        i = decide(
            hand,
            unseen,
            counts,
            players,
            cpp,
            table,
            owner,
            duty,
            opening,
            legal[g],
            n,
            R,
            five_ctrl,
            higher,
            suit_order,
            w,
            two_ends,
            full,
            scores[g],
            work,
        )
        out[g] = legal[g, i]


@njit
def decide_state(g, R, S, five_ctrl, higher, suit_order, w, two_ends, full, counts, scores, work):
    """Index into ``S.legal[g]`` of the heuristic's play for game ``g``'s seat to act, read from
    the engine state (that seat's own view only: its hand, the cards played, the counts).
    ``counts`` (players) and ``work`` (``new_work``, as wide as ``S.legal``) are scratch."""
    players = R.ip[K.IP_PLAYERS]
    cpp = R.ip[K.IP_CPP]
    n = S.legal_n[g]
    if n == 1:
        return 0
    full_mask = (U1 << np.uint64(52)) - U1
    seat = S.current[g]
    hand = S.hands[g, seat]
    seen = hand
    for k in range(players):
        s = absolute_seat(g, seat, k, R, S)
        seen |= S.played[g, s]
        counts[k] = S.counts[g, s]
    return decide(
        hand,
        ~seen & full_mask,
        counts,
        players,
        cpp,
        np.int64(S.table_action[g]),
        relative_seat(g, seat, S.table_seat[g], R, S) if S.table_seat[g] >= 0 else np.int64(-1),
        np.int64(S.duty[g]),
        np.int64(S.opening[g]),
        S.legal[g],
        n,
        R,
        five_ctrl,
        higher,
        suit_order,
        w,
        two_ends,
        full,
        scores,
        work,
    )


@njit
def replies_state(choice, scores, R, S, five_ctrl, higher, suit_order, w_rows, two_ends):
    """``choice[g]``: the heuristic's play (an action id, 0 a pass), with weights ``w_rows[g]``,
    for each game's seat to act, read from the engine state (its legal lists current); search
    weighs sampled hands with it."""
    counts = np.zeros(R.ip[K.IP_PLAYERS], dtype=np.int64)
    work = new_work(S.legal.shape[1])
    for g in range(S.seeds.shape[0]):
        i = decide_state(g, R, S, five_ctrl, higher, suit_order, w_rows[g], two_ends, False, counts, scores[g], work)
        choice[g] = S.legal[g, i]


@njit(nogil=True)
def rollout_state(first, scores, payoff, others, R, S, five_ctrl, higher, suit_order, w, two_ends, max_steps):
    """Rollouts, for search: in each game play ``first[g]`` (a legal play of its seat to act), then
    the heuristic at every seat until the game is over (or ``max_steps`` plays, a guard), with
    weights ``w`` at seat 0 and ``others[g]`` at the other seats;
    ``payoff[g]`` gets seat 0's payoff of the game (0 if it did not end). The state's matches
    must be one game long without autoreset, as ``SearchAgent`` builds them. Each game is played
    to its end on its own (no lockstep), so slices of the batch can run in threads."""
    counts = np.zeros(R.ip[K.IP_PLAYERS], dtype=np.int64)
    work = new_work(S.legal.shape[1])
    for g in range(S.seeds.shape[0]):
        payoff[g] = 0.0
        K.step_one(g, first[g], R, S, False)
        steps = 0
        while not S.over[g] and steps < max_steps:
            S.legal_n[g] = K.legal_one(g, R, S)
            ww = w if S.current[g] == 0 else others[g]
            i = decide_state(g, R, S, five_ctrl, higher, suit_order, ww, two_ends, False, counts, scores[g], work)
            K.step_one(g, S.legal[g, i], R, S, False)
            steps += 1
        if S.over[g]:
            payoff[g] = S.payoffs[g, 0]


class HeuristicAgent(Agent):
    """The rule-based planner above; deterministic (``seed`` is accepted and unused).

    ``weights``: a name of ``WEIGHT_SETS`` or ``NUM_WEIGHTS`` numbers replacing ``DEFAULT_WEIGHTS``
    (``arena.tune`` finds them)."""

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
        act_obs(
            obs,
            legal,
            counts,
            c.players,
            c.cpp,
            c.rules,
            c.five_ctrl,
            c.higher,
            c.suit_order,
            c.weights,
            c.two_ends,
            full,
            out,
            scores,
        )
        return out, scores

    def act(self, obs: np.ndarray, legal_ids: np.ndarray, legal_counts: np.ndarray) -> np.ndarray:
        return self._run(obs, legal_ids, legal_counts, False)[0]

    def scores(self, obs: np.ndarray, legal_ids: np.ndarray, legal_counts: np.ndarray) -> np.ndarray:
        """Preference of every legal play (B, L) (higher is better, ``NEG`` beyond the counts);
        every legal play is scored, leads included. Search prunes its candidates with it."""
        return self._run(*self.check_inputs(obs, legal_ids, legal_counts), True)[1]
