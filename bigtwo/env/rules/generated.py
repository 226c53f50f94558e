"""The two texts written from the settings' declarations into files of a checkout, and the writer.

A rule setting is declared once (``Variant`` in ``bigtwo.env.rules.variant``); two copies of what
its declaration says live in files a reader opens, each between markers:

- RULES.md's "Every setting" table (``settings_table``),
- the kernels' named constants in ``bigtwo/env/engine/kernels.py`` (``kernel_constants_source``:
  ``IP_<slot>``, ``FP_<slot>`` and each code's ``<slot>_<VALUE>``, from ``KERNEL_CONSTANTS``). The
  kernels read them as plain module constants, which Numba compiles in; mypy and the agents that
  import them see ordinary names.

After declaring or changing a setting, write both again from a checkout::

    python -m bigtwo.env.rules.generated          # rewrite the blocks in place
    python -m bigtwo.env.rules.generated --check  # exit 1, naming the files, if one is stale

tests/test_declaration.py and tests/test_rules_doc.py fail while a block is stale.

>>> print(kernel_constants_source().splitlines()[0])
IP_PLAYERS = 0  # players: the value
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bigtwo.env.rules.variant import KERNEL_CONSTANTS, settings_table
from bigtwo.layout import PACKAGE_ROOT, SOURCE_ROOT

KERNELS_FILE = PACKAGE_ROOT / "env" / "engine" / "kernels.py"
RULES_FILE = SOURCE_ROOT / "RULES.md"
# Each written file's markers, around the block (the markers' lines are kept as they are).
KERNELS_MARKERS = (
    "# <generated: python -m bigtwo.env.rules.generated; from the settings' declarations>\n",
    "\n# </generated>",
)
RULES_MARKERS = ("<!-- bigtwo:variant-settings -->\n", "\n<!-- /bigtwo:variant-settings -->")


def kernel_constants_source() -> str:
    """The kernels' named constants as Python lines: ``NAME = value  # setting: what it holds``."""
    return "\n".join(f"{name} = {value}  # {what}" for name, (value, what) in KERNEL_CONSTANTS.items())


def block(text: str, markers: tuple[str, str]) -> str:
    """What ``text`` holds between ``markers`` ("" when a marker is missing)."""
    begin, end = markers
    if begin not in text or end not in text:
        return ""
    return text.split(begin, 1)[1].split(end, 1)[0]


def _targets() -> list[tuple[Path, tuple[str, str], str]]:
    return [
        (KERNELS_FILE, KERNELS_MARKERS, kernel_constants_source()),
        (RULES_FILE, RULES_MARKERS, settings_table()),
    ]


def stale_files() -> list[Path]:
    """The files whose block differs from what the declarations write (a missing file counts)."""
    return [
        path
        for path, markers, wanted in _targets()
        if not path.is_file() or block(path.read_text(encoding="utf-8"), markers) != wanted
    ]


def write() -> list[Path]:
    """Write each stale block from the declarations; the files written. ``ValueError`` when a file
    lacks its markers (put them back first: they say where the block goes)."""
    written = []
    for path, markers, wanted in _targets():
        text = path.read_text(encoding="utf-8")
        old = block(text, markers)
        if not old and markers[0] + markers[1] not in text:
            raise ValueError(f"{path}: no {markers[0].strip()!r} ... {markers[1].strip()!r} markers")
        if old != wanted:
            begin, end = markers
            head, rest = text.split(begin, 1)
            path.write_text(head + begin + wanted + end + rest.split(end, 1)[1], encoding="utf-8")
            written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bigtwo.env.rules.generated", description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a block is stale")
    args = parser.parse_args(argv)
    if args.check:
        stale = stale_files()
        for path in stale:
            print(f"{path}: stale; run python -m bigtwo.env.rules.generated", file=sys.stderr)
        return 1 if stale else 0
    for path in write():
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
