"""On Ray: distributed training that learns, a killed actor replaced, resume after a driver kill,
tournaments identical to the local run, the RLlib example and the Ray benchmark (``bigtwo.train.ray``,
``bigtwo.arena.cluster``, ``examples/rllib_example.py``, ``benchmarks/ray_bench.py``).

Every test runs on one local Ray cluster of 2 CPUs, started once for the module
(``ray.init(num_cpus=2)``) and shut down after it. Ray is in the ``all`` extra, so CI runs these.
"""

from __future__ import annotations

import importlib
import shutil
import threading
import time
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
ray = pytest.importorskip("ray")

from conftest import tiny_training_config  # noqa: E402

from bigtwo.arena.tournament import run_tournament  # noqa: E402
from bigtwo.train import checkpoint as ckpt  # noqa: E402
from bigtwo.train import make_config, run_training  # noqa: E402
from bigtwo.train.ray.gate import BatchGate  # noqa: E402
from bigtwo.train.rollout import Batch  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def from_the_repository(module: str, monkeypatch: pytest.MonkeyPatch):
    """A module of the repository's ``examples/`` or ``benchmarks/`` (not installed: run from the root)."""
    monkeypatch.syspath_prepend(str(ROOT))
    return importlib.import_module(module)


@pytest.fixture(scope="module")
def cluster():
    ray.init(num_cpus=2, include_dashboard=False, logging_level="error")
    yield
    ray.shutdown()


def weights(path: Path) -> dict[str, torch.Tensor]:
    return ckpt.load(path)["model"]["state_dict"]


