"""The agent interface: choose one legal action per game from what the seat to act can see.

An agent is built for one variant (``make_agent(name, variant, seed=...)``) and acts for many
games at once. It gets only the observations (see ``bigtwo.env.engine.observation``) and the legal
action ids of the seats to act, never the engine's hidden state, so it cannot peek.

>>> import numpy as np
>>> from bigtwo.env.engine.engine import Engine
>>> eng = Engine("taiwan", num_matches=3, seed=0)
>>> agent = RandomAgent(eng.variant, seed=0)
>>> ids, counts = eng.legal_actions()
>>> actions = agent.act(eng.observe(), ids, counts)
>>> bool(all(a in ids[g, :counts[g]] for g, a in enumerate(actions)))
True

**Checked inputs.** Every agent's ``act`` (each subclass's, trained agents' included) is wrapped
by the base class so that its inputs pass ``check_act_inputs`` first: ``obs`` real numbers
within the observation's bounds (``bigtwo.env.engine.observation.obs_bounds``: 0..1, match scores
within +-their bound) of shape ``(B, obs_size(players))``, ``legal_ids`` integers of shape ``(B, L)``,
``legal_counts`` integers of shape ``(B,)`` in ``0..L``, and every counted id an action of the
variant (``0..size - 1``). Anything else is a ``ValueError`` naming the input and what is
allowed, never a crash inside a compiled kernel. The check costs a few vectorised passes over
the arrays (no copies of NumPy inputs).

>>> agent.act(eng.observe()[:, :10], ids, counts)
Traceback (most recent call last):
...
ValueError: obs must have shape (B, 623) for 4 players, B = 3 rows as in legal_counts; got shape (3, 10)
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from bigtwo.agents.spec import describe, same_value
from bigtwo.env.engine.observation import obs_bounds, obs_size
from bigtwo.env.rules.actions import action_table
from bigtwo.env.rules.variant import Variant

if TYPE_CHECKING:
    from bigtwo.env.envs.game import Game

Act = Callable[..., np.ndarray]


class Scorer(Protocol):
    """An agent that also ranks every legal play (the heuristic, a trained network): what a search
    takes as its ``prior`` and the web table's coach asks."""

    def scores(self, obs: np.ndarray, legal_ids: np.ndarray, legal_counts: np.ndarray) -> np.ndarray:
        """(B, L) float: each row's legal plays, higher is better (padding below every play)."""
        ...


def _real(a: np.ndarray) -> bool:
    return a.dtype == np.bool_ or np.issubdtype(a.dtype, np.integer) or np.issubdtype(a.dtype, np.floating)


