"""The project's one Numba set-up: ``njit`` for every compiled kernel, and where their cache lives.

Every module with compiled kernels imports ``njit`` from here (never from ``numba``), so the
options are set in one place: the compiled code is always cached on disk, and a kernel may ask
for ``nogil=True`` (batch kernels the engine runs in threads), ``inline="always"`` (tiny
helpers) or ``fastmath=True`` (float loops whose sums may be reordered, so that they vectorize:
``FASTMATH``), nothing else.

Why the cache needs a folder of its own: Numba keys a cached kernel on its own source file only,
so a kernel that calls a compiled function of another module keeps running the old machine code
of that function after the other module changes (a documented Numba limitation), and a kernel
keeps the values of the other modules' constants it was compiled with. Here the cache folder is
keyed instead by a hash of the sources of *every* kernel module, plus the Numba and Python
versions: any change to any kernel source starts a fresh cache for all of them (the first run
after a change recompiles everything, about a minute), and kernels may call each other across
modules freely.

Which modules: each package declares its own kernel modules in the entry-point group
``bigtwo.kernels`` (``KERNEL_GROUP``) of ``pyproject.toml``, one line per module,
``label = "package.module"``; this module reads the declarations without importing any of
those packages (``declared_kernels``: from ``pyproject.toml`` beside the packages in a source
checkout, so an edit counts at once; from the installed distribution's metadata otherwise) and
finds each module's file under the folder that holds the packages (``kernel_files``). Adding or
moving a kernel module is that one line. The key also covers ``COMPILED_IN``: this module (the
compile options) and the rules layer's modules whose constants the kernels compile in
(``combos.KIND_INDEX``; ``variant``'s setting declarations, whose ``CHOICES`` order gives the
kernels' setting codes and whose field order their ``ip``/``fp`` slots; ``declaration``, which
derives both), so reordering a setting's choices, or the settings, recompiles the kernels instead
of leaving them on the old codes; an upper
layer's module of such constants (the heuristic's weight indices) is declared in the group
``bigtwo.kernel_constants`` (``CONSTANTS_GROUP``) the same way.

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
>>> declared_kernels()["engine"]
'bigtwo.env.engine.kernels'
"""

from __future__ import annotations

import ast
import getpass
import hashlib
import os
import re
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

import numba

from bigtwo.layout import SOURCE_ROOT

KERNEL_GROUP = "bigtwo.kernels"  # the entry-point group declaring every module with compiled kernels
CONSTANTS_GROUP = "bigtwo.kernel_constants"  # ... and upper-layer modules whose constants kernels compile in
DISTRIBUTION = "bigtwo"  # the installed distribution whose metadata holds the group (a wheel install)
# Keyed beside the declared kernel modules: the compile options, and the rules layer's modules whose
# constants the kernels compile in (see the module docstring).
COMPILED_IN = (
    "bigtwo.env.engine.jit",
    "bigtwo.env.rules.combos",
    "bigtwo.env.rules.declaration",
    "bigtwo.env.rules.variant",
)
INLINE_CHOICES = ("never", "always")
# fastmath=True: reassociate and contract float arithmetic, no sign of zero; never assume "no inf/NaN"
FASTMATH = ("reassoc", "contract", "nsz")
_ROOT = SOURCE_ROOT  # the folder holding the ``bigtwo`` package: a checkout, or site-packages
_KEYED = re.compile(r"bigtwo-[0-9a-f]{16}")
_MODULE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


def _pyproject_kernels(path: Path, group: str = KERNEL_GROUP) -> dict[str, str] | None:
    """The ``group`` entry points of a ``pyproject.toml`` (``None``: no such file or group, or no
    TOML reader before Python 3.11)."""
    # an if/else on the version, not try/except ImportError, so that a type checker for 3.10 skips the 3.11 branch
    if sys.version_info < (3, 11):  # Python 3.10: read the installed metadata instead
        return None
    else:
        import tomllib

        if not path.is_file():
            return None
        with path.open("rb") as f:
            project = tomllib.load(f).get("project", {})
        points = project.get("entry-points", {}).get(group)
        return dict(points) if points else None


def _installed_kernels(group: str = KERNEL_GROUP) -> dict[str, str]:
    """The ``group`` entry points of the installed distribution (empty when not installed)."""
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        points = distribution(DISTRIBUTION).entry_points
    except PackageNotFoundError:
        return {}
    return {ep.name: ep.value for ep in points if ep.group == group}


