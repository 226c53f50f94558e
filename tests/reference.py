"""Slow, plain-Python reference implementation of Big Two, for tests only.

This module is an independent reading of the repository's ``RULES.md`` (the project's rules
authority). It exists so that differential tests can compare the fast engine against a
second, deliberately naive implementation: plays are found by brute force over subsets of
the hand, classified one by one, and a game is a plain object stepped one play at a time.
It must never import the engine's own rules code (``bigtwo.env.rules.combos``,
``bigtwo.env.rules.actions``); only card ids (``bigtwo.env.rules.cards``) and the ``Variant`` settings
(``bigtwo.env.rules.variant``) are shared.

Conventions (RULES.md and the project's reading of it):

* A card id is ``rank * 4 + suit``; rank 0..12 is 3..2, suit 0..3 is D, C, H, S (physical).
  ``variant.suit_rank[suit]`` is the suit's strength.
* Play order is seat + 1 (mod players), or seat - 1 in a reversed game (``RefGame(reverse=True)``;
  ``RefMatch`` reverses a game by ``turn_order``); ``seating`` is display only.
* ``frozenset()`` stands for a pass.
* Payoffs are per seat, higher is better (under ``cards`` scoring a loser scores ``-n``).

Public interface: ``ref_classify``, ``ref_beats``, ``ref_all_plays``, ``RefGame``,
``RefMatch`` and the helpers ``play_out``, ``random_policy`` and ``deal``. Everything here is
slow on purpose (a 26-card hand takes a fraction of a second per lead); keep it out of
anything but tests.
"""

from __future__ import annotations

import functools
import itertools
import random
from collections import Counter
from collections.abc import Callable, Iterable, Sequence

from bigtwo.env.rules.variant import Variant

PASS: frozenset[int] = frozenset()

# Five-card classes, lowest first (RULES.md "Plays").
FIVE_CARD_CLASSES: tuple[str, ...] = ("straight", "flush", "full_house", "four_of_a_kind", "straight_flush")
TWO_RANK = 12  # rank index of the 2
ACE_RANK = 11  # rank index of the ace


def _rank(card: int) -> int:
    return card // 4


def _suit(card: int) -> int:
    return card % 4


def single_value(card: int, variant: Variant) -> tuple[int, int]:
    """A single card's value: rank first, then the suit's strength in this variant."""
    return (_rank(card), variant.suit_rank[_suit(card)])


def highest_card(cards: Iterable[int], variant: Variant) -> int:
    """The strongest card by single value."""
    return max(cards, key=lambda c: single_value(c, variant))


def lowest_card(cards: Iterable[int], variant: Variant) -> int:
    """The weakest card by single value."""
    return min(cards, key=lambda c: single_value(c, variant))


# --------------------------------------------------------------------------------------
# Classification and comparison
# --------------------------------------------------------------------------------------


def _straight_window(ranks: list[int], variant: Variant) -> tuple[int, int] | None:
    """(index in ``variant.straights``, top rank) of the window these five ranks form."""
    rank_set = set(ranks)
    if len(rank_set) != 5:
        return None
    found = None
    for index, (window_ranks, top) in enumerate(variant.straights):
        if set(window_ranks) == rank_set:
            found = (index, top)  # windows are distinct; keep the last (highest) match anyway
    return found


