"""Turn a finished run's checkpoint into a shipped, policy-only weight file for ``strong``.

    python -m bigtwo.train.export runs/taiwan__ppo__1__1700000000                  # its newest checkpoint
    python -m bigtwo.train.export runs/<run>/checkpoints/step_000160000000.pt --variant taiwan
    python -m bigtwo.train.export runs/<run> --out-dir my_weights                  # not into the package

The file (``agents/pretrained/<variant>.pt`` by default, or the folder ``BIGTWO_PRETRAINED_DIR``
names; see ``bigtwo.agents.pretrained``) keeps what playing needs and what tells where it came from:
the network's weights and constructor arguments, the variant's rules, the run's config, its
step counters and its ``provenance`` (``bigtwo.train.provenance``: command, seed, steps, training time,
code version) with an ``exported`` entry added. The optimizer and every other resume state are
dropped, so the file is the network's size (about 0.85 MB for the strong config's 256x2 network). It
is a ``bigtwo.train.checkpoint`` file like any other (``weights_only`` loading, atomic write).

``--variant`` names the variant it ships for (a name or YAML file; default: the one it was
trained on); its rules must be the training rules (``bigtwo.train.policy_agent.rule_differences``),
else ``ValueError``: ``strong`` would refuse the file anyway. A checkpoint from before
provenance records gets what it still knows (seed, steps, training time from the run's
``final_eval.json`` when there is one) and no sessions.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bigtwo.agents import pretrained
from bigtwo.env.rules.variant import Variant, load_variant
from bigtwo.train import checkpoint as ckpt
from bigtwo.train import provenance
from bigtwo.train.policy_agent import check_obs_version, checkpoint_variant, rule_differences


def find_checkpoint(source: str | Path) -> Path:
    """``source`` itself if it is a file, else the newest checkpoint of the run folder ``source``."""
    path = Path(source)
    if path.is_file():
        return path
    if path.is_dir():
        latest = ckpt.latest_checkpoint(path)
        if latest is None:
            raise ValueError(
                f"{source}: a folder without checkpoints (expected a run folder with checkpoints/step_*.pt)"
            )
        return latest
    raise ValueError(f"{source} does not exist: give a run folder or a checkpoint file")


def _known_provenance(payload: dict[str, Any], path: Path) -> dict[str, Any]:
    """What a checkpoint from before provenance records still tells (no sessions)."""
    seconds = None
    final = path.parent.parent / "final_eval.json"
    if final.is_file() and path.parent.name == "checkpoints":
        data = json.loads(final.read_text(encoding="utf-8"))
        if data.get("step") == payload["global_step"]:
            seconds = data.get("train_seconds")
    return {
        "algo": payload["algo"],
        "seed": payload["config"].get("seed"),
        "steps": int(payload["global_step"]),
        "train_seconds": seconds,
        "sessions": [],
    }


def policy_only(payload: dict[str, Any], source: Path, variant: Variant) -> dict[str, Any]:
    """The shipped form of a checkpoint's ``payload``: the policy keys, named for ``variant``, with
    the provenance and an ``exported`` entry. ``ValueError`` if ``variant``'s rules differ or it
    reads another observation version."""
    check_obs_version(payload, str(source), "retrain it (`bigtwo train`) and export that run")
    trained = checkpoint_variant(payload)
    diffs = rule_differences(trained, variant)
    if diffs:
        raise ValueError(
            f"{source}: trained on other rules than {variant.name!r} ({'; '.join(diffs)}); "
            "ship it under a variant with its rules (--variant NAME or a YAML file)"
        )
    out = {key: payload[key] for key in ckpt.POLICY_LAYOUT}  # kept; resume is not
    out["variant"] = {"name": variant.name, "settings": trained.replace(name=variant.name).to_dict()}
    made = dict(payload.get("provenance") or _known_provenance(payload, source))
    made["exported"] = {"source": str(source), "time": provenance.now(), **provenance.code_version()}
    out["provenance"] = made
    return out


def export_policy(source: str | Path, variant: Variant | str | None = None, out_dir: str | Path | None = None) -> Path:
    """Write the policy-only file of ``source`` (a run folder or a checkpoint) for ``variant``
    (default: the training variant) as ``OUT_DIR/<variant name>.pt`` (default folder:
    ``bigtwo.agents.pretrained.pretrained_dir()``); returns its path."""
    path = find_checkpoint(source)
    payload = ckpt.load(path)
    var = checkpoint_variant(payload) if variant is None else load_variant(variant)
    folder = Path(out_dir) if out_dir is not None else pretrained.pretrained_dir()
    if not pretrained.FILE_NAME.match(var.name):
        raise ValueError(f"variant name {var.name!r} cannot name a weight file (letters, digits, '.', '_', '-')")
    return ckpt.atomic_save(policy_only(payload, path, var), folder / f"{var.name}{pretrained.SUFFIX}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bigtwo.train.export",
        description="Write a run's checkpoint as a policy-only weight file for the 'strong' agent.",
    )
    parser.add_argument("source", metavar="RUN_DIR_OR_CKPT", help="a run folder (its newest checkpoint) or a .pt file")
    parser.add_argument("--variant", default=None, help="variant it ships for (default: the training variant)")
    parser.add_argument(
        "--out-dir",
        default=None,
        help=f"folder to write <variant>.pt into (default: ${pretrained.ENV_VAR} or the package's agents/pretrained)",
    )
    args = parser.parse_args(argv)
    try:
        written = export_policy(args.source, args.variant, args.out_dir)
    except ValueError as exc:
        print(f"python -m bigtwo.train.export: error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {written} ({written.stat().st_size / 1e6:.2f} MB)")
    for line in pretrained.describe_provenance(ckpt.load(written).get("provenance")):
        print(f"  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
