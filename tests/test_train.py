"""Trainers: configs, storage, networks, smoke runs, resume, determinism, and one run that must learn.

Every run here writes under ``tmp_path`` and uses a tiny config (a few hundred to a few
thousand environment steps) except ``test_ppo_learns_to_beat_random``, the learning test: a
short PPO run on ``taiwan`` whose greedy policy must beat three random players in a duplicate
tournament with non-overlapping 95% intervals.
"""

from __future__ import annotations

import copy
import math
import re
import shutil
import signal
import subprocess
import sys
import time
import typing
from pathlib import Path

import numpy as np
import pytest
import yaml

torch = pytest.importorskip("torch")

from conftest import tiny_training_config  # noqa: E402

from bigtwo.env import load_variant  # noqa: E402
from bigtwo.env.engine.observation import obs_size  # noqa: E402
from bigtwo.train import checkpoint as ckpt  # noqa: E402
from bigtwo.train import load_config, make_config, run_training  # noqa: E402
from bigtwo.train.config import FIELDS, config_dir, config_names, field_docs  # noqa: E402
from bigtwo.train.decisions import DecisionStore, gae, mc_returns  # noqa: E402
from bigtwo.train.networks import ActionScorer, action_features, legal_mask, masked_log_softmax  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def tiny(tmp_path: Path, **fields) -> object:
    """A config that trains in about a second."""
    base = dict(
        total_timesteps=1024,
        num_envs=16,
        hidden_size=32,
        pair_size=16,
        update_epochs=2,
        checkpoint_every=512,
        snapshot_every=256,
    )
    return tiny_training_config(tmp_path / "runs", **{**base, **fields})


def weights(path: Path) -> dict[str, torch.Tensor]:
    return ckpt.load(path)["model"]["state_dict"]


def same_weights(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def plays_legal_moves(checkpoint: Path) -> tuple:
    """The checkpoint as an agent, after it picked a legal play in each of 8 taiwan deals' first
    positions; with that engine and its legal lists."""
    from bigtwo import agents
    from bigtwo.env.engine.engine import Engine

    agent = agents.make_agent(str(checkpoint), "taiwan", seed=0)
    eng = Engine("taiwan", num_matches=8, seed=3)
    ids, counts = eng.legal_actions()
    acts = agent.act(eng.observe(), ids, counts)
    assert all(a in ids[g, : counts[g]] for g, a in enumerate(acts))
    return agent, eng, ids, counts


# ---------------------------------------------------------------- configs


def test_shipped_configs_hold_only_what_differs_from_the_defaults():
    """Each field is declared once, in ``TrainConfig``, with its default, range and description; a
    shipped YAML sets only fields whose values differ from those defaults (``default.yaml`` none)."""
    from bigtwo.train.config import LIMITS, TrainConfig, allowed_values, defaults

    assert {"advised", "default", "ppo", "dmc", "strong"} <= set(config_names())
    docs = field_docs()
    assert set(docs) == set(FIELDS) and all(docs[name].endswith((".", "...")) for name in FIELDS)
    assert all(allowed_values(name) for name in FIELDS), "every field says what it allows"
    assert {name for name, hint in typing.get_type_hints(TrainConfig).items() if hint in (int, float)} == set(LIMITS)
    base = defaults()
    for name in config_names():
        data = yaml.safe_load((config_dir() / f"{name}.yaml").read_text()) or {}
        assert set(data) <= set(FIELDS), f"{name}.yaml: unknown fields {set(data) - set(FIELDS)}"
        whole = make_config(data).to_dict()  # the fields together: some rules tie fields (expert_rounds needs expert)
        same = [k for k in data if whole[k] == base[k]]
        assert not same, f"{name}.yaml repeats defaults: {same}"
    main_job = yaml.safe_load((config_dir() / "default.yaml").read_text())
    assert main_job["advice"] == main_job["imitate"] == "heuristic:weights=cards", "the main job's recipe"
    assert load_config("strong").hidden_size == 256 and load_config("dmc").algo == "dmc"
    # the advised recipe: each variant advised by, and warm-started on, the heuristic tuned for its scoring
    hk, tw = load_config("advised", ["variant=hong-kong"]), load_config("advised")
    assert hk.variant_settings == {"scoring": "collect"} and hk.advice == hk.imitate == "heuristic:weights=collect"
    assert "heuristic" in hk.baselines and tw.advice == tw.imitate == "heuristic:weights=cards"


def test_default_config_is_taiwan_with_a_time_limit():
    cfg = load_config("default")
    assert cfg.variant == "taiwan"
    assert 0 < cfg.time_limit_minutes <= 13, "the main job ends within 15 minutes, its evaluation included"
    assert "heuristic:weights=cards" in cfg.eval_opponents and cfg.final_eval_deals >= 2000, "the bar it must pass"


def test_a_config_without_a_time_limit_says_so_at_its_start_and_its_pace_after_a_minute(tmp_path, capsys, monkeypatch):
    """A run with ``time_limit_minutes: 0`` names, before anything else, the step it trains to and
    how to stop it, on stderr (stdout stays the run's report); after ``PACE_AFTER_SECONDS`` of training
    (0 here) it says once how long the rest takes at its measured rate. A run with a limit says neither."""
    from bigtwo.train import pace

    unlimited = [name for name in config_names() if load_config(name).time_limit_minutes == 0]
    assert {"dmc", "ppo", "strong"} <= set(unlimited), unlimited  # the shipped configs that need the line
    note = pace.no_limit_note(load_config("dmc"), 0, Path("runs/r"))
    assert note is not None and "no time limit" in note and "trains to step 100,000,000" in note
    assert "Ctrl-C" in note and "bigtwo train --resume runs/r" in note and "--set time_limit_minutes=N" in note
    assert pace.no_limit_note(load_config("default"), 0, Path("runs/r")) is None
    assert pace.no_limit_note(load_config("expert"), 0, Path("runs/r")) is None  # no steps: its rounds bound it

    monkeypatch.setattr(pace, "PACE_AFTER_SECONDS", 0.0)
    result = run_training(tiny(tmp_path, total_timesteps=512, time_limit_minutes=0))
    out, err = capsys.readouterr()
    assert result.global_step >= 512
    start = "this config has no time limit (time_limit_minutes: 0): it trains to step 512 (512 steps to go)"
    assert [line for line in err.splitlines() if "no time limit" in line][0].startswith(start), err
    assert err.count("env-steps/s (this run's first") == 1, err  # the pace, said once
    assert "steps left to step 512 take about" in err
    assert "no time limit" not in out and "env-steps/s (this run's first" not in out

    run_training(tiny(tmp_path / "limited", total_timesteps=512, time_limit_minutes=5))
    assert "no time limit" not in capsys.readouterr().err


def test_the_pace_of_a_run_without_a_time_limit_is_said_in_minutes_or_hours():
    from bigtwo.train.pace import duration, pace_note

    assert duration(30) == "about a minute" and duration(40 * 60) == "about 40 minutes"
    assert duration(5.5 * 3600) == "about 5.5 hours"
    line = pace_note(step=0, stop_step=324_000_000, steps_done=3_000_000, seconds=100.0)
    assert "at 30,000 env-steps/s" in line and "the 324,000,000 steps left" in line and "about 3.0 hours" in line


def test_overrides_are_checked():
    cfg = load_config("default", ["lr=1e-4", "num_envs=128", "baselines=[random]", "anneal_lr=false"])
    assert (cfg.lr, cfg.num_envs, cfg.baselines, cfg.anneal_lr) == (1e-4, 128, ["random"], False)
    with pytest.raises(ValueError, match=r"unknown field 'learning_rate'; allowed fields: algo, variant"):
        load_config("default", ["learning_rate=1e-4"])
    with pytest.raises(ValueError, match=r"field 'num_envs' has bad value -3; allowed: an integer in 1..65,536"):
        load_config("default", ["num_envs=-3"])
    with pytest.raises(ValueError, match=r"field 'algo' has bad value 'a2c'; allowed: ppo, dmc"):
        load_config("default", {"algo": "a2c"})
    with pytest.raises(ValueError, match=r"field 'epsilon'.*\[0, 1\]"):
        load_config("default", ["epsilon=2"])
    with pytest.raises(ValueError, match="expects FIELD=VALUE"):
        load_config("default", ["lr"])


def test_a_choice_field_takes_its_choices_and_refuses_another_value_naming_them(capsys):
    """A text field with a fixed set of values declares them once, a ``Choice`` in its ``setting``: the
    check, its error ("allowed: ppo, dmc") and what ``bigtwo train --fields`` says it allows come from it,
    and its description names each choice."""
    from bigtwo.cli import main
    from bigtwo.train.config import CHOICES, allowed_values

    assert set(CHOICES) == {"algo", "precision", "critic", "expert_target"}
    assert main(["train", "--fields"]) == 0
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()}
    for name, choice in CHOICES.items():
        listed = ", ".join(choice.values)
        assert FIELDS[name].default in choice.values, name
        assert [getattr(make_config({name: value}), name) for value in choice.values] == list(choice.values)
        with pytest.raises(ValueError, match=rf"--set: field '{name}' has bad value 'nosuch'; allowed: {listed}$"):
            load_config("default", [f"{name}=nosuch"])
        with pytest.raises(ValueError, match=rf"field '{name}' has bad value 3; allowed: text$"):
            make_config({name: 3})
        assert allowed_values(name) == listed and lines[name].endswith(f"Allowed: {listed}."), name
        assert all(f"``{value}``" in field_docs()[name] for value in choice.values), f"{name}'s description"


