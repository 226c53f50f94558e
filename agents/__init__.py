"""Baseline agents and loaders: random, greedy, heuristic, search, and trained checkpoints."""

from .base import Agent, RandomAgent

__all__ = ["Agent", "RandomAgent"]
