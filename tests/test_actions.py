"""The action table: stable ids, encode/decode, the contiguous "plays that beat t" runs, counts.

Id 0 is pass; then singles, pairs, triples, five-card hands and (with ``pair_chain``) pair
chains, each size sorted by strength, so the plays that beat ``t`` are exactly the ids
``beat_start[t] <= id < group_end[t]``. Play counts per kind are computed here from first
principles (RULES.md "Plays" and "Straights") and compared with the table.
"""

from __future__ import annotations

import functools
from math import comb

import numpy as np
import pytest
from conftest import NAMED_VARIANTS
from hypothesis import given, settings
from hypothesis import strategies as st

from bigtwo.env import KINDS, action_table, beats, classify, load_variant, parse_cards

VARIANTS = {name: load_variant(name) for name in NAMED_VARIANTS}
VARIANTS["japan+chain"] = load_variant("japan", pair_chain=True)
VARIANTS["japan+a2345"] = load_variant("japan", straights="jp_a2345_low")
ALL = list(VARIANTS)


@functools.cache
def combos(name: str) -> list:
    """``classify`` of every id's cards (None for pass), computed once per variant."""
    v = VARIANTS[name]
    t = action_table(v)
    return [None] + [classify(t.decode(i), v) for i in range(1, t.size)]


def expected_counts(v) -> dict[str, int]:
    """Plays per kind, by counting: 13 ranks x 4 suits, C(4, k) suit choices."""
    windows = len(v.straights)
    jqka2_window = any(set(ranks) == {8, 9, 10, 11, 12} for ranks, _top in v.straights)
    no_jqka2_flush = 4 if v.jqka2_suited == "no_play" and not jqka2_window else 0  # one per suit
    counts = {
        "pass": 1,
        "single": 52,
        "pair": 13 * comb(4, 2),
        "triple": 13 * comb(4, 3),
        "straight": windows * (4**5 - 4),  # every suit choice but the four one-suit ones
        "straight_flush": windows * 4,
        "flush": 4 * comb(13, 5) - windows * 4 - no_jqka2_flush,  # a one-suit window is a straight flush
        "full_house": 13 * comb(4, 3) * 12 * comb(4, 2),
        "four_of_a_kind": 13 * 48,
    }
    if v.pair_chain:
        counts["pair_chain"] = 10 * comb(4, 2) ** 3  # top pair 5..A: start ranks 3..Q
    return counts


# --- size and counts ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", ALL)
def test_counts_by_kind(name):
    v = VARIANTS[name]
    t = action_table(v)
    expected = expected_counts(v)
    assert t.counts_by_kind() == expected
    assert t.size == sum(expected.values())


def test_known_sizes():
    assert action_table(VARIANTS["taiwan"]).size == 19895  # no suited J-Q-K-A-2
    assert action_table(VARIANTS["online-cn"]).size == 19899  # the suited J-Q-K-A-2 are flushes
    assert action_table(VARIANTS["hong-kong"]).size == 18879
    assert action_table(VARIANTS["japan"]).size == 17859
    assert action_table(VARIANTS["japan+chain"]).size == 17859 + 2160
    assert expected_counts(VARIANTS["japan+chain"])["pair_chain"] == 2160


@pytest.mark.parametrize("name", ALL)
def test_array_shapes(name):
    t = action_table(VARIANTS[name])
    n = t.size
    assert t.cards.shape == (n, 6)
    for arr in (t.sizes, t.kinds, t.strength, t.masks, t.beat_start, t.group_end):
        assert arr.shape == (n,)
    assert t.masks.dtype == np.uint64


# --- id 0 and encode/decode ----------------------------------------------------------------------


