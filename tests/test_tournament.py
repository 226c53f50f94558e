"""Duplicate-deal tournaments and the rating fit: known answers, symmetry, determinism, the CLI."""

from __future__ import annotations

import csv
import json
import math

import numpy as np
import pytest

from bigtwo.agents.base import Agent, RandomAgent
from bigtwo.arena.rating import ELO_SCALE, fit_bradley_terry, rate_deals
from bigtwo.arena.tournament import entry_names, mean_ci, run_tournament
from bigtwo.cli import main
from bigtwo.env import load_variant

TAIWAN = load_variant("taiwan")


class LowestAgent(Agent):
    """Deterministic: the lowest play that is not pass (pass only when it is the one choice)."""

    name = "lowest"

    def act(self, obs, legal_ids, legal_counts):
        second = legal_ids[:, min(1, legal_ids.shape[1] - 1)]
        return np.where((legal_ids[:, 0] == 0) & (legal_counts > 1), second, legal_ids[:, 0]).astype(np.int64)


class PassAgent(Agent):
    """Passes whenever it may: a very weak player."""

    name = "passer"

    def act(self, obs, legal_ids, legal_counts):
        return legal_ids[:, 0].astype(np.int64)


def _has_make_agent(name: str) -> bool:
    from bigtwo import agents

    make = getattr(agents, "make_agent", None)
    if make is None:
        return False
    try:
        make(name, TAIWAN, seed=0)
    except Exception:
        return False
    return True


# ---------------------------------------------------------------- statistics


def test_mean_ci_known_answer():
    mean, low, high = mean_ci([1.0, 2.0, 3.0, 4.0])
    half = 1.959963984540054 * math.sqrt(5.0 / 3.0) / 2.0  # sd (n-1) of 1..4 is sqrt(5/3)
    assert mean == 2.5
    assert low == pytest.approx(2.5 - half) and high == pytest.approx(2.5 + half)
    assert mean_ci([7.0]) == (7.0, None, None)
    assert mean_ci([3.0, 3.0, 3.0]) == (3.0, 3.0, 3.0)


def test_mean_ci_covers_on_synthetic_deals():
    rng = np.random.default_rng(0)
    hits = 0
    for _ in range(400):
        _, low, high = mean_ci(rng.normal(1.5, 4.0, size=200))
        hits += low <= 1.5 <= high
    assert 0.92 <= hits / 400 <= 0.98


def test_identical_deterministic_agents_score_exactly_the_same():
    # Duplicate rotation with one deterministic policy: every rotation plays out the same, so each
    # agent collects every seat's payoff once per deal.
    agent = LowestAgent(TAIWAN)
    result = run_tournament(TAIWAN, [agent] * 4, deals=24, seed=3, workers=1, progress=False, chunk_deals=10)
    means = {s.mean_payoff for s in result.stats}
    assert len(means) == 1
    assert {s.ci95 for s in result.stats} == {result.stats[0].ci95}
    assert {s.win_rate for s in result.stats} == {0.25}  # one winner per game, one seat each
    assert [s.name for s in result.stats] == ["lowest", "lowest#2", "lowest#3", "lowest#4"]
    assert all(s.games == 24 * 4 for s in result.stats)
    assert result.games == 96


@pytest.mark.skipif(not _has_make_agent("greedy"), reason="agents.make_agent('greedy') not available yet")
def test_greedy_x4_means_identical_by_name():
    result = run_tournament("taiwan", ["greedy"] * 4, deals=16, seed=0, workers=1, progress=False)
    assert len({s.mean_payoff for s in result.stats}) == 1


def test_random_agents_zero_sum_pairwise():
    result = run_tournament("taiwan", ["random"] * 4, deals=200, seed=1, workers=1, progress=False, scoring="pairwise")
    means = [s.mean_payoff for s in result.stats]
    assert sum(means) == pytest.approx(0.0, abs=1e-9)  # every deal is zero-sum over the four agents
    for s in result.stats:
        half = (s.ci95[1] - s.ci95[0]) / 2
        assert abs(s.mean_payoff) < 2 * half  # ≈ 0 (2 half-widths: no flaky 5% misses)
        assert 0.15 < s.win_rate < 0.35


def test_per_deal_arrays_and_summary_agree():
    result = run_tournament("taiwan", ["random"] * 4, deals=30, seed=2, workers=1, progress=False, chunk_deals=7)
    assert result.payoff.shape == (30, 4) and (result.games_per_deal == 4).all()
    for e, s in enumerate(result.stats):
        assert s.mean_payoff == pytest.approx(result.payoff[:, e].sum() / result.games_per_deal[:, e].sum())
        assert s.win_rate == pytest.approx(result.wins[:, e].sum() / 120)
        assert s.moves > 0 and s.ms_per_move >= 0
    assert result.wins.sum() == 120  # one winner per game
    assert (result.payoff <= 0).all()  # cards scoring: the winner 0, the others minus cards left


