"""``KEY=VALUE`` settings: one parser for ``--set`` (variant and training fields) and agent options.

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


def test_tournament_set_reads_variant_fields(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["tournament", "--agents", "random,random", "--deals", "2", "--workers", "1", "--quiet", "--json"]
    assert main([*args, "--set", "players=2", "--set", "cards-per-player=3", "--set", "unit=1e1"]) == 0
    assert '"players": 2' in capsys.readouterr().out
    assert main([*args, "--set", "players"]) == 2
    assert "--set expects key=value (a variant field), got 'players'" in capsys.readouterr().err
