"""What a run without a time limit says about how long it takes.

A config with ``time_limit_minutes: 0`` (the shipped ``dmc``, ``ppo`` and ``strong`` configs, and
``--set time_limit_minutes=0``) trains to its last step however long that takes: on a 2-core CPU,
100M steps are half an hour to hours. Such a run says so as it starts (``no_limit_note``): the
step it trains to and how to stop it. Once it has trained for ``PACE_AFTER_SECONDS`` it says how
long the steps left take at the rate it has measured so far (``pace_note``), once. A run with a
time limit says neither: it stops at its limit.

>>> print(pace_note(step=1_000_000, stop_step=40_000_000, steps_done=1_000_000, seconds=100.0))
at 10,000 env-steps/s (this run's first 1.7 min), the 39,000,000 steps left to step 40,000,000 take about 65 minutes
>>> duration(5.5 * 3600)
'about 5.5 hours'
"""

from __future__ import annotations

from pathlib import Path

from bigtwo.train.config import TrainConfig

PACE_AFTER_SECONDS = 60.0
"""Training seconds (this process) after which a run without a time limit says its pace."""


def duration(seconds: float) -> str:
    """``seconds`` in words: ``about 40 minutes`` up to 90 minutes, else ``about 2.5 hours``."""
    minutes = seconds / 60
    if minutes < 1.5:
        return "about a minute"
    if minutes < 90:
        return f"about {minutes:.0f} minutes"
    return f"about {minutes / 60:.1f} hours"


def no_limit_note(cfg: TrainConfig, step: int, run_dir: Path) -> str | None:
    """The line a run prints as it starts when ``cfg`` has no time limit (``None`` when it has one):
    the step it trains to and how to stop or limit it. ``step``: where it starts (a resumed run's step).
    ``None`` too when no steps are left to train (a run of expert rounds only: the rounds bound it)."""
    if cfg.time_limit_minutes > 0 or cfg.stop_step <= step:
        return None
    left = max(cfg.stop_step - step, 0)
    return (
        f"this config has no time limit (time_limit_minutes: 0): it trains to step {cfg.stop_step:,} "
        f"({left:,} steps to go) however long that takes, and says how long at its measured rate after "
        f"{PACE_AFTER_SECONDS:.0f} s. Stop it with Ctrl-C (a final checkpoint is written; "
        f"bigtwo train --resume {run_dir} goes on) or give it a limit: --set time_limit_minutes=N"
    )


def pace_note(step: int, stop_step: int, steps_done: int, seconds: float) -> str:
    """How long the steps from ``step`` to ``stop_step`` take at the rate of this process so far
    (``steps_done`` in ``seconds``)."""
    rate = steps_done / max(seconds, 1e-9)
    left = max(stop_step - step, 0)
    return (
        f"at {rate:,.0f} env-steps/s (this run's first {seconds / 60:.1f} min), the {left:,} steps left to "
        f"step {stop_step:,} take {duration(left / max(rate, 1e-9))}"
    )
