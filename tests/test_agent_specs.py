"""Every agent is declared once (``bigtwo.agents.registry.SPECS``, issue #41), and these tests read the
names from there (``conftest.quick_agents``), so a new agent is checked by its declaration alone: each declaration
matches its class's ``__init__`` (names and defaults, so an option cannot be added in one place
only), the web table offers and bounds what it declares, the compile note knows its kernels (and
an agent that runs kernels declares them), and its repr says what it is with its options."""

from __future__ import annotations

import inspect
import io
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import quick_agents
from numba.core.caching import UserProvidedCacheLocator

import bigtwo.cli.play as cli
from bigtwo.agents import pretrained
from bigtwo.agents.registry import (
    AGENT_SPECS,
    AGENTS,
    CHECKPOINT,
    SPECS,
    WEB_SIMULATIONS,
    agents_table,
    kernel_modules,
    make_agent,
    part_target,
    spec_of,
)
from bigtwo.agents.search import MAX_SCALE, SearchAgent
from bigtwo.agents.spec import LIGHT, SEARCH, AgentSpec, Option
from bigtwo.agents.strong import SHARED
from bigtwo.env import load_variant
from bigtwo.env.engine import jit

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "agents" / "pretrained" / "taiwan.pt"
TAIWAN = load_variant("taiwan")
SKIP = ("self", "variant", "seed")


def _keywords(fn: Any) -> dict[str, inspect.Parameter]:
    """The parameters an agent's options may fill: a class's ``__init__``'s or a function's, less
    the variant and the seed (and a path's: a loader's first)."""
    target = fn.__init__ if isinstance(fn, type) else fn
    params = inspect.signature(target).parameters
    kinds = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    return {name: p for name, p in params.items() if name not in SKIP and p.kind not in kinds}


def _targets(spec: AgentSpec) -> dict[str, Any]:
    """Each part of ``spec`` and what takes its options ("" the agent's class)."""
    out = {"": spec.build} if isinstance(spec.build, type) else {}
    for part in spec.parts:
        if isinstance(spec.parts[part], str):
            pytest.importorskip("torch")  # the .pt loader is the trainers'
        out[part] = part_target(spec, part)
    return out


def _valid(option: Option) -> Any:
    """A value ``option`` takes that is not None."""
    if option.default is not None:
        return option.default
    if option.kind == "choice":
        return option.choices[-1]
    return {"count": 1, "number": 0.5, "text": "x", "device": "cpu", "value": "default"}[option.kind]


def _invalid(option: Option) -> list[Any]:
    """Values ``option`` refuses."""
    if option.kind == "count":
        return [option.smallest - 1, True, 1.5]
    if option.kind == "number":
        return [option.smallest if option.above else option.smallest - 1, math.nan, True]
    if option.kind == "choice":
        return ["nope", 1]
    if option.kind == "text":
        return [3]
    if option.kind == "device":
        return [-1, 1.5]
    return ["nope"]  # a weights name that is no set


# ---------------------------------------------------------------- declarations and signatures


@pytest.mark.parametrize("spec", [*SPECS, CHECKPOINT], ids=lambda s: s.name)
def test_the_declared_options_are_the_signatures_keywords(spec: AgentSpec) -> None:
    """Each part's options are exactly the keyword parameters of what takes them, less the
    ``internal`` ones (a name may be an option of one part and passed by the factory to another:
    ``belief``, a file's path for the search that the network's loader reads), with the same defaults (strong's search: ``pretrained.SEARCH_DEFAULTS`` first; strong's ``samples``: by variant,
    its doc says)."""
    internal_seen = set()
    for part, target in _targets(spec).items():
        params = _keywords(target)
        if isinstance(spec.parts.get(part), str):
            params.pop(next(iter(params)))  # a loader's path
        declared = {o.name: o for o in spec.options if o.part == part}
        if spec.name == pretrained.STRONG and part == "lookahead":  # the options both searches take: "search"'s
            params = {k: v for k, v in params.items() if k not in (*SHARED, "trust")}
        internal = (set(spec.internal) & set(params)) - set(declared)  # declared in one part, passed in another
        internal_seen |= internal
        assert set(declared) == set(params) - internal, (spec.name, part or "class", sorted(params))
        for name, option in declared.items():
            expected = params[name].default
            if spec.name == pretrained.STRONG and part == "search":
                expected = pretrained.SEARCH_DEFAULTS.get(name, expected)
            if spec.name == pretrained.STRONG and name == "samples":  # by variant: SHIPPED_SAMPLES, else the search's
                assert f"else {expected}" in option.doc and "48 on hong-kong" in option.doc, option.doc
                expected = None
            assert option.default == expected, (spec.name, name, option.default, expected)
    assert internal_seen | {"path"} >= set(spec.internal), f"{spec.name}: internal names no parameter"


