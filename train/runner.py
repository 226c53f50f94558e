"""What every trainer shares around its loop: the run folder, logs, checkpoints, resume, evaluation.

A run lives in ``runs/<run_name>/`` (``run_name`` defaults to ``variant__algo__seed__time``):

| path | what |
|---|---|
| ``config.yaml`` | the full config of the run |
| ``events.out.tfevents.*`` | TensorBoard scalars (``tensorboard --logdir runs``) |
| ``checkpoints/step_<N>.pt`` | resumable checkpoints (see ``train.checkpoint``), the newest ``keep_checkpoints`` |
| ``league/snapshot_<N>.pt`` | past policies the league plays against |
| ``final_eval.json`` | the final evaluation |

Resume: a run whose folder already holds a checkpoint continues from its newest one (network,
optimizer, RNG states, the vector env's matches, pending decisions, league, counters), so a run
killed with ``kill -9`` loses only the steps since that checkpoint. Given the same seed, a
resumed run continues exactly as the uninterrupted one would have (``tests/test_train.py``).
Only fields that do not change what is learned may differ from the saved config on resume
(``RESUMABLE_CHANGES``: run length, time limit, logging, evaluation, device, threads).
"""

from __future__ import annotations

import os
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from bigtwo_env.vector import VectorEnv

from . import checkpoint as ckpt
from .config import TrainConfig, make_config, to_yaml
from .evaluate import Evaluation, evaluate, format_table
from .networks import ActionScorer

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


def resolve_device(name: str) -> torch.device:
    """``auto``: CUDA when available, else the CPU."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def reward_scale(cfg: TrainConfig, variant) -> float:
    """``cfg.reward_scale``, or (0 = auto) 1 / the most one seat can lose in one game."""
    if cfg.reward_scale > 0:
        return cfg.reward_scale
    cpp = variant.cards_per_player * variant.penalty_multiplier_for_twos
    collect = cpp * max([1.0, *(m for n, m in variant.tiers if n <= cpp)])  # the top bracket reached
    worst = {
        "cards": cpp,
        "tiered": 3 * cpp,
        "pairwise": (variant.players - 1) * cpp,
        "win_loss": 1.0,
        "collect": collect,
    }
    return 1.0 / (worst[variant.scoring] * variant.unit)


@dataclass
class View:
    """What the trainer sees of the vector env before acting."""

    obs: np.ndarray
    seat: np.ndarray
    legal: np.ndarray
    counts: np.ndarray


def view(venv: VectorEnv, obs: np.ndarray | None = None) -> View:
    """The current observation, seat to act and legal lists of every slot."""
    ids, counts = venv.engine.legal_actions()
    obs = venv.engine.observe() if obs is None else obs
    return View(obs, venv.engine.state.current.astype(np.int64), ids, counts)


class Episodes:
    """Game results of the learner's seats since the last log, by opponent label."""

    def __init__(self, num_envs: int) -> None:
        self.length = np.zeros(num_envs, np.int64)
        self.reset()

    def reset(self) -> None:
        self.payoffs: dict[str, list[float]] = defaultdict(list)
        self.wins: dict[str, list[float]] = defaultdict(list)
        self.lengths: list[int] = []

    def step(self, rewards: np.ndarray, game_over: np.ndarray, winner: np.ndarray, league) -> None:
        """Count one step; record the games that ended (``rewards`` as the env reports them) under
        their opponent's label (before the league draws the slots' next opponents)."""
        self.length += 1
        ended = np.flatnonzero(game_over)
        if len(ended) == 0:
            return
        labels = league.labels(ended)
        for e, label in zip(ended.tolist(), labels, strict=True):
            seats = range(rewards.shape[1]) if label == "self" else [int(league.learner_seat[e])]
            for s in seats:
                self.payoffs[label].append(float(rewards[e, s]))
                self.wins[label].append(float(winner[e] == s))
            self.lengths.append(int(self.length[e]))
            self.length[e] = 0

    def scalars(self) -> dict[str, float]:
        out: dict[str, float] = {}
        every = [p for v in self.payoffs.values() for p in v]
        if every:
            out["charts/episodic_payoff"] = float(np.mean(every))
            out["charts/games"] = float(len(self.lengths))
            out["charts/episode_length"] = float(np.mean(self.lengths))
        for label, values in self.payoffs.items():
            out[f"charts/payoff_vs_{label}"] = float(np.mean(values))
            out[f"charts/win_rate_vs_{label}"] = float(np.mean(self.wins[label]))
        return out


