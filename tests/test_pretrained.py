"""The shipped trained agent ``strong``: export of a real run, loading by variant name, refusals,
provenance, ``bigtwo play``'s default opponent, and the clear error without torch."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bigtwo.agents import make_agent
from bigtwo.agents.play import TerminalGame
from bigtwo.agents.pretrained import ENV_VAR, has_weights, shipped_variants
from bigtwo.env import __version__, load_variant
from bigtwo.env.engine.engine import Engine

ROOT = Path(__file__).resolve().parents[1]
BLOCK_TORCH = "import sys; sys.modules['torch'] = None; sys.modules['tensorboard'] = None\n"  # as if not installed


def test_export_keeps_the_policy_and_its_provenance(trained_run, tmp_path):
    torch = pytest.importorskip("torch")
    from bigtwo.train import checkpoint as ckpt
    from bigtwo.train.export import export_policy

    source = ckpt.latest_checkpoint(trained_run)
    written = export_policy(trained_run, out_dir=tmp_path)
    assert written == tmp_path / "taiwan.pt"
    full, shipped = ckpt.load(source), ckpt.load(written)
    assert "resume" not in shipped and "resume" in full
    assert written.stat().st_size < min(source.stat().st_size, 2_000_000)
    assert shipped["variant"] == full["variant"] and shipped["config"] == full["config"]
    weights = full["model"]["state_dict"]
    assert all(torch.equal(weights[k], v) for k, v in shipped["model"]["state_dict"].items())

    made = shipped["provenance"]
    assert made["algo"] == "ppo" and made["seed"] == full["config"]["seed"]
    assert made["steps"] == full["global_step"] == 256 and made["train_seconds"] > 0
    (session,) = made["sessions"]
    assert session["version"] == __version__ and session["command"] and session["torch"] == str(torch.__version__)
    if (ROOT / ".git").exists():
        assert re.fullmatch(r"[0-9a-f]{40}", session["git_commit"]) and isinstance(session["git_dirty"], bool)
    assert made["exported"]["source"] == str(source) and made["exported"]["version"] == __version__


def test_a_resumed_run_records_every_session(tmp_path):
    pytest.importorskip("torch")
    from conftest import tiny_training_config

    from bigtwo.train import checkpoint as ckpt
    from bigtwo.train import run_training

    first = run_training(tiny_training_config(tmp_path))
    before = ckpt.load(first.checkpoint)["provenance"]
    again = run_training(tiny_training_config(tmp_path, total_timesteps=512))
    after = ckpt.load(again.checkpoint)["provenance"]
    assert len(before["sessions"]) == 1 and len(after["sessions"]) == 2
    assert after["steps"] == 512 and after["train_seconds"] > before["train_seconds"]


def test_export_refuses_a_variant_with_other_rules(trained_run, tmp_path):
    from bigtwo.train.export import export_policy, main

    with pytest.raises(ValueError, match=r"trained on other rules than 'japan' \(.*opening_card"):
        export_policy(trained_run, "japan", out_dir=tmp_path)
    with pytest.raises(ValueError, match="does not exist"):
        export_policy(tmp_path / "nothing", out_dir=tmp_path)
    assert main([str(tmp_path / "nothing")]) == 2
    assert not list(tmp_path.glob("*.pt"))


def test_export_command(trained_run, tmp_path, capsys):
    from bigtwo.train.export import main

    assert main([str(trained_run), "--variant", "taiwan", "--out-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"wrote {tmp_path / 'taiwan.pt'}" in out and "ppo, seed 1, 256 env steps" in out and "trained by:" in out


def test_strong_loads_by_variant_name_and_plays_a_tournament(strong_dir):
    from bigtwo.arena.tournament import run_tournament

    assert shipped_variants() == ["taiwan"] and has_weights("taiwan") and not has_weights("japan")
    from bigtwo.agents.lookahead import DEFAULT_PLIES, DEFAULT_SAMPLES, DEFAULT_TOP_K, DEFAULT_TRUST, LookaheadAgent
    from bigtwo.agents.pretrained import SEARCH_DEFAULTS
    from bigtwo.agents.search import SearchAgent

    agent = make_agent("strong", "taiwan", seed=0)
    assert agent.name == "strong" and agent.provenance["steps"] == 256
    # the lookahead on the network, at its measured defaults; search=rollouts: the heuristic's rollouts
    assert isinstance(agent, LookaheadAgent) and agent.network.provenance["steps"] == 256
    got = (agent.samples, agent.top_k, agent.plies, agent.trust)
    assert got == (DEFAULT_SAMPLES, DEFAULT_TOP_K, DEFAULT_PLIES, DEFAULT_TRUST) == (16, 4, -1, 1.0)
    rollouts = make_agent("strong:search=rollouts", "taiwan", seed=0)
    assert isinstance(rollouts, SearchAgent) and rollouts.prior.provenance["steps"] == 256
    assert {k: getattr(rollouts, k) for k in SEARCH_DEFAULTS} == SEARCH_DEFAULTS
    network = make_agent("strong:simulations=0", "taiwan", seed=0)
    assert network.name == "strong-network" and not isinstance(network, SearchAgent | LookaheadAgent)
    assert make_agent("strong:mode=sample,device=cpu,simulations=0", "taiwan", seed=0).mode == "sample"
    assert make_agent("strong:mode=sample", "taiwan", seed=0).network.mode == "sample"
    timed = make_agent("strong:seconds=0.01", "taiwan", seed=0)  # a rollouts option: the rollouts search
    assert isinstance(timed, SearchAgent) and timed.seconds == 0.01 and timed.simulations is None
    for spec, said in [
        ("strong:search=lookahead,simulations=16", "search=lookahead does not take simulations"),
        ("strong:search=rollouts,samples=4", "search=rollouts does not take samples"),
        ("strong:samples=4,weights=cards", "samples belong to search=lookahead and weights to search=rollouts"),
    ]:
        with pytest.raises(ValueError, match=said):
            make_agent(spec, "taiwan")
    with pytest.raises(
        ValueError, match=r"strong:simulations=0 is the network alone; it takes no search option \(top_k\)"
    ):
        make_agent("strong:simulations=0,top_k=3", "taiwan")
    result = run_tournament("taiwan", ["strong", "random", "greedy", "heuristic"], deals=3, workers=1, progress=False)
    (strong,) = [s for s in result.stats if s.name == "strong"]
    assert strong.games == 12 and strong.moves > 0  # an illegal play would have raised, naming the agent


def test_strong_in_the_tournament_command(strong_dir, capsys):
    from bigtwo.cli import main

    assert main(["tournament", "--agents", "strong,random,random,random", "--deals", "2", "--quiet"]) == 0
    assert "strong" in capsys.readouterr().out


def test_strong_without_weights_names_the_variants_that_have_them(strong_dir, no_strong, monkeypatch):
    with pytest.raises(ValueError, match=r"no trained weights for variant 'taiwan'.*none are shipped there yet"):
        make_agent("strong", "taiwan")
    monkeypatch.setenv(ENV_VAR, str(strong_dir))
    with pytest.raises(ValueError, match=r"no trained weights for variant 'japan'.*variants with weights: taiwan"):
        make_agent("strong", "japan")
    monkeypatch.setenv(ENV_VAR, str(strong_dir / "missing"))
    with pytest.raises(ValueError, match=f"{ENV_VAR}=.* is not a folder"):
        make_agent("strong", "taiwan")


def test_strong_refuses_rules_other_than_its_training_ones(strong_dir):
    with pytest.raises(ValueError, match=r"players: 4 \(trained\) vs 3 \(here\).*only the rules it was trained on"):
        make_agent("strong", load_variant("taiwan", players=3))
    with pytest.raises(ValueError, match=r"opening_every_game: False \(trained\) vs True \(here\)"):
        make_agent("strong", load_variant("taiwan", opening_every_game=True))
    assert make_agent("strong", load_variant("taiwan", seating="clockwise")).name == "strong"  # seat labels only
    # how a game is paid is not a rule of play: the same plays, another scoring
    assert make_agent("strong", load_variant("taiwan", scoring="collect", unit=2)).name == "strong"
    with pytest.raises(
        ValueError,
        match="does not take option.*takes: mode, device, search, simulations, seconds, top_k, threads, schedule, scale, "
        "infer, weights, opponent_weights, samples, plies, belief, endgame, endgame_nodes, trust, network",
    ):
        make_agent("strong:depth=3", "taiwan")


def test_strong_plays_the_weights_tuned_for_the_scoring(strong_dir):
    from bigtwo.agents.heuristic import DEFAULT_WEIGHTS, WEIGHT_SETS

    collect = make_agent("strong:search=rollouts", load_variant("taiwan", scoring="collect"), seed=0)
    assert np.array_equal(collect.heuristic.ctx.weights, WEIGHT_SETS["collect"])
    assert not np.array_equal(WEIGHT_SETS["collect"], DEFAULT_WEIGHTS)
    # its rollouts model the opponents half as the default heuristic, half as the tuned one
    assert np.array_equal(collect.opponent_weights, np.stack([DEFAULT_WEIGHTS, WEIGHT_SETS["collect"]]))
    chosen = make_agent("strong:weights=default", load_variant("taiwan", scoring="collect"), seed=0)
    assert np.array_equal(chosen.heuristic.ctx.weights, DEFAULT_WEIGHTS)
    assert np.array_equal(chosen.opponent_weights, DEFAULT_WEIGHTS[None])  # given weights: everyone's
    modelled = make_agent("strong:opponent_weights=collect", load_variant("taiwan", scoring="collect"), seed=0)
    assert np.array_equal(modelled.heuristic.ctx.weights, WEIGHT_SETS["collect"])
    assert np.array_equal(modelled.opponent_weights, WEIGHT_SETS["collect"][None])
    # under cards, its own seat plays the cards set and the opponents are modelled as the default heuristic
    cards = make_agent("strong:search=rollouts", "taiwan", seed=0)
    assert np.array_equal(cards.heuristic.ctx.weights, WEIGHT_SETS["cards"])
    assert np.array_equal(cards.opponent_weights, DEFAULT_WEIGHTS[None])
    other = make_agent("strong:search=rollouts", load_variant("taiwan", scoring="tiered"), seed=0)  # no set measured
    assert np.array_equal(other.heuristic.ctx.weights, DEFAULT_WEIGHTS)
    assert np.array_equal(other.opponent_weights, DEFAULT_WEIGHTS[None])


def test_strong_with_search_adds_the_networks_best_plays(strong_dir):
    from bigtwo.agents.search import PRIOR_TOP, SearchAgent

    agent = make_agent("strong:simulations=16,top_k=2", "taiwan", seed=0)
    assert isinstance(agent, SearchAgent) and agent.name == "strong" and agent.prior.name == "strong"
    eng = Engine("taiwan", num_matches=6, seed=4)
    rng = np.random.default_rng(4)
    for _ in range(3):  # a few plies in, so that answers (and passes) are among the moves
        ids, n = eng.legal_actions()
        eng.step(ids[np.arange(6), (rng.random(6) * n).astype(np.int64)])
    ids, n = eng.legal_actions()
    obs = eng.observe()
    ranks = agent.prior.scores(obs, ids, n)
    assert np.isneginf(ranks[np.arange(ids.shape[1])[None, :] >= n[:, None]]).all()
    heuristic = agent.heuristic.scores(obs, ids, n)
    acts = agent.act(obs, ids, n)
    for g in range(6):
        row = ids[g, : n[g]].tolist()
        # searched: the heuristic's two best, the network's PRIOR_TOP best, and pass when legal
        allowed = {row[i] for i in np.argsort(-heuristic[g, : n[g]], kind="stable")[:2]}
        allowed |= {row[i] for i in np.argsort(-ranks[g, : n[g]], kind="stable")[:PRIOR_TOP]}
        allowed |= {0} & set(row)
        assert acts[g] in allowed
    assert agent.stats["searched"] > 0


def test_strong_network_option_searches_on_another_network(strong_dir, trained_run, no_strong):
    from bigtwo.agents.search import SearchAgent
    from bigtwo.train.export import find_checkpoint
    from bigtwo.web.forms import RoomError, check_agent

    checkpoint = find_checkpoint(trained_run)  # a run's checkpoint, not an exported file; none is shipped here
    agent = make_agent(f"strong:network={checkpoint},simulations=8", "taiwan", seed=0)
    assert isinstance(agent, SearchAgent) and agent.name == "strong" and agent.prior.provenance["steps"] == 256
    alone = make_agent(f"strong:network={checkpoint},simulations=0", "taiwan", seed=0)
    assert alone.name == "strong-network" and not isinstance(alone, SearchAgent)
    with pytest.raises(ValueError, match=r"strong:network='nowhere.pt' is not a file; give a run's checkpoint"):
        make_agent("strong:network=nowhere.pt", "taiwan")
    with pytest.raises(RoomError, match="option 'network' is not allowed on this server"):
        check_agent(f"strong:network={checkpoint}")  # a web seat never names a server path


def test_shipped_strong_trusts_its_network(monkeypatch):
    pytest.importorskip("torch")
    from bigtwo.agents.pretrained import SHIPPED_TRUST

    monkeypatch.delenv(ENV_VAR, raising=False)  # the package's own files
    variant = load_variant("hong-kong", scoring="collect")
    rollouts = "strong:search=rollouts"
    assert make_agent(rollouts, variant, seed=0).trust == SHIPPED_TRUST["hong-kong"] == 4.0
    assert make_agent(f"{rollouts},trust=0.5", variant, seed=0).trust == 0.5
    assert make_agent("strong:schedule=halving", variant, seed=0).trust is None  # halving cannot weigh it
    shipped = ROOT / "agents" / "pretrained" / "hong-kong.pt"
    assert make_agent(f"{rollouts},network={shipped}", variant, seed=0).trust is None  # measured for the shipped file
    assert make_agent(rollouts, "taiwan", seed=0).trust == SHIPPED_TRUST["taiwan"] == 4.0
    assert make_agent("strong", "taiwan", seed=0).trust == 1.0 == make_agent("strong:trust=1", variant, seed=0).trust


def test_shipped_strong_searches_hong_kong_with_its_measured_budget(monkeypatch):
    """hong-kong's ``strong`` deals 48 guesses a move on its shipped network (measured stronger within
    the time bar); a given ``samples``, another network or another variant keep the lookahead's own."""
    pytest.importorskip("torch")
    from bigtwo.agents.lookahead import DEFAULT_SAMPLES
    from bigtwo.agents.pretrained import SHIPPED_SAMPLES

    monkeypatch.delenv(ENV_VAR, raising=False)  # the package's own files
    variant = load_variant("hong-kong", scoring="collect")
    assert make_agent("strong", variant, seed=0).samples == SHIPPED_SAMPLES["hong-kong"] == 48
    assert make_agent("strong:samples=16", variant, seed=0).samples == 16
    shipped = ROOT / "agents" / "pretrained" / "hong-kong.pt"
    assert make_agent(f"strong:network={shipped}", variant, seed=0).samples == DEFAULT_SAMPLES == 16
    assert make_agent("strong", "taiwan", seed=0).samples == DEFAULT_SAMPLES
    assert make_agent("lookahead", variant, seed=0).samples == DEFAULT_SAMPLES  # the search's own default


