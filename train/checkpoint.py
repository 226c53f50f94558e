"""Checkpoints: one file per save, written atomically, loadable without unpickling code.

A checkpoint (``runs/<run>/checkpoints/step_<env steps>.pt``) is a ``torch.save`` dict:

| key | what |
|---|---|
| ``format`` | ``FORMAT``, the layout version |
| ``algo`` | ``ppo`` or ``dmc`` |
| ``variant`` | ``{"name": ..., "settings": Variant.to_dict()}``: the rules it was trained on, in full |
| ``config`` | the run's full ``TrainConfig`` as a dict |
| ``model`` | ``{"kwargs": constructor arguments, "state_dict": weights}`` of the ``ActionScorer`` |
| ``obs_version`` | the observation version the network reads (``bigtwo_env.observation.OBS_VERSION``) |
| ``global_step``, ``update`` | environment steps and updates done |
| ``provenance`` | the command, seed, steps, training time and code version that made it (``train.provenance``) |
| ``resume`` | what a resumed run needs besides: optimizer, RNG states, the vector env's match states, the pending decisions, the league (absent from policy-only files such as league snapshots) |

Only tensors and plain Python values are stored (NumPy arrays become tensors), so every load
uses ``torch.load(weights_only=True)``: a checkpoint file cannot run code. Writes go to a
temporary file in the same folder, are flushed to disk, then ``os.replace``d over the target,
so a run killed mid-write (``kill -9``) leaves the previous checkpoint intact.

Resume: a run whose folder already holds a checkpoint continues from its newest one (network,
optimizer, RNG states, the vector env's matches, pending decisions, league, counters), so a run
killed with ``kill -9`` loses only the steps since that checkpoint. Given the same seed, a
resumed run continues exactly as the uninterrupted one would have (``tests/test_train.py``).
Only fields that do not change what is learned may differ from the saved config on resume
(``RESUMABLE_CHANGES``: run length, time limit, logging, evaluation, device, threads);
``env_state`` and ``rng_state`` (with their ``load_`` inverses) are the resume state's parts.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from bigtwo_env.observation import OBS_VERSION

from .config import TrainConfig, make_config

if TYPE_CHECKING:
    from bigtwo_env.variant import Variant
    from bigtwo_env.vector import VectorEnv

    from .networks import ActionScorer

FORMAT = "bigtwo-train/1"
_STEP_FILE = re.compile(r"^step_(\d+)\.pt$")


def arrays_to_tensors(obj: Any) -> Any:
    """NumPy arrays (and scalars) inside dicts/lists/tuples as tensors (and Python numbers)."""
    if isinstance(obj, np.ndarray):
        return torch.from_numpy(np.ascontiguousarray(obj).copy())
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, dict):
        return {k: arrays_to_tensors(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(arrays_to_tensors(v) for v in obj)
    return obj


def tensors_to_arrays(obj: Any) -> Any:
    """The inverse of ``arrays_to_tensors`` (every tensor becomes a NumPy array)."""
    if isinstance(obj, torch.Tensor):
        return obj.numpy().copy()
    if isinstance(obj, dict):
        return {k: tensors_to_arrays(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(tensors_to_arrays(v) for v in obj)
    return obj


def policy_payload(
    algo: str,
    variant: Variant,
    cfg: TrainConfig,
    net: ActionScorer,
    step: int,
    update: int,
    provenance: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The policy part of a checkpoint (all of a league snapshot): every key of the table above but
    ``resume`` (and ``provenance`` when none is given)."""
    payload = {
        "format": FORMAT,
        "algo": algo,
        "variant": {"name": variant.name, "settings": variant.to_dict()},
        "config": cfg.to_dict(),
        "model": {
            "kwargs": dict(net.kwargs),
            "state_dict": {k: v.detach().cpu().clone() for k, v in net.state_dict().items()},
        },
        "global_step": int(step),
        "update": int(update),
        "obs_version": OBS_VERSION,
    }
    if provenance is not None:
        payload["provenance"] = provenance
    return payload


