"""Supervised learning from game records: every decision a record holds, as the environments
gave it to the seat that made it.

A game record (``bigtwo.env.records.record``: a tournament's ``--records`` file, the web table's
export, ``Game.to_record``) is replayed through the engine; before each play the seat to act
is observed, so each decision is

- ``observation``: float32 ``(obs_size(P),)``, what the AEC env's ``observe`` (and the vector
  env) gives that seat at that turn: ``Engine.observe`` from its own point of view
  (``bigtwo.env.engine.observation``);
- ``legal_ids``: the sorted legal action ids of that turn in the variant's fixed action space
  (``bigtwo.env.rules.actions``; the AEC env's ``action_mask.nonzero()[0]``);
- ``action_id``: the id of the play the record says was made.

``iter_decisions`` yields them one by one; ``load_decisions`` stacks them into arrays shaped as an
agent's ``act`` takes them (``observation``, ``legal_ids`` padded with -1, ``legal_counts``), with
which seat, record and game each came from and that seat's payoff in that game (a label for
value learning). A record the engine does not agree with (a changed play, a wrong payoff) raises
``ValueError`` naming the record, game and play.

>>> from bigtwo.env.envs.game import Game
>>> g = Game("taiwan", seed=3)
>>> while not g.is_over:
...     g.play(g.legal_plays()[-1])
>>> data = load_decisions([g.to_record()], seat=0)
>>> data["observation"].shape[1], bool((data["seat"] == 0).all())
(623, True)
>>> obs, legal_ids, action = next(iter_decisions([g.to_record()]))
>>> bool(action in legal_ids), obs.dtype.name
(True, 'float32')
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from bigtwo.env.checks import is_seat
from bigtwo.env.records.record import check_record, game_from_record, read_records

Records = str | Path | dict[str, Any] | Iterable[dict[str, Any]]
"""Where decisions come from: a record file (``.json`` or ``.jsonl``), one record, or records."""

FIELDS = ("observation", "legal_ids", "legal_counts", "action", "seat", "record", "game", "payoff")


def _records(source: Records) -> Iterator[dict[str, Any]]:
    if isinstance(source, (str, Path)):
        yield from read_records(source)
    elif isinstance(source, dict):
        yield source
    elif isinstance(source, Iterable):
        yield from source
    else:
        raise ValueError(f"records must be a record file's path, a record (dict) or records, got {source!r}")


def _decisions(source: Records, seat: int | None) -> Iterator[tuple[np.ndarray, np.ndarray, int, int, int, int, float]]:
    """``(observation, legal_ids, action_id, seat, record index, game number, payoff)`` per decision."""
    for index, record in enumerate(_records(source)):
        try:
            check_record(record)
        except ValueError as exc:
            raise ValueError(f"record {index}: {exc}") from None
        players = record["variant"].get("players", 4)
        if seat is not None and not is_seat(seat, players):
            raise ValueError(f"seat must be a seat 0..{players - 1} of record {index}'s variant, or None; got {seat!r}")
        try:
            game, rows = _replay(record, seat)
        except ValueError as exc:
            raise ValueError(f"record {index}: {exc}") from None
        payoffs = {r.number: r.payoffs for r in game.results}
        for obs, legal, action, acting, number in rows:
            pay = payoffs.get(number)
            yield obs, legal, action, acting, index, number, float("nan") if pay is None else float(pay[acting])


def _replay(record: dict[str, Any], seat: int | None) -> tuple[Any, list[tuple[np.ndarray, np.ndarray, int, int, int]]]:
    """The record replayed (a ``Game``) and ``(observation, legal_ids, action_id, seat, game
    number)`` of each play (of ``seat``'s only, when given), taken just before it is made."""
    rows: list[tuple[np.ndarray, np.ndarray, int, int, int]] = []

    def before(game: Any, number: int, acting: int, cards: str) -> None:
        if seat is not None and acting != seat:
            return
        try:
            action = game.encode(cards)
        except ValueError:
            return  # the replay says why the play is no play
        obs = game.engine.observe()[0].copy()  # the seat to act, from its own point of view
        rows.append((obs, game.legal_actions(), int(action), acting, number))

    return game_from_record(record, before), rows


def iter_decisions(records: Records, seat: int | None = None) -> Iterator[tuple[np.ndarray, np.ndarray, int]]:
    """``(observation, legal_ids, action_id)`` for every play of ``records`` (a file, a record or
    records), in order; only seat ``seat``'s plays when given. See the module docstring."""
    for obs, legal, action, *_ in _decisions(records, seat):
        yield obs, legal, action


def load_decisions(records: Records, seat: int | None = None) -> dict[str, np.ndarray]:
    """Every decision of ``records`` (as ``iter_decisions``) stacked into arrays, one row each:

    | key | shape, dtype | what |
    |---|---|---|
    | ``observation`` | (N, obs_size) float32 | the acting seat's observation |
    | ``legal_ids`` | (N, L) int32 | its legal action ids, sorted, padded with -1 (L: the most of any row) |
    | ``legal_counts`` | (N,) int64 | how many legal ids each row has |
    | ``action`` | (N,) int64 | the action id played |
    | ``seat`` | (N,) int64 | the acting seat |
    | ``record`` | (N,) int64 | the record's index in ``records`` |
    | ``game`` | (N,) int64 | the game's number within its match (1, 2, ...) |
    | ``payoff`` | (N,) float64 | the acting seat's payoff in that game (NaN: the game is unfinished) |

    The records must share one variant (one observation size and action space); ``ValueError``
    naming the first that does not."""
    obs, legal, actions, seats, index, games, payoffs = [], [], [], [], [], [], []
    for o, ids, a, s, r, g, pay in _decisions(_same_variant(records), seat):
        obs.append(o)
        legal.append(ids)
        actions.append(a)
        seats.append(s)
        index.append(r)
        games.append(g)
        payoffs.append(pay)
    width = max((len(x) for x in legal), default=0)
    padded = np.full((len(legal), max(width, 1)), -1, np.int32)
    for row, ids in enumerate(legal):
        padded[row, : len(ids)] = ids
    size = obs[0].shape[0] if obs else 0
    return {
        "observation": np.stack(obs) if obs else np.zeros((0, size), np.float32),
        "legal_ids": padded,
        "legal_counts": np.array([len(x) for x in legal], np.int64),
        "action": np.array(actions, np.int64),
        "seat": np.array(seats, np.int64),
        "record": np.array(index, np.int64),
        "game": np.array(games, np.int64),
        "payoff": np.array(payoffs, np.float64),
    }


def _same_variant(records: Records) -> Iterator[dict[str, Any]]:
    """``records``, refusing one whose variant differs from the first's."""
    first: Any = None
    for index, record in enumerate(_records(records)):
        variant = record.get("variant") if isinstance(record, dict) else None
        if index == 0:
            first = variant
        elif variant != first:
            raise ValueError(
                f"record {index}: its variant differs from record 0's ({_name(variant)!r} vs {_name(first)!r}); "
                "load_decisions stacks one variant's decisions (one observation size and action space)"
            )
        yield record


def _name(variant: Any) -> Any:
    return variant.get("name") if isinstance(variant, dict) else variant


__all__ = ["FIELDS", "Records", "iter_decisions", "load_decisions"]
