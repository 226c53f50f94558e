"""Expert iteration's parts (bigtwo.train.expert): the search's decisions, what the network learns
from them, and the round's kept decisions. Tiny searches on the shipped taiwan network: seconds."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest
import torch

from bigtwo.agents.lookahead import LookaheadAgent
from bigtwo.agents.pretrained import weights_path
from bigtwo.agents.registry import make_agent_from_spec
from bigtwo.env import load_variant
from bigtwo.env.engine.engine import Engine
from bigtwo.train import checkpoint as ckpt
from bigtwo.train import make_config
from bigtwo.train.expert import (
    SearchDecisions,
    agreement,
    departures,
    expert_round,
    learn,
    load_decisions,
    round_key,
    save_decisions,
    search_decisions,
    trusted_picks,
)
from bigtwo.train.policy_agent import PolicyAgent
from bigtwo.train.rollout import make_scorer

VARIANT = load_variant("taiwan")
FIELDS = dict(
    variant="taiwan",
    advice="heuristic:weights=cards",
    expert="lookahead:samples=3,top_k=3",
    expert_decisions=120,
    num_envs=8,
    minibatch_size=64,
    imitate_epochs=2,
    progress=False,
)


def shipped() -> torch.nn.Module:
    cfg = make_config(FIELDS)
    net = make_scorer(cfg, VARIANT)
    net.load_state_dict(ckpt.load(weights_path(VARIANT))["model"]["state_dict"])
    return net.eval()


def decisions(seed: int = 5, net: torch.nn.Module | None = None, trust: float = 1.0) -> SearchDecisions:
    policy = PolicyAgent(VARIANT, copy.deepcopy(net if net is not None else shipped()), seed=seed)
    teacher = LookaheadAgent(VARIANT, policy, seed=seed, samples=3, top_k=3, trust=trust)
    return search_decisions(teacher, VARIANT, FIELDS["advice"], 0.1, seed=seed, decisions=120, num_envs=8)


@pytest.fixture(scope="module")
def data() -> SearchDecisions:
    return decisions()


def test_search_decisions_record_what_the_search_found_and_repeat_with_the_seed(data):
    assert data.size >= 120 and (data.counts > 1).all()
    assert (data.pick < data.counts).all() and (data.advised < data.counts).all()
    searched = data.slots[:, 0] >= 0
    assert 0.5 < searched.mean() <= 1.0
    rows = np.flatnonzero(searched)
    # the favourite (candidate 0) is the network's best-scored play; the search's play is a candidate
    net = shipped()
    with torch.no_grad():
        scores, _ = net(
            torch.as_tensor(data.obs[rows]),
            torch.as_tensor(data.legal[rows]),
            torch.as_tensor(data.counts[rows]),
            torch.as_tensor(data.advised[rows]),
        )
    assert (scores.argmax(1).numpy() == data.slots[rows, 0]).all()
    assert all(data.pick[r] in data.slots[r] for r in rows)
    assert (data.z[rows, 0] == 0).all() and np.isfinite(data.z[data.slots >= 0]).all()
    # what the network learns at the search's own trust is the search's play
    assert (trusted_picks(data, 1.0) == data.pick).all()
    assert (trusted_picks(data, 100.0)[rows] == data.slots[rows, 0]).all()
    # returns: the seat's scaled payoff (taiwan's winner 0, the others pay), not all equal
    assert np.abs(data.returns).max() <= 0.1 * abs(VARIANT.worst_payoff) + 1e-6
    assert len(np.unique(data.returns)) > 2
    again = decisions()
    for name in ("obs", "legal", "pick", "slots", "z", "returns"):
        assert np.array_equal(getattr(again, name), getattr(data, name), equal_nan=True), name
    assert not np.array_equal(decisions(seed=6).pick[:50], data.pick[:50])


def test_learn_moves_the_network_towards_what_it_is_taught(data):
    cfg = make_config({**FIELDS, "expert_lr": 3e-3, "imitate_epochs": 4})
    net = shipped()
    before = agreement(net, data, torch.device("cpu"))
    scalars = learn(net, data, cfg, seed=1, device=torch.device("cpu"))
    assert set(scalars) == {"expert/loss", "expert/value", "expert/accuracy"}
    assert agreement(net, data, torch.device("cpu")) > before  # the search's plays, at its own trust
    # the search's shares: the cross-entropy towards them falls pass after pass
    losses = []
    for epochs in (1, 4):
        cfg = make_config({**FIELDS, "expert_target": "search", "expert_lr": 3e-3, "imitate_epochs": epochs})
        losses.append(learn(shipped(), data, cfg, seed=1, device=torch.device("cpu"))["expert/loss"])
    assert losses[1] < losses[0]
    # a trust no candidate reaches teaches the favourites: the network keeps its own plays
    net = shipped()
    cfg = make_config({**FIELDS, "expert_trust": 100.0})
    learn(net, data, cfg, seed=1, device=torch.device("cpu"))
    own = copy.copy(data)
    own.pick = trusted_picks(data, 100.0)
    assert agreement(net, own, torch.device("cpu")) > 0.97


def test_any_agent_teaches_its_plays_and_departures_say_what_a_network_took_of_them():
    def greedy_decisions(seed: int) -> SearchDecisions:
        greedy = make_agent_from_spec("greedy", VARIANT, seed=seed)
        return search_decisions(greedy, VARIANT, FIELDS["advice"], 0.1, seed=seed, decisions=120, num_envs=8)

    data = greedy_decisions(3)
    assert data.size >= 120 and (data.slots == -1).all()  # no search: no candidates
    assert (trusted_picks(data, 1.0) == data.pick).all()  # what the network learns: the agent's plays
    greedy = make_agent_from_spec("greedy", VARIANT, seed=3)
    plays = greedy.act(data.obs, data.legal, data.counts)
    assert (data.legal[np.arange(data.size), data.pick] == plays).all()
    assert np.array_equal(greedy_decisions(3).pick, data.pick)  # same seed, same decisions
    net = shipped()
    alone = departures(net, net, data)
    assert 0 < alone["departures"] < 1 and alone["reproduced"] == alone["changed"] == 0
    learned = shipped()
    cfg = make_config({**FIELDS, "expert_lr": 3e-3, "imitate_epochs": 30})
    learn(learned, data, cfg, seed=1, device=torch.device("cpu"))
    took = departures(net, learned, data)
    assert took["departures"] == alone["departures"] and took["reproduced"] > 0.3  # greedy's plays, learned
    assert took["changed"] < 0.05  # ... and its own, where greedy played them
    other = departures(net, learned, greedy_decisions(4))  # decisions it did not learn
    assert other["reproduced"] > 0.1 and other["changed"] < 0.5  # measured: 0.47 and 0.009 (a rule it can learn)


def test_kept_decisions_load_only_under_their_own_key(tmp_path, data):
    net = shipped()
    cfg = make_config(FIELDS)
    key = round_key(net, cfg, VARIANT, seed=5)
    path = tmp_path / "round_001.decisions.npz"
    save_decisions(path, data, key)
    back = load_decisions(path, key)
    assert back is not None and all(
        np.array_equal(getattr(back, f), getattr(data, f), equal_nan=True)
        for f in ("obs", "legal", "slots", "z", "returns")
    )
    other = copy.deepcopy(net)
    with torch.no_grad():
        next(other.parameters()).add_(1e-3)
    assert round_key(other, cfg, VARIANT, seed=5) != key
    assert load_decisions(path, round_key(other, cfg, VARIANT, seed=5)) is None  # another network: play again
    assert load_decisions(path, round_key(net, cfg, VARIANT, seed=6)) is None
    assert load_decisions(tmp_path / "none.npz", key) is None
    path.write_bytes(path.read_bytes()[:100])  # a damaged file: the round plays again
    assert load_decisions(path, key) is None


def test_a_round_that_finds_its_decisions_learns_from_them_without_playing(tmp_path: Path):
    cfg = make_config(FIELDS)
    first, second = shipped(), shipped()
    one = expert_round(first, cfg, VARIANT, 0.1, torch.device("cpu"), 0, tmp_path)
    assert (tmp_path / "round_001.decisions.npz").is_file()
    two = expert_round(second, cfg, VARIANT, 0.1, torch.device("cpu"), 0, tmp_path)
    assert two["expert/play_seconds"] < one["expert/play_seconds"] / 3
    for k in ("expert/decisions", "expert/matched_before", "expert/matched_after", "expert/loss"):
        assert one[k] == two[k], k
    assert all(
        torch.equal(a, b) for a, b in zip(first.state_dict().values(), second.state_dict().values(), strict=True)
    )
    assert 0 < one["expert/overruled"] < 1 and 0 < one["expert/searched"] <= 1


def test_expert_fields_refuse_what_they_do_not_know():
    with pytest.raises(ValueError, match="'expert_target' has bad value 'visits'; allowed: play, search$"):
        make_config({**FIELDS, "expert_target": "visits"})
    with pytest.raises(ValueError, match="'expert_tau' has bad value 0"):
        make_config({**FIELDS, "expert_tau": 0})
    with pytest.raises(ValueError, match="'expert_trust' has bad value -1"):
        make_config({**FIELDS, "expert_trust": -1})


def test_a_round_played_by_two_workers_is_its_two_parts_played_here():
    import dataclasses

    from bigtwo.train.expert import Part, _play_part, part_seed, play_round

    cfg = make_config({**FIELDS, "expert_workers": 2, "expert_decisions": 80})
    net = shipped()

    class Bar:
        n = 0

        def update(self, k: int) -> None:
            self.n += k

    bar = Bar()
    both = play_round(net, cfg, VARIANT, 0.1, seed=9, bar=bar)
    weights = net.state_dict()
    here = [_play_part(Part(weights, cfg, VARIANT, 0.1, part_seed(9, w), 40), lambda n: None) for w in (0, 1)]
    assert part_seed(9, 0) == 9  # one worker plays the round's own seed
    assert bar.n == 80 and both.size == here[0].size + here[1].size >= 80
    for f in dataclasses.fields(SearchDecisions):
        joined = getattr(SearchDecisions.join(here), f.name)
        assert np.array_equal(getattr(both, f.name), joined, equal_nan=True), f.name


def test_the_expert_search_deals_its_guesses_by_the_belief_it_names(tmp_path: Path):
    from bigtwo.env.engine.observation import obs_size
    from bigtwo.train.belief import BeliefNet, save_belief
    from bigtwo.train.expert import expert_belief, play_round

    belief = BeliefNet(obs_size(4), 4)
    with torch.no_grad():  # every unseen card most likely with the next seat: guesses unlike a random deal
        belief.out.bias.view(52, 3)[:, 0] = 5.0
    path = save_belief(belief, VARIANT, {}, tmp_path / "b.pt")
    plain = make_config(FIELDS)
    dealt = make_config({**FIELDS, "expert": f"{FIELDS['expert']},belief={path}"})
    assert expert_belief(plain.expert, VARIANT) is None and expert_belief(dealt.expert, VARIANT) == path
    net = shipped()

    class Bar:
        def update(self, k: int) -> None:
            pass

    guessed = play_round(net, dealt, VARIANT, 0.1, seed=9, bar=Bar())
    assert guessed.size >= 120
    searched = guessed.slots[:, 0] >= 0
    at_random = play_round(net, plain, VARIANT, 0.1, seed=9, bar=Bar())
    # the first step's positions (the same deals, searched from the same seeded state) on other
    # guesses; a round keeps the decisions of the matches that ended, so find them by their position
    openings = Engine(VARIANT, num_matches=FIELDS["num_envs"], seed=9, autoreset=True).observe()

    def opening_rows(data: SearchDecisions) -> dict[bytes, int]:
        rows = {o.tobytes(): i for i, o in enumerate(data.obs[: 4 * len(openings)]) if data.slots[i, 0] >= 0}
        return {o.tobytes(): rows[o.tobytes()] for o in openings if o.tobytes() in rows}

    in_guessed, in_random = opening_rows(guessed), opening_rows(at_random)
    both = [(in_guessed[o], in_random[o]) for o in in_guessed if o in in_random]
    assert both and searched.any()
    assert any(not np.array_equal(guessed.means[i], at_random.means[j], equal_nan=True) for i, j in both)
    assert round_key(net, dealt, VARIANT, 9) != round_key(net, plain, VARIANT, 9)

    hong_kong = load_variant("hong-kong")
    other_rules = save_belief(BeliefNet(obs_size(4), 4), hong_kong, {}, tmp_path / "hk.pt")
    for spec, said in [
        (f"{FIELDS['expert']},belief={other_rules}", "field 'expert' has bad value .*rules"),
        (f"{FIELDS['expert']},belief={tmp_path / 'none.pt'}", "field 'expert' has bad value .*does not exist"),
        (f"{FIELDS['expert']},belief=shipped", "no belief is shipped for taiwan"),
    ]:
        with pytest.raises(ValueError, match=said):
            expert_belief(spec, VARIANT)
