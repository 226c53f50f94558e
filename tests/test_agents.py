"""Baseline agents: legal play everywhere, greedy's choice, the heuristic's last-card duties,
``make_agent`` and checkpoint loading, seeds, and ``Engine.set_position``."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from conftest import NAMED_VARIANTS, quick_agents

from bigtwo import agents
from bigtwo.agents import (
    GreedyAgent,
    HeuristicAgent,
    RandomAgent,
    SearchAgent,
    load_agent,
    make_agent,
    register_loader,
    unregister_loader,
)
from bigtwo.agents.search import MAX_SCALE
from bigtwo.env import load_variant
from bigtwo.env.engine.engine import Engine
from bigtwo.env.engine.observation import obs_size
from bigtwo.env.rules.cards import cards_to_mask, parse_cards


def mask(text: str) -> np.uint64:
    return np.uint64(cards_to_mask(parse_cards(text)))


def play_games(eng: Engine, seats: list, max_steps: int = 2000) -> np.ndarray:
    """Play every game of ``eng`` to its end, each seat's agent acting for the games where that
    seat is to act (the engine raises on an illegal play). Returns each seat's wins."""
    wins = np.zeros(eng.players, dtype=np.int64)
    for _ in range(max_steps):
        if eng.over.all():
            return wins
        ids, counts = eng.legal_actions()
        obs = eng.observe()
        acts = np.full(eng.num_matches, -1, dtype=np.int64)
        for s, agent in enumerate(seats):
            rows = np.flatnonzero(eng.current == s)
            if len(rows):
                acts[rows] = agent.act(obs[rows], ids[rows], counts[rows])
        res = eng.step(acts)
        for g in np.flatnonzero(res.game_over):
            wins[res.winner[g]] += 1
    raise AssertionError("games did not end")


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("name", NAMED_VARIANTS)
def test_every_agent_plays_only_legal_moves(name, players):
    variant = load_variant(name, players=players)
    kinds = quick_agents(network=False)  # every declared agent but those of a shipped network (its variant's rules)
    # rotate so that over the player counts every agent sits at several seats
    seats = [make_agent(kinds[(players + i) % len(kinds)], variant, seed=i) for i in range(players)]
    eng = Engine(variant, num_matches=3, seed=100 * players)
    wins = play_games(eng, seats)
    assert wins.sum() == 3


@pytest.mark.parametrize(
    "overrides",
    [
        {"name": "japan", "players": 2, "cards_per_player": 26},
        {"name": "japan", "pair_chain": True},
        {"name": "online-cn", "last_card_rule": "enforce", "players": 3},
        {"name": "taiwan", "games": 2, "penalty_multiplier_for_twos": 2},
    ],
    ids=["japan-2x26", "japan-pair-chain", "cn-enforce", "taiwan-match"],
)
def test_heuristic_and_search_on_options(overrides):
    overrides = dict(overrides)
    variant = load_variant(overrides.pop("name"), **overrides)
    seats = [HeuristicAgent(variant)] * variant.players
    seats[0] = SearchAgent(variant, seed=0, simulations=4, top_k=2)
    play_games(Engine(variant, num_matches=2, seed=7), seats)


def test_greedy_plays_the_lowest_play():
    variant = load_variant("taiwan")
    eng = Engine(variant, num_matches=16, seed=3)
    agent = GreedyAgent(variant)
    for _ in range(40):
        if eng.over.all():
            break
        ids, counts = eng.legal_actions()
        acts = agent.act(eng.observe(), ids, counts)
        for g in range(eng.num_matches):
            row = ids[g, : counts[g]].tolist()
            if not row:
                assert acts[g] == -1
                continue
            plays = [a for a in row if a != 0]
            assert acts[g] == (min(plays) if plays else 0)
        eng.step(acts)


def test_greedy_never_passes_when_it_can_play():
    ids = np.array([[0, 5, 9], [0, 0, 0], [3, 4, 0]], dtype=np.int32)
    counts = np.array([3, 1, 2])
    acts = GreedyAgent(load_variant("taiwan")).act(np.zeros((3, obs_size(4)), np.float32), ids, counts)
    assert acts.tolist() == [5, 0, 3]


