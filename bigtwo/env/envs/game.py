"""A table of Big Two to read and play at by hand, one game at a time: a view over ``Engine(num_matches=1)``.

``Game`` speaks card text (``"3C 3D"``, ``"pass"``) where the engine speaks action ids; the rules
are the engine's. Seats are numbered ``0 .. players - 1`` in play order; a reversed game
(``turn_order``) plays them the other way round (``reversed``, ``play_order``). A *match* is the
variant's ``games`` games: when a game ends the next is dealt at once (its winner leads) until
the match is over, so ``is_over`` means the match is over; ``winner`` and ``payoffs`` are those
of the last game finished and ``scores`` add the match up.

>>> g = Game("taiwan", hands=[
...     "3C 4D 5D 6D 7D 8S 9S 10S JS QS KS AS 2S",
...     "3D 4C 5C 6C 7C 8C 9C 10C JC QC KC AC 2C",
...     "3H 4H 5H 6H 7H 8H 9H 10H JH QH KH AH 2H",
...     "3S 4S 5S 6S 7S 8D 9D 10D JD QD KD AD 2D",
... ])
>>> g.current_player  # seat 0 holds the 3C, which opens in Taiwan
0
>>> g.play("3C")
>>> g.table, g.table_player, g.current_player
(['3C'], 0, 1)
>>> g.play("3H")
Traceback (most recent call last):
ValueError: seat 1 cannot play 3H: not in hand: 3H
>>> g.legal_plays()[:3]
[[], ['4C'], ['5C']]
>>> g.play("pass")
>>> g.history
[(0, ['3C']), (1, [])]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bigtwo.env.checks import is_seat
from bigtwo.env.engine.engine import Engine, StepResult, check_deal
from bigtwo.env.rules.actions import ActionTable, action_id, parse_play
from bigtwo.env.rules.cards import NUM_CARDS, card_texts, cards_to_mask, mask_to_cards, parse_cards
from bigtwo.env.rules.variant import CHOICES, DEFAULT_VARIANT, Variant, load_variant

Cards = str | Sequence[str | int] | None
"""A play as given by a person: ``"3C 3D"``, ``["3C", "3D"]``, ``"pass"`` or ``[]``."""


@dataclass(frozen=True)
class GameResult:
    """One finished game of the match."""

    number: int  # 1 for the match's first game
    winner: int  # the seat that went out first
    payoffs: tuple[float, ...]  # per seat, in the scoring's units (higher is better)
    history: list[tuple[int, list[str]]]  # (seat, cards played; [] for a pass), in order


class Game:
    """A readable, playable view of one match; see the module docstring.

    ``variant``: a name (``"taiwan"``), a YAML path or a ``Variant``; ``overrides`` change its
    fields (``players=3``). ``seed``: the deals (``None``: fresh entropy). ``hands``: the first
    game's deal, one hand per seat (text or a list of cards); the engine checks it.
    """

    def __init__(
        self,
        variant: Variant | str | Path = DEFAULT_VARIANT,
        seed: int | None = None,
        hands: Sequence[Cards] | np.ndarray | None = None,
        **overrides: Any,
    ) -> None:
        self.variant = load_variant(variant, **overrides)
        self.engine = Engine(self.variant, num_matches=1, seed=seed)
        self.action_table: ActionTable = self.engine.table
        self.players = self.variant.players
        self._order = self.variant.card_values()  # the variant's card order, for sorting what we show
        self._texts = card_texts(range(NUM_CARDS))
        self._act = np.zeros(1, np.int64)
        self._seat_buf = np.zeros(1, np.int64)
        # the observation of the seat to act, kept from a play's own kernel call (``Engine.step_observe``),
        # current while the engine's ``changes`` is still ``_kept_at`` (the seat to act is then unchanged too)
        self._kept = np.zeros(self.engine.obs_size, np.float32)
        self._kept_at = -1
        self._plays: list[tuple[int, int]] = []  # (seat, action id) of the current game
        self._finished: list[tuple[int, int, tuple[float, ...], list[tuple[int, int]]]] = []
        self._deals: list[np.ndarray] = [self.engine.state.hands[0].copy()]  # each game's hands as dealt
        self.first_deal_given = False  # whether the first game's hands were given (not dealt from the seed)
        if hands is not None:
            self.reset(seed, hands)

    # ------------------------------------------------------------ life cycle

    def reset(self, seed: int | None = None, hands: Sequence[Cards] | np.ndarray | None = None) -> None:
        """Start a new match: dealt from ``seed``, or with ``hands`` for its first game.
        Bad ``hands`` raise ``ValueError`` and change nothing."""
        batch = None if hands is None else self.check_hands(hands)
        S = self.engine.state
        saved = S.seeds.copy(), S.deal_count.copy()
        try:
            self.engine.reset(seed, batch)
        except ValueError as exc:
            S.seeds[:], S.deal_count[:] = saved  # Engine.reset sets the seeds before it checks the hands
            raise ValueError(_single(str(exc))) from None
        self._plays = []
        self._finished = []
        self._deals = [S.hands[0].copy()]
        self.first_deal_given = batch is not None

    def check_hands(self, hands: Sequence[Cards] | np.ndarray) -> np.ndarray:
        """``hands`` (one per seat: card text, a list of cards, or a (P,) uint64 mask array) as the
        (1, P) uint64 card masks ``Engine.reset`` takes, after checking them as the engine does
        (``engine.check_deal``: card counts, no card dealt twice); ``ValueError`` naming the seat and
        the bad card."""
        p = self.players
        if isinstance(hands, np.ndarray):
            if hands.dtype == np.uint64:
                if hands.size != p:
                    raise ValueError(f"hands as masks must be {p} uint64 masks (one per seat), got shape {hands.shape}")
                return self._check_deal(hands.reshape(1, p))
            hands = hands.tolist()
        if isinstance(hands, (str, bytes, bytearray)) or not isinstance(hands, Sequence):
            raise ValueError(f"hands must be a list of {p} hands (one per seat, e.g. '3C 4D ...'), got {hands!r}")
        if len(hands) != p:
            raise ValueError(f"hands must give {p} seats (one hand each), got {len(hands)}")
        masks = np.zeros((1, p), np.uint64)
        for seat, hand in enumerate(hands):
            if isinstance(hand, (bytes, bytearray)) or not isinstance(hand, (str, Sequence, np.ndarray)):
                raise ValueError(
                    f"seat {seat}: a hand is card text such as '3C 4D ...' or a list of cards, got {hand!r}"
                )
            try:
                masks[0, seat] = cards_to_mask(parse_cards(hand))
            except ValueError as exc:
                raise ValueError(f"seat {seat}: {exc}") from None
        return self._check_deal(masks)  # masks, not card lists: a 1-card hand cannot be read as one game's hands

    def _check_deal(self, masks: np.ndarray) -> np.ndarray:
        """``masks`` (1, P) if ``engine.check_deal`` passes them, its message for game 0 otherwise."""
        try:
            return check_deal(masks, self.variant)
        except ValueError as exc:
            raise ValueError(_single(str(exc))) from None

    # ------------------------------------------------------------ what is on the table

    @property
    def hands(self) -> list[list[str]]:
        """Each seat's cards, in the variant's card order (low to high)."""
        return [self._mask_texts(int(m)) for m in self.engine.state.hands[0]]

    @property
    def cards_left(self) -> list[int]:
        """How many cards each seat holds."""
        return [int(n) for n in self.engine.state.counts[0]]

    @property
    def current_player(self) -> int | None:
        """The seat to play, or ``None`` once the match is over."""
        seat = int(self.engine.state.current[0])
        return None if seat < 0 else seat

    @property
    def table(self) -> list[str]:
        """Cards of the play to beat; ``[]`` when the player to act leads."""
        return self._action_texts(int(self.engine.state.table_action[0]))

    @property
    def table_kind(self) -> str | None:
        """Kind of the play to beat (``'pair'``, ``'straight'``, ...), ``None`` when leading."""
        action = int(self.engine.state.table_action[0])
        return self.action_table.kind(action) if action else None

    @property
    def table_player(self) -> int | None:
        """The seat that made the play to beat, ``None`` when leading."""
        seat = int(self.engine.state.table_seat[0])
        return None if seat < 0 else seat

    @property
    def passes(self) -> int:
        """Passes in a row since the play to beat."""
        return int(self.engine.state.passes[0])

    @property
    def reversed(self) -> bool:
        """Whether this game plays in reversed seat order (seat - 1 next; ``turn_order``)."""
        return bool(self.engine.state.reverse[0])

    @property
    def direction(self) -> str:
        """This game's direction round the table as shown: the variant's ``seating``, the other
        one in a reversed game."""
        if not self.reversed:
            return self.variant.seating
        return next(d for d in CHOICES["seating"] if d != self.variant.seating)

    def play_order(self, first: int = 0) -> list[int]:
        """Every seat in this game's play order, starting at seat ``first``."""
        if not is_seat(first, self.players):
            raise ValueError(f"first must be a seat 0..{self.players - 1}, got {first!r}")
        step = -1 if self.reversed else 1
        return [(first + step * k) % self.players for k in range(self.players)]

    @property
    def opening_card(self) -> str | None:
        """The card the next play must hold (a game's first play), else ``None``."""
        card = int(self.engine.state.opening[0])
        return None if card < 0 else self._texts[card]

    def legal_plays(self) -> list[list[str]]:
        """Every legal play of the seat to act, as card texts; ``[]`` is pass."""
        return [self._action_texts(int(a)) for a in self.legal_actions()]

    def legal_actions(self) -> np.ndarray:
        """Legal action ids of the seat to act, sorted (a copy)."""
        S = self.engine.state
        return S.legal[0, : S.legal_n[0]].copy()

    # ------------------------------------------------------------ playing

    def play(self, cards: Cards) -> None:
        """Play ``cards`` for the seat to act: ``"3C 3D"``, ``["3C", "3D"]``, ``"pass"`` or ``[]``.

        An illegal play raises ``ValueError`` saying why and changes nothing; so does an action id
        (a number), with the ``play_action`` call that plays it."""
        self.play_action(self.encode(cards))

    def encode(self, cards: Cards) -> int:
        """Action id of a play written as cards (``"pass"``, ``""`` and ``[]`` are pass, see
        ``bigtwo.env.rules.actions.parse_play``); ``ValueError`` if it is no play of the variant, or text
        without a card such as ``","``. A bare number is no play: the error points to ``play_action``,
        which takes action ids."""
        if isinstance(cards, np.ndarray):
            cards = cards.tolist()
        if isinstance(cards, (int, np.integer)) and not isinstance(cards, bool):
            raise ValueError(
                f"a play is card text such as '3C 3D', a list of cards, or 'pass'; got the number {int(cards)}: "
                f"to play an action id, call game.play_action({int(cards)}) (ids 0..{self.action_table.size - 1}; "
                "game.legal_actions() lists the legal ones)"
            )
        if cards is not None and (isinstance(cards, (bytes, bytearray)) or not isinstance(cards, (str, Sequence))):
            raise ValueError(f"a play is card text such as '3C 3D', a list of cards, or 'pass'; got {cards!r}")
        parsed = parse_play(cards)
        if not parsed:
            return 0
        try:
            return self.action_table.encode(parsed)
        except ValueError:
            kinds = ", ".join(k for k in self.action_table.counts_by_kind() if k != "pass")
            text = " ".join(self._sorted(parsed))
            raise ValueError(f"{text} is not a play in variant {self.variant.name!r}; plays are: {kinds}") from None

    def play_action(self, action: int) -> StepResult:
        """Play an action id for the seat to act (the environments' way in). An illegal one
        raises ``ValueError`` saying why and changes nothing. Returns the engine's report."""
        S = self.engine.state
        if S.over[0]:
            raise ValueError("the match is over; call reset() to start a new one")
        action = self._action_id(action)
        seat = int(S.current[0])
        self._act[0] = action
        try:
            result, obs = self.engine.step_observe(self._act)
        except ValueError:
            raise ValueError(self._illegal_message(seat, action)) from None
        self._kept[:] = obs[0]
        self._kept_at = self.engine.changes
        self._plays.append((seat, int(action)))
        if S.game_over[0]:
            payoffs = tuple(float(x) + 0.0 for x in S.payoffs[0])  # + 0.0: no -0.0 for the winner
            self._finished.append((int(S.games_played[0]), int(S.winner[0]), payoffs, self._plays))
            if not S.over[0]:
                self._plays = []
                self._deals.append(S.hands[0].copy())
        return result

    def observation(self, seat: int | None = None) -> np.ndarray:
        """What ``seat`` (default: the seat to act) may know now, as a new float32 array in the
        engine's layout (``bigtwo.env.engine.observation``; ``Engine.observe``). ``ValueError`` for a seat
        that is not ``0 .. players - 1``, or for the default once the match is over.

        >>> g = Game("taiwan", seed=1)
        >>> g.observation().shape, bool((g.observation(0) == g.engine.observe(np.array([0]))[0]).all())
        ((623,), True)
        """
        if seat is None:
            seat = self.current_player
            if seat is None:
                raise ValueError(f"the match is over: no seat is to act; name a seat 0..{self.players - 1}")
        elif not is_seat(seat, self.players):
            raise ValueError(f"seat must be a seat number 0..{self.players - 1}, got {seat!r}")
        return self._observation(int(seat))

    def _observation(self, seat: int) -> np.ndarray:
        """``observation(seat)`` for a checked seat: the one kept from the last play when it is still
        current (the engine unchanged since, and ``seat`` the one to act), else computed now."""
        if self._kept_at == self.engine.changes and seat == self.engine.state.current[0]:
            return self._kept.copy()
        self._seat_buf[0] = seat
        out = np.empty(self.engine.obs_size, np.float32)
        self.engine.observe(self._seat_buf, out.reshape(1, -1))
        return out

    def cards_of(self, action: int) -> list[str]:
        """The cards of action id ``action``, in card order (``[]`` for pass)."""
        return self._action_texts(self._action_id(action))

    def is_legal(self, action: int) -> bool:
        """Whether action id ``action`` is legal for the seat to act."""
        S = self.engine.state
        legal = S.legal[0, : S.legal_n[0]]
        i = int(np.searchsorted(legal, action))
        return i < len(legal) and int(legal[i]) == action

    def explain_illegal(self, action: int) -> str | None:
        """Why action id ``action`` is illegal now, or ``None`` if it is legal."""
        action = self._action_id(action)
        if self.is_over:
            return "the match is over"
        if self.is_legal(action):
            return None
        return self.engine.explain_illegal(0, action)

    def _action_id(self, action: Any) -> int:
        return action_id(action, self.action_table.size)

    def _illegal_message(self, seat: int, action: int) -> str:
        why = self.explain_illegal(action) or "not a legal play here"
        return f"seat {seat} cannot play {' '.join(self._action_texts(action)) or 'pass'}: {why}"

    # ------------------------------------------------------------ results

    @property
    def is_over(self) -> bool:
        """Whether the match is over (its last game has a winner)."""
        return bool(self.engine.state.over[0])

    @property
    def winner(self) -> int | None:
        """Winner of the last finished game, ``None`` before any game ends."""
        return self._finished[-1][1] if self._finished else None

    @property
    def payoffs(self) -> list[float] | None:
        """Per-seat payoffs of the last finished game (scoring units), ``None`` before any ends."""
        return list(self._finished[-1][2]) if self._finished else None

    @property
    def scores(self) -> list[float]:
        """Per-seat payoffs summed over the match so far."""
        return [float(x) + 0.0 for x in self.engine.state.match_scores[0]]

    @property
    def game_number(self) -> int:
        """Number of the game being played (1 for the first); the last one once the match is over."""
        S = self.engine.state
        return int(S.games_played[0]) + (0 if S.over[0] else 1)

    @property
    def history(self) -> list[tuple[int, list[str]]]:
        """``(seat, cards)`` of every turn of the current game, passes as ``[]``."""
        return self._decode(self._plays)

    @property
    def seed(self) -> int:
        """The match's seed (drawn when none was given): its deals come from it."""
        return int(self.engine.state.seeds[0])

    @property
    def deals(self) -> list[list[list[str]]]:
        """Each game's hands as dealt (per seat, in card order), the current game's last."""
        return [[self._mask_texts(int(m)) for m in deal] for deal in self._deals]

    def to_record(self, **info: Any) -> dict[str, Any]:
        """This match as a game record (``bigtwo.env.records.record``); ``info`` adds fields such as ``seats``."""
        from bigtwo.env.records.record import game_to_record

        return game_to_record(self, **info)

    @classmethod
    def from_record(cls, record: dict[str, Any] | str | Path) -> Game:
        """The match a game record (a dict, or a JSON file's path) describes, replayed through the
        engine to where the record ends; ``ValueError`` naming what does not fit."""
        from bigtwo.env.records.record import game_from_record

        return game_from_record(record)

    @property
    def results(self) -> list[GameResult]:
        """The finished games of this match, in order."""
        return [GameResult(n, w, p, self._decode(plays)) for n, w, p, plays in self._finished]

    # ------------------------------------------------------------ text

    def _sorted(self, cards: Sequence[int]) -> list[str]:
        return [self._texts[c] for c in sorted((int(c) for c in cards), key=self._order.__getitem__)]

    def _mask_texts(self, mask: int) -> list[str]:
        return self._sorted(mask_to_cards(mask))

    def _action_texts(self, action: int) -> list[str]:
        return self._sorted([c for c in self.action_table.cards[action] if c >= 0])

    def _decode(self, plays: list[tuple[int, int]]) -> list[tuple[int, list[str]]]:
        return [(seat, self._action_texts(a)) for seat, a in plays]

    def __str__(self) -> str:
        from bigtwo.env.envs.render import render_text

        return render_text(self)

    def _repr_html_(self) -> str:
        from bigtwo.env.envs.render import render_html

        return render_html(self)

    def __repr__(self) -> str:
        state = "over" if self.is_over else f"seat {self.current_player} to play"
        return f"Game({self.variant.name!r}, game {self.game_number} of {self.variant.games}, {state})"


def _single(message: str) -> str:
    """An engine message about match 0, without the batch's match number."""
    return message.removeprefix("match 0: ")
