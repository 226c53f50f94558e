"""Checkpoints: one file per save, written atomically, loadable without unpickling code.

A checkpoint (``runs/<run>/checkpoints/step_<env steps>.pt``) is a ``torch.save`` dict:

| key | what |
|---|---|
| ``format`` | ``FORMAT``, the layout version |
| ``checksum`` | SHA-256 of everything else in the file (``digest``), added by ``atomic_save`` |
| ``algo`` | ``ppo`` or ``dmc`` |
| ``variant`` | ``{"name": ..., "settings": Variant.to_dict()}``: the rules it was trained on, in full |
| ``config`` | the run's full ``TrainConfig`` as a dict |
| ``model`` | ``{"kwargs": constructor arguments, "state_dict": weights}`` of the ``ActionScorer`` |
| ``obs_version`` | the observation version the network reads (``bigtwo.env.engine.observation.OBS_VERSION``) |
| ``global_step``, ``update`` | environment steps and updates done |
| ``provenance`` | the command, seed, steps, training time and code version that made it (``bigtwo.train.provenance``) |
| ``run`` | ``{"name": ..., "id": ...}``: the run that wrote it (its folder's ``run_id`` file); absent from exported files |
| ``resume`` | what a resumed run needs besides: optimizer, RNG states, the vector env's match states, the pending decisions, the league (absent from policy-only files such as league snapshots); a run on Ray holds the last four per rollout actor, under ``workers`` |

Only tensors and plain Python values are stored (NumPy arrays become tensors), so every load
uses ``torch.load(weights_only=True)``: a checkpoint file cannot run code. Writes go to a
temporary file in the same folder (``.<name>.tmp<pid>``), are flushed to disk, then
``os.replace``d over the target, so a run killed mid-write (``kill -9``) leaves the previous
checkpoint intact; ``clean_temporary`` removes what such a kill left behind.

``load`` trusts nothing it reads: the file must unpickle, carry a known ``format``, match its
``checksum`` (a flipped byte anywhere in the weights is caught) and have the layout above; any
fault is a ``ValueError`` naming the file and what is wrong. Files of format ``bigtwo-train/1``
(before checksums) load without the checksum test. ``check_belongs`` tells whether a checkpoint
is one of a given run's (its algo and run id), and ``find_resumable`` picks the newest checkpoint
of a run folder that is intact and the run's own, with the reason each newer one was skipped.

Resume: a run whose folder already holds a checkpoint continues from its newest intact one (network,
optimizer, RNG states, the vector env's matches, pending decisions, league, counters), so a run
killed with ``kill -9`` loses only the steps since that checkpoint. Given the same seed, a
resumed run continues exactly as the uninterrupted one would have (``tests/test_train.py``).
Only fields that do not change what is learned may differ from the saved config on resume
(``RESUMABLE_CHANGES``: run length (steps, expert rounds), time limit, logging, evaluation, device, threads, overlap, precision);
``env_state`` and ``rng_state`` (with their ``load_`` inverses) are the resume state's parts.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from bigtwo.env.engine.observation import OBS_VERSION
from bigtwo.env.files import atomic_write
from bigtwo.train.config import ALGOS, TrainConfig, make_config

if TYPE_CHECKING:
    from bigtwo.env.envs.vector import VectorEnv
    from bigtwo.env.rules.variant import Variant
    from bigtwo.train.networks import ActionScorer

FORMAT = "bigtwo-train/2"
UNCHECKED_FORMATS = ("bigtwo-train/1",)  # written before checksums: loaded without that test
_STEP_FILE = re.compile(r"^step_(\d+)\.pt$")
_TEMP_FILE = re.compile(r"^\..+\.tmp(\d+)$")  # what atomic_write writes before its os.replace
RUN_ID_FILE = "run_id"  # in a run folder: the id its checkpoints carry under ``run``
REJECTED = ".rejected"  # suffix of a checkpoint that a resume skipped (kept, never loaded again)
POLICY_LAYOUT = {
    "format": str,
    "algo": str,
    "variant": Mapping,
    "config": Mapping,
    "model": Mapping,
    "global_step": int,
    "update": int,
    "obs_version": int,
}
"""The policy part of every checkpoint, key -> type, in the order written (``policy_payload``): all of a
league snapshot, and what an exported file keeps (``bigtwo.train.export``). ``load`` checks every key but
those in ``UNRECORDED``."""
UNRECORDED = ("obs_version",)  # absent from files made before it was recorded (``check_obs_version`` reads 0)
RESUME_KEYS = ("optimizer", "rng")  # the learner's; then the rollouts' (WORKER_KEYS, or "workers" on Ray)
WORKER_KEYS = ("env", "store", "league", "rng", "episode_length")  # a bigtwo.train.rollout.RolloutWorker's state


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


def digest(payload: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of every key and value of ``payload`` but ``checksum``: tensors by dtype, shape
    and bytes, plain values by type and value, in the dicts' own order (which a save keeps)."""
    h = hashlib.sha256()
    _feed(h, {k: v for k, v in payload.items() if k != "checksum"})
    return h.hexdigest()


