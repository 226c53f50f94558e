"""Renamed names keep working for one release, with a ``DeprecationWarning`` where a user writes them;
what a checkpoint, a record or a web room stored under an old name loads without one.

RULES.md names the renames: the setting ``direction`` is now ``seating`` (a label) and
``direction_per_game`` is ``turn_order`` (the play order); ``Variant.rules_key`` is the rules'
identity and the action table's key is ``Variant.action_table_key``; an ``Engine``'s batch is
``num_matches`` matches (RULES.md "Words").
"""

from __future__ import annotations

import copy
import json
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from bigtwo.env.rules.actions import action_table
from bigtwo.env.rules.variant import RENAMED, SETTINGS, Variant, load_variant, stored_variant

PRETRAINED = Path(__file__).resolve().parents[1] / "agents" / "pretrained"


def with_old_names(settings: dict) -> dict:
    """``settings`` (``Variant.to_dict()``) as a release before the renames wrote them."""
    new_to_old = {new: old for old, new in RENAMED.items()}
    return {new_to_old.get(k, k): v for k, v in settings.items()}


@contextmanager
def no_deprecation() -> Iterator[None]:
    """Fail on any ``DeprecationWarning`` raised inside."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        yield


def test_every_old_name_maps_to_a_declared_setting() -> None:
    assert RENAMED == {"direction": "seating", "direction_per_game": "turn_order"}
    assert set(RENAMED.values()) <= set(SETTINGS)
    assert not set(RENAMED) & set(SETTINGS)


def test_an_old_key_in_a_users_yaml_file_warns_and_is_read(tmp_path: Path) -> None:
    path = tmp_path / "old.yaml"
    path.write_text("direction: clockwise\ndirection_per_game: alternate\n", encoding="utf-8")
    with pytest.warns(DeprecationWarning) as warned:
        v = load_variant(path)
    assert sorted(str(w.message).split(": ", 1)[1] for w in warned) == [
        "field 'direction' is now 'seating'; the old name is read until 0.3",
        "field 'direction_per_game' is now 'turn_order'; the old name is read until 0.3",
    ]
    assert all(str(w.message).startswith(str(path)) for w in warned)
    assert (v.seating, v.turn_order) == ("clockwise", "alternate")
    with no_deprecation():
        new = tmp_path / "new.yaml"
        new.write_text("seating: clockwise\nturn_order: alternate\n", encoding="utf-8")
        assert load_variant(new).replace(name="old") == v


def test_an_old_keyword_warns_and_is_read() -> None:
    with pytest.warns(DeprecationWarning, match="field 'direction_per_game' is now 'turn_order'"):
        v = load_variant("taiwan", direction_per_game="random")
    assert v.turn_order == "random"
    with pytest.warns(DeprecationWarning, match="field 'direction' is now 'seating'"):
        assert load_variant("taiwan").replace(direction="clockwise").seating == "clockwise"


def test_an_old_name_beside_its_new_one_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "both.yaml"
    path.write_text("turn_order: fixed\ndirection_per_game: random\n", encoding="utf-8")
    with pytest.raises(
        ValueError, match="field 'direction_per_game' is the old name of 'turn_order'; give 'turn_order' only"
    ):
        load_variant(path)


def test_an_old_attribute_warns_and_reads_the_new_one() -> None:
    v = load_variant("online-cn")
    with pytest.warns(DeprecationWarning, match="Variant.direction_per_game is now Variant.turn_order"):
        assert v.direction_per_game == "alternate"
    with pytest.warns(DeprecationWarning, match="Variant.direction is now Variant.seating"):
        assert v.direction == v.seating


def test_the_action_tables_old_key_name_warns() -> None:
    v = load_variant("taiwan")
    table = action_table(v)
    assert table.key == v.action_table_key()
    with pytest.warns(DeprecationWarning, match="ActionTable.rules_key is now ActionTable.key"):
        assert table.rules_key == table.key


def test_the_engines_old_batch_names_warn() -> None:
    from bigtwo.env.engine.engine import Engine

    with pytest.warns(DeprecationWarning, match=r"Engine\(num_games=\.\.\.\) is now Engine\(num_matches=\.\.\.\)"):
        eng = Engine("taiwan", num_games=3, seed=0)
    assert eng.num_matches == 3
    with pytest.warns(DeprecationWarning, match="Engine.num_games is now Engine.num_matches"):
        assert eng.num_games == 3
    with pytest.raises(ValueError, match="give num_matches only"):
        Engine("taiwan", 2, num_games=2)
    other = Engine("taiwan", num_matches=3, seed=1)
    hands, current = eng.state.hands[1].copy(), int(eng.state.current[1])
    with pytest.warns(DeprecationWarning, match=r"set_position\(games=\.\.\.\) is now set_position\(matches=\.\.\.\)"):
        other.set_position(games=2, hands=hands, current=current)
    assert (other.state.hands[2] == hands).all() and other.current[2] == current


def test_rules_key_is_the_rules_identity_and_the_action_table_has_its_own() -> None:
    taiwan = load_variant("taiwan")
    assert taiwan.rules_key() == load_variant("taiwan", name="mine", description="house").rules_key()
    paid_otherwise = load_variant("taiwan", scoring="collect")
    assert paid_otherwise.rules_key() != taiwan.rules_key()  # other rules ...
    assert paid_otherwise.action_table_key() == taiwan.action_table_key()  # ... the same plays
    assert action_table(paid_otherwise) is action_table(taiwan)
    assert json.loads(taiwan.rules_key())["turn_order"] == "fixed"


def test_stored_settings_with_old_names_load_without_a_warning() -> None:
    old = with_old_names(load_variant("online-cn").to_dict())
    assert "direction_per_game" in old
    with no_deprecation():
        assert stored_variant(old) == load_variant("online-cn")


def test_a_shipped_checkpoint_written_with_the_old_names_loads() -> None:
    pytest.importorskip("torch")
    from bigtwo.train import checkpoint
    from bigtwo.train.policy_agent import checkpoint_variant, load_policy_agent

    payload = checkpoint.load(PRETRAINED / "taiwan.pt")
    assert "direction_per_game" in payload["variant"]["settings"]  # written before the rename
    with no_deprecation():
        variant = checkpoint_variant(payload)
        agent = load_policy_agent(PRETRAINED / "taiwan.pt")
    assert variant == load_variant("taiwan") and variant.turn_order == "fixed"
    assert agent.variant.turn_order == "fixed"


def test_a_record_written_with_the_old_names_replays() -> None:
    from bigtwo.env.envs.game import Game

    game = Game("online-cn", seed=3)
    while not game.is_over:
        game.play(game.legal_plays()[-1])
    record = copy.deepcopy(game.to_record())
    record["variant"] = with_old_names(record["variant"])
    with no_deprecation():
        again = Game.from_record(record)
    assert again.variant == game.variant and again.scores == game.scores


def test_a_web_room_stored_with_the_old_names_opens() -> None:
    pytest.importorskip("starlette")
    from bigtwo.agents.registry import make_agent
    from bigtwo.web.forms import setup_for
    from bigtwo.web.room import Room

    setup = setup_for("online-cn", ["greedy"] * 4, seed=5)
    setup["variant"] = with_old_names(setup["variant"])
    with no_deprecation():
        room = Room("r", setup, lambda spec, variant: make_agent(spec, variant, seed=0), None, lambda: 0.0)
    assert room.variant.turn_order == "alternate" and room.variant.seating == "counterclockwise"


def test_variant_fields_are_the_declared_settings_and_its_name() -> None:
    import dataclasses

    fields = {f.name for f in dataclasses.fields(Variant)}
    assert fields == set(SETTINGS) | {"name", "description", "straights_preset"}
