"""Shared pytest settings: ``slow`` tests are skipped unless asked for.

The ``slow`` marker is declared in pyproject.toml. A default run skips every test marked with
it; ``pytest -m slow`` (or any ``-m`` expression that names ``slow``) or ``pytest --runslow``
runs them.

``NAMED_VARIANTS``: the five named variants that ship, sorted as ``bigtwo.env.variant_names()``
returns them (``tests/test_variants.py`` checks that they are exactly the shipped ones); every
test that covers each named variant takes them from here (``from conftest import NAMED_VARIANTS``).

``play_agent(game, agent)``: one move of a ``Game`` chosen by an agent (tests that play whole
matches with agents import it: ``from conftest import play_agent``).

Fixtures for the shipped trained agent (``strong``): ``trained_run`` (a real tiny training
run), ``strong_dir`` (its export as ``taiwan.pt`` in a folder ``BIGTWO_PRETRAINED_DIR`` points
at) and ``no_strong`` (an empty such folder).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]

NAMED_VARIANTS = ("hong-kong", "japan", "online-cn", "pusoy-dos", "taiwan")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runslow", action="store_true", default=False, help="also run tests marked slow")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--runslow") or "slow" in (config.getoption("-m") or ""):
        return
    skip = pytest.mark.skip(reason="slow: run with -m slow or --runslow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _exclusive_under_xdist(request: pytest.FixtureRequest) -> Iterator[None]:
    """Under pytest-xdist (``-n 2``, the default), a test marked ``exclusive`` (one that measures the
    server's timing, e.g. a live room's pace while replays run) has the machine to itself: it waits
    for the other workers' current tests to end, and they start none while it runs. Every other test
    holds a shared lock. A gate file keeps an exclusive test from waiting behind a stream of shared ones."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    try:
        import fcntl
    except ImportError:  # no flock (Windows): the workers are not coordinated
        worker = None
    if not worker:
        yield
        return
    base = Path(tempfile.gettempdir()) / f"bigtwo-tests-{os.environ.get('PYTEST_XDIST_TESTRUNUID', 'run')}"
    exclusive = request.node.get_closest_marker("exclusive") is not None
    with open(f"{base}.gate", "a+") as gate, open(f"{base}.lock", "a+") as lock:
        if exclusive:
            fcntl.flock(gate, fcntl.LOCK_EX)
            fcntl.flock(lock, fcntl.LOCK_EX)
        else:
            fcntl.flock(gate, fcntl.LOCK_SH)
            fcntl.flock(lock, fcntl.LOCK_SH)
            fcntl.flock(gate, fcntl.LOCK_UN)
        try:
            yield
        finally:
            with contextlib.suppress(OSError):
                fcntl.flock(lock, fcntl.LOCK_UN)
                fcntl.flock(gate, fcntl.LOCK_UN)


def play_agent(game: Any, agent: Any) -> list[str]:
    """Let ``agent`` (anything with ``act(obs, legal_ids, legal_counts)``) choose and play for the
    seat to act of ``game`` (a ``bigtwo.env.Game``); returns the cards played (``[]``: a pass)."""
    ids, counts = game.engine.legal_actions()
    action = int(agent.act(game.engine.observe(), ids, counts)[0])
    game.play_action(action)
    return game.cards_of(action)


# a small budget for a few quick moves of any agent: the first of these budgets it takes (rollouts or
# guesses: strong takes both, one search at a time), and top_k where it takes it
QUICK_BUDGETS = ("simulations=4", "samples=2")
QUICK_TOP_K = "top_k=2"


def quick_agents(network: bool = True) -> list[str]:
    """Every agent declared in the registry (``bigtwo.agents.registry.SPECS``, in declared order) as a
    name with a small budget for the options it takes (``QUICK_BUDGETS``, ``QUICK_TOP_K``): a new agent
    is here by its declaration alone. ``network=False``: only the agents that load no trained network
    (no ``.pt`` part: no torch)."""
    from bigtwo.agents.registry import SPECS

    names = []
    for spec in SPECS:
        if not network and any(isinstance(target, str) for target in spec.parts.values()):
            continue
        takes = spec.option_names()
        quick = [item for item in QUICK_BUDGETS if item.partition("=")[0] in takes][:1]
        quick += [QUICK_TOP_K] if QUICK_TOP_K.partition("=")[0] in takes else []
        names.append(f"{spec.name}:{','.join(quick)}" if quick else spec.name)
    return names


def tiny_training_config(runs_dir: Path, **fields: Any) -> Any:
    """A PPO config on taiwan that trains in about a second (the trainers' real code, tiny sizes)."""
    from bigtwo.train import make_config

    base: dict[str, Any] = dict(
        runs_dir=str(runs_dir),
        run_name="tiny",
        total_timesteps=256,
        num_envs=8,
        num_steps=16,
        hidden_size=16,
        state_layers=1,
        pair_size=8,
        minibatch_size=64,
        update_epochs=1,
        eval_every=0,
        final_eval_deals=0,
        checkpoint_every=256,
        keep_checkpoints=0,
        progress=False,
        torch_threads=1,
        device="cpu",
        league_self=1.0,
        league_past=0.0,
        league_baselines=0.0,
    )
    base.update(fields)
    return make_config(base, source="test")


@pytest.fixture(scope="session")
def trained_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of a real, tiny training run (skipped without torch): what ``bigtwo.train.export`` ships."""
    pytest.importorskip("torch")
    from bigtwo.train import run_training

    return run_training(tiny_training_config(tmp_path_factory.mktemp("runs"))).run_dir


@pytest.fixture
def strong_dir(trained_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A pretrained folder holding ``taiwan.pt`` exported from ``trained_run``, set as ``BIGTWO_PRETRAINED_DIR``."""
    from bigtwo.agents.pretrained import ENV_VAR
    from bigtwo.train.export import export_policy

    folder = tmp_path / "pretrained"
    export_policy(trained_run, out_dir=folder)
    monkeypatch.setenv(ENV_VAR, str(folder))
    return folder


@pytest.fixture
def no_strong(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty pretrained folder set as ``BIGTWO_PRETRAINED_DIR``: no variant has weights."""
    from bigtwo.agents.pretrained import ENV_VAR

    folder = tmp_path / "no_pretrained"
    folder.mkdir()
    monkeypatch.setenv(ENV_VAR, str(folder))
    return folder


# ---------------------------------------------------------------- the kit as a package (tests/test_wheel.py, test_package.py)


@pytest.fixture(scope="session")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sdist and the wheel, built by ``python -m build`` from the checkout (no isolation: no downloads)."""
    pytest.importorskip("build")
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return out


@pytest.fixture(scope="session")
def fresh_venv(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new virtualenv with the wheel installed (its console script included); returns its folder."""
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    site = next((venv / "lib").glob("python3*/site-packages"))
    deps = next(p for p in map(Path, sys.path) if p.name == "site-packages" and (p / "numpy").is_dir())
    (site / "zz_dependencies.pth").write_text(f"{deps}\n", encoding="utf-8")  # numpy, torch, ... not the kit
    wheel = next(dist.glob("bigtwo-*.whl"))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(venv / "bin" / "python"),
            "install",
            "-q",
            "--no-deps",
            str(wheel),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return venv
