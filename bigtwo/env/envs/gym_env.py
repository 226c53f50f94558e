"""# Big Two (Gymnasium): one learner against fixed opponents

A single-agent view of the game for Gymnasium learners: the learner sits at one seat, and the
other seats are played inside ``step`` by opponent policies until it is the learner's turn again.

| | |
|---|---|
| Make | ``gymnasium.make("bigtwo/BigTwo-v1", variant="taiwan", opponents=None, seat=0, render_view="acting", **overrides)`` |
| Class | ``bigtwo.env.envs.gym_env.BigTwoEnv`` (registered when ``bigtwo.env`` is imported) |
| Actions | ``Discrete(A)``, the variant's action ids (see ``bigtwo.env.envs.aec`` and ``bigtwo.env.rules.actions``) |
| Observations | ``Dict(observation=Box float32 (327 + 74 P,), action_mask=Box{0, 1} int8 (A,))``: observation version 1 |
| Reward | the learner's payoff when a game ends (scoring units), else 0 |
| Episode | one match of the variant's ``games`` games; ``terminated`` when it is over, never truncated |
| Render modes | ``"human"`` (prints the table), ``"ansi"`` (returns it); ``render_view`` says whose hand it shows |

The observation is the learner's, laid out as in ``bigtwo.env.envs.aec`` (relative to the learner's
seat); the mask marks its legal actions (all 0 once the episode is over). ``env.action_masks()``
gives the same mask as ``bool``, for learners that ask the env for it (sb3-contrib's ``MaskablePPO``).

``seat``: the learner's seat, ``0 .. P-1``, or ``"random"`` for a seat drawn from the env's
generator at every reset. ``opponents``:

* ``None``: every other seat plays a uniformly random legal action, drawn from the env's own
  generator (so ``reset(seed=...)`` makes whole episodes repeat);
* an agent (any object with ``act(obs, legal_ids, legal_counts)`` returning one action id per
  row) or an agent name such as ``"random"``: it plays every other seat;
* a list of ``P - 1`` of those: entry ``i`` plays the seat ``i + 1`` places after the learner.

Names are built by the agent factory an installed package declares as the entry point
``make_agent`` of the group ``bigtwo.agent_factory`` (this project's: ``make_agent(name, variant,
seed)``, with ``random``, ``greedy``, ``heuristic``, ``search`` and checkpoint paths) and reseeded
from the env's generator on ``reset(seed=...)``; agent objects you pass keep their own randomness.

An action outside ``[0, A)`` raises ``ValueError``. An illegal one (``illegal_action="penalty"``,
the default here, since ``check_env`` and learners without masking sample the whole space) ends
the episode with reward ``illegal_penalty`` and the reason in ``info["illegal_action"]``; with
``illegal_action="raise"`` it raises ``ValueError`` and changes nothing. Keep the penalty below
the worst payoff of a game (-13 under ``cards`` scoring), or ending a bad hand illegally pays.

``info`` holds ``"seat"`` (the learner's) and, on a step where games ended, ``"payoffs"``: every
seat's payoffs of those games, summed. ``reset(options={"hands": [...]})`` deals the given hands
(one per seat) for the first game. Seeds are ints 0..2**64-1 (``bigtwo.env.engine.seeds``); a ``reset``
refused for its seed, its options or its hands raises ``ValueError`` before anything changes.

``render_view``: whose hand ``render()`` shows, the others reading ``(hidden)``: ``"acting"``
(default: the seat to act, which is the learner whenever ``step`` returns mid-episode; no hand
once the episode is over), a seat number (that seat's hand), or ``"all"`` (every hand).

>>> import gymnasium, bigtwo.env
>>> env = gymnasium.make("bigtwo/BigTwo-v1", variant="taiwan", seat=2)
>>> obs, info = env.reset(seed=0)
>>> obs["observation"].shape, info["seat"]
((623,), 2)
>>> import numpy as np
>>> action = int(np.flatnonzero(obs["action_mask"])[0])
>>> obs, reward, terminated, truncated, info = env.step(action)

Version history:

* v1: observation version 1 (``bigtwo.env.engine.observation``: the recent moves, passes per seat and
  size, unseen cards, match scores and game number, opening owed, its own breach, direction).
  ``render`` shows only the acting seat's hand unless ``render_view`` says otherwise.
* v0: first release (bigtwo 0.1.0).
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from bigtwo.env import ENV_ID  # noqa: F401 - the id this env is registered under (bigtwo.env.ENV_ID), kept here too
from bigtwo.env.checks import is_seat, is_whole
from bigtwo.env.engine.seeds import check_seed, draw_seed
from bigtwo.env.envs.env_base import RENDER_MODES, GameBacked, hands_option, observation_space
from bigtwo.env.rules.actions import action_id
from bigtwo.env.rules.variant import DEFAULT_VARIANT, Variant

AGENT_FACTORY_GROUP = "bigtwo.agent_factory"  # entry point make_agent(name, variant, seed) -> an agent
MAX_REDEALS = 100  # matches that end before the learner's first turn are dealt again (tiny hands only)


class BigTwoEnv(GameBacked, gymnasium.Env):
    """One learner against opponent policies; see the module docstring."""

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 4}

    def __init__(
        self,
        variant: Variant | str | Path = DEFAULT_VARIANT,
        opponents: Any = None,
        seat: int | str = 0,
        render_mode: str | None = None,
        illegal_action: str = "penalty",
        illegal_penalty: float = -1.0,
        render_view: str | int = "acting",
        **overrides: Any,
    ) -> None:
        self._attach_game(variant, render_mode, illegal_action, illegal_penalty, overrides, render_view)
        self.players = self.variant.players
        self.random_seat = seat == "random"
        self.seat = 0 if self.random_seat else self._check_seat(seat)
        self.opponents, self._named = self._resolve_opponents(opponents)
        self.observation_space = observation_space(self.variant, self._num_actions)
        self.action_space = spaces.Discrete(self._num_actions)
        self._payoffs = np.zeros(self.players, np.float64)
        self._ended = False  # a game ended since the learner's last step
        self._done = True  # no episode under way: reset() first

    # ------------------------------------------------------------ arguments

    def _check_seat(self, seat: Any) -> int:
        if not is_whole(seat):
            raise ValueError(f"seat must be 0..{self.players - 1} or 'random', got {seat!r}")
        if not is_seat(seat, self.players):
            raise ValueError(f"seat must be 0..{self.players - 1} or 'random' ({self.players} players), got {seat}")
        return int(seat)

    def _resolve_opponents(self, opponents: Any) -> tuple[list[Any], list[bool]]:
        """One policy (or ``None``: random) per relative seat 1..P-1, and which ones we built."""
        n = self.players - 1
        if opponents is None:
            return [None] * n, [False] * n
        if isinstance(opponents, str) or hasattr(opponents, "act"):
            opponents = [opponents] * n
        if not isinstance(opponents, Sequence) or len(opponents) != n:
            raise ValueError(
                f"opponents must be None (random play), an Agent, an agent name, or a list of {n} of those "
                f"(one per other seat, in play order after the learner); got {opponents!r}"
            )
        built: dict[str, Any] = {}
        policies, named = [], []
        for spec in opponents:
            if isinstance(spec, str):
                if spec not in built:
                    built[spec] = _make_agent(spec, self.variant)
                policies.append(built[spec])
                named.append(True)
            elif spec is None or callable(getattr(spec, "act", None)):
                if spec is not None:
                    _check_agent_variant(spec, self.variant)
                policies.append(spec)
                named.append(False)
            else:
                raise ValueError(
                    f"an opponent must be an Agent (with act(obs, legal_ids, legal_counts)), an agent name or None; "
                    f"got {spec!r}"
                )
        return policies, named

    # ------------------------------------------------------------ episode

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        seed = check_seed(seed)
        hands = hands_option(options)
        if hands is not None:
            self.game.check_hands(hands)  # bad cards are refused before anything changes
        super().reset(seed=seed)
        rng = self.np_random
        if seed is not None:
            for policy, named in zip(self.opponents, self._named, strict=True):
                if named and isinstance(getattr(policy, "rng", None), np.random.Generator):
                    policy.rng = np.random.default_rng(draw_seed(rng))
        self._done = True  # until this reset has dealt
        deal_seed = seed
        for _ in range(MAX_REDEALS):
            if deal_seed is None:
                deal_seed = draw_seed(rng)
            self.game.reset(deal_seed, hands)
            if self.random_seat:
                self.seat = int(rng.integers(self.players))
            self._payoffs[:] = 0.0
            self._ended = False
            self._play_opponents()  # a game that ends here is paid on the first step
            if not self.game.is_over:
                break
            if hands is not None:
                raise ValueError(f"with these hands the match ends before seat {self.seat} plays")
            deal_seed = None
        else:
            raise RuntimeError(f"{MAX_REDEALS} deals in a row ended before seat {self.seat} played")
        self._done = False
        if self.render_mode == "human":
            self.render()
        return self._observe(), {"seat": self.seat}

    def step(self, action: Any) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        if self._done:
            raise ValueError("the episode is over (or has not started); call reset()")
        illegal = self._play(action_id(action, self._num_actions))
        info: dict[str, Any] = {"seat": self.seat}
        if illegal is not None:
            self._done = True
            info["illegal_action"] = illegal
            return self._observe(), self.illegal_penalty, True, False, info
        self._collect()
        self._play_opponents()
        terminated = self.game.is_over
        self._done = terminated
        reward = 0.0
        if self._ended:
            info["payoffs"] = self._payoffs + 0.0  # a copy, without -0.0
            reward = float(self._payoffs[self.seat]) + 0.0
            self._payoffs[:] = 0.0
            self._ended = False
        if self.render_mode == "human":
            self.render()
        return self._observe(), reward, terminated, False, info

    def _collect(self) -> None:
        """Add up the payoffs of a game that ended on the last play, for the learner's next reward."""
        S = self.engine.state
        if S.game_over[0]:
            self._payoffs += S.payoffs[0]
            self._ended = True

    def _play_opponents(self) -> None:
        """Play the other seats until the learner is to act or the match is over."""
        S = self.engine.state
        game, players, learner = self.game, self.players, self.seat
        while not S.over[0] and S.current[0] != learner:
            seat = int(S.current[0])
            policy = self.opponents[(seat - learner) % players - 1]
            if policy is None:
                action = int(S.legal[0, int(self.np_random.random() * S.legal_n[0])])
                game.play_action(action)
            else:
                obs = game._observation(seat)[None]
                ids, counts = self.engine.legal_actions()
                action = int(np.asarray(policy.act(obs, ids, counts)).reshape(-1)[0])
                try:
                    game.play_action(action)
                except ValueError as exc:
                    raise ValueError(f"opponent {policy!r} at seat {seat} chose an illegal action: {exc}") from None
            self._collect()

    def _observe(self) -> dict[str, np.ndarray]:
        return self._observe_seat(self.seat, not self._done and self.engine.state.current[0] == self.seat)

    def action_masks(self) -> np.ndarray:
        """``(A,)`` bool: the learner's legal actions now (the observation's ``action_mask``), all
        ``False`` once the episode is over. This is the method sb3-contrib's ``MaskablePPO`` calls
        (``examples/sb3_maskable_ppo.py``), so it learns with masks without reading the mask as input."""
        mask = np.zeros(self._num_actions, bool)
        S = self.engine.state
        if not self._done and S.current[0] == self.seat:
            mask[S.legal[0, : S.legal_n[0]]] = True
        return mask

    # ------------------------------------------------------------ drawing

    # gymnasium types render's result with a type variable no method can return; its ansi mode is text
    def render(self) -> str | None:  # type: ignore[override]
        return self._render([f"seat {s}" + (" (learner)" if s == self.seat else "") for s in range(self.players)])

    def close(self) -> None:
        """Nothing to release."""


