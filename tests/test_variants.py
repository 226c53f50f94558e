"""Variants: the five named YAML files hold the RULES.md table; overrides; errors; windows.

RULES.md "Named variants": every setting in the table is a field with the default shown, and
settings not named in a row are off (``false``, ``off``, 0) or their plain default (4 players,
13 cards, ``unit`` 1, multiplier 1). A user's YAML may set any combination; a bad file raises
``ValueError`` naming the file, the field, the bad value and what is allowed.
"""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path

import pytest
from conftest import NAMED_VARIANTS

from bigtwo.env import Variant, classify, load_variant, parse_cards, variant_names

RANKS = ["3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A", "2"]


def windows(*texts: str) -> tuple[tuple[tuple[int, ...], int], ...]:
    """Windows from RULES.md text, lowest first: ``"A-2-3-4-5/2"`` names a top card not last."""
    out = []
    for text in texts:
        ranks_text, _, top = text.partition("/")
        ranks = tuple(RANKS.index(r) for r in ranks_text.split("-"))
        out.append((ranks, RANKS.index(top) if top else ranks[-1]))
    return tuple(out)


NORMAL = [
    "3-4-5-6-7",
    "4-5-6-7-8",
    "5-6-7-8-9",
    "6-7-8-9-10",
    "7-8-9-10-J",
    "8-9-10-J-Q",
    "9-10-J-Q-K",
    "10-J-Q-K-A",
]
# RULES.md "Straights", written out independently of the library's presets.
STRAIGHTS = {
    "hk": windows(*NORMAL, "J-Q-K-A-2"),
    "tw": windows(*NORMAL, "2-3-4-5-6/2", "A-2-3-4-5/2"),
    "jp": windows(*NORMAL),
    "jp_a2345_low": windows("A-2-3-4-5/5", *NORMAL),
}

# Settings not named in a RULES.md row: off or the plain default.
PLAIN = {
    "players": 4,
    "cards_per_player": 13,
    "suit_order": ("D", "C", "H", "S"),
    "opening_every_game": False,
    "pair_chain": False,
    "two_ends_trick": False,
    "last_card_rule": "off",
    "unit": 1,
    "buy_in": 0,
    "rake": 0,
    "penalty_multiplier_for_twos": 1,
    "games": 1,
    "target_score": 0,
    "jqka2_suited": "flush",
    "tiers": (),
    "turn_order": "fixed",
}
TABLE = {
    "hong-kong": {"opening_card": "3D", "straights": "hk", "flush_order": "suit_first", "scoring": "cards"},
    "taiwan": {
        "opening_card": "3C",
        "straights": "tw",
        "flush_order": "suit_first",
        "scoring": "cards",
        "jqka2_suited": "no_play",
    },
    "japan": {"opening_card": "3D", "straights": "jp", "flush_order": "rank_first", "scoring": "tiered"},
    "online-cn": {
        "opening_card": "lowest",
        "straights": "tw",
        "flush_order": "rank_first",
        "scoring": "pairwise",
        "two_ends_trick": True,
        "last_card_rule": "liability",
        "turn_order": "alternate",
    },
    "pusoy-dos": {
        "opening_card": "3C",
        "straights": "hk",
        "flush_order": "suit_first",
        "scoring": "cards",
        "suit_order": ("C", "S", "H", "D"),
    },
}

_counter = itertools.count()


def write_yaml(tmp_path: Path, text: str) -> Path:
    """A fresh YAML file (a new name each time: see test_edited_file_is_read_again)."""
    path = tmp_path / f"variant{next(_counter)}.yaml"
    path.write_text(text, encoding="utf-8")
    return path


# --- the named variants -----------------------------------------------------------------------


def test_the_five_named_variants_ship():
    """The list every test of each named variant takes (tests/conftest.py) is the shipped one."""
    assert variant_names() == list(NAMED_VARIANTS)


