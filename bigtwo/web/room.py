"""A room of the web table: seats (people or agents), one match at a time, the engine as referee.

A room holds 2-4 seats, each a person (who opens the seat's secret link) or an agent (any name
``agents.make_agent`` takes). Every play goes through the engine (``bigtwo.env.envs.game.Game``):
an out-of-turn, illegal or malformed play raises ``RoomError`` saying why, and changes nothing.
Each accepted play is stored (``bigtwo.web.store``) before the room changes, so a restarted
server rebuilds the room by replaying the stored plays (``Room.restore``).

**Who plays a turn.** An agent seat plays after ``pace`` seconds. A person seat waits for its
person while at least one of their connections is open. The online room's rule: when a person's
connection drops, the game goes on; once they have been away ``away_timeout`` seconds, a
stand-in agent (``stand_in``) plays their turns, each after ``pace``; when they reconnect with
the same link, the seat is theirs again from the next turn. A seat whose link was never opened
counts as away from the room's start (or the server's restart).

**The turn clock.** A connected person has ``turn_timeout`` seconds (0: no clock) for each
turn; when it runs out the stand-in plays that turn for them, so one player who never plays
cannot stall the room.

**The form.** ``room_setup`` checks the page's create-room form (every field, with the web's
bounds: ``MAX_GAMES`` games a match, agent names and budgets from ``check_agent``, text that is
valid Unicode) and builds nothing: a refused form costs nothing. Seat tokens are kept hashed
(``hash_token``); only the room's creator is handed the plain ones, once.

**What a seat sees** (``Room.view``): the public table (seats, connection states, cards left,
the play to beat, the current trick, scores, finished games with the cards they ended with) and
its own hand and legal plays; a spectator sees the public part only. A view never holds a card
of another seat's hand.

>>> from bigtwo.agents.registry import make_agent
>>> room = Room("r1", Room.setup_for("taiwan", ["greedy", "greedy", "greedy", "person"], seed=4),
...             agents=lambda spec, variant: make_agent(spec, variant, seed=0), clock=lambda: 0.0)
>>> room.to_act, room.seats[3].kind
(3, 'person')
>>> room.play(1, "3C")
Traceback (most recent call last):
bigtwo.web.room.RoomError: not your turn: seat 3 (player 1) is to act, you are seat 1
"""

from __future__ import annotations

import contextlib
import hashlib
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bigtwo.agents.base import Agent
from bigtwo.agents.registry import AGENT_SPECS, WEB_THREADS, split_spec
from bigtwo.env.engine.seeds import check_seed
from bigtwo.env.envs.game import Game
from bigtwo.env.rules.variant import (
    DEFAULT_VARIANT,
    Variant,
    load_variant,
    stored_variant,
    variant_names,
    yaml_mapping,
)
from bigtwo.web.store import Store, StoredRoom

PERSON = "person"
DEFAULT_PACE = 0.8  # seconds an agent waits before it plays, so people can follow
DEFAULT_AWAY = 30.0  # seconds a person may be away before a stand-in agent plays for them
DEFAULT_TURN = 120.0  # seconds a connected person has for a turn before the stand-in plays it
MAX_PACE = 10.0
MAX_AWAY = 3600.0
MAX_TURN = 3600.0
MAX_GAMES = 100  # games a web room's match may have (every state message carries the match's games)
MAX_DESCRIPTION = 500  # characters of a variant's description (sent in every state message)
MAX_NAME = 40  # characters of a seat's name
MAX_KEPT = 20  # finished matches whose records a room keeps (the default of bigtwo serve --limit matches_per_room)
# the agents a web seat may have and the options it may set on them, as their declarations say
# (bigtwo.agents.registry: each option's web caps, e.g. the budget of one move, are declared there too)
AGENT_OPTIONS: dict[str, tuple[str, ...]] = {
    name: spec.option_names(web=True) for name, spec in AGENT_SPECS.items() if spec.web
}
MAX_AGENT_THREADS = WEB_THREADS  # rollout threads: a core is left to the event loop
FORM_FIELDS = ("variant", "yaml", "settings", "seats", "names", "pace", "away_timeout", "turn_timeout", "seed")

AgentSource = Callable[[str, Variant], Agent]


class RoomError(ValueError):
    """A request the room refuses; the message says why and what is allowed."""


