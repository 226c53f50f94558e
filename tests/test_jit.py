"""The Numba set-up (``bigtwo.env.engine.jit``): one cache folder keyed by every kernel module's source.

A cached kernel that calls another module's compiled function is not recompiled when that module
changes (Numba keys the cache on the kernel's own file), so the folder must change whenever any
kernel source does. These tests prove it without editing the package: the key is computed over
given sources, over a temporary copy of the tree, and in fresh processes.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numba
import pytest

from bigtwo.env.engine import jit, kernels, observation

ROOT = Path(jit.__file__).parents[3]  # the folder holding the bigtwo package
PACKAGES = ("bigtwo/env", "bigtwo/agents", "bigtwo/arena", "bigtwo/train", "bigtwo/web")  # the links to the folders
KEYED = sorted(
    {*jit.declared_kernels().values(), *jit.declared_kernels(group=jit.CONSTANTS_GROUP).values(), *jit.COMPILED_IN}
)


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports_njit(path: Path) -> bool:
    """Whether a module imports ``njit`` from ``bigtwo.env.engine.jit`` (relative imports resolved)."""
    package = _module_name(path).rsplit(".", 1)[0] if path.name != "__init__.py" else _module_name(path)
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            if module == "bigtwo.env.engine.jit" and any(alias.name == "njit" for alias in node.names):
                return True
            if module == "bigtwo.env" and any(alias.name == "jit" for alias in node.names):
                return True
        elif isinstance(node, ast.Import) and any(alias.name == "bigtwo.env.engine.jit" for alias in node.names):
            return True
    return False


def _copy_tree(tmp_path: Path) -> None:
    """The keyed modules and pyproject.toml, copied into ``tmp_path`` as the project lays them out."""
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    for module in KEYED:
        source = jit.module_file(module)
        target = tmp_path / source.relative_to(ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, target)


def test_key_is_stable_for_the_same_sources() -> None:
    sources = jit.read_sources()
    assert jit.cache_key(sources) == jit.cache_key(dict(sources))
    assert jit.cache_key(sources) == jit.cache_key(dict(reversed(list(sources.items()))))  # order does not matter
    assert re.fullmatch(r"[0-9a-f]{16}", jit.cache_key(sources))


@pytest.mark.parametrize("module", KEYED)
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
    _copy_tree(tmp_path)
    copied = jit.cache_key(jit.read_sources(tmp_path))
    assert copied == jit.cache_key(jit.read_sources())
    shared = tmp_path / "bigtwo" / "env" / "engine" / "kernels.py"  # a helper the heuristic's kernels call
    shared.write_text(shared.read_text().replace("def popcount(x):", "def popcount(x):  # edited"))
    assert jit.cache_key(jit.read_sources(tmp_path)) != copied


@pytest.mark.parametrize("module", KEYED)
def test_key_changes_when_a_declared_modules_file_changes(module: str, tmp_path: Path) -> None:
    _copy_tree(tmp_path)
    before = jit.cache_key(jit.read_sources(tmp_path))
    path = jit.module_file(module, tmp_path)
    path.write_bytes(path.read_bytes() + b"\n# edited\n")
    assert jit.cache_key(jit.read_sources(tmp_path)) != before


def test_reordering_the_variant_choices_starts_a_fresh_cache(tmp_path: Path) -> None:
    """The kernels compile in their setting codes from the settings' declarations (a value's place
    in its ``OneOf`` list, ``variant.CHOICES``): a reorder must not leave them running on the old codes."""
    _copy_tree(tmp_path)
    before = jit.cache_key(jit.read_sources(tmp_path))
    path = tmp_path / "bigtwo" / "env" / "rules" / "variant.py"
    text = path.read_text()
    assert 'OneOf("off", "enforce", "liability")' in text
    path.write_text(text.replace('OneOf("off", "enforce", "liability")', 'OneOf("off", "liability", "enforce")'))
    assert jit.cache_key(jit.read_sources(tmp_path)) != before


def test_how_slots_are_numbered_is_keyed_too() -> None:
    """The ``ip``/``fp`` slots and the choice codes are derived in ``declaration``: it is keyed beside ``variant``."""
    assert {"bigtwo.env.rules.variant", "bigtwo.env.rules.declaration"} <= set(jit.COMPILED_IN)


def test_declaring_one_more_kernel_module_is_one_line_that_changes_the_key(tmp_path: Path) -> None:
    _copy_tree(tmp_path)
    before = jit.cache_key(jit.read_sources(tmp_path))
    (tmp_path / "bigtwo" / "agents" / "more.py").write_text("from bigtwo.env.engine.jit import njit\n")
    project = tmp_path / "pyproject.toml"
    group = '[project.entry-points."bigtwo.kernels"]\n'
    project.write_text(project.read_text().replace(group, group + 'more = "bigtwo.agents.more"\n'))
    assert jit.declared_kernels(tmp_path)["more"] == "bigtwo.agents.more"
    assert jit.kernel_files(tmp_path)["bigtwo.agents.more"] == tmp_path / "bigtwo" / "agents" / "more.py"
    assert jit.cache_key(jit.read_sources(tmp_path)) != before


def test_a_kernel_package_is_found_by_its_init(tmp_path: Path) -> None:
    (tmp_path / "bigtwo" / "agents" / "heuristic").mkdir(parents=True)
    (tmp_path / "bigtwo" / "agents" / "heuristic" / "__init__.py").write_text("")
    (tmp_path / "bigtwo" / "agents" / "heuristic" / "search.py").write_text("")
    assert (
        jit.module_file("bigtwo.agents.heuristic", tmp_path)
        == tmp_path / "bigtwo" / "agents" / "heuristic" / "__init__.py"
    )
    assert (
        jit.module_file("bigtwo.agents.heuristic.search", tmp_path)
        == tmp_path / "bigtwo" / "agents" / "heuristic" / "search.py"
    )


def test_a_declaration_that_is_no_module_name_is_refused(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project.entry-points."bigtwo.kernels"]\nbad = "agents/heuristic.py"\n')
    with pytest.raises(
        ValueError, match="must name a module such as 'bigtwo.agents.heuristic', got 'agents/heuristic.py'"
    ):
        jit.declared_kernels(tmp_path)


def test_the_folder_in_use_is_the_keyed_one() -> None:
    assert jit.CACHE_DIR is not None
    assert jit.CACHE_DIR.name == f"bigtwo-{jit.cache_key(jit.read_sources())}"
    assert numba.config.CACHE_DIR == str(jit.CACHE_DIR) == os.environ["NUMBA_CACHE_DIR"]
    for kernel in (kernels.legal_all, kernels.lookup, observation.observe_all):
        assert Path(kernel._cache.cache_path).parent == jit.CACHE_DIR


def test_every_module_with_kernels_is_declared_and_uses_the_projects_njit() -> None:
    modules = [path for package in PACKAGES for path in (ROOT / package).rglob("*.py")]
    with_kernels = {_module_name(p) for p in modules if re.search(r"^@njit\b", p.read_text(), re.M)}
    importing = {_module_name(p) for p in modules if _imports_njit(p)}
    assert "bigtwo.env.engine.kernels" in importing and any(
        m.startswith("bigtwo.agents.") for m in importing
    )  # the scan sees them
    declared = set(jit.declared_kernels().values())
    assert importing == declared, f"declare in pyproject.toml's bigtwo.kernels: {sorted(importing - declared)}"
    assert with_kernels == declared
    for module in declared:
        text = jit.module_file(module).read_text()
        assert "from numba import" not in text and "numba.njit" not in text, module


def test_the_heuristics_weight_indices_are_keyed_with_the_kernels() -> None:
    """The heuristic's kernels compile ``Weight`` indices in: its weights module has no kernel of
    its own, yet a change to it must start a fresh cache."""
    constants = jit.declared_kernels(group=jit.CONSTANTS_GROUP)
    assert constants == {"heuristic_weights": "bigtwo.agents.heuristic.weights"}
    assert "bigtwo.agents.heuristic.weights" in jit.read_sources()
    assert jit.module_file("bigtwo.agents.heuristic.weights").is_file()


def _cache_dir_in_fresh_process(environ: dict[str, str]) -> str:
    code = "import numba, bigtwo.agents.heuristic; print(numba.config.CACHE_DIR)"
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
