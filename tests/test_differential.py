"""Differential tests: the batched engine against the slow reference, played in lockstep.

Each run deals matches with the engine (``Engine(variant, N, seed)``; match ``i`` of a run has
the engine seed ``seed + i``), gives every game's dealt hands, read from ``state.hands``, to
the reference (``tests/reference.py``: ``RefMatch.new_game``, so the first game opens with the
variant's opening rule and a later one is led by the previous winner, or opens again under
``opening_every_game``), then steps both with actions drawn by a seeded RNG (per match,
uniform over the legal list or biased towards playing, so games end). At every step:

* the engine's legal ids, decoded to card sets, equal the reference's legal set (no id twice);
* the seat to act, every seat's hand and the play on the table agree.

At every game start the leader, the opening card and the game's direction agree (under
``turn_order: random`` the reference plays the direction the engine drew; ``fixed`` and
``alternate`` it works out itself).

At every game end the winner and the payoffs agree (with ``buy_in``, each seat's bankroll is
``buy_in`` plus its match score so far), the engine's match scores are the sums of the games'
payoffs, and the match ends exactly when the reference's ``RefMatch.over`` says so.

Runs: every named variant; one run per example of every setting, taken from the settings'
declarations (``Allowed.examples``: every value of a list, both of a flag, the low end of a range
and a step above it, a parsed setting's named examples), each changed alone from one base, so a
new setting is played here as soon as it is declared; and option runs, written here, that combine
settings where they meet and count what they must exercise: 2 and 3
players (13 and 26 cards for two, and hands of 1 or 2 cards), ``opening_card: lowest``, an odd
named opening card, and the fallback when the named card is not dealt, ``opening_every_game``
and winner-leads matches, ``pair_chain``, ``two_ends_trick``, ``last_card_rule`` off / enforce /
liability (with few cards, so last-card turns are common), each scoring (``collect`` with and
without ``tiers``) with ``unit``, ``buy_in``, ``rake``, ``penalty_multiplier_for_twos`` and
``target_score``, ``jp_a2345_low`` and custom straights with a custom suit order, ``jqka2_suited``
both ways, and ``turn_order`` ``alternate`` and ``random`` (with the last-card rule and
``buy_in``, whose duty, liability and settlement order follow the direction). Two runs deal through ``reset(hands=...)`` instead
of the seed. Each run counts what it exercised (last-card turns, liable seats, capped payoffs,
...) and fails if a setting it is there for never came up.

A failure message names the run, ``Engine(load_variant(...), 1, seed=...)`` for the failing
match, the failing game's dealt hands, its leader and every play so far: enough to replay it
with ``reset(hands=...)`` and ``step``.

Speed (exact, so the reference stays the judge): within a run the reference's
``_plays_of_size`` is replaced by ``_DeckPlays``, which lists the deck's plays of each size
once (candidates from the shapes ``ref_classify`` accepts, kept when ``ref_classify`` says
so) and gives a hand the ones that fit in it, and ``ref_classify`` is memoised. Both are
checked: ``test_fast_plays_equal_reference_plays`` against the reference's brute force over
subsets, and the deck's plays against the engine's action table. Each run steps a batch of
engines at once.

How to run
----------
``pytest`` runs the CI sample (about a minute in all). The long sweep (1,000 games per named
variant, 200 matches, so at least 200 games, per example run and option run) is marked ``slow`` and skipped by
default (tests/conftest.py)::

    .venv/bin/pytest tests/test_differential.py -m slow      # the sweep only
    .venv/bin/pytest tests/test_differential.py --runslow    # sample and sweep
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
import math
import random
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from conftest import NAMED_VARIANTS

from bigtwo.env.engine.engine import Engine
from bigtwo.env.rules.cards import format_cards, parse_cards
from bigtwo.env.rules.variant import SETTINGS, Variant, load_variant

try:  # tests/ may or may not be a package
    import tests.reference as reference
except ModuleNotFoundError:  # pragma: no cover - rootdir-less layout
    import reference  # type: ignore[no-redef]

BATCH = 32  # engines stepped at once
MAX_STEPS = 20_000  # per batch; a stuck match fails the run


# ---------------------------------------------------------------- the runs


@dataclass(frozen=True)
class Run:
    """One differential run: a variant, how many matches in CI, what it must exercise."""

    id: str
    base: str
    overrides: dict[str, Any] = field(default_factory=dict)
    ci: int = 50  # matches in the CI sample
    expect: tuple[str, ...] = ()  # stats keys that must be > 0 (see ``_Lockstep``)
    hands_from_reset: bool = False  # deal first games through reset(hands=...)

    @property
    def variant(self) -> Variant:
        return load_variant(self.base, **self.overrides)

    @property
    def call(self) -> str:
        args = "".join(f", {k}={v!r}" for k, v in self.overrides.items())
        return f"load_variant({self.base!r}{args})"


NAMED_RUNS = [
    Run("hong-kong", "hong-kong", ci=250),
    Run("taiwan", "taiwan", ci=250),
    Run("japan", "japan", ci=250),
    Run("online-cn", "online-cn", ci=250, expect=("two_ends", "duty")),
    Run("pusoy-dos", "pusoy-dos", ci=250),
]

OPTION_RUNS = [
    # players and cards
    Run("2p", "taiwan", {"players": 2}, expect=("fallback",)),
    Run("2p-26-cards", "japan", {"players": 2, "cards_per_player": 26}, ci=16),
    Run("3p", "taiwan", {"players": 3}, expect=("fallback",)),
    Run("3p-lowest", "online-cn", {"players": 3}, expect=("lowest", "two_ends")),
    Run("2p-lowest", "online-cn", {"players": 2, "cards_per_player": 9}, expect=("lowest", "duty", "breach")),
    # opening
    Run("fallback-2p-5", "hong-kong", {"players": 2, "cards_per_player": 5}, expect=("fallback",)),
    Run("fallback-3p-7", "pusoy-dos", {"players": 3, "cards_per_player": 7}, expect=("fallback",)),
    Run(
        "opening-every-game",
        "taiwan",
        {"cards_per_player": 7, "games": 3, "opening_every_game": True},
        expect=("reopened",),
    ),
    Run(
        "opening-every-game-3p",
        "hong-kong",
        {"players": 3, "cards_per_player": 6, "games": 3, "opening_every_game": True},
        expect=("reopened", "fallback"),
    ),
    Run("winner-leads", "hong-kong", {"cards_per_player": 7, "games": 3}, expect=("winner_leads",)),
    Run(
        "hands-from-reset",
        "taiwan",
        {"cards_per_player": 8, "games": 2},
        hands_from_reset=True,
        expect=("winner_leads",),
    ),
    Run(
        "hands-from-reset-3p",
        "online-cn",
        {"players": 3, "cards_per_player": 7},
        hands_from_reset=True,
        expect=("lowest",),
    ),
    # plays
    Run("pair-chain", "japan", {"pair_chain": True}, ci=64, expect=("pair_chain_legal",)),
    Run(
        "pair-chain-2p-26",
        "japan",
        {"players": 2, "cards_per_player": 26, "pair_chain": True},
        ci=32,
        expect=("pair_chain", "pair_chain_legal"),
    ),
    Run(
        "pair-chain-3p-17",
        "japan",
        {"players": 3, "cards_per_player": 17, "pair_chain": True},
        ci=40,
        expect=("pair_chain", "pair_chain_legal"),
    ),
    Run("two-ends", "taiwan", {"cards_per_player": 7, "two_ends_trick": True}, expect=("two_ends",)),
    Run(
        "two-ends-2p", "hong-kong", {"players": 2, "cards_per_player": 10, "two_ends_trick": True}, expect=("two_ends",)
    ),
    Run("one-card", "taiwan", {"cards_per_player": 1, "games": 3}, expect=("winner_leads",)),
    Run("one-card-2p-liability", "online-cn", {"players": 2, "cards_per_player": 2, "games": 3}, expect=("duty",)),
    Run("opening-7h-3p", "taiwan", {"players": 3, "cards_per_player": 6, "opening_card": "7H"}, expect=("fallback",)),
    Run("jp-a2345-low", "japan", {"straights": "jp_a2345_low"}),
    Run("jqka2-no-play-jp", "japan", {"jqka2_suited": "no_play", "cards_per_player": 11}),
    Run("jqka2-flush-tw", "taiwan", {"jqka2_suited": "flush", "cards_per_player": 11}),
    Run(
        "custom-straights-and-suits",
        "hong-kong",
        {
            "straights": ["3-4-5-6-7", "9-10-J-Q-K", {"ranks": "A-2-3-4-5", "top": "A"}, "10-J-Q-K-A"],
            "suit_order": ["S", "H", "C", "D"],
            "flush_order": "rank_first",
            "cards_per_player": 11,
        },
    ),
    Run("suit-order-rank-first", "pusoy-dos", {"flush_order": "rank_first", "cards_per_player": 10}),
    # last-card rule
    Run("last-card-off", "online-cn", {"cards_per_player": 6, "last_card_rule": "off"}),
    Run(
        "last-card-enforce",
        "online-cn",
        {"cards_per_player": 6, "last_card_rule": "enforce"},
        expect=("duty", "restricted"),
    ),
    Run(
        "last-card-enforce-2p",
        "hong-kong",
        {"players": 2, "cards_per_player": 7, "last_card_rule": "enforce"},
        expect=("duty", "restricted"),
    ),
    Run(
        "last-card-enforce-3p",
        "taiwan",
        {"players": 3, "cards_per_player": 5, "last_card_rule": "enforce"},
        expect=("duty", "restricted"),
    ),
    Run("liability-pairwise", "online-cn", {"cards_per_player": 5}, expect=("duty", "breach")),
    Run("liability-cards", "online-cn", {"cards_per_player": 6, "scoring": "cards"}, expect=("duty", "breach")),
    Run(
        "liability-tiered",
        "online-cn",
        {"cards_per_player": 6, "scoring": "tiered", "unit": 2},
        expect=("duty", "breach"),
    ),
    Run(
        "liability-win-loss-3p",
        "online-cn",
        {"players": 3, "cards_per_player": 6, "scoring": "win_loss"},
        expect=("duty", "breach"),
    ),
    Run("liability-buy-in", "online-cn", {"cards_per_player": 6, "buy_in": 6, "games": 3}, expect=("breach", "capped")),
    # direction per game
    Run(
        "alternate-liability-buy-in",
        "online-cn",
        {"cards_per_player": 5, "buy_in": 5, "games": 4},
        expect=("reversed", "forward", "duty", "breach", "capped"),
    ),
    Run(
        "alternate-enforce-3p",
        "taiwan",
        {
            "players": 3,
            "cards_per_player": 5,
            "games": 3,
            "turn_order": "alternate",
            "last_card_rule": "enforce",
        },
        expect=("reversed", "restricted"),
    ),
    Run(
        "random-liability-collect",
        "online-cn",
        {"cards_per_player": 6, "games": 3, "turn_order": "random", "scoring": "collect", "buy_in": 8},
        expect=("reversed", "forward", "breach", "capped"),
    ),
    Run(
        "random-hands-from-reset-2p",
        "hong-kong",
        {"players": 2, "cards_per_player": 8, "games": 3, "turn_order": "random"},
        hands_from_reset=True,
        expect=("reversed", "forward"),
    ),
    # scoring
    Run("cards-unit-twos", "taiwan", {"cards_per_player": 8, "unit": 2.5, "penalty_multiplier_for_twos": 3}),
    Run(
        "cards-buy-in-rake",
        "taiwan",
        {"cards_per_player": 8, "buy_in": 10, "rake": 0.5, "games": 4},
        expect=("capped",),
    ),
    Run("tiered-unit-twos", "japan", {"unit": 1.5, "penalty_multiplier_for_twos": 2}),
    Run("tiered-buy-in-rake", "japan", {"buy_in": 30, "rake": 1, "games": 3}, expect=("capped",)),
    Run("pairwise-unit-twos-3p", "online-cn", {"players": 3, "unit": 0.5, "penalty_multiplier_for_twos": 2}),
    Run(
        "pairwise-buy-in-rake",
        "online-cn",
        {"cards_per_player": 8, "buy_in": 8, "rake": 1, "games": 4},
        expect=("capped",),
    ),
    Run("win-loss", "taiwan", {"cards_per_player": 7, "scoring": "win_loss", "unit": 3}),
    Run("collect-unit-twos", "taiwan", {"scoring": "collect", "unit": 1.5, "penalty_multiplier_for_twos": 2}),
    Run(
        "collect-tiers-buy-in-rake",
        "japan",
        {"scoring": "collect", "tiers": [[5, 2], [10, 3], [13, 4.5]], "buy_in": 40, "rake": 1, "games": 3},
        expect=("capped",),
    ),
    Run(
        "liability-collect-tiers",
        "online-cn",
        {"cards_per_player": 6, "scoring": "collect", "tiers": [[3, 2], [5, 3]], "unit": 2},
        expect=("duty", "breach"),
    ),
    Run(
        "win-loss-buy-in-rake-3p",
        "taiwan",
        {"players": 3, "cards_per_player": 7, "scoring": "win_loss", "buy_in": 1, "rake": 0.25, "games": 5},
        expect=("capped",),
    ),
    Run("target-cards", "taiwan", {"cards_per_player": 7, "games": 50, "target_score": 12}, expect=("target",)),
    Run("target-tiered", "japan", {"cards_per_player": 7, "games": 50, "target_score": 15}, expect=("target",)),
    Run("target-pairwise", "online-cn", {"cards_per_player": 6, "games": 50, "target_score": 10}, expect=("target",)),
    Run(
        "target-collect",
        "japan",
        {"cards_per_player": 7, "scoring": "collect", "tiers": [[6, 2]], "games": 50, "target_score": 20},
        expect=("target",),
    ),
    Run(
        "target-win-loss",
        "taiwan",
        {"cards_per_player": 5, "scoring": "win_loss", "games": 50, "target_score": 3},
        expect=("target",),
    ),
]

# Every setting's examples (``Allowed.examples``, declared with the setting) each get a run of their
# own, changed from EXAMPLE_BASE: a setting declared tomorrow is played here with no line added.
# The base scores ``collect`` (so ``tiers`` applies) with jp straights (so ``jqka2_suited`` does), and
# deals short hands over two-game matches (openings and winners' leads both come up).
EXAMPLE_BASE = ("japan", {"scoring": "collect", "cards_per_player": 6, "games": 2})
EXAMPLE_MATCHES = 12  # matches per example run in the CI sample


def _example_id(name: str, value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
    return f"{name}={text}"


def example_runs() -> list[Run]:
    """One run per declared example of every setting (``SETTINGS[name].allows.examples``), each
    the base with that one setting changed; an example that leaves the base as it is plays once."""
    base, base_overrides = EXAMPLE_BASE
    runs, seen = (
        [Run("examples-base", base, base_overrides, ci=EXAMPLE_MATCHES)],
        {load_variant(base, **base_overrides).rules_key()},
    )
    for name, setting in SETTINGS.items():
        for value in setting.allows.examples:
            run = Run(_example_id(name, value), base, {**base_overrides, name: value}, ci=EXAMPLE_MATCHES)
            if run.variant.rules_key() not in seen:
                seen.add(run.variant.rules_key())
                runs.append(run)
    return runs


EXAMPLE_RUNS = example_runs()


# ---------------------------------------------------------------- helpers


def _cards(mask: int | np.integer) -> frozenset[int]:
    m = int(mask)
    return frozenset(c for c in range(52) if m >> c & 1)


def _mask(cards: frozenset[int] | set[int]) -> int:
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def _text(cards: frozenset[int] | set[int]) -> str:
    return format_cards(sorted(cards)) or "pass"


def _candidates(size: int, variant: Variant) -> Iterator[tuple[int, ...]]:
    """Card sets of ``size`` that could be plays: a superset of what ``ref_classify`` accepts,
    read off its own tests (one rank for 2 and 3 cards; for 5 cards one suit, a full-house or
    four-of-a-kind shape, or the ranks of a window in ``variant.straights``; for 6 cards three
    pairs of consecutive ranks)."""
    by_rank = [[r * 4 + s for s in range(4)] for r in range(13)]
    if size == 1:
        yield from ((c,) for c in range(52))
    elif size in (2, 3):
        for cards in by_rank:
            yield from itertools.combinations(cards, size)
    elif size == 5:
        for suit in range(4):
            yield from itertools.combinations(range(suit, 52, 4), 5)
        for r3, r2 in itertools.permutations(range(13), 2):
            for three in itertools.combinations(by_rank[r3], 3):
                yield from (three + two for two in itertools.combinations(by_rank[r2], 2))
            yield from (tuple(by_rank[r3]) + (c,) for c in by_rank[r2])
        for ranks, _top in variant.straights:
            yield from itertools.product(*(by_rank[r] for r in ranks))
    elif size == 6:
        for low in range(11):
            pairs = [list(itertools.combinations(by_rank[low + k], 2)) for k in range(3)]
            yield from (a + b + c for a, b, c in itertools.product(*pairs))


_DECK_PLAYS: dict[tuple, tuple[tuple[frozenset[int], ...], np.ndarray]] = {}


def _deck_plays(size: int, variant: Variant) -> tuple[tuple[frozenset[int], ...], np.ndarray]:
    """Every play of ``size`` in the deck, as the reference classifies them, and their card masks.
    Kept per ``variant.action_table_key()`` (the fields classification reads) and size."""
    key = (variant.action_table_key(), size)
    if key not in _DECK_PLAYS:
        plays = {frozenset(c) for c in _candidates(size, variant)}
        kept = tuple(sorted((p for p in plays if reference.ref_classify(p, variant) is not None), key=sorted))
        _DECK_PLAYS[key] = kept, np.array([_mask(p) for p in kept], dtype=np.uint64)
    return _DECK_PLAYS[key]


class _DeckPlays:
    """A fast, exact stand-in for ``reference._plays_of_size``: the plays of a hand are the
    deck's plays (``_deck_plays``, classified by the reference) that fit in it. A registered
    dealt hand's plays are kept, and a later hand inside it filters those."""

    def __init__(self) -> None:
        self.by_card: dict[int, list[frozenset[int]]] = {}
        self.kept: dict[tuple[frozenset[int], int, Variant], frozenset[frozenset[int]]] = {}

    def register(self, hand: frozenset[int]) -> None:
        for c in hand:
            self.by_card.setdefault(c, []).append(hand)

    def clear(self) -> None:
        self.by_card.clear()
        self.kept.clear()

    @staticmethod
    def _from_deck(hand: frozenset[int], size: int, variant: Variant) -> frozenset[frozenset[int]]:
        plays, masks = _deck_plays(size, variant)
        fits = np.flatnonzero((masks & ~np.uint64(_mask(hand))) == 0)
        return frozenset(plays[i] for i in fits)

    def _of(self, hand: frozenset[int], size: int, variant: Variant) -> frozenset[frozenset[int]]:
        key = (hand, size, variant)
        plays = self.kept.get(key)
        if plays is None:
            plays = self.kept[key] = self._from_deck(hand, size, variant)
        return plays

    def __call__(self, hand: frozenset[int], size: int, variant: Variant) -> frozenset[frozenset[int]]:
        if hand:
            for dealt in self.by_card.get(next(iter(hand)), ()):
                if hand <= dealt:
                    plays = self._of(dealt, size, variant)
                    return plays if hand == dealt else frozenset(p for p in plays if p <= hand)
        return self._from_deck(hand, size, variant)