def ref_classify(cards: frozenset[int], variant: Variant) -> tuple[str, tuple] | None:
    """``(kind, key)`` of a play, or ``None`` if these cards are not a play.

    Keys compare with ``>`` between plays of the same number of cards: five-card keys start
    with the class index (straight 0 .. straight flush 4), so any higher class wins.
    """
    cards = frozenset(cards)
    n = len(cards)
    if n == 0:
        return None
    sr = variant.suit_rank
    ranks = sorted((_rank(c) for c in cards), reverse=True)
    suits = {_suit(c) for c in cards}
    counts = Counter(ranks)

    if n == 1:
        (card,) = cards
        return ("single", single_value(card, variant))

    if n in (2, 3):
        if len(counts) != 1:
            return None
        kind = "pair" if n == 2 else "triple"
        return (kind, (ranks[0], max(sr[_suit(c)] for c in cards)))

    if n == 5:
        window = _straight_window(ranks, variant)
        is_flush = len(suits) == 1
        if window is not None:
            index, top_rank = window
            (top_card,) = [c for c in cards if _rank(c) == top_rank]
            top_suit = sr[_suit(top_card)]
            if is_flush:
                return ("straight_flush", (4, index, top_suit))
            return ("straight", (0, index, top_suit))
        if is_flush:
            if variant.jqka2_suited == "no_play" and set(ranks) == {8, 9, 10, 11, 12}:
                return None  # TW: J-Q-K-A-2 (no straight here) is never a legal hand, even in one suit
            (suit,) = suits
            if variant.flush_order == "suit_first":
                return ("flush", (1, sr[suit], tuple(ranks)))
            if variant.flush_order == "rank_first":
                return ("flush", (1, tuple(ranks), sr[suit]))
            raise ValueError(f"unknown flush_order {variant.flush_order!r}")
        shape = sorted(counts.values())
        if shape == [2, 3]:
            (triple_rank,) = [r for r, k in counts.items() if k == 3]
            return ("full_house", (2, triple_rank))
        if shape == [1, 4]:
            (quad_rank,) = [r for r, k in counts.items() if k == 4]
            return ("four_of_a_kind", (3, quad_rank))
        return None

    if n == 6 and variant.pair_chain:
        if sorted(counts.values()) != [2, 2, 2]:
            return None
        low, mid, top = sorted(counts)
        if not (mid == low + 1 and top == mid + 1 and top <= ACE_RANK):
            return None
        top_pair_suit = max(sr[_suit(c)] for c in cards if _rank(c) == top)
        return ("pair_chain", (top, top_pair_suit))

    return None


def ref_beats(play: frozenset[int], table: frozenset[int], variant: Variant) -> bool:
    """Whether ``play`` beats ``table``: same number of cards and a higher play."""
    if len(play) != len(table):
        return False
    mine = ref_classify(play, variant)
    theirs = ref_classify(table, variant)
    if mine is None or theirs is None:
        return False
    if len(play) != 5 and mine[0] != theirs[0]:
        return False  # cannot happen for sizes 1,2,3,6, kept as a guard
    return mine[1] > theirs[1]


def _play_sizes(variant: Variant) -> tuple[int, ...]:
    return (1, 2, 3, 5, 6) if variant.pair_chain else (1, 2, 3, 5)


@functools.lru_cache(maxsize=4096)
def _plays_of_size(hand: frozenset[int], size: int, variant: Variant) -> frozenset[frozenset[int]]:
    out = set()
    pool = sorted(hand)
    if size == 6:  # prefilter only: a pair chain uses ranks 3..A held at least twice
        per_rank = Counter(_rank(c) for c in pool)
        pool = [c for c in pool if _rank(c) <= ACE_RANK and per_rank[_rank(c)] >= 2]
    for combo in itertools.combinations(pool, size):
        play = frozenset(combo)
        if ref_classify(play, variant) is not None:
            out.add(play)
    return frozenset(out)


def ref_all_plays(hand: frozenset[int], variant: Variant) -> set[frozenset[int]]:
    """Every play made of cards in ``hand`` (brute force over subsets; slow)."""
    hand = frozenset(hand)
    out: set[frozenset[int]] = set()
    for size in _play_sizes(variant):
        if size <= len(hand):
            out |= _plays_of_size(hand, size, variant)
    return out


def _is_ending_two(play: frozenset[int]) -> bool:
    """A single 2 or a triple of 2s (``two_ends_trick``)."""
    return len(play) in (1, 3) and all(_rank(c) == TWO_RANK for c in play)


# --------------------------------------------------------------------------------------
# One game
# --------------------------------------------------------------------------------------