# ---------------------------------------------------------------- last-card rule


@pytest.mark.parametrize(
    "hands, table, table_seat, allowed",
    [
        # leading, next seat holds one card, a pair exists: lead two or more cards
        (["3D 4C 4H 9S KD", "QS", "5D 6D 7D", "8C 8D 10H"], None, -1, lambda cards: len(cards) >= 2),
        # leading, only singles: the highest single
        (["3D 5C 9H KS", "QS", "5D 6D 7D", "8C 8D 10H"], None, -1, lambda cards: cards == ["KS"]),
        # answering a single: pass or the highest card
        (["3D 5C 9H KS", "QS", "6D 7D 2C", "8C 8D 10H"], "4D", 3, lambda cards: cards in ([], ["KS"])),
    ],
    ids=["lead-multi", "lead-highest", "answer-highest"],
)
def test_heuristic_obeys_the_last_card_rule_under_liability(hands, table, table_seat, allowed):
    variant = load_variant("online-cn", two_ends_trick=False)
    eng = Engine(variant, num_matches=1, seed=0)
    t = eng.table.encode(table) if table else 0
    eng.set_position(0, np.array([mask(h) for h in hands]), current=0, table_action=t, table_seat=table_seat)
    assert eng.state.duty[0] != 0  # the position does carry a last-card duty
    ids, counts = eng.legal_actions()
    assert counts[0] > 2  # liability: the list is not filtered
    act = HeuristicAgent(variant).act(eng.observe(), ids, counts)
    cards = [str(c) for c in eng.table.decode(int(act[0]))]
    assert allowed(cards), cards
    eng.step(act)
    assert not eng.state.breach.any()


def test_heuristic_presses_a_player_about_to_go_out():
    # taiwan (no last-card rule): seat 1 holds one card; a single lead would let it out
    variant = load_variant("taiwan")
    eng = Engine(variant, num_matches=1, seed=0)
    hands = np.array([mask("3D 4C 4H 9S"), mask("AS"), mask("5D 6D 7D 8H"), mask("8C 8D 10H 2S")])
    eng.set_position(0, hands, current=0)
    ids, counts = eng.legal_actions()
    act = HeuristicAgent(variant).act(eng.observe(), ids, counts)
    assert [str(c) for c in eng.table.decode(int(act[0]))] == ["4C", "4H"]


# ---------------------------------------------------------------- make_agent and checkpoints


def test_make_agent_builds_every_name():
    variant = load_variant("taiwan")
    for name, cls in agents.AGENTS.items():
        assert type(make_agent(name, variant, seed=1)) is cls
    search = make_agent("search", "taiwan", simulations=12, top_k=3)
    assert (search.simulations, search.top_k) == (12, 3)
    assert make_agent("search:seconds=0.05", variant).seconds == 0.05


def test_make_agent_errors_are_clear(tmp_path):
    variant = load_variant("taiwan")
    with pytest.raises(ValueError, match="unknown agent 'alphago'; allowed: random, greedy, heuristic, search"):
        make_agent("alphago", variant)
    with pytest.raises(ValueError, match="does not take option"):
        make_agent("greedy", variant, simulations=3)
    with pytest.raises(ValueError, match="key=value"):
        make_agent("search:simulations", variant)
    with pytest.raises(ValueError, match="simulations must be a positive integer"):
        make_agent("search", variant, simulations=0)
    with pytest.raises(ValueError, match="does not exist"):
        make_agent(str(tmp_path / "missing.pt"), variant)
    odd = tmp_path / "weights.bin"
    odd.write_bytes(b"\0")
    with pytest.raises(ValueError, match="not a checkpoint any loader knows"):
        make_agent(str(odd), variant)
    with pytest.raises(ValueError, match="not a file"):
        load_agent(tmp_path, variant)


def test_checkpoint_loader_registry(tmp_path):
    variant = load_variant("taiwan")
    path = tmp_path / "model.toy"
    path.write_text("toy")
    seen = {}

    def loader(p, var, seed, **options):
        seen.update(path=p, variant=var.name, seed=seed, options=options)
        return GreedyAgent(var, seed=seed)

    register_loader(".toy", loader)
    try:
        agent = make_agent(str(path), variant, seed=5, temperature=2)
        assert isinstance(agent, GreedyAgent)
        assert seen == {"path": str(path), "variant": "taiwan", "seed": 5, "options": {"temperature": 2}}
    finally:
        unregister_loader(".toy")
    with pytest.raises(ValueError, match="not a checkpoint"):
        load_agent(path, variant)


