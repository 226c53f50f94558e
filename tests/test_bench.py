"""``bigtwo bench`` runs and reports every figure it documents (a smoke run, not a timing test)."""

from __future__ import annotations

import json
import sys

import pytest

from bigtwo.cli import main
from bigtwo.cli.bench import CURVE, run_bench


def test_bench_json_has_every_figure(capsys) -> None:
    assert main(["bench", "--quick", "--repeats", "1", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert set(result) >= {"game", "aec", "vector", "vector_copy", "memory"}
    assert sorted(result["vector"], key=int) == ["1", "64", "1024", "4096"] and list(result["vector_copy"]) == ["1024"]
    rates = [result["game"], result["aec"], *result["vector"].values(), *result["vector_copy"].values()]
    assert all(rate > 0 for rate in rates)
    assert result["memory"]["engine_total_mib"] > result["memory"]["state_mib"] > 0
    assert "curve" not in result and "training" not in result  # only when asked


def test_bench_curve_and_training_are_printed(capsys) -> None:
    assert main(["bench", "--quick", "--repeats", "1", "--curve", "--train"]) == 0
    out = capsys.readouterr().out
    assert "cost curve" in out and "training (default: ppo" in out and "learner" in out
    settings = out.split("training (default: ppo", 1)[1].splitlines()[2:6]  # one row per setting, side by side
    labels = ["alternating, float32", "overlap, float32", "alternating, bfloat16", "overlap, bfloat16"]
    assert [row[2:30].strip() for row in settings] == labels
    assert all(float(row[30:43].replace(",", "")) > 0 for row in settings)
    assert "bfloat16 matmuls:" in out
    rows = out.split("cost curve", 1)[1].splitlines()[2 : 2 + len(CURVE)]
    assert [int(row.split()[0]) for row in rows] == list(CURVE)  # one row per batch, 1 .. 8,192
    memory = [float(row.split()[3]) for row in rows]
    assert memory == sorted(memory) and memory[-1] > 8 * memory[0]  # the engine's memory grows with the batch
    assert all(float(row.split()[1]) > 0 for row in rows)


def test_bench_search_prints_the_rollout_kernel(capsys) -> None:
    assert main(["bench", "--quick", "--repeats", "1", "--search", "--json"]) == 0
    search = json.loads(capsys.readouterr().out)["search"]
    assert set(search) == {
        "heuristic_us",
        "rollout_us",
        "legal_one_ns",
        "play_out_ns_per_play",
        "positions",
        "rollout_games",
        "endgame",
    }
    endgame = search.pop("endgame")
    assert all(value > 0 for value in search.values())
    assert search["rollout_us"] > search["heuristic_us"]  # a rollout is many decisions and plays
    assert list(endgame) == ["8", "10"]
    for figures in endgame.values():
        assert set(figures) == {"positions", "ms_per_position", "median_moves", "most_moves", "us_per_move"}
        assert all(value > 0 for value in figures.values())
    assert endgame["10"]["median_moves"] > endgame["8"]["median_moves"]  # exact trees grow with the cards
    assert main(["bench", "--quick", "--repeats", "1", "--search"]) == 0
    out = capsys.readouterr().out
    assert "search's rollout kernel" in out and "heuristic decision" in out and "legal list at the deal" in out
    assert "endgame solver" in out


def test_bench_train_without_torch_names_the_extra(monkeypatch) -> None:
    """Without torch, ``--train`` says which extra to install, before measuring anything."""
    for name in [m for m in sys.modules if m.startswith("bigtwo.train")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "torch", None)  # what an install without the train extra has
    with pytest.raises(ValueError, match=r"--train needs the train extra \(torch\)"):
        run_bench("taiwan", repeats=1, quick=True, training=True)


def test_bench_trains_the_config_it_is_given(capsys) -> None:
    """``--train-config strong`` measures the shipped networks' recipe (its wider network), not the default."""
    assert main(["bench", "--quick", "--repeats", "1", "--train", "--train-config", "strong", "--json"]) == 0
    training = json.loads(capsys.readouterr().out)["training"]
    assert training["config"] == "strong" and training["algo"] == "ppo"
    assert all(training[f"{key}env_steps_per_s"] > 0 for key, _label in training["settings"])


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--train-config", "strong"], "--train-config names the config --train measures; add --train"),
        (["--train-config", "default"], "--train-config names the config --train measures; add --train"),
        (["--train", "--train-config", "no-such-config"], "no-such-config"),
    ],
)
def test_bench_refuses_a_training_config_it_cannot_measure(argv, message, capsys) -> None:
    assert main(["bench", "--quick", "--repeats", "1", *argv]) == 2
    captured = capsys.readouterr()
    assert message in captured.err and captured.out == ""  # refused before any figure is measured