def test_every_named_variant_ships_a_network_that_plays_its_rules(monkeypatch):
    """``strong`` exists for each of the five named variants: its file loads for the variant's rules
    (hong-kong under ``collect``, the scoring it trained on), plays only legal plays, is the
    advised recipe's (``configs/train/advised.yaml``) and says what made it (``bigtwo ladder --list``)."""
    pytest.importorskip("torch")
    from conftest import NAMED_VARIANTS

    from bigtwo.arena.ladder import describe_shipped

    monkeypatch.delenv(ENV_VAR, raising=False)  # the package's own files
    assert shipped_variants() == list(NAMED_VARIANTS)
    for name in NAMED_VARIANTS:
        variant = load_variant(name, **({"scoring": "collect"} if name == "hong-kong" else {}))
        agent = make_agent("strong:simulations=0", variant, seed=0)
        record = agent.provenance
        assert record is not None and record["steps"] >= 20_000_000, name
        assert "--config advised" in record["sessions"][0]["command"], name
        eng = Engine(variant, num_matches=8, seed=1)
        for _ in range(3):
            ids, n = eng.legal_actions()
            acts = agent.act(eng.observe(), ids, n)
            assert all(a in ids[g, : n[g]] for g, a in enumerate(acts)), name
            eng.step(acts)
    listing = describe_shipped()
    assert all(f"\n{name} (0." in listing for name in NAMED_VARIANTS)
    assert listing.count("trained by:") == 7  # the five, and the from-scratch hong-kong and taiwan
    assert "trained from scratch" in listing and "for a variant file named 'japan-chains'" in listing
    # the shipped belief, with what made it and how it measured against the uniform deal
    from bigtwo.agents.pretrained import pretrained_dir
    from bigtwo.train.belief import describe_beliefs

    beliefs = "\n".join(describe_beliefs(pretrained_dir() / "belief"))
    assert beliefs.startswith("beliefs (the lookahead deals its guesses by them)") and "\nhong-kong (1." in beliefs
    assert "300,000 positions of strong:simulations=0's games" in beliefs and "(uniform deal 1.064)" in beliefs


