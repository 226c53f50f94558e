"""Compiled kernels of the batched engine (Numba): dealing, legal plays, stepping, scoring.

Every kernel takes the variant's ``Rules`` and the batch's ``State`` (arrays, batch first) and
loops over the batch's matches. The batch kernels release the GIL, so the engine runs them on
slices of the batch in threads, one per core (Numba's ``prange`` does not write through a tuple of
arrays).

Integer settings travel in ``ip`` (``IP_*`` indices), numbers in ``fp`` (``FP_*``): each setting
declares its slot, and the slot's name, with itself (``bigtwo.env.rules.variant``); the block of
``IP_*``/``FP_*`` constants and choice codes below is written from the declarations
(``python -m bigtwo.env.rules.generated``; a test fails while it is stale), and
``engine.make_rules`` fills the slots from them. A card set is a
``uint64`` with bit ``c`` for card ``c``; a card's value (rank, then the variant's suit order)
is ``rank * 4 + suit_rank[suit]``.

Play order: each game has a direction, ``State.reverse`` (``turn_order``). A forward game
plays seat + 1 next, a reversed one seat - 1; ``seat_after`` and ``places_after`` are the only
places that step seats, so the turn, the last-card duty and liability (the seat before the one-card
holder), the settlement order and the observations all follow the game's direction.

What the observations track of a game (cleared as each game starts): ``step_one`` records every
move (passes included) in ``hist_action``/``hist_seat``, the last ``HISTORY`` of them, most recent
first, and for a pass the weakest table play that seat passed on per play size (``passed_on``,
columns by ``size_slot``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from bigtwo.env.engine.jit import njit
from bigtwo.env.rules.combos import KIND_INDEX
from bigtwo.env.rules.variant import FP_SLOTS, IP_SLOTS

U1 = np.uint64(1)
U0 = np.uint64(0)
HASH_MULT = np.uint64(0x9E3779B97F4A7C15)
# An odd 64-bit multiplier with well-spread bits: a deal's number times it, xored into the game's
# seed, starts that deal's random stream (``shuffled_deck``, ``drawn_reverse``), so deals 0, 1,
# 2, ... of one seed start far apart.
DEAL_MULT = np.uint64(0xD1B54A32D192ED03)
# Xored into a deal's start as well, to set ``drawn_reverse``'s stream apart from the shuffles'.
DRAW_STREAM = np.uint64(0xA0761D6478BD642F)
ABOVE_EVERY_CARD = 99  # a card value above every card's (they run 0..51): ``lowest_card`` starts from it
K_SINGLE = KIND_INDEX["single"]
K_TRIPLE = KIND_INDEX["triple"]
K_SF = KIND_INDEX["straight_flush"]
K_FLUSH = KIND_INDEX["flush"]
K_FULL = KIND_INDEX["full_house"]
K_FOUR = KIND_INDEX["four_of_a_kind"]
TWO_RANK = 12

# The kernels' names for the settings' slots in ``ip`` (integers) and ``fp`` (numbers), and for the
# codes of the settings with a fixed list of values (a value's place in ``variant.CHOICES``): all
# named by the settings' declarations (``variant.KERNEL_CONSTANTS``) and written here from them.
# <generated: python -m bigtwo.env.rules.generated; from the settings' declarations>
IP_PLAYERS = 0  # players: the value
IP_CPP = 1  # cards_per_player: the value
IP_OPENING = 2  # opening_card: the card's id
IP_OPEN_EVERY = 3  # opening_every_game: 1 or 0
IP_PAIR_CHAIN = 4  # pair_chain: 1 or 0
IP_TWO_ENDS = 5  # two_ends_trick: 1 or 0
IP_LAST_CARD = 6  # last_card_rule: its place in the list
IP_SCORING = 7  # scoring: its place in the list
IP_TWOS_MULT = 8  # penalty_multiplier_for_twos: the value
IP_GAMES = 9  # games: the value
IP_TURN_ORDER = 10  # turn_order: its place in the list
FP_UNIT = 0  # unit: the value
FP_BUY_IN = 1  # buy_in: the value
FP_RAKE = 2  # rake: the value
FP_TARGET = 3  # target_score: the value
LAST_CARD_OFF = 0  # last_card_rule: off
LAST_CARD_ENFORCE = 1  # last_card_rule: enforce
LAST_CARD_LIABILITY = 2  # last_card_rule: liability
SCORING_CARDS = 0  # scoring: cards
SCORING_TIERED = 1  # scoring: tiered
SCORING_PAIRWISE = 2  # scoring: pairwise
SCORING_WIN_LOSS = 3  # scoring: win_loss
SCORING_COLLECT = 4  # scoring: collect
TURN_ORDER_FIXED = 0  # turn_order: fixed
TURN_ORDER_ALTERNATE = 1  # turn_order: alternate
TURN_ORDER_RANDOM = 2  # turn_order: random
# </generated>
IP_NUM = len(IP_SLOTS)
FP_SCORE_SCALE = len(FP_SLOTS)  # not a setting: 1 / the variant's worst payoff of one game (make_rules)
FP_NUM = FP_SCORE_SCALE + 1
# Last-card duties of the seat to act (observation and liability): none, must lead 2+ cards,
# must lead the highest single, a single answer must be the highest card.
DUTY_NONE, DUTY_LEAD_MULTI, DUTY_LEAD_HIGHEST, DUTY_ANSWER_HIGHEST = 0, 1, 2, 3
HISTORY = 8  # moves of the current game the state keeps (``hist_action``/``hist_seat``), most recent first
SIZE_SLOTS = 5  # play sizes 1, 2, 3, 5, 6 (``size_slot``): the columns of ``passed_on``


class Rules(NamedTuple):
    """A variant's settings and action table, as the kernels read them."""

    ip: np.ndarray  # int64 settings, IP_* indices
    fp: np.ndarray  # float64 settings, FP_* indices
    suit_rank: np.ndarray  # int64 (4,): strength of each physical suit
    windows: np.ndarray  # int64 (W, 5): straight windows' ranks
    tiers: np.ndarray  # float64 (T, 2): collect's brackets (from cards, multiplier), rising
    sizes: np.ndarray
    kinds: np.ndarray
    places: np.ndarray  # float64 (A,): each play's strength within its size, 0 (weakest) .. 1; pass 0
    masks: np.ndarray
    beat_start: np.ndarray
    group_end: np.ndarray
    hash_keys: np.ndarray
    hash_ids: np.ndarray
    bits: int
    rank_ids: np.ndarray  # int32 (13 * 16,): id of the play of suits ``sub`` of rank ``r`` at ``16 r + sub``, -1 none


