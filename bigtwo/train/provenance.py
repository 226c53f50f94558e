"""Where a trained network came from: the command, seed, steps, training time and code version.

Every checkpoint a run writes (``bigtwo.train.checkpoint``) carries a ``provenance`` dict, kept by
``bigtwo.train.export`` in the policy-only files the package ships (``bigtwo.agents.pretrained``):

| key | what |
|---|---|
| ``algo``, ``seed`` | the trainer and the run's seed |
| ``steps`` | environment steps trained when the checkpoint was written |
| ``train_seconds`` | wall time of the run's sessions up to then (all sessions of a resumed run together) |
| ``train_cpu_seconds`` | CPU time of those sessions: the training process's threads and its worker processes (``cpu_seconds``), absent in files from before it was kept |
| ``sessions`` | one entry per session (the first, then each resume), oldest first: ``code_version()`` plus ``command`` (the process's command line: its program's file name, then its arguments) and ``started`` (UTC, ISO 8601) |
| ``exported`` | added by ``bigtwo.train.export``: ``source`` (the checkpoint it came from), ``time``, and the exporting code's version |

``code_version()`` is ``{"version": bigtwo.env.__version__, "git_commit": ..., "git_dirty": ...,
"torch": torch.__version__}``; the commit is ``None`` (and ``git_dirty`` too) when the code does
not run from a git checkout, e.g. an installed wheel.

>>> p = start("ppo", 7, None)
>>> p = at(p, steps=4096, seconds=12.5)
>>> p["seed"], p["steps"], p["train_seconds"], len(p["sessions"])
(7, 4096, 12.5, 1)
>>> at(start("ppo", 7, p), steps=8192, seconds=10.0)["train_seconds"]  # a resumed run adds its sessions
22.5
>>> at(start("ppo", 7, at(p, 4096, 12.5, cpu=20.0)), 8192, 10.0, cpu=15.0)["train_cpu_seconds"]
35.0

``bigtwo.agents.pretrained.describe_provenance`` turns the dict into lines for people.
"""

from __future__ import annotations

import datetime
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import bigtwo.env
from bigtwo.layout import SOURCE_ROOT, is_checkout


def now() -> str:
    """The current UTC time, ISO 8601 to the second."""
    return datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()


def _git(*args: str) -> str | None:
    """``git ARGS`` in the source checkout, or ``None`` when that is no git checkout or git fails."""
    if not is_checkout():
        return None
    try:
        out = subprocess.run(["git", "-C", str(SOURCE_ROOT), *args], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def code_version() -> dict[str, Any]:
    """The running code: package version, git commit and whether tracked files differ from it, torch."""
    import torch

    commit = _git("rev-parse", "HEAD")
    status = _git("status", "--porcelain", "--untracked-files=no") if commit else None
    return {
        "version": bigtwo.env.__version__,
        "git_commit": commit,
        "git_dirty": None if status is None else bool(status),
        "torch": str(torch.__version__),
    }


def command_line() -> str:
    """This process's command line, its program shortened to the file name (``bigtwo train ...``), or
    to ``python -m PACKAGE`` for a package run with ``-m`` (``python -m bigtwo.cli train ...``)."""
    argv = list(sys.argv) or ["python"]
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    if Path(argv[0]).name == "__main__.py" and spec is not None and spec.name.endswith(".__main__"):
        return shlex.join(["python", "-m", spec.name.removesuffix(".__main__"), *argv[1:]])
    return shlex.join([Path(argv[0]).name or argv[0], *argv[1:]])


def start(algo: str, seed: int, previous: dict[str, Any] | None) -> dict[str, Any]:
    """The provenance of a session that starts now: a new run's, or a resumed run's on top of the
    ``previous`` checkpoint's provenance (``None``: a new run, or a checkpoint from before provenance)."""
    before = dict(previous or {})
    sessions = [*before.get("sessions", []), {**code_version(), "command": command_line(), "started": now()}]
    return {
        "algo": algo,
        "seed": int(seed),
        "steps": int(before.get("steps", 0)),
        "train_seconds": float(before.get("train_seconds") or 0.0),
        "train_cpu_seconds": float(before.get("train_cpu_seconds") or 0.0),
        "sessions": sessions,
    }


def at(session: dict[str, Any], steps: int, seconds: float, cpu: float | None = None) -> dict[str, Any]:
    """``session``'s provenance for a checkpoint after ``steps`` environment steps, ``seconds`` (and ``cpu``
    seconds of CPU time, when given) into this session."""
    made = {**session, "steps": int(steps), "train_seconds": round(session["train_seconds"] + float(seconds), 3)}
    if cpu is not None:
        made["train_cpu_seconds"] = round(session.get("train_cpu_seconds", 0.0) + float(cpu), 3)
    return made


def cpu_seconds() -> float:
    """CPU time used so far by this process (every thread) and the worker processes it has waited for
    (an evaluation's or a rollout's pool), user and system together."""
    import os

    times = os.times()
    return times.user + times.system + times.children_user + times.children_system
