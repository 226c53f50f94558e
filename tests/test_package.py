"""Packaging: the wheel ships the variant YAML files, `import bigtwo.env` stays light, and the
`bigtwo variants` command lists the five named variants."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import NAMED_VARIANTS

ROOT = Path(__file__).resolve().parents[1]


def run_python(code: str, **kwargs) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, **kwargs)
    return out.stdout


def test_import_does_not_load_torch() -> None:
    code = "import sys, bigtwo.env; bigtwo.env.Engine; print('torch' in sys.modules)"
    assert run_python(code).strip() == "False"


@pytest.fixture(scope="module")
def installed_wheel(fresh_venv: Path) -> Path:
    """The site-packages folder of a fresh virtualenv with the built wheel installed (tests/conftest.py),
    for the tests of this module that import from it with ``PYTHONPATH``."""
    return next((fresh_venv / "lib").glob("python3*/site-packages"))


def test_wheel_ships_variant_configs(installed_wheel: Path, tmp_path: Path) -> None:
    site = installed_wheel
    code = (
        "import json, bigtwo.env, bigtwo.env.rules.variant as v; "
        "print(json.dumps([bigtwo.env.__file__, v.variant_names(), v.load_variant('japan').scoring]))"
    )
    where, names, scoring = json.loads(run_python(code, cwd=tmp_path, env={"PYTHONPATH": str(site)}))
    assert where.startswith(str(site)), "imported the checkout instead of the wheel"
    assert names == list(NAMED_VARIANTS) and scoring == "tiered"


def test_the_wheel_installs_one_top_level_name(installed_wheel: Path) -> None:
    """The wheel puts ``bigtwo`` (and its metadata) into site-packages, nothing else: no ``agents``,
    ``train`` or ``bigtwo_env`` to collide with a user's own modules; the folders arrive under it."""
    installed = {p.name for p in installed_wheel.iterdir() if not p.name.endswith((".dist-info", ".pth"))}
    assert installed == {"bigtwo"}  # (the .pth: the test venv's path to the dependencies)
    for part in ("env/rules", "env/engine", "env/envs", "env/records", "agents", "arena", "train", "web", "cli"):
        assert (installed_wheel / "bigtwo" / part / "__init__.py").is_file(), part
    assert not any(p.is_symlink() for p in (installed_wheel / "bigtwo").iterdir())  # real files, links followed


def test_the_wheel_keys_its_kernel_cache_by_its_declared_modules(installed_wheel: Path, tmp_path: Path) -> None:
    """An installed wheel has no pyproject.toml: ``bigtwo.env.engine.jit`` reads the ``bigtwo.kernels``
    declarations from the wheel's metadata and keys the cache by the wheel's own files."""
    from bigtwo.env.engine import jit

    site = installed_wheel
    code = (
        "import json; from bigtwo.env.engine import jit; "
        "print(json.dumps([jit.declared_kernels(), {m: str(p) for m, p in jit.kernel_files().items()}, "
        "jit.CACHE_DIR.name]))"
    )
    declared, files, folder = json.loads(run_python(code, cwd=tmp_path, env={"PYTHONPATH": str(site)}))
    assert declared == jit.declared_kernels()
    assert set(files) == set(jit.kernel_files()) and all(
        p.startswith(str(site)) and Path(p).is_file() for p in files.values()
    )
    assert folder == jit.CACHE_DIR.name  # the same sources as the checkout's: the same key


def test_cli_lists_variants() -> None:
    from bigtwo.cli import main

    assert main(["variants"]) == 0


def test_cli_variants_output(capsys: pytest.CaptureFixture[str]) -> None:
    from bigtwo.cli import main

    main(["variants"])
    listing = capsys.readouterr().out
    for name in NAMED_VARIANTS:
        assert name in listing
    assert main(["variants", "taiwan"]) == 0
    shown = capsys.readouterr().out
    assert "opening_card" in shown and "3C" in shown
    assert main(["variants", "no-such-variant"]) == 2
    assert "allowed: hong-kong" in capsys.readouterr().err


