"""RULES.md, the rules document in the repository, stays current with the code.

Every variant setting is a field of ``Variant``; each must be named in RULES.md, and RULES.md's
"Named variants" table must say what the shipped YAML files hold (opening card, straights, flush
order, scoring, and the settings its last column switches on).
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from bigtwo.env import Variant, load_variant, variant_names

RULES = (Path(__file__).resolve().parents[1] / "RULES.md").read_text(encoding="utf-8")
# Fields that are bookkeeping, not settings of a table's rules.
NOT_SETTINGS = {"name", "description", "straights_preset", "straights"}


def named_variant_rows() -> dict[str, list[str]]:
    section = RULES.split("## Named variants", 1)[1]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 7 and cells[0].startswith("`"):
            rows[cells[0].strip("`")] = cells
    return rows


def test_every_setting_is_named_in_rules_md() -> None:
    settings = [f.name for f in dataclasses.fields(Variant) if f.name not in NOT_SETTINGS]
    missing = [name for name in settings if not re.search(rf"`{name}[`:]", RULES)]
    assert not missing, f"settings not documented in RULES.md: {missing}"
    assert "variant's `straights` list" in RULES


def test_the_table_lists_every_named_variant() -> None:
    assert sorted(named_variant_rows()) == sorted(variant_names())


@pytest.mark.parametrize("name", variant_names())
def test_named_variant_row_matches_its_yaml(name: str) -> None:
    _, _, opening, straights, flush, scoring, other = named_variant_rows()[name]
    v = load_variant(name)
    assert v.straights_preset == straights
    assert v.flush_order == flush
    assert v.scoring == scoring
    expected_opening = "lowest" if opening.startswith("lowest") else opening.split()[0]
    assert v.opening_card == expected_opening
    # the last column: "off by default: ..." clauses are options; any other clause lists
    # settings the YAML switches on: ``field`` (true) or ``field value``
    fields = {f.name for f in dataclasses.fields(Variant)}
    for clause in other.split(";"):
        if clause.strip().startswith("off by default"):
            continue
        for item in clause.replace("on by default:", "").split(","):
            words = item.split()
            if words and words[0] in fields:
                expected = True if len(words) == 1 else words[1]
                actual = getattr(v, words[0])
                assert (actual is True) if expected is True else str(actual) == expected, (name, item)
