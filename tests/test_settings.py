"""``KEY=VALUE`` settings: one parser for ``--rule`` (variant fields), ``--set`` (training fields) and agent options.

The same text means the same value wherever it is written: values are read as YAML, and a bad
item names itself and the form expected.
"""

from __future__ import annotations

import pytest

from bigtwo.agents import make_agent
from bigtwo.cli import main
from bigtwo.env.rules.settings import parse_setting, parse_settings, read_value


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("3", 3),
        ("0.05", 0.05),
        ("1e-4", 1e-4),
        ("-2E3", -2000.0),
        ("true", True),
        ("null", None),
        ("pairwise", "pairwise"),
        ("3C", "3C"),
        ("[random, greedy]", ["random", "greedy"]),
        ("{players: 2, cards_per_player: 5}", {"players": 2, "cards_per_player": 5}),
        ("", ""),
        ("[unclosed", "[unclosed"),  # not valid YAML: stays text
    ],
)
def test_values_are_read_as_yaml(text: str, value: object) -> None:
    assert read_value(text) == value
    assert parse_setting(f"key={text}") == ("key", value)


def test_later_items_win_and_dashes_read_as_underscores() -> None:
    assert parse_settings(["games=2", "cards-per-player=5", "games=3"]) == {"games": 3, "cards_per_player": 5}
    assert parse_settings(None) == {}


@pytest.mark.parametrize("item", ["players", "=3", " =3"])
def test_bad_items_name_themselves_and_the_form(item: str) -> None:
    with pytest.raises(ValueError, match=f"--set expects KEY=VALUE, got {item!r}"):
        parse_settings([item])


def test_agent_options_read_like_set() -> None:
    agent = make_agent("search:simulations=12,seconds=1e-3,top_k=3", "taiwan")
    assert (agent.simulations, agent.seconds, agent.top_k) == (12, 1e-3, 3)
    with pytest.raises(ValueError, match=r"agent 'search:top_k' expects options written key=value.*got 'top_k'"):
        make_agent("search:top_k", "taiwan")


def test_tournament_rule_reads_variant_fields(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["tournament", "--agents", "random,random", "--deals", "2", "--workers", "1", "--quiet", "--json"]
    assert main([*args, "--rule", "players=2", "--rule", "cards-per-player=3", "--rule", "unit=1e1"]) == 0
    assert '"players": 2' in capsys.readouterr().out
    assert main([*args, "--rule", "players"]) == 2
    assert "--rule expects key=value (a variant field), got 'players'" in capsys.readouterr().err


def test_the_old_variant_set_still_works_for_a_release_and_says_rule(capsys: pytest.CaptureFixture[str]) -> None:
    """Before 0.2 ``--set`` meant a variant field outside ``bigtwo train``: it still does, with a warning."""
    args = ["tournament", "--agents", "random,random", "--deals", "2", "--workers", "1", "--quiet", "--json"]
    assert main([*args, "--set", "players=2"]) == 0
    out = capsys.readouterr()
    assert '"players": 2' in out.out
    assert "--set KEY=VALUE for a variant field is now --rule KEY=VALUE" in out.err
    assert main([*args, "--rule", "players=2"]) == 0
    assert "--rule" not in capsys.readouterr().err  # no warning for the new spelling


def test_train_rule_is_a_variant_field_over_the_configs_variant_settings(capsys: pytest.CaptureFixture[str]) -> None:
    """``bigtwo train --rule KEY=VALUE`` changes the variant trained on, as ``--rule`` does everywhere;
    ``--set`` stays a config field; a wrong field is refused before anything runs."""
    pytest.importorskip("yaml")
    from bigtwo.cli import build_parser
    from bigtwo.cli.train import with_rules
    from bigtwo.train.config import load_config

    args = build_parser().parse_args(["train", "--set", "variant=hong-kong", "--rule", "scoring=collect"])
    cfg = with_rules(load_config("default", args.overrides), args)
    assert (cfg.variant, cfg.variant_settings) == ("hong-kong", {"scoring": "collect"})
    assert main(["train", "--rule", "bogus=1"]) == 2
    assert "unknown field 'bogus'" in capsys.readouterr().err


def test_train_show_prints_the_effective_config_with_each_fields_source(capsys: pytest.CaptureFixture[str]) -> None:
    """``bigtwo train --show``: the config file, its per_variant part, ``--set`` and ``--rule`` applied, each
    field's source named, and nothing trained (it runs without torch, as a config check)."""
    argv = ["train", "--config", "strong", "--set", "variant=hong-kong", "--set", "lr=1e-4", "--rule", "games=2"]
    assert main([*argv, "--show"]) == 0
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()[1:]}
    assert rows["lr"].split()[1] == "0.0001" and rows["lr"].endswith("--set")
    assert rows["variant"].endswith("--set")
    assert rows["stop_at_timesteps"].endswith("strong.yaml per_variant.hong-kong")
    assert "'games': 2" in rows["variant_settings"] and "'scoring': 'collect'" in rows["variant_settings"]
    assert rows["variant_settings"].endswith("--rule over " + rows["variant_settings"].split(" over ")[-1])
    assert "per_variant.hong-kong" in rows["variant_settings"]  # the config's collect scoring, under --rule
    assert rows["seed"].endswith("default")
    assert rows["hidden_size"].endswith("strong.yaml")  # strong.yaml sets a wider network; algo is the default


def test_train_show_needs_no_torch() -> None:
    import subprocess
    import sys

    code = "import sys; sys.modules['torch'] = None\nfrom bigtwo.cli import main\nsys.exit(main(['train', '--show']))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "advice" in done.stdout and "default.yaml" in done.stdout  # the main job's own values, sourced