@contextlib.contextmanager
def _fast_reference() -> Iterator[_DeckPlays]:
    """Within: the reference finds plays with ``_DeckPlays`` and remembers classifications."""
    plays_of_size, classify = reference._plays_of_size, reference.ref_classify
    fast = _DeckPlays()
    reference._plays_of_size = fast
    reference.ref_classify = functools.lru_cache(maxsize=1 << 18)(classify)
    try:
        yield fast
    finally:
        reference._plays_of_size, reference.ref_classify = plays_of_size, classify


@dataclass
class _Match:
    """The reference's side of one engine game (one match)."""

    seed: int
    ref: reference.RefMatch
    game: reference.RefGame | None = None
    dealt: list[frozenset[int]] = field(default_factory=list)


class _Lockstep:
    """Plays one batch of matches through the engine and the reference side by side.

    Stats keys: ``games``, ``matches``, ``steps``; ``lowest`` / ``fallback`` (a game opened by the
    lowest card dealt, by rule / because the named card was not dealt), ``reopened`` (a later
    game of a match opened by the opening rule), ``winner_leads`` (a later game led freely),
    ``duty`` (a turn with a last-card duty), ``restricted`` (``enforce`` removed plays),
    ``breach`` (a game scored with a liable seat), ``two_ends`` (a 2 ended a trick),
    ``reversed`` / ``forward`` (a game played in reversed / seat order),
    ``pair_chain`` / ``pair_chain_legal`` (one was played / legal), ``capped`` (``buy_in``
    changed a payoff), ``target`` (a match ended by ``target_score``).
    """

    def __init__(self, run: Run, seed: int, n: int, stats: Counter, plays: _DeckPlays) -> None:
        self.run = run
        self.variant = v = run.variant
        self.stats = stats
        self.plays = plays
        self.rng = random.Random(seed)
        self.engine = Engine(v, n, seed=seed)
        if run.hands_from_reset:
            deals = [reference.deal(v, self.rng) for _ in range(n)]
            self.engine.reset(seed=seed, hands=deals)
        self.masks = self.engine.table.masks
        self._decoded: dict[int, frozenset[int]] = {}
        self.matches = [_Match(seed + g, reference.RefMatch(v)) for g in range(n)]
        self.bias = [self.rng.choice((0.0, 0.6, 0.9)) for _ in range(n)]
        for g in range(n):
            self._new_game(g)

    def decode(self, action: int) -> frozenset[int]:
        cards = self._decoded.get(action)
        if cards is None:
            cards = self._decoded[action] = _cards(self.masks[action])
        return cards

    def where(self, g: int) -> str:
        m = self.matches[g]
        assert m.game is not None
        plays = ", ".join(f"{seat}:{_text(c)}" for seat, c in m.game.history)
        hands = " | ".join(_text(h) for h in m.dealt)
        return (
            f"[{self.run.id}] Engine({self.run.call}, 1, seed={m.seed}), game {m.ref.games_played + 1} of the match; "
            f"dealt {hands}; leader {m.game.leader}; plays so far [{plays}]"
        )

    # ---- game start and end

    def _new_game(self, g: int) -> None:
        S, m, v = self.engine.state, self.matches[g], self.variant
        m.dealt = [_cards(h) for h in S.hands[g]]
        for hand in m.dealt:
            self.plays.register(hand)
        later = m.ref.games_played > 0
        drawn = bool(S.reverse[g]) if v.turn_order == "random" else None
        m.game = game = m.ref.new_game(m.dealt, drawn_reverse=drawn)
        assert bool(S.reverse[g]) == game.reverse, (
            f"{self.where(g)}: engine reverse {bool(S.reverse[g])}, reference {game.reverse}"
        )
        self.stats["reversed" if game.reverse else "forward"] += 1
        if game.opening_card is None:
            self.stats["winner_leads"] += 1
        else:
            if v.opening_card_id < 0:
                self.stats["lowest"] += 1
            elif game.opening_card != v.opening_card_id:
                self.stats["fallback"] += 1
            if later:
                self.stats["reopened"] += 1
        opening = -1 if game.opening_card is None else game.opening_card
        assert (int(S.current[g]), int(S.opening[g])) == (game.current, opening), (
            f"{self.where(g)}: engine leader/opening card {int(S.current[g])}/{int(S.opening[g])}, "
            f"reference {game.current}/{opening}"
        )

    def _end_game(self, g: int, winner: int, payoffs: np.ndarray, match_over: bool) -> None:
        S, m, v = self.engine.state, self.matches[g], self.variant
        game = m.game
        assert game is not None
        assert game.over and game.winner == winner, f"{self.where(g)}: engine winner {winner}, reference not over"
        bankroll = [v.buy_in + t for t in m.ref.totals] if v.buy_in > 0 else None
        expected = game.payoffs(bankroll)
        if not np.allclose(payoffs, expected, rtol=0, atol=1e-9):
            raise AssertionError(
                f"{self.where(g)}: payoffs engine {payoffs.tolist()}, reference {expected}; cards left "
                f"{[format_cards(sorted(h)) for h in game.hands]}, bankroll {bankroll}, liable {game.liable_seat()}"
            )
        self.stats["games"] += 1
        if game.liable_seat() is not None:
            self.stats["breach"] += 1
        if bankroll is not None and expected != game.payoffs([math.inf] * v.players):
            self.stats["capped"] += 1
        m.ref.totals = [t + x for t, x in zip(m.ref.totals, expected, strict=True)]
        m.ref.games_played += 1
        m.ref.last_winner = winner
        m.ref.results.append(expected)
        assert np.allclose(S.match_scores[g], m.ref.totals, rtol=0, atol=1e-9), (
            f"{self.where(g)}: match scores engine {S.match_scores[g].tolist()}, reference {m.ref.totals}"
        )
        assert match_over == m.ref.over, f"{self.where(g)}: engine match_over {match_over}, reference {m.ref.over}"
        assert int(S.games_played[g]) == m.ref.games_played
        if match_over:
            self.stats["matches"] += 1
            if m.ref.games_played < v.games:
                self.stats["target"] += 1
            assert S.over[g] and int(S.current[g]) == -1 and int(self.engine.legal_actions()[1][g]) == 0
        else:
            self._new_game(g)

    # ---- one turn

    def _check_turn(self, g: int, legal_ids: list[int]) -> None:
        S, m = self.engine.state, self.matches[g]
        game = m.game
        assert game is not None and not game.over
        table = 0 if game.table is None else _mask(game.table)
        engine_table = int(self.masks[S.table_action[g]])
        seen = (int(S.current[g]), [int(h) for h in S.hands[g]], engine_table)
        want = (game.current, [_mask(h) for h in game.hands], table)
        assert seen == want, f"{self.where(g)}: engine (seat to act, hands, table) {seen}, reference {want}"
        engine_set = {self.decode(a) for a in legal_ids}
        assert len(engine_set) == len(legal_ids), f"{self.where(g)}: an id twice in {legal_ids}"
        ref_set = game.legal()
        if engine_set != ref_set:
            only_engine = sorted(_text(p) for p in engine_set - ref_set)
            only_ref = sorted(_text(p) for p in ref_set - engine_set)
            raise AssertionError(
                f"{self.where(g)}: seat {game.current} to act, hand {_text(game.hands[game.current])}, table "
                f"{_text(game.table) if game.table else '(leading)'}: engine only {only_engine}, "
                f"reference only {only_ref}"
            )
        if self.variant.pair_chain and any(len(p) == 6 for p in engine_set):
            self.stats["pair_chain_legal"] += 1
        if S.duty[g]:
            self.stats["duty"] += 1
            if self.variant.last_card_rule == "enforce" and ref_set != game._unrestricted():
                self.stats["restricted"] += 1

    def _choose(self, g: int, legal_ids: list[int]) -> int:
        """Uniform over the legal ids, or (with the match's bias) a play of a size drawn first,
        so that five-card plays and pair chains come up often."""
        plays = [a for a in legal_ids if a]
        if plays and self.rng.random() < self.bias[g]:
            size = self.rng.choice(sorted({len(self.decode(a)) for a in plays}))
            return self.rng.choice([a for a in plays if len(self.decode(a)) == size])
        return self.rng.choice(legal_ids)

    def play(self) -> None:
        eng, S = self.engine, self.engine.state
        n = eng.num_matches
        for _ in range(MAX_STEPS):
            if S.over.all():
                return
            ids, counts = eng.legal_actions()
            actions = np.full(n, -1, np.int64)
            for g in range(n):
                if not S.over[g]:
                    legal_ids = [int(a) for a in ids[g, : counts[g]]]
                    self._check_turn(g, legal_ids)
                    actions[g] = self._choose(g, legal_ids)
            result = eng.step(actions)
            self.stats["steps"] += 1
            for g in range(n):
                if actions[g] < 0:
                    continue
                game = self.matches[g].game
                assert game is not None
                cards = self.decode(int(actions[g]))
                if len(cards) == 6:
                    self.stats["pair_chain"] += 1
                if (
                    self.variant.two_ends_trick
                    and reference._is_ending_two(cards)
                    and len(game.hands[game.current]) > len(cards)
                ):
                    self.stats["two_ends"] += 1
                game.play(cards)
                if result.game_over[g]:
                    self._end_game(g, int(result.winner[g]), result.payoffs[g].copy(), bool(result.match_over[g]))
                else:
                    assert not game.over, f"{self.where(g)}: the reference ended the game, the engine did not"
        raise AssertionError(f"[{self.run.id}] matches did not end in {MAX_STEPS} steps")


