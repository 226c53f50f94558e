"""The exact endgame solver (``bigtwo.agents.endgame``) and the lookahead's use of it: its answer is
the many-player minimax of the engine's own game (checked against a search written plainly with the
engine's public calls, on every rule set that changes the endgame), its budget is kept, and the
lookahead that solves its small copies plays legal plays, the same for the same seed."""

from __future__ import annotations

import numpy as np
import pytest

from bigtwo.agents.endgame import Solver, copy_row, endgames, solve_rows
from bigtwo.env import load_variant
from bigtwo.env.engine import kernels
from bigtwo.env.engine.engine import Engine

# rule sets whose endgames differ: plain, collect's multipliers, liability + two ends the trick +
# pairwise payments, enforced last-card duty + pair chains
RULE_SETS = [
    ("taiwan", {}),
    ("hong-kong", {"scoring": "collect"}),
    ("online-cn", {}),
    ("japan", {"last_card_rule": "enforce", "pair_chain": True}),
]


def _endgames(name: str, rules: dict, cards: int, matches: int = 40, seed: int = 0) -> Engine:
    return endgames(load_variant(name, **rules), cards, matches, seed)


def _plain_maxn(eng: Engine) -> np.ndarray:
    """Max^n of the 1-row engine's position by the engine's public calls: save, step, recurse, load."""
    saved = {k: v.copy() for k, v in eng.state._asdict().items()}
    mover = int(eng.current[0])
    ids, n = eng.legal_actions()
    best = None
    for a in ids[0, : n[0]].tolist():
        eng.load_state(saved)
        result = eng.step([a])
        value = result.payoffs[0].copy() if eng.over[0] else _plain_maxn(eng)
        if best is None or value[mover] > best[mover]:
            best = value
    eng.load_state(saved)
    assert best is not None
    return best


@pytest.mark.parametrize(("name", "rules"), RULE_SETS)
def test_the_solver_is_the_many_player_minimax_of_the_engines_game(name, rules):
    """On endgames of up to 7 cards in all hands, each seat playing its best knowing every hand:
    the solver gives what a plain search with the engine's own step and legal lists gives."""
    eng = _endgames(name, rules, cards=7, matches=80)
    rows = np.flatnonzero(~eng.over)
    assert len(rows) >= 15
    values, solved = solve_rows(eng, rows)
    assert solved.all()
    one = Engine(eng.variant, num_matches=1, seed=0)
    for i, g in enumerate(rows):
        one.load_state({k: v[g : g + 1] for k, v in eng.state._asdict().items()})
        np.testing.assert_allclose(values[i], _plain_maxn(one), err_msg=f"{name} match {g}")
    assert not eng.over[rows].any(), "the solver changed the positions it read"


def test_copy_row_copies_every_field_of_the_engines_state():
    src = _endgames("online-cn", {}, cards=20, matches=6, seed=3)
    dst = Engine(src.variant, num_matches=6, seed=9)
    for g in range(6):
        copy_row(src.state, g, dst.state, 5 - g)
    for field in kernels.State._fields:
        np.testing.assert_array_equal(getattr(dst.state, field)[::-1], getattr(src.state, field), err_msg=field)


def test_the_solver_keeps_its_budget_and_gives_the_same_answer_again():
    eng = _endgames("hong-kong", {"scoring": "collect"}, cards=10, seed=1)
    rows = np.flatnonzero(~eng.over)
    solver = Solver(eng, 10, max_nodes=2500)
    values, solved, tried = solver.solve(eng, rows)
    assert solved.any() and not solved.all(), "2,500 moves should solve some of these positions, not all"
    assert (tried[solved] <= 2500).all() and (tried[~solved] == 2500).all()
    assert (values[~solved] == 0).all()
    again = solver.solve(eng, rows)
    np.testing.assert_array_equal(again[0], values)
    np.testing.assert_array_equal(again[1], solved)
    over = np.flatnonzero(eng.over)
    assert over.size
    with pytest.raises(ValueError, match=f"match {over[0]} is over"):
        solver.solve(eng, over[:1])
    with pytest.raises(ValueError, match="rows must be match indices 0..39"):
        solver.solve(eng, np.array([40]))
    with pytest.raises(ValueError, match="another variant"):
        solver.solve(Engine(load_variant("taiwan", games=1), num_matches=1, seed=0), np.array([0]))
    with pytest.raises(ValueError, match="max_nodes must be a positive"):
        Solver(eng, 10, max_nodes=0)
    with pytest.raises(ValueError, match="one-game variant"):
        Solver(Engine(load_variant("taiwan", games=3), num_matches=1, seed=0), 8)


def strong_top_k() -> int:
    from bigtwo.agents.lookahead import DEFAULT_TOP_K

    return DEFAULT_TOP_K


def test_the_lookahead_solves_its_small_copies_plays_legally_and_the_same_for_the_same_seed(monkeypatch):
    pytest.importorskip("torch")
    from bigtwo.agents import make_agent

    monkeypatch.delenv("BIGTWO_PRETRAINED_DIR", raising=False)
    variant = load_variant("hong-kong", scoring="collect")
    eng = _endgames("hong-kong", {"scoring": "collect"}, cards=12, matches=24, seed=2)
    obs, (ids, n) = eng.observe().copy(), eng.legal_actions()
    live = ~eng.over
    choices = []
    for _ in range(2):
        agent = make_agent("strong:endgame=12,samples=4", variant, seed=5)
        acts = agent.act(obs, ids, n)
        choices.append(acts[live].tolist())
        assert all(a in ids[g, : n[g]] for g, a in enumerate(acts) if live[g])
        assert agent.stats["solved"] > 0 and agent.stats["solver_nodes"] > 0
    assert choices[0] == choices[1]
    sizes = eng.table.sizes
    small = [
        g
        for g in np.flatnonzero(live)
        if n[g] > strong_top_k() and (sizes[ids[g, : n[g]]] < eng.state.counts[g, eng.current[g]]).all()
    ]
    assert small, "some position should have more legal plays than the network's top_k, none ending the game"
    agent = make_agent("strong:endgame=12,samples=4", variant, seed=5)
    agent.act(obs[small[0] : small[0] + 1], ids[small[0] : small[0] + 1], n[small[0] : small[0] + 1])
    assert len(agent.last_values) == n[small[0]], "a position this small searches every legal play"
    plain = make_agent("strong:samples=4", variant, seed=5)
    plain.act(obs, ids, n)
    assert plain.stats["solved"] == 0
    for bad, said in [("endgame=21", "endgame must be an integer 0..20"), ("endgame_nodes=0", "endgame_nodes")]:
        with pytest.raises(ValueError, match=said):
            make_agent(f"strong:{bad}", variant)
