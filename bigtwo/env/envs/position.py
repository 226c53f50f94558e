"""A position as one seat knows it, and a game loaded at it, so that any agent can be asked its play.

"I hold these cards, this is on the table, these were played: what do I play?" A ``Position`` holds
what the seat to act knows: its own hand, the cards each seat has played this game, the other seats'
card counts, the play on the table and who made it, and optionally the game's moves so far. Seats
are *relative*: 0 is you, 1 the next seat in play order, ..., ``players - 1`` the seat before you.

``Position.game(seed)`` loads it into a :class:`~bigtwo.env.Game` whose seat 0 is to act. The
other seats' hands are not known, so they are dealt from the cards you have not seen (each seat
exactly as many as it holds), at random from ``seed``. That is sound for every agent of the kit:
an agent reads only the acting seat's observation (its hand, what was played, the counts, the
table, the recent moves), never another seat's hand, so the invented hands cannot change its play.
A search agent such as ``strong`` deals its own guesses of the hidden hands from the observation.
So ``agent.choose(position.game())`` is the agent's play in the position (``bigtwo suggest`` on the
command line).

What is derived when not given: the passes since the table play (every seat between its maker and
you passed: ``players - 1 - table_by``); each seat's cards left (the variant's deal less what it
played: give ``left`` when you did not note every card played); the opening duty (the game's first
play must hold the variant's opening card); the recent moves and the weakest play each seat passed
on, from ``history`` when given (the observation shows the last 8 moves).

>>> pos = Position.parse("taiwan", hand="3D 5H 9C 9D KS 2S", table="8S", table_by=3,
...                      played={1: "3C 4C 5C 6C 7C JD", 2: "4H 4S 10S 10H", 3: "5S 8S"})
>>> pos.left, pos.passes
((6, 7, 9, 11), 0)
>>> game = pos.game(seed=0)
>>> game.current_player, game.table, game.cards_left
(0, ['8S'], [6, 7, 9, 11])
>>> game.legal_plays()[:3]
[[], ['9D'], ['9C']]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bigtwo.env.engine.kernels import HISTORY, SIZE_SLOTS
from bigtwo.env.envs.game import Game
from bigtwo.env.rules.actions import action_table
from bigtwo.env.rules.cards import NUM_CARDS, card_texts, cards_to_mask, parse_cards
from bigtwo.env.rules.combos import PLAY_SIZES
from bigtwo.env.rules.variant import Variant, load_variant

__all__ = ["Move", "Position"]

Move = tuple[int, tuple[int, ...]]  # (relative seat, card ids; () a pass)


def _seat(value: Any, players: int, what: str) -> int:
    """A relative seat 1..players-1 (``what`` names the field in the error)."""
    try:
        seat = int(value)
    except (TypeError, ValueError):
        seat = -1
    if isinstance(value, bool) or seat != value or not 1 <= seat < players:
        raise ValueError(
            f"{what}: a seat is counted from yours in play order, 1 (the next seat) .. {players - 1} "
            f"(the seat before you), got {value!r}"
        )
    return seat


def _cards(value: Any, what: str) -> tuple[int, ...]:
    try:
        return tuple(parse_cards(value))
    except ValueError as exc:
        raise ValueError(f"{what}: {exc}") from None


@dataclass(frozen=True)
class Position:
    """What the seat to act knows of its game; see the module docstring. Build it with ``parse``."""

    variant: Variant
    hand: tuple[int, ...]  # your cards
    played: tuple[tuple[int, ...], ...]  # per relative seat: its cards played this game
    left: tuple[int, ...]  # per relative seat: cards it holds (yours: len(hand))
    table: tuple[int, ...]  # the play to beat (() when you lead)
    table_by: int  # the relative seat that made it (-1 when you lead)
    passes: int  # passes since it
    history: tuple[Move, ...]  # this game's moves, oldest first (may be only the last ones, or none)
    opening: int  # the card your play must hold (the game's first play), -1 none

    @classmethod
    def parse(
        cls,
        variant: Variant | str | Path,
        hand: Any,
        table: Any = "",
        table_by: int | None = None,
        played: Mapping[int, Any] | None = None,
        left: Mapping[int, int] | None = None,
        history: Sequence[tuple[int, Any]] | None = None,
        first_play: bool | None = None,
    ) -> Position:
        """A position from text or card lists, checked: ``hand`` (``"3D 5H ..."``), ``table`` (the play to
        beat, empty when you lead) made by relative seat ``table_by`` (default: the last play in
        ``history``, else the seat before you), ``played`` (relative seat to its cards played this game;
        seat 0 is yours), ``left`` (relative seat to its card count; default its deal less its plays),
        ``history`` (``(seat, cards)`` moves of this game, oldest first, ``""`` or ``"pass"`` a pass),
        ``first_play`` (whether this is the game's first play, so it must hold the opening card; default:
        when nothing was played). ``ValueError`` naming what is wrong and what is allowed."""
        v = load_variant(variant)
        players, cpp = v.players, v.cards_per_player
        table_ids = action_table(v)
        own = _cards(hand, "hand")
        if not own:
            raise ValueError("hand: you hold no card (a game with an empty hand is over)")
        moves: list[Move] = []
        for i, move in enumerate(history or ()):
            if not isinstance(move, (tuple, list)) or len(move) != 2:
                raise ValueError(f"history[{i}]: a move is (seat, cards), e.g. (3, '8S') or (1, 'pass'), got {move!r}")
            seat = 0 if move[0] == 0 else _seat(move[0], players, f"history[{i}]")
            cards = () if str(move[1]).strip().lower() == "pass" else _cards(move[1], f"history[{i}]")
            if cards:
                try:
                    table_ids.encode(list(cards))
                except ValueError as exc:
                    raise ValueError(f"history[{i}]: {exc}") from None
            moves.append((seat, cards))
        on_table = _cards(table, "table")
        if not on_table and table_by is None and moves:  # the table from the history's last play, if it stands
            for passes_since, (seat, cards) in enumerate(reversed(moves)):
                if cards:
                    if passes_since < players - 1 and seat != 0:
                        on_table, table_by = cards, seat
                    break
        if on_table:
            try:
                table_ids.encode(list(on_table))
            except ValueError as exc:
                raise ValueError(f"table: {exc}") from None
            by = players - 1 if table_by is None else _seat(table_by, players, "table_by")
        elif table_by is not None:
            raise ValueError("table_by names who made the play on the table: give table too (empty table: you lead)")
        else:
            by = -1
        seats_played: list[set[int]] = [set() for _ in range(players)]
        for k, cards in (played or {}).items():
            seat = 0 if k == 0 else _seat(k, players, "played")
            seats_played[seat] |= set(_cards(cards, f"played[{k}]"))
        for seat, cards in moves:
            seats_played[seat] |= set(cards)
        if on_table:
            seats_played[by] |= set(on_table)
        held = set(own)
        seen = set(own)
        for seat, taken in enumerate(seats_played):
            clash = taken & held
            if clash:
                raise ValueError(
                    f"{' '.join(card_texts(sorted(clash)))}: in your hand and played by seat {seat}: a card is in one place"
                )
            for other in range(seat):
                both = taken & seats_played[other]
                if both:
                    raise ValueError(f"{' '.join(card_texts(sorted(both)))}: played by seats {other} and {seat}")
            seen |= taken
        counts = [len(own)] + [cpp - len(seats_played[k]) for k in range(1, players)]
        for k, n in (left or {}).items():
            seat = _seat(k, players, "left")
            if (
                isinstance(n, bool)
                or not isinstance(n, (int, np.integer))
                or not 1 <= n <= cpp - len(seats_played[seat])
            ):
                raise ValueError(
                    f"left[{k}]: seat {seat} played {len(seats_played[seat])} cards of {cpp}, so it holds "
                    f"1..{cpp - len(seats_played[seat])}, got {n!r}"
                )
            counts[seat] = int(n)
        if len(own) + len(seats_played[0]) > cpp:
            raise ValueError(
                f"hand: {len(own)} cards held and {len(seats_played[0])} played is more than the {cpp} dealt"
            )
        for seat in range(1, players):
            if counts[seat] < 1:
                raise ValueError(
                    f"played[{seat}]: seat {seat} played all its {cpp} cards, so the game is over: give fewer cards "
                    "played, or its count with left"
                )
        unseen = NUM_CARDS - len(seen)
        if sum(counts[1:]) > unseen:
            raise ValueError(
                f"the other seats hold {sum(counts[1:])} cards but only {unseen} are unseen: check played and left"
            )
        nothing_played = not any(seats_played)
        if first_play is None:
            first_play = nothing_played
        opening = -1
        if first_play:
            if not nothing_played or on_table:
                raise ValueError("first_play: the game's first play comes before any card is played")
            card = v.opening_card_id
            if card < 0:  # opening_card: lowest: you lead, so you hold the lowest card dealt
                card = min(own, key=v.card_values().__getitem__)
            if card not in held:
                raise ValueError(
                    f"hand: the game's first play must hold {card_texts([card])[0]} (opening_card), and you lead it: "
                    "it must be in your hand (or say it is not the game's first play: first_play=False, --not-first-play)"
                )
            opening = card
        return cls(
            v,
            tuple(sorted(own)),
            tuple(tuple(sorted(s)) for s in seats_played),
            tuple(counts),
            tuple(sorted(on_table)),
            by,
            players - 1 - by if on_table else 0,
            tuple(moves),
            opening,
        )

    def _recent(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The engine's ``hist_action``, ``hist_seat`` (most recent first) and ``passed_on`` from the history."""
        table = action_table(self.variant)
        players = self.variant.players
        ids = [(seat, table.encode(list(cards)) if cards else 0) for seat, cards in self.history]
        recent = ids[::-1][:HISTORY]
        hist_action = np.array([a for _, a in recent], np.int64)
        hist_seat = np.array([s for s, _ in recent], np.int64)
        passed_on = np.zeros((players, SIZE_SLOTS), np.int64)
        on_table, passes = 0, 0
        for seat, action in ids:
            if action:
                on_table, passes = action, 0
            elif on_table:
                slot = PLAY_SIZES.index(int(table.sizes[on_table]))
                if passed_on[seat, slot] == 0 or on_table < passed_on[seat, slot]:  # ids rise with strength
                    passed_on[seat, slot] = on_table
                passes += 1
                if passes == players - 1:
                    on_table, passes = 0, 0
        return hist_action, hist_seat, passed_on

    def game(self, seed: int | None = 0) -> Game:
        """A ``Game`` at this position, seat 0 (you) to act; the other seats' hands dealt from the cards you have
        not seen, at random from ``seed`` (agents read only your observation: see the module docstring)."""
        players = self.variant.players
        rng = np.random.default_rng(seed)
        seen = set(self.hand).union(*self.played)
        unseen = rng.permutation([c for c in range(NUM_CARDS) if c not in seen])
        hands = np.zeros(players, np.uint64)
        hands[0] = cards_to_mask(self.hand)
        start = 0
        for seat in range(1, players):
            hands[seat] = cards_to_mask(int(c) for c in unseen[start : start + self.left[seat]])
            start += self.left[seat]
        hist_action, hist_seat, passed_on = self._recent()
        game = Game(self.variant, seed=seed)
        game.engine.set_position(
            0,
            hands=hands,
            played=np.array([cards_to_mask(p) for p in self.played], np.uint64),
            current=0,
            table_action=action_table(self.variant).encode(list(self.table)) if self.table else 0,
            table_seat=self.table_by,
            passes=self.passes,
            opening=self.opening,
            hist_action=hist_action,
            hist_seat=hist_seat,
            passed_on=passed_on,
        )
        return game

    def describe(self) -> str:
        """The position as you see it, in one short block of text (no hidden hand: there is none)."""
        lines = [
            f"variant {self.variant.name}: you are seat 0; seats 1..{self.variant.players - 1} follow in play order"
        ]
        lines.append(f"your hand ({len(self.hand)}): {' '.join(card_texts(self._sorted(self.hand)))}")
        for seat in range(1, self.variant.players):
            shown = " ".join(card_texts(self._sorted(self.played[seat]))) or "-"
            lines.append(f"seat {seat}: {self.left[seat]} cards left; played {shown}")
        if self.table:
            lines.append(
                f"table: {' '.join(card_texts(self._sorted(self.table)))} by seat {self.table_by}, {self.passes} passes since"
            )
        else:
            lines.append(
                "table: empty, you lead"
                + (f" (must hold {card_texts([self.opening])[0]})" if self.opening >= 0 else "")
            )
        return "\n".join(lines)

    def _sorted(self, cards: Sequence[int]) -> list[int]:
        return sorted(cards, key=self.variant.card_values().__getitem__)
