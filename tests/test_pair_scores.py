"""The fused pair layer (``bigtwo.train.pair_scores``): the same scores and gradients as the torch ops it
replaces on the CPU, exact gradients by finite differences, and each distinct play projected once."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from bigtwo.env import Engine, load_variant  # noqa: E402
from bigtwo.env.engine.observation import obs_size  # noqa: E402
from bigtwo.train.networks import ActionScorer, action_features  # noqa: E402
from bigtwo.train.pair_scores import PairScores, distinct_plays  # noqa: E402


def real_decisions(n: int = 96, steps: int = 6):
    """Observations and legal lists of ``n`` taiwan games after a few random steps each."""
    engine = Engine("taiwan", num_matches=n, seed=3)
    rng = np.random.default_rng(0)
    for _ in range(steps):
        ids, counts = engine.legal_actions()
        engine.step(ids[np.arange(n), rng.integers(0, np.maximum(counts, 1))])
    ids, counts = engine.legal_actions()
    advised = rng.integers(0, np.maximum(counts, 1))
    return engine.observe().copy(), ids.astype(np.int64), counts.astype(np.int64), advised.astype(np.int64)


def both_paths(net: ActionScorer, monkeypatch, *inputs):
    """Scores and every parameter's gradient, through the fused kernels and through the torch ops."""
    out = {}
    weights = torch.randn(inputs[1].shape, generator=torch.Generator().manual_seed(1))
    for fused in (True, False):
        monkeypatch.setattr(ActionScorer, "fused_pairs", lambda self, obs, fused=fused: fused)
        net.zero_grad()
        scores, value = net(*inputs)
        (torch.where(torch.isinf(scores), 0.0, scores) * weights).sum().backward()
        grads = {k: torch.zeros_like(p) if p.grad is None else p.grad.clone() for k, p in net.named_parameters()}
        out[fused] = scores.detach(), value.detach(), grads
    return out[True], out[False]


@pytest.mark.parametrize("advice", ["", "heuristic"])
def test_fused_pairs_match_the_torch_ops(monkeypatch, advice):
    variant = load_variant("taiwan")
    obs, ids, counts, advised = real_decisions()
    net = ActionScorer(obs_size(4), action_features(variant), hidden_size=32, pair_size=16, advice=advice)
    inputs = (torch.from_numpy(obs), torch.from_numpy(ids), torch.from_numpy(counts))
    if advice:
        inputs += (torch.from_numpy(advised),)
    assert net.fused_pairs(inputs[0])  # the CPU, float32, one pair layer: the fused path
    (fs, fv, fg), (ts, tv, tg) = both_paths(net, monkeypatch, *inputs)
    assert (
        torch.equal(torch.isinf(fs), torch.isinf(ts))
        and torch.isinf(fs[np.arange(fs.shape[1]) >= counts[:, None]]).all()
    )
    assert torch.allclose(fs, ts, atol=1e-5, rtol=1e-5) and torch.equal(fv, tv)
    for name, grad in tg.items():
        assert torch.allclose(fg[name], grad, atol=1e-4, rtol=1e-4), name
    if advice:  # the advice input's weight column is learned through the fused path too
        assert fg["action_proj.weight"][:, -1].abs().sum() > 0


def test_fused_pairs_gradients_by_finite_differences():
    gen = torch.Generator().manual_seed(0)
    S = torch.randn(5, 4, dtype=torch.float64, generator=gen, requires_grad=True)
    A = torch.randn(3, 4, dtype=torch.float64, generator=gen, requires_grad=True)
    flag, w = (torch.randn(4, dtype=torch.float64, generator=gen, requires_grad=True) for _ in range(2))
    bias = torch.randn(1, dtype=torch.float64, generator=gen, requires_grad=True)
    col = torch.tensor([[0, 1, 2], [2, -1, -1], [1, 0, -1], [0, -1, -1], [2, 1, 0]], dtype=torch.int32)
    counts = torch.tensor([3, 1, 2, 0, 3])
    advised = torch.tensor([1, -1, 0, -1, 2])

    def finite(*args):  # the padding's -inf has no derivative: compare the legal slots
        return torch.nan_to_num(PairScores.apply(*args), neginf=0.0)

    assert torch.autograd.gradcheck(finite, (S, A, flag, w, bias, col, counts, advised))


def test_distinct_plays_projects_each_play_once():
    legal = np.array([[5, 9, 5, 0], [9, 7, 0, 0], [3, 3, 3, 3]], dtype=np.int64)
    counts = np.array([3, 2, 0])
    slot_of = np.full(10, -1, dtype=np.int32)
    plays, col = distinct_plays(legal, counts, slot_of)
    assert plays.tolist() == [5, 9, 7]
    assert col.tolist() == [[0, 1, 0, -1], [1, 2, -1, -1], [-1, -1, -1, -1]]
    assert (slot_of == -1).all()  # the scratch is left clean for the next call
    with pytest.raises(ValueError, match="outside the action table"):
        distinct_plays(np.array([[5, 10]]), np.array([2]), slot_of)
    assert (slot_of == -1).all()


def test_a_play_id_outside_the_table_is_refused_by_the_network():
    variant = load_variant("taiwan")
    net = ActionScorer(obs_size(4), action_features(variant), hidden_size=8, pair_size=8)
    with pytest.raises(ValueError, match="outside the action table"):
        net(torch.zeros(1, obs_size(4)), torch.tensor([[0, len(net.features)]]), torch.tensor([2]))