@pytest.mark.parametrize("name", NAMED_VARIANTS)
def test_named_variant_matches_rules_table(name):
    v = load_variant(name)
    assert isinstance(v, Variant)
    assert v.name == name
    expected = PLAIN | TABLE[name]
    for field, value in expected.items():
        if field == "straights":
            assert v.straights_preset == value
            assert v.straights == STRAIGHTS[value], name
        else:
            assert getattr(v, field) == value, (name, field)
    assert v.seating in ("clockwise", "counterclockwise")  # labelling only (RULES.md "Deal and seats")
    # every field of the dataclass is covered by the table check above
    covered = set(expected) | {"name", "description", "straights_preset", "seating"}
    assert {f.name for f in dataclasses.fields(Variant)} <= covered


def test_opening_card_ids():
    assert load_variant("taiwan").opening_card_id == parse_cards("3C")[0]
    assert load_variant("hong-kong").opening_card_id == parse_cards("3D")[0]
    assert load_variant("online-cn").opening_card_id == -1


def test_suit_order_pusoy_dos():
    # suit_rank is indexed by physical suit D C H S; Pusoy Dos ranks C < S < H < D.
    assert load_variant("pusoy-dos").suit_rank == (3, 0, 2, 1)
    assert load_variant("taiwan").suit_rank == (0, 1, 2, 3)


def test_issue_example_taiwan_vs_hong_kong():
    cards = parse_cards("AS 2D 3C 4H 5S")
    assert classify(cards, load_variant("taiwan")).kind == "straight"
    assert classify(cards, load_variant("hong-kong")) is None


# --- overrides --------------------------------------------------------------------------------


def test_overrides_jp_options():
    v = load_variant("japan", pair_chain=True, players=2, cards_per_player=26, straights="jp_a2345_low")
    assert (v.pair_chain, v.players, v.cards_per_player) == (True, 2, 26)
    assert v.straights == STRAIGHTS["jp_a2345_low"]
    assert v.straights_preset == "jp_a2345_low"
    assert v.scoring == "tiered"  # untouched fields kept
    # the named variant itself is not changed
    base = load_variant("japan")
    assert (base.pair_chain, base.players, base.cards_per_player) == (False, 4, 13)
    assert base.straights == STRAIGHTS["jp"]


def test_overrides_all_kinds_of_fields():
    v = load_variant(
        "taiwan",
        players=3,
        suit_order=["C", "S", "H", "D"],
        opening_card="lowest",
        opening_every_game=True,
        flush_order="rank_first",
        last_card_rule="enforce",
        scoring="win_loss",
        unit=0.25,
        buy_in=12,
        rake=0.1,
        penalty_multiplier_for_twos=2,
        games=5,
        target_score=100,
        seating="clockwise",
    )
    assert v.players == 3 and v.suit_order == ("C", "S", "H", "D")
    assert v.opening_card == "lowest" and v.opening_every_game is True
    assert v.flush_order == "rank_first" and v.last_card_rule == "enforce" and v.scoring == "win_loss"
    assert (v.unit, v.buy_in, v.rake) == (0.25, 12, 0.1)
    assert (v.penalty_multiplier_for_twos, v.games, v.target_score) == (2, 5, 100)
    assert v.seating == "clockwise"
    assert v.straights == STRAIGHTS["tw"]


def test_override_normalises_text():
    v = load_variant("taiwan", opening_card="3d", suit_order="C S H D")
    assert v.opening_card == "3D"
    assert v.suit_order == ("C", "S", "H", "D")
    assert load_variant("taiwan", suit_order=["♣", "♠", "♥", "♦"]).suit_order == ("C", "S", "H", "D")


def test_replace_matches_load_overrides():
    assert load_variant("taiwan").replace(players=2) == load_variant("taiwan", players=2)


