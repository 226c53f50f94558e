"""The coach: what the strongest shipped agent would play in a seat's position, from that seat's
information only.

The coach reads exactly what an agent reads: the observation of the seat to act
(``Engine.observe``, its own hand and the public table) and its legal plays, never another
seat's cards. Where a trained network is shipped for the variant, the coach is ``strong`` (a search
on the network; on the web table its ``search=rollouts``, ``bigtwo.agents.pretrained.WEB_SEARCH``): its values are the mean payoff per game of each play it searched (points
of the variant's scoring, over its sampled deals of the unseen cards), its choice first; a play it
did not need to search (the only legal play, or one that goes out) comes alone, without a value.
Elsewhere the ``heuristic`` agent's preferences rank the legal plays (higher is better, no unit),
and ``why`` says so.

>>> from bigtwo.env import load_variant
>>> from bigtwo.env.envs.game import Game
>>> game = Game(load_variant("japan", players=3), seed=3)  # no network is shipped for 3-player japan
>>> coach = Coach(game.variant)
>>> coach.agent_name, coach.kind
('heuristic', 'preference')
>>> advice = coach.advise(game)
>>> len(advice["plays"]) <= 3 and advice["plays"][0]["cards"] in [" ".join(p) for p in game.legal_plays()]
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from bigtwo.agents.base import Scorer
from bigtwo.agents.lookahead import LookaheadAgent
from bigtwo.agents.pretrained import STRONG, WEB_SEARCH
from bigtwo.agents.registry import default_opponent, make_agent
from bigtwo.agents.search import SearchAgent
from bigtwo.env.envs.game import Game
from bigtwo.env.rules.variant import Variant

TOP = 3  # plays shown
SEARCHES = (SearchAgent, LookaheadAgent)  # agents whose choice comes with each searched play's mean payoff


@dataclass(frozen=True)
class Position:
    """What the coach reads of one seat's turn, copied out of the game (so it may be ranked in
    another thread while the game goes on): the observation, the legal plays and their card text."""

    seat: int
    obs: np.ndarray  # (1, D)
    ids: np.ndarray  # (1, L)
    counts: np.ndarray  # (1,)
    texts: dict[int, list[str]]  # action id -> cards

    @classmethod
    def of(cls, game: Game) -> Position:
        """The position of the seat to act in ``game``."""
        if game.is_over:
            raise ValueError("the match is over: there is no play to advise")
        ids, counts = game.engine.legal_actions()
        texts = dict(zip(game.legal_actions().tolist(), game.legal_plays(), strict=True))
        seat = game.current_player
        assert seat is not None
        return cls(seat, game.engine.observe()[:1].copy(), ids[:1].copy(), counts[:1].copy(), texts)


class Coach:
    """Ranks a seat's legal plays with the strongest agent for ``variant``; see the module docstring."""

    def __init__(self, variant: Variant, threads: int | None = None) -> None:
        """``threads``: the search's rollout threads (default the engine's; the web leaves a core free)."""
        self.variant = variant
        name, why = default_opponent(variant)
        options: dict[str, Any] = {} if threads is None or name == "heuristic" else {"threads": threads}
        if name == STRONG:
            options["search"] = WEB_SEARCH  # the web table's search (bigtwo.agents.pretrained.WEB_SEARCH)
        self.agent = make_agent(name, variant, seed=0, **options)
        self.agent_name = name
        self.why = why.replace("Opponents: ", "Coach: ")
        self.kind = "payoff" if isinstance(self.agent, SEARCHES) else "preference"

    def rank(
        self, obs: np.ndarray, ids: np.ndarray, counts: np.ndarray, top: int = TOP
    ) -> list[tuple[int, float | None]]:
        """The ``top`` best ``(action id, value)`` of one seat's position: ``obs`` (1, D) and its
        legal ``ids`` (1, L) up to ``counts`` (1,); values are mean payoffs (``None``: not
        searched) or preferences."""
        if isinstance(self.agent, SEARCHES):
            self.agent.last_values = {}
            chosen = int(self.agent.act(obs, ids, counts)[0])
            values = dict(self.agent.last_values)
            if not values:
                return [(chosen, None)]
            rest = sorted((a for a in values if a != chosen), key=lambda a: -values[a])
            return [(a, values[a]) for a in [chosen, *rest][:top]]
        n = int(counts[0])
        scorer = cast(Scorer, self.agent)  # not a search: default_opponent's other agent, the heuristic
        scores = np.asarray(scorer.scores(obs, ids, counts), np.float64)[0, :n]
        order = np.argsort(-scores, kind="stable")[:top]
        return [(int(ids[0, i]), float(scores[i])) for i in order]

    def advise(self, game: Game, top: int = TOP) -> dict[str, Any]:
        """Advice for the seat to act in ``game``: ``{seat, agent, kind, why, plays: [{cards, value}]}``."""
        return self.advise_at(Position.of(game), top)

    def advise_at(self, position: Position, top: int = TOP) -> dict[str, Any]:
        """Advice for ``position`` (``Position.of``)."""
        return self.describe(position, self.rank(position.obs, position.ids, position.counts, top))

    def describe(self, position: Position, ranked: list[tuple[int, float | None]]) -> dict[str, Any]:
        """``rank``'s result as the advice ``advise`` returns, plays written as card text."""
        plays = [
            {"cards": " ".join(position.texts[a]) or "pass", "value": None if v is None else round(v, 4)}
            for a, v in ranked
        ]
        return {
            "seat": position.seat,
            "agent": self.agent_name,
            "kind": self.kind,
            "why": self.why,
            "plays": plays,
        }
