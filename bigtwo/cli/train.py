"""``bigtwo train``: self-play training from a config file, with field overrides and resume.

    bigtwo train                                  configs/train/default.yaml on taiwan, then a final evaluation
    bigtwo train --config dmc                     a shipped config (advised, default, dmc, ppo, strong) or a YAML path
    bigtwo train --config ppo --set lr=1e-4 --set num_envs=128
    bigtwo train --set variant=hong-kong --set run_name=hk1
    bigtwo train --set variant=hong-kong --rule scoring=collect   a variant field: --rule, as in every command
    bigtwo train --resume runs/taiwan__ppo__1__1700000000
    bigtwo train --fields                         every config field with its built-in default and description
    bigtwo train --config dmc --set lr=1e-4 --show   the effective config of that command, each field's source
    bigtwo train --ray local                      the same run with rollout actors on a Ray cluster started here
    bigtwo train --ray auto --set ray_actors=16   rollout actors on the cluster this machine joined (`ray start`)

Overrides use one scheme: ``--set FIELD=VALUE`` (repeatable; VALUE read as YAML) changes a config
field, ``--rule KEY=VALUE`` a field of the variant trained on (merged over the config's
``variant_settings``), as ``--rule`` does in every ``bigtwo`` command. A run whose
folder exists (same ``run_name``) resumes from its newest intact checkpoint; ``--resume RUN_DIR`` does
the same from the config saved in that run, ``--set`` changing only what may change on resume
(e.g. ``total_timesteps`` to train longer). ``--ray local|auto|ADDRESS`` runs the same config with
``ray_actors`` rollout actors on a Ray cluster (``bigtwo.train.ray.actors``; the ``ray`` extra); a run
resumes the way it was started, with or without ``--ray``. torch is imported only when the command runs.
"""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path
from typing import TYPE_CHECKING

from bigtwo.cli.options import add_ray, add_rule, rule_overrides
from bigtwo.train.config import config_names

if TYPE_CHECKING:
    from bigtwo.train.config import TrainConfig


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "train",
        help="self-play training (PPO or Deep Monte-Carlo; needs torch)",
        description="Self-play training (PPO or Deep Monte-Carlo) from a config file, with field overrides and "
        "resume; prints a duplicate-tournament evaluation of the final agent and where the run's files are.",
        epilog="Examples:\n"
        + "\n".join(line for line in (__doc__ or "").splitlines() if line.startswith("    bigtwo")),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--config",
        default=None,
        metavar="NAME|FILE",
        help=f"training config: {', '.join(config_names())}, or a YAML file (default: default)",
    )
    p.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="override a config field (repeatable), e.g. --set lr=1e-4",
    )
    add_rule(p)
    p.add_argument("--resume", metavar="RUN_DIR", help="continue the run in RUN_DIR from its newest intact checkpoint")
    p.add_argument(
        "--fields",
        action="store_true",
        help="list every config field with its built-in default and description, then exit (a config's values: --show)",
    )
    p.add_argument(
        "--show",
        action="store_true",
        help="print this command's effective config (the config file, its per_variant part, --set and --rule "
        "applied) with each field's source, then exit without training",
    )
    add_ray(p, "rollout actors")
    p.set_defaults(func=_train)


def _need_torch() -> None:
    """``ValueError`` naming the ``train`` extra when torch (or TensorBoard) is not installed."""
    missing = [name for name in ("torch", "tensorboard") if not _importable(name)]
    if missing:
        raise ValueError(
            f"training needs {' and '.join(missing)}, which {'is' if len(missing) == 1 else 'are'} not installed; "
            "install the train extra: pip install 'bigtwo[train]'"
        )


def _importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a module set to None in sys.modules, or a broken install
        return False


