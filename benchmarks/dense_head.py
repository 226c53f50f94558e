"""The legal-plays-only network against a dense head: ``python -m benchmarks.dense_head``.

    python -m benchmarks.dense_head                   batch 1024, the default's and the strong config's widths
    python -m benchmarks.dense_head --batch 256 --repeats 5 --threads 2

Run from the repository's root (``benchmarks/`` is not installed with the package). It plays
``batch`` random ``taiwan`` games 20 steps in (mid-game decisions), then times a forward pass and
a forward + backward pass (median of ``--repeats``) of ``bigtwo.train.networks.ActionScorer`` (scores
only each row's legal plays) and of ``DenseHead`` (the same state encoder with a
~19,900-wide output masked to the legal plays), for a 128 x 2 encoder with a 64 scorer and for
256 x 2 with 128. The figures in ``bigtwo.train.networks``' docstring come from here;
``tests/test_train.py`` runs it on a small batch.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable

import numpy as np
import torch
from torch import nn

from bigtwo.env.checks import check_count
from bigtwo.env.envs.vector import VectorEnv
from bigtwo.train.networks import ActionScorer, action_features, legal_mask, masked_log_softmax

WIDTHS = ((128, 64), (256, 128))
"""(encoder width, scorer width) pairs measured: the default config's, then the strong config's."""


class DenseHead(nn.Module):
    """For comparison only: the same state encoder with a 20k-wide output masked to the legal plays."""

    def __init__(self, obs_size: int, num_actions: int, hidden_size: int = 256, state_layers: int = 2) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        width = obs_size
        for _ in range(state_layers):
            layers += [nn.Linear(width, hidden_size), nn.ReLU()]
            width = hidden_size
        self.state_encoder = nn.Sequential(*layers)
        self.head = nn.Linear(hidden_size, num_actions)
        self.value = nn.Linear(hidden_size, 1)

    def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        state = self.state_encoder(obs)
        return self.head(state).masked_fill(~mask, float("-inf")), self.value(state).squeeze(-1)


def mid_game_batch(batch: int) -> tuple[VectorEnv, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """``batch`` random ``taiwan`` games 20 steps in: the env, observations, legal ids, legal counts
    and the dense legal mask of their decisions."""
    venv = VectorEnv("taiwan", num_envs=batch, seed=0)
    obs, info = venv.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(20):  # into the middle of the games
        ids, counts = info["legal_ids"], info["legal_counts"]
        pick = (rng.random(batch) * counts).astype(np.int64)
        obs, _, _, _, info = venv.step(ids[np.arange(batch), pick].astype(np.int64))
    return (
        venv,
        torch.as_tensor(obs),
        torch.as_tensor(info["legal_ids"].astype(np.int64)),
        torch.as_tensor(info["legal_counts"].astype(np.int64)),
        torch.as_tensor(venv.action_masks().astype(bool)),
    )


def timed(fn: Callable[[], object], repeats: int) -> float:
    """Median milliseconds of ``repeats`` calls of ``fn`` (after one untimed call)."""
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)) * 1000


def measure(batch: int = 1024, repeats: int = 21, hidden: int = 128, pair: int = 64, threads: int = 1) -> dict:
    """Forward and forward + backward milliseconds (median of ``repeats``) and parameter counts of
    the legal-only scorer and of a dense head with the same state encoder, on one mid-game batch."""
    batch, repeats, threads = (
        check_count("batch", batch),
        check_count("repeats", repeats),
        check_count("threads", threads),
    )
    torch.set_num_threads(threads)
    venv, o, legal, counts, mask = mid_game_batch(batch)
    sparse = ActionScorer(venv.obs_size, action_features(venv.variant), hidden_size=hidden, pair_size=pair)
    dense = DenseHead(venv.obs_size, venv.num_actions, hidden_size=hidden)

    def fwd_sparse() -> None:
        with torch.no_grad():
            sparse(o, legal, counts)

    def fb_sparse() -> None:
        s, v = sparse(o, legal, counts)
        (masked_log_softmax(s, legal_mask(counts, s.shape[1]))[:, 0].sum() + v.sum()).backward()

    def fwd_dense() -> None:
        with torch.no_grad():
            dense(o, mask)

    def fb_dense() -> None:
        s, v = dense(o, mask)
        (torch.log_softmax(s, -1).masked_fill(~mask, 0)[:, 0].sum() + v.sum()).backward()

    return {
        "batch": batch,
        "legal_plays": int(counts.sum()),
        "mean_legal": float(counts.float().mean()),
        "width": int(legal.shape[1]),
        "hidden": hidden,
        "pair": pair,
        "threads": threads,
        "num_actions": venv.num_actions,
        "sparse_forward_ms": timed(fwd_sparse, repeats),
        "sparse_backward_ms": timed(fb_sparse, repeats),
        "sparse_params": sum(p.numel() for p in sparse.parameters()),
        "dense_forward_ms": timed(fwd_dense, repeats),
        "dense_backward_ms": timed(fb_dense, repeats),
        "dense_params": sum(p.numel() for p in dense.parameters()),
    }


def report(m: dict) -> str:
    """The figures of ``measure`` as a Markdown table with a heading line."""
    return "\n".join(
        [
            f"batch {m['batch']}, legal plays {m['legal_plays']} (mean {m['mean_legal']:.1f}, width {m['width']}), "
            f"encoder {m['hidden']} x 2, scorer {m['pair']}, {m['threads']} thread(s)",
            "| head | forward (ms) | forward + backward (ms) | parameters |",
            "|---|---|---|---|",
            f"| legal plays only | {m['sparse_forward_ms']:.1f} | {m['sparse_backward_ms']:.1f} | "
            f"{m['sparse_params'] / 1e6:.2f} M |",
            f"| dense {m['num_actions']}-wide head | {m['dense_forward_ms']:.1f} | {m['dense_backward_ms']:.1f} | "
            f"{m['dense_params'] / 1e6:.1f} M |",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.dense_head", description=(__doc__ or "").splitlines()[0])
    p.add_argument("--batch", type=int, default=1024, help="decisions per batch (default 1024)")
    p.add_argument("--repeats", type=int, default=21, help="timed passes; the median is shown (default 21)")
    p.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    args = p.parse_args(argv)
    try:
        for hidden, pair in WIDTHS:
            print(report(measure(args.batch, args.repeats, hidden, pair, args.threads)))
    except ValueError as exc:
        p.error(str(exc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
