"""Checkpoints that are not trusted: checksums, layout, whose run a file is, resume fallback,
damaged resume state, interrupted writes and league snapshots nobody needs (issue #12).

Each test starts from a copy of one real tiny run with three checkpoints (``three_checkpoints``)
and damages it the way the issue's tester did.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from conftest import tiny_training_config  # noqa: E402

from bigtwo.cli import main  # noqa: E402
from bigtwo.env import load_variant  # noqa: E402
from bigtwo.env.engine.engine import Engine  # noqa: E402
from bigtwo.env.rules.actions import action_table  # noqa: E402
from bigtwo.train import checkpoint as ckpt  # noqa: E402
from bigtwo.train import load_policy_agent, make_config, run_training  # noqa: E402


@pytest.fixture(scope="module")
def three_checkpoints(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real tiny PPO run folder with checkpoints at steps 256, 512 and 768."""
    runs = tmp_path_factory.mktemp("runs")
    run_training(tiny_training_config(runs, total_timesteps=768, checkpoint_every=256))
    return runs / "tiny"


@pytest.fixture
def run_dir(three_checkpoints: Path, tmp_path: Path) -> Path:
    """A copy of ``three_checkpoints`` to damage."""
    return Path(shutil.copytree(three_checkpoints, tmp_path / "runs" / "tiny"))


def data_offset(path: Path, entry: str) -> tuple[int, int]:
    """Where the bytes of a zip entry of a ``torch.save`` file start, and how many there are."""
    with zipfile.ZipFile(path) as z:
        info = next(i for i in z.infolist() if i.filename.endswith(entry))
    raw = path.read_bytes()
    h = info.header_offset
    name_len, extra_len = int.from_bytes(raw[h + 26 : h + 28], "little"), int.from_bytes(raw[h + 28 : h + 30], "little")
    return h + 30 + name_len + extra_len, info.file_size


def flip(path: Path, offsets: range | list[int]) -> None:
    data = bytearray(path.read_bytes())
    for i in offsets:
        data[i] ^= 0xFF
    path.write_bytes(bytes(data))


def resume_cli(run: Path, *sets: str) -> int:
    return main(["train", "--resume", str(run), "--set", "final_eval_deals=0", *(f"--set={s}" for s in sets)])


# ---------------------------------------------------------------- one file


def test_flipped_bytes_in_the_weights_fail_the_checksum(run_dir):
    path = ckpt.latest_checkpoint(run_dir)
    start, size = data_offset(path, "data/0")  # the first weight matrix of the network
    assert size >= 400
    flip(path, range(start + 100, start + 200))  # 100 bytes, as the tester did
    with pytest.raises(ValueError, match="damaged checkpoint: its contents do not match its checksum"):
        ckpt.load(path)
    with pytest.raises(ValueError, match="checksum"):
        load_policy_agent(path)


def test_every_write_carries_a_checksum_of_its_payload(run_dir):
    payload = ckpt.load(ckpt.latest_checkpoint(run_dir))
    assert payload["format"] == ckpt.FORMAT and payload["checksum"] == ckpt.digest(payload)
    changed = dict(payload, global_step=payload["global_step"] + 1)
    assert ckpt.digest(changed) != payload["checksum"]
    state = dict(payload["model"]["state_dict"])
    key = next(iter(state))
    state[key] = state[key].clone()
    state[key].view(-1)[0] += 1e-6
    assert ckpt.digest(dict(payload, model={**payload["model"], "state_dict": state})) != payload["checksum"]


@pytest.mark.parametrize("part", ["variant", "model", "algo", "config"])
def test_a_checkpoint_without_a_part_is_refused_by_name(run_dir, part):
    payload = ckpt.load(ckpt.latest_checkpoint(run_dir))
    del payload[part]
    path = ckpt.atomic_save(payload, run_dir / "partial.pt")  # a valid checksum over what is left
    with pytest.raises(ValueError, match=rf"partial.pt: damaged checkpoint: no '{part}'"):
        ckpt.load(path)
    with pytest.raises(ValueError, match=rf"no '{part}'"):
        load_policy_agent(path)


