"""The arena: agents played against each other on duplicate deals, and what the games say.

| module | job |
|---|---|
| ``deals`` | duplicate deals and tables: deal seeds, who sits where, the chunks a worker plays |
| ``chunk`` | one chunk of deals played in every rotation on one batched engine |
| ``pool`` | chunks played by worker processes, and the signals that end a run with them |
| ``cluster`` | ``--ray local|auto|ADDRESS``: connecting to a Ray cluster; chunks as Ray tasks |
| ``stats`` | a mean over deals with its 95% interval; margins against the table |
| ``results`` | ``TournamentResult`` and ``AgentStats``: the report, as text, JSON and CSV |
| ``tournament`` | ``run_tournament``: the whole run (see its docstring for every statistic) |
| ``rating`` | Bradley-Terry ratings on pairwise finishing order, Elo scale |
| ``ladder`` | every shipped agent rated on a variant, as a Markdown table (``bigtwo ladder``) |
| ``panel`` | the benchmark's fixed, versioned panel of opponents |
| ``benchmark`` | an agent's card against the panel (``bigtwo benchmark``) |
| ``move_time`` | how long an agent thinks per move (``bigtwo move-time``) |
| ``evaluate`` | a trained agent against baseline opponents, one seat vs copies (the trainers' evaluation) |
| ``tune`` | the heuristic's weights tuned for a variant and its scoring on duplicate deals (``bigtwo tune``) |
| ``plots`` | pictures of a ladder's ratings and a tournament's payoffs, with their intervals (``--plot``) |
| ``replay`` | a game record stepped through in the terminal (``bigtwo replay``) |

The ``bigtwo tournament``, ``bigtwo ladder``, ``bigtwo move-time`` and ``bigtwo tune`` subcommands are
``bigtwo.cli.arena``, ``bigtwo replay`` is ``bigtwo.cli.replay``.

The arena sits above the agents (it builds them by name with ``bigtwo.agents.make_agent``) and below the
trainers and the web table, which use it; the rules layer (``bigtwo.env``) knows nothing of it.

>>> result = run_tournament("taiwan", ["greedy", "random"], deals=2, seed=0, workers=1, progress=False, players=2)
>>> [s.name for s in result.stats], result.games
(['greedy', 'random'], 4)
"""

from __future__ import annotations

from bigtwo.layout import second_name

if __name__ != "bigtwo.arena":  # ``import arena`` from the repository root
    raise second_name(__name__, "bigtwo.arena")

from bigtwo.arena.results import AgentStats, TournamentResult
from bigtwo.arena.stats import mean_ci, table_margins
from bigtwo.arena.tournament import entry_names, run_tournament

__all__ = ["AgentStats", "TournamentResult", "entry_names", "mean_ci", "run_tournament", "table_margins"]