class State(NamedTuple):
    """The batch's state: one row per match (``N``; its games played one after another), one column
    per seat (``P``)."""

    seeds: np.ndarray  # uint64 (N,): each game's deal seed
    deal_count: np.ndarray  # int64 (N,): deals made so far (the next deal's number)
    hands: np.ndarray  # uint64 (N, P): cards held
    counts: np.ndarray  # int8 (N, P): cards left
    played: np.ndarray  # uint64 (N, P): cards each seat has played this game
    current: np.ndarray  # int8 (N,): seat to act, -1 once the match is over
    table_action: np.ndarray  # int32 (N,): the play to beat, 0 when leading
    table_seat: np.ndarray  # int8 (N,): who made it, -1 when leading
    passes: np.ndarray  # int8 (N,): passes in a row since the last play
    opening: np.ndarray  # int8 (N,): card the next play must hold, -1 none
    breach: np.ndarray  # bool (N, P): the seat before this one broke the last-card rule (liability)
    reverse: np.ndarray  # bool (N,): this game plays in reversed seat order (seat - 1 next)
    over: np.ndarray  # bool (N,): match over and not reset
    duty: np.ndarray  # int8 (N,): last-card duty of the seat to act (DUTY_*)
    duty_card: np.ndarray  # int8 (N,): its highest card when the duty names it, else -1
    winner: np.ndarray  # int8 (N,): winner of the last finished game, -1 none
    game_over: np.ndarray  # bool (N,): a game ended on the last step
    match_over: np.ndarray  # bool (N,): a match ended on the last step
    payoffs: np.ndarray  # float64 (N, P): payoffs of the game that ended on the last step
    match_scores: np.ndarray  # float64 (N, P): payoffs summed over the match so far
    games_played: np.ndarray  # int32 (N,): games finished in this match
    legal: np.ndarray  # int32 (N, L): legal action ids of the seat to act, sorted, padded
    legal_n: np.ndarray  # int32 (N,): how many
    hist_action: np.ndarray  # int32 (N, HISTORY): this game's last moves, most recent first (0 pass), -1 none
    hist_seat: np.ndarray  # int8 (N, HISTORY): who made them, -1 none
    passed_on: np.ndarray  # int32 (N, P, SIZE_SLOTS): weakest table play each seat passed on this game, 0 none


@njit(inline="always")
def bit(c):
    return U1 << np.uint64(c)


@njit
def popcount(x):
    n = 0
    while x:
        x &= x - U1
        n += 1
    return n