def _feed(h: Any, obj: Any) -> None:
    """Add ``obj`` to the hash ``h``: a type tag, a length where one is needed, the value."""
    if isinstance(obj, torch.Tensor):
        t = obj.detach().cpu().contiguous().reshape(-1)
        h.update(f"T{t.dtype}{tuple(obj.shape)}".encode())
        if t.numel():
            h.update(t.view(torch.uint8).numpy())
    elif isinstance(obj, Mapping):
        h.update(f"D{len(obj)}".encode())
        for k, v in obj.items():
            _feed(h, k)
            _feed(h, v)
    elif isinstance(obj, (list, tuple)):
        h.update(f"L{len(obj)}".encode())
        for v in obj:
            _feed(h, v)
    elif isinstance(obj, str):
        data = obj.encode("utf-8", "surrogatepass")
        h.update(f"S{len(data)}:".encode() + data)
    elif isinstance(obj, bytes):
        h.update(f"Y{len(obj)}:".encode() + obj)
    elif isinstance(obj, bool) or obj is None:
        h.update(f"B{obj}".encode())
    elif isinstance(obj, int):
        h.update(f"I{obj};".encode())
    elif isinstance(obj, float):
        h.update(f"F{obj.hex()};".encode())
    else:
        text = repr(obj).encode()
        h.update(f"R{len(text)}:".encode() + text)


def atomic_save(payload: dict[str, Any], path: str | Path) -> Path:
    """``torch.save`` ``payload`` with its ``checksum`` to ``path`` through a temporary file and
    ``os.replace`` (``atomic_write``)."""
    signed = {k: v for k, v in payload.items() if k != "checksum"}
    signed["checksum"] = digest(signed)
    return atomic_write(path, lambda f: torch.save(signed, f))


def load(path: str | Path) -> dict[str, Any]:
    """A checkpoint's dict (tensors on the CPU). ``ValueError`` naming the file and the fault if it
    is missing, unreadable, of an unknown format, fails its checksum or lacks a part (see the
    module docstring)."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"checkpoint {str(path)!r} does not exist" + (" as a file" if path.exists() else ""))
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - any unreadable file gets the same clear message
        raise ValueError(f"{path}: not a readable checkpoint ({type(exc).__name__}: {exc})") from None
    if not isinstance(payload, dict) or payload.get("format") not in (FORMAT, *UNCHECKED_FORMATS):
        found = payload.get("format") if isinstance(payload, dict) else type(payload).__name__
        raise ValueError(f"{path}: not a bigtwo training checkpoint (format {found!r}; expected {FORMAT!r})")
    if "checksum" in payload or payload["format"] == FORMAT:
        if not isinstance(payload.get("checksum"), str):
            raise ValueError(f"{path}: damaged checkpoint: it has no checksum (format {FORMAT!r} files carry one)")
        if payload["checksum"] != digest(payload):
            raise ValueError(f"{path}: damaged checkpoint: its contents do not match its checksum")
    _check_layout(payload, path)
    return payload


def _check_layout(payload: dict[str, Any], path: Path) -> None:
    """``ValueError`` if a policy part (``POLICY_LAYOUT``) is missing or of the wrong kind."""
    missing = [k for k in POLICY_LAYOUT if k not in payload and k not in UNRECORDED]
    if missing:
        raise ValueError(
            f"{path}: damaged checkpoint: no {', '.join(map(repr, missing))} "
            f"(a checkpoint holds {', '.join(POLICY_LAYOUT)})"
        )
    for key, kind in POLICY_LAYOUT.items():
        if key not in payload:
            continue  # one of UNRECORDED
        value = payload[key]
        if not isinstance(value, kind) or isinstance(value, bool):
            raise ValueError(f"{path}: damaged checkpoint: {key!r} is a {type(value).__name__}")
    if payload["algo"] not in ALGOS:
        raise ValueError(f"{path}: damaged checkpoint: algo {payload['algo']!r} is not one of {', '.join(ALGOS)}")
    variant, model = payload["variant"], payload["model"]
    if not isinstance(variant.get("name"), str) or not isinstance(variant.get("settings"), Mapping):
        raise ValueError(f"{path}: damaged checkpoint: 'variant' needs a name and its settings")
    weights = model.get("state_dict")
    if not isinstance(model.get("kwargs"), Mapping) or not isinstance(weights, Mapping):
        raise ValueError(f"{path}: damaged checkpoint: 'model' needs its kwargs and state_dict")
    if not all(isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in weights.items()):
        raise ValueError(f"{path}: damaged checkpoint: the model's state_dict holds something other than tensors")
    if payload["global_step"] < 0 or payload["update"] < 0:
        raise ValueError(f"{path}: damaged checkpoint: negative step counters")


def check_belongs(payload: dict[str, Any], path: Path, algo: str | None, run_id: str | None) -> None:
    """``ValueError`` if the checkpoint ``payload`` (read from ``path``) is not one of the run that
    trains ``algo`` with id ``run_id`` (``None``: not checked), or holds no resume state."""
    if algo is not None and payload["algo"] != algo:
        raise ValueError(f"{path}: written by a {payload['algo']} run; this run trains {algo}")
    owner = payload.get("run")
    if run_id is not None and isinstance(owner, Mapping) and owner.get("id") != run_id:
        raise ValueError(f"{path}: belongs to the run {owner.get('name')!r} (id {owner.get('id')}), not this one")
    resume = payload.get("resume")
    missing = [k for k in RESUME_KEYS if not isinstance(resume, Mapping) or k not in resume]
    if not missing and isinstance(resume, Mapping):  # the second: implied by the first
        workers = resume.get("workers")
        if isinstance(workers, list):  # a run on Ray: one state per rollout actor
            missing = [f"workers[{i}].{k}" for i, w in enumerate(workers) for k in WORKER_KEYS if k not in w]
        else:
            missing = [k for k in WORKER_KEYS if k not in resume]
    if missing:
        raise ValueError(f"{path}: holds no resume state ({', '.join(missing)} missing): a policy-only file")


def find_resumable(
    run_dir: str | Path, algo: str | None, run_id: str | None
) -> tuple[Path | None, dict[str, Any] | None, list[tuple[Path, str]]]:
    """The newest checkpoint of ``run_dir`` that loads and belongs to the run (``check_belongs``),
    its dict, and ``(path, why)`` for each newer one skipped; ``(None, None, skipped)`` if none."""
    skipped: list[tuple[Path, str]] = []
    for path in reversed(list_checkpoints(run_dir)):
        try:
            payload = load(path)
            check_belongs(payload, path, algo, run_id)
        except ValueError as exc:
            skipped.append((path, str(exc)))
            continue
        return path, payload, skipped
    return None, None, skipped


def read_run_id(run_dir: str | Path) -> str | None:
    """The id in the run folder's ``run_id`` file, or ``None`` (no file: a new or an older run)."""
    path = Path(run_dir) / RUN_ID_FILE
    if not path.is_file():
        return None
    text = path.read_text(encoding="utf-8", errors="replace").strip()
    return text or None