class RefGame:
    """One game of Big Two, stepped play by play.

    ``hands`` are the dealt card ids per seat. With ``leader`` and ``opening_card`` both
    ``None`` the RULES.md opening applies: the holder of ``variant.opening_card`` (or of the
    lowest card dealt, for ``lowest`` or when the named card was not dealt) leads and the
    first play must contain that card. With ``leader`` given, that seat leads freely (unless
    ``opening_card`` is also given, which the first play must then contain). With only
    ``opening_card`` given, its holder leads and must play it. ``reverse``: the game plays
    towards lower seat numbers (seat - 1 acts next).
    """

    def __init__(
        self,
        variant: Variant,
        hands: Sequence[Iterable[int]],
        leader: int | None = None,
        opening_card: int | None = None,
        reverse: bool = False,
    ) -> None:
        self.variant = variant
        self.players = variant.players
        self.reverse = reverse
        self.step_of_play = -1 if reverse else 1  # seat number change from one player to the next
        self.hands: list[set[int]] = [{int(c) for c in h} for h in hands]
        if len(self.hands) != self.players:
            raise ValueError(f"{len(self.hands)} hands for {self.players} players")
        dealt = [c for h in self.hands for c in h]
        if len(dealt) != len(set(dealt)):
            raise ValueError("a card is dealt twice")
        if not dealt:
            raise ValueError("no cards dealt")

        if leader is None and opening_card is None:
            named = variant.opening_card_id  # -1 = lowest
            opening_card = named if named in dealt else lowest_card(dealt, variant)
        if opening_card is not None:
            holders = [s for s, h in enumerate(self.hands) if opening_card in h]
            if not holders:
                raise ValueError(f"opening card {opening_card} was not dealt")
            if leader is None:
                leader = holders[0]
            elif holders[0] != leader:
                raise ValueError("the leader does not hold the opening card")
        assert leader is not None
        self.leader: int = leader
        self.opening_card: int | None = opening_card  # card the next play must contain
        self.current: int = leader
        self.table: frozenset[int] | None = None
        self.table_seat: int = leader
        self.passes: int = 0
        self.over: bool = False
        self.winner: int | None = None
        self.breaches: set[tuple[int, int]] = set()  # (breaching seat, one-card seat)
        self.history: list[tuple[int, frozenset[int]]] = []

    # ---- legality -------------------------------------------------------------------

    def next_seat(self, seat: int | None = None) -> int:
        return ((self.current if seat is None else seat) + self.step_of_play) % self.players

    def _unrestricted(self) -> set[frozenset[int]]:
        """Legal plays before the last-card rule (pass included where allowed)."""
        hand = frozenset(self.hands[self.current])
        variant = self.variant
        if self.table is None:
            plays = ref_all_plays(hand, variant)
            if self.opening_card is not None:
                plays = {p for p in plays if self.opening_card in p}
            return plays  # a leader cannot pass
        out: set[frozenset[int]] = {PASS}
        size = len(self.table)
        if len(hand) < size:
            return out  # fewer cards than the table's play: can only pass
        if size not in _play_sizes(variant):
            return out
        out |= {p for p in _plays_of_size(hand, size, variant) if ref_beats(p, self.table, variant)}
        return out

    def _last_card_filter(self, plays: set[frozenset[int]]) -> set[frozenset[int]]:
        """The plays the last-card rule allows, as under ``enforce`` (no check of the setting)."""
        if len(self.hands[self.next_seat()]) != 1:
            return plays
        hand = self.hands[self.current]
        top = frozenset({highest_card(hand, self.variant)})
        if self.table is None:
            multi = {p for p in plays if len(p) >= 2}
            filtered = multi if multi else {p for p in plays if p == top}
        elif len(self.table) == 1:
            filtered = {p for p in plays if len(p) != 1 or p == top}
        else:
            filtered = plays
        return filtered if filtered else plays

    def legal(self) -> set[frozenset[int]]:
        """Legal plays for the current seat; ``frozenset()`` is a pass."""
        if self.over:
            return set()
        plays = self._unrestricted()
        if self.variant.last_card_rule == "enforce":
            plays = self._last_card_filter(plays)
        return plays

    # ---- stepping -------------------------------------------------------------------

    def play(self, cards: Iterable[int]) -> None:
        """Play ``cards`` (empty = pass) for the current seat and advance the game."""
        assert not self.over, "the game is over"
        cards = frozenset(int(c) for c in cards)
        unrestricted = self._unrestricted()
        legal = self._last_card_filter(unrestricted) if self.variant.last_card_rule == "enforce" else unrestricted
        assert cards in legal, f"illegal play {sorted(cards)} by seat {self.current}"
        seat = self.current
        self.history.append((seat, cards))

        if not cards:
            self.passes += 1
            self.current = self.next_seat()
            if self.passes >= self.players - 1:  # every other player passed in a row
                self.table = None
                self.passes = 0
                self.current = self.table_seat
            return

        if self.variant.last_card_rule == "liability" and cards not in self._last_card_filter(unrestricted):
            self.breaches.add((seat, self.next_seat()))

        self.hands[seat] -= cards
        self.table = cards
        self.table_seat = seat
        self.passes = 0
        self.opening_card = None
        if not self.hands[seat]:
            self.over = True
            self.winner = seat
            return
        if self.variant.two_ends_trick and _is_ending_two(cards):
            self.table = None  # the others pass automatically; its player leads
            return
        self.current = self.next_seat()

    # ---- scoring --------------------------------------------------------------------

    def counted_cards(self) -> list[int]:
        """n' per seat: cards left, each 2 counting ``penalty_multiplier_for_twos`` cards."""
        extra = self.variant.penalty_multiplier_for_twos - 1
        return [len(h) + extra * sum(1 for c in h if _rank(c) == TWO_RANK) for h in self.hands]

    def liable_seat(self) -> int | None:
        """The seat liable under ``last_card_rule: liability``, if any."""
        if self.variant.last_card_rule != "liability" or self.winner is None:
            return None
        for breacher, victim in sorted(self.breaches):
            if victim == self.winner:
                return breacher
        return None

    def _settlement_order(self) -> list[int]:
        """The winner, then the others in this game's play order."""
        assert self.winner is not None
        order = [self.winner]
        while len(order) < self.players:
            order.append(self.next_seat(order[-1]))
        return order

    def payoffs(self, bankroll: Sequence[float] | None = None) -> list[float]:
        """Per-seat payoffs of the finished game (RULES.md "End of a game and scoring").

        ``bankroll``: each player's money at the start of the game, used only with table
        stakes (``buy_in > 0``); default ``buy_in`` each.
        """
        assert self.over and self.winner is not None, "the game is not over"
        v = self.variant
        p = self.players
        w = self.winner
        unit = v.unit
        n = self.counted_cards()
        liable = self.liable_seat()

        # transfers: (payer, receiver, amount) in settlement order, for transfer scorings
        transfers: list[tuple[int, int, float]] = []
        order = self._settlement_order()
        pairs = [(order[a], order[b]) for a in range(p) for b in range(a + 1, p)]

        if v.scoring == "cards":
            if liable is not None:
                base = [0.0] * p
                base[liable] = -sum(n) * unit
            else:
                base = [0.0 if s == w else -n[s] * unit for s in range(p)]
            if v.buy_in > 0:
                money = _stakes(bankroll, v.buy_in, p)
                base = [max(base[s], -money[s]) for s in range(p)]
            return [base[s] - v.rake for s in range(p)]

        if v.scoring == "tiered":

            def pay(k: int) -> float:
                if k <= 0:
                    return 0.0
                if k <= 9:
                    return float(k)
                if k <= 12:
                    return 2.0 * k
                return 3.0 * k

            base = [0.0] * p
            for s in range(p):
                if s != w:
                    base[s] = -pay(n[s]) * unit
                    base[w] += pay(n[s]) * unit
            for i, j in pairs:
                if i == w and j != w:
                    transfers.append((j, w, pay(n[j]) * unit))
        elif v.scoring == "pairwise":
            base = [sum((n[j] - n[i]) * unit for j in range(p)) for i in range(p)]
            for i, j in pairs:
                diff = (n[j] - n[i]) * unit
                if diff > 0:
                    transfers.append((j, i, diff))
                elif diff < 0:
                    transfers.append((i, j, -diff))
        elif v.scoring == "collect":

            def owed(k: int) -> float:
                multiplier = 1.0
                for from_cards, m in v.tiers:  # rising: the last bracket reached counts
                    if k >= from_cards:
                        multiplier = m
                return k * multiplier * unit

            base = [0.0] * p
            for s in range(p):
                if s != w:
                    base[s] = -owed(n[s])
                    base[w] += owed(n[s])
            for i, j in pairs:
                if i == w and j != w:
                    transfers.append((j, w, owed(n[j])))
        elif v.scoring == "win_loss":
            base = [unit if s == w else -unit / (p - 1) for s in range(p)]
            for i, j in pairs:
                if i == w and j != w:
                    transfers.append((j, w, unit / (p - 1)))
        else:
            raise ValueError(f"unknown scoring {v.scoring!r}")

        if liable is not None:
            gains = [0.0 if s == liable else max(base[s], 0.0) for s in range(p)]
            base = list(gains)
            base[liable] = -sum(gains)
            transfers = []
            for i, j in pairs:
                if i == liable and gains[j] > 0:
                    transfers.append((liable, j, gains[j]))
                elif j == liable and gains[i] > 0:
                    transfers.append((liable, i, gains[i]))

        if v.buy_in > 0:
            start = _stakes(bankroll, v.buy_in, p)
            money = list(start)
            for payer, receiver, amount in transfers:
                paid = min(amount, money[payer])
                money[payer] -= paid
                money[receiver] += paid
            base = [money[s] - start[s] for s in range(p)]

        return [base[s] - v.rake for s in range(p)]