@pytest.mark.parametrize(
    ("name", "good", "bad"),
    [
        ("device", ["auto", "cpu", "cuda", "cuda:12"], ["gpu", "cuda:", "cuda:1234", "CPU"]),
        ("run_name", ["", "hk1", "a.b", "..."], ["a/b", ".", "..", "/"]),
    ],
)
def test_a_patterned_text_field_takes_what_its_words_say(name, good, bad):
    from bigtwo.train.config import allowed_values

    assert [getattr(make_config({name: value}), name) for value in good] == good
    for value in bad:
        with pytest.raises(ValueError, match=rf"field '{name}' has bad value '{re.escape(value)}'; allowed: "):
            make_config({name: value})
    assert allowed_values(name) in ("auto, cpu, cuda or cuda:N", "a folder name without '/'")


@pytest.mark.parametrize(
    ("override", "allowed"),
    [
        ("lr=1e30", r"'lr' has bad value 1e\+30; allowed: a number in \(0, 1\]"),
        ("hidden_size=100000", r"'hidden_size' has bad value 100000; allowed: an integer in 1..4,096"),
        ("torch_threads=100000", r"'torch_threads' has bad value 100000; allowed: an integer in 1..256"),
        ("device=cuda:abc", r"'device' has bad value 'cuda:abc'; allowed: auto, cpu, cuda or cuda:N"),
        (f"seed={2**64}", r"'seed' has bad value 18446744073709551616; allowed: an integer in 0..9,"),
        ("league_self=1e300", r"'league_self' has bad value 1e\+300; allowed: a number in \[0, 1e\+06\]"),
        ("pair_layers=0", r"'pair_layers' has bad value 0; allowed: an integer in 1..16"),
        ("num_envs=65536", r"num_envs \* num_steps \(one rollout\) is 2,097,152; allowed: at most 1,048,576"),
    ],
)
def test_training_fields_are_bounded(override, allowed):
    with pytest.raises(ValueError, match=rf"--set: .*{allowed}"):
        load_config("default", [override])


def test_fields_list_shows_what_each_field_allows(capsys):
    from bigtwo.cli import main

    assert main(["train", "--fields"]) == 0
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()}
    assert set(lines) == set(FIELDS)
    assert lines["lr"].endswith("Allowed: a number in (0, 1].") and "1..4,096" in lines["hidden_size"]


def test_unusable_device_is_refused_before_the_run_folder(tmp_path):
    device = "cuda:99" if torch.cuda.is_available() else "cuda"
    cfg = tiny(tmp_path, device=device)
    with pytest.raises(ValueError, match=rf"field 'device' has value '{device}' but"):
        run_training(cfg)
    assert not Path(cfg.runs_dir).exists()


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"eval_opponents": ["random", "nosuch"]}, "eval_opponents"),
        ({"league_baselines": 1.0, "baselines": ["greedy", "nosuch"]}, "baselines"),
        ({"imitate": "nosuch"}, "imitate"),
    ],
)
def test_unknown_agent_names_fail_before_training(tmp_path, fields, named):
    cfg = tiny(tmp_path, final_eval_deals=4, **fields)
    with pytest.raises(ValueError, match=rf"field '{named}' has bad value 'nosuch': .*unknown agent"):
        run_training(cfg)
    assert not Path(cfg.runs_dir).exists(), "nothing created, no step taken"


@pytest.mark.parametrize("algo", ["ppo", "dmc"])
@pytest.mark.parametrize("players", [2, 3, 4])
def test_one_card_variants_train(tmp_path, algo, players):
    """With one card each every decision is forced (nothing is recorded): training still runs."""
    cfg = tiny(tmp_path, algo=algo, total_timesteps=256, variant_settings={"players": players, "cards_per_player": 1})
    result = run_training(cfg)
    assert result.global_step == 256 and ckpt.load(result.checkpoint)["variant"]["settings"]["players"] == players


