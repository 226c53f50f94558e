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

``--curve`` adds the cost curve: the vector env (``copy=False``) at batch 1, 2, 4, ..., 8,192
(``CURVE``), per batch the time of one vector step, the env-steps/s and the memory the engine
holds (state, observation buffer, action table), so a user sees how cost scales with the batch.
``--train`` adds the training figure: a short run of the default config, or of the one
``--train-config`` names (``bigtwo.train.bench``: a fixed number of updates, no evaluations or checkpoints)
in env-steps/s and the learner's share of its wall time, with rollouts and updates alternating or
overlapping, in float32 and in bfloat16 (``precision``); torch is imported only for it.

``--search`` adds search's rollout kernel (``bigtwo.agents.bench``): microseconds per heuristic decision
and per rollout (a game played out from the deal by the heuristic at every seat), and the engine's
own part, nanoseconds per play and per legal list; and the exact endgame solver's cost on endgames
of 8 and 10 cards in all hands.

``--json`` prints the same as one JSON object with keys ``game``, ``aec``, ``vector`` and
``vector_copy`` (keyed by batch size), ``memory``, and with the options ``curve`` (a list of rows
``batch``, ``ms_per_step``, ``env_steps_per_s``, ``engine_mib``), ``search`` and ``training``.
Figures are printed, never asserted: they depend on the machine and on what else runs.
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

from bigtwo.agents.bench import search_figures
from bigtwo.cli.options import add_variant
from bigtwo.env.checks import check_count
from bigtwo.env.rules.variant import DEFAULT_VARIANT

BATCHES = (1, 64, 1024, 4096)
CURVE = tuple(2**i for i in range(14))  # 1, 2, 4, ..., 8,192: the cost curve's batch sizes
CURVE_STEPS = 16_384  # env-steps per timed run of a curve point (at least 5 vector steps)


def _median_rate(run: Callable[[], int], repeats: int) -> float:
    run()  # warm-up: compilation, caches
    rates = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        steps = run()
        rates.append(steps / (time.perf_counter() - t0))
    return statistics.median(rates)


def bench_game(variant: str, steps: int, repeats: int, seed: int = 0) -> float:
    from bigtwo.env.envs.game import Game

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
    from bigtwo.env.envs.aec import env as make_env

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
    from bigtwo.env.envs.vector import VectorEnv

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


