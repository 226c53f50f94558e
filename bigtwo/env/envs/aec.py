"""# Big Two (PettingZoo AEC)

Big Two (大老二, Pusoy Dos) for 2 to 4 players, as a PettingZoo AEC environment over the
batched engine. Every regional variant of ``configs/variants`` (and any YAML file or field
override) plays through the same environment.

| | |
|---|---|
| Import | ``bigtwo.env.env(variant="taiwan", render_mode=None, illegal_action="raise", illegal_penalty=-1.0, render_view="acting", **overrides)`` |
| Actions | Discrete |
| Parallel API | No |
| Manual control | No (play by hand with ``bigtwo.env.Game``) |
| Agents | ``player_0`` .. ``player_{P-1}``, ``player_i`` sits at seat ``i``; P = 4 unless ``players=2`` or ``3`` |
| Action shape | (1,) |
| Action values | [0, A): 19895 in ``taiwan``, 19899 in ``online-cn``, 18879 in ``hong-kong``/``pusoy-dos``, 17859 in ``japan`` |
| Observation shape | ``observation`` (@OBS_SIZE@,) float32 (@OBS_SIZE_4@ for 4 players); ``action_mask`` (A,) int8 |
| Observation values | [0, 1], but the match scores (``obs_bounds``: within +-``match_score_bound``) |
| State shape | ``state()`` (@STATE_SIZE@,) float32 (@STATE_SIZE_4@ for 4 players), privileged: for centralised critics only |

One episode is one *match*: the variant's ``games`` games (1 in every named variant). When a
game ends the next is dealt at once and its winner leads, until the match is over.

## Observation space

``observation`` is ``Engine.observe`` for the agent's own seat, observation version 1
(``bigtwo.env.engine.observation``, whose ``LAYOUT`` declares it; this table and the sizes are written
in from it when the module is imported: ``layout_table()``, ``size_formula()``),
laid out relative to the observer: relative seat ``k`` is the seat ``k`` places after it in
play order, ``k = 0`` being the observer. Other hands enter only as card counts; card ids are
``rank * 4 + suit`` (suits D C H S). ``P`` is the number of players, ``obs_size(P)`` = @OBS_SIZE@.

@LAYOUT_TABLE@

The duty, opening-card and summary slots are filled only for the agent to act. ``action_mask`` is 1 at the
legal action ids of the agent to act and all 0 for every other agent (and once the match is
over). ``bigtwo.env.engine.observation.decode_observation`` splits a vector into named parts.

## State (privileged)

``state()`` is the whole deal and the game so far (``bigtwo.env.engine.state``, whose ``STATE_LAYOUT``
declares it): every seat's hand, the cards each has played, the table, whose turn, the card
counts, the recent moves, what each seat passed on and the match scores, in absolute seat order
(seat 0 first, ``Engine.global_state`` with ``state.ABSOLUTE``). ``state_space`` is its ``Box``
(within [0, 1] but the match scores). It is privileged: it is for a centralised critic during
training, never for acting, since it shows every agent the others' cards; ``observe()`` holds
none of it beyond what is public or the agent's own.

>>> from bigtwo.env import env
>>> critic_env = env("taiwan")
>>> critic_env.reset(seed=0)
>>> s = critic_env.state()
>>> s.shape, s.dtype, critic_env.state_space.contains(s)
((721,), dtype('float32'), True)

## Action space

Action 0 is pass; then every single, pair, triple, five-card hand (and pair chain where the
variant has them), each size sorted from weakest to strongest. The ids are fixed per variant's
play rules; ``action_table`` maps them to cards and back:

>>> import bigtwo.env
>>> e = bigtwo.env.env("taiwan")
>>> e.reset(seed=0)
>>> t = e.unwrapped.action_table
>>> t.size, t.decode(0)
(19895, [])
>>> [str(c) for c in t.decode(1)], t.kind(1)
(['3D'], 'single')
>>> t.kind(t.encode("3C 3D"))
'pair'
>>> obs, reward, termination, truncation, info = e.last()
>>> e.agent_selection, obs["observation"].shape, int(obs["action_mask"].sum()) > 0
('player_1', (623,), True)
>>> legal = obs["action_mask"].nonzero()[0]
>>> e.step(int(legal[0]))  # the weakest legal play: a single 3C, which must open in Taiwan
>>> e.unwrapped.game.history
[(1, ['3C'])]

An illegal action raises ``ValueError`` saying why and changes nothing (``illegal_action=
"raise"``, the default). With ``illegal_action="penalty"`` it ends the episode instead: the
offender gets ``illegal_penalty``, the others 0, every agent is terminated and the offender's
info holds the reason under ``"illegal_action"``. Mind the scale: a penalty above the worst
payoff of a game (-13 under ``cards`` scoring) makes illegal moves a way out of a bad hand.
An id outside ``[0, A)`` always raises.

## Rewards

When a game ends every agent receives its payoff for that game, in the variant's scoring units:
``cards`` (taiwan, hong-kong, pusoy-dos) -n for n cards left and 0 for the winner, ``tiered``
(japan), ``collect`` and ``pairwise`` (online-cn) zero-sum settlements, ``win_loss`` +1 / -1/(P-1). See
RULES.md. Every other step rewards 0. Episodes end by termination only (no truncation).

``reset(seed=s)`` deals exactly as ``Engine(seed=s)`` and ``Game(seed=s)``; a later ``reset()``
without a seed deals from a generator seeded by ``s``. Seeds are ints 0..2**64-1
(``bigtwo.env.engine.seeds``). ``reset(options={"hands": [...]})`` deals the given hands (one per seat)
for the first game; other option keys are ignored. A refused ``reset`` (a bad seed, options that
are no dict, bad hands) raises ``ValueError`` and changes nothing, the env's generator included.
Once every agent is done (``agents`` is empty), ``last()`` and ``step()`` need a ``reset()``:
``last()`` raises ``ValueError`` saying so.

## Rendering

``render()`` draws the table as text (``render_mode="ansi"`` returns it, ``"human"`` prints it).
Whoever renders sees it, so ``render_view`` says whose hand it shows: ``"acting"`` (default) the
agent to act's only, a seat number that seat's only, ``"all"`` every hand; the others read
``(hidden)``. It can also be set later: ``e.unwrapped.render_view = "all"``.

## Version history

* v1: observation version 1 (``bigtwo.env.engine.observation``): the game's recent moves, what each
  seat passed on, the unseen cards, match scores and game number, whether the opening is owed,
  its own last-card breach and the game's direction, after version 0's parts (unchanged).
  ``render`` shows only the acting agent's hand unless ``render_view`` says otherwise.
* v0: first release (bigtwo 0.1.0).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from bigtwo.env.engine.observation import layout_table, obs_size, size_formula
from bigtwo.env.engine.seeds import check_seed, draw_seed
from bigtwo.env.engine.state import ABSOLUTE, state_bounds, state_size, state_size_formula
from bigtwo.env.envs.env_base import RENDER_MODES, GameBacked, hands_option, observation_space
from bigtwo.env.rules.actions import action_id
from bigtwo.env.rules.variant import DEFAULT_VARIANT, Variant

# The docstring's observation table and sizes, from observation.LAYOUT (its one declaration).
__doc__ = (
    (__doc__ or "")
    .replace("@LAYOUT_TABLE@", layout_table())
    .replace("@OBS_SIZE_4@", str(obs_size(4)))
    .replace("@OBS_SIZE@", size_formula())
    .replace("@STATE_SIZE_4@", str(state_size(4)))
    .replace("@STATE_SIZE@", state_size_formula())
)


def env(
    variant: Variant | str | Path = DEFAULT_VARIANT,
    render_mode: str | None = None,
    illegal_action: str = "raise",
    illegal_penalty: float = -1.0,
    render_view: str | int = "acting",
    **overrides: Any,
) -> AECEnv:
    """The Big Two AEC environment with PettingZoo's order checks (see the module docstring)."""
    return OrderEnforcing(raw_env(variant, render_mode, illegal_action, illegal_penalty, render_view, **overrides))


