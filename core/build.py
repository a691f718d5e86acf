"""Which build of the move path runs: compiled (mypyc, `make compiled`) or pure Python.

The compiled build is the same source compiled in place: each module listed in
`COMPILED_MODULES` gets an extension module beside its `.py`, which Python prefers. The
pure-Python source stays the reference, runs wherever no C compiler is, and is tested:
with ``SOLRACE_PURE_PYTHON=1`` in the environment those modules load from their source
even where the compiled twin sits beside it (`make test` runs the engine's and the
codec's tests both ways).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Sequence
from types import ModuleType

__all__ = [
    "COMPILED_MODULES",
    "PURE_ENV",
    "compiled",
    "describe",
    "prefer_source_if_asked",
    "twins_present",
]

# The modules on the move path that the compiled build compiles (scripts/build-compiled
# reads this list; the Makefile rebuilds when one of them changes): the engine's check and
# apply of a move, the wire codec, and the server's pure steps of a move: its script call
# encoded, its event parsed back from pub/sub and shown to each viewer, the frames.
COMPILED_MODULES = (
    "core.cards",
    "core.deals",
    "core.moves",
    "core.game",
    "core.shaula",
    "core.stalactites",
    "core.moojub",
    "protocol.codec",
    "server.redis_io.resp_encode",
    "server.room.view",
    "server.storage.codec",
    "server.live.frames",
)
PURE_ENV = "SOLRACE_PURE_PYTHON"


class _SourceFirst(importlib.abc.MetaPathFinder):
    """Finds the compiled modules' sources, ahead of the extension modules beside them."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in COMPILED_MODULES or path is None:
            return None
        name = fullname.rpartition(".")[2]
        for entry in path:
            source = os.path.join(entry, f"{name}.py")
            if os.path.isfile(source):
                return importlib.util.spec_from_file_location(fullname, source)
        return None


def prefer_source_if_asked() -> None:
    """Load the compiled modules from source if the environment says so (idempotent)."""
    if os.environ.get(PURE_ENV, "") not in ("", "0") and not any(
        isinstance(finder, _SourceFirst) for finder in sys.meta_path
    ):
        sys.meta_path.insert(0, _SourceFirst())


def twins_present() -> bool:
    """Whether every compiled module has its extension module beside its source."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    suffixes = importlib.machinery.EXTENSION_SUFFIXES
    return all(
        any(os.path.isfile(os.path.join(root, *m.split(".")) + s) for s in suffixes)
        for m in COMPILED_MODULES
    )


def compiled() -> bool:
    """Whether the engine running here is the compiled build."""
    import core.game

    return not (core.game.__file__ or "").endswith(".py")


def describe() -> str:
    """One line for the startup log."""
    if compiled():
        return "move path: compiled (mypyc)"
    if os.environ.get(PURE_ENV, "") not in ("", "0"):
        return f"move path: pure Python ({PURE_ENV} is set)"
    return "move path: pure Python (no compiled build: `make compiled` needs a C compiler)"


# On import, before any compiled module is: core/__init__.py, protocol/__init__.py and
# server/__init__.py import this module first.
prefer_source_if_asked()
