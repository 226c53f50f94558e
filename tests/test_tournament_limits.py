"""Tournaments at their limits (issue 12): thousands of agents in memory that follows the games,
a progress bar that moves within a chunk, validated arguments, and SIGTERM/SIGINT ending the run
with its worker processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from bigtwo.arena import rating as bradley_terry
from bigtwo.arena.chunk import play_chunk
from bigtwo.arena.deals import Chunk
from bigtwo.arena.tournament import run_tournament
from bigtwo.cli import main
from bigtwo.env import load_variant

TAIWAN = load_variant("taiwan")


def test_many_agents_few_deals_memory_follows_the_games():
    """5,000 entries used to ask for (deals, K, K) and (K, K) arrays: 200 MB per deal here."""
    k, deals = 5_000, 24
    tracemalloc.start()
    try:
        result = run_tournament(TAIWAN, ["random"] * k, deals=deals, seed=0, workers=1, progress=False, bootstrap=10)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * 2**20, f"peak {peak / 2**20:.0f} MiB"
    played = [s for s in result.stats if s.games]
    assert len(played) == len(set(result.tables.reshape(-1).tolist())) <= deals * 4
    assert all(s.games == 4 * s.deals for s in played)  # each deal in four rotations
    ratings = np.array([s.rating for s in result.stats])
    assert abs(ratings.sum()) < 1e-6 and np.isfinite(ratings).all()
    unseen = [s for s in result.stats if not s.games]
    assert len({s.rating for s in unseen}) == 1 and abs(unseen[0].rating) < 1 and unseen[0].rating_se < 1e-9
    assert result.games == deals * 4
    assert result.payoff_at.shape == (deals, 4)


def test_sparse_fit_matches_the_dense_fit():
    rng = np.random.default_rng(1)
    k = 30
    wins = rng.integers(0, 6, size=(k, k)).astype(np.float64) * (rng.random((k, k)) < 0.3)
    np.fill_diagonal(wins, 0)
    a, b = np.nonzero(wins)
    sparse = bradley_terry.fit_bradley_terry_pairs(a, b, wins[a, b], k)
    np.testing.assert_allclose(sparse, bradley_terry.fit_bradley_terry(wins), atol=1e-8)
    with pytest.raises(ValueError, match="prior > 0"):
        bradley_terry.fit_bradley_terry_pairs(a, b, wins[a, b], k, prior=0.0)


def test_rate_tables_dense_and_sparse_paths_agree(monkeypatch):
    result = run_tournament(TAIWAN, ["random", "greedy"] * 5, deals=80, seed=2, workers=1, progress=False, rating=True)
    dense = {s.name: (s.rating, s.rating_se) for s in result.stats}
    monkeypatch.setattr(bradley_terry, "MAX_DENSE_AGENTS", 4)  # 10 agents: the pairs that met
    sparse = {
        s.name: (s.rating, s.rating_se)
        for s in run_tournament(
            TAIWAN, ["random", "greedy"] * 5, deals=80, seed=2, workers=1, progress=False, rating=True
        ).stats
    }
    for name, (rating, se) in dense.items():
        assert sparse[name][0] == pytest.approx(rating, abs=1e-6)
        assert sparse[name][1] == pytest.approx(se, rel=1e-6)
    with pytest.raises(ValueError, match="use bootstrap > 0"):
        run_tournament(TAIWAN, ["random"] * 10, deals=4, workers=1, progress=False, bootstrap=0)


def test_rate_tables_equals_rate_deals():
    rng = np.random.default_rng(3)
    d, k, p = 40, 6, 4
    tables = np.argsort(rng.random((d, k)), axis=1)[:, :p]
    pairs_at = rng.integers(0, 3, size=(d, p, p)).astype(np.float64) / 2
    pairs_at[:, np.arange(p), np.arange(p)] = 0
    dense = np.zeros((d, k, k))
    for i in range(p):
        for j in range(p):
            dense[np.arange(d), tables[:, i], tables[:, j]] += pairs_at[:, i, j]
    for bootstrap in (0, 25):
        a = bradley_terry.rate_tables(tables, pairs_at, k, bootstrap=bootstrap, seed=5)
        b = bradley_terry.rate_deals(dense, bootstrap=bootstrap, seed=5)
        np.testing.assert_array_equal(a.rating, b.rating)
        np.testing.assert_array_equal(a.se, b.se)
        assert a.method == b.method


# ---------------------------------------------------------------- progress


def test_progress_moves_within_a_chunk_and_changes_nothing():
    deals = 12
    seeds = np.random.SeedSequence([0, 0xB162]).generate_state(deals, dtype=np.uint64)
    chunk = Chunk(0, TAIWAN, ["random"] * 4, seeds, np.tile(np.arange(4), (deals, 1)), 0, False)
    told: list[int] = []
    with_report = play_chunk(chunk, report=told.append)
    without = play_chunk(chunk)
    assert sum(told) == deals and len(told) > 3 and all(n > 0 for n in told)
    np.testing.assert_array_equal(with_report.payoff, without.payoff)
    shown = run_tournament(TAIWAN, ["random"] * 4, deals=30, seed=4, workers=2, chunk_deals=8, progress=True)
    quiet = run_tournament(TAIWAN, ["random"] * 4, deals=30, seed=4, workers=1, chunk_deals=8, progress=False)
    assert shown.to_dict(timing=False) == quiet.to_dict(timing=False)


# ---------------------------------------------------------------- arguments


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"bootstrap": -1}, "bootstrap must be a non-negative integer"),
        ({"bootstrap": 1.5}, "bootstrap must be a non-negative integer"),
        ({"deals": True}, "deals must be a positive integer"),
        ({"workers": 0}, "workers must be a positive integer"),
        ({"workers": 1.5}, "workers must be a positive integer"),
        ({"chunk_deals": 0}, "chunk_deals must be a positive integer"),
        ({"chunk_deals": True}, "chunk_deals must be a positive integer"),
    ],
)
def test_tournament_arguments_are_validated(kwargs, message):
    kwargs = {"deals": 2, "workers": 1, "progress": False, **kwargs}
    with pytest.raises(ValueError, match=message):
        run_tournament(TAIWAN, ["random"] * 4, **kwargs)


def test_cli_bootstrap_minus_one_is_an_error(capsys):
    argv = ["tournament", "--agents", "random*5", "--deals", "2", "--workers", "1", "--quiet", "--bootstrap", "-1"]
    assert main(argv) == 2
    assert "bootstrap must be a non-negative integer" in capsys.readouterr().err


# ---------------------------------------------------------------- signals


def _children(pid: int) -> set[int]:
    """Every live descendant of ``pid`` (from /proc)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {c for c, p in parents.items() if p in frontier} - found
        found |= frontier
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc to list child processes")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_ends_the_tournament_and_its_workers(signum):
    bigtwo = Path(sys.executable).with_name("bigtwo")
    cmd = [str(bigtwo)] if bigtwo.exists() else [sys.executable, "-m", "bigtwo.cli"]
    cmd += ["tournament", "--agents", "search:simulations=64,heuristic,random,random", "--deals", "400"]
    cmd += ["--chunk-deals", "4", "--workers", "2", "--quiet"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        workers: set[int] = set()
        while time.monotonic() < deadline and proc.poll() is None:
            workers = _children(proc.pid)
            if len([p for p in workers if b"multiprocessing" in Path(f"/proc/{p}/cmdline").read_bytes()]) >= 2:
                break
            time.sleep(0.2)
        assert proc.poll() is None and len(workers) >= 2, "the tournament did not start its workers"
        time.sleep(3.0)  # let them play
        workers = _children(proc.pid)
        os.kill(proc.pid, signum)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err[-2000:]
    assert "interrupted" in err and "Traceback" not in err
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and any(_alive(p) for p in workers):
        time.sleep(0.2)
    assert not [p for p in workers if _alive(p)], "worker processes outlived the tournament"
