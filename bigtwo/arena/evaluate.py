"""Evaluation of a trained agent: duplicate-deal tournaments against baseline agents.

For each opponent the table is the trained agent at one seat and ``players - 1`` copies of the
opponent (``bigtwo.arena.tournament.run_tournament``): every deal is played once per rotation, so
the trained agent holds every seat's cards once per deal and luck largely cancels. Reported
per opponent: the trained agent's mean payoff per game with its 95% interval over deals, its
win rate, the same for the opponent copies, and the trained agent's margin (its payoff less the
mean of the opponent copies', paired by deal: ``bigtwo.arena.stats.table_margins``) with its 95% interval;
``beats`` is true when that margin's interval lies wholly above 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from bigtwo.agents.base import Agent
from bigtwo.agents.registry import make_agent
from bigtwo.arena.results import TournamentResult
from bigtwo.arena.tournament import run_tournament
from bigtwo.env.rules.variant import SCORING_SUMMARY, Variant


@dataclass
class Evaluation:
    """One opponent's result (payoffs per game, as the variant scores them)."""

    opponent: str
    mean_payoff: float
    ci_low: float
    ci_high: float
    win_rate: float
    opponent_mean_payoff: float
    opponent_ci_low: float
    opponent_ci_high: float
    opponent_win_rate: float
    margin: float
    margin_ci_low: float
    margin_ci_high: float
    result: TournamentResult

    @property
    def beats(self) -> bool:
        """The agent's margin over the opponent copies (paired by deal) has its 95% interval above 0."""
        return self.margin_ci_low > 0

    def scalars(self) -> dict[str, float]:
        """What TensorBoard gets under ``eval/<opponent>/``."""
        return {
            "mean_payoff": self.mean_payoff,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "win_rate": self.win_rate,
            "opponent_mean_payoff": self.opponent_mean_payoff,
            "margin": self.margin,
            "margin_ci_low": self.margin_ci_low,
            "margin_ci_high": self.margin_ci_high,
        }

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (the tournament's own dict included)."""
        out = {k: v for k, v in self.__dict__.items() if k != "result"}
        out["beats"] = self.beats
        out["tournament"] = self.result.to_dict()
        return out


def evaluate(
    agent: Agent | str,
    variant: Variant,
    opponents: list[str],
    deals: int,
    seed: int,
    workers: int = 1,
    progress: bool = False,
) -> dict[str, Evaluation]:
    """Duplicate tournaments of ``agent`` (an ``Agent``, or a checkpoint path) against each
    opponent; ``Agent`` objects play in this process (``workers`` 1)."""
    results: dict[str, Evaluation] = {}
    for i, name in enumerate(opponents):
        if isinstance(agent, Agent):
            others: list[Agent | str] = [
                make_agent(name, variant, seed=seed + 101 * (i + 1) + s) for s in range(1, variant.players)
            ]
            entries: list[Agent | str] = [agent, *others]
            workers = 1
        else:
            entries = [agent, *[name] * (variant.players - 1)]
        res = run_tournament(variant, entries, deals=deals, seed=seed + i, workers=workers, progress=progress)
        me, opp = res.stats[0], res.stats[1:]
        results[name] = Evaluation(
            opponent=name,
            mean_payoff=me.mean_payoff,
            ci_low=_end(me.ci95[0]),
            ci_high=_end(me.ci95[1]),
            win_rate=me.win_rate,
            opponent_mean_payoff=sum(s.mean_payoff for s in opp) / len(opp),
            opponent_ci_low=min(_end(s.ci95[0]) for s in opp),
            opponent_ci_high=max(_end(s.ci95[1]) for s in opp),
            opponent_win_rate=sum(s.win_rate for s in opp) / len(opp),
            margin=me.margin,
            margin_ci_low=_end(me.margin_ci95[0]),
            margin_ci_high=_end(me.margin_ci95[1]),
            result=res,
        )
    return results


def _end(value: float | None) -> float:
    """An interval's end; NaN where one deal gives none (so ``beats`` is false)."""
    return math.nan if value is None else value


def format_table(evals: dict[str, Evaluation], agent_name: str = "trained") -> str:
    """The evaluations as one aligned table: the trained agent's payoff per game and 95% interval,
    the opponent copies' mean payoff and the span of their intervals (lowest low, highest high),
    and the trained agent's margin over them (paired by deal) with its interval."""
    width = max([8, *map(len, evals)])
    head = f"{agent_name} payoff"
    lines = [
        f"{'opponent':<{width}} {'deals':>5}  {head:>13} {'95% CI':>17} {'win':>6}  {'opponents':>9} "
        f"{'95% CIs span':>17} {'win':>6}  {'margin':>7} {'95% CI':>17}  beats?",
    ]
    for name, e in evals.items():
        lines.append(
            f"{name:<{width}} {e.result.deals:>5}  {e.mean_payoff:>+13.3f} [{e.ci_low:+.3f}, {e.ci_high:+.3f}] "
            f"{100 * e.win_rate:>5.1f}%  {e.opponent_mean_payoff:>+9.3f} [{e.opponent_ci_low:+.3f}, "
            f"{e.opponent_ci_high:+.3f}] {100 * e.opponent_win_rate:>5.1f}%  {e.margin:>+7.3f} "
            f"[{e.margin_ci_low:+.3f}, {e.margin_ci_high:+.3f}]  {'yes' if e.beats else 'no'}"
        )
    scorings = sorted({e.result.variant.scoring for e in evals.values()})
    paid = "; ".join(f"{s} scoring: {SCORING_SUMMARY[s]}" for s in scorings)
    lines.append(
        f"Payoff per game ({paid}). Each deal is played once per seat rotation: "
        "1 trained seat vs players-1 opponent copies;\nCI over deals: mean ± 1.96 sd/sqrt(deals); margin: the "
        "trained agent's payoff less the copies' mean, paired by deal; beats: the margin's interval lies above 0."
    )
    return "\n".join(lines)