def lockstep(run: Run, matches: int, seed: int) -> Counter:
    """Play ``matches`` matches of ``run`` (engine seeds ``seed``, ``seed + 1``, ...), in batches."""
    stats: Counter = Counter()
    with _fast_reference() as plays:
        for start in range(0, matches, BATCH):
            plays.clear()
            _Lockstep(run, seed + start, min(BATCH, matches - start), stats, plays).play()
    assert stats["matches"] == matches
    missing = [k for k in run.expect if not stats[k]]
    assert not missing, f"[{run.id}] never exercised {missing} in {matches} matches: {dict(stats)}"
    return stats


# ---------------------------------------------------------------- tests


@pytest.mark.parametrize(
    "variant",
    [
        load_variant("taiwan"),
        load_variant("hong-kong"),
        load_variant("pusoy-dos"),
        load_variant("japan", pair_chain=True, straights="jp_a2345_low"),
    ],
    ids=lambda v: f"{v.name}-{v.straights_preset}",
)
def test_fast_plays_equal_reference_plays(variant: Variant) -> None:
    """The speed-up is exact: for random hands and sub-hands, the plays found from the deck's
    plays equal the reference's brute force over the hand's subsets."""
    rng = random.Random(5)
    brute = reference._plays_of_size.__wrapped__
    fast = _DeckPlays()
    v = variant.replace(players=2, cards_per_player=18)
    for _ in range(3):
        dealt, other = (frozenset(h) for h in reference.deal(v, rng))
        fast.register(dealt)
        sub = frozenset(rng.sample(sorted(dealt), rng.randint(6, len(dealt) - 1)))
        for size in (1, 2, 3, 5, 6):
            for hand in (dealt, sub, other):  # a registered hand, one inside it, one not registered
                assert fast(hand, size, v) == brute(hand, size, v), (size, _text(hand))


