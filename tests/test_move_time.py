"""``bigtwo move-time``: every decision of the measured agent is timed, and only those."""

from __future__ import annotations

import json

import pytest

import bigtwo.cli
from bigtwo.agents import GreedyAgent
from bigtwo.arena.move_time import WARM_UP_MATCHES, measure_move_times


class CountingGreedy(GreedyAgent):
    name = "counting"

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.calls = 0

    def act(self, obs, legal_ids, legal_counts):
        self.calls += 1
        return super().act(obs, legal_ids, legal_counts)


def test_every_decision_of_the_agent_after_the_warm_up_is_timed():
    from bigtwo.env import load_variant

    variant = load_variant("taiwan")
    agent = CountingGreedy(variant)
    res = measure_move_times(variant, agent, matches=3, seed=4)
    assert WARM_UP_MATCHES >= 1 and 0 < res.moves < agent.calls  # the warm-up match's decisions are not timed
    assert res.agent == "counting"
    assert res.median_ms <= res.percentile_ms(95) <= res.slowest_ms


def test_cli_prints_a_row_per_agent(capsys):
    assert bigtwo.cli.main(["move-time", "--agents", "greedy,random", "--matches", "2", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["agent"] for r in rows] == ["greedy", "random"]
    assert all(r["moves"] > 0 and r["slowest_ms"] >= r["median_ms"] for r in rows)


@pytest.mark.parametrize("matches", [0, -1, 2.5, True])
def test_bad_match_counts_are_refused(matches):
    with pytest.raises(ValueError, match="matches must be a positive integer"):
        measure_move_times("taiwan", "greedy", matches=matches)


def test_the_old_name_of_matches_still_counts_them(capsys):
    """``games`` and ``--games``, the names of ``matches`` up to 0.2, are read until 0.3, with a warning."""
    with pytest.warns(DeprecationWarning, match=r"measure_move_times\(games=\.\.\.\) is now"):
        assert measure_move_times("taiwan", "greedy", games=1, seed=4).moves > 0
    assert bigtwo.cli.main(["move-time", "--agents", "random", "--games", "1", "--json"]) == 0
    assert "--games is now --matches" in capsys.readouterr().err
    assert bigtwo.cli.main(["move-time", "--agents", "random", "--games", "1", "--matches", "1"]) == 2
