"""A room of the web table: seats (people or agents), one match at a time, the engine as referee.

A room holds 2-4 seats, each a person (who opens the seat's secret link) or an agent (a name
``bigtwo.web.forms.check_agent`` allows; ``bigtwo.agents.registry.make_agent`` builds it). A
room is made from a set-up (``bigtwo.web.forms.setup_for``; a client's form is checked by
``bigtwo.web.forms.room_setup`` first) and is the state machine of its matches: who plays each
turn, what is played, what each seat sees. Every play goes through the engine (``bigtwo.env.envs.game.Game``):
an out-of-turn, illegal or malformed play raises ``RoomError`` saying why, and changes nothing.
Each accepted play is stored (``bigtwo.web.store``) before the room changes, so a restarted
server rebuilds the room by replaying the stored plays (``Room.restore``).

**Who plays a turn.** An agent seat plays after ``pace`` seconds. A person seat waits for its
person while at least one of their connections is open. The online room's rule: when a person's
connection drops, the game goes on; once they have been away ``away_timeout`` seconds, a
stand-in agent (``stand_in``) plays their turns, each after ``pace``; when they reconnect with
the same link, the seat is theirs again from the next turn. A seat whose link was never opened
counts as away from the room's start (or the server's restart). A turn's time away adds up: a
return does not start the away clock again (``turn_away``), and once the stand-in has been
given a turn (``handed``) it plays it, whoever comes back meanwhile, so a seat opened for an
instant now and then cannot hold the room.

**The turn clock.** A connected person has ``turn_timeout`` seconds (0: no clock) for each
turn, counted from the turn's start (a reconnect does not restart it); when it runs out the
stand-in plays that turn for them, so one player who never plays cannot stall the room.

**Who plays a turn, in words** (``Room.controller``, a ``bigtwo.web.states.SeatState``):
``person``, ``agent``, ``stand-in`` or ``waiting`` (an away person, before the stand-in takes
over); each move records who made it (``by``). Seat tokens are kept hashed
(``bigtwo.web.forms.hash_token``): a link opens its seat by its hash (``Room.seat_for_token``).

**What a seat sees** (``Room.view``): the public table (seats, connection states, cards left,
the play to beat, the current trick, scores, finished games with the cards they ended with) and
its own hand and legal plays; a spectator sees the public part only. A view never holds a card
of another seat's hand.

>>> from bigtwo.agents.registry import make_agent
>>> from bigtwo.web.forms import setup_for
>>> room = Room("r1", setup_for("taiwan", ["greedy", "greedy", "greedy", "person"], seed=4),
...             agents=lambda spec, variant: make_agent(spec, variant, seed=0), clock=lambda: 0.0)
>>> room.to_act, room.seats[3].kind
(3, 'person')
>>> room.play(1, "3C")
Traceback (most recent call last):
bigtwo.web.forms.RoomError: not your turn: seat 3 (player 1) is to act, you are seat 1
"""

from __future__ import annotations

import contextlib
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bigtwo.agents.base import Agent
from bigtwo.env.envs.game import Game
from bigtwo.env.rules.variant import Variant, stored_variant
from bigtwo.web.forms import MAX_PACE, RoomError, check_number, hash_token
from bigtwo.web.states import SeatState
from bigtwo.web.store import Store, StoredRoom

MAX_KEPT = 20  # finished matches whose records a room keeps (the default of bigtwo serve --limit matches_per_room)

AgentSource = Callable[[str, Variant], Agent]


@dataclass
class Seat:
    """One seat: who sits there and, for a person, their link's token and connection state."""

    index: int
    kind: str  # "person" or an agent name
    name: str
    token: str  # the hash of the link's token (``hash_token``)
    secret: str | None = None  # the link's token itself: known only to the server that made the room
    connections: int = 0
    away_since: float | None = 0.0  # clock time the person left (None: connected)

    @property
    def person(self) -> bool:
        return self.kind == SeatState.PERSON

    @property
    def holder(self) -> SeatState:
        """Who holds the seat: ``person`` or ``agent`` (a view's and the lobby's ``kind``)."""
        return SeatState.PERSON if self.person else SeatState.AGENT