def hash_token(token: str) -> str:
    """What the store and the room keep of a seat's token: its SHA-256 (hex)."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def check_number(value: Any, what: str, high: float, unit: str = "seconds") -> float:
    """``value`` as a float in ``0..high``; ``RoomError`` for anything else (text, bool, null, NaN)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= high:
        raise RoomError(f"{what} is a number of {unit} 0..{high:g}, got {value!r}")
    return float(value)


def check_agent(spec: Any, files: Mapping[str, Any] = {}) -> str:  # noqa: B006 - read only
    """``spec`` if a web seat may have that agent: a name of ``AGENT_OPTIONS`` with only its
    options, each a value its declaration allows within the web's caps (``AgentSpec.check_options``
    with ``web=True``: the budget of a move, ``bigtwo.agents.registry.WEB_SIMULATIONS``, ``WEB_SECONDS``,
    ``WEB_TOP_K`` and ``WEB_THREADS``), or one of the checkpoint ``files`` the server was started with (by
    name). Never a path: a web seat cannot load what the server was not given. Builds nothing.

    >>> check_agent("search:simulations=500")
    'search:simulations=500'
    >>> check_agent("search:seconds=86400")
    Traceback (most recent call last):
    bigtwo.web.room.RoomError: agent 'search:seconds=86400': seconds must be a number 0..1 on this server (seconds per move), got 86400
    """
    allowed = [*AGENT_OPTIONS, *files]
    if not isinstance(spec, str) or not spec.strip():
        raise RoomError(f"a seat's agent is a name: one of {', '.join(allowed)}; got {spec!r}")
    spec = spec.strip()
    if spec in files:
        return spec
    try:
        name, options = split_spec(spec)
    except ValueError as exc:
        raise RoomError(str(exc)) from None
    check_unicode(options, f"agent {spec!r}")  # option values are YAML: "weights=\"\\ud800\"" decodes to a surrogate
    name = name.strip().lower()
    if name not in AGENT_OPTIONS:
        raise RoomError(
            f"unknown agent {spec!r}; allowed: {', '.join(allowed)} (names, with options such as "
            "'search:simulations=500')"
        )
    unknown = sorted(set(options) - set(AGENT_OPTIONS[name]))
    if unknown:
        takes = ", ".join(AGENT_OPTIONS[name]) or "no options"
        raise RoomError(f"agent {spec!r}: option {unknown[0]!r} is not allowed on this server; {name} takes: {takes}")
    try:
        AGENT_SPECS[name].check_options(options, web=True)
    except ValueError as exc:
        raise RoomError(f"agent {spec!r}: {exc}") from None
    return spec


def check_text(value: Any, what: str, most: int) -> str:
    """``value`` if it is text of at most ``most`` characters that UTF-8 can write."""
    if not isinstance(value, str):
        raise RoomError(f"{what} must be text, got {value!r}")
    if len(value) > most:
        raise RoomError(f"{what} may have at most {most} characters, got {len(value)}")
    return check_unicode(value, what)


def check_unicode(value: Any, what: str) -> Any:
    """``value`` if every text in it (keys and values of dicts, items of lists and tuples, at any
    depth) is one UTF-8 can write; ``RoomError`` naming ``what`` for a lone surrogate, which JSON
    and YAML escapes decode to and which no page, log or socket can carry. Checked on what a
    request decodes to (YAML inside JSON, an agent's options), not only on its raw text.

    >>> check_unicode({"name": "café", "seats": ["ok"]}, "the room")["name"]
    'café'
    >>> check_unicode({"name": chr(0xD800)}, "the variant")
    Traceback (most recent call last):
    bigtwo.web.room.RoomError: the variant: text must be valid Unicode (no lone surrogates), got '\\ud800'
    """
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                shown = item.encode("utf-8", "backslashreplace").decode("utf-8")
                raise RoomError(f"{what}: text must be valid Unicode (no lone surrogates), got '{shown}'") from None
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return value