@pytest.mark.parametrize(
    ("field", "value", "allowed"),
    [
        ("players", 5, "2, 3, 4"),
        ("flush_order", "rankfirst", "suit_first, rank_first"),
        ("scoring", "points", "cards, tiered, pairwise, win_loss"),
        ("pair_chain", "yes", "true or false"),
        ("unit", 0, "> 0"),
        ("straights", "weird", "hk, tw, jp, jp_a2345_low"),
    ],
)
def test_override_bad_value(field, value, allowed):
    with pytest.raises(ValueError) as err:
        load_variant("taiwan", **{field: value})
    msg = str(err.value)
    assert "taiwan" in msg and repr(field) in msg and repr(value) in msg and allowed in msg


def test_override_unknown_field():
    with pytest.raises(ValueError) as err:
        load_variant("taiwan", bogus=1)
    msg = str(err.value)
    assert "taiwan" in msg and "bogus" in msg and "players" in msg


def test_unknown_name():
    with pytest.raises(ValueError) as err:
        load_variant("nope")
    msg = str(err.value)
    assert "nope" in msg
    assert all(name in msg for name in NAMED_VARIANTS)


# --- YAML files and their errors ---------------------------------------------------------------


def test_yaml_file_with_some_fields(tmp_path):
    path = write_yaml(tmp_path, "players: 3\nstraights: tw\nflush_order: rank_first\n")
    v = load_variant(path)
    assert v.name == path.stem  # name defaults to the file's stem
    assert (v.players, v.straights, v.flush_order) == (3, STRAIGHTS["tw"], "rank_first")
    for field in ("cards_per_player", "pair_chain", "last_card_rule", "unit", "games"):
        assert getattr(v, field) == PLAIN[field]
    assert load_variant(str(path)) == v
    assert load_variant(path, players=2).players == 2


def test_empty_yaml_file_is_all_defaults(tmp_path):
    v = load_variant(write_yaml(tmp_path, ""))
    for field, value in PLAIN.items():
        assert getattr(v, field) == value


def test_named_yaml_round_trip(tmp_path):
    """A named variant written out with to_dict() and read back is the same variant."""
    yaml = pytest.importorskip("yaml")
    for name in NAMED_VARIANTS:
        v = load_variant(name)
        path = write_yaml(tmp_path, yaml.safe_dump(v.to_dict(), allow_unicode=True))
        assert load_variant(path) == v


