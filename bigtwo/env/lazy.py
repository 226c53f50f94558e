"""Package attributes imported on first use, so that importing a package stays light.

``__getattr__ = lazy_attributes(__name__, {"Engine": ".engine"})`` in a package's
``__init__`` makes ``package.Engine`` import ``package.engine`` the first time it is read
(a module-level ``__getattr__``, PEP 562) and keeps the value on the package afterwards.
``bigtwo.env`` uses it so that ``import bigtwo.env`` compiles no engine and loads no PettingZoo;
the trainers' package uses it so that importing it imports no torch.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_attributes(package: str, table: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: ``table`` maps each lazy name to the module
    (relative to ``package``) it is imported from; other names raise ``AttributeError``."""

    def __getattr__(name: str) -> Any:
        if name not in table:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(table[name], package), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