# ---------------------------------------------------------------- the command above the layers

BLOCK_TORCH = "import sys; sys.modules['torch'] = None; sys.modules['tensorboard'] = None\n"  # as if not installed


def test_version_has_one_source(capsys: pytest.CaptureFixture[str]) -> None:
    import importlib.metadata

    import bigtwo.env
    from bigtwo.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"bigtwo {bigtwo.env.__version__}"
    assert importlib.metadata.version("bigtwo") == bigtwo.env.__version__  # pyproject reads it


def test_python_m_bigtwo_cli_runs_the_command() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "bigtwo.cli", "variants", "japan"], capture_output=True, text=True, check=True
    )
    assert out.stdout.startswith("japan:") and "tiered" in out.stdout


def test_the_rules_layer_imports_no_agents_or_trainers() -> None:
    code = (
        "import importlib, pkgutil, sys, bigtwo.env\n"
        "for m in pkgutil.walk_packages(bigtwo.env.__path__, 'bigtwo.env.'):\n"
        "    importlib.import_module(m.name)\n"
        "print(sorted(n for n in sys.modules if n.startswith(('bigtwo.agents', 'bigtwo.train', 'torch'))))"
    )
    assert run_python(code).strip() == "[]"


def test_bigtwo_works_without_torch() -> None:
    code = BLOCK_TORCH + (
        "import bigtwo.cli, bigtwo.train\n"
        "from bigtwo.train import load_config\n"
        "assert load_config('default', ['lr=1e-4']).lr == 1e-4\n"
        "assert bigtwo.cli.main(['variants']) == 0\n"
        "sys.exit(bigtwo.cli.main(['train', '--set', 'total_timesteps=64']))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 2, out.stderr
    assert "bigtwo train: error: training needs torch and tensorboard" in out.stderr
    assert "pip install 'bigtwo[train]'" in out.stderr


def test_a_checkpoint_without_torch_is_a_clear_error(tmp_path: Path) -> None:
    model = tmp_path / "model.pt"
    model.write_bytes(b"\0")
    code = BLOCK_TORCH + (
        "from bigtwo.agents import make_agent\n"
        "try:\n"
        f"    make_agent({str(model)!r}, 'taiwan')\n"
        "except ValueError as exc:\n"
        "    print(exc)\n"
    )
    message = run_python(code)
    assert "model.pt: .pt files are loaded by bigtwo.train.policy_agent:load_policy_agent" in message
    assert "pip install 'bigtwo[train]'" in message


def test_installed_wheel_plays_its_shipped_strong_agents(installed_wheel: Path, tmp_path: Path) -> None:
    """A fresh install's ``strong`` weights (read from the wheel, not the checkout) load for
    hong-kong and taiwan and beat random and greedy in a small duplicate tournament."""
    site = installed_wheel
    code = """
import json
from bigtwo.agents import make_agent, pretrained
from bigtwo.arena.tournament import run_tournament
out = {"dir": str(pretrained.pretrained_dir()), "shipped": pretrained.shipped_variants()}
for v in ("hong-kong", "taiwan"):
    make_agent("strong", v)  # the searched agent loads too
    r = run_tournament(v, ["strong:simulations=0", "random", "greedy", "random"], deals=40, seed=3, workers=1,
                       progress=False)
    out[v] = {s.name: s.mean_payoff for s in r.stats}
print(json.dumps(out))
"""
    got = json.loads(run_python(code, cwd=tmp_path, env={"PYTHONPATH": str(site), "HOME": str(tmp_path)}))
    assert got["dir"].startswith(str(site)), "read the checkout's weights instead of the wheel's"
    assert {"hong-kong", "taiwan"} <= set(got["shipped"])
    for v in ("hong-kong", "taiwan"):
        pay = got[v]
        strong = pay.pop("strong:simulations=0")
        assert all(strong > other for other in pay.values()), (v, strong, pay)
