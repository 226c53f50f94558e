"""A room of the web table: seats (people or agents), one match at a time, the engine as referee.

A room holds 2-4 seats, each a person (who opens the seat's secret link) or an agent (any name
``agents.make_agent`` takes). Every play goes through the engine (``bigtwo_env.game.Game``):
an out-of-turn, illegal or malformed play raises ``RoomError`` saying why, and changes nothing.
Each accepted play is stored (``bigtwo_web.store``) before the room changes, so a restarted
server rebuilds the room by replaying the stored plays (``Room.restore``).

**Who plays a turn.** An agent seat plays after ``pace`` seconds. A person seat waits for its
person while at least one of their connections is open. The online room's rule: when a person's
connection drops, the game goes on; once they have been away ``away_timeout`` seconds, a
stand-in agent (``stand_in``) plays their turns, each after ``pace``; when they reconnect with
the same link, the seat is theirs again from the next turn. A seat whose link was never opened
counts as away from the room's start (or the server's restart).

**What a seat sees** (``Room.view``): the public table (seats, connection states, cards left,
the play to beat, the current trick, scores, finished games with the cards they ended with) and
its own hand and legal plays; a spectator sees the public part only. A view never holds a card
of another seat's hand.

>>> from agents.registry import make_agent
>>> room = Room("r1", Room.setup_for("taiwan", ["greedy", "greedy", "greedy", "person"], seed=4),
...             agents=lambda spec, variant: make_agent(spec, variant, seed=0), clock=lambda: 0.0)
>>> room.to_act, room.seats[3].kind
(3, 'person')
>>> room.play(1, "3C")
Traceback (most recent call last):
bigtwo_web.room.RoomError: not your turn: seat 3 (player 1) is to act, you are seat 1
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agents.base import Agent
from bigtwo_env.game import Game
from bigtwo_env.variant import Variant, load_variant

from .store import Store, StoredRoom

PERSON = "person"
DEFAULT_PACE = 0.8  # seconds an agent waits before it plays, so people can follow
DEFAULT_AWAY = 30.0  # seconds a person may be away before a stand-in agent plays for them
MAX_PACE = 10.0

AgentSource = Callable[[str, Variant], Agent]


class RoomError(ValueError):
    """A request the room refuses; the message says why and what is allowed."""


@dataclass
class Seat:
    """One seat: who sits there and, for a person, their link's token and connection state."""

    index: int
    kind: str  # "person" or an agent name
    name: str
    token: str
    connections: int = 0
    away_since: float | None = 0.0  # clock time the person left (None: connected)

    @property
    def person(self) -> bool:
        return self.kind == PERSON


@dataclass
class Move:
    """One accepted turn of the current match."""

    seq: int  # 0, 1, ... within the match
    seat: int
    cards: list[str]  # [] for a pass
    by: str  # "person", "agent" or "stand-in"
    game: int  # the game of the match it belongs to
    lead: bool  # whether it was played to an empty table (a new trick)


@dataclass
class AgentTurn:
    """What an agent needs to choose one play, taken from the room at ``seq``."""

    seq: int
    seat: int
    by: str
    agent: Agent
    obs: np.ndarray
    ids: np.ndarray
    counts: np.ndarray