@njit
def lookup(mask, hash_keys, hash_ids, bits):
    """Action id of a card mask, or -1 if it is no play."""
    cap_mask = np.uint64((1 << bits) - 1)
    slot = (mask * HASH_MULT) >> np.uint64(64 - bits)
    while True:
        i = hash_ids[slot]
        if i < 0:
            return -1
        if hash_keys[slot] == mask:
            return i
        slot = (slot + U1) & cap_mask


@njit
def seat_after(seat, k, players, reverse):
    """The seat ``k`` places after ``seat`` in a game's play order (``reverse``: seat - 1 next)."""
    return (seat - k) % players if reverse else (seat + k) % players


@njit
def places_after(seat, other, players, reverse):
    """How many places after ``seat`` the seat ``other`` plays (``seat_after``'s inverse)."""
    return (seat - other) % players if reverse else (other - seat) % players


@njit(inline="always")
def size_slot(size):
    """Column of a play size (1, 2, 3, 5, 6) among ``SIZE_SLOTS``: 0 .. 4."""
    return size - 1 if size <= 3 else size - 2


@njit
def card_value(c, suit_rank):
    return (c // 4) * 4 + suit_rank[c % 4]


@njit
def highest_card(hand, suit_rank):
    best, best_v = -1, -1
    for c in range(52):
        if hand & bit(c):
            v = card_value(c, suit_rank)
            if v > best_v:
                best, best_v = c, v
    return best


@njit
def lowest_card(hand, suit_rank):
    best, best_v = -1, ABOVE_EVERY_CARD
    for c in range(52):
        if hand & bit(c):
            v = card_value(c, suit_rank)
            if v < best_v:
                best, best_v = c, v
    return best


# ---------------------------------------------------------------- dealing


@njit
def splitmix64(x):
    x = x + np.uint64(0x9E3779B97F4A7C15)
    z = x
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x, z ^ (z >> np.uint64(31))


@njit
def shuffled_deck(seed, deal_no):
    """A shuffled deck for deal ``deal_no`` of the game seeded ``seed`` (Fisher-Yates, SplitMix64)."""
    deck = np.arange(52).astype(np.int8)
    state = seed ^ (np.uint64(deal_no) * DEAL_MULT)
    state, _ = splitmix64(state)
    for i in range(51, 0, -1):
        state, r = splitmix64(state)
        j = np.int64(r % np.uint64(i + 1))
        t = deck[i]
        deck[i] = deck[j]
        deck[j] = t
    return deck


@njit
def drawn_reverse(seed, deal_no):
    """``turn_order: random``: whether the game started at deal number ``deal_no`` of the
    game seeded ``seed`` plays reversed (SplitMix64, a stream apart from the shuffles')."""
    state = seed ^ (np.uint64(deal_no) * DEAL_MULT) ^ DRAW_STREAM
    _, z = splitmix64(state)
    return (z >> np.uint64(63)) == U1


@njit
def start_game(g, R, S, leader):
    """Set game ``g`` to its first turn once ``S.hands[g]`` is dealt. ``leader`` < 0: opening rule.
    Its direction: ``fixed`` forward; ``alternate`` reversed in the match's 2nd, 4th, ... game;
    ``random`` drawn from the seed and ``S.deal_count[g]`` (deals made so far)."""
    players = R.ip[IP_PLAYERS]
    mode = R.ip[IP_TURN_ORDER]
    if mode == TURN_ORDER_FIXED:
        S.reverse[g] = False
    elif mode == TURN_ORDER_ALTERNATE:
        S.reverse[g] = S.games_played[g] % 2 == 1
    else:
        S.reverse[g] = drawn_reverse(S.seeds[g], S.deal_count[g])
    dealt = U0
    for s in range(players):
        S.counts[g, s] = popcount(S.hands[g, s])
        S.played[g, s] = U0
        S.breach[g, s] = False
        for j in range(SIZE_SLOTS):
            S.passed_on[g, s, j] = 0
        dealt |= S.hands[g, s]
    for i in range(HISTORY):
        S.hist_action[g, i] = -1
        S.hist_seat[g, i] = -1
    S.table_action[g] = 0
    S.table_seat[g] = -1
    S.passes[g] = 0
    S.over[g] = False
    if leader >= 0:
        S.current[g] = leader
        S.opening[g] = -1
        return
    card = R.ip[IP_OPENING]
    if card < 0 or not (dealt & bit(card)):
        card = lowest_card(dealt, R.suit_rank)
    S.opening[g] = card
    for s in range(players):
        if S.hands[g, s] & bit(card):
            S.current[g] = s


@njit
def deal_game(g, R, S, leader):
    """Deal game ``g`` its next hands from its seed, then start it."""
    deck = shuffled_deck(S.seeds[g], S.deal_count[g])
    S.deal_count[g] += 1
    players, cpp = R.ip[IP_PLAYERS], R.ip[IP_CPP]
    for s in range(players):
        h = U0
        for k in range(cpp):
            h |= bit(deck[s * cpp + k])
        S.hands[g, s] = h
    start_game(g, R, S, leader)


@njit
def new_match(g, R, S, deal):
    """Clear game ``g``'s match and start its first game (dealing it when ``deal``)."""
    for p in range(R.ip[IP_PLAYERS]):
        S.match_scores[g, p] = 0.0
        S.payoffs[g, p] = 0.0
    S.games_played[g] = 0
    S.winner[g] = -1
    S.game_over[g] = False
    S.match_over[g] = False
    if deal:
        deal_game(g, R, S, -1)
    else:
        start_game(g, R, S, -1)


@njit
def reset_all(R, S, deal):
    for g in range(S.seeds.shape[0]):
        new_match(g, R, S, deal)


# ---------------------------------------------------------------- legal plays


@njit
def _emit(mask, lo, hi, need, skip_sf, kinds, hash_keys, hash_ids, bits, out, k):
    if need and not (mask & need):
        return k
    a = lookup(mask, hash_keys, hash_ids, bits)
    if a >= lo and a < hi and not (skip_sf and kinds[a] == K_SF):
        out[k] = a
        return k + 1
    return k


@njit(inline="always")
def _emit_rank(hand, r, sub, lo, hi, need, rank_ids, out, k):
    """``_emit`` for the play of suits ``sub`` of rank ``r`` (a single, pair or triple), its id
    read from ``Rules.rank_ids`` instead of the hash table (an L1-sized table: no hashing, no
    probe; the legal lists 1.2-1.3x faster: 530-574 vs 410-459 ns a game, taiwan, batch 1,024,
    one thread, random play)."""
    if sub & ~suits_of(hand, r):
        return k
    if need and not ((np.uint64(sub) << np.uint64(4 * r)) & need):
        return k
    a = rank_ids[16 * r + sub]
    if a >= lo and a < hi:
        out[k] = a
        return k + 1
    return k


@njit
def enumerate_plays(
    hand, size, lo, hi, need, min_kind, windows, pair_chain, kinds, hash_keys, hash_ids, bits, rank_ids, out, k
):
    """Append to ``out`` every play in ``hand`` of ``size`` (0 = all sizes) with id in [lo, hi)
    that holds the cards of ``need`` (0 = none) and is of kind >= ``min_kind`` (five-card class
    pruning). Returns the new length."""
    if size == 0 or size == 1:
        for c in range(52):
            if hand & bit(c):
                k = _emit_rank(hand, c >> 2, 1 << (c & 3), lo, hi, need, rank_ids, out, k)
    for n_of_a_kind in (2, 3):  # pairs and triples: every 2- or 3-suit subset of a rank held
        if size != 0 and size != n_of_a_kind:
            continue
        for r in range(13):
            if count4(suits_of(hand, r)) < n_of_a_kind:
                continue
            for sub in range(16):
                if count4(sub) == n_of_a_kind:
                    k = _emit_rank(hand, r, sub, lo, hi, need, rank_ids, out, k)
    if size == 0 or size == 5:
        k = _enumerate_five(hand, lo, hi, need, min_kind, windows, kinds, hash_keys, hash_ids, bits, out, k)
    if (size == 0 or size == 6) and pair_chain:
        for start in range(10):
            if (
                count4(suits_of(hand, start)) >= 2
                and count4(suits_of(hand, start + 1)) >= 2
                and count4(suits_of(hand, start + 2)) >= 2
            ):
                for p0 in range(16):
                    if count4(p0) != 2 or (p0 & ~suits_of(hand, start)):
                        continue
                    for p1 in range(16):
                        if count4(p1) != 2 or (p1 & ~suits_of(hand, start + 1)):
                            continue
                        for p2 in range(16):
                            if count4(p2) != 2 or (p2 & ~suits_of(hand, start + 2)):
                                continue
                            mask = (
                                (np.uint64(p0) << np.uint64(4 * start))
                                | (np.uint64(p1) << np.uint64(4 * start + 4))
                                | (np.uint64(p2) << np.uint64(4 * start + 8))
                            )
                            k = _emit(mask, lo, hi, need, False, kinds, hash_keys, hash_ids, bits, out, k)
    return k


@njit(inline="always")
def suits_of(hand, r):
    """The suits held of rank ``r``: 4 bits (no array: a heap array per call costs more than reading them)."""
    return np.int64((hand >> np.uint64(4 * r)) & np.uint64(15))


@njit(inline="always")
def count4(m):
    return (m & 1) + (m >> 1 & 1) + (m >> 2 & 1) + (m >> 3 & 1)


@njit
def _enumerate_five(hand, lo, hi, need, min_kind, windows, kinds, hash_keys, hash_ids, bits, out, k):
    if min_kind <= K_SF:
        # straights and straight flushes: every suit choice on each window present
        for w in range(windows.shape[0]):
            r0, r1, r2, r3, r4 = windows[w, 0], windows[w, 1], windows[w, 2], windows[w, 3], windows[w, 4]
            if (
                suits_of(hand, r0) == 0
                or suits_of(hand, r1) == 0
                or suits_of(hand, r2) == 0
                or suits_of(hand, r3) == 0
                or suits_of(hand, r4) == 0
            ):
                continue
            for s0 in range(4):
                if not (suits_of(hand, r0) >> s0 & 1):
                    continue
                m0 = bit(4 * r0 + s0)
                for s1 in range(4):
                    if not (suits_of(hand, r1) >> s1 & 1):
                        continue
                    m1 = m0 | bit(4 * r1 + s1)
                    for s2 in range(4):
                        if not (suits_of(hand, r2) >> s2 & 1):
                            continue
                        m2 = m1 | bit(4 * r2 + s2)
                        for s3 in range(4):
                            if not (suits_of(hand, r3) >> s3 & 1):
                                continue
                            m3 = m2 | bit(4 * r3 + s3)
                            for s4 in range(4):
                                if suits_of(hand, r4) >> s4 & 1:
                                    k = _emit(
                                        m3 | bit(4 * r4 + s4),
                                        lo,
                                        hi,
                                        need,
                                        False,
                                        kinds,
                                        hash_keys,
                                        hash_ids,
                                        bits,
                                        out,
                                        k,
                                    )
    if min_kind <= K_FLUSH:
        ranks = np.empty(0, dtype=np.int64)  # made (13 long) only once a suit has 5 cards
        for s in range(4):
            if popcount(hand & (np.uint64(0x1111111111111) << np.uint64(s))) < 5:
                continue
            if ranks.shape[0] == 0:
                ranks = np.empty(13, dtype=np.int64)
            n = 0
            for r in range(13):
                if suits_of(hand, r) >> s & 1:
                    ranks[n] = r
                    n += 1
            if n < 5:
                continue
            for i0 in range(n):
                m0 = bit(4 * ranks[i0] + s)
                for i1 in range(i0 + 1, n):
                    m1 = m0 | bit(4 * ranks[i1] + s)
                    for i2 in range(i1 + 1, n):
                        m2 = m1 | bit(4 * ranks[i2] + s)
                        for i3 in range(i2 + 1, n):
                            m3 = m2 | bit(4 * ranks[i3] + s)
                            for i4 in range(i3 + 1, n):
                                k = _emit(
                                    m3 | bit(4 * ranks[i4] + s),
                                    lo,
                                    hi,
                                    need,
                                    True,
                                    kinds,
                                    hash_keys,
                                    hash_ids,
                                    bits,
                                    out,
                                    k,
                                )
    if min_kind <= K_FULL:
        for r3 in range(13):
            m = suits_of(hand, r3)
            if count4(m) < 3:
                continue
            for drop in range(4):  # the suit left out of the triple
                t = m & ~(1 << drop)
                if count4(t) != 3:
                    continue
                tmask = np.uint64(t) << np.uint64(4 * r3)
                for r2 in range(13):
                    if r2 == r3:
                        continue
                    m2 = suits_of(hand, r2)
                    for s1 in range(4):
                        if m2 >> s1 & 1:
                            for s2 in range(s1 + 1, 4):
                                if m2 >> s2 & 1:
                                    k = _emit(
                                        tmask | bit(4 * r2 + s1) | bit(4 * r2 + s2),
                                        lo,
                                        hi,
                                        need,
                                        False,
                                        kinds,
                                        hash_keys,
                                        hash_ids,
                                        bits,
                                        out,
                                        k,
                                    )
    if min_kind <= K_FOUR:
        for r in range(13):
            if suits_of(hand, r) != 15:
                continue
            qmask = np.uint64(15) << np.uint64(4 * r)
            for c in range(52):
                if c // 4 != r and hand & bit(c):
                    k = _emit(qmask | bit(c), lo, hi, need, False, kinds, hash_keys, hash_ids, bits, out, k)
    return k


@njit
def _sort_prefix(out, n):
    # insertion sort: lists are short and mostly in order already
    for i in range(1, n):
        v = out[i]
        j = i - 1
        while j >= 0 and out[j] > v:
            out[j + 1] = out[j]
            j -= 1
        out[j + 1] = v


@njit
def legal_one(g, R, S):
    """Legal action ids of game ``g``'s seat to act, sorted, into ``S.legal[g]`` (and the count into
    ``S.legal_n[g]``); returns the count. Also sets that seat's last-card duty (applied to the list
    under ``enforce``)."""
    legal_range(g, g + 1, R, S)
    return S.legal_n[g]


# The batch kernels keep the loop over games around the per-game work, written out in one place
# (``legal_range``, ``step_range``): a per-game body inlined with the ``Rules``/``State`` tuples paid a
# reference count on each of their ~56 arrays a game (measured: a legal list 645 ns a game inlined,
# 238 ns written in the loop); a single game is a range of one, behind one plain call.


@njit(nogil=True)
def legal_range(lo, hi, R, S):
    """``legal_one``'s work for games ``lo .. hi - 1``: each game's legal list into ``S.legal[g]``,
    its count into ``S.legal_n[g]``, its last-card duty into ``S.duty[g]``/``S.duty_card[g]``."""
    for g in range(lo, hi):
        S.duty[g] = DUTY_NONE
        S.duty_card[g] = -1
        if S.over[g]:
            S.legal_n[g] = 0
            continue
        out = S.legal[g]
        players = R.ip[IP_PLAYERS]
        s = S.current[g]
        hand = S.hands[g, s]
        t = S.table_action[g]
        need = U0
        if S.opening[g] >= 0:
            need = bit(S.opening[g])
        if t == 0:  # a lead: every play of the hand, from id 1 up
            size, first, last, min_kind, n = 0, 1, R.sizes.shape[0], 0, 0
            wanted = True
        else:  # an answer: pass, then the plays of the table's size that beat it
            out[0] = 0
            size, first, last, n = R.sizes[t], R.beat_start[t], R.group_end[t], 1
            wanted = first < last and S.counts[g, s] >= size
            min_kind = R.kinds[first] if wanted else 0
        if wanted:
            n = enumerate_plays(
                hand,
                size,
                first,
                last,
                need,
                min_kind,
                R.windows,
                R.ip[IP_PAIR_CHAIN],
                R.kinds,
                R.hash_keys,
                R.hash_ids,
                R.bits,
                R.rank_ids,
                out,
                n,
            )
        _sort_prefix(out, n)
        rule = R.ip[IP_LAST_CARD]
        if rule == LAST_CARD_OFF or S.counts[g, seat_after(s, 1, players, S.reverse[g])] != 1:
            S.legal_n[g] = n
            continue
        top = highest_card(hand, R.suit_rank)
        top_id = lookup(bit(top), R.hash_keys, R.hash_ids, R.bits)
        has_top = False
        for i in range(n):
            if out[i] == top_id:
                has_top = True
        if t == 0:
            first_multi = n
            for i in range(n):
                if R.sizes[out[i]] >= 2:
                    first_multi = i
                    break
            if first_multi < n:
                S.duty[g] = DUTY_LEAD_MULTI
                if rule == LAST_CARD_ENFORCE:
                    for i in range(n - first_multi):
                        out[i] = out[first_multi + i]
                    n = n - first_multi
            elif has_top:
                S.duty[g] = DUTY_LEAD_HIGHEST
                S.duty_card[g] = top
                if rule == LAST_CARD_ENFORCE:
                    out[0] = top_id
                    n = 1
        elif R.sizes[t] == 1:
            S.duty[g] = DUTY_ANSWER_HIGHEST
            S.duty_card[g] = top
            if rule == LAST_CARD_ENFORCE:
                out[0] = 0
                n = 1
                if has_top:
                    out[1] = top_id
                    n = 2
        S.legal_n[g] = n


@njit(nogil=True)
def legal_all(R, S):
    legal_range(0, S.seeds.shape[0], R, S)


# ---------------------------------------------------------------- scoring


@njit
def settle(left, twos, winner, liable, reverse, ip, fp, tiers, bankroll, out):
    """Payoffs of a finished game into ``out`` (per seat, higher is better); see RULES.md.

    ``left``/``twos``: cards and 2s left per seat; ``liable``: the seat liable under the last-card
    rule, or -1; ``reverse``: the game's direction (the settlement order follows it); ``tiers``:
    ``collect``'s brackets; ``bankroll``: each seat's money at the table when ``buy_in`` is set."""
    players = ip[IP_PLAYERS]
    scoring = ip[IP_SCORING]
    unit = fp[FP_UNIT]
    buy_in = fp[FP_BUY_IN]
    counted = np.empty(players, dtype=np.float64)
    for s in range(players):
        counted[s] = left[s] + (ip[IP_TWOS_MULT] - 1) * twos[s]
    if scoring == SCORING_CARDS:
        total = 0.0
        for s in range(players):
            out[s] = -counted[s] * unit
            total += counted[s]
        if liable >= 0:
            for s in range(players):
                out[s] = 0.0
            out[liable] = -total * unit
        if buy_in > 0:
            for s in range(players):
                out[s] = max(out[s], -max(bankroll[s], 0.0))
    else:
        pay = np.zeros((players, players), dtype=np.float64)  # pay[i, j]: what i owes j
        for i in range(players):
            if i == winner:
                continue
            if scoring == SCORING_TIERED:
                n = counted[i]
                pay[i, winner] = (n if n <= 9 else (2 * n if n <= 12 else 3 * n)) * unit
            elif scoring == SCORING_PAIRWISE:
                for j in range(players):
                    if counted[i] > counted[j]:
                        pay[i, j] = (counted[i] - counted[j]) * unit
            elif scoring == SCORING_WIN_LOSS:
                pay[i, winner] = unit / (players - 1)
            else:  # SCORING_COLLECT: n, times the multiplier of the highest tier reached
                n = counted[i]
                multiplier = 1.0
                for t in range(tiers.shape[0]):
                    if n >= tiers[t, 0]:
                        multiplier = tiers[t, 1]
                pay[i, winner] = n * multiplier * unit
        if liable >= 0:
            base = np.zeros(players, dtype=np.float64)
            for i in range(players):
                for j in range(players):
                    base[j] += pay[i, j]
                    base[i] -= pay[i, j]
            pay[:, :] = 0.0
            for j in range(players):
                if j != liable and base[j] > 0:
                    pay[liable, j] = base[j]
        for s in range(players):
            out[s] = 0.0
        money = np.empty(players, dtype=np.float64)
        for s in range(players):
            money[s] = max(bankroll[s], 0.0) if buy_in > 0 else np.inf
        # settle pair by pair in play order from the winner, capped by the payer's money
        for a in range(players):
            i = seat_after(winner, a, players, reverse)
            for b in range(a + 1, players):
                j = seat_after(winner, b, players, reverse)
                net = pay[i, j] - pay[j, i]
                payer, payee = (i, j) if net > 0 else (j, i)
                amount = min(abs(net), money[payer])
                money[payer] -= amount
                money[payee] += amount
                out[payer] -= amount
                out[payee] += amount
    for s in range(players):
        out[s] = (out[s] - fp[FP_RAKE]) + 0.0  # + 0.0: no -0.0 for the winner


# ---------------------------------------------------------------- stepping


@njit
def step_one(g, a, R, S, autoreset):
    """Apply legal action ``a`` (< 0: sit out) in game ``g``: pass, play, clear the trick, end the
    game and score it, then deal the next game of the match, or end the match."""
    acts = np.empty(1, dtype=np.int64)
    acts[0] = a
    step_range(g, g + 1, acts, R, S, autoreset)


@njit(nogil=True)
def step_range(lo, hi, actions, R, S, autoreset):
    """``step_one``'s work for games ``lo .. hi - 1``, game ``g`` playing ``actions[g - lo]``."""
    for g in range(lo, hi):
        a = actions[g - lo]
        players = R.ip[IP_PLAYERS]
        S.game_over[g] = False
        S.match_over[g] = False
        if a < 0:
            continue
        for p in range(players):
            S.payoffs[g, p] = 0.0
        s = S.current[g]
        after = seat_after(s, 1, players, S.reverse[g])
        for i in range(HISTORY - 1, 0, -1):
            S.hist_action[g, i] = S.hist_action[g, i - 1]
            S.hist_seat[g, i] = S.hist_seat[g, i - 1]
        S.hist_action[g, 0] = a
        S.hist_seat[g, 0] = s
        if a == 0:
            t = S.table_action[g]
            j = size_slot(R.sizes[t])
            if S.passed_on[g, s, j] == 0 or t < S.passed_on[g, s, j]:  # ids rise with strength within a size
                S.passed_on[g, s, j] = t
            S.passes[g] += 1
            if S.passes[g] >= players - 1:  # everyone else passed: the last player to play leads
                S.current[g] = S.table_seat[g]
                S.table_action[g] = 0
                S.table_seat[g] = -1
                S.passes[g] = 0
            else:
                S.current[g] = after
            continue
        d = S.duty[g]
        if d != DUTY_NONE and R.ip[IP_LAST_CARD] == LAST_CARD_LIABILITY:
            top_single = R.sizes[a] == 1 and R.masks[a] == bit(S.duty_card[g])
            if (
                (d == DUTY_LEAD_MULTI and R.sizes[a] < 2)
                or (d == DUTY_LEAD_HIGHEST and not top_single)
                or (d == DUTY_ANSWER_HIGHEST and R.sizes[a] == 1 and not top_single)
            ):
                S.breach[g, after] = True
        m = R.masks[a]
        S.hands[g, s] &= ~m
        S.played[g, s] |= m
        S.counts[g, s] -= R.sizes[a]
        S.table_action[g] = a
        S.table_seat[g] = s
        S.passes[g] = 0
        S.opening[g] = -1
        if S.counts[g, s] == 0:
            finish_game(g, s, R, S, autoreset)
            continue
        two_ends = R.ip[IP_TWO_ENDS] and (R.kinds[a] == K_SINGLE or R.kinds[a] == K_TRIPLE)
        two_ends = two_ends and (m & (np.uint64(15) << np.uint64(4 * TWO_RANK))) == m
        if two_ends:  # a single 2 or three 2s: the others pass at once, its player leads
            S.table_action[g] = 0
            S.table_seat[g] = -1
        else:
            S.current[g] = after


@njit
def finish_game(g, s, R, S, autoreset):
    """Seat ``s`` went out: score the game, then deal the next one or end the match."""
    players = R.ip[IP_PLAYERS]
    left = np.empty(players, dtype=np.int64)
    twos = np.empty(players, dtype=np.int64)
    bankroll = np.empty(players, dtype=np.float64)
    two_mask = np.uint64(15) << np.uint64(4 * TWO_RANK)
    for p in range(players):
        left[p] = S.counts[g, p]
        twos[p] = popcount(S.hands[g, p] & two_mask)
        bankroll[p] = R.fp[FP_BUY_IN] + S.match_scores[g, p]
    before = seat_after(s, players - 1, players, S.reverse[g])
    liable = before if (R.ip[IP_LAST_CARD] == LAST_CARD_LIABILITY and S.breach[g, s]) else -1
    settle(left, twos, s, liable, S.reverse[g], R.ip, R.fp, R.tiers, bankroll, S.payoffs[g])
    S.winner[g] = s
    S.game_over[g] = True
    S.games_played[g] += 1
    done = S.games_played[g] >= R.ip[IP_GAMES]
    target = R.fp[FP_TARGET]
    for p in range(players):
        S.match_scores[g, p] += S.payoffs[g, p]
        score = S.match_scores[g, p]
        if target > 0 and (score >= target or (R.ip[IP_SCORING] == SCORING_CARDS and -score >= target)):
            done = True
    if not done:
        deal_game(g, R, S, -1 if R.ip[IP_OPEN_EVERY] else s)
        return
    S.match_over[g] = True
    if autoreset:
        for p in range(players):
            S.match_scores[g, p] = 0.0
        S.games_played[g] = 0
        deal_game(g, R, S, -1)
    else:
        S.over[g] = True
        S.table_action[g] = 0
        S.table_seat[g] = -1
        S.current[g] = -1


@njit(nogil=True)
def step_all(actions, R, S, autoreset):
    step_range(0, actions.shape[0], actions, R, S, autoreset)


@njit(nogil=True)
def step_legal_all(actions, R, S, autoreset):
    """``step_all`` then ``legal_all`` (the same result as two calls)."""
    step_range(0, actions.shape[0], actions, R, S, autoreset)
    legal_range(0, actions.shape[0], R, S)


@njit
def check_actions(actions, over, legal, legal_n):
    """Index of the first game whose action is not legal there (or that is over), or -1.
    Given the three arrays it reads (``S.over``, ``S.legal``, ``S.legal_n``), not the state tuple:
    unboxing the tuple's arrays would cost more than checking one game."""
    for g in range(actions.shape[0]):
        a = actions[g]
        if a == -1:
            continue
        if a < -1 or over[g]:
            return g
        lo, hi = 0, legal_n[g]
        found = False
        while lo < hi:  # legal lists are sorted
            mid = (lo + hi) // 2
            v = legal[g, mid]
            if v == a:
                found = True
                break
            if v < a:
                lo = mid + 1
            else:
                hi = mid
        if not found:
            return g
    return -1