def test_bad_config_file_is_refused(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("algo: ppo\nnum_env: 8\n")
    with pytest.raises(ValueError, match=r"bad.yaml: unknown field 'num_env'; allowed fields: .*num_envs"):
        load_config(str(bad))
    with pytest.raises(ValueError, match="unknown training config 'nope'"):
        load_config("nope")


def test_cli_refuses_bad_field(capsys):
    from bigtwo.cli import main

    assert main(["train", "--set", "bogus=1"]) == 2
    err = capsys.readouterr().err
    assert "unknown field 'bogus'" in err and "allowed fields" in err


def test_bigtwo_start_does_not_import_torch():
    code = "import sys, bigtwo.cli as c; c.build_parser(); import bigtwo.env; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "False"


# ---------------------------------------------------------------- storage and networks


def test_storage_links_each_seat_and_cuts_at_episode_end():
    store = DecisionStore(num_envs=2, players=2, obs_size=1)

    def rec(env, seat):
        return store.record(
            np.array([env]),
            np.array([seat]),
            np.zeros((1, 1)),
            np.array([[0, 1]]),
            np.array([2]),
            np.array([0]),
            np.zeros(1),
            np.zeros(1),
        )[0]

    a0, b0, a1 = rec(0, 0), rec(0, 1), rec(0, 0)
    store.credit(np.zeros((2, 2)), np.array([False, False]))
    c0 = rec(1, 0)
    # slot 0 ends: seat 0 gets -3 (its last decision a1), seat 1 gets +3 (b0); slot 1 goes on
    store.credit(np.array([[-3.0, 3.0], [0.0, 0.0]]), np.array([True, False]))
    a2 = rec(0, 0)  # the next match in slot 0 (SAME_STEP autoreset): not linked to a1
    n = store.size
    assert store.next[a0] == a1 and store.next[a1] == -1 and store.next[b0] == -1 and store.next[a2] == -1
    assert store.done[[a0, b0, a1, c0, a2]].tolist() == [False, True, True, False, False]
    assert store.reward[[a1, b0]].tolist() == [-3.0, 3.0]
    ret, ok = mc_returns(store.reward[:n], store.done[:n], store.next[:n])
    assert ok.tolist() == [True, True, True, False, False] and ret[a0] == -3.0
    value = np.array([0.5, 0.25, -1.0, 0.0, 0.0], np.float32)
    adv, returns, fin = gae(store.reward[:n], store.done[:n], store.next[:n], value, 1.0, 0.5)
    assert fin.tolist() == [True, True, True, False, False]
    assert adv[a1] == pytest.approx(-2.0) and adv[b0] == pytest.approx(2.75)
    assert adv[a0] == pytest.approx((-1.0 - 0.5) + 0.5 * -2.0)  # delta + lambda * next advantage
    store.compact(~fin)
    assert store.size == 2 and store.last[1, 0] == 0 and store.last[0, 0] == 1


def test_dmc_lambda_returns_mix_in_the_later_plays_scores():
    from bigtwo.train import dmc

    store = DecisionStore(num_envs=1, players=2, obs_size=1)
    for seat, q in ((0, 0.5), (1, 0.1), (0, -1.0), (0, 0.25)):  # seat 0: decisions 0, 2, 3
        store.record(
            np.array([0]), np.array([seat]), np.zeros((1, 1)), np.array([[0, 1]]), np.array([2]),
            np.array([0]), np.zeros(1), np.array([q]),
        )  # fmt: skip
    store.credit(np.array([[2.0, -2.0]]), np.array([True]))
    store.record(
        np.array([0]), np.array([0]), np.zeros((1, 1)), np.array([[0, 1]]), np.array([2]),
        np.array([0]), np.zeros(1), np.array([9.0]),
    )  # fmt: skip  # the next match: its episode has not ended, so it waits either way
    mc, mc_done = dmc.targets(store, make_config({"algo": "dmc"}))
    assert mc["returns"][:4].tolist() == [2.0, -2.0, 2.0, 2.0] and mc_done.tolist() == [True] * 4 + [False]
    lam, lam_done = dmc.targets(store, make_config({"algo": "dmc", "dmc_lambda": 0.5}))
    assert lam_done.tolist() == mc_done.tolist()
    g3 = 2.0  # the last decision: its payoff
    g2 = 0.5 * 0.25 + 0.5 * g3  # (1 - lambda) Q[next] + lambda G[next]
    g0 = 0.5 * -1.0 + 0.5 * g2
    assert lam["returns"][[0, 1, 2, 3]] == pytest.approx([g0, -2.0, g2, g3])
    zero, _ = dmc.targets(store, make_config({"algo": "dmc", "dmc_lambda": 0.0}))  # one-step: the next play's score
    assert zero["returns"][[0, 2, 3]] == pytest.approx([-1.0, 0.25, 2.0])


def test_storage_keeps_each_legal_list_through_compaction():
    store = DecisionStore(num_envs=3, players=4, obs_size=2, capacity=2)
    lists = [[0, 5, 9], [7], [1, 2, 3, 4, 600], [8, 11]]
    for i, plays in enumerate(lists):
        legal = np.zeros((1, 6), np.int32)
        legal[0, : len(plays)] = plays
        store.record(
            np.array([i % 3]),
            np.array([0]),
            np.full((1, 2), i),
            legal,
            np.array([len(plays)]),
            np.array([len(plays) - 1]),
            np.zeros(1),
            np.zeros(1),
        )
    assert store.legal(np.array([2, 0])).tolist() == [[1, 2, 3, 4, 600], [0, 5, 9, 0, 0]]
    assert store.played(np.arange(4)).tolist() == [9, 7, 600, 11]
    store.compact(np.array([False, True, False, True]))
    assert store.size == 2 and store.plays_size == 3
    assert store.legal(np.arange(2)).tolist() == [[7, 0], [8, 11]] and store.obs[:2, 0].tolist() == [1, 3]
    saved = store.state_dict()
    other = DecisionStore(num_envs=3, players=4, obs_size=2)
    other.load_state_dict(saved)
    assert other.legal(np.arange(2)).tolist() == [[7, 0], [8, 11]] and (other.last == store.last).all()


def test_a_taken_batch_is_its_own_copy_of_the_store():
    """With ``overlap`` the update reads a taken batch while the next rollout writes the store: the batch
    holds what the store held when it was taken, whatever the store does after (compaction, new records)."""
    store = DecisionStore(num_envs=2, players=4, obs_size=2, capacity=4)
    for i, plays in enumerate([[3, 4], [5], [6, 7, 8]]):
        legal = np.zeros((1, 3), np.int32)
        legal[0, : len(plays)] = plays
        store.record(
            np.array([i % 2]), np.array([i]), np.full((1, 2), float(i)), legal, np.array([len(plays)]),
            np.array([0]), np.full(1, -0.5), np.full(1, 0.25 * i),
        )  # fmt: skip
    targets = {"returns": np.array([1.0, 2.0, 3.0], np.float32)}
    batch = store.take(np.array([2, 0]), targets)
    store.compact(np.array([False, True, False]))  # the store moves its rows and plays
    store.obs[:] = 99.0
    store.plays[:] = 99
    targets["returns"][:] = 0.0
    assert batch.obs[:, 0].tolist() == [2.0, 0.0] and batch.value.tolist() == [0.5, 0.0]
    assert batch.legal(np.arange(2)).tolist() == [[6, 7, 8], [3, 4, 0]]
    assert batch.targets["returns"].tolist() == [3.0, 1.0]


def test_scores_only_legal_plays_and_masks_before_softmax():
    variant = load_variant("taiwan")
    net = ActionScorer(obs_size(4), action_features(variant), hidden_size=16, state_layers=1, pair_size=8)
    legal = torch.tensor([[0, 17, 300, 5000], [12, 0, 0, 0]])
    counts = torch.tensor([4, 1])
    scores, value = net(torch.rand(2, obs_size(4)), legal, counts)
    valid = legal_mask(counts, 4)
    assert torch.isinf(scores[~valid]).all() and torch.isfinite(scores[valid]).all()
    logp = masked_log_softmax(scores, valid)
    probs = logp.exp() * valid
    assert torch.allclose(probs.sum(1), torch.ones(2)) and not torch.isnan(logp).any()
    entropy = -(logp.exp() * logp).sum(1)
    assert torch.isfinite(entropy).all() and entropy[1] == 0
    # a play's score depends on the play's features, not on its place in the list
    s2, _ = net(torch.zeros(1, obs_size(4)), torch.tensor([[5000, 17]]), torch.tensor([2]))
    s1, _ = net(torch.zeros(1, obs_size(4)), torch.tensor([[17, 5000]]), torch.tensor([2]))
    assert torch.allclose(s1.flip(1), s2)


def test_action_features_from_the_table():
    variant = load_variant("taiwan")
    f = action_features(variant)
    from bigtwo.env.rules.actions import action_table

    t = action_table(variant)
    assert f.shape[0] == t.size
    assert (f[:, :52].sum(1) == t.sizes).all()
    a = t.encode("3C 3D")
    assert f[a, 52 + int(t.kinds[a])] == 1 and f[0, 52] == 1  # pair kind; pass kind


# ---------------------------------------------------------------- trainers


@pytest.mark.parametrize("algo", ["ppo", "dmc"])
def test_trainer_smoke(tmp_path, algo):
    cfg = tiny(tmp_path, algo=algo, eval_every=512, eval_deals=4, final_eval_deals=4, eval_opponents=["random"])
    result = run_training(cfg)
    assert result.global_step >= cfg.total_timesteps
    run = Path(cfg.runs_dir) / "tiny"
    assert (run / "config.yaml").is_file() and list(run.glob("events.out.tfevents.*"))
    assert result.checkpoint == ckpt.latest_checkpoint(run)
    payload = ckpt.load(result.checkpoint)
    assert payload["algo"] == algo and payload["config"]["algo"] == algo
    assert payload["variant"]["name"] == "taiwan" and payload["variant"]["settings"]["opening_card"] == "3C"
    assert set(result.evaluations) == {"random"}
    # the checkpoint is an agent for tournaments and `bigtwo play`
    from bigtwo import agents

    agent = agents.make_agent(str(result.checkpoint), "taiwan", seed=0)
    from bigtwo.env.engine.engine import Engine

    eng = Engine("taiwan", num_matches=8, seed=3)
    ids, counts = eng.legal_actions()
    acts = agent.act(eng.observe(), ids, counts)
    assert all(a in ids[g, : counts[g]] for g, a in enumerate(acts))


def test_tensorboard_scalars(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    cfg = tiny(tmp_path, eval_every=1024, eval_deals=4, eval_opponents=["random"])
    run_training(cfg)
    acc = EventAccumulator(str(Path(cfg.runs_dir) / "tiny"))
    acc.Reload()
    tags = set(acc.Tags()["scalars"])
    for tag in (
        "losses/policy",
        "losses/value",
        "losses/entropy",
        "losses/approx_kl",
        "charts/sps",
        "charts/episodic_payoff",
        "eval/random/mean_payoff",
        "eval/random/ci_low",
        "eval/random/ci_high",
        "eval/random/win_rate",
    ):
        assert tag in tags, tag


def test_league_trains_only_the_learner_seat(tmp_path):
    from bigtwo.train.league import League

    variant = load_variant("taiwan")
    league = League(variant, 64, (0.0, 0.0, 1.0), ["greedy"], 2, seed=0)
    assert (league.opponent == 1).all()
    seats = np.arange(64) % 4
    learner = league.learner_rows(seats)
    assert (learner == (seats == league.learner_seat)).all()
    groups = league.opponent_groups(learner)
    assert len(groups) == 1 and groups[0][0].name == "greedy" and (groups[0][1] == np.flatnonzero(~learner)).all()
    # a full league run: past snapshots and baselines, resumable
    cfg = tiny(
        tmp_path,
        league_self=0.4,
        league_past=0.3,
        league_baselines=0.3,
        baselines=["random", "greedy"],
        total_timesteps=1536,
    )
    result = run_training(cfg)
    snaps = sorted((Path(cfg.runs_dir) / "tiny" / "league").glob("snapshot_*.pt"))
    assert len(snaps) >= 4
    state = ckpt.load(result.checkpoint)["resume"]["league"]
    assert 1 <= len(state["snapshots"]) <= cfg.max_snapshots


def test_a_rollout_s_past_matches_play_the_snapshots_it_drew(tmp_path):
    """``snapshots_per_rollout``: each rollout draws that many of the kept snapshots, and the past
    matches that start in it play only those (each snapshot with rows costs a network pass a step);
    over rollouts every kept one is drawn; 0 keeps every snapshot in every rollout; a resumed run
    continues with the same draw."""
    from bigtwo.train.league import League

    variant = load_variant("taiwan")
    league = League(variant, 256, (0.0, 1.0, 0.0), [], 8, seed=0, snapshot_mode="greedy", root=tmp_path, per_rollout=1)
    cfg = tiny(tmp_path)
    from bigtwo.train.rollout import make_scorer

    payload = ckpt.policy_payload("dmc", variant, cfg, make_scorer(cfg, variant), 0, 0)
    for step in range(5):
        league.add_snapshot(step, f"snapshot_{step}.pt", payload)
    drawn = set()
    for _ in range(30):
        league.next_rollout()
        league.draw(np.arange(256))
        codes = set(league.opponent.tolist())
        assert len(codes) == 1  # every match that started in this rollout plays its one snapshot
        drawn |= codes
    assert drawn == {1, 2, 3, 4, 5}  # over rollouts, every kept snapshot (codes 1 + j, no baselines)
    every = League(variant, 256, (0.0, 1.0, 0.0), [], 8, seed=0, snapshot_mode="greedy", root=tmp_path)
    for step in range(5):
        every.add_snapshot(step, f"snapshot_{step}.pt", payload)
    every.next_rollout()
    every.draw(np.arange(256))
    assert set(every.opponent.tolist()) == {1, 2, 3, 4, 5}  # 0: every kept snapshot in every rollout
    with pytest.raises(ValueError, match="snapshots_per_rollout"):
        tiny(tmp_path, snapshots_per_rollout=-1)
    # a run with it resumes exactly
    league_fields = dict(league_self=0.5, league_past=0.5, snapshots_per_rollout=1, snapshot_every=256)
    full = tiny(tmp_path / "a", total_timesteps=2048, checkpoint_every=1024, **league_fields)
    result = run_training(full)
    last = ckpt.list_checkpoints(Path(full.runs_dir) / "tiny")[1]
    killed = tmp_path / "b" / "runs" / "tiny"
    shutil.copytree(Path(full.runs_dir) / "tiny", killed)
    (killed / "checkpoints" / last.name).unlink()
    resumed = run_training(make_config({"runs_dir": str(tmp_path / "b" / "runs")}, base=full))
    assert same_weights(weights(resumed.checkpoint), weights(result.checkpoint))
    state = ckpt.load(result.checkpoint)["resume"]["league"]
    assert len(state["active"]) == 1


def test_the_training_benchmark_times_a_full_league(tmp_path):
    """``bigtwo bench --train`` times a config's league with its ``max_snapshots`` snapshots (a run
    has them after its first few snapshots, and each costs a network pass a step), not empty."""
    from bigtwo.train.bench import fill_league, timed_updates
    from bigtwo.train.loop import SelfPlay

    loop = SelfPlay(tiny(tmp_path / "a", league_self=0.5, league_past=0.5, max_snapshots=3))
    try:
        loop.start()
        assert fill_league(loop) == 3
        league = loop.rollouts.worker.league
        assert [step for step, _, _ in league.snapshots] == [0, 1, 2]
        assert all((tmp_path / "a" / "runs" / "tiny" / path).is_file() for _, path, _ in league.snapshots)
    finally:
        loop.rollouts.close()
        loop.run.close()
    plain = SelfPlay(tiny(tmp_path / "b"))  # no past snapshots in its league: nothing to add
    try:
        plain.start()
        assert fill_league(plain) == 0 and not plain.rollouts.worker.league.snapshots
    finally:
        plain.rollouts.close()
        plain.run.close()
    timed = timed_updates(SelfPlay(tiny(tmp_path / "c", league_self=0.5, league_past=0.5, max_snapshots=2)), 1)
    assert timed.steps > 0 and timed.wall > 0


def test_rollout_asks_the_trainer_only_for_the_learners_real_decisions(tmp_path):
    """``RolloutWorker.play`` passes ``choose`` only the learner's rows with more than one legal
    play, plays the picked play and records each decision under the learner's seat; ``collect``
    hands out exactly the finished decisions with their targets and keeps the rest."""
    from bigtwo.train.loop import SelfPlay

    cfg = tiny(tmp_path, league_self=0.0, league_baselines=1.0, baselines=["random"], num_steps=8)
    loop = SelfPlay(cfg)
    loop.start()
    worker = loop.rollouts.worker
    learner_seat = worker.league.learner_seat.copy()
    asked: list[np.ndarray] = []

    def choose(obs, legal, counts, advised, state):
        assert (counts > 1).all() and obs.shape == (len(counts), worker.venv.obs_size)
        asked.append(legal[np.arange(len(counts)), counts - 1])  # the last legal play of each row
        n = len(counts)
        return counts - 1, np.zeros(n, np.float32), np.zeros(n, np.float32)

    seconds = worker.play(choose)
    assert seconds >= 0
    store = worker.store
    n = store.size
    assert n == sum(len(a) for a in asked) > 0
    assert (store.counts[:n] > 1).all()
    assert (store.played(np.arange(n)) == np.concatenate(asked)).all()
    still_playing = worker.episodes.length[store.env[:n]] == cfg.num_steps  # no new match drawn
    assert still_playing.any()
    assert (store.seat[:n][still_playing] == learner_seat[store.env[:n][still_playing]]).all()
    # collect: another rollout, then the finished decisions out (with their GAE targets), the rest kept
    before = store.size
    batch = worker.collect()
    assert batch.steps == cfg.num_envs * cfg.num_steps and batch.waiting == store.size
    assert batch.decisions.size + store.size >= before and batch.decisions.size > 0
    d = batch.decisions
    assert set(d.targets) == {"advantages", "returns"} and len(d.targets["returns"]) == d.size
    legal = d.legal(np.arange(d.size))
    assert (legal[np.arange(d.size), d.pick] == d.played(np.arange(d.size))).all()
    assert ((legal > 0).sum(1) <= d.counts).all()
    loop.run.close()


def test_the_rollouts_know_only_their_setup_not_the_loop():
    """The rollouts (``bigtwo.train.rollout``, ``bigtwo.train.ray.actors``) are built from a ``RolloutSetup`` and
    never import the loop that drives them: the loop imports them, not the other way round."""
    import ast

    for rel in ("train/rollout.py", "train/ray/actors.py", "train/ray/gate.py"):
        tree = ast.parse((ROOT / rel).read_text(encoding="utf-8"))
        imported = {
            node.module.split(".")[-1]
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module and node.level > 0
        }
        assert "loop" not in imported, f"{rel} imports bigtwo.train.loop"


def test_dense_head_benchmark_measures_both_heads(monkeypatch):
    """``benchmarks/dense_head.py`` on a small batch: real mid-game decisions, both networks
    timed, the dense head the larger one by its ~19,900-wide output."""
    monkeypatch.syspath_prepend(str(ROOT))
    import importlib

    bench = importlib.import_module("benchmarks.dense_head")
    m = bench.measure(batch=32, repeats=1, hidden=16, pair=8)
    assert m["legal_plays"] >= 32 and m["width"] >= 1 and m["num_actions"] == 19_895
    assert all(m[k] > 0 for k in ("sparse_forward_ms", "sparse_backward_ms", "dense_forward_ms", "dense_backward_ms"))
    assert m["dense_params"] > 19_895 * 16 > m["sparse_params"]
    assert "| legal plays only |" in bench.report(m)
    with pytest.raises(ValueError, match="batch must be a positive integer"):
        bench.measure(batch=0)


@pytest.mark.parametrize(("algo", "overlap"), [("ppo", False), ("dmc", False), ("ppo", True), ("dmc", True)])
def test_resume_continues_exactly(tmp_path, algo, overlap):
    """A run killed after its first checkpoint and resumed ends with the same weights as one that
    was never interrupted (league with snapshots and baselines included; with ``overlap`` too)."""
    league = dict(league_self=0.5, league_past=0.25, league_baselines=0.25, baselines=["random"])
    full = tiny(tmp_path / "a", algo=algo, total_timesteps=2048, checkpoint_every=1024, overlap=overlap, **league)
    result = run_training(full)
    first, last = ckpt.list_checkpoints(Path(full.runs_dir) / "tiny")[:2]
    assert last == result.checkpoint
    # the "killed" run: its folder as it was at the first checkpoint
    killed = tmp_path / "b" / "runs" / "tiny"
    shutil.copytree(Path(full.runs_dir) / "tiny", killed)
    (killed / "checkpoints" / last.name).unlink()
    for snap in (killed / "league").glob("snapshot_*.pt"):
        if int(snap.stem.split("_")[1]) > 1024:
            snap.unlink()
    resumed = run_training(make_config({"runs_dir": str(tmp_path / "b" / "runs")}, base=full))
    assert resumed.global_step == result.global_step
    assert same_weights(weights(resumed.checkpoint), weights(result.checkpoint))
    a, b = ckpt.load(resumed.checkpoint)["resume"], ckpt.load(result.checkpoint)["resume"]
    assert all(torch.equal(a["env"][k], b["env"][k]) for k in a["env"])
    assert torch.equal(a["store"]["obs"], b["store"]["obs"])


def test_resume_refuses_a_different_config(tmp_path):
    cfg = tiny(tmp_path, total_timesteps=512)
    run_training(cfg)
    with pytest.raises(ValueError, match="another config .*lr"):
        run_training(make_config({"lr": 0.1}, base=cfg))
    longer = run_training(make_config({"total_timesteps": 1024}, base=cfg))  # may change on resume
    assert longer.global_step == 1024
    overlapped = run_training(make_config({"total_timesteps": 1536, "overlap": True}, base=cfg))  # so may overlap
    assert overlapped.global_step == 1536


def test_a_checkpoint_of_another_observation_version_is_refused(tmp_path):
    """Checkpoints record the observation version; one from before versions (no key, and none of
    the newer env state such as ``reverse``) or of another version is refused with the reason
    and what to do, when played, exported or resumed, never a ``KeyError``."""
    from bigtwo.env.engine.observation import OBS_VERSION
    from bigtwo.train.export import export_policy
    from bigtwo.train.policy_agent import load_policy_agent

    cfg = tiny(tmp_path, total_timesteps=256)
    path = run_training(cfg).checkpoint
    payload = ckpt.load(path)
    assert payload["obs_version"] == OBS_VERSION == 1
    assert load_policy_agent(path).variant.name == "taiwan"
    del payload["obs_version"]
    for name in ("reverse", "hist_action", "hist_seat", "passed_on"):
        del payload["resume"]["env"][name]
    ckpt.atomic_save(payload, path)
    old = r"trained on observation version 0 \(no version recorded: from before versions\), but this bigtwo observes version 1"
    with pytest.raises(ValueError, match=old + ".*retrain it"):
        load_policy_agent(path)
    with pytest.raises(ValueError, match=old + ".*export that run"):
        export_policy(path, out_dir=tmp_path / "shipped")
    with pytest.raises(ValueError, match=old + ".*cannot resume: retrain in a new run"):
        run_training(make_config({"total_timesteps": 512}, base=cfg))
    payload["obs_version"] = 0
    ckpt.atomic_save(payload, path)
    with pytest.raises(ValueError, match="trained on observation version 0, but this bigtwo observes version 1"):
        load_policy_agent(path)


@pytest.mark.parametrize(("overlap", "precision"), [(False, "float32"), (True, "float32"), (False, "bfloat16")])
def test_same_seed_same_result(tmp_path, overlap, precision):
    a = run_training(tiny(tmp_path / "a", total_timesteps=768, overlap=overlap, precision=precision))
    b = run_training(tiny(tmp_path / "b", total_timesteps=768, overlap=overlap, precision=precision))
    c = run_training(tiny(tmp_path / "c", total_timesteps=768, seed=2, overlap=overlap, precision=precision))
    assert same_weights(weights(a.checkpoint), weights(b.checkpoint))
    assert not same_weights(weights(a.checkpoint), weights(c.checkpoint))
    assert a.global_step == 768


def test_bfloat16_training_keeps_float32_weights_and_exports_a_float32_player(tmp_path):
    """``precision: bfloat16`` runs the passes in bfloat16 (the run differs from float32's), but the
    weights stay float32, the checkpoint does not carry the precision, and its agent plays float32."""
    from bigtwo.train.policy_agent import load_policy_agent

    half = run_training(tiny(tmp_path / "h", total_timesteps=512, precision="bfloat16"))
    full = run_training(tiny(tmp_path / "f", total_timesteps=512))
    w = weights(half.checkpoint)
    assert all(t.dtype == torch.float32 for t in w.values())
    assert not same_weights(w, weights(full.checkpoint))
    agent = load_policy_agent(half.checkpoint)
    assert agent.net.precision == "float32"
    with pytest.raises(ValueError, match="precision must be one of float32, bfloat16, auto, got 'float16'"):
        ActionScorer(8, np.zeros((3, 64), np.float32), precision="float16")


def test_a_bfloat16_pass_scores_like_float32():
    """The same network in bfloat16 scores the same plays within bfloat16's rounding, keeps -inf on
    the padding, and hands back float32."""
    torch.manual_seed(0)
    net = ActionScorer(obs_size(4), action_features(load_variant("taiwan")), 64, 2, 32, 1)
    obs = (torch.rand(64, obs_size(4)) < 0.16).float()
    legal = torch.randint(0, 19000, (64, 9))
    counts = torch.randint(1, 10, (64,))
    scores, value = net(obs, legal, counts)
    net.precision = "bfloat16"
    half_scores, half_value = net(obs, legal, counts)
    assert half_scores.dtype == half_value.dtype == torch.float32
    assert torch.equal(torch.isinf(scores), torch.isinf(half_scores))
    finite = ~torch.isinf(scores)
    assert torch.allclose(half_scores[finite], scores[finite], atol=0.05 * scores[finite].abs().max().item())
    assert torch.allclose(half_value, value, atol=0.05 * value.abs().max().item())
    assert not torch.equal(half_value, value)  # it did run in bfloat16


def test_overlap_plays_the_next_rollout_with_the_weights_from_before_the_update(tmp_path):
    """With ``overlap`` the rollout that plays during an update acts with the weights from before
    it (its recorded log-probabilities are theirs, not the new weights'); the next update learns
    from it, and the rollouts then act with the new weights."""
    from bigtwo.train.loop import SelfPlay

    loop = SelfPlay(tiny(tmp_path, total_timesteps=4096, overlap=True))
    try:
        loop.start()
        loop.next_update()
        first, _ = loop.rollout()
        before = copy.deepcopy(loop.net)
        loop.learn(first)
        assert loop.pending is not None and not same_weights(before.state_dict(), loop.net.state_dict())
        assert same_weights(loop.acting_net.state_dict(), loop.net.state_dict())  # refreshed after the update
        loop.next_update()
        second, _ = loop.rollout()
        assert loop.pending is None and loop.global_step == 2 * 16 * 16

        def logprobs(net) -> torch.Tensor:
            b = second.batch(np.arange(second.size))
            scores, _ = net.score_arrays(b["obs"], b["legal"], b["counts"])
            picks = torch.as_tensor(b["pick"].astype(np.int64))
            return torch.log_softmax(scores, 1).gather(1, picks[:, None]).squeeze(1)

        recorded = torch.as_tensor(second.batch(np.arange(second.size))["logprob"])
        assert torch.allclose(logprobs(before), recorded, atol=1e-5)
        assert not torch.allclose(logprobs(loop.net), recorded, atol=1e-5)
    finally:
        loop.rollouts.close()
        loop.run.close()


def test_checkpoint_write_is_atomic(tmp_path):
    path = tmp_path / "x.pt"
    payload = {"format": ckpt.FORMAT, "algo": "ppo", "variant": {"name": "taiwan", "settings": {}}, "config": {}}
    payload.update(model={"kwargs": {}, "state_dict": {"w": torch.ones(2)}}, global_step=0, update=0, a=1)
    ckpt.atomic_save(payload, path)
    assert ckpt.load(path)["a"] == 1 and not list(tmp_path.glob(".*tmp*"))
    path.write_bytes(b"garbage")
    with pytest.raises(ValueError, match="not a readable checkpoint"):
        ckpt.load(path)


@pytest.mark.parametrize(
    ("sig", "overlap"),
    [(signal.SIGTERM, False), (signal.SIGINT, False), (signal.SIGTERM, True)],
    ids=["SIGTERM", "SIGINT", "SIGTERM-overlap"],
)
def test_a_signal_ends_training_with_a_final_checkpoint(tmp_path, sig, overlap):
    """``bigtwo train`` sent SIGTERM or SIGINT mid-run: it finishes the update (with ``overlap``,
    the one on the rollout played meanwhile too), writes a checkpoint there, skips the final
    evaluation, exits with 128 + the signal and leaves no process behind."""
    import psutil

    runs = tmp_path / "runs"
    sets = dict(
        runs_dir=runs,
        run_name="sig",
        total_timesteps=10**9,
        num_envs=8,
        num_steps=16,
        hidden_size=16,
        state_layers=1,
        pair_size=8,
        update_epochs=1,
        checkpoint_every=1024,
        keep_checkpoints=0,
        eval_every=0,
        final_eval_deals=50,
        time_limit_minutes=3,
        progress="false",
        device="cpu",
        overlap=str(overlap).lower(),
        imitate_decisions=256,  # the default config's warm start, kept small (500k decisions take a minute)
    )
    cmd = [sys.executable, "-m", "bigtwo.cli", "train", *(f"--set={k}={v}" for k, v in sets.items())]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.time() + 120
        while not ckpt.list_checkpoints(runs / "sig") and time.time() < deadline and proc.poll() is None:
            time.sleep(0.2)
        assert ckpt.list_checkpoints(runs / "sig"), "training started and wrote its first checkpoint"
        children = psutil.Process(proc.pid).children(recursive=True)
        proc.send_signal(sig)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + sig, out
    assert f"stopped by {signal.Signals(sig).name} at step" in out and "Traceback" not in out
    assert "final evaluation" in out and "final evaluation (" not in out, "the final evaluation was skipped"
    last = ckpt.latest_checkpoint(runs / "sig")
    step = int(ckpt.load(last)["global_step"])
    assert step % 128 == 0 and f"step {step:,} of" in out and str(last) in out
    assert not list((runs / "sig").rglob(".*.tmp*"))
    assert not [c for c in children if c.is_running() and c.status() != psutil.STATUS_ZOMBIE]


def test_ppo_learns_to_beat_random(tmp_path):
    """150k steps of PPO self-play on taiwan (~15 s): the greedy policy's 95% interval lies
    above every random player's in 300 duplicate deals (1,200 games)."""
    cfg = make_config(
        dict(
            runs_dir=str(tmp_path / "runs"),
            run_name="learn",
            algo="ppo",
            total_timesteps=150_000,
            num_envs=256,
            num_steps=32,
            hidden_size=64,
            pair_size=32,
            minibatch_size=1024,
            update_epochs=4,
            lr=1e-3,
            eval_every=0,
            final_eval_deals=300,
            eval_opponents=["random"],
            progress=False,
            torch_threads=1,
            device="cpu",
            checkpoint_every=10_000_000,
        ),
        source="test",
    )
    result = run_training(cfg)
    e = result.evaluations["random"]
    assert e.beats, (e.mean_payoff, e.ci_low, e.opponent_mean_payoff, e.opponent_ci_high)
    assert e.mean_payoff > e.opponent_mean_payoff + 0.5


def test_evaluation_table_names_the_variants_scoring() -> None:
    """The report under the final evaluation says how the payoffs were paid (not always cards)."""
    from bigtwo.agents import make_agent
    from bigtwo.arena.evaluate import evaluate, format_table

    for scoring, words in (("collect", "collect scoring: each loser pays the winner"), ("cards", "cards scoring")):
        variant = load_variant("hong-kong", scoring=scoring)
        table = format_table(evaluate(make_agent("greedy", variant), variant, ["random"], deals=4, seed=0))
        assert words in table and table.count("scoring") == 1


def test_evaluation_reports_the_paired_margin_and_beats_by_it() -> None:
    """The evaluation's margin is the tournament's (the agent's payoff less the copies' mean, paired by
    deal), ``beats`` is its interval above 0, and TensorBoard and the table get it."""
    from bigtwo.agents import make_agent
    from bigtwo.arena.evaluate import evaluate, format_table

    variant = load_variant("taiwan")
    evals = evaluate(make_agent("heuristic", variant), variant, ["random", "heuristic"], deals=30, seed=2)
    for e in evals.values():
        me = e.result.stats[0]
        assert (e.margin, e.margin_ci_low, e.margin_ci_high) == (me.margin, *me.margin_ci95)
        assert e.beats == (e.margin_ci_low > 0)
        assert e.scalars()["margin"] == e.margin and e.to_dict()["beats"] == e.beats
    assert evals["random"].beats and not evals["heuristic"].beats  # a copy of itself is no better
    row = next(line for line in format_table(evals).splitlines() if line.startswith("random "))
    assert f"{evals['random'].margin:+.3f} [{evals['random'].margin_ci_low:+.3f}, " in row and row.endswith("yes")
    one = evaluate(make_agent("heuristic", variant), variant, ["random"], deals=1, seed=2)["random"]
    assert math.isnan(one.margin_ci_low) and not one.beats  # one deal: no interval, no claim


def test_stop_at_timesteps_is_the_same_run_stopped_early(tmp_path):
    """``stop_at_timesteps`` stops a run whose learning rate still anneals over ``total_timesteps``:
    its weights are the longer run's at that step (how the shipped strong runs are remade)."""
    full = run_training(tiny(tmp_path / "a", total_timesteps=2048, checkpoint_every=1024))
    at_1024 = ckpt.list_checkpoints(Path(tmp_path / "a" / "runs" / "tiny"))[0]
    assert ckpt.load(at_1024)["global_step"] == 1024 and full.global_step == 2048
    stopped = run_training(tiny(tmp_path / "b", total_timesteps=2048, checkpoint_every=1024, stop_at_timesteps=1024))
    assert stopped.global_step == 1024
    assert same_weights(weights(stopped.checkpoint), weights(at_1024))
    shorter = run_training(tiny(tmp_path / "c", total_timesteps=1024))  # another schedule: other weights
    assert not same_weights(weights(shorter.checkpoint), weights(at_1024))


def test_per_variant_fields_apply_to_their_variant_and_yield_to_set(tmp_path):
    from bigtwo.train.config import load_config

    path = tmp_path / "c.yaml"
    path.write_text(
        "variant: taiwan\nstop_at_timesteps: 5\n"
        "per_variant: {hong-kong: {variant_settings: {scoring: collect}, stop_at_timesteps: 7}, japan: {lr: 0.01}}\n"
    )
    assert load_config(path).stop_at_timesteps == 5  # taiwan: no entry
    hk = load_config(path, ["variant=hong-kong"])
    assert hk.variant_settings == {"scoring": "collect"} and hk.stop_at_timesteps == 7
    assert load_config(path, ["variant=hong-kong", "stop_at_timesteps=9"]).stop_at_timesteps == 9
    assert load_config(path, ["variant=japan"]).lr == 0.01
    for bad, message in [
        ("{hong-kong: {lr: 7}}", r"field 'per_variant', entry 'hong-kong': field 'lr' has bad value 7"),
        ("{hong-kong: {learning_rate: 1}}", r"field 'per_variant', entry 'hong-kong': unknown field 'learning_rate'"),
        ("{hong-kong: {variant: taiwan}}", r"entry 'hong-kong': field 'variant' cannot be set per variant"),
        ("{hong-kong: 3}", r"field 'per_variant', entry 'hong-kong' is 3; allowed: a mapping of fields"),
    ]:
        with pytest.raises(ValueError, match=message):
            load_config("default", [f"per_variant={bad}"])


# ---------------------------------------------------------------- warm start by imitation


def _accuracy(net: ActionScorer, data) -> float:
    """How often ``net``'s best-scored play is the one recorded in ``data`` (the teacher's)."""
    b = data.batch(np.arange(data.size))
    with torch.no_grad():
        scores, _ = net(
            torch.as_tensor(b["obs"]),
            torch.as_tensor(b["legal"].astype(np.int64)),
            torch.as_tensor(b["counts"].astype(np.int64)),
        )
    return float((scores.argmax(1).numpy() == data.pick).mean())


def test_imitation_learns_the_teachers_plays(tmp_path):
    """Behaviour cloning of the greedy agent: the network's best-scored play becomes the teacher's
    on decisions it never saw, far above the untrained network; the teacher's plays are legal picks."""
    from bigtwo.train.imitation import imitate, teacher_decisions

    variant = load_variant("taiwan")
    cfg = tiny(tmp_path, num_envs=64, imitate="greedy", imitate_decisions=6000, imitate_epochs=6, minibatch_size=256)
    seen = teacher_decisions(cfg, variant, scale=0.1, seed=1)
    unseen = teacher_decisions(cfg, variant, scale=0.1, seed=2)
    assert seen.size >= 6000 and (seen.pick < seen.counts).all() and (seen.pick >= 0).all()
    assert np.abs(seen.targets["returns"]).max() <= 1.0 + 1e-6, "returns are scaled payoffs"
    torch.manual_seed(0)
    net = ActionScorer(obs_size(variant.players), action_features(variant), hidden_size=64, pair_size=32)
    before = _accuracy(net, unseen)
    scalars = imitate(net, seen, cfg, lr=3e-3, seed=0, device=torch.device("cpu"))
    after = _accuracy(net, unseen)
    assert after > 0.8 and after > before + 0.3, (before, after)
    assert scalars["imitation/decisions"] == seen.size and scalars["imitation/accuracy"] > 0.8


@pytest.mark.parametrize("algo", ["ppo", "dmc"])
def test_warm_start_runs_once_and_is_reproducible(tmp_path, algo, capsys):
    """A run with ``imitate`` warm-starts before its first update, logs it, and a resumed run
    does not imitate again; the same seed gives the same weights."""
    fields = dict(algo=algo, imitate="greedy", imitate_decisions=300, imitate_epochs=1, total_timesteps=512)
    a = run_training(tiny(tmp_path / "a", **fields))
    assert capsys.readouterr().out.count("warm start: ") == 1
    b = run_training(tiny(tmp_path / "b", **fields))
    capsys.readouterr()
    assert same_weights(weights(a.checkpoint), weights(b.checkpoint))
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(a.run_dir))
    acc.Reload()
    assert "imitation/decisions" in acc.Tags()["scalars"]
    resumed = run_training(tiny(tmp_path / "a", **{**fields, "total_timesteps": 1024}))
    assert resumed.global_step > a.global_step
    assert "warm start" not in capsys.readouterr().out, "a resumed run keeps its weights"


# ---------------------------------------------------------------- expert iteration


def test_expert_rounds_teach_the_network_the_search_and_resume_round_by_round(tmp_path, capsys):
    """``expert`` rounds start from ``init_from``'s weights, learn the lookahead's plays (the network
    agrees with the search more after a round than before), write a checkpoint per round that
    counts it, and a run resumed with more rounds plays only the rounds still to come, ending on
    the very weights of a run that played them all at once; the same seed, the same weights."""
    start = run_training(tiny(tmp_path / "start", total_timesteps=256))
    capsys.readouterr()
    fields = dict(
        init_from=str(start.checkpoint),
        expert="lookahead:samples=2,top_k=2",
        expert_decisions=300,
        expert_lr=3e-3,
        imitate_epochs=10,
        total_timesteps=0,
        num_envs=16,
        eval_deals=4,
        eval_opponents=["random"],
    )
    both = run_training(tiny(tmp_path / "both", expert_rounds=2, **fields))
    said = capsys.readouterr()
    rounds = [line for line in (said.out + said.err).splitlines() if line.startswith("expert round ")]
    assert [r.split(":")[0] for r in rounds] == ["expert round 1/2", "expert round 2/2"]
    assert both.global_step == 0 and not same_weights(weights(both.checkpoint), weights(start.checkpoint))
    assert ckpt.load(both.checkpoint)["resume"]["expert_round"] == 2
    kept = sorted(p.name for p in (both.run_dir / "expert").glob("*.pt"))
    assert kept == ["round_001.pt", "round_002.pt"]  # each round's network, for the curve over rounds
    played = sorted(p.name for p in (both.run_dir / "expert").glob("*.decisions.npz"))
    assert played == ["round_001.decisions.npz", "round_002.decisions.npz"]  # and the decisions it learned from
    assert same_weights(weights(both.run_dir / "expert" / "round_002.pt"), weights(both.checkpoint))
    assert "after round 2: vs random margin" in said.out + said.err
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(both.run_dir))
    acc.Reload()
    before = [e.value for e in acc.Scalars("expert/matched_before")]
    after = [e.value for e in acc.Scalars("expert/matched_after")]
    assert after[0] > before[0], "a round moves the network towards the search's plays"
    one = run_training(tiny(tmp_path / "split", expert_rounds=1, **fields))
    assert ckpt.load(one.checkpoint)["resume"]["expert_round"] == 1
    capsys.readouterr()
    resumed = run_training(tiny(tmp_path / "split", expert_rounds=2, **fields))
    said = capsys.readouterr()
    assert "expert round 2/2" in said.out + said.err and "expert round 1/2" not in said.out + said.err
    assert same_weights(weights(resumed.checkpoint), weights(both.checkpoint))