def test_a_pt_file_that_is_no_checkpoint_is_a_value_error(tmp_path):
    bad = tmp_path / "bad.pt"
    bad.write_text("not a torch file")
    with pytest.raises(ValueError):
        make_agent(str(bad), "taiwan")


# ---------------------------------------------------------------- seeds


def _decisions(agent_factory, seed: int, steps: int = 30) -> list[int]:
    variant = load_variant("taiwan")
    eng = Engine(variant, num_matches=4, seed=seed)
    agent = agent_factory(variant)
    out: list[int] = []
    for _ in range(steps):
        if eng.over.all():
            break
        ids, counts = eng.legal_actions()
        acts = agent.act(eng.observe(), ids, counts)
        acts[eng.over] = -1
        out += acts.tolist()
        eng.step(acts)
    return out


@pytest.mark.parametrize(
    "factory",
    [
        lambda v: RandomAgent(v, seed=11),
        lambda v: HeuristicAgent(v),
        lambda v: SearchAgent(v, seed=11, simulations=6, top_k=2),
    ],
    ids=["random", "heuristic", "search"],
)
def test_same_seed_same_play(factory):
    assert _decisions(factory, 21, steps=12) == _decisions(factory, 21, steps=12)


def test_search_seed_changes_its_samples():
    v = load_variant("taiwan")
    a, b = SearchAgent(v, seed=1, simulations=8), SearchAgent(v, seed=2, simulations=8)
    assert a.rng.random() != b.rng.random()


@pytest.mark.parametrize(
    "name, own, others", [("taiwan", None, None), ("hong-kong", None, None), ("online-cn", "collect", None)]
)
def test_rollout_kernel_plays_what_the_heuristic_plays_through_the_engine(name, own, others):
    """Search's rollouts (``rollout_state``, one compiled loop per game) end every game as the
    heuristic playing every seat through ``Engine.step`` does, with the same payoffs; seat 0
    plays its own weights, the other seats theirs."""
    from bigtwo.agents.search import rollout_state

    variant = load_variant(name).replace(games=1, target_score=0)
    n = 24
    ref = Engine(variant, num_matches=n, seed=5)
    fast = Engine(variant, num_matches=n, seed=5)
    mine, theirs = HeuristicAgent(variant, weights=own), HeuristicAgent(variant, weights=others)

    def heur_act():
        obs, (ids, counts) = ref.observe(), ref.legal_actions()
        return np.where(ref.state.current == 0, mine.act(obs, ids, counts), theirs.act(obs, ids, counts))

    first = heur_act()
    payoff_ref = np.zeros(n)
    acts = first
    while not ref.over.all():
        res = ref.step(acts)
        payoff_ref[res.game_over] = res.payoffs[res.game_over, 0]
        acts = heur_act()
        acts[ref.over] = -1
    c = mine.ctx
    scores = np.zeros((n, fast.state.legal.shape[1]))
    payoff = np.full(n, np.nan)
    args = (c.lookups, c.weights, 5000)
    rows_of = np.tile(theirs.ctx.weights, (n, 1))
    rollout_state(first, scores, payoff, rows_of, fast.rules, fast.state, *args)
    assert fast.over.all()
    assert (fast.state.hands == ref.state.hands).all()
    np.testing.assert_array_equal(payoff, payoff_ref)
    if own != others:  # and the seats' weights made a difference
        same = Engine(variant, num_matches=n, seed=5)
        rollout_state(first, scores, payoff, np.tile(c.weights, (n, 1)), same.rules, same.state, *args)
        assert not np.array_equal(payoff, payoff_ref)