class Run:
    """The run folder, TensorBoard writer, progress bar, checkpoints and evaluations."""

    def __init__(self, cfg: TrainConfig, variant) -> None:
        self.cfg = cfg
        self.variant = variant
        if cfg.deterministic:  # cuBLAS needs this, set before CUDA starts, to be deterministic
            os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        self.device = resolve_device(cfg.device)
        torch.set_num_threads(cfg.torch_threads)
        # warn_only: an op without a deterministic kernel (on some GPUs) warns instead of failing the run
        torch.use_deterministic_algorithms(cfg.deterministic, warn_only=True)
        torch.manual_seed(cfg.seed)
        self.name = cfg.resolved_run_name()
        self.dir = Path(cfg.runs_dir) / self.name
        self.resume_from = ckpt.latest_checkpoint(self.dir)
        resume_step = None
        if self.resume_from is not None:
            saved = ckpt.load(self.resume_from)
            check_resumable(cfg, saved, self.resume_from)
            resume_step = int(saved["global_step"])
        self.dir.mkdir(parents=True, exist_ok=True)
        (self.dir / "config.yaml").write_text(to_yaml(cfg, f"config of run {self.name}"), encoding="utf-8")
        from torch.utils.tensorboard import SummaryWriter

        # on resume, TensorBoard drops what the interrupted run logged after its checkpoint
        self.writer = SummaryWriter(str(self.dir), purge_step=None if resume_step is None else resume_step + 1)
        self.started = time.time()
        self.bar = None
        self.last_evals: dict[str, Evaluation] = {}

    # ------------------------------------------------------------ logging

    def progress(self, step: int) -> None:
        """Start the tqdm bar at ``step``."""
        from tqdm import tqdm  # the text bar: tqdm.auto wants ipywidgets in notebooks

        self.bar = tqdm(
            total=self.cfg.total_timesteps,
            initial=step,
            unit="step",
            unit_scale=True,
            disable=not self.cfg.progress,
            dynamic_ncols=True,
            desc=self.name,
            file=sys.stderr,
        )

    def log(self, scalars: dict[str, float], step: int) -> None:
        for key, value in scalars.items():
            self.writer.add_scalar(key, value, step)

    def advance(self, steps: int, postfix: dict[str, Any] | None = None) -> None:
        if self.bar is not None:
            self.bar.update(steps)
            if postfix:
                self.bar.set_postfix(postfix, refresh=False)

    def say(self, text: str) -> None:
        """A line under the progress bar (or on stdout without one)."""
        if self.bar is not None and not self.bar.disable:
            self.bar.write(text)
        else:
            print(text, flush=True)

    def out_of_time(self) -> bool:
        """Whether ``time_limit_minutes`` has passed in this process."""
        limit = self.cfg.time_limit_minutes
        return limit > 0 and time.time() - self.started > 60 * limit

    # ------------------------------------------------------------ checkpoints

    def payload(self, algo: str, net: ActionScorer, step: int, update: int) -> dict[str, Any]:
        """The policy part of a checkpoint (also what league snapshots hold)."""
        return {
            "format": ckpt.FORMAT,
            "algo": algo,
            "variant": {"name": self.variant.name, "settings": self.variant.to_dict()},
            "config": self.cfg.to_dict(),
            "model": {
                "kwargs": dict(net.kwargs),
                "state_dict": {k: v.detach().cpu().clone() for k, v in net.state_dict().items()},
            },
            "global_step": int(step),
            "update": int(update),
        }

    def save(self, payload: dict[str, Any], resume: dict[str, Any]) -> Path:
        """Write a resumable checkpoint at ``payload['global_step']`` and prune old ones."""
        full = dict(payload, resume=ckpt.arrays_to_tensors(resume))
        path = ckpt.atomic_save(full, ckpt.checkpoint_path(self.dir, payload["global_step"]))
        ckpt.prune(self.dir, self.cfg.keep_checkpoints)
        return path

    def snapshot(self, payload: dict[str, Any]) -> str:
        """Write a league snapshot; returns its path relative to the run folder."""
        rel = f"league/snapshot_{payload['global_step']:012d}.pt"
        ckpt.atomic_save(payload, self.dir / rel)
        return rel

    def load_resume(self) -> dict[str, Any] | None:
        """The newest checkpoint's dict, or ``None`` for a fresh run."""
        if self.resume_from is None:
            return None
        print(f"resuming {self.name} from {self.resume_from}", file=sys.stderr)
        return ckpt.load(self.resume_from)

    # ------------------------------------------------------------ evaluation

    def evaluate(self, agent, step: int, deals: int, seed_offset: int = 0) -> dict[str, Evaluation]:
        """Duplicate tournaments against ``eval_opponents``; logged under ``eval/<opponent>/``."""
        if deals <= 0 or not self.cfg.eval_opponents:
            return {}
        t0 = time.time()
        evals = evaluate(agent, self.variant, self.cfg.eval_opponents, deals, seed=self.cfg.seed + 10_000 + seed_offset)
        for name, e in evals.items():
            self.log({f"eval/{name}/{k}": v for k, v in e.scalars().items()}, step)
        self.log({"charts/eval_seconds": time.time() - t0}, step)
        self.last_evals = evals
        return evals

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        self.writer.flush()
        self.writer.close()


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