def test_expert_and_init_from_refuse_what_cannot_work(tmp_path):
    with pytest.raises(ValueError, match="'expert_rounds' is 2 but 'expert' is empty"):
        tiny(tmp_path, expert_rounds=2)
    with pytest.raises(ValueError, match="'init_from' is set together with 'imitate'"):
        tiny(tmp_path, init_from="shipped", imitate="greedy")
    with pytest.raises(ValueError, match="expert with algo ppo and critic observation"):
        tiny(tmp_path, expert="lookahead", expert_rounds=1, critic="global")
    for bad, said in [
        ("strong", "the expert is a lookahead search"),
        ("lookahead:network=x.pt", "network is not a search option"),
        ("lookahead:samples=0", "samples must be a positive integer"),
    ]:
        with pytest.raises(ValueError, match=said):
            run_training(tiny(tmp_path / "bad", expert=bad, expert_rounds=1))
    with pytest.raises(ValueError, match=r"cannot start from: cannot grow: .*hidden_size: 128 there, 8 here \(allowed"):
        run_training(tiny(tmp_path / "other", init_from="shipped", hidden_size=8))


def test_init_from_a_smaller_network_grows_it_and_plays_as_it_did(tmp_path, capsys):
    """A run whose network is wider than ``init_from``'s (and has a critic, a hands head and a judge of
    the hand left that the file lacks) starts as that network grown: on real positions its scores
    are the file's, to float rounding, so its first plays are the file's; then it trains. What
    cannot grow (fewer units, another layer count) is refused with what is allowed."""
    from bigtwo import agents
    from bigtwo.env.engine.engine import Engine

    small = run_training(tiny(tmp_path / "small", total_timesteps=512))
    capsys.readouterr()
    grown_fields = dict(init_from=str(small.checkpoint), hidden_size=48, pair_size=24, hand_after=8, hands_coef=1.0)
    grown = run_training(tiny(tmp_path / "grown", total_timesteps=0, **grown_fields))
    said = capsys.readouterr()
    assert (
        "grown: hand_after 0 -> 8, hand_places 0 -> 3, hidden_size 32 -> 48, pair_size 16 -> 24" in said.out + said.err
    )
    before, after = (agents.make_agent(str(c), "taiwan", seed=0) for c in (small.checkpoint, grown.checkpoint))
    eng = Engine("taiwan", num_matches=64, seed=5)
    for _ in range(20):  # 64 matches, 20 plies: positions from the deal to the middle game
        obs, (ids, counts) = eng.observe(), eng.legal_actions()
        a, b = before.net.play_scores(obs, ids, counts), after.net.play_scores(obs, ids, counts)
        legal = np.arange(ids.shape[1])[None, :] < counts[:, None]
        assert np.allclose(a[legal], b[legal], atol=1e-5)
        eng.step(before.act(obs, ids, counts))
    trained = run_training(tiny(tmp_path / "trained", total_timesteps=512, **grown_fields))
    assert not same_weights(weights(trained.checkpoint), weights(grown.checkpoint))
    critic = run_training(
        tiny(tmp_path / "critic", total_timesteps=512, init_from=str(small.checkpoint), critic="global")
    )
    assert "critic_size 0 -> " in capsys.readouterr().out and critic.global_step >= 512
    with pytest.raises(ValueError, match=r"state_layers: 1 there, 3 here \(allowed: the same value\)"):
        run_training(tiny(tmp_path / "deeper", init_from=str(small.checkpoint), state_layers=3))
    with pytest.raises(ValueError, match=r"score_std: 0.01 there, 1.0 here \(allowed: the same value\)"):
        run_training(tiny(tmp_path / "dmc", algo="dmc", init_from=str(small.checkpoint)))


