"""What the READMEs and the docs pages tell a new user to run is installed and finishes in reasonable time (issue 12)."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import pytest

from bigtwo.agents import make_agent
from bigtwo.agents.pretrained import weights_path
from bigtwo.agents.registry import parse_agent_list, split_spec
from bigtwo.agents.search import DEFAULT_SIMULATIONS
from bigtwo.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]


def _console_commands(text: str, command: str) -> list[list[str]]:
    blocks = re.findall(r"```console\n(.*?)```", text, flags=re.S)
    lines = [line[2:].split("#")[0] for block in blocks for line in block.splitlines() if line.startswith("$ ")]
    return [shlex.split(line)[1:] for line in lines if line.startswith(f"bigtwo {command}")]


def _readme_and_docs() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))])


def _made_variant(text: str, variant: str, folder: Path) -> str:
    """A variant file the docs write first (``$ bigtwo variants NAME ... --yaml > FILE``), written the same way
    into ``folder``: its path there."""
    made = re.search(rf"\$ (bigtwo variants [^\n>]*--yaml) > {re.escape(variant)}", text)
    assert made, f"{variant}: no such file, and no `bigtwo variants ... --yaml > {variant}` line writes it first"
    import contextlib
    import io

    from bigtwo.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(shlex.split(made.group(1))[1:]) == 0
    path = folder / Path(variant).name
    path.write_text(out.getvalue(), encoding="utf-8")
    return str(path)


def test_readme_and_docs_tournament_examples_parse_and_search_has_a_budget(tmp_path):
    text = _readme_and_docs()
    examples = _console_commands(text, "tournament")
    assert len(examples) >= 4
    parser = build_parser()
    for argv in examples:
        args = parser.parse_args(argv)
        if args.variant.endswith(".yaml") and not Path(args.variant).exists():
            args.variant = _made_variant(text, args.variant, tmp_path)
        for spec in parse_agent_list(args.agents):
            if "<" in spec and spec.endswith(".pt"):
                # a checkpoint (or an expert round's network, kept in expert/) the example's own
                # `bigtwo train` lines, just before, write (its run folder and step are the reader's):
                # the commands must stand together
                together = rf"(\$ bigtwo train [^\n]*\n)+\$ bigtwo tournament [^\n]*{re.escape(spec)}"
                kept = spec.startswith(("runs/<run>/checkpoints/", "runs/<run>/expert/round_"))
                assert kept and re.search(together, text), spec
                continue
            name, options = split_spec(spec)
            if name == "search":
                simulations = options.get("simulations", DEFAULT_SIMULATIONS)
                # rollouts per search move x deals: the 40-minute example had 1,000 x 500
                assert simulations * args.deals <= 10_000, f"slow example: {' '.join(argv)}"
            network = options.get("network")
            if network is not None and network != "scratch" and not Path(str(network)).exists():  # scratch: a name
                # a file the docs make first (``git show REV:agents/pretrained/V.pt > FILE``): the shipped one stands in
                assert re.search(rf"git show \w+:agents/pretrained/\S+\.pt > {re.escape(str(network))}", text), spec
                spec = spec.replace(f"network={network}", f"network={weights_path(args.variant)}")
            make_agent(spec, args.variant)


def test_notebooks_readme_command_is_installed_by_the_extra_it_names():
    if sys.version_info < (3, 11):
        pytest.skip("tomllib")
    import tomllib

    readme = (ROOT / "notebooks" / "README.md").read_text(encoding="utf-8")
    assert "jupyter lab notebooks/" in readme and ".[train,notebooks]" in readme
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert any(req.startswith("jupyterlab") for req in extras["notebooks"])


def test_readme_and_docs_ladder_train_and_play_examples_parse():
    parser = build_parser()
    text = _readme_and_docs()
    for command in ("ladder", "train", "play", "serve", "tune"):
        examples = _console_commands(text, command)
        assert examples, f"no bigtwo {command} example"
        for argv in examples:
            parser.parse_args(argv)