def test_multi_game_matches_count_games():
    result = run_tournament("taiwan", ["random"] * 4, deals=6, seed=0, workers=1, progress=False, games=3)
    assert all(s.games == 6 * 4 * 3 for s in result.stats)
    assert result.games == 72


# ---------------------------------------------------------------- determinism


def test_same_seed_same_result_and_other_seed_differs():
    a = run_tournament("taiwan", ["random"] * 4, deals=20, seed=5, workers=1, progress=False, chunk_deals=6)
    b = run_tournament("taiwan", ["random"] * 4, deals=20, seed=5, workers=1, progress=False, chunk_deals=6)
    c = run_tournament("taiwan", ["random"] * 4, deals=20, seed=6, workers=1, progress=False, chunk_deals=6)
    assert json.dumps(a.to_dict(timing=False)) == json.dumps(b.to_dict(timing=False))
    assert a.to_dict(timing=False) != c.to_dict(timing=False)


def test_workers_do_not_change_the_result():
    kw = dict(deals=24, seed=11, progress=False, chunk_deals=5)
    one = run_tournament("taiwan", ["random", "random", "random", "random", "random"], workers=1, **kw)
    two = run_tournament("taiwan", ["random", "random", "random", "random", "random"], workers=2, **kw)
    assert one.to_dict(timing=False) == two.to_dict(timing=False)
    np.testing.assert_array_equal(one.payoff, two.payoff)


# ---------------------------------------------------------------- more agents than seats, ratings


def test_sampled_tables_and_rating():
    v = TAIWAN
    agents = [PassAgent(v), RandomAgent(v, seed=1), RandomAgent(v, seed=2), LowestAgent(v), RandomAgent(v, seed=3)]
    result = run_tournament(v, agents, deals=60, seed=0, workers=1, progress=False, bootstrap=50)
    assert result.tables.shape == (60, 4)
    assert all(len(set(row)) == 4 for row in result.tables.tolist())  # distinct agents per table
    games = result.games_per_deal
    assert ((games == 0) | (games == 4)).all() and ((games > 0).sum(axis=1) == 4).all()
    names = [s.name for s in result.stats]
    assert names == ["passer", "random", "random#2", "lowest", "random#3"]
    ratings = {s.name: s.rating for s in result.stats}
    assert ratings["passer"] == min(ratings.values())
    assert sum(ratings.values()) == pytest.approx(0.0, abs=1e-6)
    assert all(s.rating_se is not None and s.rating_se > 0 for s in result.stats)
    d = result.to_dict()
    assert "rating" in d["agents"]["passer"] and d["rating_method"].startswith("Bradley-Terry")
    assert "Elo" in result.table()


def test_bradley_terry_recovers_known_strengths():
    rng = np.random.default_rng(0)
    theta = np.array([-1.0, -0.4, 0.0, 0.3, 1.1])
    theta -= theta.mean()
    k = len(theta)
    wins = np.zeros((k, k))
    for i in range(k):
        for j in range(i + 1, k):
            n = 3000
            p = 1.0 / (1.0 + math.exp(-(theta[i] - theta[j])))
            w = rng.binomial(n, p)
            wins[i, j], wins[j, i] = w, n - w
    fit, se = fit_bradley_terry(wins, return_se=True)
    assert np.abs(fit - theta).max() < 4 * se.max()
    assert np.abs(fit - theta).max() < 0.08
    # Bootstrap over "deals" of independent comparisons agrees with the Hessian error.
    deals = np.zeros((300, k, k))
    for d in range(300):
        for i in range(k):
            for j in range(i + 1, k):
                w = rng.binomial(10, 1.0 / (1.0 + math.exp(-(theta[i] - theta[j]))))
                deals[d, i, j], deals[d, j, i] = w, 10 - w
    r = rate_deals(deals, bootstrap=200, seed=0)
    hessian = rate_deals(deals, bootstrap=0)
    assert np.abs(r.rating / ELO_SCALE - theta).max() < 0.15
    np.testing.assert_allclose(r.se, hessian.se, rtol=0.3)
    np.testing.assert_array_equal(r.rating, hessian.rating)


def test_bradley_terry_two_agents_closed_form():
    fit = fit_bradley_terry(np.array([[0, 80], [20, 0]]), prior=0.0)
    assert fit[0] - fit[1] == pytest.approx(math.log(4.0))
    assert fit.sum() == pytest.approx(0.0)
    # An unbeaten agent stays finite under the prior.
    assert np.isfinite(fit_bradley_terry(np.array([[0, 10], [0, 0]]))).all()


