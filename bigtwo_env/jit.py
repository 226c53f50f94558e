"""The project's one Numba set-up: ``njit`` for every compiled kernel, and where their cache lives.

Every module with compiled kernels imports ``njit`` from here (never from ``numba``), so the
options are set in one place: the compiled code is always cached on disk, and a kernel may ask
for ``nogil=True`` (batch kernels the engine runs in threads) or ``inline="always"`` (tiny
helpers), nothing else.

Why the cache needs a folder of its own: Numba keys a cached kernel on its own source file only,
so a kernel that calls a compiled function of another module keeps running the old machine code
of that function after the other module changes (a documented Numba limitation). Here the cache
folder is keyed instead by a hash of the sources of *every* module in ``KERNEL_SOURCES``, plus
the Numba and Python versions: any change to any kernel source starts a fresh cache for all of
them (the first run after a change recompiles everything, about a minute), and kernels may call
each other across modules freely.

Where it goes:

| setting | cache folder |
|---|---|
| ``NUMBA_CACHE_DIR`` set by the user | ``$NUMBA_CACHE_DIR/bigtwo-<key>`` |
| otherwise | ``$XDG_CACHE_HOME/bigtwo/numba/bigtwo-<key>`` (``~/.cache/bigtwo/numba/...``) |
| that folder cannot be written | ``<temp dir>/bigtwo-numba-<user>/bigtwo-<key>`` |

``<key>`` is 16 hex digits (``cache_key``). The folder is chosen when this module is first
imported, before any kernel is compiled, and written to both ``numba.config.CACHE_DIR`` and the
``NUMBA_CACHE_DIR`` environment variable, so Numba's own config reloads keep it and worker
processes (forked, spawned or started as commands) use the same folder: a base that already ends
in a ``bigtwo-<key>`` folder is taken as that folder's parent. Folders of older sources are left
in place; delete the base folder to reclaim the space.

>>> CACHE_DIR.name == f"bigtwo-{cache_key(read_sources())}"
True
"""

from __future__ import annotations

import getpass
import hashlib
import os
import re
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numba

# Every module holding compiled kernels, relative to the folder that holds the packages, and the
# one whose constants they compile in (the heuristic's weight indices, ``agents.heuristic.weights``).
KERNEL_SOURCES = (
    "agents/heuristic/agent.py",
    "agents/heuristic/control.py",
    "agents/heuristic/decision.py",
    "agents/heuristic/planner.py",
    "agents/heuristic/weights.py",
    "agents/search.py",
    "bigtwo_env/jit.py",
    "bigtwo_env/kernels.py",
    "bigtwo_env/observation.py",
    "train/decisions.py",
)
INLINE_CHOICES = ("never", "always")
_ROOT = Path(__file__).resolve().parent.parent
_KEYED = re.compile(r"bigtwo-[0-9a-f]{16}")


def read_sources(root: Path = _ROOT) -> dict[str, bytes]:
    """The bytes of every ``KERNEL_SOURCES`` module under ``root`` (empty for a module not installed)."""
    out = {}
    for rel in KERNEL_SOURCES:
        path = root / rel
        out[rel] = path.read_bytes() if path.is_file() else b""
    return out


def cache_key(sources: Mapping[str, bytes], versions: tuple[str, ...] | None = None) -> str:
    """16 hex digits naming the cache of these module sources (name to bytes) under these versions
    (default: this Numba and this Python)."""
    if versions is None:
        versions = (numba.__version__, sys.version, sys.platform)
    h = hashlib.sha256()
    for part in versions:
        h.update(part.encode() + b"\0")
    for name in sorted(sources):
        data = sources[name]
        h.update(f"{name}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()[:16]


def _writable(folder: Path) -> bool:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError:
        return False
    return True


def _user() -> str:
    try:
        return re.sub(r"[^A-Za-z0-9_.-]", "_", getpass.getuser())
    except (KeyError, OSError):  # no user name (some containers)
        return str(os.getuid()) if hasattr(os, "getuid") else "user"


def cache_bases(environ: Mapping[str, str]) -> list[Path]:
    """Candidate base folders for the cache, in order of preference (see the module docstring)."""
    bases = []
    given = environ.get("NUMBA_CACHE_DIR", "")
    if given:
        path = Path(given).expanduser()
        bases.append(path.parent if _KEYED.fullmatch(path.name) else path)
    else:
        xdg = environ.get("XDG_CACHE_HOME", "")
        bases.append((Path(xdg) if xdg else Path.home() / ".cache") / "bigtwo" / "numba")
    bases.append(Path(tempfile.gettempdir()) / f"bigtwo-numba-{_user()}")
    return bases


def choose_cache_dir(key: str, environ: Mapping[str, str]) -> Path | None:
    """The first writable ``<base>/bigtwo-<key>`` folder (created), or ``None`` if none is."""
    for base in cache_bases(environ):
        folder = base / f"bigtwo-{key}"
        if _writable(folder):
            return folder
    return None


def _configure() -> Path | None:
    folder = choose_cache_dir(cache_key(read_sources()), os.environ)
    if folder is not None:
        os.environ["NUMBA_CACHE_DIR"] = str(folder)
        numba.config.CACHE_DIR = str(folder)
    return folder


CACHE_DIR = _configure()  # None: nothing writable; Numba then uses its own default places


def njit(func: Callable | None = None, *, nogil: bool = False, inline: str = "never") -> Any:
    """Compile ``func`` with Numba, cached on disk: ``@njit``, ``@njit(nogil=True)`` (release the
    GIL, for kernels run in threads) or ``@njit(inline="always")`` (inline into callers)."""
    if inline not in INLINE_CHOICES:
        raise ValueError(f"inline must be one of {', '.join(INLINE_CHOICES)}, got {inline!r}")
    compile_ = numba.njit(cache=True, nogil=bool(nogil), inline=inline)
    return compile_ if func is None else compile_(func)


__all__ = ["CACHE_DIR", "KERNEL_SOURCES", "cache_bases", "cache_key", "choose_cache_dir", "njit", "read_sources"]