def _saved_algo(run_dir: Path) -> str | None:
    """The ``algo`` in the run folder's ``config.yaml``, or ``None`` if it cannot be read."""
    import yaml

    try:
        data = yaml.safe_load((run_dir / "config.yaml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    algo = data.get("algo") if isinstance(data, dict) else None
    return algo if isinstance(algo, str) else None


def with_rules(cfg: TrainConfig, args: argparse.Namespace, sources: dict[str, str] | None = None) -> TrainConfig:
    """``cfg`` with the ``--rule KEY=VALUE`` variant fields merged over its ``variant_settings`` (checked);
    ``sources`` (see ``load_config``) then says ``--rule`` for that field."""
    from bigtwo.train.config import make_config

    rules = rule_overrides(args)
    if not rules:
        return cfg
    if sources is not None:
        sources["variant_settings"] = f"--rule over {sources.get('variant_settings', 'default')}"
    return make_config({"variant_settings": {**cfg.variant_settings, **rules}}, base=cfg, source="--rule")


def check_as_the_run_would(cfg: TrainConfig) -> None:
    """What a run checks as it starts, for ``--show``: the variant (its name and ``variant_settings``) and, where
    torch is installed, the device (``cuda`` on a machine without CUDA). ``ValueError`` naming what is allowed."""
    from importlib.util import find_spec

    from bigtwo.env.rules.variant import load_variant

    load_variant(cfg.variant, **cfg.variant_settings)
    if find_spec("torch") is not None:
        from bigtwo.train.run import resolve_device

        resolve_device(cfg.device)


def show_config(cfg: TrainConfig, sources: dict[str, str]) -> str:
    """Every field of ``cfg`` with its value and where it came from, one a line (``bigtwo train --show``)."""
    values = cfg.to_dict()
    width = max(map(len, values))
    shown = {name: repr(value) for name, value in values.items()}
    vwidth = min(40, max(map(len, shown.values())))
    lines = [f"{'field':<{width}}  {'value':<{vwidth}}  source"]
    lines += [f"{name:<{width}}  {shown[name]:<{vwidth}}  {sources.get(name, 'default')}" for name in values]
    return "\n".join(lines)


def _train(args: argparse.Namespace) -> int:
    from bigtwo.train.config import FIELDS, allowed_values, field_docs, load_config, make_config

    if args.fields:
        docs = field_docs()
        for name, f in FIELDS.items():
            default = f.default_factory() if callable(f.default_factory) else f.default
            print(f"{name:<20} {default!r:<14} {docs.get(name, '')} Allowed: {allowed_values(name)}.")
        return 0
    if args.ray is not None:
        from bigtwo.arena.cluster import check_address, need_ray

        check_address(args.ray)
        need_ray()
    sources: dict[str, str] = {}
    if args.resume:
        _need_torch()
        from bigtwo.train import checkpoint as ckpt

        run_dir = Path(args.resume)
        if args.config is not None:
            raise ValueError("--resume uses the config saved in the run; drop --config (use --set to change a field)")
        if ckpt.latest_checkpoint(run_dir) is None:
            raise ValueError(f"--resume {args.resume}: no checkpoints in {run_dir / 'checkpoints'}")
        # the newest checkpoint that is intact and this run's; the run itself renames and names the others
        latest, saved, skipped = ckpt.find_resumable(run_dir, _saved_algo(run_dir), ckpt.read_run_id(run_dir))
        if latest is None or saved is None:
            reasons = "; ".join(why for _, why in skipped)
            raise ValueError(f"--resume {args.resume}: no checkpoint can be resumed ({reasons})")
        base = make_config(saved["config"], source=str(latest))
        base = make_config({"run_name": run_dir.resolve().name, "runs_dir": str(run_dir.resolve().parent)}, base=base)
        cfg = with_rules(load_config(base=base, overrides=args.overrides, sources=sources), args, sources)
        sources.update({k: f"the run's saved config ({latest})" for k, v in sources.items() if v == "base"})
    else:  # checked before torch is needed
        cfg = with_rules(load_config(args.config or "default", args.overrides, sources=sources), args, sources)
    if args.show:
        check_as_the_run_would(cfg)
        print(show_config(cfg, sources))
        return 0
    _need_torch()
    import signal

    from bigtwo.train.loop import run_training

    result = run_training(cfg, ray=args.ray)
    # stopped by a signal (with a final checkpoint): exit as a shell reports that signal, 128 + its number
    return 0 if result.stopped_by is None else 128 + signal.Signals[result.stopped_by].value