def test_every_name_is_declared_once_and_builds_its_class() -> None:
    names = [s.name for s in SPECS]
    assert list(AGENT_SPECS) == names and len(set(names)) == len(names)
    for name in names:  # a name make_agent and agent lists read back: lower case, no option or list syntax
        assert name == name.lower() and name.isidentifier(), name
        assert spec_of(f"{name.upper()}:top_k=2") is AGENT_SPECS[name]
    for name, cls in AGENTS.items():
        assert AGENT_SPECS[name].build is cls and cls.name == name
        agent = make_agent(name, TAIWAN, seed=0)
        assert type(agent) is cls and repr(agent) == f"{cls.__name__}('taiwan')"
    for spec in SPECS:
        if spec.name not in AGENTS:  # a factory (strong, lookahead: a shipped network) names what takes its options
            assert not isinstance(spec.build, type) and spec.parts, spec.name
            assert {o.part for o in spec.options} - {""} <= set(spec.parts), spec.name  # "": the factory's own


def test_the_network_modes_are_the_policy_agents() -> None:
    pytest.importorskip("torch")
    from bigtwo.train.policy_agent import MODES

    assert AGENT_SPECS["strong"].option("mode").choices == CHECKPOINT.option("mode").choices == MODES


@pytest.mark.parametrize("name", list(AGENTS))
def test_the_declaration_and_the_class_take_and_refuse_the_same_values(name: str) -> None:
    """A value inside an option's declared range builds the agent; one outside is refused by the
    declaration (``make_agent``, before anything is built) and by the class itself."""
    spec, cls = AGENT_SPECS[name], AGENTS[name]
    for option in spec.options:
        value = _valid(option)
        assert make_agent(name, TAIWAN, **{option.name: value}) is not None
        cls(TAIWAN, **{option.name: value})
        for bad in _invalid(option):
            with pytest.raises(ValueError, match=option.name):
                spec.check_options({option.name: bad})
            with pytest.raises(ValueError):
                cls(TAIWAN, **{option.name: bad})


def test_options_are_checked_before_anything_is_built(no_strong: Path) -> None:
    """strong without shipped weights: a bad option is named before the missing weights are."""
    with pytest.raises(ValueError, match=r"top_k must be a positive integer \(candidate plays.*\), got 0"):
        make_agent("strong:top_k=0", TAIWAN)
    with pytest.raises(
        ValueError, match=r"agent 'strong' does not take option\(s\) depth; it takes: mode, device, search"
    ):
        make_agent("strong:depth=3", TAIWAN)
    with pytest.raises(ValueError, match="no trained weights for variant 'taiwan'"):
        make_agent("strong:top_k=3", TAIWAN)


# ---------------------------------------------------------------- the web table