def final_report(
    run: Run, algo: str, agent, checkpoint: Path, step: int, session_steps: int, seconds: float, sps: float
) -> dict[str, Evaluation]:
    """Evaluate the final agent (``final_eval_deals`` per opponent), print the table and where
    the run's files are; write ``final_eval.json``."""
    import json

    cfg = run.cfg
    resumed = f" ({session_steps:,} in this session)" if session_steps != step else ""
    print(
        f"\n{run.name}: {algo} on {run.variant.name}, {step:,} env steps{resumed} in {seconds / 60:.1f} min "
        f"({sps:,.0f} steps/s)",
        flush=True,
    )
    evals: dict[str, Evaluation] = {}
    if cfg.final_eval_deals > 0 and cfg.eval_opponents:
        t0 = time.time()
        evals = evaluate(agent, run.variant, cfg.eval_opponents, cfg.final_eval_deals, seed=cfg.seed + 20_000)
        print(f"final evaluation ({time.time() - t0:.0f} s):")
        print(format_table(evals, agent_name=algo))
        for name, e in evals.items():
            run.log({f"eval/{name}/{k}": v for k, v in e.scalars().items()}, step)
        data = {
            "run": run.name,
            "step": step,
            "checkpoint": str(checkpoint),
            "train_seconds": seconds,
            "steps_per_second": sps,
            "evaluations": {k: v.to_dict() for k, v in evals.items()},
        }
        (run.dir / "final_eval.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    print(f"run folder:   {run.dir}")
    print(f"checkpoint:   {checkpoint}")
    print(f"tensorboard:  tensorboard --logdir {run.dir.parent}")
    print(f"play it:      bigtwo play --opponents {checkpoint}")
    print(f"resume:       bigtwo train --resume {run.dir}")
    sys.stdout.flush()
    return evals
