"""Pictures of arena results: a ladder's ratings and a tournament's payoffs, with their intervals.

    bigtwo ladder --variant taiwan --deals 500 --plot ladder.png
    bigtwo tournament --agents heuristic,greedy,random,random --deals 200 --plot payoffs.png

``ladder_figure`` draws each agent's rating as a point with its ± 1.96 SE bar, best first;
``tournament_figure`` draws each entry's payoff per game with its 95% interval over deals, best
first, and the margin (its lead over its table) beside it. Both return a matplotlib ``Figure``
(built off-screen, the Agg backend, so no display is needed); ``save_figure`` writes one to a
``.png``, ``.svg`` or ``.pdf`` file. matplotlib comes with the ``notebooks`` extra; without it these
raise ``ValueError`` saying what to install.

>>> from bigtwo.arena import run_tournament
>>> result = run_tournament("taiwan", ["greedy", "random"], deals=3, seed=0, workers=1, progress=False, players=2)
>>> fig = tournament_figure(result)
>>> [t.get_text() for t in fig.axes[0].get_yticklabels()]
['greedy', 'random']
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from bigtwo.arena.ladder import Ladder
from bigtwo.arena.results import AgentStats, TournamentResult
from bigtwo.arena.stats import Z95

if TYPE_CHECKING:
    from matplotlib.figure import Figure

FORMATS = (".png", ".svg", ".pdf")


def _figure(rows: int, columns: int = 1) -> tuple[Figure, Any]:
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise ValueError(
            "plots need matplotlib: install the notebooks extra, pip install 'bigtwo[notebooks]'"
        ) from None
    fig = Figure(figsize=(4.2 * columns + 1.8, 0.42 * rows + 1.4), layout="constrained")
    axes = fig.subplots(1, columns, sharey=True, squeeze=False)[0]
    axes[0].invert_yaxis()  # the first row (the best) at the top; the axes share it
    return fig, axes


def _span(centre: float, low: float | None, high: float | None) -> tuple[float, float]:
    """The error bar's lengths below and above ``centre`` (0 where there is no interval)."""
    return (0.0 if low is None else centre - low, 0.0 if high is None else high - centre)


def _bars(ax: Any, names: list[str], centres: list[float], spans: list[tuple[float, float]], label: str) -> None:
    ys = list(range(len(names)))
    ax.errorbar(
        centres, ys, xerr=list(zip(*spans, strict=True)) if spans else None, fmt="o", capsize=3, color="#1f5fa8"
    )
    ax.axvline(0.0, color="#999999", linewidth=0.8, zorder=0)
    ax.set_yticks(ys, names)
    ax.set_xlabel(label)
    ax.grid(axis="x", alpha=0.3)


def ladder_figure(ladder: Ladder) -> Figure:
    """Each agent's rating with its ± 1.96 SE bar, best first (``Ladder.ranked``)."""
    ranked = ladder.ranked()
    r = ladder.result
    fig, (ax,) = _figure(len(ranked))
    rated = [(s, s.rating) for s in ranked if s.rating is not None]
    spans = [(Z95 * (s.rating_se or 0.0),) * 2 for s, _ in rated]
    _bars(ax, [s.name for s, _ in rated], [float(r) for _, r in rated], spans, "rating (Elo scale, ± 1.96 SE)")
    ax.set_title(f"Ladder on {r.variant.name}: {r.deals:,} duplicate deals, {r.games:,} games", fontsize=10)
    return fig


def tournament_figure(result: TournamentResult) -> Figure:
    """Each entry's payoff per game and margin, with their 95% intervals over deals, best payoff first."""
    order: list[AgentStats] = sorted(result.stats, key=lambda s: -s.mean_payoff)
    names = [s.name for s in order]
    fig, (pay, margin) = _figure(len(order), columns=2)
    _bars(pay, names, [s.mean_payoff for s in order], [_span(s.mean_payoff, *s.ci95) for s in order], "payoff/game")
    _bars(margin, names, [s.margin for s in order], [_span(s.margin, *s.margin_ci95) for s in order], "margin")
    v = result.variant
    fig.suptitle(
        f"{v.name}: {result.deals:,} deals x {v.players} rotations, seed {result.seed} (95% intervals over deals)",
        fontsize=10,
    )
    return fig


def card_figure(card: dict[str, Any]) -> Figure:
    """An agent's card (``bigtwo.arena.benchmark``): its margin against each panel member with the 95%
    interval, and beside it, when the card has one, the best response's margin against the agent over
    the minutes it trained (its periodic evaluations, with their intervals)."""
    names = list(card["panel"])
    curve = (card.get("exploitability") or {}).get("curve") or []
    fig, (ax,) = _figure(max(len(names), 4))
    if curve:
        fig.set_size_inches(fig.get_figwidth() * 2, fig.get_figheight())
        ax.remove()
        ax, right = fig.subplots(1, 2)
        ax.invert_yaxis()
        minutes = [p["minutes"] for p in curve]
        low = [p["margin"] if p["low"] is None else p["low"] for p in curve]
        high = [p["margin"] if p["high"] is None else p["high"] for p in curve]
        right.fill_between(minutes, low, high, color="#1f5fa8", alpha=0.2)
        right.plot(minutes, [p["margin"] for p in curve], "o-", color="#1f5fa8")
        right.axhline(0.0, color="#999999", linewidth=0.8, zorder=0)
        right.set_xlabel("minutes of training")
        right.set_ylabel("margin against the agent")
        right.set_title("the best response's margin (95% intervals)", fontsize=9)
    rows = [card["panel"][n] for n in names]
    _bars(ax, names, [r["margin"] for r in rows], [_span(r["margin"], *r["margin_ci95"]) for r in rows], "margin")
    ax.set_title(f"{card['agent']} on {card['variant']}: margin vs the panel (95% intervals)", fontsize=9)
    return fig


def check_plot_path(path: str | Path) -> Path:
    """``path`` if its suffix is one matplotlib writes here (``FORMATS``); ``ValueError`` otherwise.
    Checked before a long run starts, so a typo does not cost the run."""
    p = Path(path)
    if p.suffix.lower() not in FORMATS:
        raise ValueError(f"--plot {str(path)!r}: the file must end in {', '.join(FORMATS)}")
    if p.exists() and p.is_dir():
        raise ValueError(f"--plot {str(path)!r} is a folder: give a file name")
    return p


def save_figure(fig: Figure, path: str | Path) -> Path:
    """Write ``fig`` to ``path`` (a ``FORMATS`` file; its folder is made); returns the path."""
    p = check_plot_path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(p, dpi=150)
    return p


__all__ = ["FORMATS", "card_figure", "check_plot_path", "ladder_figure", "save_figure", "tournament_figure"]