@dataclass
class Room:
    """A room (see the module docstring). ``setup``: as ``setup_for`` makes it (and the store
    keeps); ``agents(spec, variant)`` builds or reuses an agent; ``store``: where plays go."""

    id: str
    setup: dict[str, Any]
    agents: AgentSource
    store: Store | None = None
    clock: Callable[[], float] = time.monotonic
    seats: list[Seat] = field(init=False)
    variant: Variant = field(init=False)
    game: Game = field(init=False)
    match: int = field(init=False, default=0)
    moves: list[Move] = field(init=False, default_factory=list)
    finished: list[Game] = field(init=False, default_factory=list)
    last_change: float = field(init=False, default=0.0)
    spectators: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        self.variant = Variant().replace(**self.setup["variant"])
        now = self.clock()
        self.seats = [
            Seat(i, s["kind"], s["name"], s["token"], away_since=now) for i, s in enumerate(self.setup["seats"])
        ]
        self.pace = float(self.setup["pace"])
        self.away_timeout = float(self.setup["away_timeout"])
        self.stand_in = str(self.setup["stand_in"])
        self.last_change = now
        if self.setup.get("start", True):
            self.new_match(self.setup.get("seed"))

    # ------------------------------------------------------------ set-up

    @staticmethod
    def setup_for(
        variant: Variant | str,
        seats: list[str],
        names: list[str] | None = None,
        pace: float = DEFAULT_PACE,
        away_timeout: float = DEFAULT_AWAY,
        stand_in: str = "heuristic",
        seed: int | None = None,
        **overrides: Any,
    ) -> dict[str, Any]:
        """A room's set-up: ``seats`` one ``"person"`` or agent name per seat (checked by the
        caller against the agents it can build), each person seat given a fresh secret token."""
        var = load_variant(variant, **overrides)
        if len(seats) != var.players:
            raise RoomError(f"variant {var.name!r} has {var.players} seats; {len(seats)} were given")
        if not all(isinstance(s, str) and s.strip() for s in seats):
            raise RoomError(f"each seat is 'person' or an agent name, got {seats!r}")
        if names is not None and (len(names) != len(seats) or not all(isinstance(n, str) for n in names)):
            raise RoomError(f"names must be {len(seats)} texts, one per seat; got {names!r}")
        pace, away_timeout = float(pace), float(away_timeout)
        if not 0 <= pace <= MAX_PACE:
            raise RoomError(f"pace must be 0..{MAX_PACE:g} seconds, got {pace:g}")
        if not 0 <= away_timeout <= 3600:
            raise RoomError(f"away_timeout must be 0..3600 seconds, got {away_timeout:g}")
        people = 0
        out = []
        for i, kind in enumerate(seats):
            kind = kind.strip()
            if kind == PERSON:
                people += 1
            default = f"player {people}" if kind == PERSON else kind
            name = (names[i].strip() if names else "") or default
            out.append({"kind": kind, "name": name[:40], "token": secrets.token_urlsafe(16)})
        return {
            "variant": var.to_dict(),
            "seats": out,
            "pace": pace,
            "away_timeout": away_timeout,
            "stand_in": stand_in,
            "seed": seed,
        }

    @property
    def watch(self) -> bool:
        """A watch room: agents only."""
        return not any(s.person for s in self.seats)

    def new_match(self, seed: int | None = None) -> None:
        """Deal a new match (from ``seed``, else fresh entropy) and store its start."""
        if self.match:
            self.finished.append(self.game)
        self.game = Game(self.variant, seed=seed)
        self.match += 1
        self.moves = []
        if self.store is not None:
            self.store.add_match(self.id, self.match, self.game.seed)
        self.last_change = self.clock()

    def next_match(self, seat: int | None) -> None:
        """Start the next match once this one is over (a seated person, or anyone in a watch room)."""
        if not self.game.is_over:
            raise RoomError("the match is still being played; a new match starts once it is over")
        if seat is None and not self.watch:
            raise RoomError("only a seated player can start the next match; open a seat's link")
        self.new_match()

    @classmethod
    def restore(cls, stored: StoredRoom, agents: AgentSource, store: Store | None, clock: Callable[[], float]) -> Room:
        """A stored room rebuilt where it stood: each match replayed through the engine."""
        room = cls(stored.id, {**stored.setup, "start": False}, agents, None, clock)
        for number, seed, plays in stored.matches:
            room.new_match(seed)
            room.match = number
            for p in plays:
                if p.seq != len(room.moves) or p.seat != room.to_act:
                    raise ValueError(f"room {stored.id} match {number}: stored play {p.seq} does not follow the game")
                room._apply(p.seat, room.game.encode(p.cards), p.by)
        room.store = store
        return room

    # ------------------------------------------------------------ seats and links

    def seat_for_token(self, token: str) -> int:
        """The person seat this token opens; ``RoomError`` if none of this room's does."""
        for s in self.seats:
            if s.person and secrets.compare_digest(s.token, str(token)):
                return s.index
        raise RoomError(f"this link's token opens no seat of room {self.id}; without a token you watch as a spectator")

    def connect(self, seat: int | None) -> None:
        """A connection opened for ``seat`` (``None``: a spectator)."""
        if seat is None:
            self.spectators += 1
            return
        s = self.seats[seat]
        s.connections += 1
        s.away_since = None
        self.last_change = self.clock()

    def disconnect(self, seat: int | None) -> None:
        """A connection for ``seat`` closed; with none left, the person is away from now."""
        if seat is None:
            self.spectators = max(0, self.spectators - 1)
            return
        s = self.seats[seat]
        s.connections = max(0, s.connections - 1)
        if s.connections == 0:
            s.away_since = self.clock()

    def set_pace(self, seat: int | None, seconds: Any) -> None:
        """Change how long agents wait before playing (anyone in a watch room, else a seated person)."""
        if seat is None and not self.watch:
            raise RoomError("only a seated player can change the pace of a room with people")
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 <= seconds <= MAX_PACE:
            raise RoomError(f"pace is a number of seconds 0..{MAX_PACE:g}, got {seconds!r}")
        self.pace = float(seconds)

    # ------------------------------------------------------------ turns

    @property
    def to_act(self) -> int | None:
        """The seat to play, ``None`` once the match is over."""
        return self.game.current_player

    def controller(self, now: float | None = None) -> str | None:
        """Who plays the current turn: ``person``, ``agent``, ``stand-in`` (an agent for an away
        person, once ``away_timeout`` has passed) or ``waiting`` (an away person, before that)."""
        seat = self.to_act
        if seat is None:
            return None
        s = self.seats[seat]
        if not s.person:
            return "agent"
        if s.away_since is None:
            return PERSON
        now = self.clock() if now is None else now
        return "stand-in" if now - s.away_since >= self.away_timeout else "waiting"

    def agent_due(self, now: float | None = None) -> float | None:
        """Clock time the next agent play is due, ``None`` while a connected person is to act
        (or the match is over)."""
        seat = self.to_act
        if seat is None:
            return None
        s = self.seats[seat]
        if not s.person:
            return self.last_change + self.pace
        if s.away_since is None:
            return None
        return max(s.away_since + self.away_timeout, self.last_change + self.pace)

    def play(self, seat: int | None, cards: Any, seq: Any = None) -> Move:
        """A person's play for ``seat``: ``cards`` as text (``"3C 3D"``, ``"pass"``). ``seq``: the
        number of plays of the match the person saw (a stale or repeated message is refused)."""
        if seat is None:
            raise RoomError("spectators cannot play; open a seat's link to play")
        if self.game.is_over:
            raise RoomError("the match is over; start the next match to play again")
        if seq is not None and (isinstance(seq, bool) or not isinstance(seq, int)):
            raise RoomError(f"seq is the number of plays you saw (an integer), got {seq!r}")
        if seq is not None and seq != len(self.moves):
            raise RoomError(f"this play was made at play {seq}, but the match is at play {len(self.moves)}: not played")
        to_act = self.to_act
        if seat != to_act:
            raise RoomError(f"not your turn: seat {to_act} ({self.seats[to_act].name}) is to act, you are seat {seat}")
        if not isinstance(cards, str):
            raise RoomError(f"cards are text such as '3C 3D' or 'pass', got {cards!r}")
        try:
            action = self.game.encode(cards)
        except ValueError as exc:
            raise RoomError(str(exc)) from None
        why = self.game.explain_illegal(action)
        if why is not None:
            raise RoomError(f"you cannot play {' '.join(self.game.cards_of(action)) or 'pass'}: {why}")
        return self._apply(seat, action, PERSON)

    def agent_turn(self, now: float | None = None) -> AgentTurn | None:
        """The agent play due now (inputs copied, so it may be chosen in another thread), or ``None``."""
        now = self.clock() if now is None else now
        due = self.agent_due(now)
        if due is None or due > now:
            return None
        seat = self.to_act
        assert seat is not None
        s = self.seats[seat]
        by, spec = ("agent", s.kind) if not s.person else ("stand-in", self.stand_in)
        ids, counts = self.game.engine.legal_actions()
        obs = self.game.engine.observe()
        return AgentTurn(
            len(self.moves),
            seat,
            by,
            self.agents(spec, self.variant),
            obs[:1].copy(),
            ids[:1].copy(),
            counts[:1].copy(),
        )

    def finish_agent_turn(self, turn: AgentTurn, action: int) -> Move | None:
        """Play the agent's ``action`` if the room is still where ``turn`` was taken (else ``None``:
        the person came back and played, or the turn passed)."""
        if turn.seq != len(self.moves) or self.to_act != turn.seat or self.controller() not in ("agent", "stand-in"):
            return None
        if self.game.explain_illegal(action) is not None:
            raise ValueError(f"agent {turn.agent.name!r} chose an illegal play for seat {turn.seat}")
        return self._apply(turn.seat, action, turn.by)

    def _apply(self, seat: int, action: int, by: str) -> Move:
        game = self.game
        cards = game.cards_of(action)
        lead = not game.table
        number = game.game_number
        move = Move(len(self.moves), seat, cards, by, number, lead)
        if self.store is not None:  # stored first: nobody hears of a play the file does not hold
            self.store.add_play(self.id, self.match, move.seq, seat, " ".join(cards) or "pass", by)
        game.play_action(action)
        self.moves.append(move)
        self.last_change = self.clock()
        return move

    # ------------------------------------------------------------ what a seat sees

    def view(self, seat: int | None, now: float | None = None) -> dict[str, Any]:
        """The room as ``seat`` sees it (``None``: a spectator); see the module docstring."""
        now = self.clock() if now is None else now
        g = self.game
        to_act = self.to_act
        controller = self.controller(now)
        game_no = g.game_number
        current = [m for m in self.moves if m.game == game_no and not g.is_over]
        trick: list[Move] = []
        for m in current:
            trick = [m] if m.lead else [*trick, m]
        seats = []
        for s in self.seats:
            if not s.person:
                connection = "agent"
            elif s.away_since is None:
                connection = "connected"
            else:
                connection = "stand-in" if now - s.away_since >= self.away_timeout else "away"
            seats.append(
                {
                    "seat": s.index,
                    "name": s.name,
                    "kind": PERSON if s.person else "agent",
                    "agent": None if s.person else s.kind,
                    "connection": connection,
                    "cards_left": g.cards_left[s.index],
                    "score": g.scores[s.index],
                }
            )
        results = []
        for r, deal in zip(g.results, g.deals, strict=False):
            played = [set() for _ in self.seats]
            for who, cards in r.history:
                played[who].update(cards)
            left = [[c for c in hand if c not in played[i]] for i, hand in enumerate(deal)]
            results.append({"number": r.number, "winner": r.winner, "payoffs": list(r.payoffs), "hands_left": left})
        last = self.moves[-1] if self.moves else None
        mine = seat is not None and seat == to_act and controller == PERSON
        stand_in_at = None
        if controller == "waiting":
            stand_in_at = round(self.seats[to_act].away_since + self.away_timeout - now, 1)  # type: ignore[operator]
        return {
            "type": "state",
            "room": self.id,
            "match": self.match,
            "seq": len(self.moves),
            "variant": {k: self.variant.to_dict()[k] for k in ("name", "players", "games", "scoring", "description")},
            "you": seat,
            "seats": seats,
            "to_act": to_act,
            "controller": controller,
            "stand_in_in": stand_in_at,
            "game": game_no,
            "games": self.variant.games,
            "direction": g.direction,
            "opening_card": g.opening_card,
            "table": None
            if not g.table or g.is_over
            else {"cards": g.table, "seat": g.table_player, "kind": g.table_kind},
            "trick": [{"seat": m.seat, "cards": m.cards, "by": m.by} for m in trick],
            "last_move": None
            if last is None
            else {"seq": last.seq, "seat": last.seat, "cards": last.cards, "by": last.by, "game": last.game},
            "hand": None if seat is None else g.hands[seat],
            "legal": g.legal_plays() if mine else None,
            "results": results,
            "scores": g.scores,
            "over": g.is_over,
            "pace": self.pace,
            "away_timeout": self.away_timeout,
            "watch": self.watch,
            "spectators": self.spectators,
        }

    def summary(self) -> dict[str, Any]:
        """A line of the lobby's room list: public only."""
        return {
            "room": self.id,
            "variant": self.variant.name,
            "seats": [{"name": s.name, "kind": PERSON if s.person else "agent"} for s in self.seats],
            "match": self.match,
            "plays": len(self.moves),
            "over": self.game.is_over,
            "finished_matches": [i + 1 for i in range(len(self.finished))]
            + ([self.match] if self.game.is_over else []),
            "watch": self.watch,
        }

    def record(self, match: int) -> dict[str, Any]:
        """The game record of a finished match (``bigtwo_env.record``); ``RoomError`` for one still
        being played (its record shows every hand) or one the room never had."""
        if not 1 <= match <= self.match:
            raise RoomError(f"room {self.id} has matches 1..{self.match}, not {match}")
        game = self.finished[match - 1] if match < self.match else self.game
        if not game.is_over:
            raise RoomError(f"match {match} is still being played; its record (every hand) is shown once it is over")
        info = {"room": self.id, "match": match}
        return game.to_record(seats=[s.name for s in self.seats], info=info)