def _checked(name: str) -> property:
    """A wrapper attribute read straight from the env once it has been reset."""

    def get(self: OrderEnforcing) -> Any:
        if not self._has_reset:
            raise AttributeError(f"{name} cannot be accessed before reset")
        return getattr(self.env, name)

    return property(get, doc=f"The env's ``{name}`` (only after ``reset()``).")


class OrderEnforcing(wrappers.OrderEnforcingWrapper):
    """PettingZoo's ``OrderEnforcingWrapper`` with the calls of every step (``last``, ``step`` and
    the attributes ``agent_iter`` reads) going straight to the env instead of through
    ``__getattr__``, which cost about a sixth of a step. Same checks, same errors."""

    agents = _checked("agents")
    agent_selection = _checked("agent_selection")
    terminations = _checked("terminations")
    truncations = _checked("truncations")
    rewards = _checked("rewards")
    infos = _checked("infos")

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if not self._has_reset:
            raise AttributeError("agent_selection cannot be accessed before reset")
        return self.env.last(observe)

    def step(self, action: Any) -> None:
        if self._has_reset and self.env.agents:
            self._has_updated = True
            self.env.step(action)
        else:
            super().step(action)

    def __str__(self) -> str:
        return str(self.env)


class raw_env(GameBacked, AECEnv):  # noqa: N801 - PettingZoo's name for the unwrapped class
    """Big Two as an AEC environment without wrappers; see the module docstring."""

    metadata = {"render_modes": list(RENDER_MODES), "name": "bigtwo_v1", "is_parallelizable": False}

    def __init__(
        self,
        variant: Variant | str | Path = DEFAULT_VARIANT,
        render_mode: str | None = None,
        illegal_action: str = "raise",
        illegal_penalty: float = -1.0,
        render_view: str | int = "acting",
        **overrides: Any,
    ) -> None:
        super().__init__()
        self._attach_game(variant, render_mode, illegal_action, illegal_penalty, overrides, render_view)
        players = self.variant.players
        self.possible_agents = [f"player_{s}" for s in range(players)]
        self.agents = self.possible_agents[:]
        self._seat_of = {a: s for s, a in enumerate(self.possible_agents)}
        num_actions = self._num_actions
        self.observation_spaces = {a: observation_space(self.variant, num_actions) for a in self.possible_agents}
        self.action_spaces: dict[str, spaces.Discrete] = {a: spaces.Discrete(num_actions) for a in self.possible_agents}
        low, high = state_bounds(self.variant)
        self.state_space = spaces.Box(low, high, dtype=np.float32)  # privileged: state()
        self._absolute = np.full(1, ABSOLUTE, np.int64)
        self._rng: np.random.Generator | None = None
        self._rewarded = False  # some reward is non-zero and must be cleared on the next step
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self.agent_selection = self.possible_agents[0]

    # ------------------------------------------------------------ spaces

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[self._check_agent(agent)]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[self._check_agent(agent)]

    def _check_agent(self, agent: str) -> str:
        if agent not in self._seat_of:
            raise ValueError(f"unknown agent {agent!r}; agents are {', '.join(self.possible_agents)}")
        return agent

    # ------------------------------------------------------------ life cycle

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        seed = check_seed(seed)
        hands: Sequence | None = hands_option(options)
        rng = self._rng if seed is None else np.random.default_rng(seed)
        saved = None if rng is None else rng.bit_generator.state
        deal_seed = seed if seed is not None or rng is None else draw_seed(rng)
        try:
            self.game.reset(deal_seed, hands)
        except ValueError:
            if rng is not None and rng is self._rng and saved is not None:
                rng.bit_generator.state = saved  # a refused reset draws nothing
            raise
        self._rng = rng
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: {} for a in self.agents}
        self._rewarded = False
        self.agent_selection = self.possible_agents[int(self.engine.state.current[0])]
        if self.render_mode == "human":
            self.render()

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if not self.agents:
            raise ValueError("the match is over and every agent is done; call reset() to start a new one")
        return super().last(observe)

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = self._seat_of.get(agent)
        if seat is None:
            seat = self._seat_of[self._check_agent(agent)]  # raises ValueError first: an unknown agent
        to_act = seat == self.engine.state.current[0] and not self.terminations.get(agent, True)
        return self._observe_seat(seat, to_act)

    def state(self) -> np.ndarray:
        """The privileged global state in absolute seat order, a new float32 array of
        ``state_space``'s shape (``bigtwo.env.engine.state``): every hand and the game so far, for a
        centralised critic, never for acting."""
        out = np.empty((1, self.state_space.shape[0]), np.float32)
        return self.engine.global_state(self._absolute, out)[0]

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        illegal = self._play(action_id(action, self._num_actions))
        if illegal is not None:
            self._penalise(agent, illegal)
            return
        if self._rewarded:  # the last step ended a game: its rewards are collected
            for name in self.rewards:
                self.rewards[name] = 0.0
            self._rewarded = False
        self._cumulative_rewards[agent] = 0.0
        S = self.engine.state
        if S.game_over[0]:
            for name, payoff in zip(self.possible_agents, S.payoffs[0], strict=True):
                self.rewards[name] = float(payoff) + 0.0  # + 0.0: no -0.0 for the winner
                self._cumulative_rewards[name] += self.rewards[name]
            self._rewarded = True
            if S.match_over[0]:
                self.terminations = dict.fromkeys(self.agents, True)
        if not S.over[0]:
            self.agent_selection = self.possible_agents[S.current[0]]
        if self.render_mode == "human":
            self.render()

    def _penalise(self, agent: str, reason: str) -> None:
        """End the episode: ``agent`` chose an illegal action."""
        for name in self.rewards:
            self.rewards[name] = 0.0
        self.rewards[agent] = self.illegal_penalty
        self._cumulative_rewards[agent] = self.illegal_penalty
        self._rewarded = True
        self.terminations = dict.fromkeys(self.agents, True)
        self.infos[agent] = {"illegal_action": reason}
        if self.render_mode == "human":
            self.render()

    # ------------------------------------------------------------ drawing

    def render(self) -> str | None:
        return self._render(self.possible_agents)

    def close(self) -> None:
        """Nothing to release."""
