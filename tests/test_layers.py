"""The layers of the architecture picture (docs/development.md), checked on the imports themselves.

``bigtwo_env`` (rules, engine, environments) imports no other package of the project; ``agents``
imports only the rules; ``arena`` (tournaments, ratings, evaluation) the agents and the rules;
``train`` and ``bigtwo_web`` sit on top and do not import each other; nothing but the command
imports ``bigtwo_cli``. Upper layers
reach lower ones through entry points (``bigtwo.agent_loaders``, ``bigtwo.agent_factory``), so a
lower layer never names an upper one, even lazily inside a function.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# package -> packages of this project it must never import
FORBIDDEN = {
    "bigtwo_env": {"agents", "arena", "train", "bigtwo_web", "bigtwo_cli"},
    "agents": {"arena", "train", "bigtwo_web", "bigtwo_cli"},
    "arena": {"train", "bigtwo_web", "bigtwo_cli"},
    "train": {"bigtwo_web", "bigtwo_cli"},
    "bigtwo_web": {"train", "bigtwo_cli"},
}


def imported_top_names(path: Path) -> set[str]:
    """Top-level package names a module imports anywhere (module level or inside functions)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in (
            "import_module",
            "__import__",
        ):
            for arg in node.args[:1]:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    names.add(arg.value.split(".")[0])
    return names


def named_modules(path: Path, packages: set[str]) -> set[str]:
    """Modules or files of ``packages`` that a module names in a string (docstrings aside), such as
    ``"agents/heuristic.py"`` or ``"train.storage"``: an import by name the import scan cannot see."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    pattern = re.compile(rf"^({'|'.join(sorted(packages))})[./:]")  # a bare word such as "agents" is no module
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
    modules = sorted((ROOT / package).rglob("*.py"))
    assert modules, f"no modules found in {package}/"
    breaches = {
        str(m.relative_to(ROOT)): sorted(imported_top_names(m) & FORBIDDEN[package])
        for m in modules
        if imported_top_names(m) & FORBIDDEN[package]
    }
    assert not breaches, f"{package} imports an upper layer: {breaches}"


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_no_module_names_an_upper_layers_files(package: str) -> None:
    """Not even as a string (a file list such as the kernel modules'): upper layers declare
    themselves through entry points in pyproject.toml."""
    named = {
        str(m.relative_to(ROOT)): sorted(named_modules(m, FORBIDDEN[package]))
        for m in sorted((ROOT / package).rglob("*.py"))
        if named_modules(m, FORBIDDEN[package])
    }
    assert not named, f"{package} names an upper layer's modules: {named}"


def test_the_string_scan_sees_file_and_module_names(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        '"""Docs may say agents/heuristic.py."""\nFILES = ("agents/heuristic.py", "train.storage", "x")\n'
    )
    assert named_modules(module, {"agents", "train"}) == {"agents/heuristic.py", "train.storage"}


def test_the_scan_sees_lazy_and_string_imports(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "import numpy\ndef f():\n    from train.loop import x\n    import importlib\n"
        "    importlib.import_module('agents.cli')\n"
    )
    assert imported_top_names(module) == {"numpy", "train", "importlib", "agents"}


def test_the_main_job_and_the_engine_do_not_need_ray(tmp_path: Path) -> None:
    """With ``ray`` made unimportable, ``import bigtwo_env``, the agents, the trainers and the
    ``bigtwo`` command load, ``bigtwo train`` runs a tiny run, and ``--ray`` says which extra to install."""
    import subprocess
    import sys

    script = f"""
import sys
sys.modules["ray"] = None  # import ray now raises ImportError
import bigtwo_env, agents, arena.tournament, train.loop, train.ppo, train.dmc, train.cli, bigtwo_cli
from bigtwo_cli import main
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


RAY_MODULES = {"arena/cluster.py", "train/ray/actors.py"}


def test_only_the_ray_modules_import_ray() -> None:
    """Ray (the optional ``ray`` extra) is imported by its own modules only (``arena.cluster`` lazily)."""
    users = {
        str(m.relative_to(ROOT))
        for package in FORBIDDEN
        for m in (ROOT / package).rglob("*.py")
        if "ray" in imported_top_names(m)
    }
    assert users <= RAY_MODULES, users - RAY_MODULES
    assert not any(u.startswith("bigtwo_env/") for u in users)
