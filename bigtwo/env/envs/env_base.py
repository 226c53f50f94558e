"""What the PettingZoo AEC env and the Gymnasium env share: set-up, observing a seat, playing, drawing.

Both environments are thin adapters over one ``Game`` (the single-game view of the batched
engine). ``GameBacked`` holds what they do alike:

- ``_attach_game``: check ``render_mode`` (``None``, ``"human"``, ``"ansi"``), ``illegal_action``
  (``"raise"`` or ``"penalty"``) and ``illegal_penalty`` (a finite number), then build the
  ``Game`` and keep its variant, engine and action table;
- ``_observe_seat``: one seat's ``{"observation", "action_mask"}``, the mask all 0 unless that
  seat is to act (``observation_space`` is the matching ``Dict`` space);
- ``_play``: play an action id; an illegal one changes nothing and either raises ``ValueError``
  or returns the reason for the adapter's penalty;
- ``_render``: the table as text (``bigtwo.env.envs.render``), showing the hands ``render_view`` allows;
- ``hands_option``: the ``hands`` of ``reset``'s ``options`` (checked to be a mapping).

``render_view`` says whose hand a render shows, since whoever renders sees the text: ``"acting"``
(the default) shows only the hand of the seat to act (no hand once the match is over), a seat
number ``0 .. P-1`` only that seat's, and ``"all"`` every hand (for debugging or a spectator who
may see everything). Other seats show ``(hidden)``; card counts, the table and the history are
public and always shown.

What only one adapter does (PettingZoo's bookkeeping of who acts and who is rewarded, the
Gymnasium env's opponents) stays in ``bigtwo.env.envs.aec`` and ``bigtwo.env.envs.gym_env``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from bigtwo.env.checks import is_seat
from bigtwo.env.engine.observation import obs_bounds
from bigtwo.env.envs.game import Game
from bigtwo.env.envs.render import render_text
from bigtwo.env.rules.variant import Variant

RENDER_MODES = ("human", "ansi")
RENDER_VIEWS = ("acting", "all")  # or a seat number
ILLEGAL_ACTIONS = ("raise", "penalty")


def check_illegal_options(illegal_action: str, illegal_penalty: float) -> float:
    """``illegal_penalty`` as a float, after checking both options; ``ValueError`` otherwise."""
    if illegal_action not in ILLEGAL_ACTIONS:
        raise ValueError(f"illegal_action must be one of {', '.join(ILLEGAL_ACTIONS)}; got {illegal_action!r}")
    if isinstance(illegal_penalty, bool) or not isinstance(illegal_penalty, (int, float)):
        raise ValueError(f"illegal_penalty must be a number, got {illegal_penalty!r}")
    if not math.isfinite(illegal_penalty):
        raise ValueError(f"illegal_penalty must be finite, got {illegal_penalty!r}")
    return float(illegal_penalty)


def check_render_view(view: str | int, players: int) -> str | int:
    """``view`` if it is ``"acting"``, ``"all"`` or a seat ``0 .. players-1`` (as an int); else ``ValueError``."""
    if isinstance(view, str) and view in RENDER_VIEWS:
        return view
    if is_seat(view, players):
        return int(view)
    raise ValueError(f"render_view must be 'acting', 'all' or a seat 0..{players - 1}; got {view!r}")


def hands_option(options: Any) -> Any:
    """The ``hands`` entry of ``reset``'s ``options`` (``None`` without one; other keys are ignored);
    ``ValueError`` unless ``options`` is ``None`` or a mapping."""
    if options is None:
        return None
    if not isinstance(options, Mapping):
        raise ValueError(f"options must be None or a dict such as {{'hands': [...]}}, got {options!r}")
    return options.get("hands")


def check_render_mode(render_mode: str | None) -> None:
    """``ValueError`` unless ``render_mode`` is ``None``, ``"human"`` or ``"ansi"``."""
    if render_mode is not None and render_mode not in RENDER_MODES:
        raise ValueError(f"render_mode must be None, 'human' or 'ansi'; got {render_mode!r}")


class GameBacked:
    """What the AEC and Gymnasium envs set up alike: their options checked, then a ``Game``
    (the readable single-game view over the engine) and its variant, engine and action table."""

    def _attach_game(
        self,
        variant: Variant | str | Path,
        render_mode: str | None,
        illegal_action: str,
        illegal_penalty: float,
        overrides: dict[str, Any],
        render_view: str | int = "acting",
    ) -> None:
        check_render_mode(render_mode)
        self.illegal_penalty = check_illegal_options(illegal_action, illegal_penalty)
        self.illegal_action = illegal_action
        self.render_mode = render_mode
        self.game = Game(variant, **overrides)
        self.variant = self.game.variant
        self.engine = self.game.engine
        self.action_table = self.game.action_table
        self._num_actions = self.action_table.size
        self.render_view = render_view

    @property
    def render_view(self) -> str | int:
        """Whose hand ``render`` shows: ``"acting"``, a seat number or ``"all"`` (see the module docstring)."""
        return self._render_view

    @render_view.setter
    def render_view(self, view: str | int) -> None:
        self._render_view = check_render_view(view, self.game.players)

    def _viewer(self) -> int | None:
        """The seat whose hand a render shows (-1: none, ``None``: every seat)."""
        if self._render_view == "all":
            return None
        if self._render_view == "acting":
            seat = self.game.current_player
            return -1 if seat is None else seat
        return int(self._render_view)

    def _play(self, a: int) -> str | None:
        """Play action id ``a``. An illegal action changes nothing: under ``illegal_action: raise``
        its ``ValueError`` propagates; otherwise its message is returned for the penalty."""
        if self.illegal_action == "raise":
            self.game.play_action(a)
            return None
        try:
            self.game.play_action(a)
        except ValueError as exc:
            return str(exc)
        return None

    def _observe_seat(self, seat: int, to_act: bool) -> dict[str, np.ndarray]:
        """``seat``'s observation and action mask; the mask marks the legal plays only when
        ``to_act`` (the seat is to act in a live episode) and is all 0 otherwise."""
        obs = self.game._observation(seat)
        mask = np.zeros(self._num_actions, np.int8)
        if to_act:
            S = self.engine.state
            mask[S.legal[0, : S.legal_n[0]]] = 1
        return {"observation": obs, "action_mask": mask}

    def _render(self, names: Sequence[str]) -> str | None:
        """The table as text with seats labelled ``names``: returned (``ansi``), printed (``human``),
        or a warning without a ``render_mode``."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() was called without a render_mode; pass render_mode='human' or 'ansi'")
            return None
        text = render_text(self.game, names=names, viewer=self._viewer())
        if self.render_mode == "ansi":
            return text
        print(text)
        return None


def observation_space(variant: Variant, num_actions: int) -> spaces.Dict:
    """``Dict(observation=Box float32 (obs_size(P),), action_mask=Box{0, 1} int8)``; the
    observation's bounds are each part's (``obs_bounds``: [0, 1] but for the match scores)."""
    low, high = obs_bounds(variant)
    return spaces.Dict(
        {
            "observation": spaces.Box(low, high, dtype=np.float32),
            "action_mask": spaces.Box(0, 1, shape=(num_actions,), dtype=np.int8),
        }
    )