# ---------------------------------------------------------------- advice


def test_advice_is_an_input_the_network_learns_to_follow(tmp_path):
    """With ``advice`` the scorer sees which play the adviser would make: imitating that same
    agent then matches it on almost every unseen decision (the plain network reaches far less)."""
    from bigtwo.train.imitation import imitate, teacher_decisions
    from bigtwo.train.rollout import make_scorer

    variant = load_variant("taiwan")
    fields = dict(num_envs=64, imitate="heuristic", imitate_decisions=3000, imitate_epochs=4, minibatch_size=256)
    cfg = tiny(tmp_path, advice="heuristic", hidden_size=32, pair_size=32, **fields)
    seen, unseen = (teacher_decisions(cfg, variant, scale=0.1, seed=s) for s in (1, 2))
    assert (seen.advised == seen.pick).all(), "the teacher is the adviser: its play is the advised one"
    torch.manual_seed(0)
    net = make_scorer(cfg, variant)
    imitate(net, seen, cfg, lr=3e-3, seed=0, device=torch.device("cpu"))
    b = unseen.batch(np.arange(unseen.size))
    scores, _ = net.score_arrays(b["obs"], b["legal"], b["counts"])  # the network asks its own adviser
    assert (scores.argmax(1).numpy() == unseen.pick).mean() > 0.97


