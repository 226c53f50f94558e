"""The kit as a user installs it from a package (the ``dist`` and ``fresh_venv`` fixtures: tests/conftest.py): ``python -m build`` makes a wheel and an sdist
that carry the shipped networks, the configs and the web page, and the wheel, installed into a
fresh virtualenv outside the repository, trains, plays ``strong``, makes the Gymnasium env and
serves the web table's page.

The fresh virtualenv takes the kit from the wheel only; its dependencies (numpy, numba, torch,
...) come from the test run's own environment through a path file, so the test downloads nothing.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tarfile
import time
import urllib.request
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = (
    "bigtwo/agents/pretrained/hong-kong.pt",
    "bigtwo/agents/pretrained/japan.pt",
    "bigtwo/agents/pretrained/online-cn.pt",
    "bigtwo/agents/pretrained/pusoy-dos.pt",
    "bigtwo/agents/pretrained/taiwan.pt",
    "bigtwo/agents/pretrained/scratch/hong-kong.pt",
    "bigtwo/agents/pretrained/scratch/japan-chains.pt",
    "bigtwo/agents/pretrained/scratch/taiwan.pt",
    "bigtwo/agents/pretrained/belief/hong-kong.pt",
    "bigtwo/configs/train/expert.yaml",
    "bigtwo/configs/train/default.yaml",
    "bigtwo/configs/variants/taiwan.yaml",
    "bigtwo/web/page/index.html",
    "bigtwo/web/page/app.js",
    "bigtwo/py.typed",
)


def test_the_wheel_and_the_sdist_carry_the_networks_configs_and_page(dist: Path) -> None:
    wheel = zipfile.ZipFile(next(dist.glob("bigtwo-*.whl")))
    names = set(wheel.namelist())
    assert all(path in names for path in SHIPPED), [p for p in SHIPPED if p not in names]
    assert {n.split("/")[0] for n in names} - {"bigtwo"} == {f"bigtwo-{_version()}.dist-info"}
    with tarfile.open(next(dist.glob("bigtwo-*.tar.gz"))) as sdist:
        members = {m.name.split("/", 1)[1] for m in sdist.getmembers() if "/" in m.name}
    assert all(path in members for path in SHIPPED)
    assert "pyproject.toml" in members and "README.md" in members


def _version() -> str:
    import bigtwo

    return bigtwo.__version__


def _run(venv: Path, args: list[str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


def test_the_installed_wheel_plays_strong_and_makes_the_gymnasium_env(fresh_venv: Path, tmp_path: Path) -> None:
    pytest.importorskip("torch")
    code = (
        "import json, gymnasium, numpy as np, bigtwo\n"
        "from bigtwo.agents import make_agent\n"
        "from bigtwo.env import Game\n"
        "game = Game('hong-kong', seed=1)\n"
        "play = make_agent('strong:simulations=8', game.variant, seed=0).choose(game)\n"
        "env = gymnasium.make('bigtwo.env:bigtwo/BigTwo-v1', variant='taiwan', opponents='heuristic')\n"
        "obs, info = env.reset(seed=0)\n"
        "env.step(int(np.flatnonzero(obs['action_mask'])[0]))\n"
        "print(json.dumps({'where': bigtwo.__file__, 'play': play}))\n"
    )
    done = _run(fresh_venv, [str(fresh_venv / "bin" / "python"), "-c", code], tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["where"].startswith(str(fresh_venv)), "imported the checkout instead of the wheel"
    assert out["play"]


def test_the_installed_wheel_writes_a_house_rule_from_a_variant(fresh_venv: Path, tmp_path: Path) -> None:
    """The docs' house-rule example works without a checkout: a variant printed as YAML, edited by --rule, loads."""
    bigtwo = str(fresh_venv / "bin" / "bigtwo")
    args = ["variants", "japan", "--rule", "pair_chain=true", "--rule", "name=japan-chains", "--yaml"]
    written = _run(fresh_venv, [bigtwo, *args], tmp_path)
    assert written.returncode == 0, written.stderr[-3000:]
    (tmp_path / "japan-chains.yaml").write_text(written.stdout, encoding="utf-8")
    shown = _run(fresh_venv, [bigtwo, "variants", "japan-chains.yaml"], tmp_path)
    assert shown.returncode == 0, shown.stderr[-3000:]
    assert shown.stdout.startswith("japan-chains") and re.search(r"pair_chain\s+True", shown.stdout)


def test_the_installed_wheel_trains_a_tiny_run(fresh_venv: Path, tmp_path: Path) -> None:
    pytest.importorskip("torch")
    sets = {
        "runs_dir": tmp_path / "runs",
        "run_name": "tiny",
        "total_timesteps": 256,
        "num_envs": 8,
        "num_steps": 16,
        "hidden_size": 16,
        "pair_size": 8,
        "final_eval_deals": 0,
        "eval_every": 0,
        "progress": "false",
        "device": "cpu",
        "imitate_decisions": 256,
    }
    args = [str(fresh_venv / "bin" / "bigtwo"), "train", *(f"--set={k}={v}" for k, v in sets.items())]
    done = _run(fresh_venv, args, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert list((tmp_path / "runs" / "tiny" / "checkpoints").glob("*.pt"))


def test_the_installed_wheel_serves_the_web_tables_page(fresh_venv: Path, tmp_path: Path) -> None:
    pytest.importorskip("starlette")
    from web_server import free_port

    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    proc = subprocess.Popen(
        [str(fresh_venv / "bin" / "bigtwo"), "serve", "--port", str(port), "--db", str(tmp_path / "rooms.db")],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**env, "PYTHONUNBUFFERED": "1"},
    )
    try:
        first = proc.stdout.readline() if proc.stdout else ""
        assert "http://" in first, first
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as res:
                    page = res.read().decode()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        assert "<html" in page.lower() and "app.js" in page
    finally:
        proc.terminate()
        proc.communicate(timeout=30)
