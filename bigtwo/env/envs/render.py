"""Drawing a game: plain text for terminals and logs, small HTML card boxes for notebooks.

Both show the same things: the variant and game number, the play order (an arrow, the
direction round the table, and the seats in order from seat 0; it changes from game to game under
``turn_order``), each seat with its card count and hand (all hands, only ``viewer``'s, or none with ``viewer=-1``), the play on the table and who made it, whose turn it
is, and once a game is over its winner and payoffs (and the match scores when a match has
several games). ``names`` relabels the seats (the AEC environment passes ``player_0`` ...).

>>> from bigtwo.env import Game
>>> print(render_text(Game("taiwan", seed=1), viewer=0).splitlines()[0])
Big Two · taiwan · game 1 of 1
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import TYPE_CHECKING

from bigtwo.env.rules.cards import Card

if TYPE_CHECKING:
    from bigtwo.env.envs.game import Game

RED_SUITS = ("D", "H")
CARD_STYLE = (
    "display:inline-block;min-width:1.7em;padding:1px 3px;margin:1px;border:1px solid #999;"
    "border-radius:4px;background:#fff;text-align:center;font-weight:600;font-family:sans-serif"
)
RED, BLACK = "#c62828", "#212121"


def _labels(game: Game, names: Sequence[str] | None, viewer: int | None) -> list[str]:
    """Seat labels, after checking ``names`` and ``viewer``."""
    if viewer is not None and viewer not in range(-1, game.players):
        raise ValueError(f"viewer must be a seat 0..{game.players - 1}, -1 (no hand) or None, got {viewer!r}")
    if names is None:
        return [f"seat {s}" for s in range(game.players)]
    if len(names) != game.players:
        raise ValueError(f"names must give {game.players} labels (one per seat), got {len(names)}")
    return [str(n) for n in names]


def _number(x: float) -> str:
    return f"{x:+g}" if x else "0"


def _title(game: Game) -> str:
    return f"Big Two · {game.variant.name} · game {game.game_number} of {game.variant.games}"


def _order(game: Game, labels: list[str]) -> str:
    """The game's play order, e.g. ``play order ↺ counterclockwise: seat 0 → seat 1 → seat 2``."""
    arrow = "↺" if game.direction == "counterclockwise" else "↻"
    reversed_note = " (reversed this game)" if game.reversed else ""
    seats = " → ".join(labels[s] for s in game.play_order())
    return f"play order {arrow} {game.direction}{reversed_note}: {seats}"


def _table(game: Game, labels: list[str]) -> str:
    """What kind of play lies on the table and who made it (``empty`` when leading)."""
    if not game.table:
        return "empty"
    passes = f", {game.passes} pass{'es' if game.passes != 1 else ''} since" if game.passes else ""
    return f"({game.table_kind}) by {labels[game.table_player or 0]}{passes}"


def _status(game: Game, labels: list[str]) -> list[str]:
    """Lines about the turn or the result, shared by text and HTML."""
    lines = []
    if game.is_over:
        lines.append(f"over: {labels[game.winner or 0]} won; payoffs " + ", ".join(map(_number, game.payoffs or [])))
    else:
        opening = f" (the play must hold {game.opening_card})" if game.opening_card else ""
        lines.append(f"{labels[game.current_player or 0]} to {'play' if game.table else 'lead'}{opening}")
        if game.winner is not None:
            lines.append(
                f"last game: {labels[game.winner]} won; payoffs " + ", ".join(map(_number, game.payoffs or []))
            )
    if game.variant.games > 1:
        lines.append("match scores: " + ", ".join(map(_number, game.scores)))
    return lines


def render_text(game: Game, names: Sequence[str] | None = None, viewer: int | None = None) -> str:
    """The table as text. ``viewer``: show only that seat's hand (-1: no hand, ``None``: every hand)."""
    labels = _labels(game, names, viewer)
    width = max(len(x) for x in labels)
    hands, left, turn = game.hands, game.cards_left, game.current_player
    lines = [_title(game), _order(game, labels)]
    for s in range(game.players):
        mark = ">" if s == turn else " "
        hand = " ".join(hands[s]) if viewer is None or viewer == s else "(hidden)"
        count = f"{left[s]:>2} card{'s' if left[s] != 1 else ' '}"
        lines.append(f" {mark} {labels[s]:<{width}}  {count}  {hand}".rstrip())
    if not game.is_over:
        lines.append(" ".join(["table:", *game.table, _table(game, labels)]))
    lines.extend(_status(game, labels))
    return "\n".join(lines)


def card_html(text: str) -> str:
    """One card as a small box, its suit symbol red for hearts and diamonds."""
    card = Card.from_text(text)
    colour = RED if str(card)[-1] in RED_SUITS else BLACK
    return f'<span style="{CARD_STYLE};color:{colour}">{card.pretty}</span>'


def render_html(game: Game, names: Sequence[str] | None = None, viewer: int | None = None) -> str:
    """The table as HTML for notebooks (``Game._repr_html_``); ``viewer`` as in ``render_text``."""
    labels = _labels(game, names, viewer)
    hands, left, turn = game.hands, game.cards_left, game.current_player
    rows = []
    for s in range(game.players):
        shown = viewer is None or viewer == s
        cards = "".join(card_html(c) for c in hands[s]) if shown else "<i>hidden</i>"
        weight = "font-weight:700;" if s == turn else ""
        rows.append(
            f'<tr style="{weight}"><td>{"▶" if s == turn else ""}</td>'
            f'<td style="padding-right:8px">{escape(labels[s])}</td>'
            f'<td style="padding-right:8px;text-align:right">{left[s]}</td><td>{cards}</td></tr>'
        )
    parts = [
        '<div class="bigtwo" style="font-family:sans-serif;font-size:13px;line-height:1.6">',
        f'<div style="font-weight:700">{escape(_title(game))}</div>',
        f"<div>{escape(_order(game, labels))}</div>",
        f'<table style="border-collapse:collapse">{"".join(rows)}</table>',
    ]
    if not game.is_over:
        drawn = "".join(card_html(c) for c in game.table)
        parts.append(f"<div>table: {drawn} {escape(_table(game, labels))}</div>")
    parts.extend(f"<div>{escape(line)}</div>" for line in _status(game, labels))
    parts.append("</div>")
    return "".join(parts)