def test_a_wrong_kind_of_part_or_an_unknown_format_is_refused(run_dir):
    payload = ckpt.load(ckpt.latest_checkpoint(run_dir))
    bad = ckpt.atomic_save(dict(payload, variant="taiwan"), run_dir / "bad.pt")
    with pytest.raises(ValueError, match="'variant' is a str"):
        ckpt.load(bad)
    odd = ckpt.atomic_save(dict(payload, format="bigtwo-train/99"), run_dir / "odd.pt")
    with pytest.raises(ValueError, match="format 'bigtwo-train/99'; expected 'bigtwo-train/2'"):
        ckpt.load(odd)
    unsigned = dict(payload)
    del unsigned["checksum"]
    torch.save(unsigned, run_dir / "unsigned.pt")
    with pytest.raises(ValueError, match="has no checksum"):
        ckpt.load(run_dir / "unsigned.pt")
    with pytest.raises(ValueError, match="does not exist as a file"):
        ckpt.load(run_dir)


# ---------------------------------------------------------------- resume


def test_resume_falls_back_past_a_corrupt_newest_checkpoint(run_dir, capsys):
    step_256, step_512, step_768 = ckpt.list_checkpoints(run_dir)
    step_768.write_bytes(step_768.read_bytes()[:5000])  # truncated: a disk that filled up
    assert resume_cli(run_dir, "total_timesteps=1024") == 0
    err = capsys.readouterr().err
    assert f"skipped checkpoint {step_768.name}" in err and "not a readable checkpoint" in err
    assert f"resuming tiny from {step_512}" in err
    assert (step_768.parent / (step_768.name + ".rejected")).is_file()
    assert [int(p.stem[5:]) for p in ckpt.list_checkpoints(run_dir)] == [256, 512, 768, 1024]
    assert ckpt.load(step_768)["global_step"] == 768, "the resumed run wrote step 768 again, intact"


def test_resume_refuses_when_no_checkpoint_is_intact(run_dir):
    for path in ckpt.list_checkpoints(run_dir):
        # 256 bytes from the middle: one flipped byte may land in the zip's alignment padding, which
        # holds no data (the file then loads with its checksum intact: rightly, it is not damaged)
        middle = len(path.read_bytes()) // 2
        flip(path, range(middle, middle + 256))
    with pytest.raises(ValueError, match="none of its 3 checkpoint"):
        run_training(tiny_training_config(run_dir.parent, total_timesteps=1024))
    assert len(ckpt.list_checkpoints(run_dir)) == 3, "nothing renamed when nothing can be resumed"


def test_a_checkpoint_of_another_algo_or_run_is_not_resumed(run_dir, tmp_path, capsys):
    other_runs = tmp_path / "other"
    run_training(tiny_training_config(other_runs, algo="dmc", total_timesteps=1024, checkpoint_every=1024))
    run_training(tiny_training_config(other_runs, run_name="twin", total_timesteps=896, checkpoint_every=896))
    dmc = ckpt.latest_checkpoint(other_runs / "tiny")
    twin = ckpt.latest_checkpoint(other_runs / "twin")  # same algo and config, another run
    shutil.copy(dmc, run_dir / "checkpoints" / dmc.name)
    shutil.copy(twin, run_dir / "checkpoints" / twin.name)
    ours = ckpt.list_checkpoints(run_dir)[:3]
    assert resume_cli(run_dir, "total_timesteps=1024", "keep_checkpoints=2") == 0
    err = capsys.readouterr().err
    assert "written by a dmc run; this run trains ppo" in err and "belongs to the run 'twin'" in err
    assert f"resuming tiny from {ours[-1]}" in err
    saved = ckpt.load(ckpt.latest_checkpoint(run_dir))
    assert saved["algo"] == "ppo" and saved["config"]["algo"] == "ppo" and saved["global_step"] == 1024
    assert "algo: ppo" in (run_dir / "config.yaml").read_text()
    assert (run_dir / "checkpoints" / f"{dmc.name}.rejected").is_file()


def test_damaged_legal_lists_in_the_resume_state_are_refused(run_dir):
    path = ckpt.latest_checkpoint(run_dir)
    payload = ckpt.load(path)
    env = payload["resume"]["env"]
    g = int(torch.nonzero(env["legal_n"] > 1)[0])
    seat = int(env["current"][g])
    foreign = next(c for c in range(52) if not int(env["hands"][g, seat]) >> c & 1)
    env["legal"][g, 1] = action_table(load_variant("taiwan")).encode([foreign])  # a card the seat does not hold
    ckpt.atomic_save(payload, path)  # re-signed: only the resume state's own check can tell
    with pytest.raises(ValueError, match=f"damaged resume state: the legal plays saved for match {g}"):
        run_training(tiny_training_config(run_dir.parent, total_timesteps=1024))


