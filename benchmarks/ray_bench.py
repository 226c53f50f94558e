"""Training throughput on Ray next to the local trainer: ``python -m benchmarks.ray_bench``.

    python -m benchmarks.ray_bench                 default config, 3 repeats of each setting
    python -m benchmarks.ray_bench --repeats 5 --updates 6 --set num_envs=1024

Run from the repository's root (``benchmarks/`` is not installed with the package); needs the
``ray`` extra. ``tests/test_ray.py`` runs it on a tiny config.

For each setting (the local trainer, then Ray with 1 and with 2 rollout actors on a local
cluster) it trains the config for ``--updates`` updates after one warm-up update (actor start-up
and compilation are not timed) and prints the median of ``--repeats`` runs of:

- env-steps/s: environment steps trained per second of wall time (rollouts and updates);
- per actor: the env-steps/s of one worker while it plays its rollout (the rollout's own time,
  its targets included): what one more actor adds at most;
- learner: the update's seconds per 1,000 trained env-steps, and its share of the wall time;
- overhead: the rest of the wall time (broadcasting weights, shipping batches, waiting for the
  slowest actor), per 1,000 steps.

With those, a synchronous run on ``N`` actors of per-actor speed ``a`` and learner cost ``u`` per
step takes about ``1/(N a) + u + o`` seconds per step: it scales with ``N`` until the learner's
``u`` dominates (the projection in docs/ray.md). Figures depend on the machine and on what else runs.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile

from bigtwo.env.checks import usable_cores
from bigtwo.train.bench import timed_updates
from bigtwo.train.config import TrainConfig, load_config, make_config
from bigtwo.train.loop import SelfPlay
from bigtwo.train.rollout import LocalRollouts, RolloutsFactory


def measure(cfg: TrainConfig, rollouts: RolloutsFactory, updates: int) -> dict[str, float]:
    """One timed run (``bigtwo.train.bench.timed_updates``): a warm-up update, then ``updates`` timed ones."""
    steps, wall, learn, actor_rates = timed_updates(SelfPlay(cfg, rollouts), updates)
    per_k = 1000.0 / steps
    per_update = len(actor_rates) / updates  # worker batches per update
    return {
        "sps": steps / wall,
        "per_actor": statistics.median(actor_rates),
        "learner_ms_per_k": 1000 * learn * per_k,
        "learner_share": learn / wall,
        "overhead_ms_per_k": 1000 * max(wall - learn - steps / sum(actor_rates) * per_update, 0) * per_k,
    }


SETTINGS = (("local trainer", 0), ("Ray, 1 actor", 1), ("Ray, 2 actors", 2))
"""What is measured: a label and the Ray actors (0: the local trainer, no Ray)."""


def measure_settings(
    base: TrainConfig, repeats: int, updates: int, runs_dir: str
) -> list[tuple[str, dict[str, float]]]:
    """Each of ``SETTINGS`` trained ``repeats`` times for ``updates`` timed updates of ``base``
    (run folders under ``runs_dir``): the label and the median of every figure of ``measure``.
    Ray must be initialised (``main`` starts a local cluster)."""
    from bigtwo.train.ray.actors import RayRollouts

    rows = []
    for label, actors in SETTINGS:
        runs_of = []
        for r in range(repeats):
            cfg = make_config(
                {
                    "runs_dir": runs_dir,
                    "run_name": f"{label.replace(' ', '_').replace(',', '')}_{r}",
                    "total_timesteps": 10**12,
                    "time_limit_minutes": 10**6,  # never reached: 0 would announce an endless run
                    "eval_every": 0,
                    "final_eval_deals": 0,
                    "checkpoint_every": 10**12,
                    "progress": False,
                    "ray_actors": max(actors, 1),
                },
                base=base,
            )
            runs_of.append(measure(cfg, RayRollouts if actors else LocalRollouts, updates))
        rows.append((label, {k: statistics.median(m[k] for m in runs_of) for k in runs_of[0]}))
        print(f"measured {label}", file=sys.stderr, flush=True)
    return rows


def table(base: TrainConfig, rows: list[tuple[str, dict[str, float]]], repeats: int, updates: int) -> str:
    """The figures of ``measure_settings`` as the printed table."""
    lines = [
        f"{base.algo} on {base.variant}: num_envs {base.num_envs}, num_steps {base.num_steps}, "
        f"hidden {base.hidden_size}, median of {repeats} runs of {updates} updates (after 1 warm-up)",
        f"{'setting':<15} {'env-steps/s':>11} {'per actor':>10} {'learner ms/1k':>13} {'learner share':>13} "
        f"{'other ms/1k':>11}",
    ]
    for label, m in rows:
        lines.append(
            f"{label:<15} {m['sps']:>11,.0f} {m['per_actor']:>10,.0f} {m['learner_ms_per_k']:>13.1f} "
            f"{m['learner_share']:>13.0%} {m['overhead_ms_per_k']:>11.1f}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.ray_bench", description=(__doc__ or "").splitlines()[0])
    p.add_argument("--config", default="default", help="training config (default: default)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="FIELD=VALUE")
    p.add_argument("--repeats", type=int, default=3, help="runs per setting; the median is shown (default 3)")
    p.add_argument("--updates", type=int, default=4, help="timed updates per run (default 4)")
    args = p.parse_args(argv)
    if args.repeats < 1 or args.updates < 1:
        p.error("--repeats and --updates must be at least 1")
    import ray

    base = load_config(args.config, args.overrides)
    with tempfile.TemporaryDirectory() as runs:
        ray.init(num_cpus=max(2, usable_cores()), include_dashboard=False, logging_level="error")
        try:
            rows = measure_settings(base, args.repeats, args.updates, runs)
        finally:
            ray.shutdown()
    print(table(base, rows, args.repeats, args.updates))
    return 0


if __name__ == "__main__":
    sys.exit(main())