def test_action_table_holds_the_reference_plays() -> None:
    """The engine's action table is exactly the set of plays the reference classifies."""
    variants = [load_variant(name) for name in NAMED_VARIANTS] + [
        load_variant("japan", pair_chain=True, straights="jp_a2345_low")
    ]
    for v in variants:
        table = Engine(v, 1, seed=0).table
        engine_plays = {_cards(m) for m in table.masks[1:]}
        sizes = (1, 2, 3, 5, 6) if v.pair_chain else (1, 2, 3, 5)
        ref_plays = {p for size in sizes for p in _deck_plays(size, v)[0]}
        assert len(engine_plays) == table.size - 1
        assert engine_plays == ref_plays, (v.name, len(engine_plays), len(ref_plays))


def _finished(variant: Variant, left: list[str], winner: int) -> reference.RefGame:
    game = reference.RefGame(variant, [list(range(s * 13, s * 13 + 13)) for s in range(variant.players)])
    game.hands = [{int(c) for c in parse_cards(h)} for h in left]
    game.over, game.winner = True, winner
    return game


def test_reference_stakes_with_a_bankroll_below_zero() -> None:
    """Found by this module (cards-buy-in-rake and pairwise-buy-in-rake runs): the rake is charged
    after the table-stakes cap, so a bankroll can fall below 0. Such a seat has nothing at stake:
    it loses nothing more (before the rake) and winnings it receives are money it can pay on
    with. The reference used to turn the capped loss into a gain under ``cards`` scoring and to
    keep the deficit as a debt under transfers; the engine was right."""
    cards = _finished(load_variant("taiwan", buy_in=10, rake=0.5), ["3D", "", "4D 5D", "6D"], 1)
    assert cards.payoffs([7.0, 10.0, -0.5, 4.0]) == [-1.5, -0.5, -0.5, -1.5]
    pairwise = _finished(load_variant("online-cn", buy_in=8, rake=1), ["", "3S 10C", "3D 6C 9D", "4C"], 0)
    assert pairwise.payoffs([-1.0, -1.0, 19.0, 11.0]) == [3.0, -1.0, -7.0, 1.0]


