"""``bigtwo bench``: how fast the engine and its environments run on this machine.

Every figure is env-steps per second (one step = one seat's decision), the median of
``--repeats`` timed runs after a warm-up, with uniformly random legal play and observations
included:

- ``game``: the readable ``Game`` view (card texts in, card texts out);
- ``aec``: the PettingZoo AEC env (observation dict with the dense action mask each step);
- ``vector``: the vector env at batch 1, 64, 1,024 and 4,096, legal actions as id lists, handing
  out the engine's own arrays (``copy=False``, as the trainers run it);
- ``vector_copy``: batch 1,024 with ``copy=True`` (the default: each step's arrays copied).

It also prints the memory the engine holds at batch 4,096 (state, observations, action table and
a dense int8 mask of the whole batch) and the process's peak resident memory.
``--json`` prints the same as one JSON object with keys ``game``, ``aec``, ``vector`` and
``vector_copy`` (keyed by batch size) and ``memory``.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import time
from collections.abc import Callable

import numpy as np

from .checks import check_count
from .cli_options import add_variant
from .variant import DEFAULT_VARIANT

BATCHES = (1, 64, 1024, 4096)


def _median_rate(run: Callable[[], int], repeats: int) -> float:
    run()  # warm-up: compilation, caches
    rates = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        steps = run()
        rates.append(steps / (time.perf_counter() - t0))
    return statistics.median(rates)


def bench_game(variant: str, steps: int, repeats: int, seed: int = 0) -> float:
    from .game import Game

    rng = np.random.default_rng(seed)

    def run() -> int:
        game = Game(variant, seed=int(rng.integers(1 << 30)))
        for _ in range(steps):
            if game.is_over:
                game = Game(variant, seed=int(rng.integers(1 << 30)))
            plays = game.legal_plays()
            game.play(plays[int(rng.integers(len(plays)))])
        return steps

    return _median_rate(run, repeats)


def bench_aec(variant: str, steps: int, repeats: int, seed: int = 0) -> float:
    from .aec import env as make_env

    env = make_env(variant)
    rng = np.random.default_rng(seed)

    def run() -> int:
        env.reset(seed=int(rng.integers(1 << 30)))
        for _ in range(steps):
            agent = env.agent_selection
            if env.terminations[agent] or env.truncations[agent]:
                env.reset(seed=int(rng.integers(1 << 30)))
                agent = env.agent_selection
            mask = env.observe(agent)["action_mask"]
            legal = np.flatnonzero(mask.view(np.bool_))  # a bool view: 10x faster than on int8
            env.step(int(legal[int(rng.integers(len(legal)))]))
        return steps

    return _median_rate(run, repeats)


def bench_vector(variant: str, batch: int, steps: int, repeats: int, seed: int = 0, copy: bool = False) -> float:
    """Steps/s of the vector env; ``copy=False`` (the trainers' mode) hands out the engine's own
    arrays, ``copy=True`` (the default a user gets) copies what each step returns."""
    from .vector import VectorEnv

    venv = VectorEnv(variant, num_envs=batch, seed=seed, copy=copy)
    rng = np.random.default_rng(seed)
    rows = np.arange(batch)

    def run() -> int:
        _obs, info = venv.reset(seed=int(rng.integers(1 << 30)))
        for _ in range(steps):
            ids, counts = info["legal_ids"], info["legal_counts"]
            actions = ids[rows, (rng.random(batch) * counts).astype(np.int64)]
            _obs, _rew, _term, _trunc, info = venv.step(actions)
        return steps * batch

    return _median_rate(run, repeats)


def engine_memory(variant: str, batch: int = 4096) -> dict[str, float]:
    from .engine import Engine

    eng = Engine(variant, num_games=batch, seed=0)
    mask = eng.legal_mask()
    mib = 1 << 20
    return {
        "batch": batch,
        "state_mib": sum(a.nbytes for a in eng.state) / mib,
        "observations_mib": eng.observe().nbytes / mib,
        "action_table_mib": eng.table.nbytes() / mib,
        "dense_masks_mib": mask.nbytes / mib,
        "engine_total_mib": (eng.nbytes() + mask.nbytes) / mib,
    }


def run_bench(variant: str = DEFAULT_VARIANT, repeats: int = 5, quick: bool = False) -> dict:
    scale = 0.2 if quick else 1.0
    out: dict = {"variant": variant, "repeats": repeats}
    out["game"] = bench_game(variant, int(2000 * scale), repeats)
    out["aec"] = bench_aec(variant, int(10000 * scale), repeats)
    vec_steps = {1: 3000, 64: 300, 1024: 60, 4096: 20}
    out["vector"] = {str(b): bench_vector(variant, b, max(5, int(vec_steps[b] * scale)), repeats) for b in BATCHES}
    out["vector_copy"] = {"1024": bench_vector(variant, 1024, max(5, int(vec_steps[1024] * scale)), repeats, copy=True)}
    out["memory"] = engine_memory(variant)
    out["memory"]["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def _print_table(result: dict) -> None:
    print(f"bigtwo bench: {result['variant']}, env-steps/s, median of {result['repeats']} runs, random legal play")
    print(f"  {'Game (readable view)':<28} {result['game']:>12,.0f}")
    print(f"  {'PettingZoo AEC env':<28} {result['aec']:>12,.0f}")
    for batch, rate in result["vector"].items():
        print(f"  {'vector env, batch ' + batch:<28} {rate:>12,.0f}")
    for batch, rate in result["vector_copy"].items():
        print(f"  {'... batch ' + batch + ', copy=True':<28} {rate:>12,.0f}")
    m = result["memory"]
    print(
        f"memory at batch {m['batch']}: engine {m['engine_total_mib']:.1f} MiB (state {m['state_mib']:.1f}, "
        f"observations {m['observations_mib']:.1f}, action table {m['action_table_mib']:.1f}, "
        f"dense masks {m['dense_masks_mib']:.1f}); process peak RSS {m['peak_rss_mib']:.0f} MiB"
    )


def _handle(args: argparse.Namespace) -> int:
    check_count("--repeats", args.repeats)
    result = run_bench(args.variant, args.repeats, args.quick)
    if args.json:
        json.dump(result, sys.stdout, indent=2)
        print()
    else:
        _print_table(result)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bench", help="engine and environment speeds on this machine")
    add_variant(p)
    p.add_argument("--repeats", type=int, default=5, help="timed runs per figure; the median is shown (default 5)")
    p.add_argument("--quick", action="store_true", help="shorter runs (a smoke check, noisier figures)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    p.set_defaults(func=_handle)
