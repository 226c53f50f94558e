"""The observation layout: one declaration (``LAYOUT``) behind the size, the kernels' offsets, the
decoder, the heuristic's reader and the documented table; and observations bit for bit as before.
"""

from __future__ import annotations

import hashlib
import re

import numpy as np
import pytest

from agents import heuristic as H
from bigtwo_env import observation as O
from bigtwo_env.engine import Engine
from bigtwo_env.observation import LAYOUT, ObsPart, decode_observation, obs_size, part_slices
from bigtwo_env.variant import load_variant

# Observations of every seat and their decoding over 150 random steps of 64 games, per variant;
# the digests were computed with the code before the layout was declared once, when taiwan's suited
# J-Q-K-A-2 was still a flush (``jqka2_suited: flush`` restores that action table).
SAVED = (
    ({}, "7c957b8228917b1b2934e052bfab24f7af77e9b5c1edf5b12987148d565f6dd8"),
    ({"players": 3}, "3f68e7214f17a9f41ebf6e18e1eed6850f646d517d0d26c6f0653ec5055c7b1b"),
    ({"players": 2, "cards_per_player": 26}, "dacadead305417378c78781c5ba0dd37e465e84263a06c0acf8e9210a3af6a6d"),
    ({"players": 2}, "abbd238c082b21acd7ddf4f98a63c75068e9d25192fb6bdd691a4497005ed8a8"),
    (
        {"pair_chain": True, "last_card_rule": "enforce"},
        "b99913797c62c8732cce9ffdbaa0cfeb61b6932a52bb8c5b4a55e4cd89be4c62",
    ),
    (
        {"last_card_rule": "liability", "two_ends_trick": True, "opening_card": "lowest", "players": 3},
        "95057ecd278bf844c055dc3acadf75e7f7e0c9345e23a2775d8933d426877f73",
    ),
)
DECODED_BEFORE = (
    "hand",
    "played",
    "table",
    "opening_card",
    "cards_left_fraction",
    "table_kind",
    "leading",
    "table_seat",
    "passes",
    "duty",
)


def observation_digest(overrides: dict, steps: int = 150, games: int = 64) -> str:
    variant = load_variant("taiwan", **{"jqka2_suited": "flush", **overrides})
    eng = Engine(variant, games, seed=0, autoreset=True)
    rng = np.random.default_rng(0)
    h = hashlib.sha256()
    for _ in range(steps):
        for s in range(variant.players):
            h.update(eng.observe(np.full(games, s)).tobytes())
        obs = eng.observe()
        h.update(obs.tobytes())
        parts = decode_observation(obs, variant.players)
        for name in DECODED_BEFORE:
            h.update(np.ascontiguousarray(parts[name]).tobytes())
        ids, n = eng.legal_actions()
        eng.step(ids[np.arange(games), (rng.random(games) * n).astype(np.int64)])
    return h.hexdigest()


@pytest.mark.parametrize(("overrides", "digest"), SAVED)
def test_observations_are_bit_identical_to_the_saved_batch(overrides: dict, digest: str) -> None:
    assert observation_digest(overrides) == digest


def test_the_docstring_table_is_the_layout() -> None:
    assert O.layout_table() in O.__doc__
    assert f"(``obs_size(P)`` = {O.size_formula()}; {obs_size(4)} for 4)" in O.__doc__
    documented = re.findall(r"^\| ``\[[^|]*\| ``\[[^|]*\| ``(\w+)`` \|", O.__doc__, re.M)
    assert documented == [part.name for part in LAYOUT]


@pytest.mark.parametrize("players", [2, 3, 4])
def test_parts_tile_the_vector_in_layout_order(players: int) -> None:
    slices = list(part_slices(players).values())
    assert list(part_slices(players)) == [part.name for part in LAYOUT]
    assert slices[0].start == 0 and slices[-1].stop == obs_size(players) == 182 + 55 * players
    for part, at, nxt in zip(LAYOUT, slices, [*slices[1:], None], strict=True):
        assert at.stop - at.start == part.size(players)
        assert nxt is None or nxt.start == at.stop
        assert O.part_start(O.Part[part.name.upper()], players) == at.start
    assert Engine(load_variant("taiwan", players=players)).obs_size == obs_size(players)


def test_decoder_returns_every_part_by_name() -> None:
    eng = Engine("taiwan", 3, seed=4)
    parts = decode_observation(eng.observe(), 4)
    assert set(parts) == {part.name for part in LAYOUT} | {"leading"}
    assert parts["played"].shape == (3, 4, 52) and parts["legal_summary"].dtype == np.bool_
    assert parts["legal_summary"][:, 0].tolist() == [False] * 3  # the leader cannot pass
    with pytest.raises(ValueError, match="for 3 players has 347 slots, got shape"):
        decode_observation(eng.observe(), 3)


def test_a_part_must_say_how_it_is_read() -> None:
    with pytest.raises(ValueError, match="decoding must be one of cards, seat_cards"):
        ObsPart("tempo", 1, 0, "bits", "a new part")
    with pytest.raises(ValueError, match="52 slots per seat"):
        ObsPart("seen", 52, 0, "seat_cards", "a new part")


@pytest.mark.parametrize("players", [2, 4])
def test_the_heuristics_reader_reads_what_the_decoder_reads(players: int) -> None:
    variant = load_variant("taiwan", players=players, last_card_rule="enforce")
    eng = Engine(variant, 32, seed=2, autoreset=True)
    agent = H.HeuristicAgent(variant)
    rules, cpp = agent.ctx.rules, variant.cards_per_player
    rng = np.random.default_rng(1)
    counts = np.zeros(players, np.int64)
    for _ in range(60):
        obs = eng.observe()
        parts = decode_observation(obs, players)
        for g in range(eng.num_games):
            hand, unseen, table, owner, duty, opening = H.read_obs(obs[g], players, cpp, rules, counts)
            seen = parts["hand"][g] | parts["played"][g].any(0)
            assert int(hand) == sum(1 << int(c) for c in np.flatnonzero(parts["hand"][g]))
            assert int(unseen) == sum(1 << c for c in range(52) if not seen[c])
            assert counts.tolist() == np.rint(parts["cards_left_fraction"][g] * cpp).astype(int).tolist()
            assert table == (0 if parts["leading"][g] else eng.table.encode(np.flatnonzero(parts["table"][g]).tolist()))
            assert owner == parts["table_seat"][g] and duty == parts["duty"][g]
            assert opening == (int(np.argmax(parts["opening_card"][g])) if parts["opening_card"][g].any() else -1)
        ids, n = eng.legal_actions()
        eng.step(ids[np.arange(eng.num_games), (rng.random(eng.num_games) * n).astype(np.int64)])