def test_the_web_offers_every_declared_agent_with_its_options_and_caps() -> None:
    pytest.importorskip("starlette")
    from bigtwo.web.forms import AGENT_OPTIONS, RoomError, check_agent, room_setup

    web = [s for s in SPECS if s.web]
    assert {s.name: s.option_names(web=True) for s in web} == AGENT_OPTIONS
    setup = room_setup({"variant": "taiwan", "seats": ["person", *(s.name for s in web[:3])]}, lambda v: "greedy")
    assert [seat["kind"] for seat in setup["seats"]][1:] == [s.name for s in web[:3]]
    for spec in SPECS:
        if not spec.web:
            with pytest.raises(RoomError, match="unknown agent"):
                check_agent(spec.name)
            continue
        assert check_agent(spec.name) == spec.name
        for option in spec.options:
            item = f"{spec.name}:{option.name}={json.dumps(_valid(option))}"
            if not option.web:
                with pytest.raises(RoomError, match=f"option {option.name!r} is not allowed on this server"):
                    check_agent(item)
                continue
            assert check_agent(item) == item
            if option.web_high is not None:  # the cap itself is allowed, one more is not
                high = option.web_high
                assert check_agent(f"{spec.name}:{option.name}={high}")
                over = high + 1 if option.kind == "count" else high * 2
                with pytest.raises(RoomError, match=f"{option.name} must be an? .*{high:g} on this server"):
                    check_agent(f"{spec.name}:{option.name}={over}")
            if option.kind == "value":
                with pytest.raises(RoomError, match=f"{option.name} must be a name on this server"):
                    check_agent(f"{spec.name}:{option.name}={{tempo: 2}}")  # a mapping: not by name
    with pytest.raises(RoomError, match="with scale=cards"):
        check_agent(f"search:scale=cards,simulations={int(WEB_SIMULATIONS // MAX_SCALE) + 1}")
    with pytest.raises(RoomError, match="simulations must be an integer 1..2000 on this server"):
        check_agent("strong:simulations=0")  # the network alone: not a web seat's


def test_the_hubs_lanes_and_threads_follow_the_declared_costs(tmp_path: Path) -> None:
    pytest.importorskip("starlette")
    from bigtwo.web.forms import MAX_AGENT_THREADS
    from bigtwo.web.hub import LIGHT as LIGHT_LANE
    from bigtwo.web.hub import SEARCHERS, Agents

    assert tuple(s.name for s in SPECS if s.cost == LIGHT) == LIGHT_LANE
    assert tuple(s.name for s in SPECS if s.cost == SEARCH) == SEARCHERS
    assert {s.name for s in SPECS if s.web} <= set(LIGHT_LANE) | set(SEARCHERS)  # every web seat has a lane
    for name in SEARCHERS:  # the hub gives them threads: they must take the option
        assert "threads" in AGENT_SPECS[name].option_names(web=True)
    for name in LIGHT_LANE:  # the quick lane's agents run on no rollout threads
        assert "threads" not in AGENT_SPECS[name].option_names()
    built = Agents({})._build("search:simulations=4", TAIWAN)
    assert isinstance(built, SearchAgent) and built.threads == MAX_AGENT_THREADS
    assert Agents({})._build("search:simulations=4,threads=1", TAIWAN).threads == 1


# ---------------------------------------------------------------- kernels and the compile note


def _cache_with(folder: Path, modules: list[str]) -> Path:
    """A cache folder holding an index file for each of these kernel modules (and the engine's)."""
    for module, source in jit.kernel_files().items():
        if module in modules or module in cli.ENGINE_KERNELS:
            where = folder / UserProvidedCacheLocator.get_suitable_cache_subpath(str(source))
            where.mkdir(parents=True, exist_ok=True)
            (where / f"{source.stem}.some_kernel-10.py311.nbi").write_bytes(b"")
    return folder


