"""Files written whole or not at all, for every layer (the engine's package imports no torch).

``atomic_write(path, write)`` calls ``write`` on a temporary file beside ``path`` (``.NAME.tmpPID``),
flushes it to disk and ``os.replace``-s it onto ``path``: a reader, or a run resumed after
``kill -9``, finds the old file or the whole new one. Checkpoints (``bigtwo.train.checkpoint``, which
also removes the temporary files of writers that died), expert rounds' decisions, benchmark cards and
their steps all write through it.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> atomic_write(folder / "card.md", lambda f: f.write(b"# Card")).read_text()
'# Card'
>>> sorted(p.name for p in folder.iterdir())
['card.md']
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO


def atomic_write(path: str | Path, write: Callable[[BinaryIO], object]) -> Path:
    """Call ``write`` on a temporary file beside ``path``, flush it to disk and ``os.replace`` it onto
    ``path``, so a reader finds the old file or the whole new one; an interrupted write (an
    exception, Ctrl-C) removes the temporary file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path
