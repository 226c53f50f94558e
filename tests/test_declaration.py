"""Each rule setting is declared once (``Variant``'s fields, ``bigtwo.env.rules.declaration``) and
everything else follows from it: every declared setting reaches the kernels where its declaration
says, every kernel slot belongs to a declared setting, the loader checks with the declaration, and
the table of settings (RULES.md, ``bigtwo variants --settings``) lists them all.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bigtwo.env.engine import jit, kernels
from bigtwo.env.engine.engine import make_rules
from bigtwo.env.rules import generated
from bigtwo.env.rules.actions import action_table
from bigtwo.env.rules.declaration import ACTION_TABLE, FP, IP, RULES_ARRAYS, Number, OneOf, Whole
from bigtwo.env.rules.variant import (
    CHOICES,
    FP_SLOTS,
    IP_SLOTS,
    KERNEL_CONSTANTS,
    SETTINGS,
    Variant,
    load_variant,
    settings_table,
)

# The base every setting is changed from: the declared defaults, with collect scoring (``tiers``
# needs it) and jp straights (``jqka2_suited`` only matters where J-Q-K-A-2 is no straight).
BASE = Variant().replace(scoring="collect", straights="jp")
TABLE_PARTS = ("sizes", "kinds", "places", "masks", "beat_start", "group_end", "hash_keys", "rank_ids")


def other_value(name: str) -> Any:
    """An example of setting ``name`` (``Allowed.examples``, from its declaration) that BASE does not have."""
    now = BASE.to_dict()[name]
    return next(v for v in SETTINGS[name].allows.examples if BASE.replace(**{name: v}).to_dict()[name] != now)


def rules_of(variant: Variant) -> dict[str, np.ndarray]:
    rules = make_rules(variant, action_table(variant))
    return {name: np.asarray(getattr(rules, name)) for name in rules._fields}


def changed_parts(before: dict[str, np.ndarray], after: dict[str, np.ndarray]) -> set[str]:
    """Where the kernels' ``Rules`` differ: ``ip[slot]``/``fp[slot]``, an array's name, or ``action_table``."""
    parts = set()
    for array in ("ip", "fp"):
        parts |= {f"{array}[{i}]" for i in np.flatnonzero(before[array] != after[array])}
    for name in RULES_ARRAYS:
        if before[name].shape != after[name].shape or not np.array_equal(before[name], after[name]):
            parts.add(name)
    if any(before[p].shape != after[p].shape or not np.array_equal(before[p], after[p]) for p in TABLE_PARTS):
        parts.add(ACTION_TABLE)
    return parts


@pytest.mark.parametrize("name", list(SETTINGS))
def test_every_example_is_allowed_and_they_differ(name: str) -> None:
    """A setting's examples (what the differential test plays) are allowed values, each distinct
    (one of them not BASE's), so each example run plays something of its own."""
    examples = SETTINGS[name].allows.examples
    played = [BASE.replace(**{name: v}).to_dict()[name] for v in examples]
    assert len({repr(p) for p in played}) == len(examples) >= 1
    assert other_value(name) in examples


@pytest.mark.parametrize("name", list(SETTINGS))
def test_every_declared_setting_reaches_the_kernels_where_it_says(name: str) -> None:
    """Changing a setting from BASE changes exactly the parts of the kernels' ``Rules`` its
    declaration routes it to (the score scale aside, which follows the payoffs); a label changes none."""
    changed = BASE.replace(**{name: other_value(name)})
    parts = changed_parts(rules_of(BASE), rules_of(changed))
    parts.discard(f"fp[{kernels.FP_SCORE_SCALE}]")
    expected = set()
    for route in SETTINGS[name].kernels:
        slot = {IP: IP_SLOTS, FP: FP_SLOTS}.get(route.target)
        expected.add(f"{route.target}[{slot[name]}]" if slot is not None else route.target)
    assert parts == expected, f"{name}: declared {sorted(expected)}, reached {sorted(parts)}"


def test_the_kernels_constants_are_written_from_the_declarations() -> None:
    """The block of ``IP_*``/``FP_*`` slots and choice codes in kernels.py is what the declarations
    write, and the module's values are the declared ones."""
    source = generated.KERNELS_FILE.read_text(encoding="utf-8")
    assert generated.block(source, generated.KERNELS_MARKERS) == generated.kernel_constants_source(), (
        "kernels.py's constants are stale: run `python -m bigtwo.env.rules.generated`"
    )
    assert generated.stale_files() == []
    assert {name: getattr(kernels, name) for name in KERNEL_CONSTANTS} == {
        name: value for name, (value, _what) in KERNEL_CONSTANTS.items()
    }
    for name, setting in SETTINGS.items():
        for route in setting.kernels:
            if route.target in (IP, FP):
                slot = (IP_SLOTS if route.target == IP else FP_SLOTS)[name]
                assert KERNEL_CONSTANTS[route.constant][0] == slot, name
            if route.encoding == "code":
                assert {f"{route.slot}_{str(v).upper()}" for v in CHOICES[name]} <= set(KERNEL_CONSTANTS), name


def test_the_writer_puts_a_stale_block_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stale = tmp_path / "kernels.py"
    begin, end = generated.KERNELS_MARKERS
    stale.write_text(f"A = 1\n{begin}IP_PLAYERS = 7\n{end}\nB = 2\n", encoding="utf-8")
    rules = tmp_path / "RULES.md"
    rules.write_text(generated.RULES_MARKERS[0] + settings_table() + generated.RULES_MARKERS[1], encoding="utf-8")
    monkeypatch.setattr(generated, "KERNELS_FILE", stale)
    monkeypatch.setattr(generated, "RULES_FILE", rules)
    assert generated.main(["--check"]) == 1
    assert generated.write() == [stale]
    assert stale.read_text(encoding="utf-8") == f"A = 1\n{begin}{generated.kernel_constants_source()}{end}\nB = 2\n"
    assert generated.main(["--check"]) == 0
    stale.write_text("no markers\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no .* markers"):
        generated.write()


def test_the_kernels_slots_are_the_declared_ones() -> None:
    """Every ``IP_*``/``FP_*`` index the kernels use is a declared setting's slot, each slot named
    once, and every slot is read by a kernel module (a declared setting the kernels ignore fails)."""
    named = {n: v for n, v in vars(kernels).items() if isinstance(v, int)}
    ip = {n: v for n, v in named.items() if n.startswith("IP_") and n != "IP_NUM"}
    fp = {n: v for n, v in named.items() if n.startswith("FP_") and n not in ("FP_NUM", "FP_SCORE_SCALE")}
    assert sorted(ip.values()) == sorted(IP_SLOTS.values()) == list(range(kernels.IP_NUM))
    assert sorted(fp.values()) == sorted(FP_SLOTS.values()) == list(range(kernels.FP_NUM - 1))
    sources = "\n".join(path.read_text(encoding="utf-8") for path in jit.kernel_files().values())
    for const in [*ip, *fp]:
        reads = re.findall(rf"\b(?:ip|fp)\[(?:kernels\.)?{const}\]", sources)
        assert reads, f"no kernel reads {const}: its setting does not reach the game"


def test_every_default_is_allowed_by_its_own_declaration() -> None:
    defaults = Variant().to_dict()
    for name, setting in SETTINGS.items():
        checked = setting.allows.check(defaults[name])
        if name == "straights":
            checked = checked[0]
        assert checked == getattr(Variant(), name), name
    assert load_variant(Variant()) == Variant()


def test_choices_and_bounds_are_read_from_the_declarations() -> None:
    assert CHOICES["last_card_rule"] == SETTINGS["last_card_rule"].allows.values == ("off", "enforce", "liability")
    assert set(CHOICES) == {n for n, s in SETTINGS.items() if isinstance(s.allows, OneOf)}
    from bigtwo.env.rules.variant import BOUNDS

    for name, setting in SETTINGS.items():
        if isinstance(setting.allows, (Whole, Number)):
            assert BOUNDS[name] == (setting.allows.low, setting.allows.high)


@pytest.mark.parametrize("name", list(SETTINGS))
def test_a_bad_value_is_refused_with_the_declared_words(name: str) -> None:
    with pytest.raises(ValueError) as err:
        Variant().replace(**{name: object()})
    assert f"field {name!r} has bad value" in str(err.value)
    allowed = SETTINGS[name].allows.text
    assert str(err.value).endswith(f"allowed: {allowed}") or name == "straights"  # its words name its forms


def test_the_table_lists_every_setting_with_its_default_and_description() -> None:
    rows = {line.split("|")[1].strip().strip("`"): line for line in settings_table().splitlines()[2:]}
    assert list(rows) == list(SETTINGS)
    for name, setting in SETTINGS.items():
        assert setting.doc in rows[name] and setting.allows.text in rows[name]
        assert "\n" not in setting.doc and setting.doc.endswith(".")
    assert "| `games` | `1` | an integer >= 1 and <= 1,000,000 |" in settings_table()


def test_the_command_prints_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    from bigtwo.cli import main

    assert main(["variants", "--settings"]) == 0
    assert capsys.readouterr().out.strip() == settings_table()
    assert main(["variants", "taiwan", "--settings"]) == 2
    assert "give no variant name" in capsys.readouterr().err