@pytest.mark.parametrize("spec", [*SPECS, CHECKPOINT], ids=lambda s: s.name)
def test_every_declared_kernel_is_a_declared_module_and_the_note_knows_it(
    spec: AgentSpec, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    declared = jit.declared_kernels()
    assert set(spec.kernels) <= set(declared), f"{spec.name}: {sorted(set(spec.kernels) - set(declared))}"
    name = "runs/a/checkpoints/step_1.pt" if spec is CHECKPOINT else f"{spec.name}:top_k=2"
    assert spec_of(name) is spec
    modules = kernel_modules([name])
    assert modules == sorted(declared[label] for label in spec.kernels)
    monkeypatch.setattr(jit, "CACHE_DIR", _cache_with(tmp_path / "engine", []))
    assert cli.say_if_compiling([name], stream=io.StringIO()) == bool(spec.kernels)
    monkeypatch.setattr(jit, "CACHE_DIR", _cache_with(tmp_path / "its", modules))
    assert not cli.say_if_compiling([name], stream=io.StringIO())


RUN_KERNELS = r"""
import json, sys
from numba.core.dispatcher import Dispatcher
from bigtwo.agents.registry import make_agent
from bigtwo.env.engine.engine import Engine
from bigtwo.env.engine.jit import kernel_files

eng = Engine("taiwan", num_games=4, seed=1)
agent = make_agent(sys.argv[1], eng.variant, seed=0)
for _ in range(8):
    ids, n = eng.legal_actions()
    eng.step(agent.act(eng.observe(), ids, n))
used = []
for module in kernel_files():
    mod = sys.modules.get(module)
    if mod is None or module.startswith("bigtwo.env."):
        continue
    if any(isinstance(v, Dispatcher) and v.py_func.__module__ == module and v.signatures for v in vars(mod).values()):
        used.append(module)
print(json.dumps(used))
"""


@pytest.mark.parametrize("name", [*quick_agents(), str(SHIPPED)])
def test_an_agent_that_runs_kernels_declares_them(name: str) -> None:
    """Played for a few moves in a fresh process, every declared agent (and a checkpoint) has run
    (compiled or loaded) only kernels of the modules its declaration names, besides the engine's."""
    if name not in quick_agents(network=False):
        pytest.importorskip("torch")
    run = subprocess.run(
        [sys.executable, "-c", RUN_KERNELS, name], capture_output=True, text=True, timeout=900, cwd=ROOT
    )
    assert run.returncode == 0, run.stderr[-2000:]
    used = json.loads(run.stdout.strip().splitlines()[-1])
    declared = kernel_modules([name])
    assert set(used) <= set(declared), f"{name} ran kernels of {sorted(set(used) - set(declared))}, undeclared"
    assert bool(used) == bool(declared) or name.endswith(".pt"), (name, used, declared)


# ---------------------------------------------------------------- reprs and the docs


def test_reprs_name_the_agent_and_the_options_it_was_given() -> None:
    assert (
        repr(make_agent("search:simulations=200,top_k=8", TAIWAN)) == "SearchAgent('taiwan', simulations=200, top_k=8)"
    )
    assert repr(make_agent("search:top_k=5", TAIWAN)) == "SearchAgent('taiwan')"  # its default: the same agent
    assert repr(SearchAgent(TAIWAN, top_k=8, simulations=200)) == "SearchAgent('taiwan', simulations=200, top_k=8)"
    assert repr(make_agent("heuristic:weights=cards", "japan")) == "HeuristicAgent('japan', weights='cards')"
    numbers = repr(make_agent("heuristic", TAIWAN, weights=[1.0] * 23))
    assert numbers.startswith("HeuristicAgent('taiwan', weights=[1.0, 1.0,") and len(numbers) < 100


def test_strong_and_checkpoint_reprs() -> None:
    pytest.importorskip("torch")
    assert repr(make_agent("strong", TAIWAN, seed=0)) == "strong('taiwan')"
    assert repr(make_agent("strong:top_k=3,simulations=16", TAIWAN)) == "strong('taiwan', simulations=16, top_k=3)"
    assert repr(make_agent("strong:simulations=0", TAIWAN)) == "strong('taiwan', simulations=0)"
    assert (
        repr(make_agent(str(SHIPPED), TAIWAN, mode="sample"))
        == f"PolicyAgent('taiwan', path={str(SHIPPED)!r}, mode='sample')"
    )


def test_the_agents_table_has_a_row_per_declaration() -> None:
    rows = agents_table().splitlines()[2:]
    assert len(rows) == len(SPECS) + 1
    for spec, row in zip(SPECS, rows, strict=False):
        assert row.startswith(f"| `{spec.name}` | {spec.about} |")
        assert all(f"`{o.name}=" in row for o in spec.options)
    assert "<!-- bigtwo:agents -->" in (ROOT / "docs" / "agents.md").read_text(encoding="utf-8")