def declared_kernels(root: Path = _ROOT, group: str = KERNEL_GROUP) -> dict[str, str]:
    """Every declared kernel module, label to module name (``{"engine": "bigtwo.env.engine.kernels", ...}``):
    the ``bigtwo.kernels`` group of ``root/pyproject.toml`` in a source checkout, else of the
    installed distribution. ``ValueError`` for a declaration that is no module name."""
    declared = _pyproject_kernels(root / "pyproject.toml", group)
    if declared is None:
        declared = _installed_kernels(group)
    for label, module in declared.items():
        if not isinstance(module, str) or not _MODULE.fullmatch(module):
            raise ValueError(
                f"entry point {label!r} of group {group!r} must name a module such as 'bigtwo.agents.heuristic', "
                f"got {module!r}"
            )
    return declared


def module_file(module: str, root: Path = _ROOT) -> Path:
    """The source file of ``module`` under ``root``, found without importing it: ``a/b.py``, or
    ``a/b/__init__.py`` for a package (the first when neither exists)."""
    base = root.joinpath(*module.split("."))
    plain, package = base.with_suffix(".py"), base / "__init__.py"
    return package if not plain.is_file() and package.is_file() else plain


def kernel_files(root: Path = _ROOT) -> dict[str, Path]:
    """Each declared kernel module's source file under ``root``, by module name, sorted."""
    return {module: module_file(module, root) for module in sorted(set(declared_kernels(root).values()))}


def cached_kernels(path: Path) -> dict[str, int]:
    """The kernels of the module file ``path`` whose compiled code Numba writes to the cache folder, read
    from its source without importing it: each top-level function under ``@njit`` except those under
    ``@njit(inline="always")``, which are compiled into their callers and leave no file of their own.
    Name to first line (its first decorator's): Numba names the kernel's index file
    ``<file stem>.<name>-<line>.py<version>.nbi``. A module whose every kernel is inlined has none.

    >>> kernels = cached_kernels(module_file("bigtwo.env.engine.kernels"))
    >>> "card_value" in kernels, "bit" in kernels  # bit is inline="always"
    (True, False)
    """
    out = {}
    for node in ast.parse(path.read_bytes(), filename=str(path)).body:
        if not isinstance(node, ast.FunctionDef):
            continue
        kernel = inlined = False
        for deco in node.decorator_list:
            call = deco if isinstance(deco, ast.Call) else None
            target = call.func if call is not None else deco
            name = target.id if isinstance(target, ast.Name) else getattr(target, "attr", None)
            if name != "njit":
                continue
            kernel = True
            for kw in call.keywords if call is not None else ():
                inlined |= kw.arg == "inline" and isinstance(kw.value, ast.Constant) and kw.value.value == "always"
        if kernel and not inlined:
            out[node.name] = min(d.lineno for d in node.decorator_list)
    return out


def read_sources(root: Path = _ROOT) -> dict[str, bytes]:
    """The bytes of every keyed module under ``root``, by module name: the declared kernel modules and
    ``COMPILED_IN`` and the ``CONSTANTS_GROUP`` declarations (empty for a module not installed)."""
    modules = sorted(
        {*declared_kernels(root).values(), *declared_kernels(root, CONSTANTS_GROUP).values(), *COMPILED_IN}
    )
    out = {}
    for module in modules:
        path = module_file(module, root)
        out[module] = path.read_bytes() if path.is_file() else b""
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
        # numba.config makes its settings from the environment at run time: mypy sees no CACHE_DIR there
        numba.config.CACHE_DIR = str(folder)  # type: ignore[attr-defined]
    return folder


CACHE_DIR = _configure()  # None: nothing writable; Numba then uses its own default places


def njit(
    func: Callable | None = None,
    *,
    nogil: bool = False,
    inline: Literal["never", "always"] = "never",
    fastmath: bool = False,
) -> Any:
    """Compile ``func`` with Numba, cached on disk: ``@njit``, ``@njit(nogil=True)`` (release the
    GIL, for kernels run in threads), ``@njit(inline="always")`` (inline into callers) or
    ``@njit(fastmath=True)`` (``FASTMATH``: float sums may be reordered and fused, so loops over
    floats vectorize; infinities and NaNs keep their meaning)."""
    if inline not in INLINE_CHOICES:
        raise ValueError(f"inline must be one of {', '.join(INLINE_CHOICES)}, got {inline!r}")
    compile_ = numba.njit(cache=True, nogil=bool(nogil), inline=inline, fastmath=set(FASTMATH) if fastmath else False)
    return compile_ if func is None else compile_(func)


__all__ = [
    "CACHE_DIR",
    "COMPILED_IN",
    "FASTMATH",
    "KERNEL_GROUP",
    "cache_bases",
    "cache_key",
    "cached_kernels",
    "choose_cache_dir",
    "declared_kernels",
    "kernel_files",
    "module_file",
    "njit",
    "read_sources",
]