def clean_temporary(run_dir: str | Path) -> list[Path]:
    """Remove the temporary files of writes that never finished (``atomic_write`` killed before its
    ``os.replace``) in the run's folders; those of a process still running are left. Returns them."""
    removed = []
    for folder in (Path(run_dir), *(Path(run_dir) / sub for sub in ("checkpoints", "league", "expert"))):
        if not folder.is_dir():
            continue
        for path in folder.iterdir():
            m = _TEMP_FILE.match(path.name)
            if m and path.is_file() and not _alive(int(m.group(1))):
                path.unlink(missing_ok=True)
                removed.append(path)
    return removed


def _alive(pid: int) -> bool:
    """Whether a process ``pid`` (other than this one) is running."""
    if pid == os.getpid() or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # no such process (or no such pid at all)
        return False
    except PermissionError:  # another user's process
        return True
    return True


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
    "expert_rounds",  # more rounds of expert iteration: the run goes on with the next one
    "stop_at_timesteps",
    "time_limit_minutes",
    "checkpoint_every",
    "keep_checkpoints",
    "eval_every",
    "eval_deals",
    "eval_opponents",
    "final_eval_deals",
    "progress",
    "device",
    "overlap",
    "precision",
    "torch_threads",
    "runs_dir",
    "run_name",
    "ray_actor_cpus",
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
    """Put back what ``env_state`` saved (the matches continue where they were). The engine checks
    the arrays and recomputes the legal lists from the hands (``Engine.load_state``); ``ValueError``
    if the state is damaged, its saved legal lists included (they must be the hands' own)."""
    engine = venv.engine
    engine.load_state(state)
    S = engine.state
    saved, saved_n = np.asarray(state["legal"]), np.asarray(state["legal_n"])
    inside = np.arange(S.legal.shape[1])[None, :] < S.legal_n[:, None]
    bad = (saved_n != S.legal_n) | (inside & (saved != S.legal)).any(1)
    if bad.any():
        g = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"damaged resume state: the legal plays saved for match {g} are not those of its hands "
            f"({int(saved_n[g])} saved, {int(S.legal_n[g])} legal)"
        )


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
