"""The Numba set-up (``bigtwo_env.jit``): one cache folder keyed by every kernel module's source.

A cached kernel that calls another module's compiled function is not recompiled when that module
changes (Numba keys the cache on the kernel's own file), so the folder must change whenever any
kernel source does. These tests prove it without editing the package: the key is computed over
given sources, over a temporary copy of the tree, and in fresh processes.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numba
import pytest

from bigtwo_env import jit
from bigtwo_env import kernels as K
from bigtwo_env import observation as O

ROOT = Path(jit.__file__).resolve().parent.parent
PACKAGES = ("bigtwo_env", "agents", "train")


def test_key_is_stable_for_the_same_sources() -> None:
    sources = jit.read_sources()
    assert jit.cache_key(sources) == jit.cache_key(dict(sources))
    assert jit.cache_key(sources) == jit.cache_key(dict(reversed(list(sources.items()))))  # order does not matter
    assert re.fullmatch(r"[0-9a-f]{16}", jit.cache_key(sources))


@pytest.mark.parametrize("module", jit.KERNEL_SOURCES)
def test_key_changes_when_any_kernel_source_changes(module: str) -> None:
    sources = jit.read_sources()
    edited = dict(sources, **{module: sources[module] + b"\n# one more line\n"})
    assert jit.cache_key(edited) != jit.cache_key(sources)


def test_key_changes_with_the_numba_or_python_version() -> None:
    sources = jit.read_sources()
    base = jit.cache_key(sources, ("0.60.0", "3.11.0", "linux"))
    assert jit.cache_key(sources, ("0.61.0", "3.11.0", "linux")) != base
    assert jit.cache_key(sources, ("0.60.0", "3.12.0", "linux")) != base


def test_key_follows_the_files_of_a_copied_tree(tmp_path: Path) -> None:
    for rel in jit.KERNEL_SOURCES:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, tmp_path / rel)
    copied = jit.cache_key(jit.read_sources(tmp_path))
    assert copied == jit.cache_key(jit.read_sources())
    shared = tmp_path / "bigtwo_env" / "kernels.py"  # a helper the heuristic's kernels call
    shared.write_text(shared.read_text().replace("def popcount(x):", "def popcount(x):  # edited"))
    assert jit.cache_key(jit.read_sources(tmp_path)) != copied


def test_the_folder_in_use_is_the_keyed_one() -> None:
    assert jit.CACHE_DIR is not None
    assert jit.CACHE_DIR.name == f"bigtwo-{jit.cache_key(jit.read_sources())}"
    assert numba.config.CACHE_DIR == str(jit.CACHE_DIR) == os.environ["NUMBA_CACHE_DIR"]
    for kernel in (K.legal_all, K.lookup, O.observe_all):
        assert Path(kernel._cache.cache_path).parent == jit.CACHE_DIR


def test_every_module_with_kernels_is_keyed_and_uses_the_projects_njit() -> None:
    with_kernels = {
        path.relative_to(ROOT).as_posix()
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
        if re.search(r"^@njit\b", path.read_text(), re.M)
    }
    compiled_in = {"agents/heuristic/weights.py"}  # no kernels, but constants the heuristic's kernels compile in
    assert with_kernels | {"bigtwo_env/jit.py"} | compiled_in == set(jit.KERNEL_SOURCES)
    for rel in with_kernels:
        if rel.startswith(("bigtwo_env/", "agents/")):
            text = (ROOT / rel).read_text()
            assert "from numba import" not in text and "numba.njit" not in text, rel


def _cache_dir_in_fresh_process(environ: dict[str, str]) -> str:
    code = "import numba, agents.heuristic; print(numba.config.CACHE_DIR)"
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME")}
    env.update(environ)
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return run.stdout.strip()


def test_a_user_cache_dir_is_the_base_and_workers_reuse_the_folder(tmp_path: Path) -> None:
    key = jit.cache_key(jit.read_sources())
    folder = _cache_dir_in_fresh_process({"NUMBA_CACHE_DIR": str(tmp_path)})
    assert folder == str(tmp_path / f"bigtwo-{key}") and Path(folder).is_dir()
    # a worker started with the parent's environment keeps the folder (no nesting)
    assert _cache_dir_in_fresh_process({"NUMBA_CACHE_DIR": folder}) == folder
    # without NUMBA_CACHE_DIR: the per-user cache folder
    xdg = tmp_path / "xdg"
    assert _cache_dir_in_fresh_process({"XDG_CACHE_HOME": str(xdg)}) == str(xdg / "bigtwo" / "numba" / f"bigtwo-{key}")


def test_an_unwritable_base_falls_back_to_the_temp_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "temp"))
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    folder = jit.choose_cache_dir("0123456789abcdef", {"NUMBA_CACHE_DIR": str(blocker / "cache")})
    assert folder == jit.cache_bases({})[-1] / "bigtwo-0123456789abcdef"
    assert folder.parent.parent == tmp_path / "temp"
    assert folder is not None and folder.is_dir()


def test_njit_refuses_options_it_does_not_offer() -> None:
    with pytest.raises(ValueError, match="inline must be one of never, always"):
        jit.njit(inline="sometimes")
    with pytest.raises(TypeError):
        jit.njit(cache=False)  # type: ignore[call-arg]