def same_weights(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_distributed_training_learns_to_beat_random(cluster, tmp_path):
    """The learning test of ``tests/test_train.py`` on 2 rollout actors: the greedy policy's 95%
    interval lies above every random player's; speed, actors and learner share are logged."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    cfg = tiny_training_config(
        tmp_path / "runs",
        run_name="learn",
        total_timesteps=150_000,
        num_envs=256,
        num_steps=32,
        hidden_size=64,
        state_layers=2,
        pair_size=32,
        minibatch_size=1024,
        update_epochs=4,
        lr=1e-3,
        final_eval_deals=300,
        eval_opponents=["random"],
        checkpoint_every=10_000_000,
        ray_actors=2,
    )
    result = run_training(cfg, ray="local")
    assert result.actors == 2 and result.replaced_actors == 0 and result.rejected_batches == 0
    assert result.global_step >= cfg.total_timesteps
    e = result.evaluations["random"]
    assert e.beats, (e.mean_payoff, e.ci_low, e.opponent_mean_payoff, e.opponent_ci_high)
    acc = EventAccumulator(str(result.run_dir))
    acc.Reload()
    tags = set(acc.Tags()["scalars"])
    assert {"charts/sps", "charts/actors", "charts/learner_utilisation", "losses/policy"} <= tags
    assert {s.value for s in acc.Scalars("charts/actors")} == {2.0}
    assert all(0 < s.value < 1 for s in acc.Scalars("charts/learner_utilisation"))


def league_config(tmp_path: Path, **fields):
    """A tiny run on 2 actors with past snapshots and a baseline in the league, checkpointed at 2,048 steps."""
    base = dict(
        total_timesteps=4096,
        num_envs=32,
        checkpoint_every=2048,
        keep_checkpoints=0,
        snapshot_every=512,
        league_self=0.5,
        league_past=0.25,
        league_baselines=0.25,
        baselines=["random"],
        ray_actors=2,
    )
    return tiny_training_config(tmp_path / "runs", **{**base, **fields})


def test_a_killed_actor_is_replaced_and_training_completes(cluster, tmp_path):
    """``ray.kill`` of a rollout actor after the run's first checkpoint: a fresh actor takes its
    place, nothing of the dead one is taken, and the run reaches its step count."""
    cfg = league_config(tmp_path, total_timesteps=12_288)
    first = Path(cfg.runs_dir) / "tiny" / "checkpoints" / f"step_{2048:012d}.pt"
    killed: list[str] = []

    def kill_one() -> None:
        deadline = time.time() + 120
        while not first.exists() and time.time() < deadline:
            time.sleep(0.05)
        names = [n for n in ray.util.list_named_actors() if n.startswith("bigtwo-rollout-") and n.endswith("-0.0")]
        if names:
            ray.kill(ray.get_actor(names[0]), no_restart=True)
            killed.append(names[0])

    killer = threading.Thread(target=kill_one, daemon=True)
    killer.start()
    result = run_training(cfg, ray="local")
    killer.join()
    assert killed, "the actor to kill was not found"
    assert result.global_step >= cfg.total_timesteps
    assert result.replaced_actors >= 1 and result.actors == 2
    saved = ckpt.load(result.checkpoint)["resume"]["workers"]
    assert [w["incarnation"] for w in saved][0] >= 1 and saved[1]["incarnation"] == 0


def test_resume_after_the_driver_is_killed_continues_exactly(cluster, tmp_path):
    """A Ray run killed after its first checkpoint and resumed ends with the same weights and
    matches as one that was never interrupted: only the steps since the checkpoint are replayed."""
    full = league_config(tmp_path / "a")
    result = run_training(full, ray="local")
    first, last = ckpt.list_checkpoints(Path(full.runs_dir) / "tiny")[:2]
    assert last == result.checkpoint
    killed = tmp_path / "b" / "runs" / "tiny"  # the run's folder as it was at its first checkpoint
    shutil.copytree(Path(full.runs_dir) / "tiny", killed)
    (killed / "checkpoints" / last.name).unlink()
    for snap in (killed / "league").glob("snapshot_*.pt"):
        if int(snap.stem.split("_")[1]) > 2048:
            snap.unlink()
    resumed = run_training(make_config({"runs_dir": str(tmp_path / "b" / "runs")}, base=full), ray="local")
    assert resumed.global_step == result.global_step
    assert same_weights(weights(resumed.checkpoint), weights(result.checkpoint))
    a = ckpt.load(resumed.checkpoint)["resume"]["workers"]
    b = ckpt.load(result.checkpoint)["resume"]["workers"]
    for wa, wb in zip(a, b, strict=True):
        assert all(torch.equal(wa["env"][k], wb["env"][k]) for k in wa["env"])
    # the run resumes only the way it was made
    with pytest.raises(ValueError, match="resume it with --ray"):
        run_training(make_config({"total_timesteps": 8192}, base=full))


def test_too_many_actors_for_the_cluster_are_refused(cluster, tmp_path):
    cfg = tiny_training_config(tmp_path / "runs", ray_actors=3)
    with pytest.raises(ValueError, match="needs 3 CPUs, but the Ray cluster has 2"):
        run_training(cfg, ray="local")


def test_the_gate_takes_each_live_actors_batch_once():
    gate = BatchGate()
    gate.open("0.0")
    gate.open("1.0")

    def batch(actor: str, seq: int, version: int) -> Batch:
        return Batch(None, 0, {}, 0, 0.0, actor=actor, seq=seq, version=version)  # type: ignore[arg-type]

    assert gate.accept(batch("0.0", 1, 5), 5) == (True, "")
    assert not gate.accept(batch("0.0", 1, 5), 5)[0]  # delivered twice
    assert not gate.accept(batch("1.0", 1, 4), 5)[0]  # acted with old weights
    assert gate.accept(batch("1.0", 2, 5), 5)[0]
    gate.close("1.0")  # died: replaced
    assert "not in the run" in gate.accept(batch("1.0", 3, 5), 5)[1]
    assert gate.rejected == 3 and len(gate.reasons) == 3


@pytest.mark.parametrize(
    "agents",
    [["heuristic", "random", "greedy", "random"], ["heuristic", "random", "greedy", "search:simulations=4", "random"]],
)
def test_a_tournament_on_ray_is_the_local_one(cluster, agents):
    """Chunks of deals as Ray tasks: every number of the result is the local run's (the seat
    tables of a rated field included)."""
    kwargs = dict(deals=24, seed=3, chunk_deals=5, progress=False)
    local = run_tournament("taiwan", agents, workers=1, **kwargs)
    remote = run_tournament("taiwan", agents, ray="local", **kwargs)
    assert remote.to_dict(timing=False) == local.to_dict(timing=False)
    for name in ("payoff_at", "games_at", "wins_at", "tables"):
        assert np.array_equal(getattr(remote, name), getattr(local, name)), name
    assert [s.moves for s in remote.stats] == [s.moves for s in local.stats]


def test_tournament_ray_argument_is_checked():
    with pytest.raises(ValueError, match="--ray has bad value 'cluster'"):
        run_tournament("taiwan", ["random"] * 4, deals=2, ray="cluster")


def test_the_rllib_example_trains_and_plays_a_tournament(cluster, monkeypatch):
    """RLlib's PPO (new API stack) on our PettingZoo env through RLlib's PettingZoo wrapper with its
    action-masking module: a few iterations change the weights, and the module, wrapped as an
    Agent, plays only legal plays in a duplicate tournament."""
    from bigtwo.env import load_variant

    example = from_the_repository("examples.rllib_example", monkeypatch)
    POLICY, RLlibAgent, Settings, build_config, play = (  # noqa: N806 - the example's own names
        example.POLICY,
        example.RLlibAgent,
        example.Settings,
        example.build_config,
        example.play,
    )
    s = Settings(batch=256, minibatch=128, epochs=1)
    algo = build_config(s).build_algo()
    module = algo.get_module(POLICY)
    before = {k: v.detach().clone() for k, v in module.state_dict().items()}
    results = [algo.train() for _ in range(2)]
    assert results[-1]["env_runners"]["num_env_steps_sampled_lifetime"] >= 2 * s.batch
    after = algo.get_module(POLICY).state_dict()
    assert any(not torch.equal(before[k], after[k]) for k in before), "training changed no weight"
    variant = load_variant("taiwan")
    agent = RLlibAgent(variant, algo.get_module(POLICY), seed=0)
    result = play(agent, variant, "random", deals=8, seed=0)  # an illegal play would raise here
    assert result.games == 8 * 4 and result.stats[0].moves > 0
    algo.stop()


def test_the_ray_benchmark_measures_local_and_ray_training(cluster, tmp_path, monkeypatch):
    """``benchmarks/ray_bench.py`` on a tiny config: the local trainer and 1 and 2 actors each train,
    and every figure of the table is a real measurement."""
    bench = from_the_repository("benchmarks.ray_bench", monkeypatch)
    base = tiny_training_config(tmp_path / "unused", num_envs=16, num_steps=8)
    rows = bench.measure_settings(base, repeats=1, updates=1, runs_dir=str(tmp_path / "runs"))
    assert [label for label, _ in rows] == ["local trainer", "Ray, 1 actor", "Ray, 2 actors"]
    for _, m in rows:
        assert m["sps"] > 0 and m["per_actor"] > 0 and m["learner_ms_per_k"] > 0
        assert 0 < m["learner_share"] < 1 and m["overhead_ms_per_k"] >= 0
    text = bench.table(base, rows, repeats=1, updates=1)
    assert "num_envs 16, num_steps 8" in text and text.count("\n") == len(rows) + 1