def check_act_inputs(
    obs: object,
    legal_ids: object,
    legal_counts: object,
    players: int,
    actions: int,
    bounds: tuple[np.ndarray, np.ndarray],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(obs, legal_ids, legal_counts)`` as arrays if they are what ``Agent.act`` takes for
    ``players`` seats and ``actions`` action ids (see the module docstring), else ``ValueError``
    naming the input and what is allowed. ``bounds``: each slot's lowest and highest value
    (``obs_bounds(variant)``: match scores are signed, so no single range fits every slot)."""
    obs_a, ids, counts = np.asarray(obs), np.asarray(legal_ids), np.asarray(legal_counts)
    if obs_a.ndim == 1 or counts.ndim == 0:  # one position, given without the batch axis
        raise ValueError(
            "act takes a batch: obs (B, D), legal_ids (B, L), legal_counts (B,); got one position "
            f"(obs {obs_a.shape}, legal_ids {ids.shape}, legal_counts {counts.shape}). For one position use "
            "agent.choose(game), or add the batch axis: obs[None], legal_ids[None], np.array([count])"
        )
    if counts.ndim != 1 or not np.issubdtype(counts.dtype, np.integer):
        raise ValueError(
            f"legal_counts must be integers of shape (B,), one count per row; got {counts.dtype} of shape {counts.shape}"
        )
    b = counts.shape[0]
    size = obs_size(players)
    if obs_a.shape != (b, size):
        raise ValueError(
            f"obs must have shape (B, {size}) for {players} players, B = {b} rows as in legal_counts; "
            f"got shape {obs_a.shape}"
        )
    if not _real(obs_a):
        raise ValueError(f"obs must be real numbers (float32 from the engine), got dtype {obs_a.dtype}")
    if ids.ndim != 2 or ids.shape[0] != b or not np.issubdtype(ids.dtype, np.integer):
        raise ValueError(
            f"legal_ids must be integers of shape (B, L), B = {b} rows as in legal_counts; "
            f"got {ids.dtype} of shape {ids.shape}"
        )
    if b == 0:
        return obs_a, ids, counts
    low, high = bounds
    inside = (obs_a >= low) & (obs_a <= high)  # NaN is outside
    if not inside.all():
        bad = int(np.flatnonzero(~inside.all(axis=1))[0])
        slot = int(np.flatnonzero(~inside[bad])[0])
        raise ValueError(
            f"obs must hold the engine's values (slot {slot}: {low[slot].item():g}..{high[slot].item():g}); row {bad} holds "
            f"{obs_a[bad, slot].item()!r} there"
        )
    width = ids.shape[1]
    if counts.min() < 0 or counts.max() > width:
        bad = np.flatnonzero((counts < 0) | (counts > width))[0]
        raise ValueError(
            f"legal_counts must be 0..{width} (the width of legal_ids); row {bad} has {counts[bad].item()}"
        )
    if width and (ids.min() < 0 or ids.max() >= actions):  # padding may hold anything: look closer
        counted = np.arange(width)[None, :] < counts[:, None]
        bad_rows, bad_cols = np.nonzero(counted & ((ids < 0) | (ids >= actions)))
        if bad_rows.size:
            r, c = int(bad_rows[0]), int(bad_cols[0])
            raise ValueError(
                f"legal_ids must be action ids 0..{actions - 1} up to each row's count; "
                f"row {r} holds {ids[r, c].item()} at {c}"
            )
    return obs_a, ids, counts


def _recording(init: Callable[..., None]) -> Callable[..., None]:
    """``init`` that also keeps, in ``options``, the keyword parameters given other values than
    their defaults (those of the class built, not of a ``super().__init__`` call)."""
    signature = inspect.signature(init)
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    params = [
        p
        for p in signature.parameters.values()
        if p.name not in ("self", "variant", "seed") and p.kind in kinds and p.default is not p.empty
    ]

    @functools.wraps(init)
    def recording_init(self: Agent, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        if type(self).__init__ is recording_init:  # the class built (a subclass's super() call is not)
            given = signature.bind(self, *args, **kwargs).arguments
            self.options = {
                p.name: given[p.name]
                for p in params
                if p.name in given and p.name not in self.unlisted and not same_value(given[p.name], p.default)
            }

    recording_init.records_options = True  # type: ignore[attr-defined]
    return recording_init


def _checked(act: Act) -> Act:
    """``act`` with its inputs passed through ``check_act_inputs`` first."""

    @functools.wraps(act)
    def checked_act(self: Agent, obs: np.ndarray, legal_ids: np.ndarray, legal_counts: np.ndarray) -> np.ndarray:
        return act(self, *self.check_inputs(obs, legal_ids, legal_counts))

    checked_act.checks_inputs = True  # type: ignore[attr-defined]  # a mark on the function object
    return checked_act


class Agent:
    """Base class: subclasses implement ``act``; the base class checks its inputs first.

    ``options``: what the agent was built with besides its defaults, which its repr shows
    (``SearchAgent('taiwan', simulations=200, top_k=8)``): the keyword parameters of its class's
    ``__init__`` given other values than their defaults (not ``unlisted`` ones), or the options
    given that its declaration does not default to, for an agent the registry builds
    (``bigtwo.agents.registry``; a checkpoint's with its ``path``). ``built_as``: the registry
    entry it was built from when that is not its class (``strong('taiwan', simulations=16)``)."""

    name = "agent"
    options: dict[str, Any] = {}  # noqa: RUF012 - replaced per instance, never changed in place
    unlisted: tuple[str, ...] = ()  # parameters of ``__init__`` that are no options (left out of ``options``)
    built_as: str | None = None

    def __init__(self, variant: Variant, seed: int | None = None) -> None:
        self.variant = variant
        self.table = action_table(variant)
        self.rng = np.random.default_rng(seed)
        self.obs_bounds = obs_bounds(variant)

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        act = cls.__dict__.get("act")
        if act is not None and not getattr(act, "checks_inputs", False):
            cls.act = _checked(act)  # type: ignore[method-assign]  # the subclass's act, wrapped
        init = cls.__dict__.get("__init__")
        if init is not None and not getattr(init, "records_options", False):
            cls.__init__ = _recording(init)  # type: ignore[method-assign]

    def act_unchecked(self, obs: np.ndarray, legal_ids: np.ndarray, legal_counts: np.ndarray) -> np.ndarray:
        """``act`` without the input checks: only for arrays an ``Engine`` made (a search's copies, a
        network's adviser), where the checks would cost more than the play."""
        act = type(self).act
        return getattr(act, "__wrapped__", act)(self, obs, legal_ids, legal_counts)

    def check_inputs(
        self, obs: object, legal_ids: object, legal_counts: object
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``check_act_inputs`` for this agent's variant: the inputs as arrays, or ``ValueError``."""
        return check_act_inputs(obs, legal_ids, legal_counts, self.variant.players, self.table.size, self.obs_bounds)

    def act(self, obs: np.ndarray, legal_ids: np.ndarray, legal_counts: np.ndarray) -> np.ndarray:
        """One action id per row: ``obs`` (B, D) float32, ``legal_ids`` (B, L) sorted ids valid up
        to ``legal_counts`` (B,). Returns int64 (B,), each from its row's legal ids, or -1 for a
        row with none (a finished game, which sits the step out)."""
        raise NotImplementedError

    def choose(self, game: Game) -> list[str]:
        """The play this agent makes for the seat to act of ``game`` (a ``bigtwo.env.Game``): its card
        texts, ``[]`` for a pass. One position, no batch axes; ``game`` is not changed (play it with
        ``game.play(...)``). ``ValueError`` when the match is over or its rules are not the agent's.

        >>> from bigtwo.env import Game
        >>> game = Game("taiwan", seed=1)
        >>> GreedyAgent = __import__("bigtwo.agents", fromlist=["GreedyAgent"]).GreedyAgent
        >>> GreedyAgent(game.variant).choose(game)  # the seat holding 3C opens with it
        ['3C']
        """
        action = self.choose_action(game)  # checks that game is a Game first
        return game.cards_of(action)

    def choose_action(self, game: Game) -> int:
        """``choose``'s play as the variant's action id (``game.cards_of(id)`` gives its cards)."""
        from bigtwo.env.envs.game import Game

        if not isinstance(game, Game):
            raise TypeError(
                f"choose takes a Game (bigtwo.env.Game), got {type(game).__name__}: for a position you describe by "
                "what one seat knows, use bigtwo.env.Position.parse(...).game(); for observations and legal ids, "
                "use agent.act(obs, legal_ids, legal_counts) (one row per match)"
            )
        if game.is_over:
            raise ValueError("the match is over: no seat is to act (start another with game.reset())")
        if action_table(game.variant) is not self.table or game.variant.players != self.variant.players:
            raise ValueError(
                f"this agent plays {self.variant.name!r} rules; the game's are {game.variant.name!r}'s, with another "
                "action table or number of players: make the agent for the game's variant (make_agent(name, game.variant))"
            )
        legal = np.asarray(game.legal_actions(), np.int64)
        action = int(self.act(game.observation()[None], legal[None], np.array([legal.size]))[0])
        if action not in legal:  # an agent's own bug, never silently played
            raise RuntimeError(f"{self!r} chose action {action}, which is not legal here")
        return action

    def __repr__(self) -> str:
        return describe(self.built_as or type(self).__name__, self.variant.name, self.options)


class RandomAgent(Agent):
    """A uniformly random legal play (pass included when legal)."""

    name = "random"

    def act(self, obs: np.ndarray, legal_ids: np.ndarray, legal_counts: np.ndarray) -> np.ndarray:
        picks = (self.rng.random(len(legal_counts)) * legal_counts).astype(np.int64)
        if legal_ids.shape[1] == 0:  # no row has a legal play (every game finished): all sit out
            return np.full(len(legal_counts), -1, np.int64)
        actions = legal_ids[np.arange(len(legal_counts)), picks].astype(np.int64)
        actions[legal_counts == 0] = -1  # finished games sit the step out
        return actions
