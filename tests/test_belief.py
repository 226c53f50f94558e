"""A learned belief over the hidden hands (``bigtwo.train.belief``) and the guesses dealt by it
(``bigtwo.agents.determinize.deal_hands(..., holders=...)``): every guess keeps each seat's count and
deals only unseen cards, follows the belief, and the same seed deals the same; the belief is learned
and measured against the uniform deal, saved, refused for other rules or a damaged file, and the
lookahead searches with it through ``strong:belief=FILE``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")

from bigtwo.agents import make_agent  # noqa: E402
from bigtwo.agents.determinize import BITS, deal_hands, read_position  # noqa: E402
from bigtwo.env import load_variant  # noqa: E402
from bigtwo.env.engine.engine import Engine  # noqa: E402


def _position(moves: int = 9):
    eng = Engine("taiwan", num_matches=1, seed=3)
    for _ in range(moves):
        eng.step(eng.legal_actions()[0][:, 0])
    return read_position(eng.observe()[0], eng.variant, eng.table, eng.table.places())


def _count(x: np.uint64) -> int:
    return bin(int(x)).count("1")


def test_guesses_by_a_belief_keep_the_counts_deal_only_unseen_cards_and_follow_it():
    seen = _position()
    holders = np.full((3, 52), 1 / 3)
    favoured = seen.unseen[:4]
    holders[:, favoured] = [[0.98], [0.01], [0.01]]  # these four: seat 1, nearly surely
    hands = deal_hands(np.random.default_rng(0), seen, 2000, holders)
    unseen = int(np.bitwise_or.reduce(BITS[seen.unseen]))
    for row in hands[:300]:
        assert int(row[0]) == int(seen.hand)
        assert [_count(x) for x in row[1:]] == seen.left[1:].tolist()
        others = 0
        for x in row[1:]:
            assert int(x) & others == 0  # no card dealt twice
            others |= int(x)
        assert others & ~unseen == 0  # only cards the seat has not seen
    card = int(BITS[favoured[0]])
    by_belief = np.mean([(int(r[1]) & card) != 0 for r in hands])
    uniform = np.mean([(int(r[1]) & card) != 0 for r in deal_hands(np.random.default_rng(0), seen, 2000)])
    assert by_belief > 0.75 and abs(uniform - seen.left[1] / seen.left[1:].sum()) < 0.05
    again = deal_hands(np.random.default_rng(0), seen, 2000, holders)
    assert (again == hands).all()


def test_a_belief_is_learned_measured_saved_and_refused_where_it_does_not_belong(tmp_path):
    import torch

    from bigtwo.train.belief import fit_belief, load_belief, save_belief, uniform_holders

    variant = load_variant("taiwan")
    net, report = fit_belief(variant, "greedy", positions=3000, epochs=2, seed=1)
    for key in ("cross_entropy", "accuracy", "uniform_cross_entropy", "uniform_accuracy", "positions", "seconds"):
        assert key in report
    assert report["positions"] == 3000 and abs(report["uniform_cross_entropy"] - np.log(3)) < 0.05
    eng = Engine(variant, num_matches=4, seed=2)
    obs = eng.observe()
    probs = net.holders(obs)
    assert probs.shape == (4, 3, 52) and np.allclose(probs.sum(1), 1.0)
    assert np.allclose(uniform_holders(obs, 4), 1 / 3)  # 13 cards each at the deal
    path = save_belief(net, variant, report, tmp_path / "b.pt")
    loaded = load_belief(path, variant)
    assert np.allclose(loaded.holders(obs), probs) and loaded.report == report
    with pytest.raises(ValueError, match=r"learned on the rules of 'taiwan', not on those of 'hong-kong'"):
        load_belief(path, load_variant("hong-kong"))
    with pytest.raises(ValueError, match="does not exist"):
        load_belief(tmp_path / "none.pt", variant)
    (tmp_path / "bad.pt").write_bytes(b"not a file torch wrote")
    with pytest.raises(ValueError, match="cannot be read .* damaged or not a belief"):
        load_belief(tmp_path / "bad.pt", variant)
    torch.save({"format": "something else"}, tmp_path / "other.pt")
    with pytest.raises(ValueError, match="is not a belief file"):
        load_belief(tmp_path / "other.pt", variant)


def test_the_lookahead_searches_with_a_belief_legally_and_the_same_seed_chooses_the_same(tmp_path):
    from bigtwo.train.belief import fit_belief, save_belief

    variant = load_variant("taiwan")
    net, report = fit_belief(variant, "greedy", positions=2000, epochs=1, seed=0)
    path = save_belief(net, variant, report, tmp_path / "b.pt")
    choices = []
    for _ in range(2):
        agent = make_agent(f"strong:samples=4,threads=1,belief={path}", variant, seed=5)
        assert agent.belief is not None
        eng = Engine(variant, num_matches=6, seed=4)
        made = []
        for _ in range(12):
            ids, n = eng.legal_actions()
            acts = agent.act(eng.observe(), ids, n)
            assert all(a in ids[g, : n[g]] for g, a in enumerate(acts) if not eng.over[g])
            made.append(acts.copy())
            eng.step(acts)
        choices.append(np.array(made))
    assert (choices[0] == choices[1]).all() and agent.stats["searched"] > 0
    assert make_agent(f"lookahead:samples=4,belief={path}", variant, seed=0).belief is not None
    with pytest.raises(ValueError, match=r"simulations=0 is the network alone; it takes no search option \(belief\)"):
        make_agent(f"strong:simulations=0,belief={path}", variant)
    with pytest.raises(ValueError, match="search=rollouts does not take belief"):
        make_agent(f"strong:search=rollouts,belief={path}", variant)
    with pytest.raises(ValueError, match="not on those of 'hong-kong'"):
        make_agent(f"strong:belief={path}", "hong-kong")


def test_the_belief_command_learns_reports_and_writes_the_file(tmp_path):
    out = tmp_path / "belief.pt"
    run = [sys.executable, "-m", "bigtwo.cli", "belief", "--variant", "taiwan", "--agent", "greedy", "--quiet"]
    done = subprocess.run(
        [*run, "--positions", "2000", "--epochs", "1", "--out", str(out)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert "held-out cross-entropy" in done.stdout and "(uniform deal" in done.stdout and Path(out).is_file()
    bad = subprocess.run([*run, "--positions", "5", "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "--positions is 5; allowed: an integer >= 1000" in bad.stderr
