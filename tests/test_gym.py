"""The Gymnasium single-learner environment: check_env, episodes, opponents, bad arguments."""

from __future__ import annotations

import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from bigtwo import agents
from bigtwo.agents.base import Agent, RandomAgent
from bigtwo.env import load_variant
from bigtwo.env.engine.observation import obs_size
from bigtwo.env.envs.gym_env import BigTwoEnv

ENV_ID = "bigtwo/BigTwo-v1"


class FirstLegal(Agent):
    """Plays its lowest legal id and remembers what it was shown."""

    name = "first"

    def __init__(self, variant, seed=None) -> None:
        super().__init__(variant, seed)
        self.calls: list[tuple[tuple[int, ...], int]] = []

    def act(self, obs, legal_ids, legal_counts):
        self.calls.append((obs.shape, int(legal_counts[0])))
        return legal_ids[:, 0].astype(np.int64)


def run_episode(env: gymnasium.Env, seed: int, rng: np.random.Generator) -> tuple[float, int, dict]:
    obs, info = env.reset(seed=seed)
    total, steps, terminated = 0.0, 0, False
    while not terminated:
        action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        obs, reward, terminated, truncated, info = env.step(action)
        assert not truncated
        total += reward
        steps += 1
    return total, steps, info


@pytest.mark.parametrize("kwargs", [{}, {"variant": "online-cn", "players": 3, "seat": "random"}])
def test_check_env(kwargs: dict, capsys: pytest.CaptureFixture) -> None:
    env = gymnasium.make(ENV_ID, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warnings either
        check_env(env.unwrapped)
    capsys.readouterr()  # check_env renders in human mode


def test_full_episode_reward_is_the_learners_payoff() -> None:
    rng = np.random.default_rng(0)
    env = gymnasium.make(ENV_ID, variant="taiwan", seat=1)
    total, steps, info = run_episode(env, seed=1, rng=rng)
    game = env.unwrapped.game
    assert game.is_over and steps > 0
    assert total == game.payoffs[1]
    assert np.array_equal(info["payoffs"], game.payoffs) and info["seat"] == 1
    final = env.unwrapped._observe()
    assert not final["action_mask"].any()
    with pytest.raises(ValueError, match="episode is over"):
        env.step(0)


def test_match_of_several_games_adds_up() -> None:
    rng = np.random.default_rng(1)
    env = gymnasium.make(ENV_ID, variant="japan", games=3, cards_per_player=6, seat=2)
    total, _steps, _info = run_episode(env, seed=2, rng=rng)
    game = env.unwrapped.game
    assert len(game.results) == 3 and total == pytest.approx(game.scores[2])


def test_same_seed_same_episode() -> None:
    a, b = gymnasium.make(ENV_ID, seat="random"), gymnasium.make(ENV_ID, seat="random")
    for seed in (3, 4):
        ra, rb = run_episode(a, seed, np.random.default_rng(seed)), run_episode(b, seed, np.random.default_rng(seed))
        assert ra[0] == rb[0] and ra[1] == rb[1]
        assert a.unwrapped.game.history == b.unwrapped.game.history
    seats = {gymnasium.make(ENV_ID, seat="random").reset(seed=s)[1]["seat"] for s in range(20)}
    assert seats == {0, 1, 2, 3}


def test_opponents_as_agent_objects() -> None:
    variant = load_variant("taiwan")
    first = FirstLegal(variant)
    opponents = [first, RandomAgent(variant, seed=0), None]
    env = gymnasium.make(ENV_ID, variant="taiwan", seat=3, opponents=opponents)
    run_episode(env, seed=5, rng=np.random.default_rng(5))
    assert first.calls and all(shape == (1, obs_size(4)) and n >= 1 for shape, n in first.calls)
    # FirstLegal plays seat 0, one place after the learner: one call per turn of seat 0.
    plays = [cards for seat, cards in env.unwrapped.game.history if seat == 0]
    assert len(plays) == len(first.calls)
    one = gymnasium.make(ENV_ID, opponents=FirstLegal(variant))  # one agent for every other seat
    run_episode(one, seed=6, rng=np.random.default_rng(6))


def test_opponent_names(monkeypatch: pytest.MonkeyPatch) -> None:
    made = []

    def make_agent(name, variant, seed=None):
        if name != "first":
            raise ValueError(f"unknown agent {name!r}")
        made.append(name)
        return FirstLegal(variant, seed)

    monkeypatch.setattr(agents, "make_agent", make_agent, raising=False)
    env = gymnasium.make(ENV_ID, opponents=["first", "first", None])
    assert made == ["first"]  # one agent per name
    run_episode(env, seed=7, rng=np.random.default_rng(7))
    with pytest.raises(ValueError, match="unknown agent 'nobody'"):
        gymnasium.make(ENV_ID, opponents="nobody")


def test_illegal_actions() -> None:
    env = gymnasium.make(ENV_ID, illegal_action="penalty", illegal_penalty=-20.0, seat=0)
    obs, _ = env.reset(seed=8)
    illegal = next(a for a in range(1, 500) if not obs["action_mask"][a])
    obs, reward, terminated, _trunc, info = env.step(illegal)
    assert terminated and reward == -20.0 and "cannot play" in info["illegal_action"]
    strict = gymnasium.make(ENV_ID, illegal_action="raise", seat=0)
    obs, _ = strict.reset(seed=8)
    state = [a.copy() for a in strict.unwrapped.engine.state]
    with pytest.raises(ValueError, match="cannot play"):
        strict.step(illegal)
    assert all(np.array_equal(x, y) for x, y in zip(state, strict.unwrapped.engine.state, strict=True))
    for bad, why in ((19895, "out of range 0..19894"), (-1, "out of range"), ("3C", "an action is an integer id")):
        with pytest.raises(ValueError, match=why):
            strict.step(bad)
    strict.step(int(np.flatnonzero(obs["action_mask"])[0]))  # still playable


@pytest.mark.parametrize(
    ("kwargs", "why"),
    [
        ({"seat": 4}, "seat must be 0..3 or 'random' \\(4 players\\), got 4"),
        ({"seat": -1}, "seat must be 0..3 or 'random'"),
        ({"seat": "north"}, "seat must be 0..3 or 'random', got 'north'"),
        ({"seat": 2, "players": 2}, "seat must be 0..1 or 'random' \\(2 players\\)"),
        ({"opponents": [None]}, "opponents must be None .* or a list of 3"),
        ({"opponents": 5}, "opponents must be None"),
        ({"opponents": [None, None, 5]}, "an opponent must be an Agent"),
        ({"opponents": RandomAgent(load_variant("taiwan", players=3))}, "built for variant 'taiwan' \\(3 players\\)"),
        ({"opponents": RandomAgent(load_variant("japan"))}, "built for variant 'japan'"),
        ({"variant": "mars"}, "unknown variant 'mars'; allowed"),
        ({"illegal_action": "skip"}, "illegal_action must be one of raise, penalty"),
        ({"render_mode": "rgb_array"}, "render_mode must be None, 'human' or 'ansi'"),
    ],
)
def test_bad_arguments(kwargs: dict, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        BigTwoEnv(**kwargs)


def test_step_before_reset_and_render() -> None:
    env = BigTwoEnv(render_mode="ansi", seat=1)
    with pytest.raises(ValueError, match="call reset"):
        env.step(0)
    env.reset(seed=9)
    assert "seat 1 (learner)" in env.render()


def test_rewards_add_up_to_the_match_scores_with_tiny_hands() -> None:
    # With two cards each a game can end before the learner's turn: it is paid on the next step.
    rng = np.random.default_rng(10)
    env = gymnasium.make(ENV_ID, cards_per_player=2, games=4, seat=1)
    for seed in range(12):
        total, _steps, _info = run_episode(env, seed, rng)
        assert total == pytest.approx(env.unwrapped.game.scores[1])


def test_real_agent_names() -> None:
    if not hasattr(agents, "make_agent"):
        pytest.skip("agents.make_agent is not there yet")
    env = gymnasium.make(ENV_ID, opponents=["random", "greedy", "random"], seat=0)
    a = run_episode(env, 11, np.random.default_rng(11))
    b = run_episode(env, 11, np.random.default_rng(11))
    assert a[:2] == b[:2]  # named agents are reseeded by reset(seed=...)


def test_the_observation_version_is_in_the_ids_and_an_old_id_says_which_to_use() -> None:
    from bigtwo.env import env
    from bigtwo.env.engine.observation import OBS_VERSION
    from bigtwo.env.envs.vector import VectorEnv

    assert f"bigtwo/BigTwo-v{OBS_VERSION}" == ENV_ID and env("taiwan").metadata["name"] == f"bigtwo_v{OBS_VERSION}"
    assert VectorEnv("taiwan", num_envs=2, seed=0).obs_version == OBS_VERSION
    with (
        pytest.raises(
            gymnasium.error.DeprecatedEnv, match="v0 for `bigtwo/BigTwo` is deprecated. Please use `bigtwo/BigTwo-v1`"
        ),
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore")
        gymnasium.make("bigtwo/BigTwo-v0")