def _make_agent(name: str, variant: Variant) -> Any:
    """An opponent from its name, by the agent factory an installed package declares (the entry
    point ``make_agent`` of the group ``AGENT_FACTORY_GROUP``); imported only when names are used."""
    found = [ep for ep in entry_points(group=AGENT_FACTORY_GROUP) if ep.name == "make_agent"]
    if not found:
        raise ValueError(
            f"opponent {name!r}: no agent factory is installed (entry point 'make_agent' in group "
            f"{AGENT_FACTORY_GROUP!r}); pass Agent objects instead"
        )
    try:
        make = found[0].load()
    except ImportError as exc:
        raise ValueError(f"opponent {name!r}: the agent factory {found[0].value} cannot be imported ({exc})") from None
    return make(name, variant, seed=None)


def _check_agent_variant(agent: Any, variant: Variant) -> None:
    """``ValueError`` if ``agent`` was built for a variant with other action ids or seats."""
    theirs = getattr(agent, "variant", None)
    if isinstance(theirs, Variant) and (
        theirs.action_table_key() != variant.action_table_key() or theirs.players != variant.players
    ):
        raise ValueError(
            f"opponent {agent!r} was built for variant {theirs.name!r} ({theirs.players} players), whose actions "
            f"or seats differ from {variant.name!r} ({variant.players} players); build it for this variant"
        )
