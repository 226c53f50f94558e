"""The README's and the docs pages' Python examples run as written (each block in a fresh namespace),
and the README's two set-up commands are what they say: CI (.ci/run) runs the test command's steps
exactly, and the main-job command installs only what training needs."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))


def _blocks(path: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), flags=re.S)


BLOCKS = [(path, i, code) for path in [README, *DOCS] for i, code in enumerate(_blocks(path))]


def test_readme_and_docs_have_examples() -> None:
    assert len(_blocks(README)) >= 5
    pages = {path.name for path, _, _ in BLOCKS if path != README}
    assert {"environments.md", "getting-started.md", "agents.md"} <= pages


@pytest.mark.parametrize(("path", "index", "code"), BLOCKS, ids=[f"{p.relative_to(ROOT)}-{i}" for p, i, _ in BLOCKS])
def test_example_runs(
    path: Path,
    index: int,
    code: str,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)  # files an example writes (games.jsonl) land in a scratch folder
    exec(compile(code, f"{path.relative_to(ROOT)} block {index}", "exec"), {"__name__": "readme"})


def _setup_commands() -> tuple[list[str], list[str]]:
    """The README's main-job and test commands, each as its ``&&``-joined steps."""
    bash = re.findall(r"```bash\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)
    main = [b.strip() for b in bash if b.strip().endswith("bigtwo train")]
    tests = [b.strip() for b in bash if b.strip().endswith("-m pytest")]
    assert len(main) == 1 and len(tests) == 1, "README: one main-job command and one test command"
    return main[0].split(" && "), tests[0].split(" && ")


def test_ci_runs_the_readme_test_command_step_by_step() -> None:
    _, steps = _setup_commands()
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    ci = [
        step.replace("pip install -q ", "pip install ")
        for line in ci
        if line and not line.startswith("#")
        for step in line.split(" && ")
    ]
    at = [ci.index(step) if step in ci else -1 for step in steps]
    assert -1 not in at, f"steps of README's test command missing from .ci/run: {[s for s in steps if s not in ci]}"
    assert at == sorted(at), ".ci/run runs the README's test steps in another order"
    assert "chromium" in steps[1] and '-e ".[all]"' in steps[-2]


def test_the_main_job_command_installs_the_train_extra_only() -> None:
    if sys.version_info < (3, 11):
        pytest.skip("tomllib")
    import tomllib

    steps, _ = _setup_commands()
    assert not any("apt-get" in step or "chromium" in step for step in steps)
    assert steps[-1] == ".venv/bin/bigtwo train"
    assert re.fullmatch(r'\.venv/bin/pip install torch==[\d.]+ -e "\.\[train\]"', steps[-2]), steps[-2]
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert {req.split(">")[0] for req in extras["train"]} == {"torch", "tensorboard"}