def test_the_from_scratch_networks_ship_and_play_as_strong_network_scratch(monkeypatch):
    """The networks trained from scratch (no advice, no imitation) ship beside the advised ones, each
    made by the scratch recipe on its variant's rules, and play as ``strong:network=scratch``."""
    pytest.importorskip("torch")
    monkeypatch.delenv(ENV_VAR, raising=False)
    from bigtwo.agents.pretrained import pretrained_dir

    found = sorted(p.stem for p in (pretrained_dir() / "scratch").glob("*.pt"))
    assert found == ["hong-kong", "japan-chains", "taiwan"]
    variants = {
        "hong-kong": load_variant("hong-kong", scoring="collect"),
        "japan-chains": load_variant(str(ROOT / "examples" / "japan-chains.yaml")),
        "taiwan": load_variant("taiwan"),
    }
    for name, variant in variants.items():
        agent = make_agent("strong:network=scratch,simulations=0", variant, seed=0)
        record = agent.provenance
        assert "--config scratch" in record["sessions"][0]["command"] and record["steps"] >= 40_000_000, name
        assert agent.net.advice_size == 0, "from scratch: no advice"
        if name == "taiwan":  # the recipe's 45-minute run on 2 cores, not a longer one
            assert "--config scratch-dmc" in record["sessions"][0]["command"] and len(record["sessions"]) == 1
            assert record["train_seconds"] <= 45 * 60
        eng = Engine(variant, num_matches=4, seed=2)
        ids, n = eng.legal_actions()
        assert all(a in ids[g, : n[g]] for g, a in enumerate(agent.act(eng.observe(), ids, n))), name


