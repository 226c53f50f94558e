"""The layers of the architecture picture (docs/development.md), checked on the imports themselves.

Everything installs under one name, ``bigtwo``. Its parts, lowest first:

- ``bigtwo.env`` (the folder ``bigtwo_env/``) imports no other part of the kit; inside it,
  ``rules`` imports nothing of the engine, ``engine`` builds on the rules, ``envs`` on both and
  ``records`` on all three (``checks`` and ``lazy`` serve every layer);
- ``bigtwo.agents`` imports only ``bigtwo.env``; ``bigtwo.arena`` the agents and ``bigtwo.env``;
- ``bigtwo.train`` and ``bigtwo.web`` sit on top and do not import each other;
- ``bigtwo.cli`` (the command line) sits above all, and nothing imports it.

Upper layers reach lower ones through entry points (``bigtwo.agent_loaders``,
``bigtwo.agent_factory``), so a lower layer never names an upper one, even lazily inside a function.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PARTS = ("env", "agents", "arena", "train", "web", "cli")
# part -> parts of the kit it must never import
FORBIDDEN = {
    "bigtwo.env": {"bigtwo.agents", "bigtwo.arena", "bigtwo.train", "bigtwo.web", "bigtwo.cli"},
    "bigtwo.agents": {"bigtwo.arena", "bigtwo.train", "bigtwo.web", "bigtwo.cli"},
    "bigtwo.arena": {"bigtwo.train", "bigtwo.web", "bigtwo.cli"},
    "bigtwo.train": {"bigtwo.web", "bigtwo.cli"},
    "bigtwo.web": {"bigtwo.train", "bigtwo.cli"},
    "bigtwo.cli": set(),
}
# bigtwo.env's sub-packages -> the sub-packages they must never import
INNER = {
    "bigtwo.env.rules": {"bigtwo.env.engine", "bigtwo.env.envs", "bigtwo.env.records"},
    "bigtwo.env.engine": {"bigtwo.env.envs", "bigtwo.env.records"},
    "bigtwo.env.envs": {"bigtwo.env.records"},
}
# the one allowed exception, with its reason: Game.to_record and Game.from_record are conveniences
# that call the records module (which builds on Game) lazily, inside the methods
INNER_ALLOWED = {("bigtwo.env.envs.game", "bigtwo.env.records")}
# modules that may name an upper layer in a string, with the reason: the web table's load test starts
# the real ``bigtwo serve`` in a subprocess (``python -m bigtwo.cli serve``), as a user does
NAMED_ALLOWED = {"bigtwo.web.bench": {"bigtwo.cli"}}
OLD_NAMES = {"bigtwo_env", "agents", "arena", "train", "bigtwo_web", "bigtwo_cli", "bigtwo_configs"}


def folder(package: str) -> Path:
    """The folder of a part: ``bigtwo.env`` is ``bigtwo/env``, the link to ``bigtwo_env/``."""
    return ROOT.joinpath(*package.split("."))


def modules_of(package: str) -> list[Path]:
    return sorted(folder(package).rglob("*.py"))


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path) -> set[str]:
    """Every module a module imports anywhere (module level or inside functions), relative imports
    resolved, ``import_module("...")`` and ``__import__("...")`` with a literal name included."""
    names: set[str] = set()
    here = module_name(path) if path.is_relative_to(ROOT) else ""
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)  # "from bigtwo import agents"
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in (
            "import_module",
            "__import__",
        ):
            for arg in node.args[:1]:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    names.add(arg.value)
    return names


def imported_top_names(path: Path) -> set[str]:
    """Top-level names a module imports (``bigtwo``, ``numpy``, ``ray``, ...)."""
    return {name.split(".")[0] for name in imported_modules(path) if name}


def reaches(names: set[str], packages: set[str]) -> set[str]:
    """The ``packages`` that an import of one of ``names`` reaches (a package, or a module in it)."""
    return {p for p in packages for n in names if n == p or n.startswith(p + ".")}


def named_modules(path: Path, packages: set[str]) -> set[str]:
    """Modules or files of ``packages`` that a module names in a string (docstrings aside), such as
    ``"bigtwo.train.storage"`` or ``"bigtwo/train/loop.py"``: an import by name the import scan cannot see."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    spelled = sorted({q for p in packages for q in (p, p.replace(".", "/"))})
    if not spelled:
        return set()
    pattern = re.compile(rf"^({'|'.join(map(re.escape, spelled))})([./:]|$)")
    return {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
        and pattern.match(node.value)
    }


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_no_module_imports_an_upper_layer(package: str) -> None:
    modules = modules_of(package)
    assert modules, f"no modules found in {folder(package)}"
    breaches = {
        module_name(m): sorted(reaches(imported_modules(m), FORBIDDEN[package]))
        for m in modules
        if reaches(imported_modules(m), FORBIDDEN[package])
    }
    assert not breaches, f"{package} imports an upper layer: {breaches}"


