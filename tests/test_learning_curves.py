"""``benchmarks.learning_curves``: the picture of training runs' leads over a fixed opponent, read
from their TensorBoard logs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import tiny_training_config

from benchmarks.learning_curves import curves_figure, lead_curve, main, training_minutes
from bigtwo.train import run_training

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    runs = tmp_path_factory.mktemp("curves") / "runs"
    cfg = tiny_training_config(
        runs,
        total_timesteps=1024,
        num_envs=16,
        hidden_size=32,
        pair_size=16,
        update_epochs=1,
        eval_every=512,
        eval_deals=4,
        final_eval_deals=6,
        eval_opponents=["random"],
    )
    run_training(cfg)
    return Path(runs) / "tiny"


def test_the_curve_is_the_lead_at_each_evaluation_step(run_dir):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    steps, minutes, lead = lead_curve(run_dir, "random")
    acc = EventAccumulator(str(run_dir))
    acc.Reload()
    ours = {e.step: e.value for e in acc.Scalars("eval/random/mean_payoff")}
    theirs = {e.step: e.value for e in acc.Scalars("eval/random/opponent_mean_payoff")}
    assert list(steps) == sorted(ours) and len(steps) >= 2  # one point a step: the final evaluation's
    assert np.allclose(lead, [ours[s] - theirs[s] for s in steps])
    assert np.all(np.diff(minutes) >= 0) and minutes[0] >= 0

    fig = curves_figure([run_dir], "random", {"tiny": "a tiny run"})
    by_step, by_time = fig.axes
    line = by_step.get_lines()[0]
    assert line.get_label() == "a tiny run"
    assert np.allclose(line.get_xdata(), steps / 1e6) and np.allclose(line.get_ydata(), lead)
    assert np.allclose(by_time.get_lines()[0].get_xdata(), minutes)


def test_minutes_trained_leave_out_the_pauses_between_sittings():
    """A run resumed an hour after it stopped: its minutes count its two sittings only."""
    first = [0.0, 30.0, 60.0, 120.0]  # seconds: two minutes of training
    second = [3720.0, 3780.0, 3840.0]  # resumed an hour later: two minutes more
    minutes = training_minutes(first + second, [60.0, 120.0, 3720.0, 3840.0])
    assert np.allclose(minutes, [1.0, 2.0, 2.0, 4.0])
    # a silence shorter than the pause limit (a long evaluation) is training time
    assert np.allclose(training_minutes([0.0, 240.0, 300.0], [300.0]), [5.0])
    assert np.allclose(training_minutes([0.0, 240.0, 300.0], [300.0], pause=3.0), [1.0])


def test_the_command_writes_the_picture_and_names_bad_input(run_dir, tmp_path, capsys):
    out = tmp_path / "pics" / "curves.png"
    main([str(run_dir), "--opponent", "random", "--label", "tiny=tiny run", "--out", str(out)])
    assert out.read_bytes().startswith(PNG)
    with pytest.raises(SystemExit) as err:
        main([str(run_dir), "--opponent", "greedy", "--out", str(out)])
    assert err.value.code == 2 and "no evaluations against 'greedy'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([str(run_dir), "--opponent", "random", "--label", "tiny", "--out", str(out)])
    assert "--label wants RUN=TEXT" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([str(run_dir), "--opponent", "random", "--out", str(tmp_path / "curves.bmp")])
    assert "the file must end in .png" in capsys.readouterr().err


def test_each_evaluation_logs_the_wall_and_cpu_minutes_trained(run_dir):
    """Time to strength is the figure: beside each evaluation the run logs how long it has trained, by the
    clock and in CPU time (every thread and worker process), and the checkpoint's provenance keeps both."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    from bigtwo.train import checkpoint as ckpt

    acc = EventAccumulator(str(run_dir))
    acc.Reload()
    evaluated = sorted({e.step for e in acc.Scalars("eval/random/mean_payoff")})
    for tag in ("time/wall_minutes", "time/cpu_minutes"):
        logged = {e.step: e.value for e in acc.Scalars(tag)}
        assert sorted(logged) == evaluated
        values = [logged[s] for s in evaluated]
        assert values[0] > 0 and np.all(np.diff(values) >= 0), values
    steps, cpu_minutes, _ = lead_curve(run_dir, "random", by="cpu")
    assert list(steps) == evaluated and np.all(cpu_minutes > 0)
    made = ckpt.load(ckpt.latest_checkpoint(run_dir))["provenance"]
    assert made["train_cpu_seconds"] > 0 and made["train_seconds"] > 0
