"""``collect`` scoring (RULES.md "End of a game and scoring"): each loser pays the winner n (cards
left, each 2 counting ``penalty_multiplier_for_twos``), times ``unit``, times its bracket's
multiplier when ``tiers`` are set; the winner collects the sum.

Hand-worked games (tiers, 2s, unit; the last-card liability: the liable seat pays the winner the
whole sum; ``buy_in`` caps and ``rake``), each played out in the engine from a scripted position
and scored by the plain-Python reference; ``collect`` with the JP brackets equals ``tiered`` at
every count; ``tiers`` in YAML, in ``describe`` and their errors.
"""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest
import yaml

from bigtwo.env.engine import kernels as K
from bigtwo.env.engine.engine import Engine, make_rules
from bigtwo.env.rules.cards import cards_to_mask, parse_cards
from bigtwo.env.rules.variant import Variant, load_variant

try:  # tests/ may or may not be a package
    import tests.reference as reference
except ModuleNotFoundError:  # pragma: no cover - rootdir-less layout
    import reference  # type: ignore[no-redef]

JP_TIERS = [[10, 2], [13, 3]]  # x2 from 10 cards, x3 from 13: the JP text's scoring
# seat 0 goes out with AS; seat 1 holds 3 cards with a 2, seat 2 nine with a 2, seat 3 twelve with a 2
HANDS = [
    "AS",
    "4D 5D 2C",
    "3D 3C 3H 6D 6C 6H 7D 7C 2D",
    "8D 8C 8H 9D 9C 9H 10D 10C 10H JD JC 2H",
]


def finish(variant: Variant, hands: list[str], winner: int, **position: object) -> list[float]:
    """Payoffs when ``winner`` (holding one card, to lead) plays it out: the engine's, after
    checking that the reference scores the same game alike."""
    eng = Engine(variant, 1, seed=0)
    masks = np.array([cards_to_mask(parse_cards(h)) for h in hands], dtype=np.uint64)
    eng.set_position(0, masks, current=winner, **position)  # type: ignore[arg-type]
    result = eng.step([eng.table.encode(hands[winner])])
    assert result.game_over[0] and int(result.winner[0]) == winner
    engine = result.payoffs[0].tolist()
    ref = reference.RefGame(variant, [[int(c) for c in parse_cards(h)] for h in hands], leader=winner)
    breach = position.get("breach")
    if breach is not None and breach[winner]:  # type: ignore[index]
        ref.breaches.add(((winner - 1) % variant.players, winner))
    ref.play([int(c) for c in parse_cards(hands[winner])])
    scores = position.get("match_scores")
    bankroll = None if scores is None else [variant.buy_in + float(s) for s in scores]  # type: ignore[union-attr]
    assert engine == pytest.approx(ref.payoffs(bankroll), abs=1e-12)
    return engine


def test_each_loser_pays_the_winner_its_cards() -> None:
    v = load_variant("taiwan", scoring="collect")
    assert finish(v, HANDS, 0) == [24.0, -3.0, -9.0, -12.0]
    assert finish(v.replace(unit=0.5), HANDS, 0) == [12.0, -1.5, -4.5, -6.0]


def test_tiers_multiply_by_bracket() -> None:
    v = load_variant("taiwan", scoring="collect", tiers=JP_TIERS)
    # 3 and 9 cards pay once, 12 pays twice: 3 + 9 + 24
    assert finish(v, HANDS, 0) == [36.0, -3.0, -9.0, -24.0]
    # each 2 counting two cards: 4 (x1), 10 (x2) and 13 (x3) counted cards: 4 + 20 + 39, times 0.5
    twos = v.replace(penalty_multiplier_for_twos=2, unit=0.5)
    assert finish(twos, HANDS, 0) == [31.5, -2.0, -10.0, -19.5]
    # brackets need not be whole: from 4 cards x1.5, from 12 x2.5
    odd = v.replace(tiers=[[4, 1.5], [12, 2.5]])
    assert finish(odd, HANDS, 0) == [3.0 + 13.5 + 30.0, -3.0, -13.5, -30.0]