@pytest.mark.parametrize("run", NAMED_RUNS + OPTION_RUNS, ids=lambda r: r.id)
def test_engine_matches_reference(run: Run) -> None:
    lockstep(run, run.ci, seed=1_000 + 7_919 * (NAMED_RUNS + OPTION_RUNS).index(run))


@pytest.mark.parametrize("run", EXAMPLE_RUNS, ids=lambda r: r.id)
def test_engine_matches_reference_on_every_declared_example(run: Run) -> None:
    lockstep(run, run.ci, seed=30_000_000 + 7_919 * EXAMPLE_RUNS.index(run))


def test_the_example_runs_play_every_declared_value() -> None:
    """Each setting's every example is played (by its own run, or by the base when it is the base's)."""
    base = EXAMPLE_RUNS[0].variant
    played = {(name, repr(value)) for run in EXAMPLE_RUNS for name, value in run.variant.to_dict().items()}
    for name, setting in SETTINGS.items():
        for value in setting.allows.examples:
            wanted = base.replace(**{name: value}).to_dict()[name]
            assert (name, repr(wanted)) in played, f"no run plays {name}={value!r}"


@pytest.mark.slow
@pytest.mark.parametrize("run", NAMED_RUNS, ids=lambda r: r.id)
def test_engine_matches_reference_sweep_named(run: Run) -> None:
    stats = lockstep(run, 1_000, seed=10_000_000 + 100_003 * NAMED_RUNS.index(run))
    assert stats["games"] >= 1_000


@pytest.mark.slow
@pytest.mark.parametrize("run", EXAMPLE_RUNS, ids=lambda r: r.id)
def test_engine_matches_reference_sweep_examples(run: Run) -> None:
    stats = lockstep(run, 200, seed=40_000_000 + 100_003 * EXAMPLE_RUNS.index(run))
    assert stats["games"] >= 200


@pytest.mark.slow
@pytest.mark.parametrize("run", OPTION_RUNS, ids=lambda r: r.id)
def test_engine_matches_reference_sweep_options(run: Run) -> None:
    stats = lockstep(run, 200, seed=20_000_000 + 100_003 * OPTION_RUNS.index(run))
    assert stats["games"] >= 200
