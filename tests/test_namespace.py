"""One import name: the kit installs ``bigtwo`` only, so a user's own ``train.py``, ``agents.py``,
``arena.py`` or ``env.py`` breaks nothing, and no module of the kit is ever imported under two names.

The scripts run from a folder outside the repository, as a user's project would: the kit is found
through its install (the virtualenv's editable install here, a wheel elsewhere), never through the
current folder.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
KIT_FOLDERS = ("bigtwo", "bigtwo_env", "agents", "arena", "train", "bigtwo_web", "configs")
USER_MODULES = ("train", "agents", "arena", "env", "bigtwo_env", "bigtwo_web")  # names users give their own files

USER_SCRIPT = """
import json, sys
import gymnasium
import numpy as np
import train, agents, arena, env  # the user's own modules, found first in this folder
assert train.MINE and agents.MINE and arena.MINE and env.MINE

from bigtwo.agents import make_agent
from bigtwo.env import load_variant

strong = make_agent("strong", load_variant("hong-kong"))
gym_env = gymnasium.make("bigtwo/BigTwo-v1", variant="taiwan", opponents="heuristic")
obs, info = gym_env.reset(seed=0)
obs, reward, terminated, truncated, info = gym_env.step(int(np.flatnonzero(obs["action_mask"])[0]))
print(json.dumps({"strong": type(strong).__name__, "train": train.__file__}))
"""


@pytest.fixture()
def user_folder(tmp_path: Path) -> Path:
    """A user's project folder outside the repository, with modules named like the kit's old top-level names."""
    for name in USER_MODULES:
        (tmp_path / f"{name}.py").write_text(f"MINE = True  # the user's own {name}.py\n", encoding="utf-8")
    return tmp_path


def _env_without_the_checkout() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return env


def test_a_users_own_train_agents_arena_and_env_modules_break_nothing(user_folder: Path) -> None:
    pytest.importorskip("torch")  # strong plays a trained network
    script = user_folder / "my_experiment.py"
    script.write_text(USER_SCRIPT, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)], cwd=user_folder, capture_output=True, text=True, env=_env_without_the_checkout()
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert '"train": "' + str(user_folder / "train.py") in done.stdout  # the user's module, untouched
    tournament = subprocess.run(
        [
            sys.executable,
            "-m",
            "bigtwo.cli",
            "tournament",
            "--agents",
            "heuristic,random,random,random",
            "--deals",
            "4",
            "--workers",
            "1",
            "--quiet",
            "--json",
            "--seed",
            "1",
        ],
        cwd=user_folder,
        capture_output=True,
        text=True,
        env=_env_without_the_checkout(),
    )
    assert tournament.returncode == 0, tournament.stderr[-3000:]
    assert '"heuristic"' in tournament.stdout


def test_no_module_is_imported_under_two_names() -> None:
    """Import every module of the kit (the optional extras' where installed), then check ``sys.modules``:
    each source file is loaded once, under its ``bigtwo.`` name, and no old top-level name is loaded."""
    import bigtwo

    skipped = []
    for info in pkgutil.walk_packages(bigtwo.__path__, "bigtwo.", onerror=skipped.append):
        if info.name.endswith("__main__"):
            continue
        try:
            importlib.import_module(info.name)
        except ImportError as exc:  # an optional extra not installed (ray, starlette...)
            skipped.append((info.name, str(exc)))
    kit = [(ROOT / folder).resolve() for folder in KIT_FOLDERS]
    by_file: dict[str, list[str]] = {}
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if path and any(Path(path).resolve().is_relative_to(folder) for folder in kit):
            by_file.setdefault(str(Path(path).resolve()), []).append(name)
    twice = {path: names for path, names in by_file.items() if len(names) > 1}
    assert not twice, twice
    assert all(names[0].startswith("bigtwo") for names in by_file.values()), by_file
    old = sorted(
        n
        for n in sys.modules
        if n.split(".")[0] in {"bigtwo_env", "agents", "arena", "train", "bigtwo_web", "bigtwo_cli", "bigtwo_configs"}
    )
    assert not old, old
    assert len(by_file) > 90  # the walk reached the whole kit


@pytest.mark.parametrize(
    ("folder", "package"),
    [
        ("agents", "bigtwo.agents"),
        ("arena", "bigtwo.arena"),
        ("train", "bigtwo.train"),
        ("configs", "bigtwo.configs"),
        ("bigtwo_env", "bigtwo.env"),
        ("bigtwo_web", "bigtwo.web"),
    ],
)
def test_a_folder_imported_by_its_bare_name_from_the_root_fails_naming_the_bigtwo_import(
    folder: str, package: str
) -> None:
    """From the repository root (a notebook or a script started there), ``import agents.registry`` would
    load the files a second time beside ``bigtwo.agents.registry``: it fails at once instead."""
    code = f"import {folder}" + (".registry" if folder == "agents" else "")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError:") and f"import {package} instead" in last, done.stderr[-2000:]
    assert (ROOT / folder).resolve() == ROOT.joinpath(*package.split("."))  # the top-level link leads into bigtwo/


def test_every_module_is_loaded_from_a_file_git_knows() -> None:
    """Tracebacks, coverage and ``git blame`` name the same path: each module's ``__file__`` is the real
    file under ``bigtwo/``, tracked by git (no link in the path), and the one repository root is the checkout."""
    import bigtwo.agents.registry
    import bigtwo.env.engine.jit
    from bigtwo.layout import SOURCE_ROOT, is_checkout

    assert SOURCE_ROOT == ROOT
    for module in (bigtwo.agents.registry, bigtwo.env.engine.jit):
        path = Path(module.__file__ or "")
        assert path == path.resolve() and path.is_relative_to(ROOT / "bigtwo"), path
    if not is_checkout():
        pytest.skip("not a git checkout")
    tracked = subprocess.run(
        ["git", "ls-files", "--error-unmatch", "bigtwo/agents/registry.py", "bigtwo/env/engine/jit.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert tracked.returncode == 0, tracked.stderr
