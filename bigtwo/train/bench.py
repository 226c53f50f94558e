"""The training figure of ``bigtwo bench --train``: how fast a training config learns here.

``training_figures`` trains the ``default`` config (PPO, ``num_envs`` matches in this process,
its advice and league; no warm start), or the one ``--train-config`` names (``strong``: the shipped
networks' recipe, 1,024 matches and a network twice as wide), for a fixed number of updates after one warm-up update
(kernels load, the network's first pass), its league at full size (a config with past snapshots has its
``max_snapshots`` of them, as a run has after its first ``snapshot_every * max_snapshots`` steps:
``fill_league``), with no evaluations and no checkpoints, in a throw-away
run folder, in each of the ``SETTINGS`` (rollouts and updates alternating or ``overlap``, the update
beside the next rollout; ``precision`` float32 or bfloat16), the settings taking turns, and reports
the median over ``repeats`` runs of, per setting ``KEY`` (``""``, ``overlap_``, ``bf16_``,
``overlap_bf16_``):

- ``KEYenv_steps_per_s``: environment steps trained per second of wall time (rollouts and updates);
- ``KEYlearner_share``: the updates' share of that wall time (what ``charts/learner_utilisation``
  logs in a real run, ``bigtwo.train.loop``);

and ``settings``: ``[KEY, label]`` per setting, in order (the rows ``bigtwo bench`` prints), and
``bf16_native``: whether this machine runs bfloat16 matmuls natively (``precision: auto`` picks
bfloat16 only then; elsewhere bfloat16 is emulated, and slower).

``bigtwo.cli.bench`` prints it; this module sits in ``train`` because the engine's package never
imports the trainers (the ``bigtwo`` command hands ``training_figures`` to it).
``benchmarks/ray_bench.py`` measures the same on Ray actors.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from bigtwo.train.loop import SelfPlay

UPDATES = 3  # timed updates per run (one more, untimed, warms up)


# (figure key prefix, overlap, precision, the row's label), measured side by side
SETTINGS = (
    ("", False, "float32", "alternating, float32"),
    ("overlap_", True, "float32", "overlap, float32"),
    ("bf16_", False, "bfloat16", "alternating, bfloat16"),
    ("overlap_bf16_", True, "bfloat16", "overlap, bfloat16"),
)


def _one_run(
    variant: str,
    updates: int,
    quick: bool,
    runs_dir: str,
    run: int,
    overlap: bool,
    precision: str = "float32",
    config: str = "default",
) -> tuple[float, float, int, str]:
    """Trained env-steps/s and the learner's share of one run, its ``num_envs`` and algorithm."""
    from bigtwo.train.config import load_config
    from bigtwo.train.loop import SelfPlay

    settings = {
        "variant": variant,
        "runs_dir": runs_dir,
        "run_name": f"bench_{run}_{int(overlap)}_{precision}",
        "total_timesteps": 10**12,
        "time_limit_minutes": 10**6,  # never reached: 0 would announce an endless run
        "eval_every": 0,
        "final_eval_deals": 0,
        "checkpoint_every": 10**12,
        "progress": False,
        "imitate": "",
        "overlap": overlap,
        "precision": precision,
    }
    if quick:
        settings.update({"num_envs": 32, "num_steps": 8})
    cfg = load_config(config, settings)
    timed = timed_updates(SelfPlay(cfg), updates)
    return timed.steps / timed.wall, timed.learn / timed.wall, cfg.num_envs, cfg.algo


class Timed(NamedTuple):
    """What ``timed_updates`` measured: trained env-steps, wall seconds, the updates' seconds, and
    each worker batch's own env-steps/s while it played its rollout."""

    steps: float
    wall: float
    learn: float
    actor_rates: list[float]


def fill_league(loop: SelfPlay) -> int:
    """Give a started ``loop`` whose league plays past snapshots (``league_past`` > 0) its
    ``max_snapshots`` snapshots now (copies of its network), as a run has them after
    ``snapshot_every * max_snapshots`` steps; returns how many it added. A real run spends most of its
    steps with a full league, and each snapshot a step plays costs a network pass."""
    cfg = loop.cfg
    if cfg.league_past <= 0 or cfg.max_snapshots <= 0:
        return 0
    for k in range(cfg.max_snapshots):
        payload = {**loop.payload(), "global_step": k}
        loop.rollouts.add_snapshot(k, loop.run.snapshot(payload), payload)
    return cfg.max_snapshots


def timed_updates(loop: SelfPlay, updates: int) -> Timed:
    """Start ``loop``, give its league its full size (``fill_league``), run one untimed warm-up update
    (workers start, kernels load, the network's first pass), then ``updates`` timed ones (rollout and update, as ``bigtwo.train.loop.train`` runs them:
    with ``overlap`` the next rollout plays during each update); closes the loop's rollouts and run
    either way."""
    try:
        loop.start()
        fill_league(loop)
        steps = wall = learn = 0.0
        actor_rates: list[float] = []
        for i in range(updates + 1):
            loop.next_update()
            t0 = time.perf_counter()
            batch, _ = loop.rollout()
            _, update_seconds = loop.learn(batch)  # with overlap, the next rollout plays meanwhile
            if i:  # the first update warms up
                steps += loop.steps_this_update
                wall += time.perf_counter() - t0
                learn += update_seconds
                actor_rates += [b.steps / max(b.seconds, 1e-9) for b in loop.last_batches]
        return Timed(steps, wall, learn, actor_rates)
    finally:
        loop.rollouts.close()
        loop.run.close()


def training_figures(
    variant: str, repeats: int, quick: bool = False, config: str = "default", updates: int = UPDATES
) -> dict[str, float | str | bool | list[list[str]]]:
    """``env_steps_per_s`` and ``learner_share`` of training ``config`` (default: the default PPO
    config) in each of the ``SETTINGS`` (see the module docstring), medians of ``repeats`` runs
    each; ``quick``: 32 matches, 8 steps per rollout."""
    from bigtwo.train.networks import has_bfloat16
    from bigtwo.train.run import resolve_device

    runs: dict[str, list[tuple[float, float, int, str]]] = {key: [] for key, *_ in SETTINGS}
    with tempfile.TemporaryDirectory(prefix="bigtwo-bench-") as runs_dir:
        for r in range(repeats):
            for key, overlap, precision, _label in SETTINGS:  # side by side: the machine's load moves all alike
                runs[key].append(_one_run(variant, updates, quick, runs_dir, r, overlap, precision, config))
    first = runs[""][0]
    out: dict[str, float | str | bool | list[list[str]]] = {
        "config": config,
        "algo": first[3],
        "num_envs": float(first[2]),
        "updates": float(updates),
        "bf16_native": has_bfloat16(resolve_device("auto")),
        "settings": [[key, label] for key, *_, label in SETTINGS],
    }
    for key, rows in runs.items():
        out[f"{key}env_steps_per_s"] = statistics.median(r[0] for r in rows)
        out[f"{key}learner_share"] = statistics.median(r[1] for r in rows)
    return out
