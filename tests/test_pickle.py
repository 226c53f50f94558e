"""The environments pickle: process-based vector envs and RL libraries that copy envs between
processes need it. An unpickled env is in the pickled position and plays on exactly as the
original does (same observations, rewards and legal actions for the same actions), and one
pickled before a reset plays the same game from the same seed."""

from __future__ import annotations

import pickle

import gymnasium
import numpy as np
import pytest

import bigtwo.env
from bigtwo.env import Engine, Game, VectorEnv


def _random_legal(rng: np.random.Generator, ids: np.ndarray, counts: np.ndarray) -> np.ndarray:
    picks = (rng.random(len(counts)) * counts).astype(np.int64)
    return ids[np.arange(len(counts)), picks]


def test_an_engine_and_a_vector_env_play_on_alike_after_a_pickle() -> None:
    engine = Engine("hong-kong", num_matches=8, seed=3, autoreset=True)
    venv = VectorEnv("taiwan", num_envs=8, seed=4)
    obs, info = venv.reset(seed=4)
    rng = np.random.default_rng(0)
    for _ in range(20):
        engine.step(_random_legal(rng, *engine.legal_actions()))
        obs, *_, info = venv.step(_random_legal(rng, info["legal_ids"], info["legal_counts"]))
    engine2, venv2 = pickle.loads(pickle.dumps(engine)), pickle.loads(pickle.dumps(venv))
    for _ in range(60):
        ids, counts = engine.legal_actions()
        ids2, counts2 = engine2.legal_actions()
        assert np.array_equal(ids, ids2) and np.array_equal(counts, counts2)
        assert np.array_equal(engine.observe(), engine2.observe())
        actions = _random_legal(rng, ids, counts)
        engine.step(actions)
        engine2.step(actions)
        actions = _random_legal(rng, info["legal_ids"], info["legal_counts"])
        one, two = venv.step(actions), venv2.step(actions)
        for a, b in zip(one[:4], two[:4], strict=True):
            assert np.array_equal(a, b)
        info = one[4]
    assert np.array_equal(engine.global_state(), engine2.global_state())


def test_a_game_pickles_in_its_position() -> None:
    game = Game("japan", seed=5)
    for _ in range(6):
        game.play(game.legal_plays()[-1])
    again = pickle.loads(pickle.dumps(game))
    assert (again.hands, again.history, again.current_player) == (game.hands, game.history, game.current_player)
    while not game.is_over:
        assert np.array_equal(game.observation(), again.observation())
        cards = game.legal_plays()[0]
        game.play(cards)
        again.play(cards)
    assert again.payoffs == game.payoffs


def test_the_aec_env_pickled_before_reset_plays_the_same_game_from_the_same_seed() -> None:
    env = bigtwo.env.env(variant="taiwan")
    copy = pickle.loads(pickle.dumps(env))
    traces = []
    for e in (env, copy):
        e.reset(seed=9)
        trace = []
        for agent in e.agent_iter():
            obs, reward, termination, truncation, _ = e.last()
            trace.append((agent, reward, obs["observation"].tobytes()))
            e.step(None if termination or truncation else int(np.flatnonzero(obs["action_mask"])[0]))
        traces.append(trace)
    assert traces[0] == traces[1] and len(traces[0]) > 20


@pytest.mark.parametrize("opponents", ["heuristic", "search:simulations=4"])
def test_the_gymnasium_env_pickles_mid_game_with_its_opponents(opponents: str) -> None:
    env = gymnasium.make("bigtwo/BigTwo-v1", variant="taiwan", opponents=opponents)
    obs, _ = env.reset(seed=2)
    obs, *_ = env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    copy = pickle.loads(pickle.dumps(env))
    obs2 = obs
    done = False
    while not done:
        action = int(np.flatnonzero(obs["action_mask"])[-1])
        obs, reward, terminated, truncated, _ = env.step(action)
        obs2, reward2, terminated2, truncated2, _ = copy.step(action)
        assert np.array_equal(obs["observation"], obs2["observation"]) and reward == reward2
        done = terminated or truncated
        assert (terminated2 or truncated2) == done


def test_gymnasiums_process_vector_env_runs_the_env() -> None:
    """``gymnasium.vector.AsyncVectorEnv``: each env in a worker process of its own."""
    envs = gymnasium.vector.AsyncVectorEnv(
        [lambda: gymnasium.make("bigtwo/BigTwo-v1", variant="taiwan", opponents="greedy")] * 2, shared_memory=False
    )
    try:
        obs, _ = envs.reset(seed=[1, 2])
        actions = np.array([int(np.flatnonzero(mask)[0]) for mask in obs["action_mask"]])
        obs, rewards, *_ = envs.step(actions)
        assert obs["observation"].shape[0] == 2 and rewards.shape == (2,)
    finally:
        envs.close()


def test_the_gymnasium_id_with_its_module_needs_no_prior_import() -> None:
    import subprocess
    import sys

    code = (
        "import gymnasium, sys\n"
        "assert not any(m.startswith('bigtwo') for m in sys.modules)\n"
        "env = gymnasium.make('bigtwo.env:bigtwo/BigTwo-v1', variant='taiwan', opponents='greedy')\n"
        "obs, info = env.reset(seed=0)\n"
        "print(int(obs['action_mask'].sum()))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd="/")
    assert done.returncode == 0, done.stderr[-2000:]
    assert int(done.stdout) > 0