def test_an_advised_checkpoint_plays_with_its_adviser(tmp_path):
    """A run with ``advice`` stores the adviser in the checkpoint; loading it builds the adviser
    again, and the agent plays only legal plays; a wrong adviser name fails before training."""
    from bigtwo import agents
    from bigtwo.env.engine.engine import Engine

    cfg = tiny(tmp_path, advice="greedy", total_timesteps=512)
    result = run_training(cfg)
    assert ckpt.load(result.checkpoint)["model"]["kwargs"]["advice"] == "greedy"
    agent = agents.make_agent(str(result.checkpoint), "taiwan", seed=0)
    assert agent.net.adviser is not None and agent.net.adviser.spec == "greedy"
    eng = Engine("taiwan", num_matches=16, seed=4)
    ids, counts = eng.legal_actions()
    acts = agent.act(eng.observe(), ids, counts)
    assert all(a in ids[g, : counts[g]] for g, a in enumerate(acts))
    with pytest.raises(ValueError, match=r"field 'advice' has bad value 'nosuch'"):
        run_training(tiny(tmp_path / "bad", advice="nosuch"))


def test_the_scratch_recipe_trains_a_house_rule_from_its_yaml_file(tmp_path):
    """``bigtwo train --config scratch --set variant=examples/japan-chains.yaml`` (here tiny): no
    advice, no warm start, the default heuristic only as a league opponent; the run trains on the
    file's rules (pair chains on), and its checkpoint plays those rules in a tournament."""
    from bigtwo.arena.tournament import run_tournament

    house = str(ROOT / "examples" / "japan-chains.yaml")
    recipe = load_config("scratch", [f"variant={house}"])
    assert recipe.advice == recipe.imitate == "" and recipe.baselines == ["heuristic"] and recipe.league_baselines > 0
    assert recipe.time_limit_minutes == 60 and recipe.final_eval_deals >= 2000 and "heuristic" in recipe.eval_opponents
    variant = load_variant(house)
    assert variant.pair_chain and variant.name == "japan-chains"
    league = {k: getattr(recipe, k) for k in ("overlap", "league_self", "league_past", "league_baselines", "baselines")}
    result = run_training(tiny(tmp_path, variant=house, advice=recipe.advice, imitate=recipe.imitate, **league))
    assert ckpt.load(result.checkpoint)["model"]["kwargs"].get("advice", "") == ""
    table = run_tournament(
        variant,
        [str(result.checkpoint), "heuristic", "heuristic", "heuristic"],
        deals=4,
        seed=7,
        workers=1,
        progress=False,
    )
    assert table.variant.pair_chain and table.payoff_at.shape == (4, 4) and (table.games_at == 4).all()


