"""A first run says that it compiles the kernels (issue 12), once, not on every run (issue 45).

The note must follow what Numba really writes: an index file per cached kernel, none for a module
whose kernels are all ``inline="always"`` (the heuristic's ``control``), none for kernels a command
never runs (the privileged state's). The fake cache folders here are written that way; the last
test lets Numba write a real one, in a fresh folder, from two runs of ``bigtwo play``.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

from numba.core.caching import UserProvidedCacheLocator

import bigtwo.cli.play as cli
from bigtwo.cli import main
from bigtwo.env.engine import jit

ROOT = Path(__file__).resolve().parents[1]


def _index_name(source: Path, kernel: str, line: int) -> str:
    """The index file Numba writes for a cached kernel of ``source`` (``<stem>.<name>-<line>.pyXY.nbi``)."""
    return f"{source.stem}.{kernel}-{line}.py{sys.version_info[0]}{sys.version_info[1]}.nbi"


def _cache_with(folder: Path, modules: list[str]) -> Path:
    """``folder`` after adding, for each declared kernel module in or under ``modules`` (module or
    package names), the index files Numba writes for it: one per cached kernel, where Numba puts them."""
    for module, source in jit.kernel_files().items():
        if not any(module == m or module.startswith(m + ".") for m in modules):
            continue
        where = folder / UserProvidedCacheLocator.get_suitable_cache_subpath(str(source))
        where.mkdir(parents=True, exist_ok=True)
        for kernel, line in jit.cached_kernels(source).items():
            (where / _index_name(source, kernel, line)).write_bytes(b"")
    return folder


def _index_files(folder: Path) -> set[str]:
    return {p.name for p in folder.rglob("*.nbi")}


def test_the_fake_cache_holds_no_file_of_an_inlined_module(tmp_path):
    control = jit.module_file("bigtwo.agents.heuristic.control")
    assert jit.cached_kernels(control) == {}  # every kernel inline="always"
    folder = _cache_with(tmp_path, ["bigtwo.agents.heuristic"])
    assert not any(name.startswith("control.") for name in _index_files(folder))
    assert any(name.startswith("planner.search_plan-") for name in _index_files(folder))


def test_kernels_cached_reads_the_cache_folder(tmp_path):
    assert not cli.kernels_cached(tmp_path)  # empty: a first run
    assert not cli.kernels_cached(_cache_with(tmp_path / "a", ["bigtwo.env.engine.kernels"]))  # lacks the observation's
    assert cli.kernels_cached(_cache_with(tmp_path / "b", list(cli.ENGINE_KERNELS)))
    assert cli.kernels_cached(None)  # no cache folder: nothing to say
    # the privileged state's kernels, which no game runs, are not asked for
    assert "bigtwo.env.engine.state" in jit.kernel_files()
    assert not any(p.startswith("state.") for p in _index_files(tmp_path / "b"))


def test_the_note_is_printed_only_when_compiling_is_needed(tmp_path, monkeypatch):
    monkeypatch.setattr(jit, "CACHE_DIR", tmp_path / "empty")
    err = io.StringIO()
    assert cli.say_if_compiling(["random"], stream=err) and err.getvalue().strip() == cli.compiling_note(True, False)
    err = io.StringIO()
    assert cli.say_if_compiling(["heuristic"], stream=err)
    assert err.getvalue().strip() == cli.compiling_note(True, True) and "about a minute" in err.getvalue()
    folder = _cache_with(tmp_path / "warm", list(cli.ENGINE_KERNELS))
    monkeypatch.setattr(jit, "CACHE_DIR", folder)
    assert not cli.say_if_compiling(["random"], stream=io.StringIO())
    err = io.StringIO()
    assert cli.say_if_compiling(["heuristic"], stream=err)  # the heuristic's kernels are not there yet
    assert err.getvalue().strip() == cli.compiling_note(False, True) and "about 30 s" in err.getvalue()
    _cache_with(folder, ["bigtwo.agents.heuristic"])  # what a heuristic run writes: no control file
    assert not cli.say_if_compiling(["heuristic", "random"], stream=io.StringIO())
    assert cli.say_if_compiling(["search:simulations=8"], stream=io.StringIO())  # the search's own kernels
    _cache_with(folder, ["bigtwo.agents.search"])
    assert not cli.say_if_compiling(["search:simulations=8", "heuristic"], stream=io.StringIO())


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


def _play_heuristic(cache: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    return subprocess.run(
        [sys.executable, "-m", "bigtwo.cli", "play", "--opponents", "heuristic", "--seed", "1"],
        input="quit\n",
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_a_heuristic_command_says_it_compiles_on_its_first_run_only(tmp_path):
    """The real thing (issue 45): Numba compiles into a fresh cache folder, then reads it back."""
    cache = tmp_path / "numba"
    first = _play_heuristic(cache)
    assert first.returncode == 0, first.stderr
    assert cli.COMPILING in first.stderr and "Goodbye" in first.stdout
    second = _play_heuristic(cache)
    assert second.returncode == 0, second.stderr
    assert cli.COMPILING not in second.stderr and "Goodbye" in second.stdout
    # what Numba wrote is what the note looks for: only index files of the kernels cached_kernels lists
    written = _index_files(cache)
    expected = {
        _index_name(source, kernel, line)
        for source in jit.kernel_files().values()
        for kernel, line in jit.cached_kernels(source).items()
    }
    assert written and written <= expected
    assert not any(name.startswith(("control.", "state.")) for name in written)
