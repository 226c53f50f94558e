"""A tournament's result: each entry's statistics and the per-deal arrays they come from.

``summarise`` turns the chunks' per-deal, per-position arrays into one ``AgentStats`` line per
entry (the statistics are defined in ``bigtwo.arena.tournament``'s docstring); ``TournamentResult``
holds them, renders the report (``table``), and writes it as JSON and CSV (``write``).
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bigtwo.env.rules.variant import Variant


@dataclass
class AgentStats:
    """One entry's line of the report."""

    name: str
    spec: str
    mean_payoff: float
    ci95: tuple[float | None, float | None]
    win_rate: float
    games: int
    deals: int
    moves: int
    ms_per_move: float
    margin: float = math.nan
    margin_ci95: tuple[float | None, float | None] = (None, None)
    rating: float | None = None
    rating_se: float | None = None


@dataclass
class TournamentResult:
    """Per-entry statistics and the per-deal arrays they come from (see the module docstring)."""

    variant: Variant
    deals: int
    seed: int
    names: list[str]
    stats: list[AgentStats]
    payoff_at: np.ndarray  # (deals, P) payoffs summed over the rotations of each table position
    games_at: np.ndarray  # (deals, P) games played from each table position
    wins_at: np.ndarray  # (deals, P) games won from each table position
    tables: np.ndarray  # (deals, P) entry indices at table positions
    seconds: float
    chunk_deals: int
    overrides: dict[str, Any] = field(default_factory=dict)
    rating_method: str | None = None

    def _per_entry(self, at: np.ndarray) -> np.ndarray:
        dense = np.zeros((self.deals, len(self.names)), dtype=at.dtype)
        dense[np.arange(self.deals)[:, None], self.tables] = at
        return dense

    @property
    def payoff(self) -> np.ndarray:
        """(deals, K) payoffs summed over each entry's rotations (0 where it did not play); built
        on demand from the per-position arrays: deals x K numbers."""
        return self._per_entry(self.payoff_at)

    @property
    def games_per_deal(self) -> np.ndarray:
        """(deals, K) games each entry played in each deal (built on demand, like ``payoff``)."""
        return self._per_entry(self.games_at)

    @property
    def wins(self) -> np.ndarray:
        """(deals, K) games each entry won in each deal (built on demand, like ``payoff``)."""
        return self._per_entry(self.wins_at)

    @property
    def games(self) -> int:
        """Games played in all (each game has P seats; counted once)."""
        return int(self.games_at.sum() // self.variant.players)

    @property
    def games_per_second(self) -> float:
        return self.games / self.seconds if self.seconds > 0 else math.nan

    def to_dict(self, timing: bool = True) -> dict[str, Any]:
        """JSON-ready summary; ``timing=False`` leaves out the (run-dependent) time fields."""

        def num(x: float | None, digits: int = 6) -> float | None:
            return None if x is None or not math.isfinite(x) else round(float(x), digits)

        agents: dict[str, Any] = {}
        for s in self.stats:
            entry: dict[str, Any] = {
                "mean_payoff": num(s.mean_payoff),
                "ci95": [num(s.ci95[0]), num(s.ci95[1])],
                "margin": num(s.margin),
                "margin_ci95": [num(s.margin_ci95[0]), num(s.margin_ci95[1])],
                "win_rate": num(s.win_rate),
                "games": s.games,
                "deals": s.deals,
                "moves": s.moves,
            }
            if s.spec != s.name.split("#")[0]:
                entry["spec"] = s.spec
            if timing:
                entry["ms_per_move"] = num(s.ms_per_move, 4)
            if s.rating is not None:
                entry["rating"] = num(s.rating, 2)
                entry["rating_se"] = num(s.rating_se, 2)
            agents[s.name] = entry
        out: dict[str, Any] = {
            "variant": self.variant.name,
            "deals": self.deals,
            "seed": self.seed,
            "players": self.variant.players,
            "games": self.games,
            "chunk_deals": self.chunk_deals,
        }
        if self.overrides:
            out["overrides"] = dict(self.overrides)
        if self.rating_method:
            out["rating_method"] = self.rating_method
        out["agents"] = agents
        if timing:
            out["seconds"] = round(self.seconds, 3)
            out["games_per_second"] = round(self.games_per_second, 1)
        return out

    def table(self) -> str:
        """The report as aligned text, best mean payoff first."""
        rated = any(s.rating is not None for s in self.stats)
        width = max(8, *(len(s.name) for s in self.stats))
        lines = [
            f"{self.variant.name}: {self.deals} deals x {self.variant.players} rotations, {self.games} games, "
            f"seed {self.seed} ({self.seconds:.1f} s, {self.games_per_second:.0f} games/s)",
            f"{'agent':<{width}}  {'payoff/game':>11}  {'95% CI':>19}  {'margin':>7}  {'95% CI':>19}  {'win rate':>8}  "
            f"{'games':>7}  {'ms/move':>8}" + (f"  {'rating':>7}  {'± se':>6}" if rated else ""),
        ]

        def f(x: float | None) -> str:
            return "n/a" if x is None else f"{x:+.3f}"

        order = sorted(self.stats, key=lambda s: -(s.rating if rated and s.rating is not None else s.mean_payoff))
        for s in order:
            ci = f"[{f(s.ci95[0])}, {f(s.ci95[1])}]"
            mci = f"[{f(s.margin_ci95[0])}, {f(s.margin_ci95[1])}]"
            line = (
                f"{s.name:<{width}}  {s.mean_payoff:>+11.3f}  {ci:>19}  {s.margin:>+7.3f}  {mci:>19}  "
                f"{100 * s.win_rate:>7.1f}%  "
                f"{s.games:>7}  {s.ms_per_move:>8.4f}"
            )
            if rated:
                line += f"  {s.rating:>+7.0f}  {s.rating_se:>6.0f}" if s.rating is not None else ""
            lines.append(line)
        lines.append("CI over deals: per deal, the agent's payoff per game over its rotations; mean ± 1.96 sd/sqrt(n).")
        lines.append("margin: per deal, that payoff less the mean of the other table positions' (paired by deal).")
        if rated:
            lines.append(f"rating: Elo scale, mean 0 ({self.rating_method}).")
        return "\n".join(lines)

    def write(self, prefix: str | Path) -> tuple[Path, Path]:
        """Write ``PREFIX.json`` and ``PREFIX.csv``; returns their paths."""
        prefix = Path(prefix)
        if prefix.parent and not prefix.parent.exists():
            prefix.parent.mkdir(parents=True, exist_ok=True)
        jpath, cpath = Path(f"{prefix}.json"), Path(f"{prefix}.csv")
        data = self.to_dict()
        jpath.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        cols = ["mean_payoff", "ci95_low", "ci95_high", "margin", "margin_ci95_low", "margin_ci95_high"]
        cols += ["win_rate", "games", "deals", "moves", "ms_per_move"]
        cols += ["rating", "rating_se"]
        with cpath.open("w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh)
            writer.writerow(["agent", *cols])
            for name, a in data["agents"].items():
                a = {
                    **a,
                    **{f"{k}_{end}": a[k][i] for k in ("ci95", "margin_ci95") for i, end in enumerate(("low", "high"))},
                }
                writer.writerow([name, *(a.get(c) for c in cols)])
        return jpath, cpath


__all__ = ["AgentStats", "TournamentResult"]
