"""``bigtwo benchmark``: the card's files and figures, same seed same figures, resuming, refusals,
and a tiny approximate-exploitability run (bigtwo.arena.panel, bigtwo.arena.benchmark, bigtwo.train.exploit)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import bigtwo.arena.benchmark as bench
from bigtwo.arena.panel import PANEL_VERSION, choose_members, panel_for
from bigtwo.cli import main

TINY = ["--deals", "2", "--workers", "1", "--quiet"]


def card_of(folder: Path) -> dict:
    return json.loads((folder / "card.json").read_text(encoding="utf-8"))


def test_the_card_is_written_with_every_member(tmp_path, capsys):
    out = tmp_path / "card"
    assert main(["benchmark", "heuristic", "--panel", "random,greedy", "--out", str(out), *TINY]) == 0
    pytest.importorskip("matplotlib")
    assert {p.name for p in out.iterdir()} >= {"card.md", "card.json", "card.png", "parts"}
    assert not [p for p in out.rglob("*.tmp*")]  # nothing half-written left
    card = card_of(out)
    assert list(card["panel"]) == ["random", "greedy"] and card["panel_version"] == PANEL_VERSION
    for member in card["panel"].values():
        assert member["games"] == 2 * 4 and member["margin_ci95"][0] <= member["margin"] <= member["margin_ci95"][1]
        assert 0.0 <= member["win_rate"] <= 1.0
    assert card["summary"]["worst"]["member"] in ("random", "greedy")
    assert card["timing"]["moves"] > 0 and card["timing"]["p99_ms"] >= card["timing"]["median_ms"]
    md = (out / "card.md").read_text(encoding="utf-8")
    assert md == capsys.readouterr().out
    assert "| random | `random` |" in md and "| greedy | `greedy` |" in md and "Worst-case margin" in md
    assert "Made by: `bigtwo benchmark heuristic --variant taiwan --deals 2 --seed 0 --panel random,greedy`" in md


def test_same_seed_same_figures(tmp_path):
    cards = [
        bench.benchmark(
            "greedy",
            "taiwan",
            deals=3,
            seed=4,
            panel="random,heuristic",
            out=tmp_path / str(i),
            workers=1,
            progress=False,
        )
        for i in range(2)
    ]
    for c in cards:
        c.pop("timing")
    assert cards[0] == cards[1]
    other = bench.benchmark("greedy", "taiwan", deals=3, seed=5, panel="random,heuristic", workers=1, progress=False)
    assert other["panel"]["random"]["margin"] != cards[0]["panel"]["random"]["margin"]


def test_rules_change_the_tuned_member():
    members, _ = panel_for("taiwan", "tuned")
    assert members == {"tuned": "heuristic:weights=cards"}
    card = bench.benchmark(
        "heuristic", "taiwan", deals=2, panel="tuned", rules={"scoring": "collect"}, workers=1, progress=False
    )
    assert card["scoring"] == "collect" and card["panel"]["tuned"]["spec"] == "heuristic:weights=collect"


def test_resume_skips_finished_members_and_refuses_other_settings(tmp_path, monkeypatch):
    out = tmp_path / "card"
    first = bench.benchmark("heuristic", "taiwan", deals=2, panel="random", out=out, workers=1, progress=False)
    played = []
    real = bench.member_result

    def counting(agent, spec, *args, **kwargs):
        played.append(spec)
        return real(agent, spec, *args, **kwargs)

    monkeypatch.setattr(bench, "member_result", counting)
    again = bench.benchmark("heuristic", "taiwan", deals=2, panel="random,greedy", out=out, workers=1, progress=False)
    assert played == ["greedy"]  # random was finished: read back, not played
    assert again["panel"]["random"] == first["panel"]["random"] and list(again["panel"]) == ["random", "greedy"]
    with pytest.raises(ValueError, match=r"other settings \(seed\).*another --out folder"):
        bench.benchmark("heuristic", "taiwan", deals=2, seed=1, panel="random", out=out, workers=1, progress=False)


@pytest.mark.parametrize(
    ("words", "message"),
    [
        (["alphago"], "unknown agent 'alphago'; allowed: random, greedy"),
        (["heuristic", "--panel", "random,champion"], "unknown panel member(s) 'champion'; allowed: random"),
        (["heuristic", "--deals", "1"], "deals must be at least 2"),
        (["heuristic", "--exploit-minutes", "0"], "--exploit-minutes must be a positive number of minutes, got 0"),
        (["heuristic", "--rule", "scoring=bogus"], "scoring"),
    ],
)
def test_bad_input_exits_2_naming_what_is_allowed(words, message, tmp_path, capsys):
    assert main(["benchmark", *words, "--out", str(tmp_path / "c"), "--quiet", "--workers", "1"]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "c" / "card.json").exists()


def test_a_member_that_cannot_play_the_variant(no_strong, tmp_path, capsys):
    members, left_out = panel_for("taiwan")
    assert "network" not in members and "no trained weights" in left_out["network"]
    assert main(["benchmark", "heuristic", "--panel", "random,network", "--out", str(tmp_path / "c"), *TINY]) == 2
    err = capsys.readouterr().err
    assert "panel member 'network' cannot play variant 'taiwan'" in err and "allowed here: random, greedy" in err
    assert choose_members("default,strong")[-1] == "strong" and "strong" not in choose_members()


def test_exploit_budget_and_recipe():
    pytest.importorskip("torch")
    from bigtwo.env.rules.variant import load_variant
    from bigtwo.train.exploit import network_source, response_config

    taiwan = load_variant("taiwan")
    assert network_source("strong:simulations=0", taiwan) == "shipped"
    assert network_source("strong", taiwan) is None and network_source("search", taiwan) is None
    with pytest.raises(
        ValueError, match=r"below what one update needs: 16,384 env steps .* allowed: at least 2\.1 minutes"
    ):
        response_config("search", taiwan, "taiwan", {}, 1.0, Path("unused"), 0, agent_ms=10.0)
    cfg, recipe, cost = response_config("heuristic", taiwan, "taiwan", {}, 5.0, Path("unused"), 0, agent_ms=0.05)
    assert recipe == "scratch-dmc" and cfg.baselines == ["heuristic"] and cfg.league_baselines == 1.0
    assert cfg.league_self == 0 and cfg.time_limit_minutes == 5.0 and "minutes buy about" in cost


def test_a_tiny_best_response_writes_its_file_and_curve(trained_run, tmp_path):
    agent = str(next((trained_run / "checkpoints").glob("*.pt")))
    out = tmp_path / "card"
    sets = ["num_envs=8", "num_steps=16", "minibatch_size=64", "update_epochs=1", "stop_at_timesteps=256"]
    sets += ["eval_every=128", "eval_deals=2", "checkpoint_every=256", "device=cpu"]
    words = ["benchmark", agent, "--panel", "random", "--out", str(out), "--exploit-minutes", "1", *TINY]
    assert main([*words, *[w for s in sets for w in ("--exploit-set", s)]]) == 0
    card = card_of(out)
    e = card["exploitability"]
    assert (out / e["file"]).is_file() and e["recipe"] == "best-response" and e["init_from"] == agent
    assert e["steps"] == 256 and len(e["curve"]) >= 2 and e["curve"][-1]["margin"] == e["margin"]
    assert [p["step"] for p in e["curve"]] == sorted(p["step"] for p in e["curve"])
    assert "## Approximate exploitability" in (out / "card.md").read_text(encoding="utf-8")
