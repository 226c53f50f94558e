"""Play Big Two in the terminal against agents: ``bigtwo play --opponents heuristic``.

Without ``--opponents`` every other seat is ``strong``, the trained agent shipped for the variant
(``bigtwo.agents.pretrained``), where one is shipped and loads for these rules; ``heuristic`` otherwise.
The start-up text says which, and why not ``strong`` (``bigtwo.agents.registry.default_opponent``).

Every turn of yours shows your hand sorted low to high and numbered (``1:3C 2:5D ...``), what
the others played this trick, the play to beat and how many cards each seat holds. Type

- the cards: ``3C 3D`` (``10S`` or ``TS``; suit symbols work too), or their numbers in your
  hand: ``1 2`` (a plain number is always a card of your hand; the two forms mix: ``1 5D``),
- ``#N``: play number N of the legal list (``l`` or ``list`` shows it, numbered ``#1``, ``#2``, ...),
- ``pass``, ``hint`` (what the heuristic agent would play, and what to type for it), ``hand``
  (show the table again), ``help``, or ``quit`` (Ctrl-D works too).

Bad input gets a message and a new prompt, and changes nothing; nothing you type ends the game
except ``quit``/EOF. When pass is your only legal play (nothing beats the table) the game passes
for you and says so. Opponents' moves are printed as they happen, each named by a short label
(a checkpoint by its file name; the start-up text gives the whole path once); each game's
result, and the match's final scores, are shown at the end. ``TerminalGame`` takes its input and output streams, so scripted input
(``io.StringIO``) drives it in tests:

>>> import io
>>> out = io.StringIO()
>>> TerminalGame("taiwan", opponents="random", seed=3, stdin=io.StringIO("help\\n"), stdout=out).run()
0
>>> "Goodbye" in out.getvalue()
True
"""

from __future__ import annotations

import re
import secrets
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from bigtwo.agents.base import Agent
from bigtwo.agents.registry import default_opponent, make_agent_from_spec, parse_agent_list
from bigtwo.env.envs.game import Game
from bigtwo.env.rules.cards import Card, parse_cards
from bigtwo.env.rules.variant import DEFAULT_VARIANT, Variant

HELP = """\
How to play a turn:
  3C 3D        play these cards (rank 3-10/T/J/Q/K/A/2, suit D/C/H/S; any order, any case)
  1 2          play the cards numbered 1 and 2 in your hand (1:3C 2:3D ...); mix freely: 1 3D
  #N           play number N of the legal list ('list' shows the numbers: #1, #2, ...)
  l, list      show the legal plays, numbered #1, #2, ...
  pass         pass (when allowed; the leader cannot pass)
  hint         what the {hint} agent would play and what to type for it (nothing is played)
  hand         show the table again
  help         this text
  quit         leave the game (Ctrl-D too)
Your hand is shown sorted, lowest first; a plain number is always a card of your hand.
When pass is your only legal play, the game passes for you and says so."""
_NUMBER = re.compile(r"[0-9]+")  # a hand position or a list number: ASCII digits only ('²' is no number)


def agent_label(spec: str | Agent) -> str:
    """A short name for an opponent in every line: an agent's own name, an agent name as written
    (``search:simulations=64``), a checkpoint path by its file name (``step_000100.pt``).

    >>> agent_label("runs/taiwan__ppo__1__x/checkpoints/step_000100.pt"), agent_label("heuristic")
    ('step_000100.pt', 'heuristic')
    """
    if isinstance(spec, Agent):
        return spec.name
    text = str(spec)
    if "/" in text or "\\" in text or (Path(text).suffix and ":" not in text):
        return Path(text).name or text
    return text


class _Quit(Exception):
    """The player left (quit or end of input)."""


