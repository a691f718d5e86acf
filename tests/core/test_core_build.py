"""The two builds of the move path (core/build.py): the compiled one where it was built,
the pure-Python source wherever SOLRACE_PURE_PYTHON asks for it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from core.build import COMPILED_MODULES, PURE_ENV, compiled, twins_present

PROBE = (
    "import importlib, json, core, protocol; "
    f"print(json.dumps({{m: importlib.import_module(m).__file__ for m in {COMPILED_MODULES!r}}}))"
)


def _files(pure: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != PURE_ENV}
    if pure:
        env[PURE_ENV] = "1"
    out = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, check=True, capture_output=True, text=True
    ).stdout
    files: dict[str, str] = json.loads(out)
    return files


def test_the_pure_environment_loads_every_compiled_module_from_its_source() -> None:
    files = _files(pure=True)
    assert sorted(files) == sorted(COMPILED_MODULES)
    assert all(path.endswith(".py") for path in files.values()), files


def test_where_the_compiled_build_is_there_it_is_what_runs() -> None:
    files = _files(pure=False)
    from_source = {m for m, path in files.items() if path.endswith(".py")}
    assert from_source == (set() if twins_present() else set(COMPILED_MODULES)), files


def test_this_run_uses_the_build_its_environment_asks_for() -> None:
    pure = os.environ.get(PURE_ENV, "") not in ("", "0")
    assert compiled() == (twins_present() and not pure)
