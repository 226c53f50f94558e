"""The training figure of ``bigtwo bench --train``: how fast the default PPO trainer learns here.

``training_figures`` trains the ``default`` config (PPO, ``num_envs`` matches in this process,
its advice and league; no warm start) for a fixed number of updates after one warm-up update
(kernels load, the network's first pass), with no evaluations and no checkpoints, in a throw-away
run folder, once with rollouts and updates alternating and once with ``overlap`` (the update
beside the next rollout), the two taking turns, and reports the median over ``repeats`` runs of:

- ``env_steps_per_s``: environment steps trained per second of wall time (rollouts and updates);
- ``learner_share``: the updates' share of that wall time (what ``charts/learner_utilisation``
  logs in a real run, ``train.loop``);
- ``overlap_env_steps_per_s`` and ``overlap_learner_share``: the same with ``overlap``.

``bigtwo_env.bench`` prints it; this module sits in ``train`` because the engine's package never
imports the trainers (the ``bigtwo`` command hands ``training_figures`` to it).
``benchmarks/ray_bench.py`` measures the same on Ray actors.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from .loop import SelfPlay

UPDATES = 3  # timed updates per run (one more, untimed, warms up)


def _one_run(
    variant: str, updates: int, quick: bool, runs_dir: str, run: int, overlap: bool
) -> tuple[float, float, int, str]:
    """Trained env-steps/s and the learner's share of one run, its ``num_envs`` and algorithm."""
    from .config import load_config
    from .loop import SelfPlay

    settings = {
        "variant": variant,
        "runs_dir": runs_dir,
        "run_name": f"bench_{run}_{int(overlap)}",
        "total_timesteps": 10**12,
        "time_limit_minutes": 0,
        "eval_every": 0,
        "final_eval_deals": 0,
        "checkpoint_every": 10**12,
        "progress": False,
        "imitate": "",
        "overlap": overlap,
    }
    if quick:
        settings.update({"num_envs": 32, "num_steps": 8})
    cfg = load_config("default", settings)
    timed = timed_updates(SelfPlay(cfg), updates)
    return timed.steps / timed.wall, timed.learn / timed.wall, cfg.num_envs, cfg.algo


class Timed(NamedTuple):
    """What ``timed_updates`` measured: trained env-steps, wall seconds, the updates' seconds, and
    each worker batch's own env-steps/s while it played its rollout."""

    steps: float
    wall: float
    learn: float
    actor_rates: list[float]


def timed_updates(loop: SelfPlay, updates: int) -> Timed:
    """Start ``loop``, run one untimed warm-up update (workers start, kernels load, the network's
    first pass), then ``updates`` timed ones (rollout and update, as ``train.loop.train`` runs them:
    with ``overlap`` the next rollout plays during each update); closes the loop's rollouts and run
    either way."""
    try:
        loop.start()
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


def training_figures(variant: str, repeats: int, quick: bool = False, updates: int = UPDATES) -> dict[str, float | str]:
    """``env_steps_per_s`` and ``learner_share`` of the default PPO config, alternating and with
    ``overlap`` (see the module docstring), medians of ``repeats`` runs each; ``quick``: 32
    matches, 8 steps per rollout."""
    runs: dict[bool, list[tuple[float, float, int, str]]] = {False: [], True: []}
    with tempfile.TemporaryDirectory(prefix="bigtwo-bench-") as runs_dir:
        for r in range(repeats):
            for overlap in (False, True):  # side by side: the machine's load moves both alike
                runs[overlap].append(_one_run(variant, updates, quick, runs_dir, r, overlap))
    first = runs[False][0]
    return {
        "algo": first[3],
        "num_envs": float(first[2]),
        "updates": float(updates),
        "env_steps_per_s": statistics.median(r[0] for r in runs[False]),
        "learner_share": statistics.median(r[1] for r in runs[False]),
        "overlap_env_steps_per_s": statistics.median(r[0] for r in runs[True]),
        "overlap_learner_share": statistics.median(r[1] for r in runs[True]),
    }