def test_rollouts_play_each_rows_opponent_weights():
    """With a mix of opponent sets, each rollout's other seats play that row's set: rows of a mixed
    batch end as the same rows of a batch that plays their set everywhere."""
    from bigtwo.agents import heuristic as H
    from bigtwo.agents.search import rollout_state

    variant = load_variant("hong-kong", scoring="collect").replace(games=1, target_score=0)
    n = 32
    agent = HeuristicAgent(variant)
    mix = H.weight_mix("default+collect")
    assert mix.shape == (2, H.NUM_WEIGHTS)
    c = agent.ctx
    args = (c.lookups, c.weights, 5000)

    def run(others):
        eng = Engine(variant, num_matches=n, seed=11)
        obs, (ids, counts) = eng.observe(), eng.legal_actions()
        first = agent.act(obs, ids, counts)
        payoff = np.full(n, np.nan)
        rollout_state(first, np.zeros((n, eng.state.legal.shape[1])), payoff, others, eng.rules, eng.state, *args)
        return payoff

    mixed = run(mix[np.arange(n) % 2])
    only_default, only_collect = run(np.tile(mix[0], (n, 1))), run(np.tile(mix[1], (n, 1)))
    np.testing.assert_array_equal(mixed[0::2], only_default[0::2])
    np.testing.assert_array_equal(mixed[1::2], only_collect[1::2])
    assert not np.array_equal(only_default, only_collect)


def test_search_refuses_halving_a_time_budget():
    with pytest.raises(
        ValueError, match="schedule=halving shares a number of simulations; with seconds use schedule=even"
    ):
        SearchAgent(load_variant("taiwan"), seconds=0.01, schedule="halving")
    with pytest.raises(ValueError, match="schedule must be one of even, halving"):
        SearchAgent(load_variant("taiwan"), schedule="ucb")


def test_search_scale_cards_gives_later_moves_more_rollouts():
    """``scale=cards``: the first move gets ``simulations``; a move with half the dealt cards
    still in hands about twice as many, and never more than ``MAX_SCALE`` times."""
    v = load_variant("taiwan")
    eng = Engine(v, num_matches=1, seed=1)  # a game that runs down to 10 cards in hands
    heur = HeuristicAgent(v)
    plain, scaled = SearchAgent(v, seed=1, simulations=40), SearchAgent(v, seed=1, simulations=40, scale="cards")
    moves = []  # (cards in all hands, rollouts plain, rollouts scaled) per searched move
    while not eng.over.all():
        ids, counts = eng.legal_actions()
        obs = eng.observe()
        before = (plain.stats["rollouts"], scaled.stats["rollouts"], plain.stats["searched"])
        plain.act(obs, ids, counts)
        scaled.act(obs, ids, counts)
        if plain.stats["searched"] > before[2]:
            in_hands = sum(int(h).bit_count() for h in eng.state.hands[0])
            moves.append((in_hands, plain.stats["rollouts"] - before[0], scaled.stats["rollouts"] - before[1]))
        eng.step(heur.act(obs, ids, counts))
    assert moves[0][0] == 52 and moves[0][1] == moves[0][2]
    late = [(p, s) for n, p, s in moves if n <= 26]
    assert late, "the game searched no move late on"
    assert all(s >= 1.9 * p for p, s in late)
    assert any(s >= 3.5 * p for n, p, s in moves if n <= 13)
    assert all(s <= (MAX_SCALE + 0.5) * p for _, p, s in moves)


def _heuristic_game(variant_name: str, seed: int):
    """Positions of one game the heuristic plays at every seat: (engine, obs, ids, counts) at each
    turn, the engine holding the true position while the caller looks."""
    v = load_variant(variant_name)
    eng = Engine(v, num_matches=1, seed=seed)
    heur = HeuristicAgent(v)
    while not eng.over.all():
        ids, counts = eng.legal_actions()
        obs = eng.observe()
        yield eng, obs, ids, counts
        eng.step(heur.act(obs, ids, counts))


def test_search_infer_passes_reweighs_only_after_passes():
    """``infer=passes`` weighs the same sampled hands: a lead is valued as without it, and a move
    that follows passes is valued otherwise at least once in a game."""
    v = load_variant("hong-kong")
    plain = SearchAgent(v, seed=1, simulations=60)
    inferring = SearchAgent(v, seed=1, simulations=60, infer="passes")
    changed = 0
    for eng, obs, ids, counts in _heuristic_game("hong-kong", 2):
        plain.last_values, inferring.last_values = {}, {}
        plain.act(obs, ids, counts)
        inferring.act(obs, ids, counts)
        if eng.state.passes[0] == 0:
            assert inferring.last_values == plain.last_values
        else:
            changed += inferring.last_values != plain.last_values
    assert changed >= 1


