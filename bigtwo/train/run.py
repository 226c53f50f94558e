"""A training run's home: its folder, TensorBoard writer, progress bar and evaluations.

A run lives in ``runs/<run_name>/`` (``run_name`` defaults to ``variant__algo__seed__time``):

| path | what |
|---|---|
| ``config.yaml`` | the full config of the run |
| ``run_id`` | the run's id, which its checkpoints and snapshots carry (a checkpoint of another run is never resumed) |
| ``events.out.tfevents.*`` | TensorBoard scalars (``tensorboard --logdir runs``) |
| ``checkpoints/step_<N>.pt`` | resumable checkpoints (see ``bigtwo.train.checkpoint``), the newest ``keep_checkpoints`` |
| ``checkpoints/step_<N>.pt.rejected`` | a checkpoint a resume skipped (damaged, or another run's), kept for a look |
| ``league/snapshot_<N>.pt`` | past policies the league plays against (and those a kept checkpoint's league needs) |
| ``final_eval.json`` | the final evaluation |

``Run`` sets the run up (device, torch threads and determinism, the seed, the folder; it refuses
a folder that holds a run with another config, see ``bigtwo.train.checkpoint.check_resumable``), logs
scalars, drives the progress bar, writes checkpoints and league snapshots into the folder, and
runs the periodic evaluations; ``final_report`` evaluates the final agent and prints where the
run's files are.

Resuming trusts no file: the run continues from its newest checkpoint that is intact and its own
(``bigtwo.train.checkpoint.find_resumable``); each newer one is renamed ``*.rejected`` and named on
stderr with the reason (corrupt, another algo's, another run's). Temporary files of writes that a
kill interrupted are removed, and after each checkpoint the league snapshots that neither the
league nor any kept checkpoint needs are deleted. Everything that can be checked (the device
included) is checked before the folder is created.
"""

from __future__ import annotations

import os
import re
import sys
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from bigtwo.arena.evaluate import Evaluation, evaluate, format_table
from bigtwo.train import checkpoint as ckpt
from bigtwo.train import provenance
from bigtwo.train.config import TrainConfig, to_yaml
from bigtwo.train.networks import ActionScorer
from bigtwo.train.policy_agent import check_obs_version

if TYPE_CHECKING:
    from tqdm import tqdm

    from bigtwo.agents.base import Agent
    from bigtwo.env.rules.variant import Variant

_SNAPSHOT_FILE = re.compile(r"^snapshot_(\d+)\.pt$")


