"""Fuzz layer for the agents' entry points (issue 12): ``bigtwo play``'s input loop, agent specs for
``make_agent``, and ``Agent.act`` inputs. Each input either works or raises the documented
``ValueError``; a refused input leaves the state as it was."""

from __future__ import annotations

import functools
import io

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bigtwo.agents import Agent, make_agent
from bigtwo.agents.base import RandomAgent
from bigtwo.agents.play import TerminalGame, _Quit
from bigtwo.env import load_variant
from bigtwo.env.engine.engine import Engine
from bigtwo.env.engine.observation import obs_size

TAIWAN = load_variant("taiwan")
FUZZ = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# ---------------------------------------------------------------- bigtwo play's input loop

WORDS = [
    "pass",
    "p",
    "PASS",
    "list",
    "l",
    "hint",
    "hand",
    "help",
    "?",
    "quit",
    "exit",
    "#1",
    "#2",
    "#0",
    "#99",
    "#",
    "#-1",
    "#1.5",
    "1",
    "2",
    "13",
    "14",
    "0",
    "-1",
    "007",
    "3C",
    "3D",
    "10S",
    "TS",
    "2S",
    "AH",
    "3♣",
    "10♠",
    "3X",
    "Q",
    "²",
    "١",
    "½",
    ",",
    " , ",
    "3c,3d",
    "1,2",
    "1 3D",
    "\t",
    "\x00",
    "\u200b",
    "🂡",
]
LINE = st.one_of(
    st.lists(st.sampled_from(WORDS), max_size=6).map(" ".join),
    st.text(st.characters(exclude_characters="\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"), max_size=30),
)


class Lines:
    """``readline`` over the given lines, then end of input."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = list(lines)

    def readline(self) -> str:
        return self.lines.pop(0) + "\n" if self.lines else ""


def _state(tg: TerminalGame) -> dict[str, np.ndarray]:
    return {k: np.array(v, copy=True) for k, v in tg.game.engine.state._asdict().items()}


@functools.cache
def _positions() -> list[TerminalGame]:
    """Human-to-act positions: leading the game, answering, and a later lead."""
    out = []
    for seed, moves in ((4, 0), (5, 3), (6, 9)):
        tg = TerminalGame(
            "taiwan",
            opponents="random",
            seed=seed,
            stdin=Lines([]),
            stdout=io.StringIO(),
            hint=RandomAgent(TAIWAN, seed=0),
            echo=False,
        )
        g = tg.game
        for _ in range(moves):  # random legal moves until the human is to act again
            g.play_action(int(g.legal_actions()[-1]))
        while g.current_player != tg.seat or g.legal_actions().tolist() == [0]:
            g.play_action(int(g.legal_actions()[-1]))
        out.append(tg)
    return out


@FUZZ
@given(which=st.integers(0, 2), lines=st.lists(LINE, max_size=5))
def test_play_input_never_crashes_and_refusals_change_nothing(which, lines):
    tg = _positions()[which]
    tg.inp, tg.out = Lines(lines), io.StringIO()
    before = _state(tg)
    legal = tg.game.legal_actions().tolist()
    try:
        action = tg.ask()
    except _Quit:
        action = None
    after = _state(tg)
    assert all(np.array_equal(before[k], after[k]) for k in before), "asking changed the game"
    assert action is None or action in legal
    assert "Traceback" not in tg.out.getvalue()


# ---------------------------------------------------------------- agent specs

NAMES = ["random", "greedy", "heuristic", "search", "Search", "nope", "", "x.pt", "./none.pt", "/", "."]
KEYS = ["simulations", "seconds", "top_k", "weights", "mode", "device", "speed", "", "1", "a b"]
VALUES = ["1", "0", "-3", "true", "false", "null", "1.5", ".nan", ".inf", "[1, 2]", "{a: 1}", "'x'", "", "1e400"]
OPTION = st.tuples(st.sampled_from(KEYS), st.sampled_from(VALUES)).map(lambda kv: f"{kv[0]}={kv[1]}")
SPEC = st.one_of(
    st.tuples(st.sampled_from(NAMES), st.lists(OPTION, max_size=3)).map(
        lambda t: t[0] + (":" + ",".join(t[1]) if t[1] else "")
    ),
    st.text(max_size=20),
)


@FUZZ
@given(spec=SPEC)
def test_make_agent_builds_or_says_why(spec):
    try:
        agent = make_agent(spec, TAIWAN, seed=0)
    except ValueError as exc:
        assert str(exc)
        return
    assert isinstance(agent, Agent)


# ---------------------------------------------------------------- act inputs


@functools.cache
def _agents() -> list[Agent]:
    return [make_agent(n, TAIWAN, seed=0) for n in ("random", "greedy", "heuristic", "search:simulations=4")]


@st.composite
def act_inputs(draw):
    b = draw(st.integers(0, 4))
    legal_width = draw(st.integers(0, 8))
    width = draw(st.sampled_from([obs_size(4), obs_size(4), obs_size(3), 1]))
    kind = draw(st.sampled_from(["engine", "uniform", "bits", "odd"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if kind == "engine" and b:
        eng = Engine(TAIWAN, num_matches=b, seed=int(rng.integers(1000)))
        obs = eng.observe().copy()
        ids, counts = eng.legal_actions()
        ids, counts = ids.copy(), counts.copy()
        if draw(st.booleans()):
            return obs, ids, counts
    else:
        obs = rng.random((b, width)).astype(np.float32)
        if kind == "bits":
            obs = (obs < 0.1).astype(np.float32)
        if kind == "odd" and b:
            obs.flat[rng.integers(obs.size)] = draw(st.sampled_from([np.nan, np.inf, -1.0, 2.0]))
        ids = np.sort(rng.integers(-2, TAIWAN_SIZE + 2, size=(b, legal_width)), axis=1)
        counts = rng.integers(-1, legal_width + 2, size=b)
    dtype = draw(st.sampled_from(["same", "float ids", "int8 counts", "2-D counts"]))
    if dtype == "float ids":
        ids = ids.astype(np.float64)
    elif dtype == "int8 counts":
        counts = counts.astype(np.int8)
    elif dtype == "2-D counts":
        counts = counts[:, None]
    return obs, ids, counts


TAIWAN_SIZE = make_agent("random", TAIWAN).table.size


@FUZZ
@given(inputs=act_inputs())
def test_act_plays_a_legal_id_or_raises_value_error(inputs):
    obs, ids, counts = inputs
    copies = [np.array(x, copy=True) for x in inputs]
    for agent in _agents():
        try:
            actions = agent.act(obs, ids, counts)
        except ValueError as exc:
            assert str(exc)
            continue
        assert actions.shape == (len(counts),)
        for g, a in enumerate(actions.tolist()):
            n = int(counts[g])
            assert (a == -1) if n == 0 else a in ids[g, :n].tolist()
    for x, before in zip(inputs, copies, strict=True):  # inputs are read, never written
        np.testing.assert_array_equal(x, before)
