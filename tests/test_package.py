"""Packaging: the wheel ships the variant YAML files, `import bigtwo_env` stays light, and the
`bigtwo variants` command lists the five named variants."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NAMED = ["hong-kong", "japan", "online-cn", "pusoy-dos", "taiwan"]


def run_python(code: str, **kwargs) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, **kwargs)
    return out.stdout


def test_import_does_not_load_torch() -> None:
    code = "import sys, bigtwo_env; bigtwo_env.Engine; print('torch' in sys.modules)"
    assert run_python(code).strip() == "False"


def test_wheel_ships_variant_configs(tmp_path: Path) -> None:
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            str(ROOT),
            "-w",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
    )
    if build.returncode != 0:
        pytest.fail(f"pip wheel failed:\n{build.stderr[-2000:]}")
    wheel = next(tmp_path.glob("bigtwo-*.whl"))
    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), str(wheel)],
        check=True,
        capture_output=True,
    )
    code = (
        "import json, bigtwo_env, bigtwo_env.variant as v; "
        "print(json.dumps([bigtwo_env.__file__, v.variant_names(), v.load_variant('japan').scoring]))"
    )
    where, names, scoring = json.loads(run_python(code, cwd=tmp_path, env={"PYTHONPATH": str(site)}))
    assert where.startswith(str(site)), "imported the checkout instead of the wheel"
    assert names == NAMED and scoring == "tiered"


def test_cli_lists_variants() -> None:
    from bigtwo_env.cli import main

    assert main(["variants"]) == 0


def test_cli_variants_output(capsys: pytest.CaptureFixture[str]) -> None:
    from bigtwo_env.cli import main

    main(["variants"])
    listing = capsys.readouterr().out
    for name in NAMED:
        assert name in listing
    assert main(["variants", "taiwan"]) == 0
    shown = capsys.readouterr().out
    assert "opening_card" in shown and "3C" in shown
    assert main(["variants", "no-such-variant"]) == 2
    assert "allowed: hong-kong" in capsys.readouterr().err