@pytest.mark.parametrize(
    ("text", "field", "value", "allowed"),
    [
        ("players: 5\n", "players", "5", "2, 3, 4"),
        ("players: '4'\n", "players", "'4'", "2, 3, 4"),
        ("flush_order: rankfirst\n", "flush_order", "'rankfirst'", "suit_first, rank_first"),
        ("scoring: points\n", "scoring", "'points'", "cards, tiered, pairwise, win_loss"),
        ("last_card_rule: always\n", "last_card_rule", "'always'", "off, enforce, liability"),
        ("seating: left\n", "seating", "'left'", "clockwise, counterclockwise"),
        ("pair_chain: 'yes'\n", "pair_chain", "'yes'", "true or false"),
        ("two_ends_trick: 1\n", "two_ends_trick", "1", "true or false"),
        ("opening_card: 3X\n", "opening_card", "'3X'", "lowest"),
        ("cards_per_player: 0\n", "cards_per_player", "0", "1..26"),
        ("cards_per_player: 27\n", "cards_per_player", "27", "1..26"),
        ("suit_order: [D, D, H, S]\n", "suit_order", "['D', 'D', 'H', 'S']", "four suits"),
        ("suit_order: [D, C, H]\n", "suit_order", "['D', 'C', 'H']", "four suits"),
        ("straights: weird\n", "straights", "'weird'", "hk, tw, jp, jp_a2345_low"),
        ("straights: ['3-4-5-6']\n", "straights", "'3-4-5-6'", "five"),
        ("straights: [{ranks: A-2-3-4-5, top: K}]\n", "straights", "'K'", "five"),
        ("straights: []\n", "straights", "[]", "list of windows"),
        ("unit: 0\n", "unit", "0", "> 0"),
        ("unit: -1\n", "unit", "-1", "> 0"),
        ("rake: -1\n", "rake", "-1", ">= 0"),
        ("buy_in: -5\n", "buy_in", "-5", ">= 0"),
        ("target_score: -1\n", "target_score", "-1", ">= 0"),
        ("games: 0\n", "games", "0", ">= 1"),
        ("penalty_multiplier_for_twos: 0\n", "penalty_multiplier_for_twos", "0", ">= 1"),
        ("name: 5\n", "name", "5", "text"),
        ("jqka2_suited: none\n", "jqka2_suited", "'none'", "flush, no_play"),
        ("turn_order: sometimes\n", "turn_order", "'sometimes'", "fixed, alternate, random"),
        ("scoring: collect\ntiers: 2\n", "tiers", "2", "[from_cards, multiplier] pairs"),
        ("scoring: collect\ntiers: [[10, 2], [10, 3]]\n", "tiers", "[[10, 2], [10, 3]]", "strictly rising"),
        ("scoring: collect\ntiers: [[13, 3], [10, 2]]\n", "tiers", "[[13, 3], [10, 2]]", "strictly rising"),
        ("scoring: collect\ntiers: [[0, 2]]\n", "tiers", "[[0, 2]]", "integers >= 1"),
        ("scoring: collect\ntiers: [[10, 0]]\n", "tiers", "[[10, 0]]", "multipliers numbers > 0"),
        ("scoring: collect\ntiers: [[10, true]]\n", "tiers", "[[10, True]]", "multipliers numbers > 0"),
        ("scoring: collect\ntiers: [[10.5, 2]]\n", "tiers", "[[10.5, 2]]", "integers >= 1"),
        ("scoring: collect\ntiers: [[10, 2, 3]]\n", "tiers", "[[10, 2, 3]]", "e.g. [[10, 2], [13, 3]]"),
        ("scoring: collect\ntiers: {10: 2}\n", "tiers", "{10: 2}", "[from_cards, multiplier] pairs"),
        ("scoring: tiered\ntiers: [[10, 2]]\n", "tiers", "[[10, 2]]", "only scoring 'collect' uses it"),
    ],
)
def test_bad_value_in_file(tmp_path, text, field, value, allowed):
    path = write_yaml(tmp_path, text)
    with pytest.raises(ValueError) as err:
        load_variant(path)
    msg = str(err.value)
    assert str(path) in msg, msg
    assert repr(field) in msg, msg
    assert value in msg, msg
    assert allowed in msg, msg


def test_unknown_field_in_file(tmp_path):
    path = write_yaml(tmp_path, "players: 4\nplayer_count: 3\n")
    with pytest.raises(ValueError) as err:
        load_variant(path)
    msg = str(err.value)
    assert str(path) in msg and "'player_count'" in msg
    assert "allowed" in msg and "players" in msg and "cards_per_player" in msg


def test_too_many_cards_in_file(tmp_path):
    path = write_yaml(tmp_path, "players: 4\ncards_per_player: 26\n")
    with pytest.raises(ValueError) as err:
        load_variant(path)
    msg = str(err.value)
    assert str(path) in msg and "cards_per_player" in msg and "26" in msg and "1..13" in msg
    # the same count is fine for two players (JP 二人大老二), and 3 x 17 fits the deck
    assert load_variant(write_yaml(tmp_path, "players: 2\ncards_per_player: 26\n")).cards_per_player == 26
    assert load_variant(write_yaml(tmp_path, "players: 3\ncards_per_player: 17\n")).cards_per_player == 17
    with pytest.raises(ValueError, match="1..17"):
        load_variant(write_yaml(tmp_path, "players: 3\ncards_per_player: 18\n"))


def test_too_many_cards_override():
    with pytest.raises(ValueError) as err:
        load_variant("japan", cards_per_player=26)
    msg = str(err.value)
    assert "japan" in msg and "cards_per_player" in msg and "26" in msg and "1..13" in msg


