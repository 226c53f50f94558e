"""The PettingZoo AEC environment: PettingZoo's own tests, illegal actions, rewards, privacy."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, render_test, seed_test

from bigtwo.env import Game, env, raw_env

CONFIGS = [
    ("hong-kong", {}),
    ("taiwan", {}),
    ("japan", {}),
    ("online-cn", {}),
    ("pusoy-dos", {}),
    ("taiwan", {"players": 2}),
    ("taiwan", {"players": 3}),
]
IDS = [name + "".join(f"-{k}{v}" for k, v in o.items()) for name, o in CONFIGS]


def random_legal(obs: dict[str, np.ndarray], rng: np.random.Generator) -> int:
    return int(rng.choice(np.flatnonzero(obs["action_mask"])))


def play_out(e, rng: np.random.Generator) -> dict[str, float]:
    """Random legal play to the end of the match; the reward each agent collected."""
    total: dict[str, float] = dict.fromkeys(e.possible_agents, 0.0)
    for agent in e.agent_iter():
        obs, reward, termination, truncation, _info = e.last()
        total[agent] += reward
        e.step(None if termination or truncation else random_legal(obs, rng))
    return total


@pytest.mark.parametrize(("name", "overrides"), CONFIGS, ids=IDS)
def test_pettingzoo_api_seed_and_render(name: str, overrides: dict) -> None:
    with warnings.catch_warnings():
        # api_test warns about any Dict observation of an env it does not know by name.
        warnings.filterwarnings("ignore", message="Observation (is not a NumPy array|space for each agent)")
        api_test(env(name, **overrides), num_cycles=60)
    seed_test(lambda: env(name, **overrides), num_cycles=60)
    render_test(lambda render_mode=None: env(name, render_mode=render_mode, **overrides))


def test_spaces_and_agents() -> None:
    e = env("taiwan", players=3)
    e.reset(seed=1)
    assert e.possible_agents == ["player_0", "player_1", "player_2"]
    space = e.observation_space("player_0")
    assert space["observation"].shape == (327 + 74 * 3,) and space["observation"].dtype == np.float32
    assert space["action_mask"].shape == (19895,) and space["action_mask"].dtype == np.int8
    assert e.action_space("player_2").n == 19895
    assert e.metadata == {"render_modes": ["human", "ansi"], "name": "bigtwo_v1", "is_parallelizable": False}
    with pytest.raises(ValueError, match="unknown agent 'player_3'; agents are player_0, player_1, player_2"):
        e.observe("player_3")


def test_observations_are_new_arrays_and_masks_only_for_the_agent_to_act() -> None:
    e = env("taiwan")
    e.reset(seed=2)
    first, *_ = e.last()
    again = e.observe(e.agent_selection)
    assert first["observation"] is not again["observation"] and first["action_mask"] is not again["action_mask"]
    ids = e.unwrapped.game.legal_actions()
    assert np.array_equal(np.flatnonzero(first["action_mask"]), ids)
    for agent in e.agents:
        if agent != e.agent_selection:
            assert not e.observe(agent)["action_mask"].any()
    e.step(int(ids[0]))
    assert np.array_equal(np.flatnonzero(first["action_mask"]), ids)  # what we were given stays


def test_reset_seed_deals_like_game() -> None:
    e = env("japan")
    e.reset(seed=7)
    assert e.unwrapped.game.hands == Game("japan", seed=7).hands
    e.reset()
    after_7 = e.unwrapped.game.hands
    e.reset(seed=7)
    e.reset()
    assert e.unwrapped.game.hands == after_7  # unseeded resets follow the last seed


def test_illegal_action_raises_and_changes_nothing() -> None:
    e = env("taiwan")
    e.reset(seed=3)
    agent = e.agent_selection
    obs, *_ = e.last()
    legal = set(np.flatnonzero(obs["action_mask"]).tolist())
    illegal = next(a for a in range(1, 200) if a not in legal)
    S = e.unwrapped.engine.state
    before = [a.copy() for a in S]
    with pytest.raises(ValueError, match=f"seat {agent[-1]} cannot play"):
        e.step(illegal)
    with pytest.raises(ValueError, match="the leader cannot pass"):
        e.step(0)
    for bad, why in (
        (19895, "out of range 0..19894"),
        (-1, "out of range"),
        (None, "an action is an integer id"),
        (1.5, "integer id"),
    ):
        with pytest.raises(ValueError, match=why):
            e.step(bad)
    assert all(np.array_equal(x, y) for x, y in zip(before, S, strict=True))
    assert e.agent_selection == agent and not any(e.terminations.values())
    after, *_ = e.last()
    assert np.array_equal(after["observation"], obs["observation"])


def test_penalty_ends_the_match() -> None:
    e = env("taiwan", illegal_action="penalty", illegal_penalty=-20.0)
    e.reset(seed=4)
    offender = e.agent_selection
    e.step(0)  # the leader cannot pass
    assert all(e.terminations.values())
    assert e.rewards == {a: (-20.0 if a == offender else 0.0) for a in e.agents}
    assert "the leader cannot pass" in e.infos[offender]["illegal_action"]
    _obs, reward, termination, _trunc, _info = e.last()
    assert termination
    collected = {}
    for agent in e.agent_iter():
        collected[agent] = e.last()[1]
        e.step(None)
    assert collected[offender] == -20.0 and sum(collected.values()) == -20.0
    assert e.agents == []
    with pytest.raises(ValueError, match="out of range"):  # out of the action space: still raised
        e.reset(seed=4)
        e.step(10**6)


def test_rewards_are_the_game_payoffs_and_a_match_runs_to_its_end() -> None:
    rng = np.random.default_rng(5)
    e = env("taiwan", games=3, cards_per_player=5)
    e.reset(seed=5)
    game = e.unwrapped.game
    total = play_out(e, rng)
    assert len(game.results) == 3
    assert [total[f"player_{s}"] for s in range(4)] == pytest.approx(game.scores)
    e = env("online-cn")
    e.reset(seed=6)
    total = play_out(e, rng)
    assert [total[a] for a in e.possible_agents] == e.unwrapped.game.payoffs
    assert sum(total.values()) == 0  # pairwise settlement is zero-sum


@pytest.mark.parametrize(("name", "overrides"), [("taiwan", {}), ("online-cn", {"players": 3}), ("japan", {})])
def test_observation_ignores_how_unseen_cards_lie(name: str, overrides: dict) -> None:
    rng = np.random.default_rng(8)
    e = env(name, **overrides)
    e.reset(seed=8)
    base = e.unwrapped.game.hands
    players = len(base)
    for seat in range(players):
        others = [c for s in range(players) if s != seat for c in base[s]]
        for _ in range(3):
            shuffled = list(rng.permutation(others))
            hands, k = [], 0
            for s in range(players):
                if s == seat:
                    hands.append(base[s])
                else:
                    hands.append(shuffled[k : k + len(base[s])])
                    k += len(base[s])
            e.reset(seed=8)
            first = e.observe(f"player_{seat}")
            e.reset(seed=8, options={"hands": hands})
            assert e.unwrapped.game.hands[seat] == base[seat]
            second = e.observe(f"player_{seat}")
            assert np.array_equal(first["observation"], second["observation"])
            assert np.array_equal(first["action_mask"], second["action_mask"])


def test_render_modes() -> None:
    e = env("taiwan", render_mode="ansi")
    e.reset(seed=9)
    text = e.render()
    assert "player_0" in text and "to lead" in text
    quiet = env("taiwan")
    quiet.reset(seed=9)
    with pytest.warns(UserWarning, match="without a render_mode"):
        assert quiet.render() is None


@pytest.mark.parametrize(
    ("kwargs", "why"),
    [
        ({"variant": "mars"}, "unknown variant 'mars'; allowed"),
        ({"render_mode": "rgb_array"}, "render_mode must be None, 'human' or 'ansi'"),
        ({"illegal_action": "ignore"}, "illegal_action must be one of raise, penalty"),
        ({"illegal_penalty": "big"}, "illegal_penalty must be a number"),
        ({"players": 6}, "field 'players' has bad value 6"),
    ],
)
def test_bad_arguments(kwargs: dict, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        raw_env(**kwargs)


def test_bad_hands_option() -> None:
    e = env("taiwan")
    with pytest.raises(ValueError, match="hands must give 4 seats"):
        e.reset(options={"hands": ["3C"]})