def test_search_replies_of_a_heuristic_passer_on_its_true_hand_are_passes():
    """What ``infer=passes`` asks of each sample: would that seat have passed holding that hand?
    On the true hands of a game the heuristic plays, every passer's reply is a pass."""
    v = load_variant("taiwan")
    agent = SearchAgent(v, seed=1, simulations=8, infer="passes")
    P, asked = v.players, 0
    for eng, _, _, _ in _heuristic_game("taiwan", 4):
        S = eng.state
        cur, passes = int(S.current[0]), int(S.passes[0])
        if passes == 0 or S.table_action[0] == 0:
            continue
        rel = [(cur + k) % P for k in range(P)]
        table_seat = (int(S.table_seat[0]) - cur) % P
        for before in range(passes):
            seat = (table_seat + 1 + before) % P
            reply = agent._replies(
                S.hands[0, rel][None].copy(),
                agent.opponent_weights,
                S.played[0, rel].copy(),
                seat,
                int(S.table_action[0]),
                table_seat,
                before,
            )
            assert reply.tolist() == [0]
            asked += 1
    assert asked >= 3


def test_search_refuses_a_bad_scale_or_inference():
    with pytest.raises(ValueError, match="scale must be one of none, cards"):
        SearchAgent(load_variant("taiwan"), scale="time")
    with pytest.raises(ValueError, match="scale=cards grows a number of simulations; with seconds use scale=none"):
        SearchAgent(load_variant("taiwan"), seconds=0.01, scale="cards")
    with pytest.raises(ValueError, match="infer must be one of none, passes"):
        SearchAgent(load_variant("taiwan"), infer="plays")


def test_search_plays_the_same_on_one_thread_or_two():
    assert _decisions(lambda v: SearchAgent(v, seed=3, simulations=40, threads=1), 8, steps=10) == _decisions(
        lambda v: SearchAgent(v, seed=3, simulations=40, threads=2), 8, steps=10
    )


def test_a_mix_of_one_set_twice_searches_as_that_set():
    """``opponent_weights=a+b`` changes only what the opponents play in each sampled deal: a mix of
    one set twice plays every move as that set alone, and a real mix plays its own moves."""

    def search(opponents):
        return lambda v: SearchAgent(v, seed=3, simulations=40, threads=1, infer="passes", opponent_weights=opponents)

    one = _decisions(search("collect"), 8, steps=10)
    assert _decisions(search("collect+collect"), 8, steps=10) == one
    assert _decisions(search(["collect", "collect"]), 8, steps=10) == one
    assert _decisions(search("default+collect"), 8, steps=10) != one


# ---------------------------------------------------------------- Engine.set_position


def test_set_position_loads_a_position_and_refreshes_legal_plays():
    variant = load_variant("taiwan")
    eng = Engine(variant, num_matches=3, seed=0)
    before = eng.state.hands[[0, 2]].copy()
    hands = np.array([mask("5D 5H 9C"), mask("6C 7C"), mask("KD"), mask("2S 3S")])
    played = np.array([mask("3C"), 0, 0, 0], dtype=np.uint64)
    eng.set_position(1, hands, played, current=0, table_action=eng.table.encode("4D"), table_seat=3, passes=0)
    S = eng.state
    assert S.counts[1].tolist() == [3, 2, 1, 2]
    ids, counts = eng.legal_actions()
    legal = {tuple(str(c) for c in eng.table.decode(int(a))) for a in ids[1, : counts[1]]}
    assert legal == {(), ("5D",), ("5H",), ("9C",)}
    assert (S.hands[[0, 2]] == before).all()  # the other games are untouched
    eng.step(np.array([-1, eng.table.encode("9C"), -1]))
    assert S.current[1] == 1 and S.counts[1, 0] == 2


