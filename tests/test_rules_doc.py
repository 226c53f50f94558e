"""RULES.md, the rules document in the repository, stays current with the code.

Every variant setting is declared once, as a field of ``Variant``; RULES.md's "Every setting"
table is written from the declarations (``settings_table``) and must equal them, and its prose
must still name every setting. RULES.md's "Named variants" table must say what the shipped YAML
files hold (opening card, straights, flush order, scoring, and the settings its last column
switches on).
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from bigtwo.env import Variant, load_variant, variant_names
from bigtwo.env.rules.variant import SETTINGS, settings_table

RULES = (Path(__file__).resolve().parents[1] / "RULES.md").read_text(encoding="utf-8")
BEGIN, END = "<!-- bigtwo:variant-settings -->\n", "\n<!-- /bigtwo:variant-settings -->"
TABLE = RULES.split(BEGIN, 1)[1].split(END, 1)[0] if BEGIN in RULES and END in RULES else ""
PROSE = RULES.replace(TABLE, "")


def test_the_settings_table_is_written_from_the_declarations() -> None:
    assert TABLE, f"RULES.md has no settings table between {BEGIN.strip()} and {END.strip()}"
    assert settings_table() == TABLE, (
        "RULES.md's settings table is out of date: run `python -m bigtwo.env.rules.generated` (it writes "
        f"`bigtwo variants --settings` between {BEGIN.strip()} and {END.strip()})"
    )
    for name, setting in SETTINGS.items():
        assert f"| `{name}` |" in TABLE and setting.doc in TABLE


def named_variant_rows() -> dict[str, list[str]]:
    section = RULES.split("## Named variants", 1)[1]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 7 and cells[0].startswith("`"):
            rows[cells[0].strip("`")] = cells
    return rows


def test_every_setting_is_named_in_the_prose() -> None:
    """Beyond the generated table, the rules' text says what each setting does (``straights`` in
    "Straights", its own words)."""
    missing = [name for name in SETTINGS if name != "straights" and not re.search(rf"`{name}[`:]", PROSE)]
    assert not missing, f"settings the prose of RULES.md does not explain: {missing}"
    assert "variant's `straights` list" in PROSE


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
