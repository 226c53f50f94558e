"""A first run says that it compiles the kernels (issue 12), once, not on every run."""

from __future__ import annotations

import io
import sys
from pathlib import Path

from numba.core.caching import UserProvidedCacheLocator

import bigtwo.cli.play as cli
from bigtwo.cli import main
from bigtwo.env.engine import jit


def _cache_with(tmp_path: Path, modules: list[str]) -> Path:
    """A cache folder holding an index file for each declared kernel module in or under ``modules``
    (module or package names), where Numba would put it."""
    for module, source in jit.kernel_files().items():
        if not any(module == m or module.startswith(m + ".") for m in modules):
            continue
        folder = tmp_path / UserProvidedCacheLocator.get_suitable_cache_subpath(str(source))
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{source.stem}.some_kernel-10.py311.nbi").write_bytes(b"")
    return tmp_path


def test_kernels_cached_reads_the_cache_folder(tmp_path):
    assert not cli.kernels_cached(tmp_path)  # empty: a first run
    assert not cli.kernels_cached(_cache_with(tmp_path / "a", ["bigtwo.env.engine.kernels"]))  # lacks the observation's
    assert cli.kernels_cached(_cache_with(tmp_path / "b", list(cli.ENGINE_KERNELS)))
    assert cli.kernels_cached(None)  # no cache folder: nothing to say


def test_the_note_is_printed_only_when_compiling_is_needed(tmp_path, monkeypatch):
    monkeypatch.setattr(jit, "CACHE_DIR", tmp_path / "empty")
    err = io.StringIO()
    assert cli.say_if_compiling(["random"], stream=err) and err.getvalue().strip() == cli.COMPILING
    engine_only = _cache_with(tmp_path / "engine", list(cli.ENGINE_KERNELS))
    monkeypatch.setattr(jit, "CACHE_DIR", engine_only)
    assert not cli.say_if_compiling(["random"], stream=io.StringIO())
    assert cli.say_if_compiling(["search:simulations=8"], stream=io.StringIO())  # the heuristic's kernels
    full = _cache_with(engine_only, ["bigtwo.agents.heuristic"])
    assert not cli.say_if_compiling(["heuristic", "random"], stream=io.StringIO())
    assert full == engine_only


def test_bigtwo_play_says_it_compiles_before_the_first_prompt(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(jit, "CACHE_DIR", tmp_path)  # as on a first run: nothing compiled yet
    monkeypatch.setattr(sys, "stdin", io.StringIO("quit\n"))
    assert main(["play", "--opponents", "random", "--seed", "1", "--hint", "random"]) == 0
    captured = capsys.readouterr()
    assert cli.COMPILING in captured.err and "Goodbye" in captured.out
    monkeypatch.setattr(jit, "CACHE_DIR", _cache_with(tmp_path / "warm", list(cli.ENGINE_KERNELS)))
    monkeypatch.setattr(sys, "stdin", io.StringIO("quit\n"))
    assert main(["play", "--opponents", "random", "--seed", "1", "--hint", "random"]) == 0
    assert cli.COMPILING not in capsys.readouterr().err
