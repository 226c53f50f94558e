"""``bigtwo tune``: coordinate search of the heuristic's weights on duplicate deals, and the named
weight sets it made (``heuristic:weights=NAME``)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import bigtwo.cli
from bigtwo.agents import heuristic
from bigtwo.agents.registry import make_agent
from bigtwo.arena.tournament import run_tournament
from bigtwo.arena.tune import FACTORS, candidate_values, payoff_against, tune_weights
from bigtwo.env import load_variant


def test_candidate_values_step_each_kind_of_weight():
    w = heuristic.DEFAULT_WEIGHTS.copy()
    w[heuristic.Weight.EPS] = 0.0
    values = candidate_values(w)
    assert values[heuristic.Weight.SINGLE_SPAN] == [12.0 * f for f in FACTORS]
    assert values[heuristic.Weight.LOW_RANK] == [3.0, 4.0, 6.0, 7.0]  # a rank: whole steps
    assert values[heuristic.Weight.EPS] == [0.1, 0.3, 1.0, -0.1]  # at 0: small values either side
    assert values[heuristic.Weight.CTRL_BONUS] == [0.1, 0.3, 1.0]  # never below 0
    assert all(len(v) >= 3 for v in values) and len(values) == heuristic.NUM_WEIGHTS


def test_a_short_tune_keeps_only_gains_and_its_payoff_replays(tmp_path, capsys):
    out = tmp_path / "w.json"
    args = ["tune", "--variant", "taiwan", "--rule", "scoring=collect", "--rounds", "1", "--deals", "3"]
    assert bigtwo.cli.main([*args, "--seed", "5", "--workers", "1", "--quiet", "--out", str(out)]) == 0
    printed = capsys.readouterr()
    data = json.loads(out.read_text())
    assert len(data["steps"]) == heuristic.NUM_WEIGHTS and "round 1 weight 0 eps:" in printed.err
    assert data["payoff"] >= data["start_payoff"] == 0.0  # the start is the opponents' weights
    changed = [s for s in data["steps"] if "->" in s]
    assert (len(changed) > 0) == (data["payoff"] > 0)
    assert data["weights"] != heuristic.DEFAULT_WEIGHTS.tolist() or not changed
    assert "weights: [" in printed.out
    # the same deals replay the payoff the search reports for the weights it found
    variant = load_variant("taiwan", scoring="collect")
    assert payoff_against(variant, np.array(data["weights"]), heuristic.DEFAULT_WEIGHTS, 3, 5) == pytest.approx(
        data["payoff"]
    )


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"deals": 0}, "deals must be a positive integer"),
        ({"rounds": True}, "rounds must be a positive integer"),
        ({"seed": -1}, "seed -1 is not allowed: a seed is an integer 0..2"),
        ({"seed": None}, "seed must be given"),
        ({"workers": 0}, r"workers must be a positive integer \(processes playing the candidates\)"),
        ({"min_gain": -0.1}, "min_gain must be a number >= 0"),
        ({"start": "nope"}, r"weights must be a set's name \(default"),
    ],
)
def test_bad_tune_arguments_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        tune_weights("taiwan", progress=False, **{"workers": 1, **kwargs})


def test_weights_by_name():
    agent = make_agent("heuristic:weights=default", "taiwan")
    assert np.array_equal(agent.ctx.weights, heuristic.DEFAULT_WEIGHTS)
    assert agent.ctx.weights is not heuristic.DEFAULT_WEIGHTS  # a copy: tuning one agent leaves the set alone


def test_weights_by_their_names():
    """Each weight has a name, a default and a meaning; a mapping of names to values changes
    those weights from the defaults, and a name that is no weight is refused, naming the weights."""
    assert (
        heuristic.DEFAULT_WEIGHTS.tolist() == [w.default for w in heuristic.Weight]
        and len(heuristic.NAMES) == heuristic.NUM_WEIGHTS == 23
    )
    assert all(w.meaning for w in heuristic.Weight)
    changed = heuristic.weight_set({"tempo": 20, "low_rank": 6})
    assert np.flatnonzero(changed != heuristic.DEFAULT_WEIGHTS).tolist() == [
        heuristic.Weight.LOW_RANK,
        heuristic.Weight.TEMPO,
    ]
    assert changed[heuristic.Weight.TEMPO] == 20.0 and changed[heuristic.Weight.LOW_RANK] == 6.0
    agent = make_agent("heuristic", "taiwan", weights={"tempo": 20})
    assert agent.ctx.weights[heuristic.Weight.TEMPO] == 20.0
    with pytest.raises(ValueError, match=r"unknown weight 'tmepo'; the weights: eps, single_span, .*, press_owner"):
        heuristic.weight_set({"tmepo": 20})
    with pytest.raises(ValueError, match="weight tempo must be a finite number, got nan"):
        heuristic.weight_set({"tempo": float("nan")})
    with pytest.raises(ValueError, match="weight tempo must be a finite number, got 'high'"):
        heuristic.weight_set({"tempo": "high"})


def test_the_tuned_sets_change_only_the_weights_their_tuning_moved():
    """The sets as the tuning found them (their changes from the defaults)."""
    cards = heuristic.WEIGHT_SETS["cards"]
    moved = [heuristic.NAMES[i] for i in np.flatnonzero(cards != heuristic.DEFAULT_WEIGHTS)]
    assert moved == ["eps", "single_span", "pair_span", "spend", "tempo", "early_span"]
    assert (
        cards[heuristic.Weight.TEMPO] == 20.0 and heuristic.WEIGHT_SETS["collect"][heuristic.Weight.END_MULTI] == -0.1
    )


def test_the_collect_set_beats_the_default_heuristic_under_collect():
    """What the set was tuned for, on other deals than its tuning's (seed 101)."""
    agents = ["heuristic:weights=collect", "heuristic", "heuristic", "heuristic"]
    result = run_tournament("hong-kong", agents, deals=60, seed=3, workers=1, progress=False, scoring="collect")
    tuned = result.stats[0]
    assert tuned.ci95[0] > 2.0 and tuned.win_rate > 0.3
