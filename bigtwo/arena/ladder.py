"""The ladder: every shipped agent rated on one variant, as the Markdown table the docs show (docs/strong.md).

    bigtwo ladder --variant taiwan                      2,000 deals, seed 0, search at 200 simulations
    bigtwo ladder --variant japan --deals 500 --seed 3 --simulations 50 --out japan.md
    bigtwo ladder --variant taiwan --agents runs/<run>/checkpoints/step_....pt,heuristic:weights=...
    bigtwo ladder --list                                the shipped trained agents and what made them

The field (``ladder_agents``): ``random``, ``greedy``, ``heuristic``, ``search:simulations=N``
(``--simulations``, default 200), ``strong`` and its network alone (``strong:simulations=0``)
when trained weights are shipped for the variant (``bigtwo.agents.pretrained``), then any ``--agents`` (names or checkpoint paths). It plays one
duplicate tournament (``bigtwo.arena.tournament``): each deal seats a table of the variant's number
of players drawn from the field by the seed and plays it in every rotation, and the
Bradley-Terry fit on pairwise finishing order (``bigtwo.arena.rating``, bootstrap over deals) puts
everyone on one Elo scale, mean 0.

The table (``Ladder.markdown``), best rating first:

| column | what |
|---|---|
| ``agent`` | the entry's name (an agent listed twice: ``name#2``) |
| ``rating`` | Elo-scale rating ± 1.96 bootstrap standard errors (a 95% interval) |
| ``payoff/game [95% CI]`` | mean payoff per game over the deals the agent played, normal 95% interval over deals |
| ``win rate`` | games won / games played |
| ``ms/move`` | wall time per move inside the agent (left out with ``--no-timing``) |

Under it: how many deals and games, and the exact ``bigtwo ladder`` command that makes the
table again. Same seed, same table (the timing column aside; with ``--no-timing`` reruns are
byte-identical; the number of worker processes never changes the result).

>>> field = ladder_agents("taiwan", simulations=50, extra=["runs/a/checkpoints/step_000000001024.pt"])
>>> field[:4], field[-1]
(['random', 'greedy', 'heuristic', 'search:simulations=50'], 'runs/a/checkpoints/step_000000001024.pt')
"""

from __future__ import annotations

import dataclasses
import math
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from bigtwo.agents import pretrained
from bigtwo.agents.registry import make_agent
from bigtwo.arena.results import AgentStats, TournamentResult
from bigtwo.arena.stats import Z95
from bigtwo.arena.tournament import run_tournament
from bigtwo.env.checks import check_count
from bigtwo.env.rules.settings import parse_settings
from bigtwo.env.rules.variant import Variant, load_variant, variant_names

BASELINES = ("random", "greedy", "heuristic")
DEFAULT_DEALS = 2000
DEFAULT_SEED = 0
DEFAULT_SIMULATIONS = 200


def ladder_agents(
    variant: Variant | str, simulations: int = DEFAULT_SIMULATIONS, extra: Sequence[str] = ()
) -> list[str]:
    """The field of a ladder on ``variant``: the baselines, search with ``simulations`` per move,
    ``strong`` and its network alone when weights are shipped for the variant, then ``extra``."""
    check_count("simulations", simulations, "search's budget per move")
    field = [*BASELINES, f"search:simulations={simulations}"]
    if pretrained.has_weights(load_variant(variant)):
        field += [pretrained.STRONG, f"{pretrained.STRONG}:simulations=0"]
    return [*field, *extra]


@dataclass
class Ladder:
    """A ladder's tournament and the command line that reproduces it."""

    result: TournamentResult
    variant_arg: str  # the variant as given (a name or a YAML path)
    simulations: int
    extra: list[str]
    settings: list[str] = dataclasses.field(default_factory=list)  # the --rule KEY=VALUE items

    def command(self, timing: bool = True) -> str:
        """The ``bigtwo ladder`` command that makes this table (every option that changes it written out)."""
        r = self.result
        words = ["bigtwo", "ladder", "--variant", self.variant_arg, "--deals", str(r.deals), "--seed", str(r.seed)]
        words += ["--simulations", str(self.simulations)]
        for item in self.settings:
            words += ["--rule", item]
        if self.extra:
            words += ["--agents", ",".join(self.extra)]
        if not timing:
            words.append("--no-timing")
        return shlex.join(words)

    def ranked(self) -> list[AgentStats]:
        """The entries, best rating first (ties: by name)."""
        return sorted(self.result.stats, key=lambda s: (-(s.rating or 0.0), s.name))

    def markdown(self, timing: bool = True) -> str:
        """The ladder as a Markdown table with a caption and the command line; see the module docstring."""
        r = self.result
        v = r.variant
        header = ["agent", "rating", "payoff/game [95% CI]", "win rate"] + (["ms/move"] if timing else [])
        lines = [
            f"Ladder on {v.name}: {r.deals:,} duplicate deals, {v.players} seats per table drawn from "
            f"{len(r.stats)} agents, {r.games:,} games.",
            "",
            "| " + " | ".join(header) + " |",
            "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|",
        ]
        for s in self.ranked():
            cells = [s.name, _rating(s), _payoff(s), f"{100 * s.win_rate:.1f}%"]
            if timing:
                cells.append(_ms(s.ms_per_move))
            lines.append("| " + " | ".join(cells) + " |")
        lines += [
            "",
            f"Rating: {r.rating_method}, Elo scale, mean 0, ± 1.96 SE. Payoff: per game, 95% CI over deals.",
            "",
            f"Made by: `{self.command(timing)}`",
        ]
        return "\n".join(lines) + "\n"


