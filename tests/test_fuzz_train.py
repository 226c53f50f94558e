"""Fuzz layer for training and checkpoints (issue #12): hypothesis-chosen damage and values.

- a real checkpoint with bytes flipped or cut at hypothesis-chosen offsets either loads to the
  very payload that was saved (the bytes hit nothing that matters) or raises ``ValueError``
  naming the file: never another exception, never a crash, never altered weights;
- ``--set FIELD=VALUE`` for every training field, with values of every YAML kind, either gives
  a config whose field is in its documented range or raises ``ValueError`` naming the field;
  the config it started from is unchanged either way;
- ``Engine.load_state`` with one array entry of a real match state changed either loads (and the
  legal lists are those of the hands) or raises ``ValueError``, the engine unchanged then.

Each test keeps a small budget (about 20 s for the file).
"""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from conftest import tiny_training_config  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from bigtwo.env.engine.engine import Engine  # noqa: E402
from bigtwo.train import checkpoint as ckpt  # noqa: E402
from bigtwo.train import load_config, run_training  # noqa: E402
from bigtwo.train.config import _HINTS, FIELDS, LIMITS, allowed_values  # noqa: E402

FUZZ = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, str]:
    """The bytes of a real tiny run's checkpoint and the checksum of its payload."""
    runs = tmp_path_factory.mktemp("runs")
    result = run_training(tiny_training_config(runs, total_timesteps=128, checkpoint_every=128))
    data = result.checkpoint.read_bytes()
    return data, ckpt.load(result.checkpoint)["checksum"]


def load_or_refuse(path: Path, checksum: str) -> None:
    """``ckpt.load`` returns the saved payload itself or raises ``ValueError`` naming the file."""
    try:
        payload = ckpt.load(path)
    except ValueError as exc:
        assert str(path) in str(exc)
        return
    assert payload["checksum"] == checksum == ckpt.digest(payload), "loaded, so it is the payload that was saved"


@pytest.mark.filterwarnings("ignore::UserWarning")  # torch's unpickler may warn about what a flip made
@FUZZ
@given(data=st.data())
def test_flipped_bytes_never_load_as_something_else(saved, tmp_path, data):
    raw, checksum = saved
    damaged = bytearray(raw)
    offsets = data.draw(st.lists(st.integers(0, len(raw) - 1), min_size=1, max_size=100, unique=True))
    for i in offsets:
        damaged[i] ^= data.draw(st.integers(1, 255))
    path = tmp_path / "step_000000000128.pt"
    path.write_bytes(bytes(damaged))
    load_or_refuse(path, checksum)


@FUZZ
@given(cut=st.integers(0, 10**9))
def test_truncated_files_are_refused(saved, tmp_path, cut):
    raw, checksum = saved
    path = tmp_path / "step_000000000128.pt"
    path.write_bytes(raw[: cut % len(raw)])
    with pytest.raises(ValueError, match="step_000000000128.pt"):
        ckpt.load(path)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_resume_skips_any_damaged_newest_checkpoint(saved, tmp_path_factory, data):
    """A run folder whose newest checkpoint is damaged at random still resumes (from the older one,
    or from the newest if the damage changed nothing)."""
    raw, _ = saved
    runs = tmp_path_factory.mktemp("runs")
    folder = runs / "tiny" / "checkpoints"
    folder.mkdir(parents=True)
    (folder / "step_000000000128.pt").write_bytes(raw)
    damaged = bytearray(raw)
    for i in data.draw(st.lists(st.integers(0, len(raw) - 1), min_size=1, max_size=20, unique=True)):
        damaged[i] ^= 0xFF
    (folder / "step_000000000256.pt").write_bytes(bytes(damaged))
    result = run_training(tiny_training_config(runs, total_timesteps=384, checkpoint_every=128))
    assert result.global_step == 384
    shutil.rmtree(runs)


VALUES = st.one_of(
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
    st.text(max_size=12),
    st.lists(st.one_of(st.text(max_size=6), st.integers()), max_size=3),
    st.dictionaries(st.text(max_size=6), st.integers(), max_size=2),
    st.sampled_from(["1e3", "2e6", "-1", "0", "inf", "nan", "cuda:7", "cuda:x", "[random]", "{a: 1}", "ppo", "a/b"]),
)


def value_text(value: object) -> str:
    """How a user would type ``value`` after ``FIELD=`` (YAML)."""
    import yaml

    return yaml.safe_dump(value, default_flow_style=True).strip().removesuffix("...").strip()


@settings(max_examples=300, deadline=None)
@given(name=st.sampled_from(sorted(FIELDS)), value=VALUES)
def test_set_values_for_training_fields_work_or_name_the_field(name, value):
    base = load_config("default")
    before = base.to_dict()
    try:
        cfg = load_config(base=base, overrides=[f"{name}={value_text(value)}"])
    except ValueError as exc:
        text = str(exc)
        assert f"field {name!r}" in text or "num_envs * num_steps" in text or "league_" in text, text
        assert "allowed" in text or "must be" in text or "empty" in text, text
    else:
        got = getattr(cfg, name)
        hint = _HINTS[name]
        assert isinstance(got, hint) and not (hint is int and isinstance(got, bool))
        if name in LIMITS:
            assert LIMITS[name].holds(got) and math.isfinite(got), (name, got, allowed_values(name))
    assert base.to_dict() == before, "the config it started from is unchanged"


@pytest.fixture(scope="module")
def match_state() -> dict[str, np.ndarray]:
    """A real mid-match state of 4 games, a few plays in."""
    eng = Engine("taiwan", num_matches=4, seed=11, autoreset=True)
    for _ in range(9):
        ids, _ = eng.legal_actions()
        eng.step(ids[:, 0].astype(np.int64))
    return {k: v.copy() for k, v in eng.state._asdict().items()}


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_engine_load_state_loads_or_refuses_and_changes_nothing(match_state, data):
    eng = Engine("taiwan", num_matches=4, seed=3, autoreset=True)
    before = {k: v.copy() for k, v in eng.state._asdict().items()}
    state = {k: v.copy() for k, v in match_state.items()}
    name = data.draw(st.sampled_from(sorted(state)))
    arr = state[name]
    index = tuple(data.draw(st.integers(0, n - 1)) for n in arr.shape)
    info = np.iinfo(arr.dtype) if np.issubdtype(arr.dtype, np.integer) else None
    if arr.dtype == np.bool_:
        arr[index] = not arr[index]
    elif info is not None:
        arr[index] = data.draw(st.integers(int(info.min), int(info.max)))
    else:
        arr[index] = data.draw(st.floats(allow_nan=False, width=64))
    try:
        eng.load_state(state)
    except ValueError as exc:
        assert str(exc).startswith("load_state: ")
        assert all(np.array_equal(before[k], v) for k, v in eng.state._asdict().items())
        return
    S = eng.state
    for g in range(4):
        if S.over[g]:
            continue
        hand = int(S.hands[g, S.current[g]])
        for a in S.legal[g, : S.legal_n[g]].tolist():
            assert int(eng.table.masks[a]) & ~hand == 0, "every legal play is made of cards the seat holds"