def bench_curve(variant: str, repeats: int, quick: bool = False, batches: tuple[int, ...] = CURVE) -> list[dict]:
    """The cost curve: per batch size, one vector step's time (ms), env-steps/s (median of
    ``repeats``) and the engine's memory (MiB: state, observation buffer, action table)."""
    from bigtwo.env.envs.vector import VectorEnv

    total = CURVE_STEPS // 5 if quick else CURVE_STEPS
    rows = []
    for batch in batches:
        rate = bench_vector(variant, batch, max(5, total // batch), repeats)
        engine_mib = VectorEnv(variant, num_envs=batch, seed=0, copy=False).engine.nbytes() / (1 << 20)
        rows.append(
            {"batch": batch, "ms_per_step": 1000 * batch / rate, "env_steps_per_s": rate, "engine_mib": engine_mib}
        )
    return rows


def engine_memory(variant: str, batch: int = 4096) -> dict[str, float]:
    from bigtwo.env.engine.engine import Engine

    eng = Engine(variant, num_matches=batch, seed=0)
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


def run_bench(
    variant: str = DEFAULT_VARIANT,
    repeats: int = 5,
    quick: bool = False,
    curve: bool = False,
    training: bool = False,
    search: bool = False,
    train_config: str = "default",
) -> dict:
    """Every figure of the module docstring (``curve``: the cost curve too; ``training``: the
    training figure of ``train_config`` (``bigtwo.train.bench.training_figures``, which needs torch);
    ``search``: the search figures (``bigtwo.agents.bench.search_figures``))."""
    scale = 0.2 if quick else 1.0
    out: dict = {"variant": variant, "repeats": repeats}
    # the training figure first, though printed last: a config it cannot load is refused at once
    trained = None
    if training:
        try:
            import torch  # noqa: F401 - the training figure needs it; say so before measuring anything
        except ImportError as exc:  # ModuleNotFoundError included
            raise ValueError(f"--train needs the train extra (torch): pip install 'bigtwo[train]' ({exc})") from exc
        from bigtwo.train.bench import training_figures

        trained = training_figures(variant, repeats, quick, train_config)
    out["game"] = bench_game(variant, int(2000 * scale), repeats)
    out["aec"] = bench_aec(variant, int(10000 * scale), repeats)
    vec_steps = {1: 3000, 64: 300, 1024: 60, 4096: 20}
    out["vector"] = {str(b): bench_vector(variant, b, max(5, int(vec_steps[b] * scale)), repeats) for b in BATCHES}
    out["vector_copy"] = {"1024": bench_vector(variant, 1024, max(5, int(vec_steps[1024] * scale)), repeats, copy=True)}
    out["memory"] = engine_memory(variant)
    out["memory"]["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if curve:
        out["curve"] = bench_curve(variant, repeats, quick)
    if search:
        out["search"] = search_figures(variant, repeats, quick)
    if trained is not None:
        out["training"] = trained
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
    if "curve" in result:
        print("cost curve, vector env (copy=False):")
        print(f"  {'batch':>6} {'ms/step':>10} {'env-steps/s':>12} {'engine MiB':>11}")
        for row in result["curve"]:
            print(
                f"  {row['batch']:>6} {row['ms_per_step']:>10.3f} {row['env_steps_per_s']:>12,.0f} "
                f"{row['engine_mib']:>11.2f}"
            )
    if "search" in result:
        s = result["search"]
        print(
            f"search's rollout kernel, one thread ({s['positions']:.0f} positions, {s['rollout_games']:.0f} rollouts):"
        )
        print(f"  {'heuristic decision':<28} {s['heuristic_us']:>9.2f} us")
        print(f"  {'rollout (a game from the deal)':<28} {s['rollout_us']:>9.1f} us")
        print(f"  {'engine play (legal + step)':<28} {s['play_out_ns_per_play']:>9.0f} ns")
        print(f"  {'legal list at the deal':<28} {s['legal_one_ns']:>9.0f} ns")
        print("endgame solver, one thread (exact, every hand known; endgames played at random):")
        print(
            f"  {'cards in all hands':<20} {'positions':>9} {'ms each':>9} {'median moves':>13} {'most':>9} {'us/move':>8}"
        )
        for cards, e in s["endgame"].items():
            print(
                f"  {cards:<20} {e['positions']:>9.0f} {e['ms_per_position']:>9.2f} {e['median_moves']:>13,.0f} "
                f"{e['most_moves']:>9,.0f} {e['us_per_move']:>8.2f}"
            )
    if "training" in result:
        t = result["training"]
        print(f"training ({t['config']}: {t['algo']}, num_envs {t['num_envs']:.0f}, {t['updates']:.0f} updates):")
        print(f"  {'setting':<28} {'env-steps/s':>12} {'learner':>8}")
        for key, label in t["settings"]:  # the measured settings, in order (bigtwo.train.bench.SETTINGS)
            print(f"  {label:<28} {t[f'{key}env_steps_per_s']:>12,.0f} {t[f'{key}learner_share']:>8.0%}")
        native = "native on this machine" if t.get("bf16_native") else "emulated on this machine (slower)"
        print(f"  bfloat16 matmuls: {native}; precision: auto picks bfloat16 only where native")


def _handle(args: argparse.Namespace) -> int:
    check_count("--repeats", args.repeats)
    if args.train_config is not None and not args.train:
        raise ValueError("--train-config names the config --train measures; add --train")
    result = run_bench(
        args.variant,
        args.repeats,
        args.quick,
        args.curve,
        args.train,
        args.search,
        "default" if args.train_config is None else args.train_config,
    )
    if args.json:
        json.dump(result, sys.stdout, indent=2)
        print()
    else:
        _print_table(result)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``bench``."""
    p = sub.add_parser("bench", help="engine and environment speeds on this machine")
    add_variant(p)
    p.add_argument("--repeats", type=int, default=5, help="timed runs per figure; the median is shown (default 5)")
    p.add_argument("--quick", action="store_true", help="shorter runs (a smoke check, noisier figures)")
    p.add_argument("--curve", action="store_true", help="add the cost curve: batch 1, 2, 4, ..., 8,192")
    p.add_argument(
        "--train",
        action="store_true",
        help="add a short default PPO run's env-steps/s and learner share: alternating or overlap, float32 or bfloat16",
    )
    p.add_argument(
        "--train-config",
        default=None,
        metavar="CONFIG",
        help="the training config --train measures: a name in configs/train (e.g. strong) or a YAML file "
        "(default: default)",
    )
    p.add_argument(
        "--search",
        action="store_true",
        help="add search's rollout kernel: us per heuristic decision and per rollout, the engine's play and legal list",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    p.set_defaults(func=_handle)