@pytest.mark.parametrize("name", ALL)
def test_id_zero_is_pass(name):
    t = action_table(VARIANTS[name])
    assert t.decode(0) == []
    assert t.kind(0) == "pass" and KINDS[int(t.kinds[0])] == "pass"
    assert t.sizes[0] == 0 and int(t.masks[0]) == 0
    assert (t.cards[0] == -1).all()
    assert t.encode([]) == 0 and t.encode("pass") == 0 and t.encode("PASS") == 0 and t.encode("") == 0
    assert t.beat_start[0] == t.group_end[0]  # pass answers nothing
    assert (t.sizes[1:] > 0).all()


@pytest.mark.parametrize("name", ALL)
def test_encode_decode_round_trip_every_id(name):
    t = action_table(VARIANTS[name])
    # vectorised: the cards row, the size and the mask agree for every id
    valid = t.cards >= 0
    assert (valid.sum(axis=1) == t.sizes).all()
    assert (valid[:, :-1] >= valid[:, 1:]).all()  # cards first, then -1 padding
    bits = np.where(valid, np.left_shift(np.uint64(1), t.cards.clip(0).astype(np.uint64)), np.uint64(0))
    assert (np.bitwise_or.reduce(bits, axis=1) == t.masks).all()
    assert len(np.unique(t.masks)) == t.size  # no play listed twice
    # every id through encode(decode(id))
    for i in range(t.size):
        cards = t.decode(i)
        assert t.encode(cards) == i
    # and through text, in a shuffled order
    rng = np.random.default_rng(0)
    for i in rng.choice(t.size, 300, replace=False):
        cards = t.decode(int(i))
        text = " ".join(str(cards[k]).lower() for k in rng.permutation(len(cards)))
        assert t.encode(parse_cards(text)) == i
        assert t.encode(text or "pass") == i


@pytest.mark.parametrize("name", ALL)
def test_every_id_is_its_kind(name):
    t = action_table(VARIANTS[name])
    for i, combo in enumerate(combos(name)):
        if i == 0:
            continue
        assert combo is not None, t.decode(i)
        assert combo.kind == t.kind(i) == KINDS[int(t.kinds[i])]
        assert combo.size == t.sizes[i]


def test_encode_rejects_non_plays():
    t = action_table(VARIANTS["taiwan"])
    for text in ("3D 4D", "3D 3C 3H 3S", "3D 4C 5H 6S 8D", "JS QD KC AH 2D", "5D 5C 6H 6S 7D 7H"):
        with pytest.raises(ValueError):
            t.encode(text)
    assert t.encode("AS 2D 3C 4H 5S") > 0
    with pytest.raises(ValueError):
        action_table(VARIANTS["hong-kong"]).encode("AS 2D 3C 4H 5S")
    with pytest.raises(ValueError):
        t.encode("3D 3D")
    with pytest.raises(ValueError):
        t.decode(t.size)
    with pytest.raises(ValueError):
        t.decode(-1)


def test_pair_chain_ids():
    t = action_table(VARIANTS["japan+chain"])
    i = t.encode("5D 5C 6H 6S 7D 7H")
    assert t.kind(i) == "pair_chain" and t.group_end[i] == t.size
    with pytest.raises(ValueError):
        action_table(VARIANTS["japan"]).encode("5D 5C 6H 6S 7D 7H")


# --- ordering and the beat runs ------------------------------------------------------------------


@pytest.mark.parametrize("name", ALL)
def test_ids_grouped_by_size_and_sorted(name):
    t = action_table(VARIANTS[name])
    sizes = t.sizes.astype(int)
    assert (np.diff(sizes) >= 0).all()
    assert sorted(set(sizes[1:])) == ([1, 2, 3, 5, 6] if VARIANTS[name].pair_chain else [1, 2, 3, 5])
    cs = combos(name)
    for size in set(sizes[1:]):
        ids = np.flatnonzero(sizes == size)
        assert (np.diff(ids) == 1).all()  # contiguous
        assert (t.group_end[ids] == ids[-1] + 1).all()
        # strength non-decreasing along the ids, as the library's own Combo.strength says
        strengths = [cs[i].strength for i in ids]
        assert all(a <= b for a, b in zip(strengths, strengths[1:], strict=False))
        assert (np.diff(t.strength[ids]) >= 0).all()
        # beat_start[t] is the first id of the size with a strictly stronger play
        assert (t.beat_start[ids] > ids).all()
        assert (t.beat_start[ids] <= t.group_end[ids]).all()


