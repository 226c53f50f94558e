"""The ladder: its field, the Markdown table's structure and order, determinism, the command line
that reproduces it, and ``strong`` included exactly when weights are shipped for the variant."""

from __future__ import annotations

import shlex

import pytest

from bigtwo.arena.ladder import ladder_agents, run_ladder
from bigtwo.cli import main

HEADER = "| agent | rating | payoff/game [95% CI] | win rate | ms/move |"
FAST = dict(deals=4, simulations=2, workers=1, progress=False)  # fast agents; search on a tiny budget


def rows(markdown: str) -> list[list[str]]:
    """The table's body rows as cells."""
    lines = [line for line in markdown.splitlines() if line.startswith("| ")]
    return [[c.strip() for c in line.strip("|").split("|")] for line in lines[1:]]


def test_the_field(no_strong):
    assert ladder_agents("taiwan") == ["random", "greedy", "heuristic", "search:simulations=200"]
    assert ladder_agents("japan", simulations=5, extra=["heuristic"])[-2:] == ["search:simulations=5", "heuristic"]
    with pytest.raises(ValueError, match="simulations must be a positive integer"):
        ladder_agents("taiwan", simulations=0)


def test_table_structure_and_order(no_strong):
    ladder = run_ladder("taiwan", **FAST)
    table = ladder.markdown()
    assert table.startswith("Ladder on taiwan: 4 duplicate deals, 4 seats per table drawn from 4 agents, 16 games.")
    assert HEADER in table and "|---|---:|---:|---:|---:|" in table
    body = rows(table)
    assert sorted(r[0] for r in body) == ["greedy", "heuristic", "random", "search:simulations=2"]
    ratings = [int(r[1].split(" ± ")[0]) for r in body]
    assert ratings == sorted(ratings, reverse=True)  # best rating first
    stats = {s.name: s for s in ladder.result.stats}
    for name, rating, payoff, win_rate, ms in body:
        s = stats[name]
        assert rating == f"{s.rating:+.0f} ± {1.959963984540054 * s.rating_se:.0f}"
        assert payoff == f"{s.mean_payoff:+.2f} [{s.ci95[0]:+.2f}, {s.ci95[1]:+.2f}]"
        assert win_rate == f"{100 * s.win_rate:.1f}%" and float(ms) > 0
    assert table.rstrip().endswith("Made by: `bigtwo ladder --variant taiwan --deals 4 --seed 0 --simulations 2`")


def test_same_seed_same_table(no_strong):
    a = run_ladder("taiwan", seed=5, **FAST).markdown(timing=False)
    b = run_ladder("taiwan", seed=5, **FAST).markdown(timing=False)
    c = run_ladder("taiwan", seed=6, **FAST).markdown(timing=False)
    assert a == b and rows(a) != rows(c)
    assert "ms/move" not in a and a.rstrip().endswith("--seed 5 --simulations 2 --no-timing`")


def test_the_printed_command_makes_the_same_table(no_strong, tmp_path, capsys):
    ladder = run_ladder("taiwan", seed=3, extra=["random"], **FAST)
    table = ladder.markdown(timing=False)
    command = shlex.split(ladder.command(timing=False))
    assert command[:2] == ["bigtwo", "ladder"] and "--agents" in command
    out = tmp_path / "ladder.md"
    assert main([*command[1:], "--quiet", "--workers", "1", "--out", str(out)]) == 0
    assert capsys.readouterr().out == table == out.read_text(encoding="utf-8")
    assert "random#2" in table


def test_strong_is_on_the_ladder_iff_shipped_for_the_variant(strong_dir):
    assert ladder_agents("taiwan")[-2:] == ["strong", "strong:simulations=0"]
    assert not any(a.startswith("strong") for a in ladder_agents("japan"))
    table = run_ladder("taiwan", **FAST).markdown()
    assert "| strong |" in table and "| strong:simulations=0 |" in table and "drawn from 6 agents" in table
    assert "strong" not in run_ladder("japan", **FAST).markdown()


def test_a_checkpoint_on_the_ladder(trained_run, no_strong):
    from bigtwo.train import checkpoint as ckpt

    path = str(ckpt.latest_checkpoint(trained_run))
    names = [r[0] for r in rows(run_ladder("taiwan", extra=[path], **FAST).markdown())]
    assert path in names and len(names) == 5


def test_list_shows_what_made_the_shipped_weights(strong_dir, capsys):
    assert main(["ladder", "--list"]) == 0
    out = capsys.readouterr().out
    assert f"in {strong_dir}: taiwan" in out and "taiwan (0.0" in out
    assert "ppo, seed 1, 256 env steps" in out and "trained by:" in out and "exported:" in out
    (strong_dir / "belief").mkdir(exist_ok=True)
    (strong_dir / "belief" / "taiwan.pt").write_bytes(b"not a belief")  # damaged: said, the listing goes on
    assert main(["ladder", "--list"]) == 0
    out = capsys.readouterr().out
    beliefs = out.split("beliefs (the lookahead deals its guesses by them) in ")[1]
    assert "\ntaiwan (0.00 MB)\n  not readable as a belief (" in beliefs


def test_bad_input_is_a_clear_error(no_strong, capsys):
    assert main(["ladder", "--simulations", "0", "--quiet"]) == 2
    assert "simulations must be a positive integer (search's budget per move)" in capsys.readouterr().err
    assert main(["ladder", "--list"]) == 0
    assert "none shipped yet" in capsys.readouterr().out


def test_a_ladder_under_another_scoring_keeps_the_variant_and_says_so(no_strong, capsys):
    ladder = run_ladder("hong-kong", settings=["scoring=collect", "tiers=[[10, 2], [13, 3]]"], **FAST)
    v = ladder.result.variant
    assert (v.name, v.scoring, v.tiers) == ("hong-kong", "collect", ((10, 2.0), (13, 3.0)))
    command = shlex.split(ladder.command(timing=False))
    assert command[command.index("--rule") + 1] == "scoring=collect" and command.count("--rule") == 2
    assert main([*command[1:], "--quiet", "--workers", "1"]) == 0
    assert capsys.readouterr().out == ladder.markdown(timing=False)
    with pytest.raises(ValueError, match="scoring"):
        run_ladder("hong-kong", settings=["scoring=most"], **FAST)
