"""An agent's card: one agent against the fixed panel, on fixed duplicate deals (``bigtwo benchmark``).

    bigtwo benchmark heuristic --variant taiwan --deals 200
    bigtwo benchmark strong:simulations=0 --variant taiwan --out cards/network
    bigtwo benchmark runs/<run>/checkpoints/step_....pt --panel random,tuned --exploit-minutes 10

For each member of the panel (``bigtwo.arena.panel``, versioned) the agent plays one duplicate
tournament (``bigtwo.arena.tournament``) in one seat against ``players - 1`` copies of the member,
on the same ``deals`` deals from ``seed``, every seat rotation. The card holds, per member:

| figure | what it is |
|---|---|
| margin [95% CI] | the agent's payoff per game less the copies' mean, paired by deal (``bigtwo.arena.stats``) |
| payoff/game [95% CI] | the agent's payoff per game, in the scoring's units |
| win rate | the share of games the agent went out first |
| Elo vs member | Bradley-Terry on pairwise finishing order (``bigtwo.arena.rating``): the agent's rating less the copies', ± 1.96 SE |

and over the panel: the worst-case margin (the member the agent does worst against), the mean
margin (per deal, the mean over members, with its interval), and a **rating**: the agent's
Bradley-Terry strength on the ladder's Elo scale with the panel's mean pinned at 0, which for
these tables (the agent meets each member, members never meet) is the mean of the per-member Elo
differences, its SE from theirs. Then the agent's time per move, one game at a time as a player
waits for it (``bigtwo.arena.move_time``: median and 99th percentile), and, when asked, the
approximate exploitability (the trainers' ``exploit`` module: a best response trained against three
frozen copies of the agent, and its margin).

**Resumable.** The folder keeps each step's result in ``parts/`` as it finishes (a member's
tournament, the move times, the best response), under ``parts/settings.json``: a rerun with the
same settings skips the finished steps, one with other settings (agent, variant, rules, deals,
seed, panel version) is refused. Every file is written to a temporary name and renamed when
complete; ``card.md``, ``card.json`` and ``card.png`` are written last. The number of worker
processes, ``--ray`` and the panel subset are not settings: the figures do not depend on them.

Same seed, same figures: ``card.json`` holds the timing in its own ``timing`` entry (and the
exploitability, which trains for a time, in ``exploitability``); everything else is identical on
a rerun.

>>> card = benchmark("greedy", "taiwan", deals=2, seed=0, panel="random", workers=1, progress=False)
>>> list(card["panel"]), card["panel"]["random"]["games"]
(['random'], 8)
"""

from __future__ import annotations

import json
import math
import shlex
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from bigtwo.agents.registry import make_agent
from bigtwo.arena.move_time import measure_move_times
from bigtwo.arena.panel import PANEL_VERSION, panel_for
from bigtwo.arena.stats import Z95, mean_ci, table_margins
from bigtwo.arena.tournament import run_tournament
from bigtwo.env.checks import check_count
from bigtwo.env.files import atomic_write
from bigtwo.env.rules.variant import Variant, load_variant

CARD_VERSION = 1
DEFAULT_DEALS = 800  # the network alone's default card: about 12 minutes on 2 cores
DEFAULT_SEED = 0
CHUNK_DEALS = 50  # deals per batched engine: part of what the seed reproduces; 200 deals keep 2 workers busy
MOVE_MATCHES = 12  # matches timed one at a time (3 per seat at 4 players)
BOOTSTRAP = 200  # resamples of the deals for each Elo difference's SE
PARTS = "parts"
CARD_FILES = ("card.md", "card.json", "card.png")

Section = dict[str, Any]