def test_set_position_leading_with_an_opening_card():
    eng = Engine("taiwan", num_matches=2, seed=0)
    hands = np.array([mask("3C 3D 9H"), mask("4C 4D"), mask("KD"), mask("2S 3S")])
    eng.set_position(slice(None), hands, current=0, opening=parse_cards("3C")[0])
    ids, counts = eng.legal_actions()
    for g in range(2):
        for a in ids[g, : counts[g]]:
            assert "3C" in [str(c) for c in eng.table.decode(int(a))]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"hands": [mask("3C"), mask("3C"), mask("4D"), mask("5D")]}, "also held or played"),
        ({"hands": [mask("3C"), 0, mask("4D"), mask("5D")]}, "every seat must hold a card"),
        ({"current": 4}, "current must be a seat"),
        ({"table_action": 5, "table_seat": -1}, "table_seat must name"),
        ({"table_action": 5, "table_seat": 0, "current": 0}, "answering its own play"),
        ({"opening": 51}, "must hold the opening card"),
        ({"passes": 1}, "passes must be"),
        ({"hist_action": [0, 99999], "hist_seat": [1, 0]}, "hist_action must hold action ids 0..19894"),
        ({"hist_action": [5, 0], "hist_seat": [1]}, "hist_seat must name a seat 0..3 for each move"),
        ({"hist_action": [5], "hist_seat": [4]}, "hist_seat must name a seat"),
        ({"hist_action": [-1, 5], "hist_seat": [-1, 2]}, "most recent first: no move after a -1"),
        ({"hist_action": list(range(1, 10)), "hist_seat": [0] * 9}, "hist_action holds at most 8 moves, got 9"),
        ({"passed_on": np.full((4, 5), 1)}, "each id must be a play of its column's size"),
        ({"passed_on": np.full((4, 5), -2)}, "passed_on must hold action ids 1..19894 or 0"),
    ],
)
def test_set_position_rejects_inconsistent_positions(kwargs, message):
    eng = Engine("taiwan", num_matches=1, seed=0)
    args = {"hands": [mask("3C 9S"), mask("4D"), mask("5D"), mask("6D")], **kwargs}
    args["hands"] = np.array(args["hands"], dtype=np.uint64)
    with pytest.raises(ValueError, match=message):
        eng.set_position(0, **args)


# ---------------------------------------------------------------- agent lists


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("heuristic, random*3", ["heuristic", "random", "random", "random"]),
        ("search:simulations=8,top_k=2*3", ["search:simulations=8,top_k=2"] * 3),
        ("search:simulations=8*2,greedy", ["search:simulations=8", "search:simulations=8", "greedy"]),
        ("strong:simulations=8,random*2", ["strong:simulations=8", "random", "random"]),
    ],
)
def test_agent_lists_repeat_whole_entries_options_included(text, expected):
    from bigtwo.agents.registry import parse_agent_list

    assert parse_agent_list(text) == expected


def test_agent_list_refuses_a_zero_repeat():
    from bigtwo.agents.registry import parse_agent_list

    with pytest.raises(ValueError, match=r"random\*0: a repeat count is at least 1"):
        parse_agent_list("heuristic,random*0")


@pytest.mark.parametrize(
    ("variant", "digest"),
    [("hong-kong", "5304ddf05e315ef9"), ("taiwan", "2877f0d686954e84"), ("online-cn", "0077c81e4f274cf3")],
)
def test_the_heuristic_plays_as_it_did_when_the_readme_figures_were_measured(variant, digest):
    """Every figure in the docs (docs/*.md) that involves the heuristic or search (their rollouts) was
    measured with these plays: 256 games, 400 batched steps, the heuristic in every seat. The
    digests were taken before the planner's speed-up (scratch arrays, a memo, inlining) and are
    unchanged by it. A change to how the heuristic plays must change them on purpose, and the
    figures must be measured again."""
    eng = Engine(variant, num_matches=256, seed=3)
    agent = HeuristicAgent(eng.variant)
    h = hashlib.sha1()
    for _ in range(400):
        ids, n = eng.legal_actions()
        a = agent.act(eng.observe(), ids, n)
        h.update(a.tobytes())
        eng.step(a)
    assert h.hexdigest()[:16] == digest
