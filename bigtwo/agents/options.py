"""The options several agents' declarations share, and what a web seat may ask for at most.

``bigtwo.agents.registry`` declares each agent once (``AgentSpec``); the options here are the ones
more than one declaration uses, so that ``strong`` (``bigtwo.agents.strong``) builds its own from
the same ``Option`` records the ``search`` and checkpoint entries declare:

| name | options | declared by |
|---|---|---|
| ``WEIGHTS``, ``OPPONENT_WEIGHTS`` | the heuristic's weights (``bigtwo.agents.heuristic.weight_set``, ``weight_mix``) | ``heuristic``, ``search``, ``strong`` |
| ``SEARCH_OPTIONS`` | the rollouts search's (``bigtwo.agents.search.SearchAgent``) | ``search``, ``strong`` (``search=rollouts``) |
| ``NETWORK_OPTIONS`` | the ``.pt`` loader's (``bigtwo.train.policy_agent.load_policy_agent``), never on the web | ``strong``, ``lookahead``, a checkpoint |

The web's caps (``WEB_SIMULATIONS``, ``WEB_SECONDS``, ``WEB_TOP_K``, ``WEB_SAMPLES``,
``WEB_THREADS``) bound one move of a web seat's agent (``bigtwo.web.forms``); ``web_rollouts`` is the
rule ``search`` and ``strong`` add to them.

>>> [o.name for o in SEARCH_OPTIONS][:3]
['simulations', 'seconds', 'top_k']
>>> web_rollouts({"scale": "cards", "simulations": 10_000})
Traceback (most recent call last):
...
ValueError: simulations must be an integer 1..500 on this server (rollouts a move with scale=cards), got 10000
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bigtwo.agents.heuristic import weight_mix, weight_set
from bigtwo.agents.search import DEFAULT_TOP_K, INFERENCES, MAX_SCALE, SCALES, SCHEDULES
from bigtwo.agents.spec import Option
from bigtwo.env.engine.engine import THREADS

# What a web seat's agent may ask for at most (bigtwo.web.forms): the budget of one move.
WEB_SIMULATIONS = 2000  # rollouts a move (scale=cards: this budget at its largest, MAX_SCALE times the given one)
WEB_SECONDS = 1.0  # seconds of search a move
WEB_TOP_K = 10  # candidate plays
WEB_SAMPLES = 48  # lookahead: guesses of the hidden hands a move
WEB_THREADS = max(1, THREADS - 1)  # rollout threads: a core is left to the web server's event loop

WEIGHTS = Option(
    "weights",
    "value",
    None,
    "the heuristic's weights: a set's name, a mapping of weight names to values, or the 23 numbers",
    read=weight_set,
)
OPPONENT_WEIGHTS = Option(
    "opponent_weights",
    "value",
    None,
    "the other seats' weights in the rollouts (default: weights); sets joined by + model the opponents in turn",
    read=weight_mix,
)
SEARCH_OPTIONS = (
    Option("simulations", "count", None, "rollouts per move; default 1000 unless seconds", web_high=WEB_SIMULATIONS),
    Option("seconds", "number", None, "seconds per move", low=0, above=True, web_high=WEB_SECONDS),
    Option("top_k", "count", DEFAULT_TOP_K, "candidate plays", web_high=WEB_TOP_K),
    Option("threads", "count", None, "rollout threads; default one per core", web_high=WEB_THREADS),
    Option("schedule", "choice", "even", "how simulations are shared", choices=SCHEDULES),
    Option("scale", "choice", "none", "whether later moves get more rollouts", choices=SCALES),
    Option("infer", "choice", "none", "what weighs the sampled hands", choices=INFERENCES),
    WEIGHTS,
    OPPONENT_WEIGHTS,
)
# a network's: the ``.pt`` loader's options (bigtwo.train.policy_agent.load_policy_agent), never on the web
NETWORK_OPTIONS = (
    Option(
        "mode",
        "choice",
        "greedy",
        "the network's best-scored play, or a sample of its policy",
        choices=("greedy", "sample"),
        web=False,
    ),
    Option("device", "device", None, "the torch device; default CUDA when available", web=False),
)


def web_rollouts(options: Mapping[str, Any]) -> None:
    """On the web, ``scale=cards`` (up to ``MAX_SCALE`` times ``simulations`` a move) stays within ``WEB_SIMULATIONS``."""
    simulations = options.get("simulations")
    most = int(WEB_SIMULATIONS // MAX_SCALE)
    if options.get("scale") == "cards" and simulations is not None and simulations > most:
        raise ValueError(
            f"simulations must be an integer 1..{most} on this server (rollouts a move with scale=cards), "
            f"got {simulations!r}"
        )