@pytest.mark.parametrize("text", ["straights: [[\n", "players: 4\n  bad indent: [\n", "a: b: c\n", "{unclosed\n"])
def test_broken_yaml(tmp_path, text):
    path = write_yaml(tmp_path, text)
    with pytest.raises(ValueError) as err:
        load_variant(path)
    assert str(path) in str(err.value)
    assert "YAML" in str(err.value)


@pytest.mark.parametrize("text", ["- players\n- 4\n", "just text\n", "42\n"])
def test_yaml_not_a_mapping(tmp_path, text):
    path = write_yaml(tmp_path, text)
    with pytest.raises(ValueError) as err:
        load_variant(path)
    assert str(path) in str(err.value) and "mapping" in str(err.value)


@pytest.mark.parametrize("suffix", [".yaml", ".yml"])
def test_missing_file(tmp_path, suffix):
    path = tmp_path / f"missing{suffix}"
    for arg in (path, str(path)):
        with pytest.raises(ValueError) as err:
            load_variant(arg)
        assert str(path) in str(err.value)


# --- Variant is frozen and hashable ------------------------------------------------------------


def test_variant_is_frozen():
    v = load_variant("taiwan")
    with pytest.raises(dataclasses.FrozenInstanceError):
        v.players = 3  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        v.straights = ()  # type: ignore[misc]
    assert load_variant("taiwan").players == 4


def test_variant_is_hashable():
    variants = [load_variant(name) for name in NAMED_VARIANTS]
    assert len({hash(v) for v in variants}) == len(NAMED_VARIANTS)
    assert len(set(variants)) == len(NAMED_VARIANTS)
    lookup = {v: v.name for v in variants}
    assert lookup[load_variant("japan")] == "japan"
    same = load_variant("taiwan", players=3)
    assert same == load_variant("taiwan", players=3)
    assert hash(same) == hash(load_variant("taiwan", players=3))
    assert same != load_variant("taiwan")
    assert isinstance(load_variant("taiwan").suit_order, tuple)
    assert isinstance(load_variant("taiwan").straights, tuple)


# --- explicit straight windows -----------------------------------------------------------------


def test_explicit_window_list_in_yaml(tmp_path):
    path = write_yaml(tmp_path, 'straights: ["3-4-5-6-7", {ranks: "A-2-3-4-5", top: "2"}]\n')
    v = load_variant(path)
    assert v.straights == windows("3-4-5-6-7", "A-2-3-4-5/2")
    assert v.straights_preset is None
    low = classify("3D 4C 5H 6S 7S", v)
    high = classify("AS 2D 3C 4H 5D", v)
    assert low.kind == high.kind == "straight"
    assert high.strength > low.strength
    # only the listed windows are straights
    assert classify("4D 5C 6H 7S 8S", v) is None
    assert classify("2D 3C 4H 5S 6S", v) is None
    # the top card of A-2-3-4-5 here is the 2: the 2's suit breaks the tie, not the 5's
    assert classify("AD 2S 3D 4D 5D", v).strength > classify("AS 2H 3S 4S 5S", v).strength


@pytest.mark.parametrize(
    "spec",
    [
        "straights: [[A, 2, 3, 4, 5]]",
        "straights: [{ranks: [A, 2, 3, 4, 5], top: 5}]",
        "straights: ['a-2-3-4-5']",
        "straights: ['A 2 3 4 5']",
    ],
)
def test_explicit_window_forms_top_last(tmp_path, spec):
    v = load_variant(write_yaml(tmp_path, spec + "\n"))
    assert v.straights == windows("A-2-3-4-5")


def test_explicit_window_ten_forms(tmp_path):
    for spec in ("['10-J-Q-K-A']", "['T-J-Q-K-A']", "[[10, J, Q, K, A]]", "[{ranks: T-J-Q-K-A, top: A}]"):
        assert load_variant(write_yaml(tmp_path, f"straights: {spec}\n")).straights == windows("10-J-Q-K-A")