def _stakes(bankroll: Sequence[float] | None, buy_in: float, players: int) -> list[float]:
    """Money each seat has at stake this game. A bankroll can end below 0 (the rake is
    charged after the table-stakes cap); such a seat has nothing at stake, not a debt that
    the game's winnings must first pay off."""
    money = list(bankroll) if bankroll is not None else [buy_in] * players
    return [max(m, 0.0) for m in money]


# --------------------------------------------------------------------------------------
# Playing games and matches
# --------------------------------------------------------------------------------------

Policy = Callable[[RefGame], frozenset[int]]


def random_policy(rng: random.Random) -> Policy:
    """A policy choosing uniformly among the legal plays (sorted, so seeds reproduce)."""

    def choose(game: RefGame) -> frozenset[int]:
        options = sorted(game.legal(), key=lambda p: (len(p), sorted(p)))
        return rng.choice(options)

    return choose


def play_out(game: RefGame, policy: Policy, max_steps: int = 10_000) -> RefGame:
    """Step ``game`` with ``policy`` until it is over."""
    for _ in range(max_steps):
        if game.over:
            return game
        game.play(policy(game))
    raise RuntimeError("game did not end")


class RefMatch:
    """A sequence of games (RULES.md: a match ends after ``games`` games or at ``target_score``).

    Hands are given per game (``new_game(hands)``); the winner of a game leads the next one,
    freely unless ``opening_every_game``. Each game is scored with its own ``buy_in`` stakes.
    Each game's direction follows ``turn_order``: ``fixed`` forward, ``alternate``
    reversed in the 2nd, 4th, ... game; ``random`` is a draw the caller makes and passes in.
    """

    def __init__(self, variant: Variant) -> None:
        self.variant = variant
        self.totals: list[float] = [0.0] * variant.players
        self.games_played = 0
        self.last_winner: int | None = None
        self.results: list[list[float]] = []

    @property
    def over(self) -> bool:
        v = self.variant
        if self.games_played >= v.games:
            return True
        if v.target_score > 0 and self.games_played > 0:
            if v.scoring == "cards":
                return any(-t >= v.target_score for t in self.totals)
            return any(t >= v.target_score for t in self.totals)
        return False

    def new_game(self, hands: Sequence[Iterable[int]], drawn_reverse: bool | None = None) -> RefGame:
        """The next game. ``drawn_reverse``: its direction under ``turn_order: random``
        (required there, ignored otherwise)."""
        assert not self.over, "the match is over"
        mode = self.variant.turn_order
        if mode == "random":
            assert drawn_reverse is not None, "turn_order random: pass the game's drawn direction"
            reverse = drawn_reverse
        else:
            reverse = mode == "alternate" and self.games_played % 2 == 1
        if self.games_played == 0 or self.variant.opening_every_game:
            return RefGame(self.variant, hands, reverse=reverse)
        return RefGame(self.variant, hands, leader=self.last_winner, reverse=reverse)

    def record(self, game: RefGame) -> list[float]:
        payoffs = game.payoffs()
        self.totals = [t + x for t, x in zip(self.totals, payoffs, strict=True)]
        self.games_played += 1
        self.last_winner = game.winner
        self.results.append(payoffs)
        return payoffs

    def play(self, deals: Iterable[Sequence[Iterable[int]]], policy: Policy) -> list[float]:
        """Play games from ``deals`` until the match is over; the cumulative payoffs."""
        for hands in deals:
            if self.over:
                break
            self.record(play_out(self.new_game(hands), policy))
        return self.totals


def deal(variant: Variant, rng: random.Random) -> list[list[int]]:
    """A random deal (for tests of the reference itself)."""
    deck = list(range(52))
    rng.shuffle(deck)
    k = variant.cards_per_player
    return [sorted(deck[s * k : (s + 1) * k]) for s in range(variant.players)]