def test_engine_load_state_recomputes_legal_lists_from_the_hands():
    eng = Engine("taiwan", num_matches=2, seed=5)
    saved = {k: v.copy() for k, v in eng.state._asdict().items()}
    seat = int(saved["current"][0])
    foreign = next(c for c in range(52) if not int(saved["hands"][0, seat]) >> c & 1)
    single = eng.table.encode([foreign])
    saved["legal"][0, 0] = single  # the cached list claims a card the seat does not hold
    other = Engine("taiwan", num_matches=2, seed=9)
    other.load_state(saved)
    ids, counts = other.legal_actions()
    assert single not in ids[0, : counts[0]]
    with pytest.raises(ValueError, match=f"seat {seat} cannot play .*not in hand"):
        other.step(np.array([single, ids[1, 0]]))
    before = {k: v.copy() for k, v in other.state._asdict().items()}
    broken = dict(saved, counts=saved["counts"] + 1)
    with pytest.raises(ValueError, match="match 0: its card counts are not the cards in the hands"):
        other.load_state(broken)
    with pytest.raises(ValueError, match="load_state: no hands"):
        other.load_state({k: v for k, v in saved.items() if k != "hands"})
    assert all(np.array_equal(before[k], v) for k, v in other.state._asdict().items()), "a refusal changes nothing"


# ---------------------------------------------------------------- files left behind


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_temporary_files_of_a_killed_write_are_removed(run_dir, capsys):
    stale = run_dir / "checkpoints" / f".step_000000001024.pt.tmp{dead_pid()}"
    stale.write_bytes(b"half a checkpoint")
    snap_stale = run_dir / "league" / f".snapshot_000000001024.pt.tmp{dead_pid()}"
    snap_stale.parent.mkdir(exist_ok=True)
    snap_stale.write_bytes(b"x")
    round_stale = run_dir / "expert" / f".round_001.decisions.npz.tmp{dead_pid()}"  # a round's decisions
    round_stale.parent.mkdir(exist_ok=True)
    round_stale.write_bytes(b"PK")
    run_training(tiny_training_config(run_dir.parent, total_timesteps=1024))
    assert not stale.exists() and not snap_stale.exists() and not round_stale.exists()
    assert "removed 3 temporary file(s) of interrupted writes" in capsys.readouterr().err


def test_an_interrupted_write_leaves_no_temporary_file(run_dir, monkeypatch):
    payload = ckpt.load(ckpt.latest_checkpoint(run_dir))
    target = run_dir / "checkpoints" / "step_000000009999.pt"

    def ctrl_c_halfway(obj, f):
        f.write(b"PK half a zip")
        raise KeyboardInterrupt

    monkeypatch.setattr(torch, "save", ctrl_c_halfway)
    with pytest.raises(KeyboardInterrupt):
        ckpt.atomic_save(payload, target)
    assert not target.exists() and not list(target.parent.glob(".*tmp*"))


def test_snapshots_no_kept_checkpoint_needs_are_deleted(tmp_path):
    cfg = tiny_training_config(
        tmp_path / "runs",
        total_timesteps=2048,
        checkpoint_every=512,
        keep_checkpoints=2,
        league_self=0.5,
        league_past=0.5,
        snapshot_every=256,
        max_snapshots=2,
    )
    run_training(cfg)
    run = tmp_path / "runs" / "tiny"
    assert [p.name for p in ckpt.list_checkpoints(run)] == ["step_000000001536.pt", "step_000000002048.pt"]
    snaps = sorted(p.name for p in (run / "league").glob("snapshot_*.pt"))
    # the league at 1536 holds the snapshots of 1280 and 1536; at 2048, those of 1792 and 2048
    assert snaps == [f"snapshot_{s:012d}.pt" for s in (1280, 1536, 1792, 2048)]
    # the older kept checkpoint still resumes: its league's files are there
    (run / "checkpoints" / "step_000000002048.pt").unlink()
    longer = run_training(make_config({"total_timesteps": 2560}, base=cfg))
    assert longer.global_step == 2560