@pytest.mark.parametrize("package", sorted(INNER))
def test_the_engines_sub_packages_keep_their_layers(package: str) -> None:
    modules = modules_of(package)
    assert modules, f"no modules found in {folder(package)}"
    breaches = {
        module_name(m): sorted(reached)
        for m in modules
        if (
            reached := {
                r for r in reaches(imported_modules(m), INNER[package]) if (module_name(m), r) not in INNER_ALLOWED
            }
        )
    }
    assert not breaches, f"{package} imports a layer above it: {breaches}"


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_no_module_names_an_upper_layers_files(package: str) -> None:
    """Not even as a string (a file list such as the kernel modules'): upper layers declare
    themselves through entry points in pyproject.toml."""
    named = {
        module_name(m): sorted(names)
        for m in modules_of(package)
        if (names := named_modules(m, FORBIDDEN[package]) - NAMED_ALLOWED.get(module_name(m), set()))
    }
    assert not named, f"{package} names an upper layer's modules: {named}"


def test_nothing_imports_the_old_top_level_names() -> None:
    """Every part is imported as ``bigtwo.X``: a module imported as ``agents`` or ``bigtwo_env`` too
    would run twice, with two copies of its state."""
    places = [*(m for part in PARTS for m in modules_of(f"bigtwo.{part}")), *sorted((ROOT / "tests").glob("*.py"))]
    places += [*sorted((ROOT / "benchmarks").glob("*.py")), *sorted((ROOT / "examples").glob("*.py"))]
    old = {str(m.relative_to(ROOT)): sorted(imported_top_names(m) & OLD_NAMES) for m in places}
    assert not {k: v for k, v in old.items() if v}


def test_nothing_imports_the_command_line() -> None:
    users = {
        module_name(m)
        for part in PARTS
        if part != "cli"
        for m in modules_of(f"bigtwo.{part}")
        if reaches(imported_modules(m), {"bigtwo.cli"})
    }
    assert not users, users


def test_the_string_scan_sees_file_and_module_names(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        '"""Docs may say bigtwo/agents/heuristic.py."""\n'
        'FILES = ("bigtwo/agents/heuristic.py", "bigtwo.train.storage", "x", "agents")\n'
    )
    assert named_modules(module, {"bigtwo.agents", "bigtwo.train"}) == {
        "bigtwo/agents/heuristic.py",
        "bigtwo.train.storage",
    }


def test_the_scan_sees_lazy_and_string_imports(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "import numpy\ndef f():\n    from bigtwo.train.loop import x\n    import importlib\n"
        "    importlib.import_module('bigtwo.cli.play')\n    from bigtwo import web\n"
    )
    names = imported_modules(module)
    assert reaches(names, set(FORBIDDEN)) == {"bigtwo.train", "bigtwo.cli", "bigtwo.web"}
    assert imported_top_names(module) == {"numpy", "bigtwo", "importlib"}


def test_the_main_job_and_the_engine_do_not_need_ray(tmp_path: Path) -> None:
    """With ``ray`` made unimportable, ``import bigtwo.env``, the agents, the trainers and the
    ``bigtwo`` command load, ``bigtwo train`` runs a tiny run, and ``--ray`` says which extra to install."""
    import subprocess
    import sys

    script = f"""
import sys
sys.modules["ray"] = None  # import ray now raises ImportError
import bigtwo.env, bigtwo.agents, bigtwo.arena.tournament, bigtwo.train.loop, bigtwo.train.ppo, bigtwo.train.dmc, bigtwo.cli.train, bigtwo.cli
from bigtwo.cli import main
code = main(["train", "--set", "runs_dir={tmp_path}", "--set", "run_name=t", "--set", "total_timesteps=64",
             "--set", "num_envs=8", "--set", "num_steps=8", "--set", "final_eval_deals=0", "--set", "eval_every=0",
             "--set", "progress=false", "--set", "hidden_size=8", "--set", "pair_size=8", "--set", "device=cpu",
             "--set", "imitate_decisions=256"])
assert code == 0, code
assert main(["train", "--ray", "local"]) == 2
assert main(["tournament", "--ray", "local", "--agents", "random,random,random,random", "--deals", "1"]) == 2
"""
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stderr.count("install the ray extra: pip install 'bigtwo[ray]'") == 2


RAY_MODULES = {"bigtwo.arena.cluster", "bigtwo.train.ray.actors"}


def test_only_the_ray_modules_import_ray() -> None:
    """Ray (the optional ``ray`` extra) is imported by its own modules only (``bigtwo.arena.cluster`` lazily)."""
    users = {module_name(m) for package in FORBIDDEN for m in modules_of(package) if "ray" in imported_top_names(m)}
    assert users == RAY_MODULES, users ^ RAY_MODULES