# ---------------------------------------------------------------- errors and names


def test_entry_names_and_errors():
    assert entry_names(["random", "heuristic", "random", "random"]) == ["random", "heuristic", "random#2", "random#3"]
    with pytest.raises(ValueError, match="4 seats"):
        run_tournament("taiwan", ["random"] * 3, deals=2, workers=1, progress=False)
    with pytest.raises(ValueError, match="worker processes"):
        run_tournament("taiwan", [RandomAgent(TAIWAN)] * 4, deals=2, workers=2, progress=False)
    with pytest.raises(ValueError, match="deals"):
        run_tournament("taiwan", ["random"] * 4, deals=0, workers=1, progress=False)


def test_three_players_override():
    result = run_tournament("taiwan", ["random"] * 3, deals=5, seed=0, workers=1, progress=False, players=3)
    assert result.variant.players == 3 and result.games == 15


# ---------------------------------------------------------------- the command


def test_cli_json_and_out(tmp_path, capsys):
    prefix = tmp_path / "res" / "t"
    argv = "tournament --agents random*4 --deals 6 --seed 1 --workers 1 --json --quiet --rule games=2 --out"
    rc = main([*argv.split(), str(prefix)])
    assert rc == 0
    data = json.loads(capsys.readouterr().out)
    assert data["variant"] == "taiwan" and data["deals"] == 6 and data["seed"] == 1
    assert data["overrides"] == {"games": 2}
    assert set(data["agents"]) == {"random", "random#2", "random#3", "random#4"}
    a = data["agents"]["random"]
    assert a["games"] == 6 * 4 * 2 and len(a["ci95"]) == 2 and 0 <= a["win_rate"] <= 1 and "ms_per_move" in a
    assert json.loads((tmp_path / "res" / "t.json").read_text())["agents"].keys() == data["agents"].keys()
    rows = list(csv.DictReader((tmp_path / "res" / "t.csv").open()))
    assert [r["agent"] for r in rows] == list(data["agents"])


def test_cli_table_and_bad_input(capsys):
    argv = "tournament --agents random,random,random,random --deals 3 --workers 1 --quiet"
    assert main(argv.split()) == 0
    assert "payoff/game" in capsys.readouterr().out
    assert main(["tournament", "--agents", "random,random", "--deals", "3", "--workers", "1", "--quiet"]) == 2
    assert "error" in capsys.readouterr().err
    assert main(["tournament", "--agents", "random*4", "--deals", "3", "--quiet", "--rule", "nonsense"]) == 2


def test_illegal_play_names_the_agent():
    class Cheater(Agent):
        name = "cheater"

        def act(self, obs, legal_ids, legal_counts):
            return np.zeros(len(legal_counts), np.int64)  # pass, even when leading

    with pytest.raises(ValueError, match="agent 'cheater' chose an illegal play"):
        run_tournament(TAIWAN, [Cheater(TAIWAN)] * 4, deals=2, workers=1, progress=False)


def test_margin_is_the_lead_over_the_table_paired_by_deal():
    """``margin``: per deal, an entry's payoff per game less its tablemates' mean; under a
    zero-sum scoring that is ``payoff * P / (P - 1)``; under taiwan's ``cards`` scoring (everybody
    but the winner pays) the margin of a strong seat is positive while its payoff is not."""
    for scoring in ("collect", "cards"):
        result = run_tournament(
            "taiwan",
            ["heuristic", "random", "random", "random"],
            deals=40,
            seed=4,
            workers=1,
            progress=False,
            scoring=scoring,
        )
        per_game = result.payoff / result.games_per_deal
        for e, s in enumerate(result.stats):
            others = np.delete(per_game, e, axis=1).mean(axis=1)
            expected = per_game[:, e] - others
            assert s.margin == pytest.approx(expected.mean())
            half = 1.959963984540054 * expected.std(ddof=1) / math.sqrt(len(expected))
            assert s.margin_ci95 == pytest.approx((expected.mean() - half, expected.mean() + half))
            if scoring == "collect":
                assert s.margin == pytest.approx(s.mean_payoff * 4 / 3)
        heuristic = result.stats[0]
        assert heuristic.margin_ci95[0] > 0
        if scoring == "cards":
            assert heuristic.mean_payoff < 0
        row = result.to_dict()["agents"]["heuristic"]
        assert row["margin"] == pytest.approx(heuristic.margin, abs=1e-6)
        assert "margin" in result.table()