def resolve_device(name: str) -> torch.device:
    """The torch device ``name`` names (``auto``: CUDA when available, else the CPU); ``ValueError``
    when it is not one this machine has (``cuda`` without CUDA, ``cuda:3`` on a 2-GPU machine)."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cpu":
        return torch.device("cpu")
    if name == "cuda" or (name.startswith("cuda:") and name[5:].isdigit()):
        if not torch.cuda.is_available():
            raise ValueError(f"field 'device' has value {name!r} but CUDA is not available here; allowed: auto, cpu")
        count = torch.cuda.device_count()
        if name != "cuda" and int(name[5:]) >= count:
            raise ValueError(
                f"field 'device' has value {name!r} but this machine has {count} CUDA device(s); "
                f"allowed: auto, cpu, cuda, cuda:0..cuda:{count - 1}"
            )
        return torch.device(name)
    raise ValueError(f"field 'device' has bad value {name!r}; allowed: auto, cpu, cuda or cuda:N")


class Run:
    """The run folder, TensorBoard writer, progress bar, checkpoints and evaluations."""

    def __init__(self, cfg: TrainConfig, variant: Variant) -> None:
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
        run_id = ckpt.read_run_id(self.dir)
        self.resume_from, saved = self._resumable(run_id)
        resume_step = None
        if saved is not None:
            assert self.resume_from is not None  # a checkpoint comes with its path
            check_obs_version(
                saved,
                str(self.resume_from),
                "it cannot resume: retrain in a new run (another run_name, or move this folder away)",
            )
            ckpt.check_resumable(cfg, saved, self.resume_from)
            resume_step = int(saved["global_step"])
            owner = saved.get("run")
            if run_id is None and isinstance(owner, dict) and isinstance(owner.get("id"), str):
                run_id = owner["id"]  # a folder from before run_id files: adopt its checkpoint's id
        self.run_id: str = run_id or uuid.uuid4().hex
        self._saved = saved
        # the command, seed, code version; steps and training time are added at each checkpoint
        self.provenance = provenance.start(cfg.algo, cfg.seed, None if saved is None else saved.get("provenance"))
        self.dir.mkdir(parents=True, exist_ok=True)
        (self.dir / ckpt.RUN_ID_FILE).write_text(self.run_id + "\n", encoding="utf-8")
        (self.dir / "config.yaml").write_text(to_yaml(cfg, f"config of run {self.name}"), encoding="utf-8")
        from torch.utils.tensorboard import SummaryWriter

        # on resume, TensorBoard drops what the interrupted run logged after its checkpoint
        self.writer = SummaryWriter(str(self.dir), purge_step=None if resume_step is None else resume_step + 1)
        self.started = time.time()
        self.cpu_started = provenance.cpu_seconds()
        self.bar: tqdm | None = None
        self.last_evals: dict[str, Evaluation] = {}
        self.last_time: dict[str, float] = {}  # time_trained at the last evaluation

    def _resumable(self, run_id: str | None) -> tuple[Path | None, dict[str, Any] | None]:
        """The newest intact checkpoint of this run (of id ``run_id``, ``None``: a folder without
        one, not checked) and its dict (``None`` for a fresh run); newer
        ones that are damaged or not this run's are renamed ``*.rejected``, each named on stderr.
        Leftover temporary files go first. ``ValueError`` if checkpoints exist but none is usable."""
        removed = ckpt.clean_temporary(self.dir)
        if removed:
            print(f"removed {len(removed)} temporary file(s) of interrupted writes in {self.dir}", file=sys.stderr)
        path, saved, skipped = ckpt.find_resumable(self.dir, self.cfg.algo, run_id)
        if path is None and skipped:
            reasons = "; ".join(why for _, why in skipped)
            raise ValueError(
                f"{self.dir}: none of its {len(skipped)} checkpoint(s) can be resumed ({reasons}); "
                "move them away or choose another run_name"
            )
        for bad, why in skipped:
            kept = bad.with_name(bad.name + ckpt.REJECTED)
            os.replace(bad, kept)
            print(f"skipped checkpoint {bad.name}: {why}; kept as {kept.name}", file=sys.stderr)
        return path, saved

    # ------------------------------------------------------------ logging

    def progress(self, step: int) -> None:
        """Start the tqdm bar at ``step``."""
        from tqdm import tqdm  # the text bar: tqdm.auto wants ipywidgets in notebooks

        self.bar = tqdm(
            total=self.cfg.stop_step,
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

    def notice(self, text: str) -> None:
        """A line on stderr, beside the progress bar (under it when there is one): what the user
        should know of the run itself, kept off stdout, where ``bigtwo bench --json`` writes."""
        if self.bar is not None and not self.bar.disable:
            self.bar.write(text, file=sys.stderr)
        else:
            print(text, file=sys.stderr, flush=True)

    def made(self, step: int) -> dict[str, Any]:
        """The run's provenance at ``step``: this session's wall and CPU time added to the sittings before it."""
        return provenance.at(
            self.provenance, step, time.time() - self.started, cpu=provenance.cpu_seconds() - self.cpu_started
        )

    def time_trained(self, step: int) -> dict[str, float]:
        """``time/wall_minutes`` and ``time/cpu_minutes`` the run has trained up to now, every sitting counted
        (logged beside each evaluation: the learning curve by time, ``benchmarks/learning_curves``)."""
        made = self.made(step)
        return {"time/wall_minutes": made["train_seconds"] / 60, "time/cpu_minutes": made["train_cpu_seconds"] / 60}

    def out_of_time(self) -> bool:
        """Whether ``time_limit_minutes`` has passed in this process."""
        limit = self.cfg.time_limit_minutes
        return limit > 0 and time.time() - self.started > 60 * limit

    # ------------------------------------------------------------ checkpoints

    def payload(self, algo: str, net: ActionScorer, step: int, update: int) -> dict[str, Any]:
        """The policy part of a checkpoint (also what league snapshots hold): ``ckpt.policy_payload``,
        with the provenance of the run so far."""
        made = self.made(step)
        payload = ckpt.policy_payload(algo, self.variant, self.cfg, net, step, update, provenance=made)
        payload["run"] = {"name": self.name, "id": self.run_id}
        return payload

    def save(self, payload: dict[str, Any], resume: dict[str, Any]) -> Path:
        """Write a resumable checkpoint at ``payload['global_step']``, prune old ones and the
        snapshots no one needs any more."""
        full = dict(payload, resume=ckpt.arrays_to_tensors(resume))
        path = ckpt.atomic_save(full, ckpt.checkpoint_path(self.dir, payload["global_step"]))
        ckpt.prune(self.dir, self.cfg.keep_checkpoints)
        self.prune_snapshots(payload["global_step"])
        return path

    def prune_snapshots(self, step: int) -> None:
        """Delete the league snapshots (up to ``step``) that no kept checkpoint's league holds: a
        checkpoint at step ``S`` holds the newest ``max_snapshots`` snapshots taken by ``S``, and the
        newest checkpoint's are the league's now."""
        folder = self.dir / "league"
        if not folder.is_dir():
            return
        snaps = sorted((int(m.group(1)), p) for p in folder.iterdir() if (m := _SNAPSHOT_FILE.match(p.name)))
        keep = self.cfg.max_snapshots
        needed: set[int] = set()
        for saved in ckpt.list_checkpoints(self.dir):
            at = int(saved.stem.split("_")[1])
            needed.update([s for s, _ in snaps if s <= at][-keep:] if keep > 0 else [])
        for s, path in snaps:
            if s <= step and s not in needed:
                path.unlink(missing_ok=True)

    def snapshot(self, payload: dict[str, Any]) -> str:
        """Write a league snapshot; returns its path relative to the run folder."""
        rel = f"league/snapshot_{payload['global_step']:012d}.pt"
        ckpt.atomic_save(payload, self.dir / rel)
        return rel

    def load_resume(self) -> dict[str, Any] | None:
        """The dict of the checkpoint the run resumes from (read and checked once, when the run was
        set up), or ``None`` for a fresh run."""
        saved, self._saved = self._saved, None
        if saved is None:
            return None
        print(f"resuming {self.name} from {self.resume_from}", file=sys.stderr)
        return saved

    # ------------------------------------------------------------ evaluation

    def evaluate(self, agent: Agent, step: int, deals: int, seed_offset: int = 0) -> dict[str, Evaluation]:
        """Duplicate tournaments against ``eval_opponents``; logged under ``eval/<opponent>/``."""
        if deals <= 0 or not self.cfg.eval_opponents:
            return {}
        self.last_time = self.time_trained(step)  # the time trained to this evaluation's network, not after it
        self.log(self.last_time, step)
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


def final_report(
    run: Run,
    algo: str,
    agent: Agent,
    checkpoint: Path,
    step: int,
    session_steps: int,
    seconds: float,
    sps: float,
    stopped_by: str | None = None,
    resume_flags: str = "",
) -> dict[str, Evaluation]:
    """Evaluate the final agent (``final_eval_deals`` per opponent; skipped when the signal
    ``stopped_by`` ended the run), print the table and where the run's files are; write
    ``final_eval.json``."""
    import json

    cfg = run.cfg
    resumed = f" ({session_steps:,} in this session)" if session_steps != step else ""
    print(
        f"\n{run.name}: {algo} on {run.variant.name}, {step:,} env steps{resumed} in {seconds / 60:.1f} min "
        f"({sps:,.0f} steps/s)",
        flush=True,
    )
    if stopped_by is not None:
        print(f"stopped by {stopped_by} at step {step:,} of {cfg.stop_step:,}: checkpoint written, no final evaluation")
    evals: dict[str, Evaluation] = {}
    if cfg.final_eval_deals > 0 and cfg.eval_opponents and stopped_by is None:
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
    print(f"resume:       bigtwo train --resume {run.dir}{resume_flags}")
    sys.stdout.flush()
    return evals