def test_liable_seat_pays_the_whole_sum() -> None:
    """Last-card liability: the seat before the winner broke the rule; it pays the winner what
    every loser owed and the other losers pay nothing."""
    v = load_variant("online-cn", scoring="collect", tiers=[[10, 2]])
    hands = ["3D 4D 5D", "6C 7C 8C 9C 10C JC QC KC AC 2C", "AS", "3S 4S"]
    breach = [False, False, True, False]  # flagged on the winner: seat 1 (before it) is liable
    assert finish(v, hands, 2, breach=breach) == [0.0, -25.0, 25.0, 0.0]  # 3 + 2 x 10 + 2
    assert finish(v, hands, 2) == [-3.0, -20.0, 25.0, -2.0]
    assert finish(v.replace(rake=0.5), hands, 2, breach=breach) == [-0.5, -25.5, 24.5, -0.5]


def test_table_stakes_cap_each_payment() -> None:
    v = load_variant("taiwan", scoring="collect", tiers=[[10, 2]], buy_in=10)
    hands = ["AS", "3D 3C 3H 4D 4C 4H 5D 5C 5H 6D", "7D 8D", "9D"]
    scores = [0.0, -6.0, 0.0, 0.0]  # seat 1 has 4 left at the table, owes 20
    assert finish(v, hands, 0, match_scores=scores) == [7.0, -4.0, -2.0, -1.0]
    assert finish(v.replace(rake=1), hands, 0, match_scores=scores) == [6.0, -5.0, -3.0, -2.0]
    assert finish(v, hands, 0) == [13.0, -10.0, -2.0, -1.0]  # match_scores 0: 10 each at the table


def test_collect_with_the_jp_brackets_is_tiered() -> None:
    """RULES.md: the JP text scores x2 from 10 cards and x3 at 13, which ``tiered`` hard-codes."""
    tiered = load_variant("japan")
    collect = tiered.replace(scoring="collect", tiers=JP_TIERS)
    rules = {v.scoring: make_rules(v, Engine(v, 1, seed=0).table) for v in (tiered, collect)}
    bankroll = np.full(4, np.inf)
    twos = np.zeros(4, np.int64)
    for counts in itertools.product(range(14), repeat=3):
        left = np.array([0, *counts], np.int64)
        out = {}
        for name, R in rules.items():
            out[name] = np.zeros(4)
            K.settle(left, twos, 0, -1, False, R.ip, R.fp, R.tiers, bankroll, out[name])
        np.testing.assert_array_equal(out["collect"], out["tiered"], err_msg=str(counts))


def test_tiers_in_yaml_and_describe(tmp_path) -> None:
    path = tmp_path / "jp-collect.yaml"
    path.write_text("scoring: collect\ntiers: [[10, 2], [13, 3]]\n", encoding="utf-8")
    v = load_variant(path)
    assert v.tiers == ((10, 2.0), (13, 3.0)) and hash(v) == hash(load_variant(path))
    assert re.search(r"\n  tiers +x2 from 10 cards, x3 from 13 cards\n", v.describe())
    again = tmp_path / "again.yaml"
    again.write_text(yaml.safe_dump(v.to_dict()), encoding="utf-8")
    assert load_variant(again) == v
    assert load_variant("taiwan", scoring="collect").tiers == ()
    assert re.search(r"\n  tiers +none\n", load_variant("taiwan").describe())


def test_tiers_need_collect() -> None:
    v = load_variant("taiwan", scoring="collect", tiers=JP_TIERS)
    with pytest.raises(ValueError, match="field 'tiers' is set .* only scoring 'collect' uses it; scoring is 'cards'"):
        v.replace(scoring="cards")
    assert v.replace(scoring="cards", tiers=[]).scoring == "cards"
    with pytest.raises(ValueError, match=r"field 'tiers' has bad value \[\[10, 2\], \[9, 3\]\]; allowed: .*rising"):
        load_variant("taiwan", scoring="collect", tiers=[[10, 2], [9, 3]])
