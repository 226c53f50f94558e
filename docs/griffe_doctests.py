"""A Griffe extension for the API pages (mkdocs.yml: the python handler's ``extensions``).

The docstrings are written for ``help()`` and pytest's doctests, not for Markdown, in two ways
this extension makes readable on the site:

- Doctests (a ``>>>`` line, its ``...`` continuations and the expected output up to the next
  blank line) become ``pycon`` code blocks; as plain Markdown, ``x[0]`` in them reads as a
  link and ``>>>`` as nested quotes.
- A module that writes parts of its docstring in when it is imported (``bigtwo.env.envs.aec`` fills
  ``@LAYOUT_TABLE@`` and the sizes from ``observation.LAYOUT``) shows the docstring it ends up
  with: the imported module's ``__doc__``.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

from griffe import Extension, Module, Object

PLACEHOLDER = re.compile(r"@[A-Z][A-Z0-9_]*@")


def fence_doctests(text: str) -> str:
    """``text`` with each doctest (``>>>`` up to the next blank line) inside a ``pycon`` fence.

    >>> print(fence_doctests("Intro.\\n\\n>>> 1 + 1\\n2\\n\\nAfter."))
    Intro.
    <BLANKLINE>
    ```pycon
    >>> 1 + 1
    2
    ```
    <BLANKLINE>
    After.
    """
    out: list[str] = []
    inside = False
    indent = ""
    for line in text.split("\n"):
        stripped = line.lstrip()
        if not inside and stripped.startswith(">>>"):
            inside, indent = True, line[: len(line) - len(stripped)]
            if out and out[-1].strip():
                out.append("")
            out.append(f"{indent}```pycon")
        elif inside and not stripped:
            out.append(f"{indent}```")
            inside = False
        out.append(line)
    if inside:
        out.append(f"{indent}```")
    return "\n".join(out)


class DoctestFences(Extension):
    """Doctests as code blocks, and import-time docstrings as imported (see the module docstring)."""

    def on_object(self, *, obj: Object, **kwargs: Any) -> None:
        if obj.docstring is None:
            return
        if isinstance(obj, Module) and PLACEHOLDER.search(obj.docstring.value):
            obj.docstring.value = importlib.import_module(obj.path).__doc__ or ""
        obj.docstring.value = fence_doctests(obj.docstring.value)