def room_setup(
    body: Any,
    default_agent: Callable[[Variant], str],
    pace: float = DEFAULT_PACE,
    away_timeout: float = DEFAULT_AWAY,
    turn_timeout: float = DEFAULT_TURN,
    files: Mapping[str, Any] = {},  # noqa: B006 - read only
) -> dict[str, Any]:
    """The set-up of a room from the page's create-room form (``FORM_FIELDS``; see
    ``bigtwo.web.app``), every field checked; ``RoomError`` naming the first bad one. Builds no
    agent: ``default_agent(variant)`` names the seats' default and the stand-in."""
    if not isinstance(body, dict):
        raise RoomError("the request body must be a JSON object of the form's fields")
    unknown = sorted(set(body) - set(FORM_FIELDS))
    if unknown:
        raise RoomError(f"unknown field {unknown[0]!r}; fields are: {', '.join(sorted(FORM_FIELDS))}")
    settings = body.get("settings")
    settings = {} if settings is None else settings
    if not isinstance(settings, dict):
        raise RoomError(f"settings must be an object of variant fields, got {settings!r}")
    try:
        if body.get("yaml") is not None:
            data = yaml_mapping(
                check_text(body["yaml"], "yaml (the text of a variant file)", 20_000), "the variant file"
            )
            data.setdefault("name", "custom")
            variant = Variant().replace(**{**data, **settings})
        else:
            name = body.get("variant", DEFAULT_VARIANT)
            if not isinstance(name, str) or name not in variant_names():
                raise RoomError(f"unknown variant {name!r}; allowed: {', '.join(variant_names())} (or send yaml)")
            variant = load_variant(name, **settings)
    except RoomError:
        raise
    except (TypeError, ValueError) as exc:
        raise RoomError(f"variant: {exc}") from None
    if variant.games > MAX_GAMES:
        raise RoomError(f"games must be 1..{MAX_GAMES} for a room on this server, got {variant.games}")
    check_text(variant.description, "the variant's description", MAX_DESCRIPTION)
    check_text(variant.name, "the variant's name", MAX_NAME)
    seats = body.get("seats")
    if seats is None:
        seats = [PERSON] + [default_agent(variant)] * (variant.players - 1)
    if not isinstance(seats, list):
        raise RoomError("seats must be a list: 'person' or an agent name per seat")
    seats = [s.strip() if isinstance(s, str) else s for s in seats]
    for spec in seats:
        if spec != PERSON:
            check_agent(spec, files)
    seed = body.get("seed")
    try:
        seed = check_seed(seed)
    except ValueError as exc:
        raise RoomError(str(exc)) from None
    if seed is not None and seats.count(PERSON) > 1:
        raise RoomError(
            "a chosen seed fixes the deal, which the creator would know: only a room with at most one person "
            "may choose it (leave seed out to deal at random)"
        )
    setup = Room.setup_for(
        variant,
        seats,
        names=body.get("names"),
        pace=pace if body.get("pace") is None else body["pace"],
        away_timeout=away_timeout if body.get("away_timeout") is None else body["away_timeout"],
        turn_timeout=turn_timeout if body.get("turn_timeout") is None else body["turn_timeout"],
        stand_in=default_agent(variant),
        seed=seed,
    )
    return check_unicode(setup, "the room")  # every text as decoded (YAML's escapes too), stored and shown later


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
    keep: int = MAX_KEPT  # finished matches whose records the room keeps
    seats: list[Seat] = field(init=False)
    variant: Variant = field(init=False)
    game: Game = field(init=False)
    match: int = field(init=False, default=0)
    moves: list[Move] = field(init=False, default_factory=list)
    # the last ``keep`` finished matches' records; ``None``: the store has it (read when asked for)
    finished: dict[int, dict[str, Any] | None] = field(init=False, default_factory=dict)
    last_change: float = field(init=False, default=0.0)
    spectators: int = field(init=False, default=0)

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

    @staticmethod
    def setup_for(
        variant: Variant | str,
        seats: list[str],
        names: list[str] | None = None,
        pace: float = DEFAULT_PACE,
        away_timeout: float = DEFAULT_AWAY,
        stand_in: str = "heuristic",
        seed: int | None = None,
        turn_timeout: float = 0.0,
        **overrides: Any,
    ) -> dict[str, Any]:
        """A room's set-up: ``seats`` one ``"person"`` or agent name per seat (checked by the
        caller against the agents it can build), each person seat given a fresh secret token
        (``tokens``, which the store never writes; the seats keep its hash)."""
        var = load_variant(variant, **overrides)
        if not isinstance(seats, list) or len(seats) != var.players:
            raise RoomError(f"variant {var.name!r} has {var.players} seats; seats must be a list of {var.players}")
        if not all(isinstance(s, str) and s.strip() for s in seats):
            raise RoomError(f"each seat is 'person' or an agent name, got {seats!r}")
        if names is not None and (
            not isinstance(names, list) or len(names) != len(seats) or not all(isinstance(n, str) for n in names)
        ):
            raise RoomError(f"names must be {len(seats)} texts, one per seat; got {names!r}")
        for n in names or ():
            check_text(n.strip(), "a seat's name", MAX_NAME)
        pace = check_number(pace, "pace", MAX_PACE)
        away_timeout = check_number(away_timeout, "away_timeout", MAX_AWAY)
        turn_timeout = check_number(turn_timeout, "turn_timeout", MAX_TURN)
        people = 0
        out, tokens = [], []
        for i, kind in enumerate(seats):
            kind = kind.strip()
            if kind == PERSON:
                people += 1
            default = f"player {people}" if kind == PERSON else kind
            name = (names[i].strip() if names else "") or default
            token = secrets.token_urlsafe(16)  # an agent seat gets one too: nobody knows it
            tokens.append(token if kind == PERSON else None)
            out.append({"kind": kind, "name": name[:MAX_NAME], "token_hash": hash_token(token)})
        return {
            "variant": var.to_dict(),
            "seats": out,
            "tokens": tokens,
            "pace": pace,
            "away_timeout": away_timeout,
            "turn_timeout": turn_timeout,
            "stand_in": stand_in,
            "seed": seed,
        }

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
        self.pace = check_number(seconds, "pace", MAX_PACE)

    # ------------------------------------------------------------ turns

    @property
    def to_act(self) -> int | None:
        """The seat to play, ``None`` once the match is over."""
        return self.game.current_player

    def controller(self, now: float | None = None) -> str | None:
        """Who plays the current turn: ``person``, ``agent``, ``stand-in`` (an agent for an away
        person, once ``away_timeout`` has passed, or for a connected one whose turn clock ran
        out) or ``waiting`` (an away person, before that)."""
        seat = self.to_act
        if seat is None:
            return None
        s = self.seats[seat]
        if not s.person:
            return "agent"
        now = self.clock() if now is None else now
        if s.away_since is None:
            return "stand-in" if self.turn_timeout and now - self.last_change >= self.turn_timeout else PERSON
        return "stand-in" if now - s.away_since >= self.away_timeout else "waiting"

    def agent_due(self, now: float | None = None) -> float | None:
        """Clock time the next agent play is due, ``None`` while a connected person without a
        turn clock is to act (or the match is over)."""
        seat = self.to_act
        if seat is None:
            return None
        s = self.seats[seat]
        if not s.person:
            return self.last_change + self.pace
        if s.away_since is None:
            return self.last_change + self.turn_timeout if self.turn_timeout else None
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
        start = len(self.moves)  # the current game's moves are the match's last ones
        while start and not g.is_over and self.moves[start - 1].game == game_no:
            start -= 1
        current = [] if g.is_over else self.moves[start:]
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
                    "connections": s.connections,
                    "cards_left": g.cards_left[s.index],
                    "score": g.scores[s.index],
                }
            )
        results = self._finished_games()
        last = self.moves[-1] if self.moves else None
        mine = seat is not None and seat == to_act and controller == PERSON
        stand_in_at = turn_left = None
        away_since = None if to_act is None else self.seats[to_act].away_since
        if controller == "waiting" and away_since is not None:  # the second: implied by the first
            stand_in_at = round(away_since + self.away_timeout - now, 1)
        if controller == PERSON and self.turn_timeout:
            turn_left = round(max(0.0, self.last_change + self.turn_timeout - now), 1)
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
            "turn_left": turn_left,
            "turn_timeout": self.turn_timeout,
            "seed_chosen": self.setup.get("seed") is not None and self.match == 1,
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
            "your_connections": None if seat is None else self.seats[seat].connections,
        }

    def _finished_games(self) -> list[dict[str, Any]]:
        """The current match's finished games with the cards each seat ended with, built once per
        finished game (not on every view)."""
        g = self.game
        key = (self.match, len(g.results))
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
            "seats": [{"name": s.name, "kind": PERSON if s.person else "agent"} for s in self.seats],
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
    people = [i for i, kind in enumerate(kinds) if kind == PERSON]
    return game.to_record(seats=list(names), info={"room": room_id, "match": match, "people": people})
