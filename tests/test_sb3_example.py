"""The Stable-Baselines3 example: sb3-contrib's MaskablePPO learns on ``bigtwo/BigTwo-v1`` with the
env's ``action_masks()``, and a short run plays better than random legal play."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from sb3_contrib.common.maskable.utils import get_action_masks

import bigtwo.env  # noqa: F401

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "sb3_maskable_ppo.py"


@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location("sb3_maskable_ppo", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop(spec.name, None)


def test_action_masks_is_the_observation_mask_and_empty_after_the_episode():
    env = gymnasium.make("bigtwo/BigTwo-v1", variant="taiwan", seat=1)
    obs, _ = env.reset(seed=3)
    mask = env.unwrapped.action_masks()
    assert mask.dtype == bool and np.array_equal(mask, obs["action_mask"].astype(bool)) and mask.any()
    done = False
    while not done:
        obs, _, done, _, _ = env.step(int(np.flatnonzero(env.unwrapped.action_masks())[0]))
    assert not env.unwrapped.action_masks().any() and not obs["action_mask"].any()


def test_sb3_finds_the_masks_through_the_wrappers(example):
    env = example.make_env("taiwan", None, seat=0)
    obs, _ = env.reset(seed=5)
    assert obs.shape == env.observation_space.shape  # the vector only: no 20,000-wide mask as input
    assert np.array_equal(get_action_masks(env), env.unwrapped.action_masks())


def test_a_short_maskable_ppo_run_learns_past_random_play(example):
    model = example.train("taiwan", opponents=None, timesteps=2048, seed=0)
    trained = example.evaluate(example.model_policy(model), "taiwan", None, episodes=100, seed=10**6)
    random = example.evaluate(example.random_policy(0), "taiwan", None, episodes=100, seed=10**6)
    assert trained > random + 0.2, (trained, random)