def _rating(s: AgentStats) -> str:
    if s.rating is None or s.rating_se is None:
        return "n/a"
    return f"{s.rating:+.0f} ± {Z95 * s.rating_se:.0f}"


def _payoff(s: AgentStats) -> str:
    low, high = s.ci95
    interval = "[n/a]" if low is None or high is None else f"[{low:+.2f}, {high:+.2f}]"
    return f"{s.mean_payoff:+.2f} {interval}"


def _ms(ms: float) -> str:
    return "n/a" if not math.isfinite(ms) else f"{ms:.3g}"


def run_ladder(
    variant: Variant | str,
    deals: int = DEFAULT_DEALS,
    seed: int = DEFAULT_SEED,
    simulations: int = DEFAULT_SIMULATIONS,
    extra: Sequence[str] = (),
    workers: int | None = None,
    progress: bool = True,
    settings: Sequence[str] = (),
) -> Ladder:
    """Rate the ladder's field (``ladder_agents``) on ``variant`` with ``deals`` duplicate deals;
    ``settings``: variant fields changed, ``KEY=VALUE`` texts as ``--rule`` takes them (e.g.
    ``scoring=collect``: the variant keeps its name, so ``strong`` is still the one shipped for it)."""
    variant_arg = variant.name if isinstance(variant, Variant) else str(variant)
    if settings:
        base = variant if isinstance(variant, Variant) else load_variant(variant)
        variant = base.replace(**parse_settings(list(settings), form="key=value (a variant field)"))
    field = ladder_agents(variant, simulations, extra)
    result = run_tournament(variant, field, deals=deals, seed=seed, workers=workers, progress=progress, rating=True)
    return Ladder(result, variant_arg, simulations, list(extra), list(settings))


def describe_shipped() -> str:
    """The shipped trained agents (``bigtwo ladder --list``): the folder, then per file its variant,
    size and provenance (reading a file needs torch; without it that is said instead); then the
    networks trained from scratch (``scratch/``), the same way. (The beliefs, ``belief/``, are read by
    the trainers' ``bigtwo.train.belief.describe_beliefs``: ``bigtwo ladder --list`` prints both.)"""
    folder = pretrained.pretrained_dir()
    names = pretrained.shipped_variants()
    lines = [f"trained agents ({pretrained.STRONG!r}) in {folder}: {', '.join(names) or 'none shipped yet'}"]
    for name in names:
        path = folder / f"{name}{pretrained.SUFFIX}"
        lines.append(f"{name} ({path.stat().st_size / 1e6:.2f} MB)")
        if name not in variant_names():
            lines.append(f"  for a variant file named {name!r}: bigtwo ladder --list reads only named variants' files")
            continue
        try:
            record = getattr(make_agent(pretrained.STRONG, name), "provenance", None)
        except ValueError as exc:
            lines.append(f"  not loadable: {exc}")
            continue
        lines += [f"  {line}" for line in pretrained.describe_provenance(record)]
    scratch = sorted((folder / pretrained.SCRATCH).glob(f"*{pretrained.SUFFIX}"))
    if scratch:
        lines.append(f"trained from scratch ({pretrained.STRONG}:network=scratch) in {folder / pretrained.SCRATCH}:")
        for path in scratch:
            lines.append(f"{path.stem} ({path.stat().st_size / 1e6:.2f} MB)")
            if path.stem not in variant_names():
                lines.append(
                    f"  for a variant file named {path.stem!r}: bigtwo ladder --list reads only named variants' files"
                )
                continue
            try:
                record = getattr(
                    make_agent(f"{pretrained.STRONG}:network=scratch,simulations=0", path.stem), "provenance", None
                )
            except ValueError as exc:
                lines.append(f"  not loadable: {exc}")
                continue
            lines += [f"  {line}" for line in pretrained.describe_provenance(record)]
    return "\n".join(lines)
