"""Where the kit's files are, and the one name each of its folders is imported by.

The code lives in one package, ``bigtwo/``: ``bigtwo/env`` (the rules, the engine, the environments),
``bigtwo/agents``, ``bigtwo/arena``, ``bigtwo/train``, ``bigtwo/web`` and ``bigtwo/configs``. A checkout
also keeps the folders the project's design names at its top level (``bigtwo_env/``, ``agents/``,
``arena/``, ``train/``, ``bigtwo_web/``, ``configs/``) as links into the package, so that paths such as
``agents/pretrained/hong-kong.pt`` and ``configs/variants/taiwan.yaml`` read as before. Every tool (Python,
tracebacks, ``git log``, mypy, the docs) names the real files under ``bigtwo/``.

A folder has one import name. From the repository root, ``import agents`` (or ``import bigtwo_env``)
would load the same files a second time as other modules (two registries, two ``Agent`` classes):
each sub-package refuses to be imported so, at once, naming the import to use instead:

>>> PACKAGE_ROOT.name
'bigtwo'
>>> raise second_name("agents", "bigtwo.agents")
Traceback (most recent call last):
...
ImportError: 'agents' is the folder bigtwo/agents reached by a second name: import bigtwo.agents instead (one copy of each module; see docs/development.md#architecture)
"""

from __future__ import annotations

from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parent  # the ``bigtwo`` package folder, links resolved
SOURCE_ROOT = PACKAGE_ROOT.parent  # the folder that holds the package: a checkout, or site-packages

__all__ = ["PACKAGE_ROOT", "SOURCE_ROOT", "is_checkout", "second_name"]


def is_checkout(root: Path = SOURCE_ROOT) -> bool:
    """Whether the package runs from a git checkout (rather than an installed wheel)."""
    return (root / ".git").exists()


def second_name(name: str, package: str) -> ImportError:
    """The error a sub-package raises when imported as ``name`` rather than its one name, ``package``.

    Each sub-package's ``__init__`` starts ``if __name__ != "bigtwo.agents": raise second_name(...)``.
    """
    folder = "/".join(package.split("."))
    return ImportError(
        f"{name!r} is the folder {folder} reached by a second name: import {package} instead "
        "(one copy of each module; see docs/development.md#architecture)"
    )