def test_deeper_scorers_and_other_precisions_keep_the_torch_ops():
    variant = load_variant("taiwan")
    obs = torch.zeros(1, obs_size(4))
    deep = ActionScorer(obs_size(4), action_features(variant), hidden_size=8, pair_size=8, pair_layers=2)
    assert not deep.fused_pairs(obs)
    net = ActionScorer(obs_size(4), action_features(variant), hidden_size=8, pair_size=8)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert not net.fused_pairs(obs)


@pytest.mark.parametrize("advice", ["", "heuristic"])
def test_play_scores_are_the_forward_scores_bit_for_bit(advice):
    """A search's passes (``play_scores``) choose exactly what the network's forward would: the
    same float32 scores, to the bit, before and after the weights change in place."""
    variant = load_variant("taiwan")
    obs, ids, counts, advised = real_decisions()
    net = ActionScorer(obs_size(4), action_features(variant), hidden_size=32, pair_size=16, advice=advice)
    given = advised if advice else None

    def forward() -> np.ndarray:
        with torch.no_grad():
            adv = None if given is None else torch.from_numpy(given)
            return net(torch.from_numpy(obs), torch.from_numpy(ids), torch.from_numpy(counts), adv)[0].numpy()

    before = net.play_scores(obs, ids, counts, given)
    assert before.dtype == np.float32 and np.array_equal(before, forward())
    with torch.no_grad():  # an optimizer's step: the cached view of the weights must follow it
        for p in net.parameters():
            p.add_(0.05 * torch.randn(p.shape, generator=torch.Generator().manual_seed(2)))
    after = net.play_scores(obs, ids, counts, given)
    assert np.array_equal(after, forward()) and not np.array_equal(after, before)


def test_play_scores_of_a_deeper_scorer_are_its_forward_scores():
    variant = load_variant("taiwan")
    obs, ids, counts, _ = real_decisions(n=16)
    deep = ActionScorer(obs_size(4), action_features(variant), hidden_size=8, pair_size=8, pair_layers=2)
    with torch.no_grad():
        expected = deep(torch.from_numpy(obs), torch.from_numpy(ids), torch.from_numpy(counts))[0].numpy()
    assert np.array_equal(deep.play_scores(obs, ids, counts), expected)


@pytest.mark.parametrize("advice", ["", "heuristic"])
def test_play_scores_with_hand_after_are_the_forward_scores(advice):
    """A ``hand_after`` network's playing pass (its first layer once per row and once per distinct
    play, not per pair) scores every legal play as its forward does, up to float32 rounding, picks
    the same plays, and follows the weights when they change in place."""
    variant = load_variant("taiwan")
    obs, ids, counts, advised = real_decisions()
    torch.manual_seed(0)
    net = ActionScorer(obs_size(4), action_features(variant), 32, 2, 16, advice=advice, hand_after=8)
    given = advised if advice else None

    def forward() -> np.ndarray:
        with torch.no_grad():
            adv = None if given is None else torch.from_numpy(given)
            return net(torch.from_numpy(obs), torch.from_numpy(ids), torch.from_numpy(counts), adv)[0].numpy()

    for _ in range(2):
        scores, expected = net.play_scores(obs, ids, counts, given), forward()
        assert scores.dtype == np.float32 and scores.shape == ids.shape
        assert np.array_equal(np.isinf(scores), np.isinf(expected))
        assert np.isinf(scores[np.arange(ids.shape[1]) >= counts[:, None]]).all()
        finite = np.isfinite(expected)
        assert np.allclose(scores[finite], expected[finite], atol=1e-5, rtol=1e-5)
        assert np.array_equal(scores.argmax(axis=1), expected.argmax(axis=1))
        with torch.no_grad():  # an optimizer's step, the hand's network included: the next pass follows it
            for p in net.after.parameters():
                p.add_(0.5 * torch.randn(p.shape, generator=torch.Generator().manual_seed(2)))


@pytest.mark.parametrize("hand_after", [0, 8])
def test_play_scores_follow_a_fused_optimizer_step(hand_after):
    """The trainers' Adam (``fused=True``) changes the weights in place without moving their version
    counters: a rollout that acts through ``play_scores`` with the learner's own network (no
    ``overlap``) must still read the weights of the last step."""
    variant = load_variant("taiwan")
    obs, ids, counts, _ = real_decisions(n=32)
    torch.manual_seed(0)
    net = ActionScorer(obs_size(4), action_features(variant), 32, 2, 16, hand_after=hand_after)
    optimizer = torch.optim.Adam(net.parameters(), lr=0.05, fused=True)
    inputs = (torch.from_numpy(obs), torch.from_numpy(ids), torch.from_numpy(counts))
    before = net.play_scores(obs, ids, counts)
    scores, value = net(*inputs)
    (torch.where(torch.isinf(scores), 0.0, scores).sum() + value.sum()).backward()
    optimizer.step()
    after = net.play_scores(obs, ids, counts)
    with torch.no_grad():
        expected = net(*inputs)[0].numpy()
    finite = np.isfinite(expected)
    assert not np.allclose(after[finite], before[finite])
    assert np.allclose(after[finite], expected[finite], atol=1e-5, rtol=1e-5)
    if not hand_after:  # the same operations in the same order: the same bits
        assert np.array_equal(after, expected)
    net.score.weight.data = net.score.weight.data * 2  # a weight's storage replaced: read anew too
    with torch.no_grad():
        doubled = net(*inputs)[0].numpy()
    assert np.allclose(net.play_scores(obs, ids, counts)[finite], doubled[finite], atol=1e-5, rtol=1e-5)
