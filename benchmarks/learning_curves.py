"""Learning curves of training runs against one fixed opponent, drawn from their TensorBoard logs.

Each run's periodic evaluations (``eval/<opponent>/mean_payoff`` and ``opponent_mean_payoff``,
1 trained seat vs 3 copies of the opponent on duplicate deals) give the trained seat's lead over
the opponents' mean at each evaluation step; the picture has one line per run, over environment
steps and over the minutes the run has trained (warm start included; a run resumed in several
sittings counts only its sittings). A run logs the wall-clock and CPU minutes it has trained beside
each evaluation (``time/wall_minutes``, ``time/cpu_minutes``); for logs from before those scalars the
minutes are read off the events' times, where a stretch of over ``PAUSE_MINUTES`` with no event
logged is a pause between sittings. ``--by cpu`` draws CPU minutes (every core counted) instead::

    python -m benchmarks.learning_curves runs/e1 runs/e3 --label e1="league only" \\
        --label e3="advice + imitation + league" --opponent heuristic:weights=cards --out curves.png

Needs the ``train`` and ``notebooks`` extras (TensorBoard's event reader, matplotlib).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

PAUSE_MINUTES = 5.0  # a running trainer logs every rollout (seconds apart); a longer silence is a pause


def training_minutes(wall_times: np.ndarray, at: np.ndarray, pause: float = PAUSE_MINUTES) -> np.ndarray:
    """Minutes of training from the first of ``wall_times`` (seconds, every event the run logged)
    to each time of ``at`` (some of them), leaving out every silence longer than ``pause`` minutes
    between two consecutive events (the run stopped there and was resumed later)."""
    times = np.unique(np.asarray(wall_times, float))
    gaps = np.diff(times) / 60
    active = np.concatenate([[0.0], np.cumsum(np.where(gaps > pause, 0.0, gaps))])
    return active[np.searchsorted(times, np.asarray(at, float))]


def lead_curve(run_dir: str | Path, opponent: str, by: str = "wall") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(steps, minutes trained, lead)`` of the run's evaluations against ``opponent``: wall-clock minutes
    (``by="wall"``) or CPU minutes (``"cpu"``) of the run's sittings; ``ValueError`` when the run has none."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(run_dir), size_guidance={"scalars": 0})
    acc.Reload()
    tag = f"eval/{opponent}/mean_payoff"
    if tag not in acc.Tags()["scalars"]:
        raise ValueError(f"{run_dir}: no evaluations against {opponent!r} (no scalar {tag!r})")
    ours = acc.Scalars(tag)
    theirs = acc.Scalars(f"eval/{opponent}/opponent_mean_payoff")
    logged = np.concatenate([[e.wall_time for e in acc.Scalars(t)] for t in acc.Tags()["scalars"]])
    steps = np.array([e.step for e in ours], float)
    clock = {"wall": "time/wall_minutes", "cpu": "time/cpu_minutes"}[by]
    if clock in acc.Tags()["scalars"]:  # logged by the run itself beside each evaluation
        at_step = {e.step: e.value for e in acc.Scalars(clock)}
        minutes = np.array([at_step.get(e.step, np.nan) for e in ours])
    elif by == "cpu":
        raise ValueError(f"{run_dir}: no CPU minutes logged (runs log {clock!r} beside each evaluation)")
    else:
        minutes = training_minutes(logged, [e.wall_time for e in ours])
    lead = np.array([a.value - b.value for a, b in zip(ours, theirs, strict=True)])
    last = np.append(steps[1:] != steps[:-1], True)  # at the final step, the final evaluation (more deals)
    return steps[last], minutes[last], lead[last]


def curves_figure(runs: list[str | Path], opponent: str, labels: dict[str, str] | None = None, by: str = "wall"):
    """The picture: one line per run of its lead over ``opponent``, by environment steps (left) and
    by wall-clock minutes (right)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = labels or {}
    fig, (by_step, by_time) = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for run in runs:
        steps, minutes, lead = lead_curve(run, opponent, by)
        name = labels.get(Path(run).name, Path(run).name)
        by_step.plot(steps / 1e6, lead, marker="o", label=name)
        by_time.plot(minutes, lead, marker="o", label=name)
    for ax in (by_step, by_time):
        ax.axhline(0, color="grey", lw=0.8)
        ax.grid(alpha=0.3)
    by_step.set_xlabel("environment steps (millions)")
    clock = "wall-clock" if by == "wall" else "CPU (every core)"
    by_time.set_xlabel(f"{clock} minutes trained (warm start included; sittings only)")
    by_step.set_ylabel(f"payoff lead over 3 x {opponent}")
    by_step.legend(fontsize=8)
    fig.suptitle(f"the trained seat's lead over {opponent} (periodic evaluations)")
    fig.tight_layout()
    return fig


def _label(item: str) -> tuple[str, str]:
    run, sep, text = item.partition("=")
    if not sep or not run:
        raise argparse.ArgumentTypeError(f"--label wants RUN=TEXT (a run folder's name, then its legend), not {item!r}")
    return run, text


def main(argv: list[str] | None = None) -> None:
    from bigtwo.arena.plots import FORMATS, save_figure

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", help="run folders (TensorBoard logs)")
    parser.add_argument("--opponent", default="heuristic:weights=cards", help="the evaluation opponent")
    parser.add_argument(
        "--label", action="append", type=_label, default=[], metavar="RUN=TEXT", help="a run's legend text"
    )
    parser.add_argument("--out", required=True, help="picture file (.png, .svg, .pdf)")
    parser.add_argument(
        "--by", choices=("wall", "cpu"), default="wall", help="the time axis: wall-clock or CPU minutes"
    )
    args = parser.parse_args(argv)
    if Path(args.out).suffix.lower() not in FORMATS:
        parser.error(f"--out {args.out!r}: the file must end in {', '.join(FORMATS)}")
    try:
        fig = curves_figure(args.runs, args.opponent, dict(args.label), args.by)
    except ValueError as err:
        parser.exit(2, f"learning_curves: {err}\n")
    print(f"wrote {save_figure(fig, args.out)}")


if __name__ == "__main__":
    main()
