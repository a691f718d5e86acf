"""The two builds of the move path (core/build.py): the compiled one where it was built,
the pure-Python source wherever SOLRACE_PURE_PYTHON asks for it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from support.paths import ROOT

from core.build import COMPILED_MODULES, PURE_ENV, compiled, twins_present

PROBE = (
    "import importlib, json, core, protocol; "
    f"print(json.dumps({{m: importlib.import_module(m).__file__ for m in {COMPILED_MODULES!r}}}))"
)


def _run(code: str, pure: bool) -> str:
    env = {k: v for k, v in os.environ.items() if k != PURE_ENV}
    if pure:
        env[PURE_ENV] = "1"
    return subprocess.run(
        [sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True
    ).stdout


def _files(pure: bool) -> dict[str, str]:
    files: dict[str, str] = json.loads(_run(PROBE, pure))
    return files


def test_the_pure_environment_loads_every_compiled_module_from_its_source() -> None:
    files = _files(pure=True)
    assert sorted(files) == sorted(COMPILED_MODULES)
    assert all(path.endswith(".py") for path in files.values()), files


def test_a_compiled_module_of_the_server_imported_first_still_loads_from_its_source() -> None:
    # Nothing of core or protocol imported before it: the server package chooses the build.
    for module in (m for m in COMPILED_MODULES if m.startswith("server.")):
        code = f"import importlib; print(importlib.import_module({module!r}).__file__)"
        assert _run(code, pure=True).strip().endswith(".py"), module


def test_where_the_compiled_build_is_there_it_is_what_runs() -> None:
    files = _files(pure=False)
    from_source = {m for m, path in files.items() if path.endswith(".py")}
    assert from_source == (set() if twins_present() else set(COMPILED_MODULES)), files


def test_this_run_uses_the_build_its_environment_asks_for() -> None:
    pure = os.environ.get(PURE_ENV, "") not in ("", "0")
    assert compiled() == (twins_present() and not pure)


def _make_variable(name: str) -> list[str]:
    """The Makefile's own value of `name` (not one a calling `make VAR=...` passes down)."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    out = subprocess.run(
        ["make", "-s", "--no-print-directory", "--eval", "print-%: ; @echo $($*)", f"print-{name}"],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return out.split()


def test_make_rebuilds_when_a_compiled_module_changes_and_tests_the_server_ones_pure() -> None:
    sources = _make_variable("COMPILED_SOURCES")
    assert {m.replace(".", "/") + ".py" for m in COMPILED_MODULES} <= set(sources)
    pure_tests = _make_variable("PURE_TESTS")
    for module in (m for m in COMPILED_MODULES if m.startswith("server.")):
        _, package, name = module.split(".")
        assert f"tests/server/{package}/test_{name}.py" in pure_tests, module