def test_strong_trust_keeps_the_networks_play_unless_clearly_beaten(strong_dir):
    from bigtwo.agents.heuristic import BIG
    from bigtwo.agents.search import SearchAgent

    eng = Engine("taiwan", num_matches=8, seed=5)
    rng = np.random.default_rng(5)
    for _ in range(2):
        ids, n = eng.legal_actions()
        eng.step(ids[np.arange(8), (rng.random(8) * n).astype(np.int64)])
    ids, n = eng.legal_actions()
    obs = eng.observe()
    stubborn = make_agent("strong:simulations=24,trust=1e9", "taiwan", seed=0)
    assert stubborn.trust == 1e9
    favourite = stubborn.prior.scores(obs, ids, n)
    heuristic = stubborn.heuristic.scores(obs, ids, n)
    acts = stubborn.act(obs, ids, n)
    for g in range(8):  # the network's best play, unless the heuristic's best ends the game
        row = ids[g, : n[g]]
        ends = heuristic[g, : n[g]].max() >= BIG / 2
        expected = row[np.argmax(heuristic[g, : n[g]])] if ends else row[np.argmax(favourite[g, : n[g]])]
        assert acts[g] == expected
    # with trust=0 a candidate that beats the network's play on the samples at all replaces it: the best mean wins
    eager = make_agent("strong:simulations=24,trust=0", "taiwan", seed=0)
    for g in range(8):
        before = eager.stats["searched"]
        (act,) = eager.act(obs[g : g + 1], ids[g : g + 1], n[g : g + 1])
        if eager.stats["searched"] > before:
            assert eager.last_values[int(act)] == pytest.approx(max(eager.last_values.values()), abs=1e-9)
    assert eager.stats["searched"] > 0
    for bad, message in [
        (-1, "trust must be a finite number >= 0"),
        (float("nan"), "trust must be a finite number >= 0"),
        (True, "trust must be a finite number >= 0"),
    ]:
        with pytest.raises(ValueError, match=message):
            SearchAgent(eng.variant, prior=stubborn.prior, trust=bad)
    with pytest.raises(ValueError, match="trust weighs the prior's best play; it needs a prior"):
        SearchAgent(eng.variant, trust=1.0)
    with pytest.raises(ValueError, match="trust compares every candidate on the same samples; use schedule=even"):
        SearchAgent(eng.variant, prior=stubborn.prior, trust=1.0, schedule="halving", simulations=16)