def atomic_save(payload: dict[str, Any], path: str | Path) -> Path:
    """``torch.save`` to ``path`` through a temporary file and ``os.replace``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    with open(tmp, "wb") as f:
        torch.save(payload, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    return path


def load(path: str | Path) -> dict[str, Any]:
    """A checkpoint's dict (tensors on the CPU); ``ValueError`` if it is not one of ours."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"checkpoint {str(path)!r} does not exist")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - any unreadable file gets the same clear message
        raise ValueError(f"{path}: not a readable checkpoint ({type(exc).__name__}: {exc})") from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise ValueError(f"{path}: not a bigtwo training checkpoint (expected format {FORMAT!r})")
    return payload


def checkpoint_path(run_dir: str | Path, step: int) -> Path:
    """Where the checkpoint at ``step`` environment steps goes."""
    return Path(run_dir) / "checkpoints" / f"step_{step:012d}.pt"


def list_checkpoints(run_dir: str | Path) -> list[Path]:
    """The run's checkpoints, oldest first."""
    folder = Path(run_dir) / "checkpoints"
    if not folder.is_dir():
        return []
    found = [(int(m.group(1)), p) for p in folder.iterdir() if (m := _STEP_FILE.match(p.name))]
    return [p for _, p in sorted(found)]


def latest_checkpoint(run_dir: str | Path) -> Path | None:
    """The run's newest checkpoint, or ``None``."""
    found = list_checkpoints(run_dir)
    return found[-1] if found else None


def prune(run_dir: str | Path, keep: int) -> None:
    """Delete all but the newest ``keep`` checkpoints (``keep`` 0: delete none)."""
    if keep <= 0:
        return
    for old in list_checkpoints(run_dir)[:-keep]:
        old.unlink(missing_ok=True)


# ---------------------------------------------------------------- resume state

RESUMABLE_CHANGES = {
    "total_timesteps",
    "time_limit_minutes",
    "checkpoint_every",
    "keep_checkpoints",
    "eval_every",
    "eval_deals",
    "eval_opponents",
    "final_eval_deals",
    "progress",
    "device",
    "torch_threads",
    "runs_dir",
    "run_name",
}


def check_resumable(cfg: TrainConfig, saved: dict[str, Any], path: Path) -> None:
    """``ValueError`` if ``cfg`` differs from the saved run's config in a field that matters."""
    old = make_config(saved["config"], source=str(path))
    diff = [k for k, v in cfg.to_dict().items() if k not in RESUMABLE_CHANGES and old.to_dict()[k] != v]
    if diff:
        shown = ", ".join(f"{k}: {old.to_dict()[k]!r} -> {cfg.to_dict()[k]!r}" for k in diff)
        raise ValueError(
            f"{path.parent.parent} already holds a run with another config ({shown}); resume it with "
            f"`bigtwo train --resume {path.parent.parent}` or choose another run_name"
        )


def env_state(venv: VectorEnv) -> dict[str, np.ndarray]:
    """Every array of the vector env's matches."""
    return {name: arr.copy() for name, arr in venv.engine.state._asdict().items()}


def load_env_state(venv: VectorEnv, state: dict[str, np.ndarray]) -> None:
    """Put back what ``env_state`` saved (the matches continue where they were)."""
    for name, arr in venv.engine.state._asdict().items():
        arr[...] = np.asarray(state[name])


def rng_state(**generators: Any) -> dict[str, Any]:
    """States of NumPy generators and torch generators (and torch's global RNG)."""
    out: dict[str, Any] = {"torch": torch.get_rng_state()}
    for name, g in generators.items():
        out[name] = g.bit_generator.state if isinstance(g, np.random.Generator) else g.get_state()
    return out


def load_rng_state(state: dict[str, Any], **generators: Any) -> None:
    torch.set_rng_state(state["torch"])
    for name, g in generators.items():
        if isinstance(g, np.random.Generator):
            g.bit_generator.state = state[name]
        else:
            g.set_state(state[name])