@pytest.mark.parametrize("name", ALL)
def test_beat_runs_match_beats_sweep(name):
    """For sampled t, beats(j, t) is true exactly for beat_start[t] <= j < group_end[t], over every j."""
    v = VARIANTS[name]
    t = action_table(v)
    cs = combos(name)
    rng = np.random.default_rng(1)
    sample = set(rng.choice(np.arange(1, t.size), 8, replace=False).tolist())
    # the extremes of every size group
    for size in set(t.sizes[1:].tolist()):
        ids = np.flatnonzero(t.sizes == size)
        sample |= {int(ids[0]), int(ids[1]), int(ids[-2]), int(ids[-1])}
    for tid in sorted(sample):
        expect = np.zeros(t.size, dtype=bool)
        expect[t.beat_start[tid] : t.group_end[tid]] = True
        got = np.array([j > 0 and beats(cs[j], cs[tid], v) for j in range(t.size)])
        assert (got == expect).all(), (tid, t.decode(tid), np.flatnonzero(got != expect)[:5])
    # the top play of each size is beaten by nothing
    top = np.flatnonzero(np.diff(np.append(t.sizes, 0)) != 0)
    assert (t.beat_start[top[1:]] == t.group_end[top[1:]]).all()


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_beat_runs_match_beats_sample(data):
    name = data.draw(st.sampled_from(ALL), label="variant")
    v = VARIANTS[name]
    t = action_table(v)
    tid = data.draw(st.integers(1, t.size - 1), label="t")
    lo, hi = int(t.beat_start[tid]), int(t.group_end[tid])
    near = st.integers(-2, 2)
    j = data.draw(
        st.one_of(
            st.integers(0, t.size - 1),
            near.map(lambda d: min(max(lo + d, 0), t.size - 1)),
            near.map(lambda d: min(max(hi + d, 0), t.size - 1)),
            near.map(lambda d: min(max(tid + d, 0), t.size - 1)),
        ),
        label="j",
    )
    play, table = t.decode(j), t.decode(tid)
    expected = lo <= j < hi
    assert (j > 0 and beats(play, table, v)) == expected, (play, table)


# --- caching -------------------------------------------------------------------------------------


def test_table_cached():
    for name in NAMED_VARIANTS:
        assert action_table(VARIANTS[name]) is action_table(VARIANTS[name])
        assert action_table(load_variant(name)) is action_table(VARIANTS[name])
    # settings that do not change which plays exist or how they compare share the table
    tw = action_table(VARIANTS["taiwan"])
    assert action_table(load_variant("taiwan", players=3, scoring="win_loss")) is tw
    assert action_table(load_variant("taiwan", flush_order="rank_first")) is not tw
    # different rules, different tables
    tables = [action_table(VARIANTS[name]) for name in ALL]
    assert len({id(x) for x in tables}) == len(ALL)


def test_tables_differ_where_rules_differ():
    tw, cn = action_table(VARIANTS["taiwan"]), action_table(VARIANTS["online-cn"])
    assert tw.size == cn.size - 4  # the suited J-Q-K-A-2: no play in Taiwan, flushes online
    # same plays, but flush order differs: a heart flush with a 2 vs a spade flush with an ace
    a, b = "2H 4H 5H 6H 8H", "AS KS QS JS 9S"
    assert tw.encode(b) > tw.encode(a)  # suit first (TW)
    assert cn.encode(a) > cn.encode(b)  # rank first (CN)
    hk, pd = action_table(VARIANTS["hong-kong"]), action_table(VARIANTS["pusoy-dos"])
    assert hk.encode("3H") > hk.encode("3D") and pd.encode("3D") > pd.encode("3H")