@dataclass
class Move:
    """One accepted turn of the current match."""

    seq: int  # 0, 1, ... within the match
    seat: int
    cards: list[str]  # [] for a pass
    by: str  # who played it: a ``SeatState``, ``person``, ``agent`` or ``stand-in``
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
    """A room (see the module docstring). ``setup``: as ``bigtwo.web.forms.setup_for`` makes it (and the store
    keeps); ``agents(spec, variant)`` builds or reuses an agent; ``store``: where plays go."""

    id: str
    setup: dict[str, Any]
    agents: AgentSource
    store: Store | None = None
    clock: Callable[[], float] = time.monotonic
    keep: int = MAX_KEPT  # finished matches whose records the room keeps
    seats: list[Seat] = field(init=False)
    variant: Variant = field(init=False)
    game: Game = field(init=False)
    match: int = field(init=False, default=0)
    moves: list[Move] = field(init=False, default_factory=list)
    # the last ``keep`` finished matches' records; ``None``: the store has it (read when asked for)
    finished: dict[int, dict[str, Any] | None] = field(init=False, default_factory=dict)
    last_change: float = field(init=False, default=0.0)  # clock time the current turn began
    spectators: int = field(init=False, default=0)
    # seconds the seat to act was away this turn before its last return (``_away_left``)
    turn_away: float = field(init=False, default=0.0)
    handed: tuple[int, int] | None = field(init=False, default=None)  # (match, seq) of a turn given to the stand-in

    def __post_init__(self) -> None:
        self.variant = stored_variant(self.setup["variant"], "room variant")
        now = self.clock()
        secrets_ = self.setup.get("tokens") or [None] * len(self.setup["seats"])
        self.seats = [
            Seat(i, s["kind"], s["name"], s.get("token_hash") or hash_token(s["token"]), secrets_[i], away_since=now)
            for i, s in enumerate(self.setup["seats"])
        ]
        self.pace = float(self.setup["pace"])
        self.away_timeout = float(self.setup["away_timeout"])
        self.turn_timeout = float(self.setup.get("turn_timeout", 0.0))
        self._results: tuple[tuple[int, int], list[dict[str, Any]]] | None = None
        self.stand_in = str(self.setup["stand_in"])
        self.last_change = now
        if self.setup.get("start", True):
            self.new_match(self.setup.get("seed"))

    # ------------------------------------------------------------ set-up

    @property
    def attended(self) -> bool:
        """Whether a person is connected to one of the room's seats (its agents' plays come first)."""
        return any(s.person and s.connections for s in self.seats)

    @property
    def watch(self) -> bool:
        """A watch room: agents only."""
        return not any(s.person for s in self.seats)

    def new_match(self, seed: int | None = None) -> None:
        """Deal a new match (from ``seed``, else fresh entropy) and store its start, with the
        finished one's record and the trimming of the room's history in the same transaction."""
        self._deal(seed, self._record_of(self.game, self.match) if self.match else None)

    def _deal(self, seed: int | None, record: dict[str, Any] | None = None) -> None:
        """Deal match ``match + 1``; ``record``: the finished match's, kept (see ``new_match``)."""
        game = Game(self.variant, seed=seed)
        if self.store is not None:
            self.store.add_match(self.id, self.match + 1, game.seed, finished=record, keep=self.keep)
        if record is not None:
            self.finished[self.match] = None if self.store is not None else record
            for old in sorted(self.finished)[: max(0, len(self.finished) - self.keep)]:
                del self.finished[old]
        self.game = game
        self.match += 1
        self.moves = []
        self.last_change = self.clock()
        self.turn_away = 0.0

    def next_match(self, seat: int | None) -> None:
        """Start the next match once this one is over (a seated person, or anyone in a watch room)."""
        if not self.game.is_over:
            raise RoomError("the match is still being played; a new match starts once it is over")
        if seat is None and not self.watch:
            raise RoomError("only a seated player can start the next match; open a seat's link")
        self.new_match()

    @classmethod
    def restore(
        cls,
        stored: StoredRoom,
        agents: AgentSource,
        store: Store | None,
        clock: Callable[[], float],
        keep: int = MAX_KEPT,
    ) -> Room:
        """A stored room rebuilt where it stood: the matches stored as plays replayed through the
        engine (its current one; every one of a file of an earlier version, whose finished
        matches' records are then stored), the finished ones kept as records in the store. A
        room stored without a match (none is, since creating one is one transaction) gets its
        first match now."""
        room = cls(stored.id, {**stored.setup, "start": False}, agents, None, clock, keep)
        room.finished = {n: None for n in stored.kept[-keep:]} if store is not None else {}
        earlier: list[int] = []
        for i, (number, seed, plays) in enumerate(stored.matches):
            if i:  # the one before was finished: its record goes to ``finished``
                earlier.append(room.match)
                room.new_match(seed)
            else:
                room.match = number - 1
                room._deal(seed)
            room.match = number
            for p in plays:
                if p.seq != len(room.moves) or p.seat != room.to_act:
                    raise ValueError(f"room {stored.id} match {number}: stored play {p.seq} does not follow the game")
                room._apply(p.seat, room.game.encode(p.cards), p.by)
        room.store = store
        if store is not None:
            for number in earlier:  # an earlier version's finished match: its record stored now, once
                record = room.finished.get(number)
                if record is not None:
                    store.archive(stored.id, number, record, keep=keep)
                    room.finished[number] = None
        if not stored.matches:
            room.match = max(stored.kept, default=0)
            room._deal(stored.setup.get("seed") if not stored.kept else None)
        return room

    # ------------------------------------------------------------ seats and links

    def seat_for_token(self, token: Any) -> int:
        """The person seat this token opens; ``RoomError`` if none of this room's does."""
        try:
            digest = hash_token(token) if isinstance(token, str) else ""
        except UnicodeEncodeError:
            digest = ""
        for s in self.seats:
            if s.person and secrets.compare_digest(s.token, digest):
                return s.index
        raise RoomError(f"this link's token opens no seat of room {self.id}; without a token you watch as a spectator")

    def connect(self, seat: int | None) -> None:
        """A connection opened for ``seat`` (``None``: a spectator)."""
        if seat is None:
            self.spectators += 1
            return
        s = self.seats[seat]
        if s.away_since is not None and seat == self.to_act:  # back: this turn's time away is kept, not reset
            self.turn_away += self.clock() - max(s.away_since, self.last_change)
        s.connections += 1
        s.away_since = None

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
        self.pace = check_number(seconds, "pace", MAX_PACE)

    # ------------------------------------------------------------ turns

    @property
    def to_act(self) -> int | None:
        """The seat to play, ``None`` once the match is over."""
        return self.game.current_player

    def controller(self, now: float | None = None) -> SeatState | None:
        """Who plays the current turn: ``person``, ``agent``, ``stand-in`` (an agent for an away
        person, once ``away_timeout`` has passed, or for a connected one whose turn clock ran
        out) or ``waiting`` (an away person, before that)."""
        seat = self.to_act
        if seat is None:
            return None
        s = self.seats[seat]
        if not s.person:
            return SeatState.AGENT
        if self.handed == (self.match, len(self.moves)):
            return SeatState.STAND_IN
        now = self.clock() if now is None else now
        if s.away_since is None:
            turn_over = self.turn_timeout and now - self.last_change >= self.turn_timeout
            return SeatState.STAND_IN if turn_over else SeatState.PERSON
        return SeatState.STAND_IN if self._away_left(s, now) <= 0 else SeatState.WAITING

    def _away_left(self, s: Seat, now: float) -> float:
        """Seconds until the stand-in plays for the away person ``s`` to act: ``away_timeout`` less
        the time away now and before this turn's returns (a seat opened for an instant now and
        then does not start the away clock again)."""
        assert s.away_since is not None
        return s.away_since + self.away_timeout - self.turn_away - now

    def agent_due(self, now: float | None = None) -> float | None:
        """Clock time the next agent play is due, ``None`` while a connected person without a
        turn clock is to act (or the match is over)."""
        seat = self.to_act
        if seat is None:
            return None
        s = self.seats[seat]
        if not s.person or self.handed == (self.match, len(self.moves)):
            return self.last_change + self.pace
        if s.away_since is None:
            return self.last_change + self.turn_timeout if self.turn_timeout else None
        return max(s.away_since + self.away_timeout - self.turn_away, self.last_change + self.pace)

    def play(self, seat: int | None, cards: Any, seq: Any = None, match: Any = None) -> Move:
        """A person's play for ``seat``: ``cards`` as text (``"3C 3D"``, ``"pass"``). ``seq``: the
        number of plays of the match the person saw, and ``match`` the match they saw (``seq``
        starts again each match): a stale or repeated message, or one of another match, is refused."""
        if seat is None:
            raise RoomError("spectators cannot play; open a seat's link to play")
        if match is not None and (isinstance(match, bool) or not isinstance(match, int)):
            raise RoomError(f"match is the number of the match you saw (the state's match), got {match!r}")
        if match is not None and match != self.match:
            raise RoomError(f"this play was made in match {match}, but the room is at match {self.match}: not played")
        if self.game.is_over:
            raise RoomError("the match is over; start the next match to play again")
        if seq is not None and (isinstance(seq, bool) or not isinstance(seq, int)):
            raise RoomError(f"seq is the number of plays you saw (an integer), got {seq!r}")
        if seq is not None and seq != len(self.moves):
            raise RoomError(f"this play was made at play {seq}, but the match is at play {len(self.moves)}: not played")
        to_act = self.to_act
        assert to_act is not None  # the match is not over (checked above)
        if seat != to_act:
            raise RoomError(f"not your turn: seat {to_act} ({self.seats[to_act].name}) is to act, you are seat {seat}")
        if not isinstance(cards, str) or not cards.strip() or (cards.strip().lower() == "pass" and cards != "pass"):
            raise RoomError(f"cards are text such as '3C 3D', or 'pass' for a pass; got {cards!r}")
        try:
            action = self.game.encode(cards)
        except ValueError as exc:
            raise RoomError(str(exc)) from None
        why = self.game.explain_illegal(action)
        if why is not None:
            raise RoomError(f"you cannot play {' '.join(self.game.cards_of(action)) or 'pass'}: {why}")
        return self._apply(seat, action, SeatState.PERSON)

    def agent_turn(self, now: float | None = None) -> AgentTurn | None:
        """The agent play due now (inputs copied, so it may be chosen in another thread), or ``None``."""
        now = self.clock() if now is None else now
        due = self.agent_due(now)
        if due is None or due > now:
            return None
        seat = self.to_act
        assert seat is not None
        s = self.seats[seat]
        by, spec = (SeatState.AGENT, s.kind) if not s.person else (SeatState.STAND_IN, self.stand_in)
        if by == SeatState.STAND_IN:  # the turn is the stand-in's now: a return takes the seat from the next
            self.handed = (self.match, len(self.moves))
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
        if (
            turn.seq != len(self.moves)
            or self.to_act != turn.seat
            or self.controller() not in (SeatState.AGENT, SeatState.STAND_IN)
        ):
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
        self.turn_away = 0.0
        return move

    # ------------------------------------------------------------ what a seat sees

    def view(self, seat: int | None, now: float | None = None) -> dict[str, Any]:
        """The room as ``seat`` sees it (``None``: a spectator); see the module docstring. The
        keys keep their order: the wire's text is the same for the same room."""
        now = self.clock() if now is None else now
        g = self.game
        turn = self._turn_view(now)
        mine = seat is not None and seat == self.to_act and turn["controller"] == SeatState.PERSON
        return {
            "type": "state",
            "room": self.id,
            "match": self.match,
            "seq": len(self.moves),
            "variant": self._variant_view(),
            "you": seat,
            **turn,
            **self._table_view(),
            "hand": None if seat is None else g.hands[seat],
            "legal": g.legal_plays() if mine else None,
            "results": self._finished_games(),
            "scores": g.scores,
            "over": g.is_over,
            "pace": self.pace,
            "away_timeout": self.away_timeout,
            "watch": self.watch,
            "spectators": self.spectators,
            "your_connections": None if seat is None else self.seats[seat].connections,
        }

    def _variant_view(self) -> dict[str, Any]:
        """What a view shows of the variant: its name, seats, games, scoring and description."""
        rules = self.variant.to_dict()
        return {k: rules[k] for k in ("name", "players", "games", "scoring", "description")}

    def _turn_view(self, now: float) -> dict[str, Any]:
        """A view's seats and turn: each seat's public line, the seat to act, who plays it
        (``controller``) and its clocks: ``stand_in_in``, seconds until the stand-in plays for
        the away person to act, and ``turn_left``, seconds left of a connected person's turn."""
        to_act = self.to_act
        controller = self.controller(now)
        stand_in_in = turn_left = None
        if controller == SeatState.WAITING and to_act is not None:
            stand_in_in = round(self._away_left(self.seats[to_act], now), 1)
        if controller == SeatState.PERSON and self.turn_timeout:
            turn_left = round(max(0.0, self.last_change + self.turn_timeout - now), 1)
        return {
            "seats": [self._seat_view(s, now) for s in self.seats],
            "to_act": to_act,
            "controller": controller,
            "stand_in_in": stand_in_in,
            "turn_left": turn_left,
            "turn_timeout": self.turn_timeout,
        }

    def _seat_view(self, s: Seat, now: float) -> dict[str, Any]:
        """One seat's public line of a view: who holds it, its connection state, cards left, score."""
        return {
            "seat": s.index,
            "name": s.name,
            "kind": s.holder,
            "agent": None if s.person else s.kind,
            "connection": self._connection(s, now),
            "connections": s.connections,
            "cards_left": self.game.cards_left[s.index],
            "score": self.game.scores[s.index],
        }

    def _connection(self, s: Seat, now: float) -> SeatState:
        """A seat's ``connection`` in a view: ``agent``, ``connected`` (its person has a connection
        open), ``stand-in`` (its person away ``away_timeout`` seconds or more) or ``away``."""
        if not s.person:
            return SeatState.AGENT
        if s.away_since is None:
            return SeatState.CONNECTED
        left = self._away_left(s, now) if s.index == self.to_act else s.away_since + self.away_timeout - now
        return SeatState.STAND_IN if left <= 0 else SeatState.AWAY

    def _table_view(self) -> dict[str, Any]:
        """A view's public table: the game of the match, the play to beat, the current trick and
        the last move (of the match: the finished game's last once a game is over)."""
        g = self.game
        last = self.moves[-1] if self.moves else None
        return {
            "seed_chosen": self.setup.get("seed") is not None and self.match == 1,
            "game": g.game_number,
            "games": self.variant.games,
            "direction": g.direction,
            "opening_card": g.opening_card,
            "table": None
            if not g.table or g.is_over
            else {"cards": g.table, "seat": g.table_player, "kind": g.table_kind},
            "trick": [{"seat": m.seat, "cards": m.cards, "by": m.by} for m in self._trick()],
            "last_move": None
            if last is None
            else {"seq": last.seq, "seat": last.seat, "cards": last.cards, "by": last.by, "game": last.game},
        }

    def _trick(self) -> list[Move]:
        """The current trick's moves, its lead first (none once the match is over)."""
        g = self.game
        if g.is_over:
            return []
        start = len(self.moves)  # the current game's moves are the match's last ones
        while start and self.moves[start - 1].game == g.game_number:
            start -= 1
        trick: list[Move] = []
        for m in self.moves[start:]:
            trick = [m] if m.lead else [*trick, m]
        return trick

    def _finished_games(self) -> list[dict[str, Any]]:
        """The current match's finished games with the cards each seat ended with, built once per
        finished game (not on every view): keyed by the match and the number of finished games,
        read in O(1) (``Game.results`` decodes every game's plays, so a view that counted them
        would cost more each game)."""
        g = self.game
        key = (self.match, g.game_number - (0 if g.is_over else 1))
        if self._results is None or self._results[0] != key:
            results = []
            for r, deal in zip(g.results, g.deals, strict=False):
                played: list[set[str]] = [set() for _ in self.seats]
                for who, cards in r.history:
                    played[who].update(cards)
                left = [[c for c in hand if c not in played[i]] for i, hand in enumerate(deal)]
                results.append({"number": r.number, "winner": r.winner, "payoffs": list(r.payoffs), "hands_left": left})
            self._results = (key, results)
        return self._results[1]

    def summary(self) -> dict[str, Any]:
        """A line of the lobby's room list: public only."""
        return {
            "room": self.id,
            "variant": self.variant.name,
            "seats": [{"name": s.name, "kind": s.holder} for s in self.seats],
            "match": self.match,
            "plays": len(self.moves),
            "over": self.game.is_over,
            "finished_matches": sorted(self.finished) + ([self.match] if self.game.is_over else []),
            "watch": self.watch,
        }

    def record(self, match: int) -> dict[str, Any]:
        """The game record of a finished match (``bigtwo.env.records.record``); ``RoomError`` for one still
        being played (its record shows every hand) or one the room never had."""
        if not 1 <= match <= self.match:
            raise RoomError(f"room {self.id} has matches 1..{self.match}, not {match}")
        if match < self.match:
            record = self.finished.get(match)
            if record is None and match in self.finished and self.store is not None:
                record = self.store.record(self.id, match)
            if record is None:
                raise RoomError(
                    f"room {self.id} keeps the records of its last {self.keep} matches; match {match} is older"
                )
            return record
        if not self.game.is_over:
            raise RoomError(f"match {match} is still being played; its record (every hand) is shown once it is over")
        return self._record_of(self.game, match)

    def finished_records(self) -> list[dict[str, Any]]:
        """The records of the finished matches the room keeps (its last ``keep``, oldest first),
        the current match's too once it is over; never one still being played."""
        out = []
        for m in sorted(self.finished):
            with contextlib.suppress(RoomError):  # deleted from the store meanwhile (its history bound)
                out.append(self.record(m))
        if self.match and self.game.is_over:
            out.append(self._record_of(self.game, self.match))
        return out

    def _record_of(self, game: Game, match: int) -> dict[str, Any]:
        return match_record(game, self.id, match, [s.name for s in self.seats], [s.kind for s in self.seats])


def match_record(game: Game, room_id: str, match: int, names: list[str], kinds: list[str]) -> dict[str, Any]:
    """A room's match as a game record (``bigtwo.env.records.record``): ``seats`` the seats' names, ``info``
    the room, the match number and ``people``, the seats a person held (their plays include any a
    stand-in made while they were away)."""
    people = [i for i, kind in enumerate(kinds) if kind == SeatState.PERSON]
    return game.to_record(seats=list(names), info={"room": room_id, "match": match, "people": people})