def write_atomic(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` whole or not at all (``bigtwo.env.files.atomic_write``)."""
    return atomic_write(path, lambda f: f.write(text.encode("utf-8")))


def read_json(path: Path) -> Any:
    """A JSON file's content, or ``None`` when it is missing or not whole."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


class CardFolder:
    """The card's folder: its settings, the finished steps in ``parts/``, the card files."""

    def __init__(self, folder: str | Path, settings: Mapping[str, Any]) -> None:
        self.dir = Path(folder)
        if self.dir.exists() and not self.dir.is_dir():
            raise ValueError(f"--out {str(folder)!r} is a file; give a folder for the card")
        self.parts = self.dir / PARTS
        self.settings = dict(settings)
        saved = read_json(self.parts / "settings.json")
        if saved is not None and saved != self.settings:
            changed = sorted(k for k in {*saved, *self.settings} if saved.get(k) != self.settings.get(k))
            raise ValueError(
                f"{self.dir} holds a card made with other settings ({', '.join(changed)}): a card does not mix "
                "settings; give another --out folder, or delete that one"
            )
        write_atomic(self.parts / "settings.json", json.dumps(self.settings, indent=1, sort_keys=True) + "\n")

    def done(self, step: str, check: Mapping[str, Any] | None = None) -> Section | None:
        """The saved result of ``step``, if finished (and made with ``check``'s values, when given)."""
        saved = read_json(self.parts / f"{step}.json")
        if saved is None or (check is not None and saved.get("check") != dict(check)):
            return None
        return dict(saved["result"])

    def save(self, step: str, result: Section, check: Mapping[str, Any] | None = None) -> Section:
        """Keep ``step``'s result (with what it was made with, ``check``); returns it."""
        body = {"result": result, "check": None if check is None else dict(check)}
        write_atomic(self.parts / f"{step}.json", json.dumps(body, indent=1) + "\n")
        return result


def member_result(agent: str, spec: str, variant: Variant, deals: int, seed: int, **run: Any) -> Section:
    """The agent in one seat against ``players - 1`` copies of ``spec``: margin, payoff and win rate
    with their intervals, the Elo difference (``ELO_SCALE``) with its SE, the per-deal margins."""
    p = variant.players
    result = run_tournament(variant, [agent, *[spec] * (p - 1)], deals=deals, seed=seed, rating=True, **run)
    me = result.stats[0]
    ratings = [s.rating or 0.0 for s in result.stats]
    # ratings have mean 0 over the table, the copies share one strength: agent - copies = r0 * P / (P - 1)
    elo = ratings[0] - float(np.mean(ratings[1:]))
    per_game = result.payoff_at / np.maximum(result.games_at, 1)
    margins = table_margins(per_game)[:, 0]
    return {
        "spec": spec,
        "margin": me.margin,
        "margin_ci95": list(me.margin_ci95),
        "payoff": me.mean_payoff,
        "payoff_ci95": list(me.ci95),
        "win_rate": me.win_rate,
        "games": me.games,
        "elo": elo,
        "elo_se": (me.rating_se or 0.0) * p / (p - 1),
        "margins": [float(x) for x in margins],
        "ms_per_move": me.ms_per_move,  # batched, amortised: timing, not a figure
    }


def summarise(panel: Mapping[str, Section]) -> Section:
    """Over the panel: the worst-case margin, the mean margin (per deal, over members) and the rating."""
    worst = min(panel, key=lambda m: panel[m]["margin"])
    per_deal = np.mean([panel[m]["margins"] for m in panel], axis=0)
    mean, low, high = mean_ci(per_deal)
    elos = [panel[m]["elo"] for m in panel]
    se = math.sqrt(sum(panel[m]["elo_se"] ** 2 for m in panel)) / len(panel)
    return {
        "worst": {"member": worst, "margin": panel[worst]["margin"], "margin_ci95": panel[worst]["margin_ci95"]},
        "mean_margin": mean,
        "mean_margin_ci95": [low, high],
        "rating": float(np.mean(elos)),
        "rating_se": se,
    }


def benchmark(
    agent: str,
    variant: Variant | str,
    deals: int = DEFAULT_DEALS,
    seed: int = DEFAULT_SEED,
    panel: str | None = None,
    rules: Mapping[str, Any] | None = None,
    out: str | Path | None = None,
    workers: int | None = None,
    ray: str | None = None,
    progress: bool = True,
    move_matches: int = MOVE_MATCHES,
    exploit: Callable[[Section, Any], Section] | None = None,
    command: str = "",
) -> Section:
    """Play ``agent`` (any spec ``make_agent`` takes) against the panel (``panel``: a ``--panel``
    text, default the default panel) on ``variant`` with ``rules`` changed, and return the card as a
    dict (``card.json``). With ``out`` the steps are kept there as they finish and the card is
    written there (see the module docstring). ``exploit(card, folder)``, when given, adds the
    ``exploitability`` section (the trainers' ``exploit`` module builds it). ``command``: the command line
    written under the card."""
    var = load_variant(variant, **(rules or {}))
    check_count("deals", deals)
    if deals < 2:
        raise ValueError(f"deals must be at least 2 (an interval needs two deals), got {deals}")
    check_count("move_matches", move_matches)
    make_agent(agent, var, seed=0)  # an unknown agent or option fails here, naming what is allowed
    members, left_out = panel_for(var, panel)
    settings = {
        "card_version": CARD_VERSION,
        "panel_version": PANEL_VERSION,
        "agent": agent,
        "variant": var.to_dict(),
        "deals": int(deals),
        "seed": int(seed),
        "chunk_deals": CHUNK_DEALS,
    }
    folder = CardFolder(out, settings) if out is not None else None
    run = {"workers": workers, "ray": ray, "progress": progress, "chunk_deals": CHUNK_DEALS}
    from tqdm import tqdm  # the text bar: tqdm.auto wants ipywidgets in notebooks

    steps = [*members, "move time", *(["best response"] if exploit else [])]
    bar = tqdm(total=len(steps), unit="step", desc="benchmark", file=sys.stderr, disable=not progress)
    results: dict[str, Section] = {}
    try:
        for name, spec in members.items():
            bar.set_postfix_str(name)
            step = f"member-{name}"
            saved = folder.done(step, {"spec": spec}) if folder else None
            if saved is None:
                saved = member_result(agent, spec, var, deals, seed, **run)
                if folder:
                    folder.save(step, saved, {"spec": spec})
            results[name] = saved
            bar.update()
        bar.set_postfix_str("move time")
        times = folder.done("move-time", {"matches": move_matches}) if folder else None
        if times is None:
            measured = measure_move_times(var, agent, matches=move_matches, seed=seed)
            times = {"moves": measured.moves, "median_ms": measured.median_ms, "p99_ms": measured.percentile_ms(99)}
            if folder:
                folder.save("move-time", times, {"matches": move_matches})
        bar.update()
        card = _card(agent, var, deals, seed, results, left_out, times, command)
        if exploit is not None:
            bar.set_postfix_str("best response")
            card["exploitability"] = exploit(card, folder)
            bar.update()
    finally:
        bar.close()
    if folder is not None:
        write_card(card, folder.dir)
    return card


def _card(
    agent: str,
    var: Variant,
    deals: int,
    seed: int,
    results: Mapping[str, Section],
    left_out: Mapping[str, str],
    times: Section,
    command: str,
) -> Section:
    """The card's dict from the steps' results; timing apart from the figures."""
    panel = {m: {k: v for k, v in r.items() if k not in ("margins", "ms_per_move")} for m, r in results.items()}
    batched = {m: r["ms_per_move"] for m, r in results.items()}
    return {
        "card_version": CARD_VERSION,
        "panel_version": PANEL_VERSION,
        "agent": agent,
        "variant": var.name,
        "scoring": var.scoring,
        "players": var.players,
        "deals": deals,
        "seed": seed,
        "panel": panel,
        "left_out": dict(left_out),
        "summary": summarise(results),
        "timing": {**times, "batched_ms_per_move": batched},
        "exploitability": None,
        "command": command,
    }


CURVE_ROWS = 12  # the card's table of the best response's curve shows at most this many evaluations


def curve_rows(curve: list[dict[str, Any]], most: int = CURVE_ROWS) -> list[dict[str, Any]]:
    """At most ``most`` points of ``curve``, evenly spread, the first and the last (the final evaluation)
    kept; card.json keeps every point.

    >>> [p["step"] for p in curve_rows([{"step": s} for s in range(30)], 4)]
    [0, 10, 19, 29]
    """
    if len(curve) <= most:
        return list(curve)
    picks = sorted({round(i * (len(curve) - 1) / (most - 1)) for i in range(most)})
    return [curve[i] for i in picks]


def _interval(low: float | None, high: float | None) -> str:
    return "[n/a]" if low is None or high is None else f"[{low:+.2f}, {high:+.2f}]"


def markdown(card: Section) -> str:
    """The card as Markdown (``card.md``)."""
    s = card["summary"]
    lines = [
        f"# Card of `{card['agent']}` on {card['variant']}",
        "",
        f"Panel version {card['panel_version']}; {card['deals']:,} duplicate deals from seed {card['seed']}, every "
        f"seat rotation; the agent in one seat against {card['players'] - 1} copies of each member; "
        f"{card['scoring']} scoring.",
        "",
        "| member | spec | margin [95% CI] | payoff/game [95% CI] | win rate | Elo vs member |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for name, r in card["panel"].items():
        lines.append(
            f"| {name} | `{r['spec']}` | {r['margin']:+.2f} {_interval(*r['margin_ci95'])} | "
            f"{r['payoff']:+.2f} {_interval(*r['payoff_ci95'])} | {100 * r['win_rate']:.1f}% | "
            f"{r['elo']:+.0f} ± {Z95 * r['elo_se']:.0f} |"
        )
    w = s["worst"]
    lines += [
        "",
        f"- **Worst-case margin**: {w['margin']:+.2f} {_interval(*w['margin_ci95'])} against {w['member']}.",
        f"- **Mean margin over the panel**: {s['mean_margin']:+.2f} {_interval(*s['mean_margin_ci95'])}.",
        f"- **Rating**: {s['rating']:+.0f} ± {Z95 * s['rating_se']:.0f} (Elo scale, the panel's mean at 0).",
    ]
    t = card["timing"]
    lines.append(
        f"- **Time per move**, one game at a time: median {t['median_ms']:.2f} ms, p99 {t['p99_ms']:.2f} ms "
        f"({t['moves']:,} moves)."
    )
    for name, why in card["left_out"].items():
        lines.append(f"- Left out of the panel: {name} ({why}).")
    e = card.get("exploitability")
    if e:
        lines += ["", "## Approximate exploitability", ""]
        lines.append(
            f"A best response trained for {e['minutes']:g} minutes ({e['recipe']}, {e['steps']:,} env steps) against "
            f"{card['players'] - 1} frozen copies of the agent scores a margin of **{e['margin']:+.2f} "
            f"{_interval(*e['margin_ci95'])}** against them on the card's deals; its file: `{e['file']}`."
        )
        lines.append(f"Cost: {e['cost']}")
        if e["curve"]:
            lines += ["", "| minutes | step | margin [95% CI] |", "|---:|---:|---:|"]
            for point in curve_rows(e["curve"]):
                lines.append(
                    f"| {point['minutes']:.1f} | {point['step']:,} | {point['margin']:+.2f} "
                    f"{_interval(point['low'], point['high'])} |"
                )
    lines += [
        "",
        "Margin: the agent's payoff per game less its tablemates' mean, paired by deal; intervals over deals.",
    ]
    if card["command"]:
        lines += ["", f"Made by: `{card['command']}`"]
    return "\n".join(lines) + "\n"


def write_card(card: Section, folder: str | Path) -> list[Path]:
    """Write ``card.md``, ``card.json`` and ``card.png`` (when matplotlib is installed) into
    ``folder``, each through a temporary file; returns the paths written."""
    folder = Path(folder)
    paths = [
        write_atomic(folder / "card.json", json.dumps(card, indent=1) + "\n"),
        write_atomic(folder / "card.md", markdown(card)),
    ]
    try:
        from bigtwo.arena.plots import card_figure
    except ImportError:  # pragma: no cover - plots is part of the arena
        return paths
    try:
        fig = card_figure(card)
    except ValueError as exc:  # no matplotlib: the card stands without its figure
        print(f"no card.png: {exc}", file=sys.stderr)
        return paths
    return [*paths, atomic_write(folder / "card.png", lambda f: fig.savefig(f, dpi=120, format="png"))]


def command_line(words: list[str]) -> str:
    """The ``bigtwo benchmark`` command, quoted for a shell."""
    return shlex.join(["bigtwo", "benchmark", *words])


__all__ = [
    "CARD_FILES",
    "CARD_VERSION",
    "DEFAULT_DEALS",
    "DEFAULT_SEED",
    "CardFolder",
    "benchmark",
    "command_line",
    "markdown",
    "member_result",
    "summarise",
    "write_card",
]