def test_a_global_critic_reads_every_hand_while_the_policy_reads_only_its_view(tmp_path):
    """``critic: global`` (PerfectDou): each decision is recorded with the global state of its game from
    the deciding seat's view (every hand), the value is a critic network over it, the scores never
    read it, the checkpoint plays without it (its value NaN, never a guess), and same seed, same run."""
    from bigtwo import agents
    from bigtwo.env.engine.engine import Engine
    from bigtwo.env.engine.state import state_size
    from bigtwo.train.loop import SelfPlay
    from bigtwo.train.networks import build_network

    cfg = tiny(tmp_path, critic="global", num_steps=8)
    loop = SelfPlay(cfg)
    loop.start()
    worker = loop.rollouts.worker
    seen: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []

    def choose(obs, legal, counts, advised, state):
        eng = worker.venv.engine
        seen.append((obs.copy(), state.copy(), eng.observe().copy(), eng.global_state().copy()))
        return worker.acting(obs, legal, counts, advised, state)

    worker.play(choose)
    assert seen and worker.store.state.shape[1] == state_size(4) == seen[0][1].shape[1]
    for obs, state, every_obs, every_state in seen:
        for o, s in zip(obs, state, strict=True):  # the row's own game, from the same seat's view
            assert any((every_obs[g] == o).all() and (every_state[g] == s).all() for g in range(len(every_obs)))
    recorded = np.concatenate([s for _, s, _, _ in seen])
    assert (worker.store.state[: worker.store.size] == recorded).all()
    loop.run.close()

    first = run_training(tiny(tmp_path / "a", critic="global"))
    again = run_training(tiny(tmp_path / "b", critic="global"))
    assert same_weights(weights(first.checkpoint), weights(again.checkpoint))
    saved = ckpt.load(first.checkpoint)["model"]
    assert saved["kwargs"]["critic_size"] == state_size(4)
    net = build_network(saved["kwargs"], load_variant("taiwan"))
    net.load_state_dict(saved["state_dict"])
    eng = Engine("taiwan", num_matches=8, seed=3)
    ids, counts = eng.legal_actions()
    obs, legal, n = eng.observe().copy(), ids.astype(np.int64), counts.astype(np.int64)
    one, v1 = net.score_arrays(obs, legal, n, state=eng.global_state().copy())
    other, v2 = net.score_arrays(obs, legal, n, state=np.random.default_rng(0).random((8, state_size(4)), np.float32))
    blind, v0 = net.score_arrays(obs, legal, n)
    assert torch.equal(one, other) and torch.equal(one, blind), "the policy never reads the global state"
    assert not torch.equal(v1, v2) and torch.isnan(v0).all()
    agent = agents.make_agent(str(first.checkpoint), "taiwan", seed=0)
    acts = agent.act(obs, ids, counts)
    assert all(a in ids[g, : counts[g]] for g, a in enumerate(acts))
    for bad, why in ((dict(algo="dmc"), "algo dmc has no value head"), (dict(imitate="greedy"), "imitate")):
        with pytest.raises(ValueError, match=rf"field 'critic' is 'global' but .*{why}.*allowed: critic global"):
            tiny(tmp_path / "bad", critic="global", **bad)