def test_strong_scores_on_one_torch_thread_and_restores_the_setting(strong_dir):
    import torch

    assert make_agent("strong", "taiwan", seed=0).network.scores_threads == 1
    agent = make_agent("strong:search=rollouts", "taiwan", seed=0)
    assert agent.prior.scores_threads == 1
    before = torch.get_num_threads()
    seen = []
    net = agent.prior.net
    original = net.score_arrays

    def spy(*args, **kwargs):
        seen.append(torch.get_num_threads())
        return original(*args, **kwargs)

    net.score_arrays = spy
    eng = Engine("taiwan", num_matches=1, seed=2)
    agent.prior.scores(eng.observe(), *eng.legal_actions())
    assert seen == [1] and torch.get_num_threads() == before


def test_strong_without_torch_names_the_extra(tmp_path):
    (tmp_path / "taiwan.pt").write_bytes(b"\0")
    code = BLOCK_TORCH + (
        "from bigtwo.agents import make_agent\n"
        "print(type(make_agent('heuristic', 'taiwan')).__name__)\n"
        "try:\n"
        "    make_agent('strong', 'taiwan')\n"
        "except ValueError as exc:\n"
        "    print(exc)\n"
    )
    env = {"PATH": "/usr/bin:/bin", ENV_VAR: str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
    assert out.startswith("HeuristicAgent\n")
    assert "'strong' agent plays trained network weights, which need torch" in out
    assert "pip install 'bigtwo[train]'" in out


def _start_up(**kwargs) -> str:
    out = io.StringIO()
    TerminalGame(seed=1, stdin=io.StringIO("quit\n"), stdout=out, **kwargs).run()
    return out.getvalue()


def test_play_defaults_to_strong_where_shipped(strong_dir, no_strong, monkeypatch):
    text = _start_up(variant="taiwan")
    assert "Opponents: heuristic (no trained agent is shipped for taiwan)." in text and "(heuristic)" in text
    monkeypatch.setenv(ENV_VAR, str(strong_dir))
    text = _start_up(variant="taiwan")
    assert "Opponents: strong, the trained agent shipped for taiwan." in text
    assert "seat 1 (strong)" in text and "heuristic" not in text.split("Type 'help'")[0]
    text = _start_up(variant="taiwan", players=3)
    assert "Opponents: heuristic (strong (" in text and "players: 4 (trained) vs 3 (here)" in text
    assert "Opponents:" not in _start_up(variant="taiwan", opponents="random")


def test_provenance_names_the_command_as_it_was_typed(tmp_path):
    """``bigtwo train ...`` is recorded as ``bigtwo train ...``; ``python -m bigtwo.cli train ...``
    as itself, not as the ``__main__.py`` file it runs."""
    script = "from bigtwo.train.provenance import command_line; print(command_line())"
    bare = subprocess.run([sys.executable, "-c", script, "x"], capture_output=True, text=True, check=True)
    assert bare.stdout.strip() == "-c x"
    probe = tmp_path / "probe"
    (probe / "pkg").mkdir(parents=True)
    (probe / "pkg" / "__init__.py").write_text("")
    (probe / "pkg" / "__main__.py").write_text(script + "\n")
    as_module = subprocess.run(
        [sys.executable, "-m", "pkg", "train", "--config", "scratch"],
        capture_output=True,
        text=True,
        check=True,
        cwd=probe,
    )
    assert as_module.stdout.strip() == "python -m pkg train --config scratch"