class TerminalGame:
    """A human at one seat, agents at the others, talking through ``stdin``/``stdout``.

    ``opponents``: one agent name/checkpoint path for every other seat, a comma list or a list
    (one per other seat, in play order after yours), or ``Agent`` objects; ``None``:
    ``default_opponent`` (``strong`` where shipped, else ``heuristic``). ``hint``: the agent
    asked by ``hint``. ``symbols``: show suits as ♦♣♥♠. ``echo``: repeat each input line after
    the prompt (default: when the input is not a terminal, so transcripts read well).
    """

    def __init__(
        self,
        variant: Variant | str = DEFAULT_VARIANT,
        opponents: str | Agent | Sequence[str | Agent] | None = None,
        seat: int = 0,
        seed: int | None = None,
        *,
        stdin: TextIO | None = None,
        stdout: TextIO | None = None,
        hint: str | Agent = "heuristic",
        symbols: bool = False,
        echo: bool | None = None,
        **overrides: Any,
    ) -> None:
        self.seed = secrets.randbelow(2**31) if seed is None else int(seed)
        self.game = Game(variant, seed=self.seed, **overrides)
        self.variant = self.game.variant
        players = self.variant.players
        if not isinstance(seat, int) or not 0 <= seat < players:
            raise ValueError(f"seat must be 0..{players - 1}, got {seat!r}")
        self.seat = seat
        self.opponent_note = ""  # what the start-up text says about a default opponent
        if opponents is None:
            opponents, self.opponent_note = default_opponent(self.variant)
        if isinstance(opponents, str):
            specs: list[str | Agent] = list(parse_agent_list(opponents))
        elif isinstance(opponents, Agent):
            specs = [opponents]
        else:
            specs = list(opponents)
        if len(specs) == 1:
            specs = specs * (players - 1)
        if len(specs) != players - 1:
            raise ValueError(
                f"opponents: give one agent for all, or {players - 1} (one per other seat); got {len(specs)}"
            )
        rng = np.random.SeedSequence([self.seed, 0x91A7])
        seeds = [int(s) for s in rng.generate_state(players, dtype=np.uint32)]
        others = [s for s in range(players) if s != seat]
        others.sort(key=lambda s: (s - seat) % players)
        self.agents: dict[int, Agent] = {}
        self.labels = ["you"] * players
        self.sources: dict[int, str] = {}  # seat -> the whole spec of an opponent shown by a short label
        for s, spec in zip(others, specs, strict=True):
            self.agents[s] = make_agent_from_spec(spec, self.variant, seed=seeds[s])
            label = agent_label(spec)
            self.labels[s] = f"seat {s} ({label})"
            if not isinstance(spec, Agent) and label != str(spec):
                self.sources[s] = str(spec)
        self.labels[seat] = f"you (seat {seat})"
        self._hint_spec = hint
        self._hint_agent: Agent | None = None
        self.hint_name = hint.name if isinstance(hint, Agent) else str(hint)
        self.inp = stdin if stdin is not None else sys.stdin
        self.out = stdout if stdout is not None else sys.stdout
        self.echo = (not _isatty(self.inp)) if echo is None else echo
        self.symbols = symbols
        self._order = list(self.variant.card_values())
        self._trick: list[tuple[int, list[int]]] = []  # (seat, cards) since the last lead

    # ------------------------------------------------------------ text

    def say(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def cards(self, cards: Sequence[int]) -> str:
        """Cards sorted low to high in the variant's order, as text."""
        ordered = sorted((int(c) for c in cards), key=self._order.__getitem__)
        return " ".join(Card(c).pretty if self.symbols else str(Card(c)) for c in ordered)

    def play_text(self, action: int) -> str:
        if action == 0:
            return "pass"
        table = self.game.action_table
        return f"{self.cards(table.decode(action))} ({table.kind(action).replace('_', ' ')})"

    def hand_ids(self, seat: int) -> list[int]:
        mask = int(self.game.engine.state.hands[0, seat])
        return sorted((c for c in range(52) if mask >> c & 1), key=self._order.__getitem__)

    def show_table(self) -> None:
        """Everything the human may see before choosing a play."""
        g = self.game
        left = g.cards_left
        self.say("")
        self.say(f"--- game {g.game_number} of {self.variant.games} · your turn ---")
        self.say("cards left: " + " | ".join(f"{self.labels[s]}: {left[s]}" for s in self._seats_from(self.seat)))
        if self._trick:
            parts = [f"{self._short(s)} {self.cards(c) if c else 'pass'}" for s, c in self._trick]
            self.say("this trick: " + ", ".join(parts))
        table_action = int(g.engine.state.table_action[0])
        if table_action:
            self.say(f"to beat: {self.play_text(table_action)} by {self.labels[g.table_player or 0]}")
        elif g.opening_card:
            self.say(f"you lead the game: your play must contain {self._card(g.opening_card)}")
        else:
            self.say("you lead: play anything")
        hand = self.hand_ids(self.seat)
        self.say(f"your hand ({len(hand)}): " + "  ".join(f"{i}:{self.cards([c])}" for i, c in enumerate(hand, 1)))

    def show_legal(self, legal: np.ndarray) -> None:
        self.say("legal plays (type #N to play number N):")
        width = len(str(len(legal))) + 1
        for i, a in enumerate(legal, 1):
            self.say(f"  {'#' + str(i):>{width}}  {self.play_text(int(a))}")

    def typed(self, action: int) -> str:
        """What to type for ``action``: ``pass``, or the cards' numbers in the human's hand."""
        if action == 0:
            return "pass"
        hand = self.hand_ids(self.seat)
        cards = [int(c) for c in self.game.action_table.decode(action)]
        return " ".join(str(hand.index(c) + 1) for c in sorted(cards, key=hand.index))

    def _card(self, text: str) -> str:
        return self.cards([int(Card.from_text(text))])

    def _short(self, seat: int) -> str:
        return "you" if seat == self.seat else f"seat {seat}"

    def _seats_from(self, first: int) -> list[int]:
        return self.game.play_order(first)

    # ------------------------------------------------------------ input

    def _read(self, prompt: str) -> str:
        self.out.write(prompt)
        self.out.flush()
        try:
            line = self.inp.readline()
        except (EOFError, KeyboardInterrupt):
            line = ""
        if not line:
            self.out.write("\n")
            raise _Quit
        if self.echo:
            self.out.write(line if line.endswith("\n") else line + "\n")
        return line.strip()

    def ask(self) -> int:
        """Read commands until the human makes a legal play; returns its action id."""
        g = self.game
        legal = g.legal_actions()
        if legal.tolist() == [0]:  # nothing beats the table: no need to wait for the human
            table_action = int(g.engine.state.table_action[0])
            self.say(
                f"Nothing in your hand beats {self.play_text(table_action)} "
                f"by {self.labels[g.table_player or 0]}: passing for you."
            )
            return 0
        self.show_table()
        while True:
            text = self._read(f"your play ({'pass, ' if 0 in legal else ''}cards or their numbers, list, hint, help)> ")
            word = text.lower()
            if not text.replace(",", " ").split():  # nothing, or only commas
                self.say(
                    "Type a play such as 3C 3D (or the cards' numbers: 1 2), 'list' for the legal plays, or 'help'."
                )
                continue
            if word in ("quit", "exit"):
                raise _Quit
            if word in ("help", "h", "?"):
                self.say(HELP.format(hint=self.hint_name))
                continue
            if word in ("l", "list", "ls", "legal"):
                self.show_legal(legal)
                continue
            if word in ("hand", "show", "table"):
                self.show_table()
                continue
            if word == "hint":
                self.say(self.hint(legal))
                continue
            action = self._parse_play(text, legal)
            if action is not None:
                return action

    def _parse_play(self, text: str, legal: np.ndarray) -> int | None:
        """The action id ``text`` names if it is legal; otherwise say why and return None."""
        g = self.game
        tokens = text.replace(",", " ").split()
        if text.lower() in ("pass", "p"):
            action = 0
        elif tokens[0].startswith("#"):
            return self._list_number(tokens, legal)
        else:
            hand = self.hand_ids(self.seat)
            words = []
            for t in tokens:  # a plain number is a card of the hand, by its position
                if _NUMBER.fullmatch(t):
                    n = int(t)
                    if not 1 <= n <= len(hand):
                        self.say(
                            f"No card number {n}: your hand's cards are numbered 1..{len(hand)}; "
                            "type #N for number N of 'list'."
                        )
                        return None
                    words.append(str(Card(hand[n - 1])))
                else:
                    words.append(t)
            try:
                cards = parse_cards(" ".join(words))
            except ValueError as exc:
                if all(t.isalpha() for t in tokens) and not any(len(t) == 2 for t in tokens):
                    self.say(f"Unknown command {text!r}. Type 'help' for the commands.")
                else:
                    self.say(f"Not understood: {exc}. Type 'help' for the commands.")
                return None
            held = set(hand)
            missing = [c for c in cards if int(c) not in held]
            if missing:
                self.say(f"Not in your hand: {self.cards(missing)}.")
                return None
            try:
                action = g.action_table.encode(cards)
            except ValueError:
                self.say(
                    f"{self.cards(cards)} is not a play: plays are a single, a pair, a triple or a five-card hand."
                )
                return None
        why = g.explain_illegal(action)
        if why is not None:
            self.say(
                f"You cannot {'pass' if action == 0 else 'play ' + self.cards(g.action_table.decode(action))}: {why}."
            )
            return None
        return action

    def _list_number(self, tokens: list[str], legal: np.ndarray) -> int | None:
        """The play ``#N`` picks from the legal list, or None after saying what is wrong."""
        if len(tokens) > 1:
            self.say("One list number at a time, e.g. #2 (type 'list' to see them); cards by number: 1 2.")
            return None
        digits = tokens[0][1:]
        if not _NUMBER.fullmatch(digits):
            self.say(f"{tokens[0]!r} is no list number: type # and a number from 'list', e.g. #2.")
            return None
        n = int(digits)
        if not 1 <= n <= len(legal):
            self.say(f"No play number {n}: the legal plays are numbered #1..#{len(legal)} (type 'list').")
            return None
        return int(legal[n - 1])

    def hint(self, legal: np.ndarray) -> str:
        """What the hint agent would play now (nothing is played)."""
        if self._hint_agent is None:
            try:
                self._hint_agent = make_agent_from_spec(self._hint_spec, self.variant, seed=self.seed)
            except (ValueError, ImportError) as exc:
                return f"No hint: the {self.hint_name} agent is not available ({exc})."
        eng = self.game.engine
        ids, counts = eng.legal_actions()
        action = int(self._hint_agent.act(eng.observe()[:1].copy(), ids[:1].copy(), counts[:1].copy())[0])
        if action not in legal:  # an agent's bug must not mislead: say so
            return f"No hint: the {self.hint_name} agent chose an illegal play."
        number = int(np.flatnonzero(legal == action)[0]) + 1
        return (
            f"hint ({self.hint_name}): {self.play_text(action)}  [type {self.typed(action)}, or #{number} from 'list']"
        )

    # ------------------------------------------------------------ the game

    def agent_move(self, seat: int) -> int:
        eng = self.game.engine
        ids, counts = eng.legal_actions()
        return int(self.agents[seat].act(eng.observe()[:1].copy(), ids[:1].copy(), counts[:1].copy())[0])

    def apply(self, seat: int, action: int) -> None:
        """Play ``action`` for ``seat`` and tell what happened."""
        g = self.game
        S = g.engine.state
        hands_before = [self.hand_ids(s) for s in range(self.variant.players)]
        g.play_action(action)
        cards = [int(c) for c in g.action_table.decode(action)]
        who = "You" if seat == self.seat else self.labels[seat].capitalize()
        if action == 0:
            self.say(f"{who} {'pass' if seat == self.seat else 'passes'}.")
        else:
            self.say(f"{who} {'play' if seat == self.seat else 'plays'} {self.play_text(action)}.")
        self._trick.append((seat, cards))
        if g.results and bool(S.game_over[0]):
            self._trick = []
            self.show_result(seat, hands_before, cards)
            return
        if int(S.table_action[0]) == 0:
            self._trick = []
            leader = int(S.current[0])
            lead = "You win" if leader == self.seat else f"{self.labels[leader].capitalize()} wins"
            self.say(f"{lead} the trick and lead{'s' if leader != self.seat else ''}.")

    def show_result(self, last: int, hands_before: list[list[int]], played: list[int]) -> None:
        g = self.game
        result = g.results[-1]
        winner = result.winner
        self.say("")
        self.say(
            f"=== game {result.number} over: {'you win' if winner == self.seat else self.labels[winner] + ' wins'}! ==="
        )
        for s in self._seats_from(self.seat):
            left = [c for c in hands_before[s] if s != last or c not in played]
            shown = self.cards(left) if left else "-"
            self.say(f"  {self.labels[s]:<24} payoff {result.payoffs[s]:+g}   cards left {len(left):>2}: {shown}")
        if self.variant.games > 1:
            self.say(
                "match scores: " + ", ".join(f"{self._short(s)} {g.scores[s]:+g}" for s in range(self.variant.players))
            )
            if not g.is_over:
                self.say(f"--- game {g.game_number} of {self.variant.games}: new deal ---")

    def show_final(self) -> None:
        g = self.game
        scores = g.scores
        self.say("")
        self.say(f"Final scores ({len(g.results)} game{'s' if len(g.results) != 1 else ''}):")
        for s in sorted(range(self.variant.players), key=lambda s: -scores[s]):
            self.say(f"  {self.labels[s]:<24} {scores[s]:+g}")
        best = max(scores)
        top = [s for s in range(self.variant.players) if scores[s] == best]
        if len(top) > 1:
            self.say("A tie at the top: " + ", ".join(self._short(s) for s in top) + ".")
        elif top[0] == self.seat:
            self.say("You win the match!")
        else:
            self.say(f"{self.labels[top[0]].capitalize()} wins the match.")

    def run(self) -> int:
        """Play the match to its end (or until quit/EOF). Returns 0 either way."""
        g = self.game
        v = self.variant
        self.say(
            f"Big Two · {v.name} · {v.players} players · {v.games} game{'s' if v.games != 1 else ''} · seed {self.seed}"
        )
        self.say(
            f"You sit at seat {self.seat}; opponents: "
            + ", ".join(self.labels[s] for s in self._seats_from(self.seat) if s != self.seat)
            + ". Type 'help' for the commands."
        )
        for s, source in sorted(self.sources.items()):
            self.say(f"{self.labels[s]}: {source}")
        if self.opponent_note:
            self.say(self.opponent_note)
        try:
            while not g.is_over:
                seat = g.current_player
                assert seat is not None
                action = self.ask() if seat == self.seat else self.agent_move(seat)
                self.apply(seat, action)
        except (_Quit, KeyboardInterrupt):
            self.say("Goodbye: you left the game.")
            return 0
        self.show_final()
        return 0


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False