def test_the_hands_head_learns_who_holds_the_unseen_cards_from_the_global_state(tmp_path):
    """``hands_coef`` (an auxiliary task): each decision keeps its global state (from the deciding seat's
    view) though the critic reads the observation; PPO's update adds the hands head's cross-entropy,
    whose target is which other place holds each card the seat has not seen; the loss is logged,
    learning lowers it on a batch it trains on, the checkpoint plays without the head, and same seed,
    same run. Other trainers refuse it."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    from bigtwo.env.engine.engine import Engine
    from bigtwo.env.engine.observation import part_slices
    from bigtwo.env.engine.state import decode_state, state_size
    from bigtwo.train.loop import SelfPlay
    from bigtwo.train.networks import build_network
    from bigtwo.train.ppo import hand_loss

    # the target: from the seat's view, places 1..3 hold exactly the cards the seat has not seen
    eng = Engine("taiwan", num_matches=4, seed=5)
    for _ in range(9):
        ids, n = eng.legal_actions()
        eng.step(ids[np.arange(4), n - 1])
    state, obs = eng.global_state(), eng.observe()
    held = decode_state(state, 4)["hands"][:, 1:]
    unseen = obs[:, part_slices(4)["unseen"]]
    assert ((held.sum(1) > 0) == (unseen > 0)).all()
    perfect = torch.as_tensor(np.where(held > 0, 20.0, -20.0), dtype=torch.float32).transpose(1, 2)
    loss, accuracy = hand_loss(perfect, torch.as_tensor(state))
    assert loss.item() < 1e-6 and accuracy == 1.0
    loss, accuracy = hand_loss(torch.zeros(4, 52, 3), torch.as_tensor(state))
    assert abs(loss.item() - np.log(3)) < 1e-5  # no knowledge: a third each

    cfg = tiny(tmp_path, hands_coef=1.0, num_steps=8)
    loop = SelfPlay(cfg)
    loop.start()
    worker, net = loop.rollouts.worker, loop.net
    assert net.critic_size == 0 and net.hand_places == 3 and worker.store.state.shape[1] == state_size(4)
    decisions = worker.collect().decisions
    b = decisions.batch(np.arange(decisions.size))
    x, target = torch.as_tensor(b["obs"]), torch.as_tensor(b["state"])
    before = hand_loss(net.hand_logits(x), target)[0].item()
    optimizer = torch.optim.Adam(net.parameters(), lr=3e-3)
    for _ in range(60):
        optimizer.zero_grad()
        hand_loss(net.hand_logits(x), target)[0].backward()
        optimizer.step()
    assert hand_loss(net.hand_logits(x), target)[0].item() < before - 0.05
    loop.run.close()

    first = run_training(tiny(tmp_path / "a", hands_coef=0.5))
    again = run_training(tiny(tmp_path / "b", hands_coef=0.5))
    assert same_weights(weights(first.checkpoint), weights(again.checkpoint))
    assert any(k.startswith("hands.") for k in weights(first.checkpoint))
    saved = ckpt.load(first.checkpoint)["model"]
    assert saved["kwargs"]["hand_places"] == 3
    played = build_network(saved["kwargs"], load_variant("taiwan"))
    played.load_state_dict(saved["state_dict"])
    logged = EventAccumulator(str(first.run_dir))
    logged.Reload()
    assert {"losses/hands", "losses/hands_accuracy"} <= set(logged.Tags()["scalars"])
    plays_legal_moves(first.checkpoint)
    with pytest.raises(
        ValueError, match=r"field 'hands_coef' is 1.0 but algo dmc .*allowed: hands_coef > 0 with algo ppo"
    ):
        tiny(tmp_path / "bad", hands_coef=1.0, algo="dmc")


@pytest.mark.parametrize("algo", ["ppo", "dmc"])
def test_hand_after_scores_each_play_by_the_hand_it_leaves(tmp_path, algo):
    """``hand_after``: the scorer reads, per legal play, the seat's hand less the play's cards through a
    network of its own (the module docstring's formula, recomputed here by hand); it trains with PPO
    and DMC, the checkpoint keeps its width and plays, and same seed, same run."""
    from bigtwo.env.engine.engine import Engine
    from bigtwo.env.rules.actions import action_table
    from bigtwo.train.networks import ActionScorer, action_features, build_network

    variant = load_variant("taiwan")
    torch.manual_seed(0)
    net = ActionScorer(623, action_features(variant), 32, 2, 16, hand_after=8)
    assert not net.fused_pairs(torch.zeros(1, 623))  # torch's ops: the fused kernel has no such input
    eng = Engine("taiwan", num_matches=4, seed=3)
    ids, n = eng.legal_actions()
    obs = torch.as_tensor(eng.observe())
    legal, counts = torch.as_tensor(ids.astype(np.int64)), torch.as_tensor(n.astype(np.int64))
    with torch.no_grad():
        scores = net(obs, legal, counts)[0]
        table = action_table(variant)
        for g in range(4):
            hand = obs[g, :52]
            for s in range(int(n[g])):
                play = int(ids[g, s])
                cards = torch.zeros(52)
                cards[[int(c) for c in table.cards[play] if c >= 0]] = 1.0
                assert (hand - cards).min() >= 0  # a legal play's cards are in the hand
                pre = (
                    net.state_proj(net.state_encoder(obs[g]))
                    + net.action_proj(net.features[play])
                    + net.after(hand - cards)
                )
                expected = net.score(torch.relu(pre))[0]
                assert torch.isclose(scores[g, s], expected, atol=1e-5)
    with pytest.raises(ValueError, match=r"field 'hand_after' has bad value -1; allowed: an integer in 0"):
        tiny(tmp_path / "bad", hand_after=-1)

    first = run_training(tiny(tmp_path / "a", algo=algo, hand_after=8))
    again = run_training(tiny(tmp_path / "b", algo=algo, hand_after=8))
    assert same_weights(weights(first.checkpoint), weights(again.checkpoint))
    saved = ckpt.load(first.checkpoint)["model"]
    assert saved["kwargs"]["hand_after"] == 8 and any(k.startswith("after.") for k in saved["state_dict"])
    played = build_network(saved["kwargs"], variant)
    played.load_state_dict(saved["state_dict"])
    plays_legal_moves(first.checkpoint)


def test_the_scratch_dmc_recipe_trains_deep_monte_carlo_in_an_exploiter_league(tmp_path):
    """``bigtwo train --config scratch-dmc`` (here tiny): Deep Monte-Carlo with ``hand_after``, no advice,
    no warm start, the league's baselines in most matches: the variant's tuned weight set where it has one (the
    measured runs' rules and baselines from the plain command), the default heuristic elsewhere; the run's league
    plays it and its checkpoint plays; same seed, same run."""
    recipe = load_config("scratch-dmc", ["variant=taiwan"])
    assert recipe.algo == "dmc" and recipe.advice == recipe.imitate == "" and recipe.init_from == ""
    assert recipe.league_baselines > recipe.league_self > recipe.league_past > 0
    assert recipe.baselines == ["heuristic:weights=cards"] and recipe.final_eval_deals >= 2000
    hong_kong = load_config("scratch-dmc", ["variant=hong-kong"])
    assert hong_kong.variant_settings == {"scoring": "collect"} and hong_kong.baselines == ["heuristic:weights=collect"]
    assert load_config("scratch-dmc", ["variant=japan"]).baselines == ["heuristic"]
    assert recipe.hand_after > 0  # the scorer judges the hand each play leaves
    assert recipe.snapshots_per_rollout == 1  # one past snapshot's pass a step, not eight
    assert (recipe.dmc_epochs, recipe.dmc_lambda) == (2, 0.9)  # two passes, lambda-returns
    fields = (
        "algo", "hand_after", "overlap", "league_self", "league_past", "league_baselines", "baselines",
        "snapshots_per_rollout", "dmc_epochs", "dmc_lambda",
    )  # fmt: skip
    league = {k: getattr(recipe, k) for k in fields}
    first = run_training(tiny(tmp_path / "a", **league))
    again = run_training(tiny(tmp_path / "b", **league))
    assert same_weights(weights(first.checkpoint), weights(again.checkpoint))
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    logged = EventAccumulator(str(first.run_dir))
    logged.Reload()
    assert "charts/payoff_vs_heuristic:weights=cards" in logged.Tags()["scalars"]  # the league met it

    agent, eng, ids, counts = plays_legal_moves(first.checkpoint)
    # a DMC network's value head never learned: it gives no values, and a search that would read them refuses it
    from bigtwo.agents.lookahead import LookaheadAgent

    assert not agent.has_values and np.isnan(agent.values(eng.observe())).all()
    assert np.isnan(agent.evaluate(eng.observe(), ids, counts)[1]).all()
    with pytest.raises(ValueError, match="no value head of the observation .*DMC.*plies=-1"):
        LookaheadAgent(eng.variant, agent, seed=0, samples=2, plies=0).act(eng.observe(), ids, counts)


def test_the_best_response_recipe_fine_tunes_the_shipped_network_against_frozen_copies_of_itself(tmp_path):
    """``bigtwo train --config best-response`` (here a few hundred steps): the run starts from the
    variant's shipped network, with that file's network fields, and plays every match against 3
    copies of the shipped network alone (``strong:simulations=0``), which never learn: the learner's
    weights move, the opponents' file stays as shipped; same seed, same weights."""
    from bigtwo.agents import pretrained

    recipe = load_config("best-response", ["variant=hong-kong"])
    assert recipe.init_from == "shipped" and recipe.imitate == "" and recipe.algo == "ppo"
    assert (recipe.league_self, recipe.league_past, recipe.league_baselines) == (0.0, 0.0, 1.0)
    assert recipe.baselines == ["strong:simulations=0"] and recipe.eval_opponents == ["strong:simulations=0"]
    assert recipe.variant_settings == {"scoring": "collect"} and recipe.final_eval_deals >= 2000
    assert load_config("best-response", ["variant=taiwan"]).advice == "heuristic:weights=cards"
    shipped_file = pretrained.weights_path(load_variant("hong-kong", scoring="collect"))
    shipped = weights(shipped_file)
    short = [
        f"runs_dir={tmp_path}",
        "total_timesteps=256",
        "num_envs=8",
        "num_steps=16",
        "minibatch_size=64",
        "update_epochs=1",
        "eval_every=0",
        "final_eval_deals=0",
        "progress=false",
        "device=cpu",
    ]
    first = run_training(load_config("best-response", ["variant=hong-kong", "run_name=a", *short]))
    again = run_training(load_config("best-response", ["variant=hong-kong", "run_name=b", *short]))
    learned = weights(first.checkpoint)
    assert learned.keys() == shipped.keys() and not same_weights(learned, shipped), "the learner moved"
    assert same_weights(learned, weights(again.checkpoint)), "same seed, same run"
    assert same_weights(weights(shipped_file), shipped), "the opponents' network is the shipped one, untouched"
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    logged = EventAccumulator(str(first.run_dir))
    logged.Reload()
    assert "charts/payoff_vs_strong:simulations=0" in logged.Tags()["scalars"]  # every match met it
    assert not any(tag.startswith("charts/payoff_vs_self") for tag in logged.Tags()["scalars"]), logged.Tags()