def test_explicit_window_list_override():
    v = load_variant("hong-kong", straights=["J-Q-K-A-2", {"ranks": "A-2-3-4-5", "top": "2"}])
    assert v.straights == windows("J-Q-K-A-2", "A-2-3-4-5/2")
    assert classify("JS QS KS AS 2S", v).kind == "straight_flush"
    assert classify("3S 4D 5D 6D 7D", v) is None
    # A-2-3-4-5 is listed after J-Q-K-A-2, so it is the higher straight here, whatever the suits
    assert classify("AC 2D 3D 4D 5D", v).kind == classify("JS QS KH AS 2S", v).kind == "straight"
    assert classify("AC 2D 3D 4D 5D", v).strength > classify("JS QS KH AS 2S", v).strength


def test_explicit_window_same_as_preset():
    tail = [{"ranks": "2-3-4-5-6", "top": "2"}, {"ranks": "A-2-3-4-5", "top": 2}]
    v = load_variant("taiwan", straights=list(NORMAL) + tail)
    assert v.straights == STRAIGHTS["tw"]


@pytest.mark.parametrize(
    "spec",
    [
        "['3-4-5-6-7', '3-4-5-6-7']",
        "['3-4-5-6-1']",
        "['3-4-5-6-7-8']",
        "['3-3-4-5-6']",
        "[{ranks: 3-4-5-6-7, top: 8}]",
        "[{ranks: 3-4-5-6-7, high: 7}]",
        "[{top: 7}]",
        "[42]",
    ],
)
def test_bad_windows(tmp_path, spec):
    path = write_yaml(tmp_path, f"straights: {spec}\n")
    with pytest.raises(ValueError) as err:
        load_variant(path)
    msg = str(err.value)
    assert str(path) in msg and "'straights'" in msg and "allowed" in msg


# --- loader edge cases: custom windows round-trip, edited files, bare `off`, window checks ----


def test_override_keeps_explicit_window_with_top(tmp_path):
    path = write_yaml(tmp_path, 'straights: ["3-4-5-6-7", {ranks: "A-2-3-4-5", top: "2"}]\n')
    v = load_variant(path, players=3)
    assert v.players == 3
    assert v.straights == windows("3-4-5-6-7", "A-2-3-4-5/2")


def test_edited_file_is_read_again(tmp_path):
    path = tmp_path / "edited.yaml"
    path.write_text("players: 4\n", encoding="utf-8")
    assert load_variant(path).players == 4
    path.write_text("players: 3\n", encoding="utf-8")
    assert load_variant(path).players == 3


def test_unquoted_off(tmp_path):
    assert load_variant(write_yaml(tmp_path, "last_card_rule: off\n")).last_card_rule == "off"


@pytest.mark.parametrize("spec", ["['3-5-7-9-J']", "['3-4-5-6-7', '7-6-5-4-3']", "['3-4-5-6-7', '4-5-6-7-3']"])
def test_window_must_be_consecutive_and_listed_once(tmp_path, spec):
    with pytest.raises(ValueError):
        load_variant(write_yaml(tmp_path, f"straights: {spec}\n"))


def test_every_variant_default_of_the_package_is_default_variant():
    """``DEFAULT_VARIANT`` is the one place the default variant is written: no function of
    ``bigtwo.env`` spells it out as a default argument (doctests may show it in a call)."""
    import ast

    import bigtwo.env
    from bigtwo.env.rules.variant import DEFAULT_VARIANT

    spelled = []
    for path in sorted(Path(bigtwo.env.__file__).parent.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                defaults = [*node.args.defaults, *node.args.kw_defaults]
            elif isinstance(node, ast.keyword) and node.arg == "default":  # argparse's default=
                defaults = [node.value]
            else:
                continue
            spelled += [
                f"{path.name}:{d.lineno}"
                for d in defaults
                if isinstance(d, ast.Constant) and d.value == DEFAULT_VARIANT
            ]
    assert not spelled, f"write DEFAULT_VARIANT, not {DEFAULT_VARIANT!r}: {spelled}"
    assert load_variant().name == DEFAULT_VARIANT
